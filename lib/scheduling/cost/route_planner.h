// UDP source-port route planning: choose, per (source NPU IP, destination NPU IP) pair, the source
// ports of its QPs so that the fabric's ECMP hash spreads the flows over distinct uplinks.
//
// Contract:
// - Input: the fabric (clos_fabric.h), the flow demands (one per ordered IP pair; duplicates are an
//   error, as are leaves outside the fabric, mixed address families or qps == 0) and the candidate
//   source-port range (default the RoCE range 0xC000..0xFFFF; it must hold at least `qps` ports).
// - Every QP of every demand is one sub-flow. Loads count sub-flows per uplink (source leaf to spine)
//   and per downlink (spine to destination leaf) within each concurrency group: a demand lists the
//   groups (collective phases) it is active in; demands sharing no group never compete. An empty list
//   means group 0. Groups with the same member demands are merged (a ring's 2(n-1) phases are one
//   group). RoutePlan's loads are, per link, the maximum over groups.
// - Greedy, deterministic: sub-flows crossing the spine are placed in order (source leaf, destination
//   leaf, source IP, destination IP, QP); each takes, among the candidate ports its pair does not use yet,
//   the lowest one minimising (max over its groups of max(uplink load, downlink load) + 1, sum of both
//   loads over its groups) under the fabric's ECMP hashes. Ports of one pair are distinct. Sub-flows
//   inside a leaf get the lowest free ports.
// - Cost: a port's cost depends only on its class, the (uplink, parallel downlink) pair it hashes to, so
//   each pair's ports are hashed lazily in ascending order (cost::SourcePortHasher: one full hash per
//   pair, two table look-ups per port), bucketed by class, and the scan stops as soon as a class of the
//   least cost any reachable class has, or every reachable class, holds an unused port (classes no port
//   can reach: see route_planner.cpp). Typically a few dozen ports per pair instead of the whole range:
//   O(sub-flows x classes x groups per pair) plus the scans. The result is the same as hashing every port.
// - RoutePlan::lower_bound is the best max load any assignment can reach for these demands:
//   max over groups and leaves of ceil(sub-flows leaving / uplinks) and ceil(sub-flows entering /
//   uplinks).
// - route_with_ports() evaluates a given assignment (e.g. the kernel's default ports) with the same
//   accounting; kernel_default_ports() draws QPNs from a seeded generator (splitmix64) and applies the
//   kernel's formula, modelling what ECMP does without a plan.
// - export_multiqp_cfg() writes HCCL MultiQpSrcPort.cfg lines "srcIP,dstIP=port0,port1,..." in demand
//   order, one line per demand, each terminated by '\n'.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/ip.h"
#include "scheduling/cost/clos_fabric.h"

namespace hsns::cost {

struct FlowDemand {
  IpAddress src_ip;
  IpAddress dst_ip;
  std::uint32_t src_leaf = 0;
  std::uint32_t dst_leaf = 0;
  std::uint32_t qps = 1;
  std::vector<std::uint32_t> groups;  // concurrency groups; empty = {0}
};

struct PortRange {
  std::uint16_t first = 0xC000;
  std::uint16_t last = 0xFFFF;
};

struct PlannedFlow {
  FlowDemand demand;
  std::vector<std::uint16_t> src_ports;  // one per QP
  std::vector<std::uint32_t> uplinks;    // global uplink index per QP (empty inside a leaf)
  std::vector<std::uint32_t> downlinks;  // global downlink index per QP (empty inside a leaf)
};

struct RoutePlan {
  std::vector<PlannedFlow> flows;
  std::vector<std::uint32_t> uplink_load;    // per global uplink index: max over groups of sub-flows
  std::vector<std::uint32_t> downlink_load;  // per global downlink index: max over groups of sub-flows
  std::uint32_t max_uplink_load = 0;
  std::uint32_t max_downlink_load = 0;
  std::uint32_t lower_bound = 0;
};

tl::expected<RoutePlan, std::string> plan_routes(const ClosFabric& fabric,
                                                 const std::vector<FlowDemand>& demands,
                                                 PortRange range = {});

tl::expected<RoutePlan, std::string> route_with_ports(const ClosFabric& fabric,
                                                      const std::vector<FlowDemand>& demands,
                                                      const std::vector<std::vector<std::uint16_t>>& ports);

std::vector<std::vector<std::uint16_t>> kernel_default_ports(const std::vector<FlowDemand>& demands,
                                                             std::uint64_t seed);

std::string export_multiqp_cfg(const RoutePlan& plan);

}  // namespace hsns::cost
