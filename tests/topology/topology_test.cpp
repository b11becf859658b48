#include "topology/topology.h"

#include <gtest/gtest.h>

#include "small_topology.h"

namespace hsns::topology {
namespace {

using testing::small_topology;

class SmallTopology : public ::testing::Test {
 protected:
  NodeId id(const std::string& name) const { return t.find(name).value(); }
  std::vector<std::string> names(std::span<const NodeId> ids) const {
    std::vector<std::string> out;
    for (NodeId i : ids) out.push_back(t.node(i).name);
    return out;
  }
  std::vector<std::string> link_names(const std::vector<LinkId>& links) const {
    std::vector<std::string> out;
    for (LinkId l : links) out.push_back(t.node(t.link(l).lower).name + "-" + t.node(t.link(l).upper).name);
    return out;
  }
  Topology t = small_topology();
};

TEST_F(SmallTopology, CountsNodesByTier) {
  EXPECT_EQ(t.hosts().size(), 5u);
  EXPECT_EQ(t.switches(Tier::kLeaf).size(), 6u);
  EXPECT_EQ(t.switches(Tier::kSpine).size(), 3u);
  EXPECT_EQ(t.switches(Tier::kCore).size(), 1u);
  EXPECT_EQ(t.links().size(), 3u + 10u + 8u);
  EXPECT_EQ(t.top_tier(), Tier::kCore);
}

TEST_F(SmallTopology, DomainsPerTier) {
  // SUs: {h1,h2}, {h3}, {h4}, {h5 alone}; pods: {h1,h2,h3}, {h4}, {h5}; fabric: {h1..h4}, {h5}.
  EXPECT_EQ(t.domain_count(Tier::kLeaf), 4u);
  EXPECT_EQ(t.domain_count(Tier::kSpine), 3u);
  EXPECT_EQ(t.domain_count(Tier::kCore), 2u);
  EXPECT_EQ(t.domain(id("h1"), Tier::kLeaf), t.domain(id("h2"), Tier::kLeaf));
  EXPECT_NE(t.domain(id("h1"), Tier::kLeaf), t.domain(id("h3"), Tier::kLeaf));
  EXPECT_EQ(t.domain(id("h1"), Tier::kLeaf), 0u);
  EXPECT_EQ(t.domain(id("h3"), Tier::kLeaf), 1u);
  EXPECT_EQ(names(t.domain_hosts(Tier::kSpine, 0)), (std::vector<std::string>{"h1", "h2", "h3"}));
}

TEST_F(SmallTopology, LowestCommonTier) {
  const NodeId h1 = id("h1"), h2 = id("h2"), h3 = id("h3"), h4 = id("h4"), h5 = id("h5");
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{h1}), Tier::kHost);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{h1, h2}), Tier::kLeaf);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{h1, h2, h3}), Tier::kSpine);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{h2, h4}), Tier::kCore);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{h1, h5}), std::nullopt);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{}), std::nullopt);
  EXPECT_EQ(t.lowest_common_tier(std::vector<NodeId>{id("leaf0")}), std::nullopt);
  const auto tiers = t.lowest_common_tiers({{h1, h2}, {h3, h1}, {h4}});
  ASSERT_EQ(tiers.size(), 3u);
  EXPECT_EQ(tiers[0], Tier::kLeaf);
  EXPECT_EQ(tiers[1], Tier::kSpine);
  EXPECT_EQ(tiers[2], Tier::kHost);
}

TEST_F(SmallTopology, HostsUnderSwitch) {
  EXPECT_EQ(names(t.hosts_under(id("leaf0"))), (std::vector<std::string>{"h1", "h2"}));
  EXPECT_EQ(names(t.hosts_under(id("leaf3"))), (std::vector<std::string>{"h3"}));
  EXPECT_EQ(names(t.hosts_under(id("spine1"))), (std::vector<std::string>{"h1", "h2", "h3"}));
  EXPECT_EQ(names(t.hosts_under(id("spine2"))), (std::vector<std::string>{"h4"}));
  EXPECT_EQ(names(t.hosts_under(id("core0"))), (std::vector<std::string>{"h1", "h2", "h3", "h4"}));
  EXPECT_EQ(names(t.hosts_under(id("h5"))), (std::vector<std::string>{"h5"}));
}

TEST_F(SmallTopology, FreeNpusFollowState) {
  const NodeId h1 = id("h1");
  EXPECT_EQ(t.free_npus(h1), 2u);
  ASSERT_TRUE(t.set_npu_state({h1, 1}, DeviceState::kAllocated));
  EXPECT_EQ(t.free_npu_indices(h1), (std::vector<std::uint32_t>{0}));
  t.set_link_state(t.npu({h1, 0})->link, DeviceState::kIsolated);
  EXPECT_EQ(t.free_npus(h1), 0u);
  const NodeId h2 = id("h2");
  t.set_node_state(h2, DeviceState::kSubHealth);
  EXPECT_EQ(t.free_npus(h2), 0u);
  EXPECT_FALSE(t.set_npu_state({h2, 7}, DeviceState::kAllocated));
  EXPECT_EQ(t.free_npus(id("h3")), 2u);
}

TEST_F(SmallTopology, Oversubscription) {
  // leaf0: down 2 x 100, up 2 x 50 -> 2.0; spine0: down 4 x 50, up 100 -> 2.0; spine2: down 2 x 50, up 100
  // -> 1.0.
  EXPECT_DOUBLE_EQ(t.oversubscription(id("leaf0")), 2.0);
  EXPECT_DOUBLE_EQ(t.oversubscription(id("leaf3")), 1.0);  // one host: down 100, up 100
  EXPECT_DOUBLE_EQ(t.oversubscription(id("spine2")), 1.0);
  EXPECT_DOUBLE_EQ(t.tier_oversubscription(Tier::kLeaf), 2.0);
  EXPECT_DOUBLE_EQ(t.tier_oversubscription(Tier::kSpine), 2.0);
  EXPECT_DOUBLE_EQ(t.oversubscription(id("core0")), 0.0);
}

TEST_F(SmallTopology, SameRailSameLeafStaysOnLeaf) {
  auto p = t.path({id("h1"), 0}, {id("h2"), 0});
  ASSERT_TRUE(p.has_value()) << p.error().detail;
  EXPECT_EQ(p->top, Tier::kLeaf);
  EXPECT_EQ(link_names(p->links), (std::vector<std::string>{"h1-leaf0", "h2-leaf0"}));
  EXPECT_TRUE(p->stages.empty());
}

TEST_F(SmallTopology, CrossRailGoesViaSpineWithEcmpChoice) {
  auto p = t.path({id("h1"), 0}, {id("h2"), 1});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->top, Tier::kSpine);
  EXPECT_EQ(link_names(p->links),
            (std::vector<std::string>{"h1-leaf0", "leaf0-spine0", "leaf1-spine0", "h2-leaf1"}));
  ASSERT_EQ(p->stages.size(), 2u);
  EXPECT_EQ(p->stages[0].at, id("leaf0"));
  EXPECT_TRUE(p->stages[0].upward);
  EXPECT_EQ(link_names(p->stages[0].candidates), (std::vector<std::string>{"leaf0-spine0", "leaf0-spine1"}));
  EXPECT_FALSE(p->stages[1].upward);
  EXPECT_EQ(p->stages[1].candidates.size(), 1u);

  const std::uint32_t choose_second[] = {1};
  auto q = t.path({id("h1"), 0}, {id("h2"), 1}, choose_second);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(link_names(q->links),
            (std::vector<std::string>{"h1-leaf0", "leaf0-spine1", "leaf1-spine1", "h2-leaf1"}));
}

TEST_F(SmallTopology, CrossLeafSameRail) {
  auto p = t.path({id("h1"), 0}, {id("h3"), 0});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->top, Tier::kSpine);
  EXPECT_EQ(link_names(p->links),
            (std::vector<std::string>{"h1-leaf0", "leaf0-spine0", "leaf2-spine0", "h3-leaf2"}));
}

TEST_F(SmallTopology, CrossPodGoesViaCore) {
  auto p = t.path({id("h1"), 0}, {id("h4"), 1});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->top, Tier::kCore);
  EXPECT_EQ(link_names(p->links), (std::vector<std::string>{"h1-leaf0", "leaf0-spine0", "spine0-core0",
                                                            "spine2-core0", "leaf5-spine2", "h4-leaf5"}));
  ASSERT_EQ(p->stages.size(), 4u);
  EXPECT_EQ(p->stages[0].candidates.size(), 2u);  // spine0 or spine1
  EXPECT_EQ(p->stages[1].candidates.size(), 1u);  // the one core
}

TEST_F(SmallTopology, IsolatedUplinkIsNoCandidate) {
  const LinkId up = t.path({id("h1"), 0}, {id("h2"), 1})->links[1];
  t.set_link_state(up, DeviceState::kIsolated);
  auto p = t.path({id("h1"), 0}, {id("h2"), 1});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(link_names(p->stages[0].candidates), (std::vector<std::string>{"leaf0-spine1"}));
  // Isolate the other one too: no path.
  t.set_link_state(p->links[1], DeviceState::kIsolated);
  auto none = t.path({id("h1"), 0}, {id("h2"), 1});
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().kind, Error::Kind::unprocessable);
}

TEST_F(SmallTopology, PathErrors) {
  EXPECT_EQ(t.path({id("h1"), 9}, {id("h2"), 0}).error().kind, Error::Kind::not_found);
  EXPECT_EQ(t.path({id("leaf0"), 0}, {id("h2"), 0}).error().kind, Error::Kind::not_found);
  auto unlinked = t.path({id("h1"), 0}, {id("h5"), 0});
  ASSERT_FALSE(unlinked.has_value());
  EXPECT_EQ(unlinked.error().field(), "dst");
  auto same_host = t.path({id("h1"), 0}, {id("h1"), 1});
  ASSERT_TRUE(same_host.has_value());
  EXPECT_EQ(same_host->top, Tier::kHost);
  EXPECT_TRUE(same_host->links.empty());
}

TEST(TopologyBuilder, RejectsBadLinksNamingTheField) {
  TopologyBuilder b;
  const NodeId leaf = b.add_switch("leaf0", Tier::kLeaf, DeviceState::kHealthy, "switches[0]");
  const NodeId core = b.add_switch("core0", Tier::kCore, DeviceState::kHealthy, "switches[1]");
  const NodeId host = b.add_host("h1", DeviceState::kHealthy, "hosts[0]");
  b.add_switch("leaf0", Tier::kLeaf, DeviceState::kHealthy, "switches[2]");
  b.add_npu(host, Npu{0, "eth0", DeviceState::kHealthy, kNoLink}, "hosts[0].npus[0]");
  b.add_npu(host, Npu{0, "eth0", DeviceState::kHealthy, kNoLink}, "hosts[0].npus[1]");
  Link skip;
  skip.lower = leaf;
  skip.upper = core;
  skip.bandwidth_gbps = 100;
  b.add_link(skip, "links[0]");
  Link no_npu;
  no_npu.lower = host;
  no_npu.upper = leaf;
  no_npu.bandwidth_gbps = 0;
  b.add_link(no_npu, "links[1]");
  auto result = std::move(b).build();
  ASSERT_FALSE(result.has_value());
  std::vector<std::string> fields;
  for (const auto& f : result.error().fields) fields.push_back(f.field);
  EXPECT_EQ(fields,
            (std::vector<std::string>{"switches[2].name", "hosts[0].npus[1].index", "hosts[0].npus[1].port",
                                      "links[0].upper", "links[1].bandwidth_gbps", "links[1].npu"}));
  EXPECT_EQ(result.error().kind, Error::Kind::invalid);
}

TEST(TopologyEnums, RoundTripNames) {
  for (Tier tier : {Tier::kHost, Tier::kLeaf, Tier::kSpine, Tier::kCore})
    EXPECT_EQ(parse_tier(to_string(tier)), tier);
  for (DeviceState s :
       {DeviceState::kHealthy, DeviceState::kSubHealth, DeviceState::kIsolated, DeviceState::kAllocated}) {
    EXPECT_EQ(parse_state(to_string(s)), s);
  }
  EXPECT_EQ(parse_state("broken"), std::nullopt);
  EXPECT_EQ(to_string(DeviceState::kSubHealth), "sub-health");
}

}  // namespace
}  // namespace hsns::topology
