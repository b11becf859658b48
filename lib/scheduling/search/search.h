// Topology search: given a model, its parallelism and a pool of hosts, the ranked host sets a job should
// run on, each with its predicted per-iteration communication time (cost model), the tier each parallel
// dimension's groups span and the fragmentation it leaves. Design and measurements: docs/topology-search.md.
//
// Contract:
// - Pure function of (topology, request); deterministic (ties broken by host name); thread-safe over a const
//   Topology. Errors are values: an hsns::Error of kind unprocessable whose field names the failing field or
//   constraint ("parallel.tp", "npus", "resources", "constraints.max_tier", "resources.hosts[3]", ...)
//   and whose detail says why; the REST layer answers it with 422.
// - Usable host: node state healthy, not excluded, in the resource list when one is given, with at least
//   `u` free NPUs (Topology::free_npus: NPU and host healthy, link not isolated), u = NPUs the job uses per
//   host = min(TP*PP*DP*CP, npus_per_host). A candidate only ever holds usable hosts and, per host, the
//   first u free NPU indices: never an isolated, sub-health or allocated host or NPU. A named resource host
//   that is unknown or not usable is an error naming it; an unknown excluded host likewise.
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
// - Score: cost::iteration_comm_time with each dimension's span (topology tier t -> calibration tier
//   min(t, tiers-1)) and ranks per host. Ranking: total time (relative tolerance 1e-9), then fewer stranded
//   free NPUs, then fewer leaf domains touched, then the host names lexicographically.
// - Candidates: per leaf domain (SU) holding k usable hosts, per super-pod and per fabric domain, a greedy
//   domain-aware selection in blocks (a block = the fewest consecutive hosts holding whole pipeline stages,
//   so that DP x CP groups stay inside it); at most `answers` distinct host sets are returned, fewer when
//   fewer exist.
// - Cost: O(H) to index the pool plus O(C * world) for C candidates (C <= SUs + 4 * (pods + fabrics)).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
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

// Host, leaf, spine (400 Gbit/s, 1:1), core (400 Gbit/s, 2:1); 1600 Gbit/s inside a host.
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
  cost::Algorithm algorithm = cost::Algorithm::automatic;
};

// What the candidate leaves behind in the leaf domains (SUs) it touches.
struct Fragmentation {
  std::uint32_t leaf_domains_touched = 0;
  std::uint32_t leaf_domains_left_partial = 0;  // touched SUs that keep free NPUs after allocation
  std::uint32_t spine_domains_touched = 0;
  std::uint32_t stranded_free_npus = 0;  // free NPUs left in the touched SUs
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

struct SearchResult {
  std::vector<Candidate> candidates;  // best first
  std::uint32_t hosts_needed = 0;
  std::uint32_t npus_per_host_used = 0;  // u
  std::uint32_t usable_hosts = 0;
  std::uint32_t candidates_evaluated = 0;
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
  // Usable hosts, sorted by name.
  const std::vector<NodeId>& usable() const { return usable_; }
  bool is_usable(NodeId host) const;

  // Domain-aware rank order of a host set: whole blocks inside one SU first, then blocks inside one
  // super-pod, then the rest; SUs and pods in id order, hosts by name.
  std::vector<NodeId> canonical_order(std::vector<NodeId> hosts) const;
  // Scores hosts in the given rank order (k usable hosts, else an error naming "hosts").
  Result<Candidate> score(std::span<const NodeId> hosts_in_rank_order) const;

 private:
  Scorer(const Topology& topology, const SearchRequest& request) : topo_(&topology), req_(&request) {}
  const Topology* topo_;
  const SearchRequest* req_;
  cost::CommVolume volume_;
  std::uint32_t u_ = 0, k_ = 0, block_ = 1, world_ = 0;
  std::vector<NodeId> usable_;
  std::vector<char> usable_mask_;                     // by NodeId
  std::array<std::uint32_t, kDimensions> dim_gcd_{};  // gcd of the group sizes of each dimension's ops
  std::vector<std::uint32_t> su_free_npus_;           // free NPUs per leaf domain (all hosts)
  mutable std::unordered_map<std::uint64_t, std::pair<double, std::array<double, kDimensions>>> memo_;
};

// First-fit baseline: the first k usable hosts in name order, in that rank order. Topology-oblivious only
// where host names do not follow the cabling; generate_clos names do (docs/topology-search.md, Quality).
Result<std::vector<NodeId>> first_fit(const Topology& topology, const SearchRequest& request);

}  // namespace hsns::search
