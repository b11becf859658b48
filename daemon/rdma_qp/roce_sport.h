// The UDP source port a RoCE v2 QP sends from (its ECMP entropy), computed the way the kernel's RDMA core
// does (include/rdma/ib_verbs.h: rdma_calc_flow_label, rdma_flow_label_to_udp_sport, rdma_get_udp_sport),
// so that a flow record of the probe (source and destination address, UDP source port, destination QP)
// joins the QP inventory entry (and through its PID the process) that sent it.
//
//   flow label, when the QP's is 0:  fl = lqpn * rqpn; fl ^= fl >> 20; fl ^= fl >> 40; fl &= 0xFFFFF
//                                    (symmetric in the two QPNs: both ends compute the same label)
//   source port:                     ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000
//
// The result is always in 0xC000..0xFFFF (IB_ROCE_UDP_ENCAP_VALID_PORT_MIN..MAX). A QP whose application
// set a flow label of its own sends from the port of that label; RDMA netlink does not expose the label,
// so the inventory computes with 0, the default of rdma_cm and of verbs applications.
#pragma once

#include <cstdint>

namespace hsns::daemon::rdma {

constexpr std::uint32_t rocev2_flow_label(std::uint32_t lqpn, std::uint32_t rqpn) {
  std::uint64_t v = static_cast<std::uint64_t>(lqpn) * rqpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<std::uint32_t>(v & 0xFFFFF);
}

constexpr std::uint16_t rocev2_source_port(std::uint32_t lqpn, std::uint32_t rqpn,
                                           std::uint32_t flow_label = 0) {
  const std::uint32_t fl = flow_label != 0 ? flow_label & 0xFFFFF : rocev2_flow_label(lqpn, rqpn);
  return static_cast<std::uint16_t>(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

}  // namespace hsns::daemon::rdma
