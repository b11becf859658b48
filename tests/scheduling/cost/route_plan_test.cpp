// UDP source-port route planning on a 2-tier Clos, MultiQpSrcPort.cfg export, and the acceptance:
// a rail-aligned DP all-reduce planned vs random ECMP vs a non-blocking fabric.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "scheduling/cost/collective_flows.h"
#include "scheduling/cost/route_planner.h"

namespace hsns::cost {
namespace {

IpAddress ip(const std::string& text) {
  return *IpAddress::parse(text);
}

// Hash = the source port alone, XOR-folded: 0xPPPP0000 folds to 0xPPPP, so uplink = port % uplinks.
EcmpHashModel port_only_xor() {
  return EcmpHashModel{{false, false, true, false, false}, HashFunction::xor_fold, 0};
}

TEST(RoutePlanner, HandComputedGreedyOnAPortOnlyHash) {
  auto f = make_clos(2, 2, 2, 400, 1, port_only_xor());
  ASSERT_TRUE(f) << f.error();
  ASSERT_EQ(f->uplinks_per_leaf, 2u);
  const std::vector<FlowDemand> demands{{ip("198.18.0.1"), ip("198.18.1.1"), 0, 1, 1, {}},
                                        {ip("198.18.0.2"), ip("198.18.1.2"), 0, 1, 1, {}}};
  auto plan = plan_routes(*f, demands);
  ASSERT_TRUE(plan) << plan.error();
  // First flow: 49152 is even -> uplink 0 (spine 0), both loads 0: taken. Second: 49152 would share
  // uplink 0, 49153 goes to uplink 1 (spine 1).
  EXPECT_EQ(plan->flows[0].src_ports, std::vector<std::uint16_t>{49152});
  EXPECT_EQ(plan->flows[1].src_ports, std::vector<std::uint16_t>{49153});
  EXPECT_EQ(plan->flows[0].uplinks, std::vector<std::uint32_t>{0});
  EXPECT_EQ(plan->flows[1].uplinks, std::vector<std::uint32_t>{1});
  // Downlinks into leaf 1: (leaf 1 * 2 spines + spine) * 1 parallel link.
  EXPECT_EQ(plan->flows[0].downlinks, std::vector<std::uint32_t>{2});
  EXPECT_EQ(plan->flows[1].downlinks, std::vector<std::uint32_t>{3});
  EXPECT_EQ(plan->max_uplink_load, 1u);
  EXPECT_EQ(plan->lower_bound, 1u);
  EXPECT_EQ(export_multiqp_cfg(*plan), "198.18.0.1,198.18.1.1=49152\n198.18.0.2,198.18.1.2=49153\n");
}

TEST(RoutePlanner, SeveralQpsPerPairGetDistinctPortsOnDistinctUplinks) {
  auto f = make_clos(2, 4, 8, 400, 2, EcmpHashModel{});  // 4 uplinks per leaf, crc32 over 5 fields
  ASSERT_TRUE(f) << f.error();
  const std::vector<FlowDemand> demands{{ip("198.18.0.1"), ip("198.18.1.1"), 0, 1, 4, {}},
                                        {ip("198.18.0.2"), ip("198.18.0.3"), 0, 0, 2, {}}};
  auto plan = plan_routes(*f, demands);
  ASSERT_TRUE(plan) << plan.error();
  const auto& ports = plan->flows[0].src_ports;
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(std::set<std::uint16_t>(ports.begin(), ports.end()).size(), 4u);
  const auto& ups = plan->flows[0].uplinks;
  EXPECT_EQ(std::set<std::uint32_t>(ups.begin(), ups.end()).size(), 4u);
  EXPECT_EQ(plan->max_uplink_load, 1u);
  // Inside one leaf: no uplink, lowest free ports.
  EXPECT_EQ(plan->flows[1].src_ports, (std::vector<std::uint16_t>{49152, 49153}));
  EXPECT_TRUE(plan->flows[1].uplinks.empty());
  const std::string cfg = export_multiqp_cfg(*plan);
  EXPECT_EQ(cfg.substr(cfg.find('\n') + 1), "198.18.0.2,198.18.0.3=49152,49153\n");
  // Deterministic.
  auto again = plan_routes(*f, demands);
  ASSERT_TRUE(again);
  EXPECT_EQ(export_multiqp_cfg(*again), cfg);
}

TEST(RoutePlanner, DemandsInDifferentGroupsDoNotCompete) {
  auto f = make_clos(2, 2, 2, 400, 1, port_only_xor());
  ASSERT_TRUE(f);
  // Same source leaf, but active in different phases: both may take 49152 (uplink 0).
  const std::vector<FlowDemand> demands{{ip("198.18.0.1"), ip("198.18.1.1"), 0, 1, 1, {0}},
                                        {ip("198.18.0.2"), ip("198.18.1.2"), 0, 1, 1, {1}},
                                        {ip("198.18.0.3"), ip("198.18.1.3"), 0, 1, 1, {1, 2}}};
  auto plan = plan_routes(*f, demands);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->flows[0].src_ports, std::vector<std::uint16_t>{49152});
  EXPECT_EQ(plan->flows[1].src_ports, std::vector<std::uint16_t>{49152});
  EXPECT_EQ(plan->flows[2].src_ports, std::vector<std::uint16_t>{49153});  // shares group 1 with flow 1
  EXPECT_EQ(plan->max_uplink_load, 1u);
  EXPECT_EQ(plan->lower_bound, 1u);
  EXPECT_EQ(plan->uplink_load[0], 1u);  // max over groups, not the sum
}

TEST(RoutePlanner, EvaluatesGivenPortsAndKernelDefaults) {
  auto f = make_clos(2, 2, 2, 400, 1, port_only_xor());
  ASSERT_TRUE(f);
  const std::vector<FlowDemand> demands{{ip("198.18.0.1"), ip("198.18.1.1"), 0, 1, 1, {}},
                                        {ip("198.18.0.2"), ip("198.18.1.2"), 0, 1, 1, {}}};
  auto same = route_with_ports(*f, demands, {{49152}, {49154}});  // both even: both on uplink 0
  ASSERT_TRUE(same) << same.error();
  EXPECT_EQ(same->max_uplink_load, 2u);
  EXPECT_EQ(same->uplink_load[0], 2u);
  auto ports = kernel_default_ports(demands, 7);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports, kernel_default_ports(demands, 7));  // seeded: reproducible
  EXPECT_GE(ports[0][0], 0xC000);
  EXPECT_FALSE(route_with_ports(*f, demands, {{49152}}));
  EXPECT_FALSE(route_with_ports(*f, demands, {{49152, 49153}, {1}}));
}

TEST(RoutePlanner, RejectsBadInput) {
  auto f = make_clos(2, 2, 2, 400, 1, EcmpHashModel{});
  ASSERT_TRUE(f);
  const FlowDemand ok{ip("198.18.0.1"), ip("198.18.1.1"), 0, 1, 1, {}};
  auto dup = plan_routes(*f, {ok, ok});
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().find("duplicate pair"), std::string::npos);
  FlowDemand leaf = ok;
  leaf.dst_leaf = 2;
  EXPECT_NE(plan_routes(*f, {leaf}).error().find("leaf outside"), std::string::npos);
  FlowDemand qps = ok;
  qps.qps = 0;
  EXPECT_NE(plan_routes(*f, {qps}).error().find("qps"), std::string::npos);
  FlowDemand many = ok;
  many.qps = 5;
  EXPECT_NE(plan_routes(*f, {many}, PortRange{50000, 50003}).error().find("exceeds"), std::string::npos);
  FlowDemand fam = ok;
  fam.dst_ip = ip("2001:db8::1");
  EXPECT_NE(plan_routes(*f, {fam}).error().find("families"), std::string::npos);
  EXPECT_FALSE(plan_routes(*f, {ok}, PortRange{50001, 50000}));
  EXPECT_NE(make_clos(2, 2, 16, 400, 3, EcmpHashModel{}).error().find("whole number"), std::string::npos);
  EXPECT_NE(make_clos(2, 3, 16, 400, 2, EcmpHashModel{}).error().find("multiple of fabric.spines"),
            std::string::npos);
}

// ---- Acceptance ----------------------------------------------------------------------------------
// One rail of a rail-optimised cluster: NIC r of every host is cabled to the rail-r leaf of its group
// of hosts; the DP group of local rank r is the ring/halving-doubling over those NICs. Ranks fill a
// leaf before the next (consecutive ranks under one leaf). 400 Gbit/s ports and uplinks, 1 QP per pair.
struct Instance {
  ClosFabric fabric;
  std::vector<Endpoint> endpoints;
};

Instance rail_instance(std::uint32_t leaves, std::uint32_t ports_per_leaf, std::uint32_t used_per_leaf,
                       double oversub, const EcmpHashModel& hash) {
  const std::uint32_t uplinks = static_cast<std::uint32_t>(ports_per_leaf / oversub);
  auto f = make_clos(leaves, uplinks, ports_per_leaf, 400, oversub, hash);
  EXPECT_TRUE(f) << f.error();
  Instance in{*f, {}};
  for (std::uint32_t l = 0; l < leaves; ++l) {
    for (std::uint32_t h = 0; h < used_per_leaf; ++h) {
      in.endpoints.push_back({ip("198.18." + std::to_string(l) + "." + std::to_string(h + 1)), l});
    }
  }
  return in;
}

struct AcceptanceCase {
  const char* name;
  std::uint32_t leaves;
  std::uint32_t ports_per_leaf;
  std::uint32_t used_per_leaf;
  double oversub;
  std::uint32_t expected_max_uplink_load;
};

void check_acceptance(const AcceptanceCase& c, const EcmpHashModel& hash) {
  const Instance in = rail_instance(c.leaves, c.ports_per_leaf, c.used_per_leaf, c.oversub, hash);
  const auto n = static_cast<std::uint32_t>(in.endpoints.size());
  auto phases = halving_doubling_all_reduce_phases(n, 1024.0 * 1024 * 1024);
  ASSERT_TRUE(phases) << phases.error();
  auto cmp = compare_plan(in.fabric, in.endpoints, *phases, 1, 20);
  ASSERT_TRUE(cmp) << cmp.error();
  EXPECT_EQ(cmp->lower_bound, c.expected_max_uplink_load) << c.name;
  EXPECT_EQ(cmp->planned_max_uplink_load, c.expected_max_uplink_load) << c.name;
  EXPECT_EQ(cmp->plan.max_downlink_load, c.expected_max_uplink_load) << c.name;
  EXPECT_LE(cmp->planned_seconds, 0.7 * cmp->ecmp_mean_seconds) << c.name;
  EXPECT_GE(cmp->planned_seconds, cmp->non_blocking_seconds * (1 - 1e-12)) << c.name;
  std::cout << "[acceptance] " << c.name << " (" << to_string(hash.function) << "): ranks " << n
            << ", oversubscription " << in.fabric.oversubscription() << ", uplinks/leaf "
            << in.fabric.uplinks_per_leaf << ": planned " << cmp->planned_seconds * 1e3
            << " ms (max uplink load " << cmp->planned_max_uplink_load << "), ECMP mean "
            << cmp->ecmp_mean_seconds * 1e3 << " ms (min " << cmp->ecmp_min_seconds * 1e3 << ", max "
            << cmp->ecmp_max_seconds * 1e3 << ", mean max load " << cmp->ecmp_mean_max_uplink_load
            << "), non-blocking " << cmp->non_blocking_seconds * 1e3 << " ms, planned/ECMP "
            << cmp->planned_seconds / cmp->ecmp_mean_seconds << "\n";
}

const AcceptanceCase kCases[] = {
    {"1:1, 2 leaves x 16 ports, 32 ranks", 2, 16, 16, 1.0, 1},
    {"2:1, 2 leaves x 16 ports, 16 ranks (half the ports)", 2, 16, 8, 2.0, 1},
    {"2:1, 2 leaves x 16 ports, 32 ranks (fabric allows 2)", 2, 16, 16, 2.0, 2},
    {"1:1, 4 leaves x 8 ports, 32 ranks", 4, 8, 8, 1.0, 1},
};

TEST(RoutePlanAcceptance, RailAlignedAllReduceCrc32) {
  for (const auto& c : kCases) check_acceptance(c, EcmpHashModel{});
}

TEST(RoutePlanAcceptance, RailAlignedAllReduceOtherHashFunctions) {
  for (auto fn : {HashFunction::crc32c, HashFunction::crc32_bzip2, HashFunction::xor_fold}) {
    EcmpHashModel h;
    h.function = fn;
    h.seed = 0x1234;
    for (const auto& c : kCases) check_acceptance(c, h);
  }
}

}  // namespace
}  // namespace hsns::cost

namespace hsns::cost {
namespace {

// A ring all-reduce with consecutive ranks under one leaf crosses the spine only at the two leaf
// boundaries; with 4 QPs per pair the 4 sub-flows of a boundary pair still get 4 distinct uplinks and
// the planned ring runs as fast as on a non-blocking fabric.
TEST(RoutePlanAcceptance, RingAllReduceWithFourQpsPerPair) {
  auto f = make_clos(2, 8, 8, 400, 1, EcmpHashModel{});
  ASSERT_TRUE(f) << f.error();
  std::vector<Endpoint> eps;
  for (std::uint32_t l = 0; l < 2; ++l) {
    for (std::uint32_t h = 0; h < 8; ++h) {
      eps.push_back({*IpAddress::parse("198.18." + std::to_string(l) + "." + std::to_string(h + 1)), l});
    }
  }
  auto phases = ring_all_reduce_phases(16, 1024.0 * 1024 * 1024);
  ASSERT_TRUE(phases);
  auto cmp = compare_plan(*f, eps, *phases, 4, 10);
  ASSERT_TRUE(cmp) << cmp.error();
  EXPECT_EQ(cmp->planned_max_uplink_load, 1u);
  EXPECT_EQ(cmp->lower_bound, 1u);
  EXPECT_NEAR(cmp->planned_seconds, cmp->non_blocking_seconds, 1e-12);
  EXPECT_LE(cmp->planned_seconds, cmp->ecmp_min_seconds * (1 + 1e-12));
  // 16 pairs, one MultiQpSrcPort.cfg line each with 4 ports.
  const std::string cfg = export_multiqp_cfg(cmp->plan);
  EXPECT_EQ(std::count(cfg.begin(), cfg.end(), '\n'), 16);
  EXPECT_EQ(cfg.substr(0, cfg.find('=')), "198.18.0.1,198.18.0.2");
}

}  // namespace
}  // namespace hsns::cost

namespace hsns::cost {
namespace {

// Two 1 GB transfers leaving leaf 0 on 400 Gbit/s (50e9 B/s) links. On one shared uplink each gets half:
// 1e9 / 25e9 = 40 ms; on distinct uplinks 20 ms, the non-blocking time.
TEST(RoutePlanSimulation, SharedUplinkHalvesTheRateHandComputed) {
  const EcmpHashModel port_only{{false, false, true, false, false}, HashFunction::xor_fold, 0};
  auto f = make_clos(2, 2, 2, 400, 1, port_only);
  ASSERT_TRUE(f);
  const std::vector<Endpoint> eps{{*IpAddress::parse("198.18.0.1"), 0},
                                  {*IpAddress::parse("198.18.0.2"), 0},
                                  {*IpAddress::parse("198.18.1.1"), 1},
                                  {*IpAddress::parse("198.18.1.2"), 1}};
  const std::vector<TransferPhase> phases{{{0, 2, 1e9}, {1, 3, 1e9}}};
  auto demands = demands_of(eps, phases, 1);
  ASSERT_TRUE(demands);
  auto shared = route_with_ports(*f, *demands, {{49152}, {49154}});
  ASSERT_TRUE(shared) << shared.error();
  auto slow = simulate_collective(*f, eps, phases, *shared, false);
  ASSERT_TRUE(slow) << slow.error();
  EXPECT_NEAR(slow->makespan, 0.04, 1e-12);
  auto ideal = simulate_collective(*f, eps, phases, *shared, true);
  ASSERT_TRUE(ideal);
  EXPECT_NEAR(ideal->makespan, 0.02, 1e-12);
  auto plan = plan_routes(*f, *demands);
  ASSERT_TRUE(plan);
  auto fast = simulate_collective(*f, eps, phases, *plan, false);
  ASSERT_TRUE(fast);
  EXPECT_NEAR(fast->makespan, 0.02, 1e-12);
  // A transfer whose pair has no plan is an error, not a silent zero.
  const std::vector<TransferPhase> other{{{0, 3, 1e9}}};
  auto missing = simulate_collective(*f, eps, other, *plan, false);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("no route plan for 198.18.0.1,198.18.1.2"), std::string::npos);
}

TEST(RoutePlanSimulation, ComparisonIsDeterministic) {
  auto f = make_clos(2, 4, 8, 400, 2, EcmpHashModel{});
  ASSERT_TRUE(f);
  std::vector<Endpoint> eps;
  for (std::uint32_t i = 0; i < 16; ++i) {
    eps.push_back(
        {*IpAddress::parse("198.18." + std::to_string(i / 8) + "." + std::to_string(i % 8 + 1)), i / 8});
  }
  auto phases = halving_doubling_all_reduce_phases(16, 1e9);
  ASSERT_TRUE(phases);
  auto a = compare_plan(*f, eps, *phases, 2, 5);
  auto b = compare_plan(*f, eps, *phases, 2, 5);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->ecmp_mean_seconds, b->ecmp_mean_seconds);
  EXPECT_EQ(a->planned_seconds, b->planned_seconds);
  EXPECT_EQ(export_multiqp_cfg(a->plan), export_multiqp_cfg(b->plan));
  EXPECT_FALSE(compare_plan(*f, eps, *phases, 2, 0));
}

}  // namespace
}  // namespace hsns::cost

namespace hsns::cost {
namespace {

// ---- The fast planner against the contract, literally ---------------------------------------------------
// Reference: concurrency groups merged by member set; sub-flows in (source leaf, destination leaf, source
// IP, destination IP, QP) order; each inter-leaf sub-flow takes, among all ports of the range not used by
// its pair, hashed one by one with ecmp_hash, the lowest one minimising (max over its groups of max(uplink,
// downlink load) + 1, sum of both loads over its groups); intra-leaf sub-flows the lowest free ports.
std::vector<std::vector<std::uint16_t>> reference_ports(const ClosFabric& f,
                                                        const std::vector<FlowDemand>& ds, PortRange range) {
  std::map<std::uint32_t, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::uint32_t g : ds[i].groups.empty() ? std::vector<std::uint32_t>{0} : ds[i].groups) {
      auto& m = members[g];
      if (m.empty() || m.back() != i) m.push_back(i);
    }
  }
  std::map<std::vector<std::size_t>, std::size_t> canonical;
  std::vector<std::set<std::size_t>> groups(ds.size());
  for (const auto& [g, m] : members) {
    const std::size_t id = canonical.emplace(m, canonical.size()).first->second;
    for (std::size_t i : m) groups[i].insert(id);
  }
  const std::size_t links = std::size_t{f.leaves} * f.uplinks_per_leaf;
  std::vector<std::vector<std::uint32_t>> up(canonical.size(), std::vector<std::uint32_t>(links, 0));
  auto down = up;
  std::vector<std::size_t> order(ds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(ds[a].src_leaf, ds[a].dst_leaf, ds[a].src_ip, ds[a].dst_ip) <
           std::tie(ds[b].src_leaf, ds[b].dst_leaf, ds[b].src_ip, ds[b].dst_ip);
  });
  std::vector<std::vector<std::uint16_t>> out(ds.size());
  for (std::size_t i : order) {
    const auto& d = ds[i];
    auto& used = out[i];
    for (std::uint32_t q = 0; q < d.qps; ++q) {
      std::pair<std::uint32_t, std::uint32_t> best_cost{~0u, ~0u};
      std::uint16_t best = 0;
      FabricHop best_hop;
      for (std::uint32_t p = range.first; p <= range.last; ++p) {
        const auto port = static_cast<std::uint16_t>(p);
        if (std::find(used.begin(), used.end(), port) != used.end()) continue;
        if (d.src_leaf == d.dst_leaf) {
          best = port;
          break;
        }
        const FabricHop hop = route_inter_leaf(f, FiveTuple{d.src_ip, d.dst_ip, port, 4791, 17});
        std::pair<std::uint32_t, std::uint32_t> c{0, 0};
        for (std::size_t g : groups[i]) {
          const std::uint32_t u = up[g][uplink_index(f, d.src_leaf, hop)];
          const std::uint32_t w = down[g][downlink_index(f, d.dst_leaf, hop)];
          c.first = std::max(c.first, std::max(u, w) + 1);
          c.second += u + w;
        }
        if (c < best_cost) {
          best_cost = c;
          best = port;
          best_hop = hop;
        }
      }
      used.push_back(best);
      if (d.src_leaf == d.dst_leaf) continue;
      for (std::size_t g : groups[i]) {
        ++up[g][uplink_index(f, d.src_leaf, best_hop)];
        ++down[g][downlink_index(f, d.dst_leaf, best_hop)];
      }
    }
  }
  return out;
}

// Random demands over random fabrics: power-of-two and other uplink counts, several parallel links, the
// same or different models at leaves and spines (equal hashes make some (uplink, parallel link) classes
// unreachable), models that do not read the source port, IPv4 and IPv6, several QPs, concurrency groups,
// small port ranges (the range runs out). The fast planner must give the reference's ports exactly.
TEST(RoutePlanner, EqualsTheLiteralGreedyOnRandomInstances) {
  std::mt19937_64 rng(11);
  const HashFunction fns[] = {HashFunction::crc32, HashFunction::crc32c, HashFunction::crc32_bzip2,
                              HashFunction::xor_fold};
  for (int n = 0; n < 120; ++n) {
    ClosFabric f;
    f.leaves = 2 + static_cast<std::uint32_t>(rng() % 4);
    f.spines = 1 + static_cast<std::uint32_t>(rng() % 4);
    f.uplinks_per_leaf = f.spines * (1 + static_cast<std::uint32_t>(rng() % 3));
    f.ports_per_leaf = 8;
    f.uplink_gbps = f.port_gbps = 400;
    f.leaf_hash.function = fns[rng() % 4];
    f.leaf_hash.seed = static_cast<std::uint32_t>(rng() % 3);
    if (rng() % 8 == 0) f.leaf_hash.fields.src_port = false;
    f.spine_hash = f.leaf_hash;
    if (rng() % 2 == 0) f.spine_hash.seed ^= 0x5A5A5A5Au;
    ASSERT_TRUE(validate(f)) << n;
    const bool v6 = rng() % 4 == 0;
    std::vector<FlowDemand> ds;
    const std::size_t count = 1 + rng() % 24;
    for (std::size_t k = 0; k < count; ++k) {
      FlowDemand d;
      const auto a = static_cast<std::uint32_t>(rng() % 64), b = static_cast<std::uint32_t>(rng() % 64);
      if (a == b) continue;
      d.src_ip = *IpAddress::parse((v6 ? "2001:db8::" : "198.18.0.") + std::to_string(a + 1));
      d.dst_ip = *IpAddress::parse((v6 ? "2001:db8::" : "198.18.0.") + std::to_string(b + 1));
      d.src_leaf = a % f.leaves;
      d.dst_leaf = b % f.leaves;
      d.qps = 1 + static_cast<std::uint32_t>(rng() % 3);
      for (std::uint32_t g = 0; g < 3; ++g) {
        if (rng() % 2 == 0) d.groups.push_back(g);
      }
      bool dup = false;
      for (const auto& e : ds) dup = dup || (e.src_ip == d.src_ip && e.dst_ip == d.dst_ip);
      if (!dup) ds.push_back(d);
    }
    const std::uint16_t first = static_cast<std::uint16_t>(0xC000 + rng() % 1000);
    const PortRange range{first, static_cast<std::uint16_t>(first + (rng() % 3 == 0 ? 5 : 255))};
    auto plan = plan_routes(f, ds, range);
    ASSERT_TRUE(plan) << plan.error();
    const auto ref = reference_ports(f, ds, range);
    for (std::size_t i = 0; i < ds.size(); ++i) {
      ASSERT_EQ(plan->flows[i].src_ports, ref[i]) << "instance " << n << " demand " << i;
    }
    // Loads and links are those of the chosen ports under the full hash.
    auto again = route_with_ports(f, ds, ref);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(plan->uplink_load, again->uplink_load) << n;
    EXPECT_EQ(plan->downlink_load, again->downlink_load) << n;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      EXPECT_EQ(plan->flows[i].uplinks, again->flows[i].uplinks) << n;
      EXPECT_EQ(plan->flows[i].downlinks, again->flows[i].downlinks) << n;
    }
  }
}

// The full RoCE range with the same model at leaves and spines (as schedule_job builds the fabric): a rail's
// 128-rank halving-doubling over 8 leaves x 16 ports at 1:1, equal to the reference port for port.
TEST(RoutePlanner, EqualsTheLiteralGreedyOnAFullRailWithOneModel) {
  auto f = make_clos(8, 8, 16, 400, 1, EcmpHashModel{});
  ASSERT_TRUE(f);
  f->spine_hash = f->leaf_hash;
  std::vector<Endpoint> eps;
  for (std::uint32_t l = 0; l < 8; ++l) {
    for (std::uint32_t h = 0; h < 16; ++h) {
      eps.push_back({*IpAddress::parse("198.18." + std::to_string(l) + "." + std::to_string(h + 1)), l});
    }
  }
  auto phases = halving_doubling_all_reduce_phases(128, 1e9);
  ASSERT_TRUE(phases);
  auto ds = demands_of(eps, *phases, 1);
  ASSERT_TRUE(ds);
  // The reference hashes the whole range per sub-flow: keep it to the first phase's pairs leaving leaves 0
  // and 1 (16 flows each onto 16 uplinks: the last ones need one particular class).
  std::vector<FlowDemand> first;
  for (const auto& d : *ds) {
    if (d.groups.front() == 0 && d.src_leaf < 2) first.push_back(d);
  }
  ASSERT_EQ(first.size(), 32u);
  auto plan = plan_routes(*f, first);
  ASSERT_TRUE(plan) << plan.error();
  const auto ref = reference_ports(*f, first, PortRange{});
  for (std::size_t i = 0; i < first.size(); ++i) ASSERT_EQ(plan->flows[i].src_ports, ref[i]) << i;
  EXPECT_EQ(plan->max_uplink_load, plan->lower_bound);
}

}  // namespace
}  // namespace hsns::cost
