#include "flow_record.h"

#include <arpa/inet.h>

#include <cstring>

namespace hsns::daemon {

namespace {

constexpr const char* kOps[ROCE_OP_CLASSES] = {"send", "write",  "read_req", "read_resp",
                                               "ack",  "atomic", "cnp",      "other"};
constexpr const char* kNaks[ROCE_NAK_KINDS] = {"psn_seq", "inv_req", "rem_access", "rem_op", "rnr", "other"};
constexpr const char* kDirs[] = {"ingress", "egress", "xdp"};

std::string addr(int family, const __u8* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof(buf));
  return buf;
}

}  // namespace

const char* op_class_name(int c) {
  return c >= 0 && c < ROCE_OP_CLASSES ? kOps[c] : "?";
}
const char* nak_name(int n) {
  return n >= 0 && n < ROCE_NAK_KINDS ? kNaks[n] : "?";
}
const char* direction_name(int d) {
  return d >= 0 && d < 3 ? kDirs[d] : "?";
}

nlohmann::json to_json(const FlowRecord& r, const std::string& host) {
  const auto& k = r.key;
  const auto& s = r.stats;
  nlohmann::json j;
  j["type"] = "flow";
  j["host"] = host;
  j["ifindex"] = k.ifindex;
  j["ifname"] = r.ifname;
  j["direction"] = direction_name(k.direction);
  j["family"] = k.family;
  j["src"] = addr(k.family, k.src);
  j["dst"] = addr(k.family, k.dst);
  j["sport"] = k.sport;
  j["dest_qp"] = k.dest_qp;
  j["packets"] = s.packets;
  j["bytes"] = s.bytes;
  j["first_ns"] = r.first_unix_ns;
  j["last_ns"] = r.last_unix_ns;
  for (int i = 0; i < ROCE_OP_CLASSES; ++i) j["op"][kOps[i]] = s.op[i];
  j["ect"] = s.ect;
  j["ce"] = s.ce;
  j["cnp"] = s.cnp;
  for (int i = 0; i < ROCE_NAK_KINDS; ++i) j["nak"][kNaks[i]] = s.nak[i];
  j["psn_regressions"] = s.psn_regressions;
  if (s.has_psn) {
    j["first_psn"] = s.first_psn;
    j["last_psn"] = s.last_psn;
    j["max_psn"] = s.max_psn;
  }
  return j;
}

tl::expected<FlowRecord, std::string> flow_record_from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object() || j.value("type", "") != "flow")
      return tl::unexpected(std::string("not a flow record"));
    FlowRecord r;
    auto& k = r.key;
    auto& s = r.stats;
    k.ifindex = j.at("ifindex").get<std::uint32_t>();
    r.ifname = j.value("ifname", "");
    const auto dir = j.at("direction").get<std::string>();
    k.direction = dir == "egress" ? ROCE_DIR_EGRESS : dir == "xdp" ? ROCE_DIR_XDP : ROCE_DIR_INGRESS;
    k.family = j.at("family").get<std::uint8_t>();
    const int af = k.family == 4 ? AF_INET : AF_INET6;
    if (inet_pton(af, j.at("src").get<std::string>().c_str(), k.src) != 1 ||
        inet_pton(af, j.at("dst").get<std::string>().c_str(), k.dst) != 1)
      return tl::unexpected(std::string("bad address"));
    k.sport = j.at("sport").get<std::uint16_t>();
    k.dest_qp = j.at("dest_qp").get<std::uint32_t>();
    s.packets = j.at("packets").get<std::uint64_t>();
    s.bytes = j.at("bytes").get<std::uint64_t>();
    r.first_unix_ns = j.value("first_ns", std::int64_t{0});
    r.last_unix_ns = j.value("last_ns", std::int64_t{0});
    for (int i = 0; i < ROCE_OP_CLASSES; ++i) s.op[i] = j.at("op").at(kOps[i]).get<std::uint64_t>();
    s.ect = j.at("ect").get<std::uint64_t>();
    s.ce = j.at("ce").get<std::uint64_t>();
    s.cnp = j.at("cnp").get<std::uint64_t>();
    for (int i = 0; i < ROCE_NAK_KINDS; ++i) s.nak[i] = j.at("nak").at(kNaks[i]).get<std::uint64_t>();
    s.psn_regressions = j.at("psn_regressions").get<std::uint64_t>();
    if (j.contains("max_psn")) {
      s.has_psn = 1;
      s.max_psn = j.at("max_psn").get<std::uint32_t>();
      s.first_psn = j.value("first_psn", 0u);
      s.last_psn = j.value("last_psn", 0u);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return tl::unexpected(std::string("flow record: ") + e.what());
  }
}

}  // namespace hsns::daemon
