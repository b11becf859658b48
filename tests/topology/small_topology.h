// A hand-built three-tier topology shared by the topology tests.
//
//                         core0
//            /              |              (core0 links down to all three spines)
//        spine0          spine1           spine2          (spine0/1: pod 0, spine2: pod 1)
//     leaf0 leaf1 leaf2 leaf3 (each to spine0 and spine1)   leaf4 leaf5 (to spine2)
//     [ SU0: h1 h2 ]  [ SU1: h3 ]                           [ SU2: h4 ]
// Hosts have two NPUs: NPU 0 (eth0) on the SU's rail-0 leaf, NPU 1 (eth1) on its rail-1 leaf. h5 has no
// links. Host links 100 Gbit/s, leaf-spine 50 Gbit/s, spine-core 100 Gbit/s.
#pragma once

#include "topology/topology.h"

namespace hsns::topology::testing {

inline Topology small_topology() {
  TopologyBuilder b;
  b.set_name("small");
  const NodeId core0 = b.add_switch("core0", Tier::kCore);
  NodeId spine[3];
  for (int i = 0; i < 3; ++i) spine[i] = b.add_switch("spine" + std::to_string(i), Tier::kSpine);
  NodeId leaf[6];
  for (int i = 0; i < 6; ++i) leaf[i] = b.add_switch("leaf" + std::to_string(i), Tier::kLeaf);
  auto link = [&](NodeId lower, NodeId upper, double gbps, std::optional<std::uint32_t> npu = std::nullopt) {
    Link l;
    l.lower = lower;
    l.upper = upper;
    l.bandwidth_gbps = gbps;
    l.latency_us = 1.0;
    l.npu = npu;
    return b.add_link(l);
  };
  for (int s = 0; s < 3; ++s) link(spine[s], core0, 100);
  for (int l = 0; l < 4; ++l) {
    link(leaf[l], spine[0], 50);
    link(leaf[l], spine[1], 50);
  }
  link(leaf[4], spine[2], 50);
  link(leaf[5], spine[2], 50);
  const int host_su[4] = {0, 0, 1, 2};
  for (int h = 0; h < 5; ++h) {
    const NodeId host = b.add_host("h" + std::to_string(h + 1));
    for (std::uint32_t n = 0; n < 2; ++n)
      b.add_npu(host, Npu{n, "eth" + std::to_string(n), DeviceState::kHealthy, kNoLink});
    if (h == 4) continue;
    for (std::uint32_t n = 0; n < 2; ++n) link(host, leaf[host_su[h] * 2 + n], 100, n);
  }
  return std::move(b).build().value();
}

}  // namespace hsns::topology::testing
