#include "scheduling/cost/route_planner.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>
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
  // Member demands per group id (hashed: a ring of n ranks has 2(n-1) groups of n demands each).
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < demands.size(); ++i) {
    plan.flows.push_back(PlannedFlow{demands[i], {}, {}, {}});
    for (std::uint32_t g : groups_of(demands[i])) {
      auto& m = members[g];
      if (m.empty() || m.back() != i) m.push_back(i);
    }
  }
  std::vector<std::uint32_t> ids;
  ids.reserve(members.size());
  for (const auto& entry : members) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());  // canonical groups numbered in ascending group id order
  std::map<std::vector<std::size_t>, std::size_t> canonical;
  loads.of_demand.assign(demands.size(), {});
  for (std::uint32_t g : ids) {
    const auto& m = members.at(g);
    auto it = canonical.find(m);
    if (it == canonical.end()) {
      it = canonical.emplace(m, canonical.size()).first;
      loads.up.emplace_back(links, 0);
      loads.down.emplace_back(links, 0);
    }
    for (std::size_t i : m) {
      auto& gs = loads.of_demand[i];
      if (gs.empty() || gs.back() != it->second) gs.push_back(it->second);  // merged groups repeat
    }
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

// Records one sub-flow of demand `index` on `port`; inter-leaf sub-flows cross `hop`.
void place_on(const ClosFabric& f, Loads& loads, std::size_t index, PlannedFlow& pf, std::uint16_t port,
              const FabricHop& hop) {
  pf.src_ports.push_back(port);
  if (pf.demand.src_leaf == pf.demand.dst_leaf) return;
  const std::uint32_t up = uplink_index(f, pf.demand.src_leaf, hop);
  const std::uint32_t down = downlink_index(f, pf.demand.dst_leaf, hop);
  pf.uplinks.push_back(up);
  pf.downlinks.push_back(down);
  for (std::size_t g : loads.of_demand[index]) {
    ++loads.up[g][up];
    ++loads.down[g][down];
  }
}

void place(const ClosFabric& f, Loads& loads, std::size_t index, PlannedFlow& pf, std::uint16_t port) {
  const bool inter = pf.demand.src_leaf != pf.demand.dst_leaf;
  place_on(f, loads, index, pf, port, inter ? route_inter_leaf(f, tuple_of(pf.demand, port)) : FabricHop{});
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

bool same_model(const EcmpHashModel& a, const EcmpHashModel& b) {
  const auto fields = [](const HashFields& f) {
    return std::array<bool, 5>{f.src_ip, f.dst_ip, f.src_port, f.dst_port, f.protocol};
  };
  return a.function == b.function && a.seed == b.seed && fields(a.fields) == fields(b.fields);
}

// The candidate source ports of one demand, grouped by class: the (uplink, parallel downlink) pair a
// port hashes to. A port's cost depends only on its class, so the greedy choice "lowest port of least
// cost" is "the lowest unused port of the cheapest class". Ports are hashed lazily in ascending order
// (SourcePortHasher: one full hash per demand, two table look-ups per port) and only as far as needed:
// once a class of the least cost any class can have holds an unused port, or every class does, no
// later port can win. Ports of a class are taken in ascending order, so its unused ports are a suffix.
class DemandPorts {
 public:
  DemandPorts(const ClosFabric& f, PortRange range)
      : uplinks_(f.uplinks_per_leaf),
        parallel_(f.parallel_links()),
        range_(range),
        ports_(uplinks_ * parallel_),
        head_(ports_.size(), 0),
        possible_(ports_.size(), 1) {
    // With the same model at leaves and spines both hashes are equal, so the uplink (h mod uplinks) and
    // the parallel link (h mod parallel) agree modulo their gcd: the other classes hold no port. Knowing
    // it spares a scan of the whole range whenever the cheapest class is one of them.
    if (same_model(f.leaf_hash, f.spine_hash) && parallel_ > 1) {
      const std::uint32_t g = std::gcd(uplinks_, parallel_);
      for (std::size_t c = 0; c < ports_.size(); ++c) possible_[c] = uplink_of(c) % g == downlink_of(c) % g;
    }
    reads_port_ = f.leaf_hash.fields.src_port || (parallel_ > 1 && f.spine_hash.fields.src_port);
    possible_count_ = static_cast<std::size_t>(std::count(possible_.begin(), possible_.end(), 1));
  }

  std::size_t classes() const { return ports_.size(); }
  std::uint32_t uplink_of(std::size_t c) const { return static_cast<std::uint32_t>(c / parallel_); }
  std::uint32_t downlink_of(std::size_t c) const { return static_cast<std::uint32_t>(c % parallel_); }

  void start(const SourcePortHasher& leaf, const SourcePortHasher& spine, const FiveTuple& tuple) {
    for (auto& v : ports_) v.clear();
    std::fill(head_.begin(), head_.end(), 0);
    leaf_ = &leaf;
    spine_ = &spine;
    leaf_base_ = leaf.base(tuple);
    spine_base_ = parallel_ > 1 ? spine.base(tuple) : 0;
    next_ = range_.first;
    available_ = 0;
  }

  bool possible(std::size_t c) const { return possible_[c] != 0; }
  bool available(std::size_t c) const { return head_[c] < ports_[c].size(); }
  std::uint16_t lowest(std::size_t c) const { return ports_[c][head_[c]]; }
  // Every class that can hold a port holds an unused one already scanned.
  bool all_available() const { return available_ == (reads_port_ ? possible_count_ : 1); }
  bool exhausted() const { return next_ > range_.last; }

  // Hashes the next port; returns its class, or classes() when the range is exhausted.
  std::size_t scan() {
    if (exhausted()) return ports_.size();
    const auto port = static_cast<std::uint16_t>(next_++);
    const std::uint32_t up = leaf_->with_port(leaf_base_, port) % uplinks_;
    const std::uint32_t down = parallel_ > 1 ? spine_->with_port(spine_base_, port) % parallel_ : 0;
    const std::size_t c = static_cast<std::size_t>(up) * parallel_ + down;
    if (!available(c)) ++available_;
    ports_[c].push_back(port);
    return c;
  }

  void take(std::size_t c) {
    ++head_[c];
    if (!available(c)) --available_;
  }

 private:
  std::uint32_t uplinks_;
  std::uint32_t parallel_;
  PortRange range_;
  std::vector<std::vector<std::uint16_t>> ports_;
  std::vector<std::size_t> head_;
  std::vector<char> possible_;  // classes some port can hash to (every class unless proven otherwise)
  std::size_t possible_count_ = 0;
  bool reads_port_ = true;  // false: every port of a pair hashes to the same class
  const SourcePortHasher* leaf_ = nullptr;
  const SourcePortHasher* spine_ = nullptr;
  std::uint32_t leaf_base_ = 0;
  std::uint32_t spine_base_ = 0;
  std::uint32_t next_ = 0;
  std::size_t available_ = 0;
};

using Cost = std::pair<std::uint32_t, std::uint32_t>;  // (max load after placement, sum of loads)

// The class of the next sub-flow of demand `index`: among all ports not yet used by the pair, the lowest
// one minimising the cost (max over the demand's groups of max(uplink, downlink load) + 1, then the sum of
// both loads over its groups). `cost` is scratch space.
std::size_t best_class(const ClosFabric& f, const Loads& loads, std::size_t index, const FlowDemand& d,
                       DemandPorts& ports, std::vector<Cost>& cost) {
  const std::vector<std::size_t>& gs = loads.of_demand[index];
  cost.assign(ports.classes(), Cost{0, 0});
  Cost floor{~0u, ~0u};
  for (std::size_t c = 0; c < ports.classes(); ++c) {
    const std::uint32_t u = ports.uplink_of(c);
    const FabricHop hop{u, u % f.spines, ports.downlink_of(c)};
    const std::uint32_t ui = uplink_index(f, d.src_leaf, hop);
    const std::uint32_t di = downlink_index(f, d.dst_leaf, hop);
    for (std::size_t g : gs) {
      const std::uint32_t up = loads.up[g][ui];
      const std::uint32_t down = loads.down[g][di];
      cost[c].first = std::max(cost[c].first, std::max(up, down) + 1);
      cost[c].second += up + down;
    }
    if (ports.possible(c)) floor = std::min(floor, cost[c]);
  }
  std::size_t best = ports.classes();
  auto consider = [&](std::size_t c) {
    if (best == ports.classes() || cost[c] < cost[best] ||
        (cost[c] == cost[best] && ports.lowest(c) < ports.lowest(best))) {
      best = c;
    }
  };
  for (std::size_t c = 0; c < ports.classes(); ++c) {
    if (ports.available(c)) consider(c);
  }
  while (!(best != ports.classes() && cost[best] == floor) && !ports.all_available()) {
    const std::size_t c = ports.scan();
    if (c == ports.classes()) break;  // range exhausted: every port has been seen
    consider(c);                      // a no-op unless c just became available
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
  // Source-port hashers per address family (index 0: IPv4, 1: IPv6), built on first use.
  std::array<std::optional<SourcePortHasher>, 2> leaf_hasher, spine_hasher;
  DemandPorts ports(f, range);
  std::vector<Cost> cost;
  for (std::size_t i : order) {
    PlannedFlow& pf = plan.flows[i];
    if (pf.demand.qps > span) {
      return tl::unexpected("demands[" + std::to_string(i) + "]: qps " + std::to_string(pf.demand.qps) +
                            " exceeds the " + std::to_string(span) + " ports of the candidate range");
    }
    if (pf.demand.src_leaf == pf.demand.dst_leaf) {
      for (std::uint32_t q = 0; q < pf.demand.qps; ++q) place(f, loads, i, pf, lowest_free_port(pf, range));
      continue;
    }
    const IpFamily family = pf.demand.src_ip.family();
    const std::size_t fi = family == IpFamily::v4 ? 0 : 1;
    if (!leaf_hasher[fi]) {
      leaf_hasher[fi].emplace(f.leaf_hash, family);
      spine_hasher[fi].emplace(f.spine_hash, family);
    }
    ports.start(*leaf_hasher[fi], *spine_hasher[fi], tuple_of(pf.demand, 0));
    for (std::uint32_t q = 0; q < pf.demand.qps; ++q) {
      const std::size_t c = best_class(f, loads, i, pf.demand, ports, cost);
      const std::uint32_t u = ports.uplink_of(c);
      place_on(f, loads, i, pf, ports.lowest(c), FabricHop{u, u % f.spines, ports.downlink_of(c)});
      ports.take(c);
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
