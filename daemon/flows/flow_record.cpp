#include "flow_record.h"

#include <arpa/inet.h>

#include <cstring>

namespace hsns::daemon {

// The contract names the opcode classes, NAK kinds and directions in the kernel's order.
static_assert(ROCE_OP_CLASSES == proto::kOpClasses && ROCE_NAK_KINDS == proto::kNakKinds);
static_assert(static_cast<int>(proto::FlowDirection::ingress) == ROCE_DIR_INGRESS &&
              static_cast<int>(proto::FlowDirection::egress) == ROCE_DIR_EGRESS &&
              static_cast<int>(proto::FlowDirection::xdp) == ROCE_DIR_XDP);

namespace {

std::string addr(int family, const __u8* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof(buf));
  return buf;
}

}  // namespace

const char* op_class_name(int c) {
  return c >= 0 && c < ROCE_OP_CLASSES ? proto::kOpClassNames[c] : "?";
}
const char* nak_name(int n) {
  return n >= 0 && n < ROCE_NAK_KINDS ? proto::kNakNames[n] : "?";
}
const char* direction_name(int d) {
  return d >= 0 && d < 3 ? proto::to_string(static_cast<proto::FlowDirection>(d)) : "?";
}

proto::FlowRecord to_contract(const FlowRecord& r, const std::string& host) {
  const auto& k = r.key;
  const auto& s = r.stats;
  proto::FlowRecord f;
  f.host = host;
  f.ifindex = k.ifindex;
  f.ifname = r.ifname;
  f.direction = static_cast<proto::FlowDirection>(k.direction);
  f.family = k.family;
  f.src = addr(k.family, k.src);
  f.dst = addr(k.family, k.dst);
  f.sport = k.sport;
  f.dest_qp = k.dest_qp;
  f.packets = s.packets;
  f.bytes = s.bytes;
  f.first_ns = r.first_unix_ns;
  f.last_ns = r.last_unix_ns;
  for (std::size_t i = 0; i < proto::kOpClasses; ++i) f.op[i] = s.op[i];
  f.ect = s.ect;
  f.ce = s.ce;
  f.cnp = s.cnp;
  for (std::size_t i = 0; i < proto::kNakKinds; ++i) f.nak[i] = s.nak[i];
  f.psn_regressions = s.psn_regressions;
  if (s.has_psn) f.psn = proto::FlowPsn{s.first_psn, s.last_psn, s.max_psn};
  return f;
}

nlohmann::json to_json(const FlowRecord& record, const std::string& host) {
  return proto::to_json(to_contract(record, host));
}

tl::expected<FlowRecord, std::string> flow_record_from_json(const nlohmann::json& j) {
  const auto read = proto::read_flow_record(j);
  if (!read) return tl::unexpected("flow record: " + read.error().message());
  const auto& f = *read;
  FlowRecord r;
  auto& k = r.key;
  auto& s = r.stats;
  k.ifindex = f.ifindex;
  r.ifname = f.ifname;
  k.direction = static_cast<__u8>(f.direction);
  k.family = static_cast<__u8>(f.family);
  // The contract checked both addresses against the family.
  const int af = f.family == 4 ? AF_INET : AF_INET6;
  inet_pton(af, f.src.c_str(), k.src);
  inet_pton(af, f.dst.c_str(), k.dst);
  k.sport = f.sport;
  k.dest_qp = f.dest_qp;
  s.packets = f.packets;
  s.bytes = f.bytes;
  r.first_unix_ns = f.first_ns;
  r.last_unix_ns = f.last_ns;
  for (std::size_t i = 0; i < proto::kOpClasses; ++i) s.op[i] = f.op[i];
  s.ect = f.ect;
  s.ce = f.ce;
  s.cnp = f.cnp;
  for (std::size_t i = 0; i < proto::kNakKinds; ++i) s.nak[i] = f.nak[i];
  s.psn_regressions = f.psn_regressions;
  if (f.psn) {
    s.has_psn = 1;
    s.first_psn = f.psn->first;
    s.last_psn = f.psn->last;
    s.max_psn = f.psn->max;
  }
  return r;
}

}  // namespace hsns::daemon
