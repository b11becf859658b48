#include "scheduling/cost/route_planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "scheduling/cost/roce_sport.h"

namespace hsns::cost {

namespace {

tl::expected<void, std::string> check_demands(const ClosFabric& f, const std::vector<FlowDemand>& demands) {
  if (auto ok = validate(f); !ok) return ok;
  std::set<std::pair<IpAddress, IpAddress>> seen;
  for (std::size_t i = 0; i < demands.size(); ++i) {
    const auto& d = demands[i];
    const std::string where = "demands[" + std::to_string(i) + "]";
    if (d.src_leaf >= f.leaves || d.dst_leaf >= f.leaves) {
      return tl::unexpected(where + ": leaf outside the fabric (" + std::to_string(f.leaves) + " leaves)");
    }
    if (d.qps == 0) return tl::unexpected(where + ": qps must be >= 1");
    if (d.src_ip.family() != d.dst_ip.family()) {
      return tl::unexpected(where + ": source and destination IP families differ");
    }
    if (d.src_ip == d.dst_ip) return tl::unexpected(where + ": source and destination IP are the same");
    if (!seen.insert({d.src_ip, d.dst_ip}).second) {
      return tl::unexpected(where + ": duplicate pair " + d.src_ip.to_string() + "," + d.dst_ip.to_string());
    }
  }
  return {};
}

// Per-group load tables. Groups with exactly the same member demands are merged (a ring's 2(n-1)
// phases become one group), so the planner's work does not grow with the number of phases.
struct Loads {
  std::vector<std::vector<std::size_t>> of_demand;  // canonical groups of each demand, sorted, unique
  std::vector<std::vector<std::uint32_t>> up;       // [group][global uplink]
  std::vector<std::vector<std::uint32_t>> down;     // [group][global downlink]
};

std::vector<std::uint32_t> groups_of(const FlowDemand& d) {
  return d.groups.empty() ? std::vector<std::uint32_t>{0} : d.groups;
}

RoutePlan empty_plan(const ClosFabric& f, const std::vector<FlowDemand>& demands, Loads& loads) {
  RoutePlan plan;
  const std::size_t links = static_cast<std::size_t>(f.leaves) * f.uplinks_per_leaf;
  std::map<std::uint32_t, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < demands.size(); ++i) {
    plan.flows.push_back(PlannedFlow{demands[i], {}, {}, {}});
    for (std::uint32_t g : groups_of(demands[i])) {
      auto& m = members[g];
      if (m.empty() || m.back() != i) m.push_back(i);
    }
  }
  std::map<std::vector<std::size_t>, std::size_t> canonical;
  loads.of_demand.assign(demands.size(), {});
  for (const auto& [g, m] : members) {
    auto [it, added] = canonical.emplace(m, canonical.size());
    if (added) {
      loads.up.emplace_back(links, 0);
      loads.down.emplace_back(links, 0);
    }
    for (std::size_t i : m) loads.of_demand[i].push_back(it->second);
  }
  std::vector<std::vector<std::uint32_t>> out(loads.up.size(), std::vector<std::uint32_t>(f.leaves, 0));
  std::vector<std::vector<std::uint32_t>> in = out;
  for (std::size_t i = 0; i < demands.size(); ++i) {
    auto& gs = loads.of_demand[i];
    std::sort(gs.begin(), gs.end());
    gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
    const auto& d = demands[i];
    if (d.src_leaf == d.dst_leaf) continue;
    for (std::size_t g : gs) {
      out[g][d.src_leaf] += d.qps;
      in[g][d.dst_leaf] += d.qps;
    }
  }
  const std::uint32_t u = f.uplinks_per_leaf;
  for (std::size_t g = 0; g < out.size(); ++g) {
    for (std::uint32_t l = 0; l < f.leaves; ++l) {
      plan.lower_bound = std::max({plan.lower_bound, (out[g][l] + u - 1) / u, (in[g][l] + u - 1) / u});
    }
  }
  plan.uplink_load.assign(links, 0);
  plan.downlink_load.assign(links, 0);
  return plan;
}

FiveTuple tuple_of(const FlowDemand& d, std::uint16_t port) {
  return FiveTuple{d.src_ip, d.dst_ip, port, kRoceUdpDstPort, 17};
}

void place(const ClosFabric& f, Loads& loads, std::size_t index, PlannedFlow& pf, std::uint16_t port) {
  pf.src_ports.push_back(port);
  if (pf.demand.src_leaf == pf.demand.dst_leaf) return;
  const FabricHop hop = route_inter_leaf(f, tuple_of(pf.demand, port));
  const std::uint32_t up = uplink_index(f, pf.demand.src_leaf, hop);
  const std::uint32_t down = downlink_index(f, pf.demand.dst_leaf, hop);
  pf.uplinks.push_back(up);
  pf.downlinks.push_back(down);
  for (std::size_t g : loads.of_demand[index]) {
    ++loads.up[g][up];
    ++loads.down[g][down];
  }
}

void finish(RoutePlan& plan, const Loads& loads) {
  for (std::size_t g = 0; g < loads.up.size(); ++g) {
    for (std::size_t l = 0; l < plan.uplink_load.size(); ++l) {
      plan.uplink_load[l] = std::max(plan.uplink_load[l], loads.up[g][l]);
      plan.downlink_load[l] = std::max(plan.downlink_load[l], loads.down[g][l]);
    }
  }
  plan.max_uplink_load = *std::max_element(plan.uplink_load.begin(), plan.uplink_load.end());
  plan.max_downlink_load = *std::max_element(plan.downlink_load.begin(), plan.downlink_load.end());
}

std::uint32_t min_load(const std::vector<std::uint32_t>& load, std::size_t first, std::size_t count) {
  return *std::min_element(load.begin() + static_cast<std::ptrdiff_t>(first),
                           load.begin() + static_cast<std::ptrdiff_t>(first + count));
}

// Best candidate port for one more sub-flow of `pf`.
std::uint16_t best_port(const ClosFabric& f, const Loads& loads, std::size_t index, const PlannedFlow& pf,
                        PortRange range) {
  const auto& d = pf.demand;
  const std::size_t per_leaf = f.uplinks_per_leaf;
  const std::vector<std::size_t>& gs = loads.of_demand[index];
  std::vector<std::uint32_t> up_floor;
  std::vector<std::uint32_t> down_floor;
  for (std::size_t g : gs) {
    up_floor.push_back(min_load(loads.up[g], d.src_leaf * per_leaf, per_leaf));
    down_floor.push_back(min_load(loads.down[g], d.dst_leaf * per_leaf, per_leaf));
  }
  std::pair<std::uint32_t, std::uint32_t> best_cost{~0u, ~0u};
  std::uint16_t best = range.first;
  for (std::uint32_t p = range.first; p <= range.last; ++p) {
    const auto port = static_cast<std::uint16_t>(p);
    if (std::find(pf.src_ports.begin(), pf.src_ports.end(), port) != pf.src_ports.end()) continue;
    const FabricHop hop = route_inter_leaf(f, tuple_of(d, port));
    const std::uint32_t ui = uplink_index(f, d.src_leaf, hop);
    const std::uint32_t di = downlink_index(f, d.dst_leaf, hop);
    std::pair<std::uint32_t, std::uint32_t> cost{0, 0};
    bool at_floor = true;
    for (std::size_t k = 0; k < gs.size(); ++k) {
      const std::uint32_t up = loads.up[gs[k]][ui];
      const std::uint32_t down = loads.down[gs[k]][di];
      cost.first = std::max(cost.first, std::max(up, down) + 1);
      cost.second += up + down;
      at_floor = at_floor && up == up_floor[k] && down == down_floor[k];
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = port;
    }
    if (at_floor) break;
  }
  return best;
}

std::uint16_t lowest_free_port(const PlannedFlow& pf, PortRange range) {
  for (std::uint32_t p = range.first; p <= range.last; ++p) {
    const auto port = static_cast<std::uint16_t>(p);
    if (std::find(pf.src_ports.begin(), pf.src_ports.end(), port) == pf.src_ports.end()) return port;
  }
  return range.first;  // unreachable: the range holds at least qps ports
}

}  // namespace

tl::expected<RoutePlan, std::string> plan_routes(const ClosFabric& f, const std::vector<FlowDemand>& demands,
                                                 PortRange range) {
  if (auto ok = check_demands(f, demands); !ok) return tl::unexpected(ok.error());
  if (range.first > range.last) return tl::unexpected(std::string("port range: first > last"));
  const std::uint32_t span = static_cast<std::uint32_t>(range.last) - range.first + 1;
  Loads loads;
  RoutePlan plan = empty_plan(f, demands, loads);
  std::vector<std::size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = demands[a];
    const auto& y = demands[b];
    return std::tie(x.src_leaf, x.dst_leaf, x.src_ip, x.dst_ip) <
           std::tie(y.src_leaf, y.dst_leaf, y.src_ip, y.dst_ip);
  });
  for (std::size_t i : order) {
    PlannedFlow& pf = plan.flows[i];
    if (pf.demand.qps > span) {
      return tl::unexpected("demands[" + std::to_string(i) + "]: qps " + std::to_string(pf.demand.qps) +
                            " exceeds the " + std::to_string(span) + " ports of the candidate range");
    }
    const bool inter = pf.demand.src_leaf != pf.demand.dst_leaf;
    for (std::uint32_t q = 0; q < pf.demand.qps; ++q) {
      place(f, loads, i, pf, inter ? best_port(f, loads, i, pf, range) : lowest_free_port(pf, range));
    }
  }
  finish(plan, loads);
  return plan;
}

tl::expected<RoutePlan, std::string> route_with_ports(const ClosFabric& f,
                                                      const std::vector<FlowDemand>& demands,
                                                      const std::vector<std::vector<std::uint16_t>>& ports) {
  if (auto ok = check_demands(f, demands); !ok) return tl::unexpected(ok.error());
  if (ports.size() != demands.size()) {
    return tl::unexpected(std::string("ports: one list per demand is required"));
  }
  Loads loads;
  RoutePlan plan = empty_plan(f, demands, loads);
  for (std::size_t i = 0; i < demands.size(); ++i) {
    if (ports[i].size() != demands[i].qps) {
      return tl::unexpected("ports[" + std::to_string(i) + "]: expected " + std::to_string(demands[i].qps) +
                            " ports (one per QP)");
    }
    for (std::uint16_t p : ports[i]) place(f, loads, i, plan.flows[i], p);
  }
  finish(plan, loads);
  return plan;
}

std::vector<std::vector<std::uint16_t>> kernel_default_ports(const std::vector<FlowDemand>& demands,
                                                             std::uint64_t seed) {
  std::uint64_t state = seed;
  auto next = [&state]() {  // splitmix64
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<std::vector<std::uint16_t>> out;
  out.reserve(demands.size());
  for (const auto& d : demands) {
    std::vector<std::uint16_t> ports;
    for (std::uint32_t q = 0; q < d.qps; ++q) {
      const auto lqpn = static_cast<std::uint32_t>(next() % 0xFFFFFE) + 1;  // QPNs 1..0xFFFFFE
      const auto rqpn = static_cast<std::uint32_t>(next() % 0xFFFFFE) + 1;
      ports.push_back(roce_udp_sport(lqpn, rqpn));
    }
    out.push_back(std::move(ports));
  }
  return out;
}

std::string export_multiqp_cfg(const RoutePlan& plan) {
  std::string out;
  for (const auto& pf : plan.flows) {
    out += pf.demand.src_ip.to_string() + "," + pf.demand.dst_ip.to_string() + "=";
    for (std::size_t i = 0; i < pf.src_ports.size(); ++i) {
      if (i > 0) out += ",";
      out += std::to_string(pf.src_ports[i]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace hsns::cost
