// GET /api/v1/topology/layout: the fabric site view's layout, computed from the topology's Clos shape
// (tiers, super-pods, SUs, rails); no force layout, so the same topology always gets the same picture.
//
// Contract:
// - Groups (always answered): one per SU (the leaf domain: its leaves and hosts, id "su:<n>"), one spine
//   group per super-pod (the spine domain: the spines above it, "spines:<n>"), one core group ("core",
//   when the fabric has a core tier), and one rail group per rail ("rail:<n>": the leaves whose host links
//   are mostly to NPU index n). Each group has its counts, device-state counts, the worst device state
//   (isolated > sub-health > allocated > healthy) and a position.
// - Level of detail: `expand` (comma-separated group ids, or "all") lists the SU and spine groups drawn as
//   their members: each member switch and host is a node with its position; the other groups stay one
//   node each. Edges join what is drawn: every link maps each end to its node (expanded) or its group
//   (collapsed), links between the same pair are summed (count, capacity, links not healthy), and links
//   inside one collapsed group are not drawn. At most kMaxExpand ids.
// - `locate` (comma-separated host names, at most kMaxLocate): answered in `located` as host -> SU group
//   id, so a client can mark hosts (a search answer) on the grouped view; an unknown host is named (400).
// - Positions are in an abstract plane: x grows along the fabric, y is the tier (0 core, 1 spines, 2 SUs
//   and leaves, 3 hosts, 4 rails); clients scale them. 404 while no topology exists.
// - Cost: O(nodes + links) per request (a worker-pool route: it may run for a 100,000-host model).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "http/router.h"
#include "services/topology_cache.h"

namespace hsns::topology_api {

inline constexpr std::size_t kMaxExpand = 1024;
inline constexpr std::size_t kMaxLocate = 4096;

// The rail of a leaf: the NPU index most of its host links come from (ties: the lowest); none without host
// links. The layout's rail groups ("rail:<n>") are the leaves of each rail.
std::optional<std::uint32_t> leaf_rail(const topology::Topology& t, const topology::Node& leaf);

void register_layout_route(http::Router& router, std::shared_ptr<services::TopologyCache> cache);

}  // namespace hsns::topology_api
