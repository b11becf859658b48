#include "hsns/proto/qp.h"

#include <arpa/inet.h>

#include <limits>

#include "hsns/json_fields.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint16_t kMinRoceSport = 0xC000;

bool valid_address(int family, const std::string& text) {
  unsigned char buf[16];
  return inet_pton(family == 4 ? AF_INET : AF_INET6, text.c_str(), buf) == 1;
}

template <std::size_t N>
std::optional<std::string> read_name(FieldReader& r, std::string_view member,
                                     const std::array<const char*, N>& names) {
  auto text = r.string(member, true, 32);
  if (!text) return std::nullopt;
  for (const char* n : names)
    if (*text == n) return text;
  std::string allowed;
  for (const char* n : names) allowed += std::string(allowed.empty() ? "" : ", ") + n;
  r.fail(member, "must be one of " + allowed);
  return std::nullopt;
}

std::optional<QpRecord> read_qp_fields(FieldReader& r) {
  QpRecord q;
  bool ok = true;
  if (auto v = r.sized_string("device", true, 1, 64))
    q.device = std::move(*v);
  else
    ok = false;
  if (auto v = r.unsigned_integer("port", true, UINT32_MAX))
    q.port = static_cast<std::uint32_t>(*v);
  else
    ok = false;
  if (auto v = r.unsigned_integer("lqpn", true, kMaxQpn))
    q.lqpn = static_cast<std::uint32_t>(*v);
  else
    ok = false;
  if (auto v = r.unsigned_integer("rqpn", false, kMaxQpn)) q.rqpn = static_cast<std::uint32_t>(*v);
  if (auto v = read_name(r, "type", kQpTypeNames))
    q.type = std::move(*v);
  else
    ok = false;
  if (auto v = read_name(r, "state", kQpStateNames))
    q.state = std::move(*v);
  else
    ok = false;
  if (auto v = r.unsigned_integer("pid", false, UINT32_MAX)) q.pid = static_cast<std::uint32_t>(*v);
  if (auto v = r.string("comm", true, 64))
    q.comm = std::move(*v);
  else
    ok = false;
  if (auto v = r.boolean("kernel", true))
    q.kernel = *v;
  else
    ok = false;
  auto family = r.integer("family", false, 4, 6);
  if (family && *family == 5) {
    r.fail("family", "must be 4 or 6");
    family.reset();
    ok = false;
  }
  auto src = r.string("src", false, 64);
  auto dst = r.string("dst", false, 64);
  if (family || src || dst) {
    if (!family || !src || !dst) {
      r.fail(!family ? "family" : !src ? "src" : "dst", "family, src and dst come together");
      ok = false;
    } else if (!valid_address(static_cast<int>(*family), *src)) {
      r.fail("src", "must be an IPv" + std::to_string(*family) + " address");
      ok = false;
    } else if (!valid_address(static_cast<int>(*family), *dst)) {
      r.fail("dst", "must be an IPv" + std::to_string(*family) + " address");
      ok = false;
    } else {
      q.addresses = QpAddresses{static_cast<int>(*family), std::move(*src), std::move(*dst)};
    }
  }
  if (auto v = r.integer("sport", false, kMinRoceSport, UINT16_MAX)) q.sport = static_cast<std::uint16_t>(*v);
  if (!ok) return std::nullopt;
  return q;
}

}  // namespace

Result<QpInventory> read_qp_inventory(const json& document) {
  FieldReader r(document);
  QpInventory inv;
  auto host = r.string("host", true, 253);
  auto ts_ms = r.integer("ts_ms", true, 0, kInt64Max);
  r.objects("qps", true, kMaxQpInventoryRecords, [&inv](FieldReader& qr, std::size_t) {
    if (auto q = read_qp_fields(qr)) inv.qps.push_back(std::move(*q));
  });
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  inv.host = std::move(*host);
  inv.ts_ms = *ts_ms;
  return inv;
}

json to_json(const QpRecord& q) {
  json j;
  j["device"] = q.device;
  j["port"] = q.port;
  j["lqpn"] = q.lqpn;
  if (q.rqpn) j["rqpn"] = *q.rqpn;
  j["type"] = q.type;
  j["state"] = q.state;
  if (q.pid) j["pid"] = *q.pid;
  j["comm"] = q.comm;
  j["kernel"] = q.kernel;
  if (q.addresses) {
    j["family"] = q.addresses->family;
    j["src"] = q.addresses->src;
    j["dst"] = q.addresses->dst;
  }
  if (q.sport) j["sport"] = *q.sport;
  return j;
}

json to_json(const QpInventory& inv) {
  json qps = json::array();
  for (const auto& q : inv.qps) qps.push_back(to_json(q));
  return json{{"host", inv.host}, {"ts_ms", inv.ts_ms}, {"qps", std::move(qps)}};
}

}  // namespace hsns::proto
