// Flow-level network simulator: max-min fair sharing of link bandwidth (progressive filling).
//
// Contract:
// - Links are numbered 0..capacity.size()-1 with a capacity in bytes per second (> 0, finite). A flow
//   has a path (link indices, each at most once) and a size in bytes (>= 0). Flows start together.
// - max_min_rates(): the max-min fair rate of each flow: repeatedly find the link whose remaining
//   capacity divided by its unfrozen flows is smallest, give its unfrozen flows that share, freeze
//   them and subtract their rate along their paths (water-filling). Flows of size 0 or already done
//   (active[i] == false) get rate 0. Ties between links: the lowest index. The bottleneck is kept in a
//   heap, so one call costs O((links + flows x path length) log links).
// - simulate(): event-driven: rates are recomputed whenever a flow completes; returns each flow's
//   completion time (seconds from start) and the makespan. A flow with bytes > 0 and an empty path
//   is an error (its rate would be unbounded), as are bad link indices and non-finite sizes.
// - simulate_phases(): phases run one after another (a barrier between phases, as a collective's
//   steps); each phase costs its latency plus its makespan. A phase with exactly the flows of the phase
//   before it (a ring's steps) is not simulated again. Deterministic, pure.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::cost {

struct SimFlow {
  std::vector<std::uint32_t> path;
  double bytes = 0;
};

struct SimResult {
  std::vector<double> completion;  // seconds, per flow
  double makespan = 0;
};

struct SimPhase {
  std::vector<SimFlow> flows;
  double latency_s = 0;
};

struct PhasedResult {
  std::vector<double> phase_seconds;
  double makespan = 0;
};

tl::expected<std::vector<double>, std::string> max_min_rates(const std::vector<double>& capacity,
                                                             const std::vector<SimFlow>& flows,
                                                             const std::vector<bool>& active);

tl::expected<SimResult, std::string> simulate(const std::vector<double>& capacity,
                                              const std::vector<SimFlow>& flows);

tl::expected<PhasedResult, std::string> simulate_phases(const std::vector<double>& capacity,
                                                        const std::vector<SimPhase>& phases);

}  // namespace hsns::cost
