// Collectives as phases of point-to-point transfers, mapped onto a Clos fabric and simulated; the
// comparison of a route plan against random ECMP hashing and a non-blocking fabric.
//
// Contract:
// - Ranks are indices into an endpoint list (NPU port IP + the leaf it is cabled to).
// - ring_all_reduce_phases(n, S): ring order 0 -> 1 -> ... -> n-1 -> 0; 2(n-1) phases (n-1 reduce-scatter,
//   n-1 all-gather), each of n transfers of S/n bytes (rank i to rank i+1 mod n). n >= 2.
// - halving_doubling_all_reduce_phases(n, S): Rabenseifner for n a power of two: recursive-halving
//   reduce-scatter (step k = 1..log2 n: partner at distance n/2^k, exchange S/2^k bytes) then the mirror
//   recursive-doubling all-gather; 2 log2 n phases of n transfers.
// - Size bound: a collective's phases, a phase's sub-flows (transfers x QPs) and a plan's sub-flows (pairs x
//   QPs) are each at most kMaxCollectiveTransfers; larger inputs are errors reported before anything of that
//   size is allocated (a ring over n ranks is 2(n-1) x n transfers: n = 2048 already needs 8.4 million).
// - demands_of(): the distinct ordered (src IP, dst IP) pairs of the phases, in first-appearance
//   order, each with `qps` QPs and the phases it is active in as its concurrency groups: the input of
//   plan_routes().
// - simulate_collective(): links are every endpoint's NIC transmit and receive (port_gbps), every leaf
//   uplink (uplink_gbps) and every spine-to-leaf downlink (uplink_gbps). A transfer of B bytes is split
//   into its pair's QPs (B/qps each) which follow the plan's ports through the ECMP hash; with
//   `non_blocking` the fabric links are left out (only NICs limit). Per-phase latency is 0. A phase with
//   the same transfers as the phase before it (a ring's steps) is simulated once.
// - compare_plan(): planned (plan_routes) vs the mean over `seeds` draws of kernel_default_ports (seeds
//   1..seeds) vs non-blocking, simulated all-reduce seconds and max uplink loads. Errors from any step
//   are passed through.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/ip.h"
#include "scheduling/cost/clos_fabric.h"
#include "scheduling/cost/flow_sim.h"
#include "scheduling/cost/route_planner.h"

namespace hsns::cost {

struct Endpoint {
  IpAddress ip;
  std::uint32_t leaf = 0;
};

struct Transfer {
  std::uint32_t src = 0;  // rank
  std::uint32_t dst = 0;  // rank
  double bytes = 0;
};

using TransferPhase = std::vector<Transfer>;

inline constexpr std::uint64_t kMaxCollectiveTransfers = std::uint64_t{1} << 22;

// Transfers ring_all_reduce_phases(n) and halving_doubling_all_reduce_phases(n) produce (0 for n < 2), in
// 64 bits: lets a caller check kMaxCollectiveTransfers over many groups before building any of them.
std::uint64_t ring_all_reduce_transfers(std::uint32_t n);
std::uint64_t halving_doubling_all_reduce_transfers(std::uint32_t n);

tl::expected<std::vector<TransferPhase>, std::string> ring_all_reduce_phases(std::uint32_t n, double bytes);
tl::expected<std::vector<TransferPhase>, std::string> halving_doubling_all_reduce_phases(std::uint32_t n,
                                                                                         double bytes);

tl::expected<std::vector<FlowDemand>, std::string> demands_of(const std::vector<Endpoint>& endpoints,
                                                              const std::vector<TransferPhase>& phases,
                                                              std::uint32_t qps);

tl::expected<PhasedResult, std::string> simulate_collective(const ClosFabric& fabric,
                                                            const std::vector<Endpoint>& endpoints,
                                                            const std::vector<TransferPhase>& phases,
                                                            const RoutePlan& plan, bool non_blocking);

struct PlanComparison {
  double planned_seconds = 0;
  double ecmp_mean_seconds = 0;
  double ecmp_min_seconds = 0;
  double ecmp_max_seconds = 0;
  double non_blocking_seconds = 0;
  std::uint32_t planned_max_uplink_load = 0;
  double ecmp_mean_max_uplink_load = 0;
  std::uint32_t lower_bound = 0;
  RoutePlan plan;
};

tl::expected<PlanComparison, std::string> compare_plan(const ClosFabric& fabric,
                                                       const std::vector<Endpoint>& endpoints,
                                                       const std::vector<TransferPhase>& phases,
                                                       std::uint32_t qps, std::uint32_t seeds,
                                                       PortRange range = {});

}  // namespace hsns::cost
