#include "topology/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "topology/export.h"
#include "topology/generator.h"

namespace hsns::topology {
namespace {

constexpr const char* kValidYaml = R"(
version: 1
name: lab
defaults: {bandwidth_gbps: 200, latency_us: 0.8}
switches:
  - {name: spine0, tier: spine}
  - {name: leaf0, tier: leaf}
  - {name: leaf1, tier: leaf, state: sub-health}
hosts:
  - name: node1
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: Eth1/1}
      - {index: 1, port: eth1, leaf: leaf1, bandwidth_gbps: 400}
  - name: node2
    state: allocated
    npus:
      - {index: 0, port: eth0, leaf: leaf0, link_state: isolated}
      - {index: 1, port: eth1, state: isolated}
links:
  - {lower: leaf0, upper: spine0, bandwidth_gbps: 400, lower_port: Eth2/1, upper_port: Eth1/1}
  - {lower: leaf1, upper: spine0}
)";

std::vector<std::string> fields(const Error& e) {
  std::vector<std::string> out;
  for (const auto& f : e.fields) out.push_back(f.field);
  return out;
}

TEST(Import, ReadsYaml) {
  auto t = import_topology(kValidYaml);
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->name(), "lab");
  EXPECT_EQ(t->hosts().size(), 2u);
  EXPECT_EQ(t->links().size(), 5u);
  const Node& node1 = t->node(t->find("node1").value());
  ASSERT_EQ(node1.npus.size(), 2u);
  const Link& first = t->link(node1.npus[0].link);
  EXPECT_EQ(t->node(first.upper).name, "leaf0");
  EXPECT_EQ(first.upper_port, "Eth1/1");
  EXPECT_EQ(first.lower_port, "eth0");
  EXPECT_DOUBLE_EQ(first.bandwidth_gbps, 200.0);  // default
  EXPECT_DOUBLE_EQ(first.latency_us, 0.8);
  EXPECT_DOUBLE_EQ(t->link(node1.npus[1].link).bandwidth_gbps, 400.0);
  EXPECT_EQ(t->node(t->find("leaf1").value()).state, DeviceState::kSubHealth);
  const Node& node2 = t->node(t->find("node2").value());
  EXPECT_EQ(node2.state, DeviceState::kAllocated);
  EXPECT_EQ(t->link(node2.npus[0].link).state, DeviceState::kIsolated);
  EXPECT_EQ(node2.npus[1].state, DeviceState::kIsolated);
  EXPECT_EQ(node2.npus[1].link, kNoLink);
  EXPECT_EQ(t->lowest_common_tier(t->hosts()), Tier::kLeaf);
}

TEST(Import, ReadsJson) {
  const char* json = R"({"version": 1, "switches": [{"name": "leaf0", "tier": "leaf"}],
    "hosts": [{"name": "a", "npus": [{"index": 0, "port": "eth0", "leaf": "leaf0", "bandwidth_gbps": 100}]}]})";
  auto t = import_topology(json);
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->links().size(), 1u);
  EXPECT_DOUBLE_EQ(t->links()[0].bandwidth_gbps, 100.0);
  // Explicit format too.
  EXPECT_TRUE(import_topology(json, FileFormat::kJson).has_value());
}

TEST(Import, ManagementAddressesAreCanonicalUniqueAndFindTheSwitch) {
  auto t = import_topology(R"(
version: 1
defaults: {bandwidth_gbps: 100}
switches:
  - {name: leaf0, tier: leaf, management_address: 127.20.0.1}
  - {name: leaf1, tier: leaf, management_address: "2001:DB8:0::0a"}
  - {name: spine0, tier: spine}
hosts: [{name: a, npus: [{index: 0, port: eth0, leaf: leaf0}]}]
)");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->node(*t->find("leaf1")).management_address, "2001:db8::a");
  EXPECT_EQ(t->find_by_management_address("127.20.0.1"), t->find("leaf0"));
  EXPECT_EQ(t->find_by_management_address("2001:db8::000a"), t->find("leaf1"));
  EXPECT_EQ(t->find_by_management_address("127.20.0.2"), std::nullopt);
  EXPECT_EQ(t->find_by_management_address("leaf0"), std::nullopt);
  // The export carries it, so a stored topology keeps it.
  auto again = import_topology(export_topology_document(*t).dump());
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(again->find_by_management_address("2001:db8::a"), again->find("leaf1"));

  auto bad = import_topology(R"(
version: 1
defaults: {bandwidth_gbps: 100}
switches:
  - {name: leaf0, tier: leaf, management_address: 127.20.0.1}
  - {name: leaf1, tier: leaf, management_address: 127.020.0.1x}
  - {name: leaf2, tier: leaf, management_address: 127.20.0.1}
hosts: []
)");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(fields(bad.error()),
            (std::vector<std::string>{"switches[1].management_address", "switches[2].management_address"}));
  EXPECT_NE(bad.error().fields[1].reason.find("leaf0"), std::string::npos);
}

TEST(Import, UnknownKeysNameTheirPath) {
  auto t = import_topology(R"(
version: 1
colour: blue
switches: [{name: leaf0, tier: leaf}]
hosts:
  - name: a
    npus: [{index: 0, port: eth0, leaf: leaf0, bandwidth_gbps: 1, speed: 9}]
)");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, Error::Kind::invalid);
  EXPECT_EQ(fields(t.error()), (std::vector<std::string>{"hosts[0].npus[0].speed", "colour"}));
}

TEST(Import, DanglingReferencesNameTheirPath) {
  auto t = import_topology(R"(
version: 1
defaults: {bandwidth_gbps: 100}
switches: [{name: leaf0, tier: leaf}, {name: spine0, tier: spine}]
hosts:
  - name: a
    npus: [{index: 0, port: eth0, leaf: leaf9}, {index: 1, port: eth1, leaf: spine0}]
links:
  - {lower: leaf0, upper: spine7}
)");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(fields(t.error()),
            (std::vector<std::string>{"hosts[0].npus[0].leaf", "hosts[0].npus[1].leaf", "links[0].upper"}));
  EXPECT_NE(t.error().fields[0].reason.find("leaf9"), std::string::npos);
  EXPECT_NE(t.error().fields[1].reason.find("not a leaf"), std::string::npos);
}

TEST(Import, DuplicateNamesAreErrors) {
  auto hosts = import_topology(R"({"version": 1, "switches": [{"name": "x", "tier": "leaf"}],
    "hosts": [{"name": "a"}, {"name": "a"}, {"name": "x"}]})");
  ASSERT_FALSE(hosts.has_value());
  EXPECT_EQ(fields(hosts.error()), (std::vector<std::string>{"hosts[1].name", "hosts[2].name"}));
  auto switches = import_topology(R"({"version": 1, "switches": [{"name": "s", "tier": "leaf"},
    {"name": "s", "tier": "spine"}], "hosts": []})");
  ASSERT_FALSE(switches.has_value());
  EXPECT_EQ(fields(switches.error()), (std::vector<std::string>{"switches[1].name"}));
}

TEST(Import, TypeAndValueErrors) {
  auto t = import_topology(R"(
version: 2
switches: [{name: leaf0, tier: rack}, {tier: leaf}]
hosts:
  - name: a
    npus: [{index: -1, port: eth0}, {index: 1, port: eth1, state: broken}, {index: 2, port: eth2, leaf: leaf0, bandwidth_gbps: 0}]
links: {}
)");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(fields(t.error()),
            (std::vector<std::string>{"version", "switches[0].tier", "switches[1].name",
                                      "hosts[0].npus[0].index", "hosts[0].npus[1].state",
                                      "hosts[0].npus[2].leaf", "hosts[0].npus[2].bandwidth_gbps", "links"}));
}

TEST(Import, LinkBetweenNonAdjacentTiers) {
  auto t = import_topology(R"({"version": 1, "defaults": {"bandwidth_gbps": 100},
    "switches": [{"name": "leaf0", "tier": "leaf"}, {"name": "core0", "tier": "core"}], "hosts": [],
    "links": [{"lower": "leaf0", "upper": "core0"}]})");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(fields(t.error()), (std::vector<std::string>{"links[0].upper"}));
}

TEST(Import, MalformedDocuments) {
  EXPECT_EQ(import_topology("{not json").error().kind, Error::Kind::malformed);
  EXPECT_EQ(import_topology("a: [1, 2").error().kind, Error::Kind::malformed);
  EXPECT_EQ(import_topology("- 1\n- 2\n").error().detail, "a topology document must be a mapping");
  auto missing = import_topology("name: x\n");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(fields(missing.error()), (std::vector<std::string>{"version", "switches", "hosts"}));
  auto dup_key = import_topology("version: 1\nversion: 1\n");
  ASSERT_FALSE(dup_key.has_value());
  EXPECT_EQ(fields(dup_key.error()), (std::vector<std::string>{"version"}));
}

}  // namespace
}  // namespace hsns::topology

namespace hsns::topology {
namespace {

// Everything about a link except ids, by names, sorted: equal for equal models.
std::vector<std::string> canonical_links(const Topology& t) {
  std::vector<std::string> out;
  for (const Link& l : t.links()) {
    out.push_back(t.node(l.lower).name + "|" + l.lower_port + "|" + t.node(l.upper).name + "|" +
                  l.upper_port + "|" + (l.npu ? std::to_string(*l.npu) : "-") + "|" +
                  std::to_string(l.bandwidth_gbps) + "|" + std::to_string(l.latency_us) + "|" +
                  std::string(to_string(l.state)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ImportRoundTrip, ExportedFileReadsBackToTheSameModel) {
  ClosParams p;
  p.hosts = 40;
  p.npus_per_host = 4;
  p.hosts_per_su = 16;
  p.superpods = 2;
  p.spines_per_plane = 2;
  p.cores = 2;
  p.fabric_link_gbps = 400;
  p.leaf_oversubscription = 2;  // 16 x 400 / 2 / 2 = 1600 = 4 x 400 per pair
  Topology original = generate_clos(p).value();
  const NodeId h3 = original.find("host003").value();
  original.set_node_state(h3, DeviceState::kAllocated);
  original.set_npu_state({h3, 2}, DeviceState::kSubHealth);
  original.set_link_state(original.node(h3).npus[1].link, DeviceState::kIsolated);
  original.set_node_state(original.find("spine01").value(), DeviceState::kIsolated);

  const std::string yaml = export_topology_yaml(original);
  auto back = import_topology(yaml);
  ASSERT_TRUE(back.has_value()) << back.error().detail;
  EXPECT_EQ(back->name(), "synthetic");
  EXPECT_EQ(back->nodes().size(), original.nodes().size());
  EXPECT_EQ(canonical_links(*back), canonical_links(original));
  for (const Node& node : original.nodes()) {
    const Node& other = back->node(back->find(node.name).value());
    EXPECT_EQ(other.tier, node.tier) << node.name;
    EXPECT_EQ(other.state, node.state) << node.name;
    ASSERT_EQ(other.npus.size(), node.npus.size());
    for (std::size_t i = 0; i < node.npus.size(); ++i) {
      EXPECT_EQ(other.npus[i].port, node.npus[i].port);
      EXPECT_EQ(other.npus[i].state, node.npus[i].state);
    }
  }
  // Same model, same scheduler export.
  EXPECT_EQ(export_slurm_tree(*back), export_slurm_tree(original));
  // And the document is in the documented schema: a sample line.
  EXPECT_NE(
      yaml.find("- {index: 1, port: eth1, leaf: leaf001, leaf_port: Eth1/3, bandwidth_gbps: 400, latency_us: "
                "0.5, link_state: isolated}"),
      std::string::npos)
      << yaml.substr(0, 2000);
}

}  // namespace
}  // namespace hsns::topology
