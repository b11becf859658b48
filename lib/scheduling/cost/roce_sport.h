// The RoCEv2 UDP source port exactly as the Linux kernel computes it (include/rdma/ib_verbs.h:
// rdma_calc_flow_label, rdma_flow_label_to_udp_sport, rdma_get_udp_sport).
//
// Contract (pure, constexpr-friendly, thread-safe):
// - roce_flow_label(lqpn, rqpn): v = (u64)lqpn * rqpn; v ^= v >> 20; v ^= v >> 40; return v & 0xFFFFF.
//   Symmetric in the two QPNs, so both directions of a connection use the same label.
// - roce_udp_sport_from_flow_label(fl): ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000, always in
//   the RoCE range 0xC000..0xFFFF.
// - roce_udp_sport(lqpn, rqpn, fl): uses fl when non-zero, otherwise the label from the QPNs.
#pragma once

#include <cstdint>

namespace hsns::cost {

inline constexpr std::uint16_t kRoceUdpDstPort = 4791;
inline constexpr std::uint16_t kRoceSportMin = 0xC000;

constexpr std::uint32_t roce_flow_label(std::uint32_t lqpn, std::uint32_t rqpn) {
  std::uint64_t v = static_cast<std::uint64_t>(lqpn) * rqpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<std::uint32_t>(v & 0xFFFFF);
}

constexpr std::uint16_t roce_udp_sport_from_flow_label(std::uint32_t fl) {
  std::uint32_t low = fl & 0x03FFF;
  const std::uint32_t high = fl & 0xFC000;
  low ^= high >> 14;
  return static_cast<std::uint16_t>(low | kRoceSportMin);
}

constexpr std::uint16_t roce_udp_sport(std::uint32_t lqpn, std::uint32_t rqpn, std::uint32_t flow_label = 0) {
  const std::uint32_t fl = flow_label != 0 ? flow_label : roce_flow_label(lqpn, rqpn);
  return roce_udp_sport_from_flow_label(fl);
}

}  // namespace hsns::cost
