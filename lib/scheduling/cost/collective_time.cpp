#include "scheduling/cost/collective_time.h"

#include <bit>
#include <cmath>
#include <limits>

namespace hsns::cost {

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::halving_doubling:
      return "halving-doubling";
    case Algorithm::tree:
      return "tree";
    case Algorithm::hierarchical:
      return "hierarchical";
    case Algorithm::automatic:
      return "auto";
  }
  return "unknown";
}

tl::expected<Algorithm, std::string> parse_algorithm(std::string_view text) {
  for (auto a : {Algorithm::ring, Algorithm::halving_doubling, Algorithm::tree, Algorithm::hierarchical,
                 Algorithm::automatic}) {
    if (text == to_string(a)) return a;
  }
  return tl::unexpected("unknown collective algorithm \"" + std::string(text) +
                        "\" (expected auto, ring, halving-doubling, tree or hierarchical)");
}

double bus_bandwidth_factor(Collective kind, std::uint32_t n) {
  if (n == 0) return 0;
  const double nn = n;
  switch (kind) {
    case Collective::all_reduce:
      return 2.0 * (nn - 1) / nn;
    case Collective::reduce_scatter:
    case Collective::all_gather:
    case Collective::all_to_all:
      return (nn - 1) / nn;
    case Collective::send_recv:
      return 1.0;
  }
  return 0;
}

namespace {

using Seconds = tl::expected<double, std::string>;

struct Link {
  double alpha;  // seconds
  double beta;   // seconds per byte
};

Link link_of(const Tier& t) {
  return Link{t.alpha_seconds(), 1.0 / t.bytes_per_second()};
}

// For n >= 1 (callers return early for n <= 1). std::bit_width never shifts past the type's width,
// which a shift loop would do for n >= 2^31.
std::uint32_t floor_log2(std::uint32_t n) {
  return n == 0 ? 0 : static_cast<std::uint32_t>(std::bit_width(n)) - 1;
}

std::uint32_t ceil_log2(std::uint32_t n) {
  return std::has_single_bit(n) ? floor_log2(n) : floor_log2(n) + 1;
}

double ring(Collective kind, double s, std::uint32_t n, Link l) {
  if (n <= 1) return 0;
  const double steps = n - 1;
  const double frac = (n - 1.0) / n;
  switch (kind) {
    case Collective::all_reduce:
      return 2 * steps * l.alpha + 2 * frac * s * l.beta;
    case Collective::reduce_scatter:
    case Collective::all_gather:
    case Collective::all_to_all:
      return steps * l.alpha + frac * s * l.beta;
    case Collective::send_recv:
      return l.alpha + s * l.beta;
  }
  return 0;
}

double halving_doubling(Collective kind, double s, std::uint32_t n, Link l) {
  if (n <= 1) return 0;
  if (kind == Collective::send_recv) return l.alpha + s * l.beta;
  if (kind == Collective::all_to_all) {  // Bruck: ceil(log2 n) steps of about half the buffer
    const double steps = ceil_log2(n);
    return steps * l.alpha + steps / 2.0 * s * l.beta;
  }
  const std::uint32_t lg = floor_log2(n);
  const double p2 = static_cast<double>(std::uint64_t{1} << lg);
  const bool extra = !std::has_single_bit(n);  // non-power-of-two: fold the excess ranks in and out
  const double frac = (p2 - 1) / p2;
  if (kind == Collective::all_reduce) {
    return 2 * lg * l.alpha + 2 * frac * s * l.beta + (extra ? 2 * (l.alpha + s * l.beta) : 0.0);
  }
  return lg * l.alpha + frac * s * l.beta + (extra ? l.alpha + s * l.beta : 0.0);
}

Seconds tree(Collective kind, double s, std::uint32_t n, Link l) {
  if (kind == Collective::send_recv) return l.alpha + s * l.beta;
  if (kind != Collective::all_reduce) {
    return tl::unexpected(std::string("tree supports only all_reduce (and send_recv)"));
  }
  if (n <= 1) return 0.0;
  return 2.0 * ceil_log2(n) * l.alpha + 2 * s * l.beta;
}

Seconds hierarchical(Collective kind, double s, std::uint32_t n, const GroupSpan& span,
                     const Calibration& cal) {
  const Link inter = link_of(cal.tiers[span.tier]);
  if (kind == Collective::send_recv) return inter.alpha + s * inter.beta;
  if (kind == Collective::all_to_all) {
    return tl::unexpected(std::string("hierarchical does not support all_to_all"));
  }
  const std::uint32_t local = span.ranks_per_host;
  const std::uint32_t hosts = n / local;
  const Link intra = link_of(cal.tiers[0]);
  const double shard = s / local;
  switch (kind) {
    case Collective::all_reduce:
      return ring(Collective::reduce_scatter, s, local, intra) +
             ring(Collective::all_reduce, shard, hosts, inter) +
             ring(Collective::all_gather, s, local, intra);
    case Collective::reduce_scatter:
      return ring(Collective::reduce_scatter, s, local, intra) +
             ring(Collective::reduce_scatter, shard, hosts, inter);
    default:  // all_gather
      return ring(Collective::all_gather, shard, hosts, inter) +
             ring(Collective::all_gather, s, local, intra);
  }
}

Seconds one(Collective kind, double s, std::uint32_t n, const GroupSpan& span, const Calibration& cal,
            Algorithm a) {
  const Link l = link_of(cal.tiers[span.tier]);
  switch (a) {
    case Algorithm::ring:
      return ring(kind, s, n, l);
    case Algorithm::halving_doubling:
      return halving_doubling(kind, s, n, l);
    case Algorithm::tree:
      return tree(kind, s, n, l);
    case Algorithm::hierarchical:
      return hierarchical(kind, s, n, span, cal);
    case Algorithm::automatic:
      break;
  }
  return tl::unexpected(std::string("automatic is resolved by the caller"));
}

}  // namespace

tl::expected<CollectiveEstimate, std::string> collective_time(Collective kind, std::uint64_t bytes,
                                                              std::uint32_t n, const GroupSpan& span,
                                                              const Calibration& cal, Algorithm algorithm) {
  if (n == 0) return tl::unexpected(std::string("group size must be >= 1"));
  if (span.tier >= cal.tiers.size()) {
    return tl::unexpected("tier " + std::to_string(span.tier) + " is not in the calibration (" +
                          std::to_string(cal.tiers.size()) + " tiers)");
  }
  if (span.ranks_per_host == 0 || n % span.ranks_per_host != 0) {
    return tl::unexpected("ranks_per_host " + std::to_string(span.ranks_per_host) +
                          " must be >= 1 and divide the group size " + std::to_string(n));
  }
  const double s = static_cast<double>(bytes);
  CollectiveEstimate est;
  if (algorithm == Algorithm::automatic) {
    double best = std::numeric_limits<double>::infinity();
    for (auto a : {Algorithm::ring, Algorithm::halving_doubling, Algorithm::tree, Algorithm::hierarchical}) {
      auto t = one(kind, s, n, span, cal, a);
      if (t && *t < best) {
        best = *t;
        est.algorithm = a;
      }
    }
    est.seconds = best;
  } else {
    auto t = one(kind, s, n, span, cal, algorithm);
    if (!t) return tl::unexpected(t.error());
    est.algorithm = algorithm;
    est.seconds = *t;
  }
  if (n > 1 && est.seconds > 0) {
    est.algbw = s / est.seconds;
    est.busbw = est.algbw * bus_bandwidth_factor(kind, n);
  }
  if (n == 1) est.seconds = 0;
  return est;
}

tl::expected<IterationEstimate, std::string> iteration_comm_time(const CommVolume& volume,
                                                                 const DimensionSpans& spans,
                                                                 const Calibration& cal,
                                                                 Algorithm algorithm) {
  if (auto ok = validate(cal); !ok) return tl::unexpected(ok.error());
  IterationEstimate it;
  for (const auto& op : volume.ops) {
    const auto d = static_cast<std::size_t>(op.dim);
    auto est = collective_time(op.kind, op.bytes, op.group_size, spans[d], cal, algorithm);
    if (!est) return tl::unexpected(op.what + ": " + est.error());
    OpEstimate oe{op, *est, est->seconds * static_cast<double>(op.count)};
    it.per_dimension_seconds[d] += oe.total_seconds;
    it.total_seconds += oe.total_seconds;
    it.ops.push_back(std::move(oe));
  }
  return it;
}

}  // namespace hsns::cost
