// Max-min fair flow simulator and the collective phase builders.
#include "scheduling/cost/flow_sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduling/cost/collective_flows.h"

namespace hsns::cost {
namespace {

TEST(MaxMin, WaterFillingGivesTheTextbookRates) {
  // Link 0 (10) carries f0 and f1; link 1 (4) carries f1 and f2. Link 1 is the bottleneck: f1 = f2 = 2;
  // f0 takes the rest of link 0: 8.
  const std::vector<double> cap{10, 4};
  const std::vector<SimFlow> flows{{{0}, 1}, {{0, 1}, 1}, {{1}, 1}};
  auto r = max_min_rates(cap, flows, {true, true, true});
  ASSERT_TRUE(r) << r.error();
  EXPECT_DOUBLE_EQ((*r)[0], 8);
  EXPECT_DOUBLE_EQ((*r)[1], 2);
  EXPECT_DOUBLE_EQ((*r)[2], 2);
  auto inactive = max_min_rates(cap, flows, {true, false, true});
  ASSERT_TRUE(inactive);
  EXPECT_DOUBLE_EQ((*inactive)[0], 10);
  EXPECT_DOUBLE_EQ((*inactive)[1], 0);
  EXPECT_DOUBLE_EQ((*inactive)[2], 4);
}

TEST(MaxMin, CompletionTimesFollowTheFreedBandwidth) {
  // Three flows of 10, 20, 30 bytes on one 10 B/s link: 10/3 each until t = 3 (first done), then 5 each
  // until t = 5, then 10 for the last 10 bytes: t = 6.
  const std::vector<double> cap{10};
  auto r = simulate(cap, {{{0}, 10}, {{0}, 20}, {{0}, 30}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_NEAR(r->completion[0], 3, 1e-12);
  EXPECT_NEAR(r->completion[1], 5, 1e-12);
  EXPECT_NEAR(r->completion[2], 6, 1e-12);
  EXPECT_NEAR(r->makespan, 6, 1e-12);
}

TEST(MaxMin, PhasesRunBackToBackWithTheirLatency) {
  const std::vector<double> cap{10};
  std::vector<SimPhase> phases{{{{{0}, 10}, {{0}, 20}, {{0}, 30}}, 0.5}, {{{{0}, 10}}, 0}};
  auto r = simulate_phases(cap, phases);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->phase_seconds.size(), 2u);
  EXPECT_NEAR(r->phase_seconds[0], 6.5, 1e-12);
  EXPECT_NEAR(r->phase_seconds[1], 1, 1e-12);
  EXPECT_NEAR(r->makespan, 7.5, 1e-12);
}

TEST(MaxMin, ZeroByteFlowsFinishAtOnce) {
  auto r = simulate({10}, {{{0}, 0}, {{}, 0}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->makespan, 0);
}

TEST(MaxMin, RejectsBadInput) {
  const std::pair<std::vector<SimFlow>, const char*> cases[] = {
      {{{{}, 5}}, "needs a path"},
      {{{{3}, 5}}, "out of range"},
      {{{{0, 0}, 5}}, "appears twice"},
      {{{{0}, -1}}, "bytes must be"},
  };
  for (const auto& [flows, message] : cases) {
    auto r = simulate({10}, flows);
    ASSERT_FALSE(r) << message;
    EXPECT_NE(r.error().find(message), std::string::npos) << r.error();
  }
  auto cap = simulate({0}, {{{0}, 1}});
  ASSERT_FALSE(cap);
  EXPECT_NE(cap.error().find("capacity"), std::string::npos);
  EXPECT_FALSE(simulate_phases({10}, {{{{{0}, 1}}, -1}}));
}

// Reference water-filling: scan every link for the bottleneck each round (the contract, literally).
std::vector<double> scan_water_fill(const std::vector<double>& cap, const std::vector<SimFlow>& flows) {
  std::vector<double> rate(flows.size(), 0), left = cap;
  std::vector<std::uint32_t> n(cap.size(), 0);
  std::vector<bool> frozen(flows.size(), false);
  for (const auto& f : flows) {
    for (auto l : f.path) ++n[l];
  }
  for (;;) {
    double share = 1e300;
    std::size_t b = cap.size();
    for (std::size_t l = 0; l < cap.size(); ++l) {
      if (n[l] > 0 && std::max(0.0, left[l]) / n[l] < share) {
        share = std::max(0.0, left[l]) / n[l];
        b = l;
      }
    }
    if (b == cap.size()) return rate;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (frozen[i] || std::find(flows[i].path.begin(), flows[i].path.end(), b) == flows[i].path.end())
        continue;
      frozen[i] = true;
      rate[i] = share;
      for (auto l : flows[i].path) {
        left[l] -= share;
        --n[l];
      }
    }
  }
}

// The heap-based water-filling gives exactly the rates of the per-round scan, ties included (few distinct
// capacities, so many links tie).
TEST(MaxMin, HeapWaterFillingEqualsTheScan) {
  std::mt19937_64 rng(5);
  for (int n = 0; n < 200; ++n) {
    const std::size_t links = 2 + rng() % 40;
    std::vector<double> cap(links);
    for (auto& c : cap) c = static_cast<double>(1 + rng() % 4) * 25e9;
    std::vector<SimFlow> flows(1 + rng() % 60);
    for (auto& f : flows) {
      f.bytes = 1e6;
      const std::size_t hops = 1 + rng() % 4;
      while (f.path.size() < std::min(hops, links)) {
        const auto l = static_cast<std::uint32_t>(rng() % links);
        if (std::find(f.path.begin(), f.path.end(), l) == f.path.end()) f.path.push_back(l);
      }
    }
    auto r = max_min_rates(cap, flows, std::vector<bool>(flows.size(), true));
    ASSERT_TRUE(r) << r.error();
    const auto ref = scan_water_fill(cap, flows);
    for (std::size_t i = 0; i < flows.size(); ++i)
      ASSERT_EQ((*r)[i], ref[i]) << "instance " << n << " flow " << i;
  }
}

// Repeated identical phases (a ring's steps) are simulated once and cost the same each time.
TEST(MaxMin, RepeatedPhasesCostTheSame) {
  const std::vector<double> cap{10, 4};
  const SimPhase a{{{{0}, 10}, {{0, 1}, 4}}, 0.5};
  const SimPhase b{{{{1}, 8}}, 0};
  auto r = simulate_phases(cap, {a, a, b, a});
  ASSERT_TRUE(r) << r.error();
  auto one = simulate_phases(cap, {a});
  ASSERT_TRUE(one);
  ASSERT_EQ(r->phase_seconds.size(), 4u);
  EXPECT_EQ(r->phase_seconds[0], one->makespan);
  EXPECT_EQ(r->phase_seconds[1], one->makespan);
  EXPECT_DOUBLE_EQ(r->phase_seconds[2], 2.0);
  EXPECT_EQ(r->phase_seconds[3], one->makespan);
}

TEST(CollectivePhases, RingAllReduceIsTwoNMinusOneStepsOfNTransfers) {
  auto p = ring_all_reduce_phases(4, 8);
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->size(), 6u);
  for (const auto& phase : *p) {
    ASSERT_EQ(phase.size(), 4u);
    for (std::uint32_t r = 0; r < 4; ++r) {
      EXPECT_EQ(phase[r].src, r);
      EXPECT_EQ(phase[r].dst, (r + 1) % 4);
      EXPECT_DOUBLE_EQ(phase[r].bytes, 2);
    }
  }
  EXPECT_FALSE(ring_all_reduce_phases(1, 8));
}

TEST(CollectivePhases, HalvingDoublingHalvesThenDoubles) {
  auto p = halving_doubling_all_reduce_phases(8, 16);
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->size(), 6u);
  const std::uint32_t dist[] = {4, 2, 1, 1, 2, 4};
  const double size[] = {8, 4, 2, 2, 4, 8};
  for (std::size_t s = 0; s < 6; ++s) {
    ASSERT_EQ((*p)[s].size(), 8u);
    for (const auto& t : (*p)[s]) {
      EXPECT_EQ(t.dst, t.src ^ dist[s]);
      EXPECT_DOUBLE_EQ(t.bytes, size[s]);
    }
  }
  EXPECT_FALSE(halving_doubling_all_reduce_phases(6, 16));
}

TEST(CollectivePhases, SimulatedRingMatchesTheAlphaBetaRingOnANonBlockingFabric) {
  // 4 ranks, 4 GB, 400 Gbit/s NICs (50e9 B/s): 2 * 3/4 * 4e9 / 50e9 = 0.12 s.
  auto fabric = make_clos(1, 1, 4, 400, 1, EcmpHashModel{});
  ASSERT_TRUE(fabric) << fabric.error();
  std::vector<Endpoint> eps;
  for (int i = 0; i < 4; ++i) eps.push_back({*IpAddress::parse("198.18.0." + std::to_string(i + 1)), 0});
  auto phases = ring_all_reduce_phases(4, 4e9);
  ASSERT_TRUE(phases);
  auto demands = demands_of(eps, *phases, 1);
  ASSERT_TRUE(demands);
  EXPECT_EQ(demands->size(), 4u);
  auto plan = plan_routes(*fabric, *demands);
  ASSERT_TRUE(plan) << plan.error();
  auto r = simulate_collective(*fabric, eps, *phases, *plan, false);
  ASSERT_TRUE(r) << r.error();
  EXPECT_NEAR(r->makespan, 0.12, 1e-12);
}

// A ring over n ranks is 2(n-1) x n transfers: the count is computed in 64 bits (2(n-1) wrapped 32 bits for
// n > 2^31) and bounded before any phase is allocated.
TEST(CollectivePhases, TransferCountsAreBoundedBeforeAllocating) {
  EXPECT_EQ(ring_all_reduce_transfers(1), 0u);
  EXPECT_EQ(ring_all_reduce_transfers(4), 24u);
  EXPECT_EQ(ring_all_reduce_transfers(0xFFFFFFFFu), UINT64_MAX);  // 2(n-1)n > 2^64: saturated
  EXPECT_EQ(halving_doubling_all_reduce_transfers(8), 48u);       // 2 * 3 phases of 8
  EXPECT_EQ(halving_doubling_all_reduce_transfers(1u << 31), 2ull * 31 * (1u << 31));
  // 2 * 1447 * 1448 = 4,190,512 transfers fit; 1449 ranks do not (4,196,304 > 2^22).
  EXPECT_TRUE(ring_all_reduce_phases(1448, 1.0));
  for (std::uint32_t n : {1449u, 1u << 20, (1u << 31) + 1, 0xFFFFFFFFu}) {
    auto r = ring_all_reduce_phases(n, 1.0);
    ASSERT_FALSE(r) << n;
    EXPECT_NE(r.error().find("transfers"), std::string::npos) << r.error();
  }
  EXPECT_FALSE(halving_doubling_all_reduce_phases(1u << 20, 1.0));  // 40 x 2^20 transfers
  EXPECT_TRUE(halving_doubling_all_reduce_phases(1u << 16, 1.0));   // 32 x 2^16 = 2^21
  // Rank pairs x QPs: 2^16 pairs with 64 QPs each is 2^22, one QP more per pair is refused.
  std::vector<Endpoint> ends;
  for (std::uint32_t i = 0; i < (1u << 16); ++i) {
    ends.push_back(
        {*IpAddress::parse("10." + std::to_string(i >> 8) + "." + std::to_string(i & 255) + ".1"), 0});
  }
  TransferPhase ring;
  for (std::uint32_t i = 0; i < ends.size(); ++i) ring.push_back({i, (i + 1) % (1u << 16), 1.0});
  EXPECT_TRUE(demands_of(ends, {ring}, 64));
  auto over = demands_of(ends, {ring}, 65);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find("sub-flows"), std::string::npos) << over.error();
}

}  // namespace
}  // namespace hsns::cost
