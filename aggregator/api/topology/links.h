// GET /api/v1/topology/links: the topology's devices and links as compact columns, what the dashboard's
// matrices and overlays read instead of the full JSON export (which repeats every key and field name per
// link: 22 MB for 10,000 hosts x 8 NPUs, against 2.8 MB here).
//
// Contract:
// - Devices (always every device): parallel arrays indexed by the device's id (the topology model's node
//   id, 0..n-1): `name`, `tier` and `state` (indices into the answer's `tiers` and `states`), `su` and `pod`
//   (the scalable unit and super-pod the aggregator places the device in: a host its own domains, a leaf
//   its hosts' SU and super-pod, a spine its hosts' super-pod; -1 where none, e.g. a core switch).
// - Links: parallel arrays, one entry per link in the model's link order: `lower` and `upper` (device ids,
//   upper one tier above lower), `lower_port` and `upper_port` (indices into the answer's `ports`, the
//   distinct port names), `gbps`, `state` (index into `states`), `npu` (the NPU index of a host link, -1
//   otherwise). `upper` (query; comma-separated leaf, spine, core) keeps only the links whose upper device
//   is of those tiers (e.g. `leaf`: the NPU links of the host x port and rail x SU matrices; `spine`: the
//   leaf x spine uplinks); an unknown or empty tier is a 400 naming `upper`. `total_links` is the model's
//   link count.
// - 404 while no topology exists. Any role may read it. O(devices + links) per request (a worker-pool
//   route).
// - parse_upper_filter(ctx) is the `upper` query parameter as the route reads it (also GET
//   /api/v1/overlays/{id}/grades and its stream): which upper tiers are kept, indexed by tier_index(); every
//   tier when absent; a 400 Problem naming `upper` otherwise. keeps_upper(filter, tier) says whether a link
//   whose upper device is of `tier` is kept.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <tl/expected.hpp>

#include "hsns/problem.h"
#include "http/router.h"
#include "services/topology_cache.h"
#include "topology/topology.h"

namespace hsns::topology_api {

using UpperFilter = std::array<bool, 4>;  // host (never an upper tier), leaf, spine, core
std::size_t tier_index(topology::Tier tier);
tl::expected<UpperFilter, Problem> parse_upper_filter(const http::RequestContext& ctx);
inline bool keeps_upper(const UpperFilter& filter, topology::Tier tier) {
  return filter[tier_index(tier)];
}

void register_links_route(http::Router& router, std::shared_ptr<services::TopologyCache> cache);

}  // namespace hsns::topology_api
