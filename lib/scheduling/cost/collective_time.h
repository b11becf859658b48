// Collective time per algorithm under the alpha-beta model, and per-iteration communication time.
//
// Contract:
// - T = steps * alpha + wire_bytes_per_rank / bandwidth, with alpha and bandwidth (already divided by the
//   oversubscription) taken from the calibration tier the group spans. Formulas and derivations:
//   docs/cost-model.md. `bytes` is the nccl-tests buffer size (see comm_volume.h).
// - Flat algorithms (ring, halving_doubling, tree) use the spanned tier for every step. hierarchical
//   (rail-aligned) runs intra-host on tiers[0] and inter-host on the spanned tier, one rail per local
//   rank in parallel: all-reduce = intra reduce-scatter + inter all-reduce of bytes/local + intra
//   all-gather. automatic picks the fastest applicable algorithm (ties: the order of the enum).
// - Unsupported combinations are errors, not silent fallbacks: tree only does all_reduce; hierarchical
//   does not do all_to_all; a group size of 0, a tier index outside the calibration, or ranks_per_host
//   not dividing the group size are errors. send_recv is one message (alpha + bytes/bandwidth) whatever
//   the algorithm. A group of one rank costs 0.
// - bus_bandwidth_factor() is nccl-tests' busbw/algbw factor: all_reduce 2(n-1)/n; reduce_scatter,
//   all_gather, all_to_all (n-1)/n; send_recv 1. With alpha = 0 the ring algorithm's busbw equals the
//   tier bandwidth exactly.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "scheduling/cost/calibration.h"
#include "scheduling/cost/comm_volume.h"

namespace hsns::cost {

enum class Algorithm { ring, halving_doubling, tree, hierarchical, automatic };

std::string_view to_string(Algorithm a);
tl::expected<Algorithm, std::string> parse_algorithm(std::string_view text);  // "auto" = automatic

// Where a group's ranks sit: the highest tier their traffic crosses, and (for hierarchical) how many of
// the group's ranks share one host.
struct GroupSpan {
  std::size_t tier = 0;
  std::uint32_t ranks_per_host = 1;
};

struct CollectiveEstimate {
  Algorithm algorithm = Algorithm::ring;  // the algorithm used (resolved when automatic)
  double seconds = 0;
  double algbw = 0;  // bytes / seconds (bytes per second)
  double busbw = 0;  // algbw * bus_bandwidth_factor
};

double bus_bandwidth_factor(Collective kind, std::uint32_t n);

tl::expected<CollectiveEstimate, std::string> collective_time(Collective kind, std::uint64_t bytes,
                                                              std::uint32_t n, const GroupSpan& span,
                                                              const Calibration& cal, Algorithm algorithm);

struct OpEstimate {
  CommOp op;
  CollectiveEstimate per_call;
  double total_seconds = 0;  // per_call.seconds * op.count
};

struct IterationEstimate {
  double total_seconds = 0;
  std::array<double, 5> per_dimension_seconds{};  // indexed by static_cast<size_t>(Dimension)
  std::vector<OpEstimate> ops;
  double seconds(Dimension d) const { return per_dimension_seconds[static_cast<std::size_t>(d)]; }
};

// Where each dimension's groups sit, indexed by static_cast<size_t>(Dimension).
using DimensionSpans = std::array<GroupSpan, 5>;

// Sums count * time over the operations (no overlap of communication with computation or between
// dimensions: an upper bound on exposed communication). Errors name the failing operation.
tl::expected<IterationEstimate, std::string> iteration_comm_time(const CommVolume& volume,
                                                                 const DimensionSpans& spans,
                                                                 const Calibration& cal, Algorithm algorithm);

}  // namespace hsns::cost
