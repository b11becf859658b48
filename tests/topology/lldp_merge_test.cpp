#include "topology/lldp_merge.h"

#include <gtest/gtest.h>

#include "topology/import.h"

namespace hsns::topology {
namespace {

// node1: eth0 on leaf0 port Eth1/1, eth1 on leaf1 without a port; node2: eth0 on leaf0, eth1 unknown.
constexpr const char* kFile = R"(
version: 1
defaults: {bandwidth_gbps: 400, latency_us: 0.5}
switches:
  - {name: spine0, tier: spine}
  - {name: leaf0, tier: leaf}
  - {name: leaf1, tier: leaf}
hosts:
  - name: node1
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: Eth1/1}
      - {index: 1, port: eth1, leaf: leaf1}
  - name: node2
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: Eth1/2}
      - {index: 1, port: eth1}
links:
  - {lower: leaf0, upper: spine0}
  - {lower: leaf1, upper: spine0}
)";

TEST(LldpMerge, ConfirmsAddsAndReportsConflicts) {
  const Topology file = import_topology(kFile).value();
  const std::vector<LldpObservation> seen = {
      {"node1", "eth0", std::nullopt, "leaf0", "Eth1/1"},  // 0: confirms
      {"node1", "eth1", std::nullopt, "leaf1", "Eth1/7"},  // 1: confirms, fills in the leaf port
      {"node2", "", 1u, "leaf1", "Eth1/2"},                // 2: new link
      {"node2", "eth0", std::nullopt, "leaf1", "Eth1/2"},  // 3: conflict: the file says leaf0
      {"node3", "eth0", std::nullopt, "leaf0", "Eth1/9"},  // 4: unknown host
      {"node1", "eth0", std::nullopt, "leaf0", "Eth1/5"},  // 5: conflicts with observation 0
      {"node2", "eth0", std::nullopt, "spine0", "Eth9"},   // 6: not a leaf
      {"node1", "eth7", std::nullopt, "leaf0", "Eth1/1"},  // 7: unknown port
  };
  auto merged = merge_lldp(file, seen);
  ASSERT_TRUE(merged.has_value()) << merged.error().detail;
  const MergeReport& r = merged->report;
  EXPECT_EQ(r.confirmed, 2u);
  EXPECT_EQ(r.completed, 1u);
  EXPECT_EQ(r.added, 1u);
  ASSERT_EQ(r.conflicts.size(), 3u);
  EXPECT_EQ(r.conflicts[0].observation, 3u);
  EXPECT_EQ(r.conflicts[0].field, "observations[3].neighbor_system");
  EXPECT_EQ(r.conflicts[0].expected, "leaf0");
  EXPECT_EQ(r.conflicts[0].observed, "leaf1");
  EXPECT_EQ(r.conflicts[1].observation, 5u);
  EXPECT_EQ(r.conflicts[1].expected, "leaf0 Eth1/1");
  EXPECT_EQ(r.conflicts[2].field, "observations[6].neighbor_system");
  ASSERT_EQ(r.unresolved.size(), 2u);
  EXPECT_EQ(r.unresolved[0].field, "observations[4].host");
  EXPECT_EQ(r.unresolved[1].field, "observations[7].port");

  const Topology& t = merged->topology;
  EXPECT_EQ(t.links().size(), file.links().size() + 1);
  // The conflicting link is unchanged: node2 eth0 still on leaf0.
  const Node& node2 = t.node(t.find("node2").value());
  EXPECT_EQ(t.node(t.link(node2.npus[0].link).upper).name, "leaf0");
  // The new link: node2 eth1 on leaf1 port Eth1/2, with the host's existing link speed.
  const Link& added = t.link(node2.npus[1].link);
  EXPECT_EQ(t.node(added.upper).name, "leaf1");
  EXPECT_EQ(added.upper_port, "Eth1/2");
  EXPECT_EQ(added.lower_port, "eth1");
  EXPECT_DOUBLE_EQ(added.bandwidth_gbps, 400.0);
  // The completed port.
  const Node& node1 = t.node(t.find("node1").value());
  EXPECT_EQ(t.link(node1.npus[1].link).upper_port, "Eth1/7");
  // Ids are stable: every old link keeps its id and ends.
  for (const Link& old : file.links()) {
    EXPECT_EQ(t.link(old.id).lower, old.lower);
    EXPECT_EQ(t.link(old.id).upper, old.upper);
  }
  // The input is untouched.
  EXPECT_EQ(file.node(file.find("node2").value()).npus[1].link, kNoLink);
  // And the merged model answers queries with the new link: node2 eth1 -> node1 eth1 on leaf1.
  auto path = t.path({node2.id, 1}, {node1.id, 1});
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->top, Tier::kLeaf);
}

TEST(LldpMerge, RejectsMalformedObservations) {
  const Topology file = import_topology(kFile).value();
  auto merged =
      merge_lldp(file, {{"", "eth0", std::nullopt, "leaf0", "x"}, {"node1", "", std::nullopt, "", "x"}});
  ASSERT_FALSE(merged.has_value());
  ASSERT_EQ(merged.error().fields.size(), 3u);
  EXPECT_EQ(merged.error().fields[0].field, "observations[0].host");
  EXPECT_EQ(merged.error().fields[1].field, "observations[1].port");
  EXPECT_EQ(merged.error().fields[2].field, "observations[1].neighbor_system");
}

}  // namespace
}  // namespace hsns::topology
