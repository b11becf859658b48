#include "api/topology/layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "http/json_io.h"

namespace hsns::topology_api {
namespace topo = hsns::topology;
namespace {

using nlohmann::json;
namespace bhttp = boost::beast::http;

constexpr double kSuWidth = 4.0;   // a collapsed SU's slot along x
constexpr double kHostRows = 4.0;  // an expanded SU lays its hosts out in this many rows
constexpr double kRowStep = 0.22;  // between those rows

int severity(topo::DeviceState s) {
  switch (s) {
    case topo::DeviceState::kIsolated:
      return 3;
    case topo::DeviceState::kSubHealth:
      return 2;
    case topo::DeviceState::kAllocated:
      return 1;
    case topo::DeviceState::kHealthy:
      return 0;
  }
  return 0;
}

struct Group {
  std::string id;
  std::string kind;
  std::string label;
  std::vector<topo::NodeId> members;  // switches and hosts, ascending id
  std::uint32_t hosts = 0;
  std::uint32_t npus = 0;
  std::map<std::string, std::uint32_t> states;
  topo::DeviceState worst = topo::DeviceState::kHealthy;
  std::optional<std::uint32_t> pod;
  double x = 0;
  double y = 0;
  bool expanded = false;

  void count(const topo::Node& n) {
    ++states[std::string(topo::to_string(n.state))];
    if (severity(n.state) > severity(worst)) worst = n.state;
  }
};

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    auto item = text.substr(0, comma);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

http::Response layout(services::TopologyCache& cache, http::RequestContext& ctx) {
  if (auto bad = http::check_query(ctx, {"expand", "locate"})) return http::problem(ctx, *bad);
  const auto expand_list = split_list(ctx.query("expand").value_or(""));
  const auto locate_list = split_list(ctx.query("locate").value_or(""));
  if (expand_list.size() > kMaxExpand) {
    return http::problem(
        ctx, Problem::invalid("expand", "names at most " + std::to_string(kMaxExpand) + " groups"));
  }
  if (locate_list.size() > kMaxLocate) {
    return http::problem(
        ctx, Problem::invalid("locate", "names at most " + std::to_string(kMaxLocate) + " hosts"));
  }
  auto snapshot = cache.current();
  if (!snapshot) return http::problem(ctx, snapshot.error());
  const auto& t = *snapshot->topology;
  const auto& nodes = t.nodes();

  // Membership: node -> group index.
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> group_index;
  auto group_for = [&](const std::string& id, const std::string& kind, const std::string& label) {
    auto [it, added] = group_index.try_emplace(id, groups.size());
    if (added)
      groups.push_back(Group{id, kind, label, {}, 0, 0, {}, topo::DeviceState::kHealthy, {}, 0, 0, false});
    return it->second;
  };
  std::vector<std::size_t> member_of(nodes.size(), SIZE_MAX);
  std::vector<std::optional<std::uint32_t>> rail(nodes.size());
  // SUs first, in domain order, so group order (and x) follows the fabric.
  for (std::uint32_t su = 0; su < t.domain_count(topo::Tier::kLeaf); ++su) {
    const auto g = group_for("su:" + std::to_string(su), "su", "SU " + std::to_string(su));
    const auto hosts = t.domain_hosts(topo::Tier::kLeaf, su);
    if (!hosts.empty() && t.top_tier() >= topo::Tier::kSpine)
      groups[g].pod = t.domain(hosts.front(), topo::Tier::kSpine);
  }
  // SU domain -> group (the SU groups were made first, in domain order).
  std::vector<std::size_t> su_group(t.domain_count(topo::Tier::kLeaf));
  for (std::uint32_t su = 0; su < su_group.size(); ++su)
    su_group[su] = group_index.at("su:" + std::to_string(su));
  for (const auto host : t.hosts()) {
    const auto g = su_group.at(t.domain(host, topo::Tier::kLeaf));
    member_of[host] = g;
    groups[g].hosts += 1;
    groups[g].npus += static_cast<std::uint32_t>(nodes[host].npus.size());
  }
  for (const auto leaf : t.switches(topo::Tier::kLeaf)) {
    const auto under = t.hosts_under(leaf);
    if (under.empty()) {
      member_of[leaf] = group_for("su:none", "su", "leaves without hosts");
    } else {
      member_of[leaf] = su_group.at(t.domain(under.front(), topo::Tier::kLeaf));
    }
    rail[leaf] = leaf_rail(t, nodes[leaf]);
  }
  for (const auto spine : t.switches(topo::Tier::kSpine)) {
    const auto under = t.hosts_under(spine);
    const std::string pod =
        under.empty() ? "none" : std::to_string(t.domain(under.front(), topo::Tier::kSpine));
    const auto g = group_for("spines:" + pod, "spine-group", "spines of pod " + pod);
    if (!under.empty()) groups[g].pod = t.domain(under.front(), topo::Tier::kSpine);
    member_of[spine] = g;
  }
  for (const auto core : t.switches(topo::Tier::kCore)) member_of[core] = group_for("core", "core", "core");
  for (topo::NodeId id = 0; id < nodes.size(); ++id) {
    if (member_of[id] == SIZE_MAX) continue;
    groups[member_of[id]].members.push_back(id);
    groups[member_of[id]].count(nodes[id]);
  }

  const bool expand_all = std::find(expand_list.begin(), expand_list.end(), "all") != expand_list.end();
  for (const auto& id : expand_list) {
    if (id == "all") continue;
    const auto it = group_index.find(id);
    if (it == group_index.end()) {
      return http::problem(
          ctx, Problem::invalid("expand", "names no group of this topology: " + id.substr(0, 64)));
    }
    groups[it->second].expanded = true;
  }
  if (expand_all) {
    for (auto& g : groups) g.expanded = g.kind != "core";
  }
  json located = json::object();
  for (const auto& name : locate_list) {
    const auto id = t.find(name);
    if (!id || nodes[*id].tier != topo::Tier::kHost) {
      return http::problem(
          ctx, Problem::invalid("locate", "names no host of this topology: " + name.substr(0, 64)));
    }
    located[name] = groups[member_of[*id]].id;
  }

  // Positions. SUs side by side (an expanded one as wide as its members need); spine groups above the
  // SUs of their pod; the core above everything; rails in a row below.
  std::vector<double> node_x(nodes.size(), 0.0);
  std::vector<double> node_y(nodes.size(), 0.0);
  double cursor = 0;
  std::map<std::uint32_t, std::pair<double, double>> pod_span;  // pod -> [first x, last x]
  for (auto& g : groups) {
    if (g.kind != "su") continue;
    std::vector<topo::NodeId> leaves;
    std::vector<topo::NodeId> hosts;
    for (const auto m : g.members) (nodes[m].tier == topo::Tier::kLeaf ? leaves : hosts).push_back(m);
    std::stable_sort(leaves.begin(), leaves.end(), [&](auto a, auto b) { return rail[a] < rail[b]; });
    const double per_row = std::ceil(static_cast<double>(hosts.size()) / kHostRows);
    const double width =
        g.expanded ? std::max({kSuWidth, static_cast<double>(leaves.size()), per_row}) : kSuWidth;
    g.x = cursor + width / 2;
    g.y = 2;
    if (g.expanded) {
      for (std::size_t i = 0; i < leaves.size(); ++i) {
        node_x[leaves[i]] =
            cursor + (static_cast<double>(i) + 0.5) * width / static_cast<double>(leaves.size());
        node_y[leaves[i]] = 2;
      }
      for (std::size_t i = 0; i < hosts.size(); ++i) {
        const std::size_t column = i / static_cast<std::size_t>(kHostRows);  // whole columns of hosts
        const auto col = static_cast<double>(column);
        const auto row = static_cast<double>(i % static_cast<std::size_t>(kHostRows));
        node_x[hosts[i]] = cursor + (col + 0.5) * width / std::max(1.0, per_row);
        node_y[hosts[i]] = 3 + row * kRowStep;
      }
    }
    if (g.pod) {
      auto [it, added] = pod_span.try_emplace(*g.pod, cursor, cursor + width);
      if (!added) it->second.second = cursor + width;
    }
    cursor += width + 1;
  }
  const double fabric_width = std::max(cursor - 1, kSuWidth);
  for (auto& g : groups) {
    if (g.kind == "spine-group") {
      const auto span =
          g.pod && pod_span.contains(*g.pod) ? pod_span.at(*g.pod) : std::pair{0.0, fabric_width};
      g.x = (span.first + span.second) / 2;
      g.y = 1;
      if (g.expanded) {
        for (std::size_t i = 0; i < g.members.size(); ++i) {
          node_x[g.members[i]] = span.first + (static_cast<double>(i) + 0.5) * (span.second - span.first) /
                                                  static_cast<double>(g.members.size());
          node_y[g.members[i]] = 1;
        }
      }
    } else if (g.kind == "core") {
      g.x = fabric_width / 2;
      g.y = 0;
    }
  }

  // Rails: the leaves of each rail, and per SU the host links of that rail (the rail x SU matrix).
  std::map<std::uint32_t, json> rails;
  for (const auto leaf : t.switches(topo::Tier::kLeaf)) {
    if (!rail[leaf]) continue;
    auto& r = rails[*rail[leaf]];
    if (r.is_null())
      r = json{{"id", "rail:" + std::to_string(*rail[leaf])},
               {"rail", *rail[leaf]},
               {"leaves", 0},
               {"npu_links", json::object()},
               {"worst_state", "healthy"}};
    r["leaves"] = r["leaves"].get<int>() + 1;
    auto& per_su = r["npu_links"][groups[member_of[leaf]].id];
    per_su = (per_su.is_null() ? 0 : per_su.get<int>()) + static_cast<int>(nodes[leaf].downlinks.size());
    if (severity(nodes[leaf].state) > severity(*topo::parse_state(r["worst_state"].get<std::string>()))) {
      r["worst_state"] = std::string(topo::to_string(nodes[leaf].state));
    }
  }

  // What is drawn: a node per member of an expanded group, a node per other group. Links are summed per
  // pair of drawn keys (a node id, or the node count + a group index: integers, so the per-link work of a
  // 100,000-link fabric allocates nothing), then named and ordered by name.
  auto drawn_key = [&](topo::NodeId id) -> std::uint64_t {
    const auto g = member_of[id];
    return groups[g].expanded ? id : nodes.size() + g;
  };
  auto drawn_name = [&](std::uint64_t key) -> std::string {
    return key < nodes.size() ? "n:" + nodes[key].name : groups[key - nodes.size()].id;
  };
  struct EdgeSum {
    std::uint32_t links = 0;
    double gbps = 0;
    std::uint32_t unhealthy = 0;
  };
  std::unordered_map<std::uint64_t, EdgeSum> sums;  // key: (lower key << 32) | upper key
  for (const auto& link : t.links()) {
    if (member_of[link.lower] == SIZE_MAX || member_of[link.upper] == SIZE_MAX) continue;
    const auto a = drawn_key(link.lower);
    const auto b = drawn_key(link.upper);
    if (a == b) continue;
    auto& e = sums[(a << 32) | b];
    e.links += 1;
    e.gbps += link.bandwidth_gbps;
    if (link.state != topo::DeviceState::kHealthy) e.unhealthy += 1;
  }
  std::map<std::pair<std::string, std::string>, EdgeSum> edges;
  for (const auto& [key, e] : sums)
    edges.emplace(std::pair{drawn_name(key >> 32), drawn_name(key & 0xffffffffU)}, e);

  json out_groups = json::array();
  json out_nodes = json::array();
  for (const auto& g : groups) {
    json j = {{"id", g.id},
              {"kind", g.kind},
              {"label", g.label},
              {"members", g.members.size()},
              {"hosts", g.hosts},
              {"npus", g.npus},
              {"states", g.states},
              {"worst_state", std::string(topo::to_string(g.worst))},
              {"x", g.x},
              {"y", g.y},
              {"expanded", g.expanded}};
    j["pod"] = g.pod ? json(*g.pod) : json(nullptr);
    out_groups.push_back(std::move(j));
    if (!g.expanded) continue;
    for (const auto m : g.members) {
      const auto& n = nodes[m];
      json node = {{"id", "n:" + n.name},
                   {"name", n.name},
                   {"tier", std::string(topo::to_string(n.tier))},
                   {"group", g.id},
                   {"state", std::string(topo::to_string(n.state))},
                   {"x", node_x[m]},
                   {"y", node_y[m]}};
      if (n.tier == topo::Tier::kHost) node["npus"] = n.npus.size();
      node["rail"] = rail[m] ? json(*rail[m]) : json(nullptr);
      out_nodes.push_back(std::move(node));
    }
  }
  json out_edges = json::array();
  for (const auto& [ends, e] : edges) {
    out_edges.push_back({{"source", ends.first},
                         {"target", ends.second},
                         {"links", e.links},
                         {"gbps", e.gbps},
                         {"unhealthy", e.unhealthy}});
  }
  json out_rails = json::array();
  for (auto& [_, r] : rails) out_rails.push_back(std::move(r));
  std::size_t npus = 0;
  for (const auto h : t.hosts()) npus += nodes[h].npus.size();
  const json body = {{"revision", snapshot->revision},
                     {"name", t.name()},
                     {"hosts", t.hosts().size()},
                     {"npus", npus},
                     {"switches", nodes.size() - t.hosts().size()},
                     {"links", t.links().size()},
                     {"groups", std::move(out_groups)},
                     {"nodes", std::move(out_nodes)},
                     {"edges", std::move(out_edges)},
                     {"rails", std::move(out_rails)},
                     {"located", std::move(located)}};
  return http::json_ok(ctx, body);
}

}  // namespace

std::optional<std::uint32_t> leaf_rail(const topo::Topology& t, const topo::Node& leaf) {
  std::map<std::uint32_t, std::uint32_t> counts;
  for (const auto id : leaf.downlinks) {
    const auto& link = t.link(id);
    if (link.npu) ++counts[*link.npu];
  }
  std::optional<std::uint32_t> best;
  std::uint32_t best_count = 0;
  for (const auto& [rail, n] : counts) {
    if (n > best_count) {
      best = rail;
      best_count = n;
    }
  }
  return best;
}

void register_layout_route(http::Router& router, std::shared_ptr<services::TopologyCache> cache) {
  router.add(
      bhttp::verb::get, "/api/v1/topology/layout", http::permits(http::Permission::read),
      [cache = std::move(cache)](http::RequestContext& ctx) { return layout(*cache, ctx); },
      http::Cost::heavy);
}

}  // namespace hsns::topology_api
