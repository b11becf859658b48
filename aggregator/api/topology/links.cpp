#include "api/topology/links.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "http/json_io.h"

namespace hsns::topology_api {
namespace topo = hsns::topology;
namespace {

using nlohmann::json;
namespace bhttp = boost::beast::http;

constexpr std::array<topo::Tier, 4> kTiers = {topo::Tier::kHost, topo::Tier::kLeaf, topo::Tier::kSpine,
                                              topo::Tier::kCore};
constexpr std::array<topo::DeviceState, 4> kStates = {
    topo::DeviceState::kHealthy, topo::DeviceState::kAllocated, topo::DeviceState::kSubHealth,
    topo::DeviceState::kIsolated};

int tier_code(topo::Tier t) {
  for (std::size_t i = 0; i < kTiers.size(); ++i) {
    if (kTiers[i] == t) return static_cast<int>(i);
  }
  return 0;
}

int state_code(topo::DeviceState s) {
  for (std::size_t i = 0; i < kStates.size(); ++i) {
    if (kStates[i] == s) return static_cast<int>(i);
  }
  return 0;
}

}  // namespace

std::size_t tier_index(topo::Tier tier) {
  return static_cast<std::size_t>(tier_code(tier));
}

// The `upper` filter: which upper tiers to keep (all when absent).
tl::expected<UpperFilter, Problem> parse_upper_filter(const http::RequestContext& ctx) {
  const auto text = ctx.query("upper");
  if (!text) return std::array<bool, 4>{true, true, true, true};
  std::array<bool, 4> keep{};
  std::string_view rest = *text;
  bool any = false;
  for (;;) {
    const auto comma = rest.find(',');
    const auto item = rest.substr(0, comma);
    int code = -1;
    for (const auto t : {topo::Tier::kLeaf, topo::Tier::kSpine, topo::Tier::kCore}) {
      if (item == topo::to_string(t)) code = tier_code(t);
    }
    if (code < 0) {
      return tl::unexpected(
          Problem::invalid("upper", "must list tiers among leaf, spine, core (comma-separated), got \"" +
                                        std::string(item.substr(0, 32)) + "\""));
    }
    keep[static_cast<std::size_t>(code)] = true;
    any = true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!any) return tl::unexpected(Problem::invalid("upper", "names no tier"));
  return keep;
}

namespace {

http::Response links(services::TopologyCache& cache, http::RequestContext& ctx) {
  if (auto bad = http::check_query(ctx, {"upper"})) return http::problem(ctx, *bad);
  const auto keep = parse_upper_filter(ctx);
  if (!keep) return http::problem(ctx, keep.error());
  auto snapshot = cache.current();
  if (!snapshot) return http::problem(ctx, snapshot.error());
  const auto& t = *snapshot->topology;
  const auto& nodes = t.nodes();
  const bool has_spines = t.top_tier() >= topo::Tier::kSpine;

  json names = json::array();
  json tiers = json::array();
  json states = json::array();
  json sus = json::array();
  json pods = json::array();
  for (const auto& n : nodes) {
    names.push_back(n.name);
    tiers.push_back(tier_code(n.tier));
    states.push_back(state_code(n.state));
    // A device's SU and super-pod are its hosts' (the first host under it: a leaf's hosts share one SU).
    std::int64_t su = -1;
    std::int64_t pod = -1;
    const auto under = t.hosts_under(n.id);
    if (!under.empty() && n.tier != topo::Tier::kCore) {
      if (n.tier == topo::Tier::kHost || n.tier == topo::Tier::kLeaf)
        su = t.domain(under.front(), topo::Tier::kLeaf);
      if (has_spines) pod = t.domain(under.front(), topo::Tier::kSpine);
    }
    sus.push_back(su);
    pods.push_back(pod);
  }

  std::unordered_map<std::string, std::size_t> port_index;
  json ports = json::array();
  auto port = [&](const std::string& name) {
    auto [it, added] = port_index.try_emplace(name, port_index.size());
    if (added) ports.push_back(name);
    return it->second;
  };
  json lower = json::array();
  json upper = json::array();
  json lower_port = json::array();
  json upper_port = json::array();
  json gbps = json::array();
  json link_states = json::array();
  json npus = json::array();
  for (const auto& link : t.links()) {
    if (!(*keep)[static_cast<std::size_t>(tier_code(nodes[link.upper].tier))]) continue;
    lower.push_back(link.lower);
    upper.push_back(link.upper);
    lower_port.push_back(port(link.lower_port));
    upper_port.push_back(port(link.upper_port));
    gbps.push_back(link.bandwidth_gbps);
    link_states.push_back(state_code(link.state));
    npus.push_back(link.npu ? static_cast<std::int64_t>(*link.npu) : -1);
  }

  json tier_names = json::array();
  for (const auto tier : kTiers) tier_names.push_back(std::string(topo::to_string(tier)));
  json state_names = json::array();
  for (const auto state : kStates) state_names.push_back(std::string(topo::to_string(state)));
  const json body = {{"revision", snapshot->revision},
                     {"name", t.name()},
                     {"tiers", std::move(tier_names)},
                     {"states", std::move(state_names)},
                     {"ports", std::move(ports)},
                     {"devices",
                      {{"name", std::move(names)},
                       {"tier", std::move(tiers)},
                       {"state", std::move(states)},
                       {"su", std::move(sus)},
                       {"pod", std::move(pods)}}},
                     {"links",
                      {{"lower", std::move(lower)},
                       {"upper", std::move(upper)},
                       {"lower_port", std::move(lower_port)},
                       {"upper_port", std::move(upper_port)},
                       {"gbps", std::move(gbps)},
                       {"state", std::move(link_states)},
                       {"npu", std::move(npus)}}},
                     {"total_links", t.links().size()}};
  return http::json_ok(ctx, body);
}

}  // namespace

void register_links_route(http::Router& router, std::shared_ptr<services::TopologyCache> cache) {
  router.add(
      bhttp::verb::get, "/api/v1/topology/links", http::permits(http::Permission::read),
      [cache = std::move(cache)](http::RequestContext& ctx) { return links(*cache, ctx); },
      http::Cost::heavy);
}

}  // namespace hsns::topology_api
