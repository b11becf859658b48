#include "scheduling/cost/collective_flows.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <utility>

#include "hsns/checked_math.h"

namespace hsns::cost {

namespace {

std::string too_many(std::uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + ", more than the " + std::to_string(kMaxCollectiveTransfers) +
         " the simulator accepts";
}

}  // namespace

std::uint64_t ring_all_reduce_transfers(std::uint32_t n) {
  // Saturates near n = 2^32 (where 2(n-1)n passes 2^64): only the comparison with the bound matters there.
  return n < 2 ? 0 : checked_product({2, n - 1u, n}).value_or(UINT64_MAX);
}

std::uint64_t halving_doubling_all_reduce_transfers(std::uint32_t n) {
  return n < 2 ? 0 : 2 * static_cast<std::uint64_t>(std::bit_width(n) - 1) * n;
}

tl::expected<std::vector<TransferPhase>, std::string> ring_all_reduce_phases(std::uint32_t n, double bytes) {
  if (n < 2) return tl::unexpected(std::string("ring all-reduce needs at least 2 ranks"));
  if (!(bytes >= 0)) return tl::unexpected(std::string("bytes must be >= 0"));
  if (const auto total = ring_all_reduce_transfers(n); total > kMaxCollectiveTransfers) {
    return tl::unexpected("ring all-reduce over " + std::to_string(n) +
                          " ranks: " + too_many(total, "transfers"));
  }
  std::vector<TransferPhase> phases(2 * (std::size_t{n} - 1));
  for (auto& phase : phases) {
    phase.reserve(n);
    for (std::uint32_t r = 0; r < n; ++r) phase.push_back(Transfer{r, (r + 1) % n, bytes / n});
  }
  return phases;
}

tl::expected<std::vector<TransferPhase>, std::string> halving_doubling_all_reduce_phases(std::uint32_t n,
                                                                                         double bytes) {
  if (n < 2 || (n & (n - 1)) != 0) {
    return tl::unexpected(std::string("halving-doubling all-reduce needs a power-of-two rank count >= 2"));
  }
  if (!(bytes >= 0)) return tl::unexpected(std::string("bytes must be >= 0"));
  if (const auto total = halving_doubling_all_reduce_transfers(n); total > kMaxCollectiveTransfers) {
    return tl::unexpected("halving-doubling all-reduce over " + std::to_string(n) +
                          " ranks: " + too_many(total, "transfers"));
  }
  std::vector<TransferPhase> rs;
  double chunk = bytes;
  for (std::uint32_t dist = n / 2; dist >= 1; dist /= 2) {
    chunk /= 2;
    TransferPhase phase;
    for (std::uint32_t r = 0; r < n; ++r) phase.push_back(Transfer{r, r ^ dist, chunk});
    rs.push_back(std::move(phase));
  }
  std::vector<TransferPhase> phases = rs;
  phases.insert(phases.end(), rs.rbegin(), rs.rend());
  return phases;
}

tl::expected<std::vector<FlowDemand>, std::string> demands_of(const std::vector<Endpoint>& endpoints,
                                                              const std::vector<TransferPhase>& phases,
                                                              std::uint32_t qps) {
  std::vector<FlowDemand> out;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> seen;
  for (std::uint32_t p = 0; p < phases.size(); ++p) {
    for (const auto& t : phases[p]) {
      if (t.src >= endpoints.size() || t.dst >= endpoints.size()) {
        return tl::unexpected(std::string("transfer references a rank without an endpoint"));
      }
      if (t.src == t.dst) continue;
      auto [it, added] = seen.emplace(std::make_pair(t.src, t.dst), out.size());
      if (added) {
        out.push_back(FlowDemand{
            endpoints[t.src].ip, endpoints[t.dst].ip, endpoints[t.src].leaf, endpoints[t.dst].leaf, qps, {}});
      }
      auto& groups = out[it->second].groups;
      if (groups.empty() || groups.back() != p) groups.push_back(p);
    }
  }
  if (const auto sub = checked_product({out.size(), qps}).value_or(UINT64_MAX);
      sub > kMaxCollectiveTransfers) {
    return tl::unexpected(std::to_string(out.size()) + " rank pairs x " + std::to_string(qps) +
                          " QPs: " + too_many(sub, "sub-flows"));
  }
  return out;
}

tl::expected<PhasedResult, std::string> simulate_collective(const ClosFabric& f,
                                                            const std::vector<Endpoint>& endpoints,
                                                            const std::vector<TransferPhase>& phases,
                                                            const RoutePlan& plan, bool non_blocking) {
  if (auto ok = validate(f); !ok) return tl::unexpected(ok.error());
  // Links: [0, ne) NIC tx, [ne, 2ne) NIC rx, then uplinks, then downlinks. Link ids are 32-bit: each part
  // below a quarter of the range keeps 2 * ne + 2 * fabric_links from wrapping.
  if (endpoints.size() > UINT32_MAX / 4 || std::uint64_t{f.leaves} * f.uplinks_per_leaf > UINT32_MAX / 4) {
    return tl::unexpected(std::string("too many endpoints or fabric links for the simulator"));
  }
  const std::uint32_t ne = static_cast<std::uint32_t>(endpoints.size());
  const std::uint32_t fabric_links = f.leaves * f.uplinks_per_leaf;
  std::vector<double> capacity(2 * ne, f.port_gbps * 1e9 / 8);
  capacity.resize(2 * ne + 2 * fabric_links, f.uplink_gbps * 1e9 / 8);
  std::map<std::pair<IpAddress, IpAddress>, const PlannedFlow*> by_pair;
  std::uint64_t max_qps = 1;
  for (const auto& pf : plan.flows) {
    by_pair[{pf.demand.src_ip, pf.demand.dst_ip}] = &pf;
    max_qps = std::max<std::uint64_t>(max_qps, pf.src_ports.size());
  }

  // A phase with the same transfers as the one before it (every step of a ring) takes the same time: it
  // is mapped and simulated once.
  auto same_transfers = [](const TransferPhase& a, const TransferPhase& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Transfer& x, const Transfer& y) {
      return x.src == y.src && x.dst == y.dst && x.bytes == y.bytes;
    });
  };
  PhasedResult out;
  double seconds = 0;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const auto& phase = phases[p];
    if (p > 0 && same_transfers(phase, phases[p - 1])) {
      out.phase_seconds.push_back(seconds);
      out.makespan += seconds;
      continue;
    }
    if (const auto sub = checked_product({phase.size(), max_qps}).value_or(UINT64_MAX);
        sub > kMaxCollectiveTransfers) {
      return tl::unexpected("phase " + std::to_string(p) + ": " + too_many(sub, "sub-flows"));
    }
    std::vector<SimFlow> flows;
    flows.reserve(phase.size() * max_qps);
    for (const auto& t : phase) {
      if (t.src >= ne || t.dst >= ne) return tl::unexpected(std::string("transfer rank without an endpoint"));
      if (t.src == t.dst || t.bytes <= 0) continue;
      auto it = by_pair.find({endpoints[t.src].ip, endpoints[t.dst].ip});
      if (it == by_pair.end()) {
        return tl::unexpected("no route plan for " + endpoints[t.src].ip.to_string() + "," +
                              endpoints[t.dst].ip.to_string());
      }
      const PlannedFlow& pf = *it->second;
      const std::size_t qps = pf.src_ports.size();
      for (std::size_t q = 0; q < qps; ++q) {
        SimFlow flow;
        flow.bytes = t.bytes / static_cast<double>(qps);
        flow.path = {t.src, ne + t.dst};
        if (!non_blocking && !pf.uplinks.empty()) {
          flow.path.push_back(2 * ne + pf.uplinks[q]);
          flow.path.push_back(2 * ne + fabric_links + pf.downlinks[q]);
        }
        flows.push_back(std::move(flow));
      }
    }
    auto r = simulate(capacity, flows);
    if (!r) return tl::unexpected("phase " + std::to_string(p) + ": " + r.error());
    seconds = r->makespan;  // per-phase latency 0
    out.phase_seconds.push_back(seconds);
    out.makespan += seconds;
  }
  return out;
}

tl::expected<PlanComparison, std::string> compare_plan(const ClosFabric& f,
                                                       const std::vector<Endpoint>& endpoints,
                                                       const std::vector<TransferPhase>& phases,
                                                       std::uint32_t qps, std::uint32_t seeds,
                                                       PortRange range) {
  if (seeds == 0) return tl::unexpected(std::string("seeds must be >= 1"));
  auto demands = demands_of(endpoints, phases, qps);
  if (!demands) return tl::unexpected(demands.error());
  auto plan = plan_routes(f, *demands, range);
  if (!plan) return tl::unexpected(plan.error());
  PlanComparison c;
  c.lower_bound = plan->lower_bound;
  c.planned_max_uplink_load = plan->max_uplink_load;
  auto planned = simulate_collective(f, endpoints, phases, *plan, false);
  if (!planned) return tl::unexpected(planned.error());
  c.planned_seconds = planned->makespan;
  auto ideal = simulate_collective(f, endpoints, phases, *plan, true);
  if (!ideal) return tl::unexpected(ideal.error());
  c.non_blocking_seconds = ideal->makespan;
  c.ecmp_min_seconds = std::numeric_limits<double>::infinity();
  for (std::uint32_t s = 1; s <= seeds; ++s) {
    auto random = route_with_ports(f, *demands, kernel_default_ports(*demands, s));
    if (!random) return tl::unexpected(random.error());
    auto r = simulate_collective(f, endpoints, phases, *random, false);
    if (!r) return tl::unexpected(r.error());
    c.ecmp_mean_seconds += r->makespan / seeds;
    c.ecmp_min_seconds = std::min(c.ecmp_min_seconds, r->makespan);
    c.ecmp_max_seconds = std::max(c.ecmp_max_seconds, r->makespan);
    c.ecmp_mean_max_uplink_load += static_cast<double>(random->max_uplink_load) / seeds;
  }
  c.plan = std::move(*plan);
  return c;
}

}  // namespace hsns::cost
