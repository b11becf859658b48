// libFuzzer target over hsnsd's LLDP parser (daemon/lldp/lldpdu.h) and the neighbour section it feeds
// (hsns/proto/lldp.h).
//
// Input: an Ethernet frame as a packet socket delivers it (the seeds are whole LLDP frames).
// Invariants (a violation is __builtin_trap()): parse_frame() returns a Frame or a failure with a detail
// and a named reason, never throws or reads past the input; parse_lldpdu() of the payload agrees with it;
// every string of an accepted LLDPDU is printable ASCII; an accepted LLDPDU with TTL > 0 goes into a
// neighbour table and out as the lldp-neighbors section, which reads back (JSON and CBOR) to the same value.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "hsns/proto/lldp.h"
#include "lldpdu.h"
#include "neighbor_table.h"

namespace {

namespace lldp = hsns::lldp;
namespace proto = hsns::proto;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_printable(const std::string& s) {
  for (const char c : s) check(c >= 0x20 && c < 0x7f);
}

proto::LldpNeighbors section_of(const lldp::Frame& frame) {
  lldp::NeighborTable table;
  const auto now = lldp::Clock::now();
  table.update("npu0", frame, now, 1);
  proto::LldpNeighbors out{"h1", 1, {}};
  for (const auto& [netdev, neighbors] : table.ports())
    for (const auto& n : neighbors) out.neighbors.push_back(lldp::to_proto(netdev, 0, n));
  check(table.expire(now + std::chrono::seconds(65536)).size() == out.neighbors.size());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto frame = lldp::parse_frame(bytes);
  if (!frame) {
    check(!frame.error().detail.empty());
    check(std::string(lldp::reason_name(frame.error().reason)) != "unknown");
    return 0;
  }
  const auto& l = frame->lldpdu;
  for (const std::string* s : {&std::as_const(frame->source_mac), &l.chassis_id, &l.port_id})
    check_printable(*s);
  for (const auto* s : {&l.port_description, &l.system_name, &l.system_description})
    if (*s) check_printable(**s);
  check(!l.chassis_id.empty() && !l.port_id.empty());
  check(l.management_addresses.size() <= lldp::kMaxManagementAddresses);
  if (l.ttl_s == 0) return 0;
  const auto section = section_of(*frame);
  check(section.neighbors.size() == 1);
  for (const auto e : {proto::Encoding::json, proto::Encoding::cbor}) {
    auto back = proto::decode<proto::LldpNeighbors>(proto::encode(section, e), e);
    check(back.has_value() && *back == section);
  }
  return 0;
}
