#include "brain/diagnose/path_expansion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace hsns::diagnose {
namespace {

using topology::DeviceState;
using topology::LinkId;
using topology::NodeId;

// Whether `from` reaches `leaf` downward over links that are not isolated. A leaf reaches only itself
// (below it are hosts).
bool down_to(const topology::Topology& t, NodeId from, NodeId leaf) {
  if (from == leaf) return true;
  if (t.node(from).tier <= topology::Tier::kLeaf) return false;
  for (LinkId l : t.node(from).downlinks) {
    const auto& link = t.link(l);
    if (link.state != DeviceState::kIsolated && down_to(t, link.lower, leaf)) return true;
  }
  return false;
}

// Whether `from` reaches `leaf` going up first (any number of tiers), then down.
bool up_to(const topology::Topology& t, NodeId from, NodeId leaf) {
  if (down_to(t, from, leaf)) return true;
  for (LinkId l : t.node(from).uplinks) {
    const auto& link = t.link(l);
    if (link.state != DeviceState::kIsolated && up_to(t, link.upper, leaf)) return true;
  }
  return false;
}

// Depth-first over the ECMP choices, as Topology::path makes them (up to the lowest tier that reaches the
// destination leaf, preferring uplinks that reach it directly, then down), but with reachability over
// links that are not isolated, so no choice leads into a dead end. false: stop (the bound was reached).
bool expand(const topology::Topology& t, NodeId cur, NodeId dst_leaf, LinkPath& links, LinkId last,
            std::size_t max_paths, PathSet& out) {
  if (cur == dst_leaf) {
    if (out.paths.size() == max_paths) {
      out.truncated = true;
      return false;
    }
    out.paths.push_back(links);
    out.paths.back().push_back(last);
    return true;
  }
  std::vector<LinkId> candidates;
  bool upward = false;
  if (!down_to(t, cur, dst_leaf)) {
    upward = true;
    std::vector<LinkId> further;
    for (LinkId l : t.node(cur).uplinks) {
      const auto& link = t.link(l);
      if (link.state == DeviceState::kIsolated) continue;
      if (down_to(t, link.upper, dst_leaf)) {
        candidates.push_back(l);
      } else if (up_to(t, link.upper, dst_leaf)) {
        further.push_back(l);
      }
    }
    if (candidates.empty()) candidates = std::move(further);
  } else {
    for (LinkId l : t.node(cur).downlinks) {
      const auto& link = t.link(l);
      if (link.state != DeviceState::kIsolated && down_to(t, link.lower, dst_leaf)) candidates.push_back(l);
    }
  }
  for (LinkId l : candidates) {
    links.push_back(l);
    const bool more =
        expand(t, upward ? t.link(l).upper : t.link(l).lower, dst_leaf, links, last, max_paths, out);
    links.pop_back();
    if (!more) return false;
  }
  return true;
}

Error plan_misfit(const std::string& why) {
  return Error::unprocessable("route_plan", why);
}

}  // namespace

Result<PathSet> ecmp_paths(const topology::Topology& topo, topology::NpuRef src, topology::NpuRef dst,
                           std::size_t max_paths) {
  const auto* a = topo.npu(src);
  const auto* b = topo.npu(dst);
  if (a == nullptr) return tl::unexpected(Error::not_found("source NPU not found in the topology"));
  if (b == nullptr) return tl::unexpected(Error::not_found("destination NPU not found in the topology"));
  PathSet out;
  if (src.host == dst.host) {
    out.paths.emplace_back();
    return out;
  }
  if (a->link == topology::kNoLink)
    return tl::unexpected(Error::unprocessable("src", "source NPU has no link to a leaf"));
  if (b->link == topology::kNoLink)
    return tl::unexpected(Error::unprocessable("dst", "destination NPU has no link to a leaf"));
  LinkPath links{a->link};
  expand(topo, topo.link(a->link).upper, topo.link(b->link).upper, links, b->link,
         std::max<std::size_t>(max_paths, 1), out);
  if (out.paths.empty()) {
    return tl::unexpected(Error::unprocessable(
        "dst", "no usable path from " + topo.node(src.host).name + " to " + topo.node(dst.host).name));
  }
  return out;
}

Result<LinkPath> planned_path(const topology::Topology& topo, const cost::ClosFabric& fabric,
                              topology::NpuRef src, topology::NpuRef dst, std::uint32_t uplink,
                              std::uint32_t downlink) {
  const auto* a = topo.npu(src);
  const auto* b = topo.npu(dst);
  if (a == nullptr) return tl::unexpected(Error::not_found("source NPU not found in the topology"));
  if (b == nullptr) return tl::unexpected(Error::not_found("destination NPU not found in the topology"));
  if (src.host == dst.host) return LinkPath{};
  if (a->link == topology::kNoLink || b->link == topology::kNoLink)
    return tl::unexpected(plan_misfit("an NPU of the pair has no link to a leaf"));
  const NodeId leaf_a = topo.link(a->link).upper;
  const NodeId leaf_b = topo.link(b->link).upper;
  if (leaf_a == leaf_b) return LinkPath{a->link, b->link};
  if (fabric.spines == 0 || fabric.uplinks_per_leaf == 0 || fabric.uplinks_per_leaf % fabric.spines != 0)
    return tl::unexpected(plan_misfit("the plan's fabric has no spine layer"));

  std::map<NodeId, std::vector<LinkId>> by_spine;  // ascending node id, links ascending id
  for (LinkId l : topo.node(leaf_a).uplinks) {
    const auto& link = topo.link(l);
    if (link.state != DeviceState::kIsolated) by_spine[link.upper].push_back(l);
  }
  const std::string leaf_name = topo.node(leaf_a).name;
  if (by_spine.size() != fabric.spines) {
    return tl::unexpected(plan_misfit("leaf " + leaf_name + " reaches " + std::to_string(by_spine.size()) +
                                      " spines now, the plan " + std::to_string(fabric.spines)));
  }
  const std::uint32_t u = uplink % fabric.uplinks_per_leaf;
  const std::uint32_t s = u % fabric.spines;
  const std::uint32_t k = u / fabric.spines;
  auto spine = std::next(by_spine.begin(), s);
  if (k >= spine->second.size()) {
    return tl::unexpected(plan_misfit("leaf " + leaf_name + " has " + std::to_string(spine->second.size()) +
                                      " usable links to " + topo.node(spine->first).name + ", the plan " +
                                      std::to_string(fabric.parallel_links())));
  }
  const LinkId up = spine->second[k];
  std::vector<LinkId> down;
  for (LinkId l : topo.node(spine->first).downlinks) {
    const auto& link = topo.link(l);
    if (link.lower == leaf_b && link.state != DeviceState::kIsolated) down.push_back(l);
  }
  if (down.empty()) {
    return tl::unexpected(plan_misfit("the planned spine " + topo.node(spine->first).name +
                                      " has no usable link to leaf " + topo.node(leaf_b).name +
                                      " (leaves in different super-pods are not planned)"));
  }
  const std::uint32_t j = downlink % std::max<std::uint32_t>(fabric.parallel_links(), 1);
  if (j >= down.size()) {
    return tl::unexpected(plan_misfit("spine " + topo.node(spine->first).name + " has " +
                                      std::to_string(down.size()) + " usable links to leaf " +
                                      topo.node(leaf_b).name + ", the plan " +
                                      std::to_string(fabric.parallel_links())));
  }
  return LinkPath{a->link, up, down[j], b->link};
}

namespace {

using FlowIndex = std::map<std::pair<std::uint32_t, std::uint32_t>, const cost::PlannedFlow*>;

// The plan's flows by (source rank, destination rank).
FlowIndex index_flows(const placement::Schedule& schedule) {
  std::map<IpAddress, std::uint32_t> rank_of_ip;
  for (const auto& r : schedule.placement.ranks) rank_of_ip.emplace(r.ip, r.rank);
  FlowIndex flows;
  for (const auto& f : schedule.route.comparison.plan.flows) {
    const auto a = rank_of_ip.find(f.demand.src_ip);
    const auto b = rank_of_ip.find(f.demand.dst_ip);
    if (a != rank_of_ip.end() && b != rank_of_ip.end()) flows.emplace(std::pair{a->second, b->second}, &f);
  }
  return flows;
}

// One pair's paths: the planned ones when the plan covers the pair and fits the topology, else the ECMP
// candidates with the reason.
Result<PathSet> pair_paths(const topology::Topology& topo, const placement::Schedule& schedule,
                           const FlowIndex& flows, std::uint32_t src_rank, std::uint32_t dst_rank,
                           std::size_t max_paths) {
  const auto& route = schedule.route;
  const auto& ranks = schedule.placement.ranks;
  const topology::NpuRef src{ranks.at(src_rank).host_id, ranks.at(src_rank).npu};
  const topology::NpuRef dst{ranks.at(dst_rank).host_id, ranks.at(dst_rank).npu};
  PathSet planned;
  std::string note;
  const auto flow = flows.find({src_rank, dst_rank});
  if (flow == flows.end()) {
    note = ranks[src_rank].host_id == ranks[dst_rank].host_id
               ? ""
               : "the pair does not communicate in the job's route plan";
  } else if (!route.modelled) {
    note = "the job's route plan does not model the fabric (no spine layer)";
  } else if (flow->second->uplinks.empty()) {
    // Inside one leaf the planner assigns ports only: the path has no ECMP choice to plan.
  } else if (flow->second->uplinks.size() != flow->second->downlinks.size()) {
    note = "the pair's plan is incomplete";
  } else {
    std::set<LinkPath> distinct;
    for (std::size_t q = 0; q < flow->second->uplinks.size(); ++q) {
      auto p =
          planned_path(topo, route.fabric, src, dst, flow->second->uplinks[q], flow->second->downlinks[q]);
      if (!p) {
        note = p.error().detail;
        break;
      }
      if (distinct.insert(*p).second) planned.paths.push_back(std::move(*p));
    }
    if (note.empty()) {
      planned.planned = true;
      return planned;
    }
  }
  auto ecmp = ecmp_paths(topo, src, dst, max_paths);
  if (!ecmp) return tl::unexpected(std::move(ecmp.error()));
  // A pair with no note has a single path (inside a leaf or a host): the plan left no choice.
  ecmp->planned = note.empty();
  ecmp->note = std::move(note);
  return ecmp;
}

}  // namespace

Result<PathSet> rank_pair_paths(const topology::Topology& topo, const placement::Schedule& schedule,
                                std::uint32_t src_rank, std::uint32_t dst_rank, std::size_t max_paths) {
  if (src_rank >= schedule.placement.ranks.size() || dst_rank >= schedule.placement.ranks.size())
    return tl::unexpected(Error::not_found("rank not in the job"));
  return pair_paths(topo, schedule, index_flows(schedule), src_rank, dst_rank, max_paths);
}

Result<JobPairs> job_pair_paths(const topology::Topology& topo, const placement::Schedule& schedule,
                                std::size_t max_pairs, std::size_t max_paths) {
  const auto& ranks = schedule.placement.ranks;
  const FlowIndex flows = index_flows(schedule);
  JobPairs out;
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (const auto& phase : schedule.route.phases) {
    for (const auto& t : phase) {
      if (t.src >= ranks.size() || t.dst >= ranks.size()) continue;
      if (!seen.insert({t.src, t.dst}).second) continue;
      if (out.pairs.size() == max_pairs) {
        out.truncated = true;
        return out;
      }
      auto paths = pair_paths(topo, schedule, flows, t.src, t.dst, max_paths);
      if (!paths) return tl::unexpected(std::move(paths.error()));
      out.pairs.push_back({t.src, t.dst, std::move(*paths)});
    }
  }
  return out;
}

std::string link_end_entity(const topology::Topology& topo, topology::LinkId link, bool lower) {
  const auto& l = topo.link(link);
  const auto& node = topo.node(lower ? l.lower : l.upper);
  const auto& port = lower ? l.lower_port : l.upper_port;
  return port.empty() ? node.name : node.name + "/" + port;
}

std::vector<Hop> path_hops(const topology::Topology& topo, const LinkPath& path) {
  std::vector<Hop> hops;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) {
      const auto& prev = topo.link(path[i - 1]);
      const auto& next = topo.link(path[i]);
      NodeId shared = topology::kNoNode;
      for (NodeId n : {prev.lower, prev.upper}) {
        if (n == next.lower || n == next.upper) shared = n;
      }
      if (shared != topology::kNoNode) {
        const auto& name = topo.node(shared).name;
        hops.push_back({HopKind::device, topology::kNoLink, shared, {name}, "device:" + name});
      }
    }
    auto a = link_end_entity(topo, path[i], true);
    auto b = link_end_entity(topo, path[i], false);
    std::string key = "link:";
    key.append(a).append("|").append(b);
    hops.push_back({HopKind::link, path[i], topology::kNoNode, {std::move(a), std::move(b)}, std::move(key)});
  }
  return hops;
}

}  // namespace hsns::diagnose
