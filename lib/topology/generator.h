// Synthetic rail-optimised Clos clusters, deterministic from their parameters.
//
// Shape: hosts are grouped into scalable units (SUs) of hosts_per_su; each SU has npus_per_host leaves
// (rails) and NPU i of every host of the SU links to the SU's leaf i. SUs are split evenly (the first ones
// get the remainder) into super-pods; every leaf of a super-pod links to every spine of that super-pod's
// spine plane (spines_per_plane spines). With more than one super-pod, every spine links to every core
// switch (cores). Leaf uplink capacity = leaf downlink capacity / leaf_oversubscription, spread evenly over
// the spines; spine uplink capacity likewise with spine_oversubscription over the cores. When
// fabric_link_gbps is set, each leaf-spine (and spine-core) pair gets that capacity as parallel links of
// fabric_link_gbps each (the count must come out whole); otherwise one link of the exact capacity.
//
// Names: hosts "host" + zero-padded number from 1 (width max(3, digits of hosts)); leaves "leaf" + number
// from 0 (= su * npus_per_host + rail); spines "spine" + number (= superpod * spines_per_plane + k); cores
// "core" + number. NPU ports "eth<i>"; leaf host ports "Eth1/<slot+1>"; leaf uplink ports "Eth2/<n>";
// spine down ports "Eth1/<n>", spine up ports "Eth2/<n>"; core ports "Eth1/<n>".
//
// Size: clos_size computes, from the parameters alone and in 64-bit/saturating arithmetic, exactly the
// hosts, NPUs, switches, links and index work (limits.h) the cluster would have, and checks them against
// the limits; generate_clos does that first, so nothing of an over-limit size is ever allocated (a tiny
// oversubscription with parallel fabric links, which multiplies the link count, is refused up front).
//
// Errors: an hsns::Error of kind invalid naming the parameter (e.g. "hosts_per_su") when a value is out of
// range, the parallel link count is not whole, or a derived count is over the limits (the reason names the
// count, its value and the limit; the parameter named is the one that drives that count). Pure functions;
// thread-safe.
#pragma once

#include <cstdint>

#include "topology/limits.h"
#include "topology/topology.h"

namespace hsns::topology {

struct ClosParams {
  std::uint32_t hosts = 32;
  std::uint32_t npus_per_host = 8;
  std::uint32_t hosts_per_su = 32;
  std::uint32_t spines_per_plane = 8;  // spines in each super-pod's spine plane
  std::uint32_t superpods = 1;
  std::uint32_t cores = 0;  // core switches; needed (>= 1) when superpods > 1
  double host_link_gbps = 400;
  double fabric_link_gbps = 0;  // 0: one leaf-spine link of the exact capacity
  double leaf_oversubscription = 1.0;
  double spine_oversubscription = 1.0;
  double host_link_latency_us = 0.5;
  double fabric_link_latency_us = 1.0;
  std::string name = "synthetic";
};

Result<ModelSize> clos_size(const ClosParams& params, const ModelLimits& limits = kModelLimits);
Result<Topology> generate_clos(const ClosParams& params, const ModelLimits& limits = kModelLimits);

}  // namespace hsns::topology
