// Test data shared by the scheduling tests (tests/scheduling/) and the aggregator's services tests
// (tests/services/): the small cluster that placement results are hand-checked on, and one model.
#pragma once

#include <cstdint>

#include "scheduling/cost/comm_volume.h"
#include "topology/generator.h"

namespace hsns::testing {

// A rail-aligned Clos cluster with 400 Gbit/s fabric links (the generator's defaults otherwise).
inline topology::ClosParams clos_params(std::uint32_t hosts, std::uint32_t npus_per_host,
                                        std::uint32_t hosts_per_su, std::uint32_t spines_per_plane) {
  topology::ClosParams p;
  p.hosts = hosts;
  p.npus_per_host = npus_per_host;
  p.hosts_per_su = hosts_per_su;
  p.spines_per_plane = spines_per_plane;
  p.fabric_link_gbps = 400;
  return p;
}

// 4 hosts (host001..host004) x 4 NPUs, 2 hosts per scalable unit, 2 spines per plane:
// SU0 = host001, host002; SU1 = host003, host004.
inline topology::ClosParams small_cluster_params() {
  return clos_params(4, 4, 2, 2);
}

// A 1e9-parameter model: 8 layers, hidden 1024, 16 heads, sequence 1024, micro batch 1, global batch 64.
inline cost::ModelSpec small_model() {
  cost::ModelSpec m;
  m.parameters = 1'000'000'000;
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 1024;
  m.micro_batch = 1;
  m.global_batch = 64;
  return m;
}

}  // namespace hsns::testing
