// Quality acceptance of topology search on seeded random fragmented clusters of <= 32 hosts:
// (1) the best answer is within 2% of the exhaustive optimum in >= 95% of >= 200 instances;
// (2) the largest DP/PP group spread (tiers crossed) is >= 1.5x smaller on average than first-fit's;
// (3) no answer ever holds an isolated, sub-health or allocated host or NPU.
//
// Exhaustive optimum: every host subset of the needed size, up to cost equivalence. A host's cost
// contribution depends only on its domains (SU, super-pod, fabric), so two subsets taking the same number
// of hosts from every SU have the same cost; the enumeration therefore walks every vector (x_su) with
// 0 <= x_su <= usable hosts of the SU and sum = needed hosts (the CrossCheck test confirms on small
// instances that this equals the plain C(n, k) subset enumeration). Each subset is scored in two rank
// orders, the canonical domain-aware one and plain name order, and the smaller cost is the optimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

#include "random_instance.h"

namespace hsns::search {
namespace {

using testing::fragment;
using testing::random_job;

struct Instance {
  Topology topo;
  SearchRequest request;
};

// A random fragmented instance of at most 32 hosts with a feasible job of 2..6 hosts.
Instance random_instance(std::mt19937_64& rng) {
  for (;;) {
    topology::ClosParams p;
    p.npus_per_host = rng() % 2 == 0 ? 8 : 4;
    const std::uint32_t per_su[] = {4, 8, 8, 16};
    p.hosts_per_su = per_su[rng() % 4];
    p.hosts = 12 + static_cast<std::uint32_t>(rng() % 21);
    const std::uint32_t sus = (p.hosts + p.hosts_per_su - 1) / p.hosts_per_su;
    const std::uint32_t pods[] = {1, 2, 4};
    p.superpods = std::min(pods[rng() % 3], sus);
    p.cores = p.superpods > 1 ? 2 : 0;
    p.spines_per_plane = 2;
    auto t = topology::generate_clos(p);
    if (!t) continue;
    if (rng() % 2 == 0) {
      fragment(*t, rng, 0.3);
    } else {
      testing::fragment_runs(*t, rng, 0.3);
    }
    std::uint32_t usable = 0;
    for (NodeId h : t->hosts()) usable += t->free_npus(h) == p.npus_per_host;
    if (usable < 2) continue;
    const std::uint32_t k = 2 + static_cast<std::uint32_t>(rng() % (std::min(usable, 6u) - 1));
    return {std::move(*t), random_job(rng, k, p.npus_per_host)};
  }
}

// The exhaustive optimum (see the file comment).
double exhaustive_optimum(const Topology& t, const Scorer& s, std::uint64_t* evaluated) {
  std::map<std::uint32_t, std::vector<NodeId>> by_su;  // usable hosts per SU, name order
  for (NodeId h : s.usable()) by_su[t.domain(h, Tier::kLeaf)].push_back(h);
  std::vector<std::vector<NodeId>> sus;
  for (auto& [su, hosts] : by_su) sus.push_back(hosts);
  double best = 1e300;
  std::vector<NodeId> chosen;
  std::function<void(std::size_t, std::uint32_t)> walk = [&](std::size_t i, std::uint32_t left) {
    if (left == 0) {
      std::vector<NodeId> by_name = chosen;
      std::sort(by_name.begin(), by_name.end(),
                [&](NodeId a, NodeId b) { return t.node(a).name < t.node(b).name; });
      for (const auto& order : {s.canonical_order(chosen), by_name}) {
        auto c = s.score(order);
        if (c) best = std::min(best, c->total_seconds);
        ++*evaluated;
      }
      return;
    }
    if (i == sus.size()) return;
    for (std::uint32_t x = 0; x <= std::min<std::size_t>(left, sus[i].size()); ++x) {
      chosen.insert(chosen.end(), sus[i].begin(), sus[i].begin() + x);
      walk(i + 1, left - x);
      chosen.resize(chosen.size() - x);
    }
  };
  walk(0, s.hosts_needed());
  return best;
}

std::size_t spread(const Candidate& c) {
  return std::max(static_cast<std::size_t>(c.span[static_cast<std::size_t>(cost::Dimension::dp)]),
                  static_cast<std::size_t>(c.span[static_cast<std::size_t>(cost::Dimension::pp)]));
}

void expect_only_free(const Topology& t, const Candidate& c, std::uint32_t u) {
  for (std::size_t i = 0; i < c.host_ids.size(); ++i) {
    const auto& host = t.node(c.host_ids[i]);
    ASSERT_EQ(host.state, topology::DeviceState::kHealthy) << host.name;
    ASSERT_EQ(c.npus[i].size(), u);
    const auto free = t.free_npu_indices(c.host_ids[i]);
    for (std::uint32_t n : c.npus[i]) {
      ASSERT_NE(std::find(free.begin(), free.end(), n), free.end()) << host.name << " npu " << n;
    }
  }
}

TEST(SearchQuality, NearExhaustiveOptimumAndBetterThanFirstFit) {
  std::mt19937_64 rng(20261129);
  constexpr int kInstances = 240;
  int within = 0;
  double ff_spread = 0, search_spread = 0, random_spread = 0;
  std::uint64_t evaluated = 0;
  for (int n = 0; n < kInstances; ++n) {
    Instance in = random_instance(rng);
    in.request.answers = 5;
    auto res = search_topology(in.topo, in.request);
    ASSERT_TRUE(res.has_value()) << n << ": " << res.error().field << ": " << res.error().detail;
    ASSERT_FALSE(res->candidates.empty());
    for (const auto& c : res->candidates) expect_only_free(in.topo, c, res->npus_per_host_used);
    auto scorer = Scorer::create(in.topo, in.request);
    ASSERT_TRUE(scorer.has_value());
    const double best = res->candidates[0].total_seconds;
    const double opt = exhaustive_optimum(in.topo, *scorer, &evaluated);
    ASSERT_GE(best, opt * (1 - 1e-9)) << n;  // nothing beats the optimum
    if (best <= opt * 1.02) {
      ++within;
    } else {
      std::printf("instance %d: best %.6g s vs optimum %.6g s (%s)\n", n, best, opt,
                  res->candidates[0].explanation.c_str());
    }
    auto ff = first_fit(in.topo, in.request);
    ASSERT_TRUE(ff.has_value());
    auto ffc = scorer->score(*ff);
    ASSERT_TRUE(ffc.has_value());
    if (std::getenv("HSNS_SEARCH_DEBUG") != nullptr) {
      std::printf("%d k=%u b=%u ff=%zu search=%zu ff_cost=%.4g best=%.4g tp%u pp%u dp%u cp%u ep%u | %s\n", n,
                  scorer->hosts_needed(), scorer->block_hosts(), spread(*ffc), spread(res->candidates[0]),
                  ffc->total_seconds, best, in.request.parallel.tp, in.request.parallel.pp,
                  in.request.parallel.dp, in.request.parallel.cp, in.request.parallel.ep,
                  res->candidates[0].explanation.c_str());
    }
    ff_spread += static_cast<double>(spread(*ffc));
    // Topology-oblivious first-fit when host names say nothing about placement: free hosts in a seeded
    // random order (as with names assigned at purchase time rather than by rack).
    std::vector<NodeId> shuffled = scorer->usable();
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    shuffled.resize(scorer->hosts_needed());
    auto rnd = scorer->score(shuffled);
    ASSERT_TRUE(rnd.has_value());
    random_spread += static_cast<double>(spread(*rnd));
    search_spread += static_cast<double>(spread(res->candidates[0]));
  }
  std::printf(
      "within 2%% of the optimum: %d / %d; mean DP/PP spread: search %.3f, first-fit by name %.3f "
      "(x%.2f), first-fit in random order %.3f (x%.2f); %llu exhaustive evaluations\n",
      within, kInstances, search_spread / kInstances, ff_spread / kInstances, ff_spread / search_spread,
      random_spread / kInstances, random_spread / search_spread, static_cast<unsigned long long>(evaluated));
  EXPECT_GE(within, kInstances * 95 / 100);
  EXPECT_GE(ff_spread, search_spread);
  EXPECT_GE(random_spread, 1.5 * search_spread);
}

// The per-SU count enumeration finds the same optimum as walking every C(n, k) subset.
TEST(SearchQuality, CountVectorsMatchPlainSubsetEnumeration) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int n = 0; checked < 25 && n < 1000; ++n) {
    Instance in = random_instance(rng);
    auto scorer = Scorer::create(in.topo, in.request);
    ASSERT_TRUE(scorer.has_value());
    const auto& pool = scorer->usable();
    const std::uint32_t k = scorer->hosts_needed();
    if (pool.size() > 16) continue;
    ++checked;
    std::uint64_t evaluated = 0;
    const double by_counts = exhaustive_optimum(in.topo, *scorer, &evaluated);
    double by_subsets = 1e300;
    std::vector<int> pick(pool.size(), 0);
    std::fill(pick.end() - k, pick.end(), 1);
    do {
      std::vector<NodeId> chosen;
      for (std::size_t i = 0; i < pool.size(); ++i) {
        if (pick[i]) chosen.push_back(pool[i]);
      }
      for (const auto& order : {scorer->canonical_order(chosen), chosen}) {
        auto c = scorer->score(order);
        ASSERT_TRUE(c.has_value());
        by_subsets = std::min(by_subsets, c->total_seconds);
      }
    } while (std::next_permutation(pick.begin(), pick.end()));
    EXPECT_DOUBLE_EQ(by_counts, by_subsets) << "instance " << n;
  }
  EXPECT_EQ(checked, 25);
}

}  // namespace
}  // namespace hsns::search
