// Topology search: given a model, its parallelism and a pool of hosts, the ranked host sets a job should
// run on, each with its predicted per-iteration communication time (cost model), the tier each parallel
// dimension's groups span and the fragmentation it leaves. Design and measurements: docs/topology-search.md.
//
// Contract:
// - Pure function of (topology, request); deterministic (ties broken by host name); thread-safe over a const
//   Topology. Errors are values: an hsns::Error of kind unprocessable whose field names the failing field or
//   constraint ("parallel.tp", "npus", "resources", "constraints.max_tier", "resources.hosts[3]", ...)
//   and whose detail says why; the REST layer answers it with 422.
// - Usable NPU: free (Topology::free_npus: NPU and host healthy, link not isolated) and behind a usable
//   leaf. Usable switch (leaf): state healthy and, when it has uplinks at all, at least one healthy uplink
//   to a healthy switch (a leaf whose every path up is down strands its hosts). Usable host: state
//   healthy, not excluded, in the resource list when one is given, with at least u usable NPUs, u = NPUs
//   the job uses per host = min(TP*PP*DP*CP, npus_per_host). A candidate only ever holds usable hosts
//   and, per host, its first u usable NPU indices: never an isolated, sub-health or allocated host, NPU or
//   switch. A named resource host that is unknown or not usable is an error naming it (the detail gives
//   why); an unknown excluded host likewise. With `explain`, the result counts the hosts left out per
//   reason and lists up to kExplainExamples of them with the reason in words.
// - Feasibility: world = TP*PP*DP*CP; npus (when non-zero) must equal world; TP <= npus_per_host and TP
//   divides u (TP groups never leave a host); world is a multiple of u; hosts needed k = world / u; at
//   least k usable hosts; some domain of a tier <= constraints.max_tier holds k usable hosts. The model and
//   parallelism must pass cost::check first (its field: "model.<field>", "parallel.<size>" or "parallel"),
//   which bounds world <= 2^24 and every product used here, so no size computation can wrap.
// - Rank order (Megatron-LM, "tp-cp-ep-dp-pp"): rank = tp + TP*(cp + CP*(dp + DP*pp)); EP groups are
//   consecutive runs of EP ranks in the (cp + CP*dp) index. Host i of a candidate holds ranks [i*u, (i+1)*u),
//   local rank j on npus[i][j]. A dimension's span is the highest lowest-common-tier over its groups; the DP
//   span is that of the DP x CP group (dense gradients are reduced over both, as in the cost model). Ranks
//   per host (for hierarchical collectives): the first group's members on its first host, reduced to the
//   gcd with every group size of the dimension's operations (expert-DP groups are smaller than DP x CP).
// - Score: the cost model (cost::collective_time per operation, summed as cost::iteration_comm_time does)
//   with each dimension's span (topology tier t -> calibration tier min(t, tiers-1)) and ranks per host.
//   Algorithm per dimension: dimension_algorithm[d], else `algorithm`; an explicit algorithm that cannot
//   run one of the dimension's operations (tree: all-reduce only; hierarchical: no all-to-all) leaves that
//   operation to `automatic`, and SearchResult::algorithm_notes says so (never an error).
// - Ranking: total time (relative tolerance 1e-9); for a one-host job, fewer free NPUs left on its host
//   (best fit over the whole pool); then fewer stranded free NPUs (usable NPUs left free in the SUs
//   touched); then fewer SUs touched; then fewer free NPUs left on the chosen hosts; then the host names
//   (rank order) lexicographically.
// - Candidates: the best answer is the best over all host sets in canonical order. Cost, stranded NPUs
//   and SUs depend only on how many hosts a set takes from each SU, and the time on the tier the job spans
//   and on which of the rank-order units (block, CP and EP runs; canonical_order) stay inside one SU or
//   one super-pod. So per domain (SU, super-pod, fabric) and per alignment class (unit sizes that must stay
//   inside an SU and inside a super-pod) the set with the fewest stranded NPUs, then SUs, is found exactly
//   by a knapsack over the SUs' whole units (documented in docs/topology-search.md); the one-SU sets are
//   ranked without scoring each. At most `answers` distinct host sets are returned, fewer when fewer are
//   found.
// - Cost: O(H + N) to index the pool and the switch states (H hosts, N NPUs), O(S * k) per alignment class
//   (S SUs), O(P * k^2 / a^2) for the super-pod-aligned classes of a fabric (P super-pods, a the aligned
//   unit), plus O(C * world) to score the C candidates.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <unordered_map>
#include <vector>

#include "hsns/error.h"
#include "scheduling/cost/collective_time.h"
#include "scheduling/cost/comm_volume.h"
#include "topology/topology.h"

namespace hsns::search {

using topology::NodeId;
using topology::Tier;
using topology::Topology;

struct Resources {
  std::vector<std::string> hosts;  // host names to choose from; empty = every free host
};

struct Constraints {
  Tier max_tier = Tier::kCore;             // highest tier the job may span
  std::vector<std::string> exclude_hosts;  // never chosen
};

// host 2 us 1600 Gbit/s 1:1, leaf 5 us 400 Gbit/s 1:1, spine 8 us 400 Gbit/s 2:1, core 10 us 400 Gbit/s 4:1
// (the figures docs/topology-search.md documents).
cost::Calibration default_calibration();

struct SearchRequest {
  cost::ModelSpec model;
  cost::ParallelSpec parallel;
  std::uint32_t npus = 0;           // NPUs requested; 0 = TP*PP*DP*CP
  std::uint32_t npus_per_host = 0;  // 0 = the largest NPU count of any host in the topology
  Resources resources;
  Constraints constraints;
  std::uint32_t answers = 3;  // 1..1000
  cost::Calibration calibration = default_calibration();
  cost::Algorithm algorithm = cost::Algorithm::automatic;  // every dimension without its own
  // Per dimension (indexed by static_cast<size_t>(cost::Dimension)): overrides `algorithm`.
  std::array<std::optional<cost::Algorithm>, 5> dimension_algorithm{};
  bool explain = false;  // fill SearchResult::left_out
};

// What the candidate leaves behind in the leaf domains (SUs) it touches.
struct Fragmentation {
  std::uint32_t leaf_domains_touched = 0;
  std::uint32_t leaf_domains_left_partial = 0;  // touched SUs that keep free NPUs after allocation
  std::uint32_t spine_domains_touched = 0;
  std::uint32_t stranded_free_npus = 0;       // usable free NPUs left in the touched SUs
  std::uint32_t free_npus_left_on_hosts = 0;  // usable NPUs of the chosen hosts the job does not take
};

inline constexpr std::size_t kDimensions = 5;  // indexed by static_cast<size_t>(cost::Dimension)

struct Candidate {
  std::vector<std::string> hosts;                // rank order
  std::vector<NodeId> host_ids;                  // same order
  std::vector<std::vector<std::uint32_t>> npus;  // per host, NPU index of local rank j
  double total_seconds = 0;
  std::array<double, kDimensions> dimension_seconds{};
  std::array<Tier, kDimensions> span{};  // highest tier any group of the dimension spans
  Tier job_span = Tier::kHost;           // lowest common tier of all hosts
  Fragmentation fragmentation;
  std::string explanation;
};

// Why hosts were left out of the pool (SearchRequest::explain).
inline constexpr std::size_t kExplainExamples = 20;
enum class LeftOut : std::uint8_t {
  host_state,     // the host is not healthy
  excluded,       // constraints.exclude_hosts
  not_requested,  // not in resources.hosts (counted, never listed)
  switch_state,   // a leaf it needs is not healthy
  no_uplink,      // a leaf it needs has no usable path up
  free_npus,      // fewer usable free NPUs than the job takes per host
};
inline constexpr std::size_t kLeftOutReasons = 6;
std::string_view to_string(LeftOut reason);  // "host_state", "excluded", ...

struct LeftOutHost {
  std::string host;
  LeftOut kind = LeftOut::host_state;
  std::string reason;  // e.g. "leaf leaf03 is allocated"
};

struct LeftOutReport {
  std::array<std::uint32_t, kLeftOutReasons> counts{};  // indexed by LeftOut
  std::vector<LeftOutHost> examples;                    // at most kExplainExamples, host name order
};

struct SearchResult {
  std::vector<Candidate> candidates;  // best first
  std::uint32_t hosts_needed = 0;
  std::uint32_t npus_per_host_used = 0;  // u
  std::uint32_t usable_hosts = 0;
  std::uint32_t candidates_evaluated = 0;
  std::vector<std::string> algorithm_notes;  // operations an explicit algorithm could not run
  std::optional<LeftOutReport> left_out;     // with SearchRequest::explain
};

Result<SearchResult> search_topology(const Topology& topology, const SearchRequest& request);

// The validated request, the usable pool and the cost of any ordered host list: what search_topology uses,
// exposed for scoring given placements, baselines and exhaustive checks. Keeps references: the topology and
// the request must outlive it. Not safe for concurrent use of one instance (it memoises costs by span).
class Scorer {
 public:
  static Result<Scorer> create(const Topology& topology, const SearchRequest& request);

  std::uint32_t hosts_needed() const { return k_; }
  std::uint32_t npus_per_job_host() const { return u_; }
  // Hosts of a block: the fewest consecutive hosts holding whole pipeline stages, lcm(TP*CP*DP, u) / u
  // (1 when that does not divide the job).
  std::uint32_t block_hosts() const { return block_; }
  // The rank-order units canonical_order keeps inside domains, largest first, each dividing the one
  // before: the block, then the CP run (lcm(TP*CP, u) / u hosts) and the EP run (lcm(TP*EP, u) / u) when
  // they divide it, then 1. Each divides k.
  const std::vector<std::uint32_t>& units() const { return units_; }
  // Usable hosts, sorted by name.
  const std::vector<NodeId>& usable() const { return usable_; }
  bool is_usable(NodeId host) const;
  // Usable free NPUs of a host (see the contract) and their indices, ascending.
  std::uint32_t usable_npus(NodeId host) const;
  std::span<const std::uint32_t> usable_npu_indices(NodeId host) const;
  // Usable free NPUs of all hosts of an SU (what a candidate touching it strands, plus what it takes).
  std::uint32_t su_free_npus(std::uint32_t su) const { return su_free_npus_.at(su); }
  // Why hosts are not in the pool (counted and listed when the request asks to explain).
  const LeftOutReport& left_out() const { return left_out_; }
  // Operations an explicit algorithm cannot run (they use automatic), in operation order.
  const std::vector<std::string>& algorithm_notes() const { return notes_; }

  // Domain-aware rank order of a host set: whole units (largest first) inside one SU, then inside one
  // super-pod, then inside one fabric, then the rest; each domain's leftovers are concatenated with the
  // best aligned first, so smaller units (CP and EP runs) of a block that crosses SUs stay inside SUs
  // when the counts allow. SUs and pods in id order, hosts by name.
  std::vector<NodeId> canonical_order(const std::vector<NodeId>& hosts) const;
  // Scores hosts in the given rank order (k usable hosts, else an error naming "hosts").
  Result<Candidate> score(std::span<const NodeId> hosts_in_rank_order) const;
  // The predicted time alone (what score() ranks first), without building the candidate.
  Result<double> seconds(std::span<const NodeId> hosts_in_rank_order) const;

 private:
  Scorer(const Topology& topology, const SearchRequest& request) : topo_(&topology), req_(&request) {}
  struct Priced {
    double total_seconds = 0;
    std::array<double, kDimensions> dimension_seconds{};
    std::array<Tier, kDimensions> span{};
  };
  Result<Priced> price(std::span<const NodeId> hosts_in_rank_order) const;
  void index_switch_states();
  void index_usable_npus();
  std::optional<LeftOutHost> why_not_usable(NodeId host) const;
  Result<void> resolve_algorithms();
  const Topology* topo_;
  const SearchRequest* req_;
  cost::CommVolume volume_;
  std::vector<cost::Algorithm> op_algorithm_;  // per volume_.ops entry
  std::vector<std::string> notes_;
  std::uint32_t u_ = 0, k_ = 0, block_ = 1, world_ = 0;
  std::vector<std::uint32_t> units_;
  std::vector<NodeId> usable_;
  std::vector<char> usable_mask_;  // by NodeId
  std::vector<char> switch_ok_;    // by NodeId: usable leaf (switches only)
  std::vector<std::uint32_t> npu_offset_,
      npu_index_;  // usable NPU indices of host h: [offset[h], offset[h+1])
  std::array<std::uint32_t, kDimensions> dim_gcd_{};  // gcd of the group sizes of each dimension's ops
  std::vector<std::uint32_t> su_free_npus_;           // usable free NPUs per leaf domain (all hosts)
  LeftOutReport left_out_;
  mutable std::unordered_map<std::uint64_t, std::pair<double, std::array<double, kDimensions>>> memo_;
};

// First-fit baseline: the first k usable hosts in name order, in that rank order. Topology-oblivious only
// where host names do not follow the cabling; generate_clos names do (docs/topology-search.md, Quality).
Result<std::vector<NodeId>> first_fit(const Topology& topology, const SearchRequest& request);

}  // namespace hsns::search
