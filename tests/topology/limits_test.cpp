// Regression tests for the size limits of topology documents and models (limits.h): hostile documents
// (YAML alias bombs, deep nesting, too many values) are refused while parsing, after a bounded number of
// values, and generator parameters whose derived counts are too large are refused by arithmetic alone.
#include "topology/limits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "topology/export.h"
#include "topology/generator.h"
#include "topology/import.h"
#include "topology/lldp_merge.h"

namespace hsns::topology {
namespace {

bool names(const Error& e, const std::string& field) {
  for (const auto& f : e.fields) {
    if (f.field == field) return true;
  }
  return false;
}

// The classic "billion laughs": nine levels of nine aliases, 9^9 (387 million) strings once expanded,
// in well under 500 bytes.
std::string alias_bomb() {
  std::string text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    text += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) text += std::string(k ? "," : "") + "*" + prev;
    text += "]\n";
  }
  return text;
}

TEST(DocumentLimits, AliasBombIsRefusedAtTheFirstAnchor) {
  const std::string bomb = alias_bomb();
  ASSERT_LT(bomb.size(), 500u);
  DocumentStats stats;
  auto read = read_topology_document(bomb, FileFormat::kYaml, kDocumentLimits, &stats);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().kind, Error::Kind::malformed);
  EXPECT_NE(read.error().detail.find("anchors and aliases are not supported"), std::string::npos)
      << read.error().detail;
  EXPECT_NE(read.error().detail.find("line 1"), std::string::npos) << read.error().detail;
  // The parse stopped at the first anchored value: nothing was expanded or even read past it.
  EXPECT_LE(stats.values, 2u);
  auto imported = import_topology(bomb);
  ASSERT_FALSE(imported.has_value());
  EXPECT_EQ(imported.error().kind, Error::Kind::malformed);
}

TEST(DocumentLimits, AliasesAndMergeKeysAreRefusedInOtherwiseValidDocuments) {
  // An alias without an anchor of its own on the value, and the `<<` merge idiom.
  const std::string merge = R"(version: 1
defaults: &d {bandwidth_gbps: 400}
switches: [{name: leaf0, tier: leaf}]
hosts:
  - name: h1
    npus: [{index: 0, port: eth0, leaf: leaf0, <<: *d}]
)";
  auto r = import_topology(merge);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Error::Kind::malformed);
  EXPECT_NE(r.error().detail.find("anchor"), std::string::npos) << r.error().detail;
  EXPECT_NE(r.error().detail.find("line 2"), std::string::npos) << r.error().detail;

  auto alias_only = read_topology_document("a: *x\n", FileFormat::kYaml);
  ASSERT_FALSE(alias_only.has_value());  // an undefined alias: refused (or a YAML error), never expanded
  EXPECT_EQ(alias_only.error().kind, Error::Kind::malformed);
}

TEST(DocumentLimits, DeepNestingIsRefusedAtTheLimit) {
  const std::string flow = std::string(100000, '[') + std::string(100000, ']');
  DocumentStats stats;
  auto yaml = read_topology_document(flow, FileFormat::kYaml, kDocumentLimits, &stats);
  ASSERT_FALSE(yaml.has_value());
  EXPECT_EQ(yaml.error().kind, Error::Kind::malformed);
  EXPECT_NE(yaml.error().detail.find("nested deeper than 32"), std::string::npos) << yaml.error().detail;
  EXPECT_EQ(stats.max_depth, kDocumentLimits.depth);
  EXPECT_LE(stats.values, kDocumentLimits.depth + 1);

  std::string block;
  for (int i = 0; i < 100; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  auto nested_maps = read_topology_document(block, FileFormat::kYaml, kDocumentLimits, &stats);
  ASSERT_FALSE(nested_maps.has_value());
  EXPECT_NE(nested_maps.error().detail.find("nested deeper than 32"), std::string::npos);

  const std::string json_text = std::string(100000, '[') + std::string(100000, ']');
  auto js = read_topology_document(json_text, FileFormat::kJson, kDocumentLimits, &stats);
  ASSERT_FALSE(js.has_value());
  EXPECT_EQ(js.error().kind, Error::Kind::malformed);
  EXPECT_NE(js.error().detail.find("nested deeper than 32"), std::string::npos) << js.error().detail;
  EXPECT_EQ(stats.max_depth, kDocumentLimits.depth);

  // 32 levels are fine.
  const std::string ok = std::string(32, '[') + std::string(32, ']');
  EXPECT_TRUE(read_topology_document(ok, FileFormat::kYaml).has_value());
  EXPECT_TRUE(read_topology_document(ok, FileFormat::kJson).has_value());
}

TEST(DocumentLimits, TooManyValuesStopTheParse) {
  DocumentLimits limits;
  limits.values = 1000;
  std::string yaml = "[";
  std::string json_text = "[";
  for (int i = 0; i < 5000; ++i) {
    yaml += i ? ",1" : "1";
    json_text += i ? ",1" : "1";
  }
  yaml += "]";
  json_text += "]";
  for (auto [format, text] : {std::pair{FileFormat::kYaml, yaml}, std::pair{FileFormat::kJson, json_text}}) {
    DocumentStats stats;
    auto r = read_topology_document(text, format, limits, &stats);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, Error::Kind::too_large);
    EXPECT_NE(r.error().detail.find("more than 1000 values"), std::string::npos) << r.error().detail;
    EXPECT_EQ(stats.values, 1001u);  // stopped at the first value over the limit
  }
  // Keys count too.
  std::string keys = "{";
  for (int i = 0; i < 600; ++i) keys += (i ? ",k" : "k") + std::to_string(i) + ": 1";
  keys += "}";
  EXPECT_EQ(read_topology_document(keys, FileFormat::kYaml, limits).error().kind, Error::Kind::too_large);
}

TEST(DocumentLimits, OversizedTextIsRefusedBeforeParsing) {
  DocumentLimits limits;
  limits.bytes = 128;
  limits.yaml_bytes = 64;
  DocumentStats stats;
  auto r = read_topology_document(std::string(65, ' '), FileFormat::kYaml, limits, &stats);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Error::Kind::too_large);
  EXPECT_NE(r.error().detail.find("65 bytes, more than the server's limit of 64 for YAML"), std::string::npos)
      << r.error().detail;
  EXPECT_EQ(stats.values, 0u);
  EXPECT_EQ(read_topology_document("{}" + std::string(127, ' '), FileFormat::kAuto, limits).error().kind,
            Error::Kind::too_large);
  EXPECT_TRUE(read_topology_document("{}" + std::string(126, ' '), FileFormat::kAuto, limits).has_value());
}

TEST(DocumentLimits, RepeatedKeysAndBadUtf8AreRefused) {
  auto yaml = import_topology("version: 1\nswitches: []\nhosts: [{name: a, name: b}]\n");
  ASSERT_FALSE(yaml.has_value());
  EXPECT_TRUE(names(yaml.error(), "hosts[0].name")) << yaml.error().detail;
  auto js = import_topology(R"({"version":1,"switches":[],"hosts":[],"hosts":[]})");
  ASSERT_FALSE(js.has_value());
  EXPECT_TRUE(names(js.error(), "hosts")) << js.error().detail;
  auto utf8 = import_topology("version: 1\nname: \"\xff\xfe\"\nswitches: []\nhosts: []\n");
  ASSERT_FALSE(utf8.has_value());
  EXPECT_NE(utf8.error().detail.find("UTF-8"), std::string::npos) << utf8.error().detail;
  // A parser message quoting a stray byte stays printable (found by fuzz_topology_import).
  auto escape = import_topology("a: \"\\\xaf\"\n");
  ASSERT_FALSE(escape.has_value());
  EXPECT_NO_THROW((void)nlohmann::json(escape.error().detail).dump()) << escape.error().detail;
}

TEST(ModelLimits, ImportCountsTheModelBeforeBuildingIt) {
  ModelLimits limits;
  limits.hosts = 3;
  nlohmann::json doc = {
      {"version", 1}, {"switches", nlohmann::json::array()}, {"hosts", nlohmann::json::array()}};
  for (int i = 0; i < 4; ++i) doc["hosts"].push_back({{"name", "h" + std::to_string(i)}});
  auto r = import_topology_json(doc, limits);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Error::Kind::invalid);
  EXPECT_TRUE(names(r.error(), "hosts")) << r.error().detail;
  EXPECT_NE(r.error().detail.find("4 hosts, more than the server's limit of 3"), std::string::npos)
      << r.error().detail;

  // One host with more NPUs than a host can have (the builder's checks are quadratic per host).
  nlohmann::json big = {
      {"version", 1}, {"switches", nlohmann::json::array()}, {"hosts", nlohmann::json::array()}};
  nlohmann::json npus = nlohmann::json::array();
  for (int i = 0; i < 65; ++i) npus.push_back({{"index", i}, {"port", "eth" + std::to_string(i)}});
  big["hosts"].push_back({{"name", "h0"}, {"npus", npus}});
  auto per_host = import_topology_json(big);
  ASSERT_FALSE(per_host.has_value());
  EXPECT_TRUE(names(per_host.error(), "hosts[0].npus")) << per_host.error().detail;
}

TEST(ModelLimits, BuilderChecksTheIndexWork) {
  // 40 spines over one leaf with 50 hosts, then 40 cores over every spine: each core indexes
  // 40 spines x (50 hosts + 1 leaf); a tiny index budget refuses it.
  TopologyBuilder b;
  ModelLimits limits;
  limits.index_work = 10'000;
  b.set_limits(limits);
  const NodeId leaf = b.add_switch("leaf0", Tier::kLeaf);
  for (int h = 0; h < 50; ++h) {
    const NodeId host = b.add_host("h" + std::to_string(h));
    b.add_npu(host, Npu{0, "eth0", DeviceState::kHealthy, kNoLink});
    Link l;
    l.lower = host;
    l.upper = leaf;
    l.npu = 0;
    l.bandwidth_gbps = 100;
    b.add_link(l);
  }
  std::vector<NodeId> spines;
  for (int s = 0; s < 40; ++s) {
    spines.push_back(b.add_switch("spine" + std::to_string(s), Tier::kSpine));
    Link l;
    l.lower = leaf;
    l.upper = spines.back();
    l.bandwidth_gbps = 100;
    b.add_link(l);
  }
  for (int c = 0; c < 40; ++c) {
    const NodeId core = b.add_switch("core" + std::to_string(c), Tier::kCore);
    for (NodeId s : spines) {
      Link l;
      l.lower = s;
      l.upper = core;
      l.bandwidth_gbps = 100;
      b.add_link(l);
    }
  }
  auto built = std::move(b).build();
  ASSERT_FALSE(built.has_value());
  EXPECT_TRUE(names(built.error(), "switches")) << built.error().detail;
  EXPECT_NE(built.error().detail.find("10000"), std::string::npos) << built.error().detail;
}

ClosParams oversubscription_attack() {
  // The security test's request: a vanishing spine oversubscription with parallel fabric links asks for
  // ~10^15 spine-core links per pair.
  ClosParams p;
  p.hosts = 256;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  p.superpods = 2;
  p.cores = 4;
  p.fabric_link_gbps = 400;
  p.spine_oversubscription = 1e-9;
  return p;
}

TEST(GeneratorLimits, TinyOversubscriptionIsRefusedByArithmetic) {
  auto size = clos_size(oversubscription_attack());
  ASSERT_FALSE(size.has_value());
  EXPECT_EQ(size.error().kind, Error::Kind::invalid);
  EXPECT_TRUE(names(size.error(), "spine_oversubscription")) << size.error().detail;
  EXPECT_NE(size.error().detail.find("links, more than the server's limit of " +
                                     std::to_string(kModelLimits.links)),
            std::string::npos)
      << size.error().detail;
  // generate_clos refuses it the same way, before building anything.
  auto t = generate_clos(oversubscription_attack());
  ASSERT_FALSE(t.has_value());
  EXPECT_TRUE(names(t.error(), "spine_oversubscription"));

  // The leaf tier too, and a count beyond 64 bits saturates instead of wrapping.
  ClosParams leaf = oversubscription_attack();
  leaf.spine_oversubscription = 1;
  leaf.leaf_oversubscription = 1e-300;
  auto leaf_size = clos_size(leaf);
  ASSERT_FALSE(leaf_size.has_value());
  EXPECT_TRUE(names(leaf_size.error(), "leaf_oversubscription")) << leaf_size.error().detail;
}

TEST(GeneratorLimits, TheOldDocumentedMaximumIsRefused) {
  ClosParams p;
  p.hosts = 16384;
  p.npus_per_host = 64;
  auto size = clos_size(p, kGenerateLimits);
  ASSERT_FALSE(size.has_value());
  EXPECT_TRUE(names(size.error(), "npus_per_host")) << size.error().detail;
  EXPECT_NE(size.error().detail.find("1048576 NPUs"), std::string::npos) << size.error().detail;
}

// The largest cluster of the documented shape the limits admit (docs/topology.md, "Limits").
ClosParams documented_maximum() {
  ClosParams p;
  p.hosts = 16384;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 16;
  p.superpods = 4;
  p.cores = 16;
  return p;
}

TEST(GeneratorLimits, TheNewMaximumIsAdmittedAndSizedExactly) {
  auto size = clos_size(documented_maximum());
  ASSERT_TRUE(size.has_value()) << size.error().detail;
  EXPECT_EQ(size->hosts, 16384u);
  EXPECT_EQ(size->npus, 131072u);
  EXPECT_LE(size->links, kModelLimits.links);
  EXPECT_LE(size->index_work, kModelLimits.index_work);
}

TEST(GeneratorLimits, SizeMatchesWhatIsBuilt) {
  std::vector<ClosParams> cases;
  ClosParams a;
  a.hosts = 100;  // partial last SU, 4 SUs over 3 pods (uneven), parallel links in both tiers
  a.npus_per_host = 4;
  a.hosts_per_su = 32;
  a.spines_per_plane = 4;
  a.superpods = 3;
  a.cores = 2;
  a.fabric_link_gbps = 400;
  a.spine_oversubscription = 0.5;
  cases.push_back(a);
  ClosParams b;
  b.hosts = 20;
  b.hosts_per_su = 32;
  b.spines_per_plane = 0;
  cases.push_back(b);
  ClosParams c;
  c.hosts = 64;
  c.hosts_per_su = 0xFFFFFFFFu;  // no 32-bit overflow in the SU arithmetic
  c.spines_per_plane = 2;
  cases.push_back(c);
  for (const auto& p : cases) {
    auto size = clos_size(p);
    ASSERT_TRUE(size.has_value()) << size.error().detail;
    auto t = generate_clos(p);
    ASSERT_TRUE(t.has_value()) << t.error().detail;
    std::uint64_t npus = 0;
    for (NodeId h : t->hosts()) npus += t->node(h).npus.size();
    EXPECT_EQ(size->hosts, t->hosts().size());
    EXPECT_EQ(size->npus, npus);
    EXPECT_EQ(size->switches, t->nodes().size() - t->hosts().size());
    EXPECT_EQ(size->links, t->links().size());
  }
}

TEST(StoredDocument, JsonDocumentReadsBackToTheSameModelAsItsTree) {
  ClosParams p;
  p.hosts = 40;
  p.npus_per_host = 4;
  p.hosts_per_su = 16;
  p.superpods = 2;
  p.spines_per_plane = 2;
  p.cores = 2;
  p.fabric_link_gbps = 400;
  p.leaf_oversubscription = 2;
  Topology original = generate_clos(p).value();
  original.set_link_state(original.node(original.find("host003").value()).npus[1].link,
                          DeviceState::kIsolated);
  const nlohmann::json tree = export_topology_document(original);
  auto from_tree = import_topology_json(tree);
  ASSERT_TRUE(from_tree.has_value()) << from_tree.error().detail;
  auto from_text = import_topology(tree.dump());
  ASSERT_TRUE(from_text.has_value()) << from_text.error().detail;
  auto from_yaml = import_topology(export_topology_yaml(original));
  ASSERT_TRUE(from_yaml.has_value()) << from_yaml.error().detail;
  // Same ids, names and links whichever way the document was read.
  ASSERT_EQ(from_tree->links().size(), original.links().size());
  for (const Topology* other : {&*from_text, &*from_yaml}) {
    ASSERT_EQ(other->nodes().size(), from_tree->nodes().size());
    for (std::size_t i = 0; i < other->nodes().size(); ++i)
      EXPECT_EQ(other->nodes()[i].name, from_tree->nodes()[i].name);
    ASSERT_EQ(other->links().size(), from_tree->links().size());
    for (std::size_t i = 0; i < other->links().size(); ++i) {
      const Link& x = other->links()[i];
      const Link& y = from_tree->links()[i];
      EXPECT_EQ(x.lower, y.lower);
      EXPECT_EQ(x.upper, y.upper);
      EXPECT_EQ(x.upper_port, y.upper_port);
      EXPECT_EQ(x.bandwidth_gbps, y.bandwidth_gbps);
      EXPECT_EQ(x.state, y.state);
    }
  }
  EXPECT_EQ(export_topology_document(*from_text), tree);
}

// Every field of two models, ids included.
void expect_identical(const Topology& a, const Topology& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (std::size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.tier, y.tier);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.uplinks, y.uplinks);
    EXPECT_EQ(x.downlinks, y.downlinks);
    ASSERT_EQ(x.npus.size(), y.npus.size());
    for (std::size_t k = 0; k < x.npus.size(); ++k) {
      EXPECT_EQ(x.npus[k].index, y.npus[k].index);
      EXPECT_EQ(x.npus[k].port, y.npus[k].port);
      EXPECT_EQ(x.npus[k].state, y.npus[k].state);
      EXPECT_EQ(x.npus[k].link, y.npus[k].link);
    }
  }
  ASSERT_EQ(a.links().size(), b.links().size());
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const Link& x = a.links()[i];
    const Link& y = b.links()[i];
    EXPECT_EQ(x.lower, y.lower);
    EXPECT_EQ(x.upper, y.upper);
    EXPECT_EQ(x.lower_port, y.lower_port);
    EXPECT_EQ(x.upper_port, y.upper_port);
    EXPECT_EQ(x.npu, y.npu);
    EXPECT_EQ(x.bandwidth_gbps, y.bandwidth_gbps);
    EXPECT_EQ(x.latency_us, y.latency_us);
    EXPECT_EQ(x.state, y.state);
  }
}

TEST(StoredDocument, AsImportedIsWhatTheStoredDocumentReadsBackTo) {
  std::vector<Topology> models;
  ClosParams p;
  p.hosts = 40;
  p.npus_per_host = 4;
  p.hosts_per_su = 16;
  p.superpods = 2;
  p.spines_per_plane = 2;
  p.cores = 2;
  p.leaf_oversubscription = 3;  // 16 x 400 / 3 / 2: not whole, so one link of a fractional capacity
  p.fabric_link_gbps = 0;
  p.host_link_latency_us = 0.1;
  Topology generated = generate_clos(p).value();
  const NodeId h3 = generated.find("host003").value();
  generated.set_node_state(h3, DeviceState::kAllocated);
  generated.set_npu_state({h3, 2}, DeviceState::kSubHealth);
  generated.set_link_state(generated.node(h3).npus[1].link, DeviceState::kIsolated);
  models.push_back(generated);
  // Switches out of tier order, an NPU without a link, a link without ports, no name.
  auto imported = import_topology(R"(version: 1
defaults: {bandwidth_gbps: 200}
switches:
  - {name: leaf1, tier: leaf}
  - {name: spine0, tier: spine, state: isolated}
  - {name: leaf0, tier: leaf}
hosts:
  - name: b
    npus:
      - {index: 3, port: p3, leaf: leaf1, leaf_port: "E 1"}
      - {index: 1, port: p1}
  - name: a
    npus: [{index: 0, port: eth0, leaf: leaf0, latency_us: 0.3333333333333333, link_state: sub-health}]
links:
  - {lower: leaf1, upper: spine0, upper_port: x}
  - {lower: leaf0, upper: spine0, bandwidth_gbps: 1e-3}
)");
  ASSERT_TRUE(imported.has_value()) << imported.error().detail;
  models.push_back(*imported);
  auto merged = merge_lldp(*imported, {{"b", "p1", std::nullopt, "leaf0", "Eth9"}});
  ASSERT_TRUE(merged.has_value()) << merged.error().detail;
  ASSERT_EQ(merged->report.added, 1u);
  models.push_back(merged->topology);
  for (const Topology& t : models) {
    auto direct = as_imported(t);
    ASSERT_TRUE(direct.has_value()) << direct.error().detail;
    auto stored = import_topology(export_topology_document(t).dump());
    ASSERT_TRUE(stored.has_value()) << stored.error().detail;
    expect_identical(*direct, *stored);
    EXPECT_EQ(export_topology_document(*direct), export_topology_document(t));
  }
}

}  // namespace
}  // namespace hsns::topology
