// Full-path diagnosis, the pure half: which fabric links and switches traffic between two NPU ports
// crosses (issue 12, item 8; docs/brain.md "Path diagnosis"). The aggregator adds each hop's KPIs, alarms
// and verdict (aggregator/services/diagnosis_service.h).
//
// Contract:
// - A path is the list of topology links from the source NPU's link to the destination NPU's link, as
//   Topology::path gives it (isolated links are never on a path). Two NPUs of one host have an empty path
//   (their traffic stays on the host).
// - ecmp_paths(): every path ECMP may choose: up to the lowest tier that reaches the destination leaf
//   (preferring uplinks whose switch reaches it directly, as Topology::path does), then down, each stage's
//   candidates in ascending link id, enumerated depth first; reachability counts only links that are not
//   isolated, so no candidate leads into a dead end (Topology::path's index ignores link states). At most
//   max_paths paths (truncated says more exist); none at all is unprocessable naming "dst". Deterministic.
//   Costs O(paths x tiers x uplinks x the downward reachability checks).
// - planned_path(): the path one QP of a route plan takes. The plan (scheduling/cost/route_planner.h) names
//   an abstract uplink u of the source leaf and a parallel downlink j of the spine to the destination leaf;
//   as in cost::ClosFabric, uplink u goes to the spine u % spines, as that spine's (u / spines)-th parallel
//   link. Concretely: the spines are the distinct upper ends of the leaf's non-isolated uplinks in ascending
//   node id (what placement's fabric counts), the parallel links of a (leaf, spine) pair in ascending link
//   id. A plan that does not fit the topology as it is now (fewer uplinks, a spine that does not reach the
//   destination leaf: the job's leaves sit in different super-pods, which the planner does not model) is an
//   unprocessable error saying why, so the caller can fall back to ecmp_paths().
// - job_pair_paths(): the communicating pairs of a job's route plan (placement::RoutePlanResult: every
//   inter-host transfer of its phases, as ordered rank pairs, each once, in first-appearance order) with the
//   distinct planned paths of their QPs; a pair whose plan does not fit gets the ECMP candidates instead
//   (planned false, note the reason). max_pairs bounds the pairs (truncated then); max_paths the ECMP
//   fan-out of each.
// - Hops: path_hops() turns a path into the hops a diagnosis reports, alternating links and the switches
//   between them: link, leaf, link, spine, link, leaf, link for a leaf-spine-leaf path. Each hop names its
//   entities (docs/brain.md "Entity ids"): a link its two ends, lower end first ("<host>/<netdev>" for an
//   NPU port, "<device>/<port>" for a switch port; a port the topology does not name gives the device
//   alone), a switch its device name.
// - Errors: hsns::Error from Topology::path (unknown NPU: not_found; no path: unprocessable naming
//   "src"/"dst"). Pure functions; thread-safe on a const topology.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "scheduling/placement/schedule.h"
#include "topology/topology.h"

namespace hsns::diagnose {

inline constexpr std::size_t kDefaultMaxPaths = 64;
inline constexpr std::size_t kMaxPathsLimit = 1024;

using LinkPath = std::vector<topology::LinkId>;

struct PathSet {
  std::vector<LinkPath> paths;  // distinct, in enumeration order
  bool planned = false;         // from a route plan, not every ECMP candidate
  bool truncated = false;       // more ECMP candidates than max_paths
  std::string note;             // why a plan was not used (empty otherwise)
};

Result<PathSet> ecmp_paths(const topology::Topology& topo, topology::NpuRef src, topology::NpuRef dst,
                           std::size_t max_paths = kDefaultMaxPaths);

// The path of one QP whose plan took global uplink index `uplink` and downlink index `downlink` of
// `fabric` (cost::uplink_index / downlink_index).
Result<LinkPath> planned_path(const topology::Topology& topo, const cost::ClosFabric& fabric,
                              topology::NpuRef src, topology::NpuRef dst, std::uint32_t uplink,
                              std::uint32_t downlink);

struct RankPair {
  std::uint32_t src = 0;  // ranks
  std::uint32_t dst = 0;
  PathSet paths;
};

struct JobPairs {
  std::vector<RankPair> pairs;
  bool truncated = false;  // more pairs than max_pairs
};

Result<JobPairs> job_pair_paths(const topology::Topology& topo, const placement::Schedule& schedule,
                                std::size_t max_pairs, std::size_t max_paths = kDefaultMaxPaths);

// One pair's paths as job_pair_paths gives them; a pair of different hosts that does not communicate in
// the plan gets its ECMP candidates (note: "the pair does not communicate in the job's route plan").
// Ranks outside the job: not_found.
Result<PathSet> rank_pair_paths(const topology::Topology& topo, const placement::Schedule& schedule,
                                std::uint32_t src_rank, std::uint32_t dst_rank,
                                std::size_t max_paths = kDefaultMaxPaths);

enum class HopKind : std::uint8_t { link, device };

struct Hop {
  HopKind kind = HopKind::link;
  topology::LinkId link = topology::kNoLink;  // link hops
  topology::NodeId node = topology::kNoNode;  // device hops
  std::vector<std::string> entities;          // see the contract
  std::string key;  // unique per hop: "link:<a>|<b>" (its entities) or "device:<name>"
};

std::vector<Hop> path_hops(const topology::Topology& topo, const LinkPath& path);

// The entity id of one end of a link: `lower` true for its lower end.
std::string link_end_entity(const topology::Topology& topo, topology::LinkId link, bool lower);

}  // namespace hsns::diagnose
