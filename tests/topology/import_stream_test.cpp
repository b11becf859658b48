// The single-pass JSON import (stream_import_json) against the checking path it stands in for
// (read_topology_document + import_topology_json): the same model, ids included, for every document it
// accepts, and for every document it gives up on, import_topology answers exactly what the checking path
// answers (the same model or the same error).
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/export.h"
#include "topology/generator.h"
#include "topology/import.h"

namespace hsns::topology {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The checking path alone, as import_topology read JSON before the single pass existed.
Result<Topology> checking_path(std::string_view text, const DocumentLimits& document_limits = kDocumentLimits,
                               const ModelLimits& model_limits = kModelLimits) {
  auto document = read_topology_document(text, FileFormat::kJson, document_limits);
  if (!document) return tl::unexpected(document.error());
  return import_topology_json(*document, model_limits);
}

void expect_same_model(const Topology& a, const Topology& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  ASSERT_EQ(a.links().size(), b.links().size());
  for (std::size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    ASSERT_EQ(x.name, y.name) << "node " << i;
    EXPECT_EQ(x.tier, y.tier) << x.name;
    EXPECT_EQ(x.state, y.state) << x.name;
    EXPECT_EQ(x.management_address, y.management_address) << x.name;
    EXPECT_EQ(x.uplinks, y.uplinks) << x.name;
    EXPECT_EQ(x.downlinks, y.downlinks) << x.name;
    ASSERT_EQ(x.npus.size(), y.npus.size()) << x.name;
    for (std::size_t k = 0; k < x.npus.size(); ++k) {
      EXPECT_EQ(x.npus[k].index, y.npus[k].index) << x.name;
      EXPECT_EQ(x.npus[k].port, y.npus[k].port) << x.name;
      EXPECT_EQ(x.npus[k].state, y.npus[k].state) << x.name;
      EXPECT_EQ(x.npus[k].link, y.npus[k].link) << x.name;
    }
  }
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const Link& x = a.links()[i];
    const Link& y = b.links()[i];
    EXPECT_EQ(x.lower, y.lower) << "link " << i;
    EXPECT_EQ(x.upper, y.upper) << "link " << i;
    EXPECT_EQ(x.lower_port, y.lower_port) << "link " << i;
    EXPECT_EQ(x.upper_port, y.upper_port) << "link " << i;
    EXPECT_EQ(x.npu, y.npu) << "link " << i;
    EXPECT_EQ(x.bandwidth_gbps, y.bandwidth_gbps) << "link " << i;
    EXPECT_EQ(x.latency_us, y.latency_us) << "link " << i;
    EXPECT_EQ(x.state, y.state) << "link " << i;
  }
  EXPECT_EQ(export_topology_document(a), export_topology_document(b));
}

TEST(StreamImport, LargeGeneratedClusterGivesTheCheckingPathsModel) {
  ClosParams p;
  p.hosts = 2000;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 4;
  p.superpods = 4;
  p.cores = 4;
  p.name = "large";
  auto generated = generate_clos(p, kModelLimits);
  ASSERT_TRUE(generated) << generated.error().message();
  // The exported document lists "hosts" before "switches" (keys in order): hosts name leaves declared
  // later in the text.
  const std::string text = export_topology_document(*generated).dump();
  ASSERT_LT(text.find("\"hosts\""), text.find("\"switches\""));
  auto streamed = stream_import_json(text);
  ASSERT_TRUE(streamed.has_value());
  auto checked = checking_path(text);
  ASSERT_TRUE(checked) << checked.error().message();
  EXPECT_EQ(streamed->hosts().size(), 2000u);
  expect_same_model(*streamed, *checked);
}

// Every optional field, defaults after the links that use them, switches after the hosts and links.
ordered_json rich_document() {
  ordered_json npu0 = {{"index", 1},
                       {"port", "eth1"},
                       {"leaf", "leaf1"},
                       {"leaf_port", "Eth1/2"},
                       {"bandwidth_gbps", 200.5},
                       {"latency_us", 2},
                       {"link_state", "isolated"},
                       {"state", "sub-health"}};
  ordered_json npu1 = {{"index", 0}, {"port", "eth0"}, {"leaf", "leaf0"}};
  ordered_json npu2 = {{"port", "eth2"}, {"index", 2}, {"state", "allocated"}};  // no link
  return ordered_json{
      {"hosts",
       {{{"name", "h0"}, {"npus", {npu0, npu1, npu2}}, {"state", "isolated"}},
        {{"name", "h1"}},
        {{"npus", ordered_json::array({{{"index", 0}, {"port", "eth0"}, {"leaf", "leaf1"}}})},
         {"name", "h2"}}}},
      {"links",
       {{{"lower", "leaf0"}, {"upper", "spine0"}, {"lower_port", "Eth9/1"}, {"upper_port", "Eth1/1"}},
        {{"upper", "spine0"}, {"lower", "leaf1"}, {"bandwidth_gbps", 800}, {"state", "sub-health"}},
        {{"lower", "spine0"}, {"upper", "core0"}, {"latency_us", 0}}}},
      {"switches",
       {{{"tier", "core"}, {"name", "core0"}},
        {{"name", "spine0"}, {"tier", "spine"}, {"state", "isolated"}},
        {{"name", "leaf0"}, {"tier", "leaf"}, {"management_address", "2001:DB8::0b"}},
        {{"name", "leaf1"}, {"tier", "leaf"}, {"state", "allocated"}, {"management_address", "192.0.2.12"}}}},
      {"version", 1},
      {"defaults", {{"latency_us", 1.5}, {"bandwidth_gbps", 400}}},
      {"name", "rich"}};
}

TEST(StreamImport, AnyKeyOrderAndEveryOptionalFieldGiveTheCheckingPathsModel) {
  const std::string text = rich_document().dump(2);
  auto streamed = stream_import_json(text);
  ASSERT_TRUE(streamed.has_value());
  auto checked = checking_path(text);
  ASSERT_TRUE(checked) << checked.error().message();
  expect_same_model(*streamed, *checked);
  // Without a name, and without defaults where every link has its own bandwidth.
  ordered_json plain = rich_document();
  plain.erase("name");
  plain.erase("defaults");
  plain["hosts"][0]["npus"][1]["bandwidth_gbps"] = 100;
  plain["hosts"][2]["npus"][0]["bandwidth_gbps"] = 100;
  plain["links"][0]["bandwidth_gbps"] = 100;
  plain["links"][2]["bandwidth_gbps"] = 100;
  const std::string plain_text = plain.dump();
  auto plain_streamed = stream_import_json(plain_text);
  ASSERT_TRUE(plain_streamed.has_value());
  auto plain_checked = checking_path(plain_text);
  ASSERT_TRUE(plain_checked) << plain_checked.error().message();
  expect_same_model(*plain_streamed, *plain_checked);
}

void expect_same_answer(const Result<Topology>& got, const Result<Topology>& want, const std::string& what) {
  ASSERT_EQ(got.has_value(), want.has_value()) << what;
  if (want) {
    expect_same_model(*got, *want);
    return;
  }
  EXPECT_EQ(got.error().kind, want.error().kind) << what;
  EXPECT_EQ(got.error().detail, want.error().detail) << what;
  ASSERT_EQ(got.error().fields.size(), want.error().fields.size()) << what;
  for (std::size_t i = 0; i < want.error().fields.size(); ++i) {
    EXPECT_EQ(got.error().fields[i].field, want.error().fields[i].field) << what;
    EXPECT_EQ(got.error().fields[i].reason, want.error().fields[i].reason) << what;
  }
}

TEST(StreamImport, WhatTheSinglePassDoesNotAcceptIsAnsweredByTheCheckingPath) {
  struct Case {
    std::string what;
    std::function<void(ordered_json&)> change;
  };
  const std::vector<Case> cases = {
      {"null state (absent to the checking path)", [](ordered_json& d) { d["hosts"][1]["state"] = nullptr; }},
      {"unknown key", [](ordered_json& d) { d["hosts"][0]["npus"][1]["speed"] = 1; }},
      {"unknown leaf", [](ordered_json& d) { d["hosts"][0]["npus"][1]["leaf"] = "nowhere"; }},
      {"leaf names a spine", [](ordered_json& d) { d["hosts"][0]["npus"][1]["leaf"] = "spine0"; }},
      {"leaf names a host", [](ordered_json& d) { d["hosts"][2]["npus"][0]["leaf"] = "h0"; }},
      {"host named as a switch", [](ordered_json& d) { d["hosts"][1]["name"] = "leaf0"; }},
      {"duplicate host", [](ordered_json& d) { d["hosts"][1]["name"] = "h0"; }},
      {"duplicate switch", [](ordered_json& d) { d["switches"][3]["name"] = "leaf0"; }},
      {"duplicate NPU index", [](ordered_json& d) { d["hosts"][0]["npus"][2]["index"] = 0; }},
      {"negative index", [](ordered_json& d) { d["hosts"][0]["npus"][2]["index"] = -1; }},
      {"fractional index", [](ordered_json& d) { d["hosts"][0]["npus"][2]["index"] = 1.5; }},
      {"index too large", [](ordered_json& d) { d["hosts"][0]["npus"][2]["index"] = 0x1000000; }},
      {"zero bandwidth", [](ordered_json& d) { d["links"][1]["bandwidth_gbps"] = 0; }},
      {"negative latency", [](ordered_json& d) { d["hosts"][0]["npus"][0]["latency_us"] = -1; }},
      {"bandwidth as text", [](ordered_json& d) { d["links"][1]["bandwidth_gbps"] = "800"; }},
      {"no default bandwidth", [](ordered_json& d) { d["defaults"].erase("bandwidth_gbps"); }},
      {"version 2", [](ordered_json& d) { d["version"] = 2; }},
      {"version as text", [](ordered_json& d) { d["version"] = "1"; }},
      {"no version", [](ordered_json& d) { d.erase("version"); }},
      {"no hosts", [](ordered_json& d) { d.erase("hosts"); }},
      {"empty name", [](ordered_json& d) { d["hosts"][1]["name"] = ""; }},
      {"bad state", [](ordered_json& d) { d["switches"][0]["state"] = "broken"; }},
      {"host tier", [](ordered_json& d) { d["switches"][0]["tier"] = "host"; }},
      {"link fields without a leaf", [](ordered_json& d) { d["hosts"][0]["npus"][2]["leaf_port"] = "x"; }},
      {"link to an unknown node", [](ordered_json& d) { d["links"][2]["upper"] = "core9"; }},
      {"link across tiers", [](ordered_json& d) { d["links"][2]["lower"] = "leaf0"; }},
      {"host link", [](ordered_json& d) { d["links"][2]["lower"] = "h1"; }},
      {"npus not a list", [](ordered_json& d) { d["hosts"][1]["npus"] = ordered_json::object(); }},
      {"host not a mapping", [](ordered_json& d) { d["hosts"][1] = "h1"; }},
      {"nested too deep",
       [](ordered_json& d) {
         d["defaults"]["x"] = {{"y", {{"z", 1}}}};
       }},
      {"a list as the document", [](ordered_json& d) { d = ordered_json::array({d}); }},
  };
  for (const auto& c : cases) {
    ordered_json document = rich_document();
    c.change(document);
    const std::string text = document.dump();
    EXPECT_FALSE(stream_import_json(text).has_value()) << c.what;
    expect_same_answer(import_topology(text), checking_path(text), c.what);
    expect_same_answer(import_topology(text, FileFormat::kJson), checking_path(text), c.what);
  }
  // Text the parser refuses: a repeated key, trailing bytes, a document cut short.
  std::string text = rich_document().dump();
  for (const std::string& bad : {text.substr(0, text.size() - 1) + R"(,"name":"again"})", text + " x",
                                 text.substr(0, text.size() / 2)}) {
    EXPECT_FALSE(stream_import_json(bad).has_value()) << bad.substr(bad.size() - 20);
    expect_same_answer(import_topology(bad), checking_path(bad), bad.substr(bad.size() - 20));
  }
}

TEST(StreamImport, LimitsAreLeftToTheCheckingPath) {
  const std::string text = rich_document().dump();
  DocumentLimits few_values = kDocumentLimits;
  few_values.values = 40;
  DocumentLimits shallow = kDocumentLimits;
  shallow.depth = 3;
  for (const auto& limits : {few_values, shallow}) {
    EXPECT_FALSE(stream_import_json(text, limits).has_value());
    auto got = import_topology(text, FileFormat::kJson, limits);
    ASSERT_FALSE(got);
    expect_same_answer(got, checking_path(text, limits), "document limits");
  }
  ModelLimits two_hosts = kModelLimits;
  two_hosts.hosts = 2;
  ModelLimits two_npus = kModelLimits;
  two_npus.npus_per_host = 2;
  ModelLimits few_links = kModelLimits;
  few_links.links = 4;
  for (const auto& limits : {two_hosts, two_npus, few_links}) {
    EXPECT_FALSE(stream_import_json(text, kDocumentLimits, limits).has_value());
    auto got = import_topology(text, FileFormat::kJson, kDocumentLimits, limits);
    ASSERT_FALSE(got);
    expect_same_answer(got, checking_path(text, kDocumentLimits, limits), "model limits");
  }
}

}  // namespace
}  // namespace hsns::topology
