#include "topology/generator.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topology/export.h"

namespace hsns::topology {
namespace {

std::size_t links_between(const Topology& t, Tier lower, Tier upper) {
  std::size_t n = 0;
  for (const Link& l : t.links()) n += t.node(l.lower).tier == lower && t.node(l.upper).tier == upper;
  return n;
}

double capacity_between(const Topology& t, const std::string& lower, const std::string& upper) {
  double sum = 0;
  for (const Link& l : t.links()) {
    if (t.node(l.lower).name == lower && t.node(l.upper).name == upper) sum += l.bandwidth_gbps;
  }
  return sum;
}

TEST(Generator, TwoTierCounts) {
  ClosParams p;
  p.hosts = 64;  // 2 SUs of 32, 8 rails, 8 spines
  auto t = generate_clos(p);
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->hosts().size(), 64u);
  EXPECT_EQ(t->switches(Tier::kLeaf).size(), 16u);
  EXPECT_EQ(t->switches(Tier::kSpine).size(), 8u);
  EXPECT_EQ(t->switches(Tier::kCore).size(), 0u);
  EXPECT_EQ(links_between(*t, Tier::kHost, Tier::kLeaf), 512u);
  EXPECT_EQ(links_between(*t, Tier::kLeaf, Tier::kSpine), 128u);
  // Leaf down 32 x 400 = 12800 Gbit/s over 8 spines at 1:1 -> 1600 per pair.
  EXPECT_DOUBLE_EQ(capacity_between(*t, "leaf000", "spine00"), 1600.0);
  EXPECT_DOUBLE_EQ(t->tier_oversubscription(Tier::kLeaf), 1.0);
  EXPECT_EQ(t->domain_count(Tier::kLeaf), 2u);
  EXPECT_EQ(t->domain_count(Tier::kSpine), 1u);
  EXPECT_EQ(t->top_tier(), Tier::kSpine);
  EXPECT_EQ(t->node(t->hosts()[0]).name, "host001");
  EXPECT_EQ(t->node(t->hosts()[63]).name, "host064");
}

TEST(Generator, RailOptimisedWiring) {
  ClosParams p;
  p.hosts = 64;
  auto t = generate_clos(p).value();
  // NPU i of every host of SU 1 is on leaf 8 + i.
  for (std::uint32_t h = 32; h < 64; ++h) {
    const Node& host = t.node(t.hosts()[h]);
    ASSERT_EQ(host.npus.size(), 8u);
    for (const Npu& npu : host.npus) {
      EXPECT_EQ(t.node(t.link(npu.link).upper).name,
                "leaf" + std::string(npu.index + 8 < 10 ? "00" : "0") + std::to_string(npu.index + 8));
      EXPECT_EQ(npu.port, "eth" + std::to_string(npu.index));
    }
  }
  const NodeId a = t.find("host001").value();
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{a, t.find("host032").value()}), Tier::kLeaf);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{a, t.find("host033").value()}), Tier::kSpine);
  auto path = t.path({a, 3}, {t.find("host033").value(), 3});
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->links.size(), 4u);
  EXPECT_EQ(path->stages.at(0).candidates.size(), 8u);  // one uplink per spine
}

TEST(Generator, ParallelFabricLinksAndOversubscription) {
  ClosParams p;
  p.hosts = 64;
  p.fabric_link_gbps = 400;
  p.leaf_oversubscription = 2.0;  // 12800 / 2 / 8 = 800 per pair = 2 x 400
  auto t = generate_clos(p).value();
  EXPECT_EQ(links_between(t, Tier::kLeaf, Tier::kSpine), 16u * 8u * 2u);
  EXPECT_DOUBLE_EQ(capacity_between(t, "leaf003", "spine05"), 800.0);
  EXPECT_DOUBLE_EQ(t.tier_oversubscription(Tier::kLeaf), 2.0);
  for (const Link& l : t.links()) {
    if (t.node(l.lower).tier == Tier::kLeaf) {
      EXPECT_DOUBLE_EQ(l.bandwidth_gbps, 400.0);
    }
  }
  // ECMP candidates at the leaf: every parallel link to every spine.
  auto path = t.path({t.find("host001").value(), 0}, {t.find("host040").value(), 0});
  EXPECT_EQ(path->stages.at(0).candidates.size(), 16u);
}

TEST(Generator, ThreeTierWithSuperpods) {
  ClosParams p;
  p.hosts = 256;  // 8 SUs, 4 per super-pod
  p.superpods = 2;
  p.spines_per_plane = 4;
  p.cores = 4;
  p.spine_oversubscription = 4.0;
  auto t = generate_clos(p).value();
  EXPECT_EQ(t.switches(Tier::kLeaf).size(), 64u);
  EXPECT_EQ(t.switches(Tier::kSpine).size(), 8u);
  EXPECT_EQ(t.switches(Tier::kCore).size(), 4u);
  EXPECT_EQ(links_between(t, Tier::kHost, Tier::kLeaf), 2048u);
  EXPECT_EQ(links_between(t, Tier::kLeaf, Tier::kSpine), 64u * 4u);
  EXPECT_EQ(links_between(t, Tier::kSpine, Tier::kCore), 8u * 4u);
  // Spine down: 32 leaves x 3200 = 102400; up = 102400 / 4 over 4 cores = 6400 per pair.
  EXPECT_DOUBLE_EQ(capacity_between(t, "spine00", "core00"), 6400.0);
  EXPECT_DOUBLE_EQ(t.tier_oversubscription(Tier::kSpine), 4.0);
  EXPECT_EQ(t.domain_count(Tier::kSpine), 2u);
  EXPECT_EQ(t.domain_count(Tier::kCore), 1u);
  const NodeId a = t.find("host001").value();
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{a, t.find("host128").value()}), Tier::kSpine);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{a, t.find("host129").value()}), Tier::kCore);
  auto path = t.path({a, 0}, {t.find("host200").value(), 5});
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->top, Tier::kCore);
  EXPECT_EQ(path->links.size(), 6u);
  EXPECT_EQ(path->stages.at(0).candidates.size(), 4u);  // 4 spines of the pod
  EXPECT_EQ(path->stages.at(1).candidates.size(), 4u);  // 4 cores
}

TEST(Generator, PartialScalableUnitAndUnevenPods) {
  ClosParams p;
  p.hosts = 40;
  p.hosts_per_su = 16;  // SUs of 16, 16, 8
  p.superpods = 2;      // pod 0 gets SUs 0 and 1, pod 1 gets SU 2
  p.spines_per_plane = 2;
  p.cores = 1;
  p.npus_per_host = 4;
  auto t = generate_clos(p).value();
  EXPECT_EQ(t.hosts().size(), 40u);
  EXPECT_EQ(t.switches(Tier::kLeaf).size(), 12u);
  EXPECT_EQ(t.domain_hosts(Tier::kLeaf, 2).size(), 8u);
  EXPECT_EQ(t.domain_hosts(Tier::kSpine, 0).size(), 32u);
  EXPECT_EQ(t.domain_hosts(Tier::kSpine, 1).size(), 8u);
}

TEST(Generator, DeterministicFromParameters) {
  ClosParams p;
  p.hosts = 100;
  p.superpods = 2;
  p.cores = 2;
  p.spines_per_plane = 2;
  EXPECT_EQ(export_json_graph(generate_clos(p).value()).dump(),
            export_json_graph(generate_clos(p).value()).dump());
}

TEST(Generator, RejectsBadParametersNamingTheField) {
  auto field = [](const ClosParams& p) { return generate_clos(p).error().fields.at(0).field; };
  ClosParams p;
  p.hosts_per_su = 0;
  EXPECT_EQ(field(p), "hosts_per_su");
  p = ClosParams{};
  p.hosts = 64;
  p.superpods = 2;
  EXPECT_EQ(field(p), "cores");
  p = ClosParams{};
  p.superpods = 2;  // one SU only
  p.cores = 1;
  EXPECT_EQ(field(p), "superpods");
  p = ClosParams{};
  p.hosts = 64;
  p.fabric_link_gbps = 300;  // 1600 per pair is not whole in 300s
  EXPECT_EQ(field(p), "fabric_link_gbps");
  p = ClosParams{};
  p.leaf_oversubscription = 0;
  EXPECT_EQ(field(p), "leaf_oversubscription");
}

TEST(Generator, TenThousandHosts) {
  ClosParams p;
  p.hosts = 10000;
  p.superpods = 4;
  p.spines_per_plane = 16;
  p.cores = 16;
  auto t = generate_clos(p);
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->hosts().size(), 10000u);
  EXPECT_EQ(t->switches(Tier::kLeaf).size(), 313u * 8u);  // ceil(10000 / 32) SUs
  EXPECT_EQ(t->switches(Tier::kSpine).size(), 64u);
  EXPECT_EQ(t->switches(Tier::kCore).size(), 16u);
  EXPECT_EQ(t->links().size(), 80000u + 313u * 8u * 16u + 64u * 16u);
  EXPECT_EQ(t->domain_count(Tier::kLeaf), 313u);
  EXPECT_EQ(t->domain_count(Tier::kSpine), 4u);
  EXPECT_EQ(t->hosts_under(t->find("core00").value()).size(), 10000u);
  EXPECT_EQ(t->node(t->hosts()[9999]).name, "host10000");
  EXPECT_EQ(t->lowest_common_tier(t->hosts()), Tier::kCore);
}

}  // namespace
}  // namespace hsns::topology
