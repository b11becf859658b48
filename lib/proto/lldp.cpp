#include "hsns/proto/lldp.h"

#include <algorithm>
#include <limits>

#include "hsns/json_fields.h"
#include "names.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Printable ASCII only: what the LLDP parser writes (everything else escaped as \xNN).
bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::optional<std::string> read_text(FieldReader& r, std::string_view name, bool required) {
  auto s = r.sized_string(name, required, required ? 1 : 0, kMaxLldpText);
  if (s && !printable(*s)) {
    r.fail(name, "must be printable ASCII");
    return std::nullopt;
  }
  return s;
}

template <std::size_t N>
std::optional<std::string> read_subtype(FieldReader& r, std::string_view name,
                                        const std::array<const char*, N>& names) {
  static_assert(N == 7);
  auto i = r.one_of(name, true, {names[0], names[1], names[2], names[3], names[4], names[5], names[6]});
  if (!i) return std::nullopt;
  return std::string(names[*i]);
}

std::optional<LldpManagementAddress> read_management_address(FieldReader& r) {
  LldpManagementAddress a;
  auto family = r.integer("family", true, 1, 255);
  auto address = read_text(r, "address", true);
  auto subtype = r.integer("interface_subtype", true, 0, 255);
  auto number = r.unsigned_integer("interface_number", true, UINT32_MAX);
  if (!family || !address || !subtype || !number) return std::nullopt;
  a.family = static_cast<std::uint8_t>(*family);
  a.address = std::move(*address);
  a.interface_subtype = static_cast<std::uint8_t>(*subtype);
  a.interface_number = static_cast<std::uint32_t>(*number);
  return a;
}

std::optional<LldpNeighbor> read_neighbor(FieldReader& r) {
  LldpNeighbor n;
  bool ok = true;
  auto netdev = r.string("netdev", true, detail::kMaxNetdevLength);
  if (netdev && !detail::valid_netdev(*netdev)) {
    r.fail("netdev", "must be a Linux interface name");
    ok = false;
  }
  auto npu = r.integer("npu", false, 0, 4095);
  auto mac_text = r.string("source_mac", true, 17);
  std::optional<std::string> mac;
  if (mac_text) {
    mac = detail::normalise_mac(*mac_text);
    if (!mac || *mac != *mac_text) {
      r.fail("source_mac", "must be six lower-case hex octets separated by ':'");
      mac.reset();
    }
  }
  auto chassis_subtype = read_subtype(r, "chassis_id_subtype", kLldpChassisIdSubtypes);
  auto chassis_id = read_text(r, "chassis_id", true);
  auto port_subtype = read_subtype(r, "port_id_subtype", kLldpPortIdSubtypes);
  auto port_id = read_text(r, "port_id", true);
  auto ttl = r.integer("ttl_s", true, 1, 65535);
  auto last_seen = r.integer("last_seen_ms", true, 0, kInt64Max);
  n.port_description = read_text(r, "port_description", false);
  n.system_name = read_text(r, "system_name", false);
  n.system_description = read_text(r, "system_description", false);
  if (const auto* caps = r.object("capabilities", false)) {
    FieldReader c = r.child(*caps, r.field_path("capabilities"));
    auto system = c.integer("system", true, 0, 65535);
    auto enabled = c.integer("enabled", true, 0, 65535);
    c.report_unknown();
    if (system && enabled)
      n.capabilities =
          LldpCapabilities{static_cast<std::uint16_t>(*system), static_cast<std::uint16_t>(*enabled)};
    else
      ok = false;
  }
  const bool addresses =
      r.objects("management_addresses", true, kMaxLldpManagementAddresses, [&](FieldReader& ar, std::size_t) {
        if (auto a = read_management_address(ar))
          n.management_addresses.push_back(std::move(*a));
        else
          ok = false;
      });
  if (!ok || !addresses || !netdev || !mac || !chassis_subtype || !chassis_id || !port_subtype || !port_id ||
      !ttl || !last_seen || !r.ok())
    return std::nullopt;
  n.netdev = std::move(*netdev);
  if (npu) n.npu = static_cast<int>(*npu);
  n.source_mac = std::move(*mac);
  n.chassis_id_subtype = std::move(*chassis_subtype);
  n.chassis_id = std::move(*chassis_id);
  n.port_id_subtype = std::move(*port_subtype);
  n.port_id = std::move(*port_id);
  n.ttl_s = static_cast<std::uint16_t>(*ttl);
  n.last_seen_ms = *last_seen;
  return n;
}

json to_json(const LldpNeighbor& n) {
  json addresses = json::array();
  for (const auto& a : n.management_addresses)
    addresses.push_back({{"family", a.family},
                         {"address", a.address},
                         {"interface_subtype", a.interface_subtype},
                         {"interface_number", a.interface_number}});
  json out{{"netdev", n.netdev},
           {"source_mac", n.source_mac},
           {"chassis_id_subtype", n.chassis_id_subtype},
           {"chassis_id", n.chassis_id},
           {"port_id_subtype", n.port_id_subtype},
           {"port_id", n.port_id},
           {"ttl_s", n.ttl_s},
           {"last_seen_ms", n.last_seen_ms},
           {"management_addresses", std::move(addresses)}};
  if (n.npu) out["npu"] = *n.npu;
  if (n.port_description) out["port_description"] = *n.port_description;
  if (n.system_name) out["system_name"] = *n.system_name;
  if (n.system_description) out["system_description"] = *n.system_description;
  if (n.capabilities)
    out["capabilities"] = {{"system", n.capabilities->system}, {"enabled", n.capabilities->enabled}};
  return out;
}

}  // namespace

Result<LldpNeighbors> read_lldp_neighbors(const json& document) {
  FieldReader r(document);
  LldpNeighbors out;
  auto host = r.string("host", true, 253);
  auto ts_ms = r.integer("ts_ms", true, 0, kInt64Max);
  r.objects("neighbors", true, kMaxLldpNeighbors, [&out](FieldReader& nr, std::size_t) {
    if (auto n = read_neighbor(nr)) out.neighbors.push_back(std::move(*n));
  });
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  out.host = std::move(*host);
  out.ts_ms = *ts_ms;
  return out;
}

json to_json(const LldpNeighbors& neighbors) {
  json list = json::array();
  for (const auto& n : neighbors.neighbors) list.push_back(to_json(n));
  return json{{"host", neighbors.host}, {"ts_ms", neighbors.ts_ms}, {"neighbors", std::move(list)}};
}

const std::string& lldp_observation_system(const LldpNeighbor& neighbor) {
  return neighbor.system_name ? *neighbor.system_name : neighbor.chassis_id;
}

}  // namespace hsns::proto
