// Large imports over REST against the real aggregator (real SQLite file, real HTTP over loopback): a
// 2,000-host import taken by the single-pass reader answers, stores and reads back after a restart
// exactly what the checking path (read_topology_document + import_topology_json, the path every import
// took before) makes of the same document; a bad document, with its fault in the middle, stores nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/aggregator_process.h"
#include "support/temp_dir.h"
#include "topology/export.h"
#include "topology/generator.h"
#include "topology/import.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
namespace topo = hsns::topology;

// 2,000 hosts x 8 NPUs on rail leaves, spines and cores, as the file schema's JSON.
json large_document() {
  topo::ClosParams p;
  p.hosts = 2000;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 4;
  p.superpods = 4;
  p.cores = 4;
  p.name = "large";
  auto model = topo::generate_clos(p, topo::kModelLimits);
  EXPECT_TRUE(model) << model.error().message();
  return model ? topo::export_topology_document(*model) : json();
}

// What the checking path stores for this text, as the YAML export of the file schema.
std::string checking_path_export(const std::string& text) {
  auto document = topo::read_topology_document(text, topo::FileFormat::kJson);
  EXPECT_TRUE(document) << document.error().message();
  if (!document) return "";
  auto model = topo::import_topology_json(*document);
  EXPECT_TRUE(model) << model.error().message();
  return model ? topo::export_topology_yaml(*model) : "";
}

// An import of 2,000 hosts takes seconds in a sanitizer build on a busy machine.
HttpClient patient_client(const AggregatorProcess& agg) {
  HttpClientOptions options;
  options.bearer_token = kOperatorToken;
  options.timeout = std::chrono::minutes(5);
  return HttpClient(agg.url(), options);
}

HttpClient::Response call(HttpClient& c, const std::string& method, const std::string& target,
                          const std::string& body = "") {
  auto r = c.request(method, target, body, body.empty() ? "" : "application/json");
  EXPECT_TRUE(r.has_value()) << method << " " << target << ": " << (r ? "" : r.error());
  return r ? *r : HttpClient::Response{};
}

std::string exported(HttpClient& c) {
  auto r = call(c, "GET", "/api/v1/topology/export?format=yaml");
  EXPECT_EQ(r.status, 200) << r.body;
  return r.body;
}

json summary(HttpClient& c) {
  auto r = call(c, "GET", "/api/v1/topology");
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body, nullptr, false);
}

TEST(TopologyImport, LargeImportStoresAndReadsBackWhatTheCheckingPathMakesOfIt) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = patient_client(agg);
  const std::string text = large_document().dump();
  const std::string expected = checking_path_export(text);
  ASSERT_FALSE(expected.empty());

  auto put = call(ops, "PUT", "/api/v1/topology", text);
  ASSERT_EQ(put.status, 200) << put.body;
  const json answer = json::parse(put.body);
  EXPECT_EQ(answer["hosts"], 2000);
  EXPECT_EQ(answer["npus"], 16000);
  EXPECT_EQ(exported(ops), expected);
  // After a restart the model is read back from the database.
  EXPECT_EQ(agg.stop(), 0);
  agg.start();
  auto again = patient_client(agg);
  EXPECT_EQ(exported(again), expected);
  const json after = summary(again);
  EXPECT_EQ(after["revision"], answer["revision"]);
  EXPECT_EQ(after["links"], answer["links"]);
}

TEST(TopologyImport, BadDocumentWithItsFaultInTheMiddleStoresNothing) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = patient_client(agg);
  json small = large_document();
  small["hosts"] = json::array({small["hosts"][0], small["hosts"][1]});
  small["name"] = "small";
  // Only the switch links stay; the two hosts keep their NPU links.
  auto first = call(ops, "PUT", "/api/v1/topology", small.dump());
  ASSERT_EQ(first.status, 200) << first.body;
  const json before = summary(ops);
  const std::string before_export = exported(ops);

  json bad = large_document();
  bad["hosts"][1000]["npus"][3]["leaf"] = "no-such-leaf";
  auto refused = call(ops, "PUT", "/api/v1/topology", bad.dump());
  EXPECT_EQ(refused.status, 400) << refused.body;
  std::set<std::string> named;
  for (const auto& p : json::parse(refused.body).value("invalid_params", json::array())) {
    named.insert(p.value("name", ""));
  }
  EXPECT_EQ(named, std::set<std::string>{"hosts[1000].npus[3].leaf"}) << refused.body;

  // Cut off in the middle: not JSON at all.
  const std::string text = large_document().dump();
  auto cut = call(ops, "PUT", "/api/v1/topology", text.substr(0, text.size() / 2));
  EXPECT_EQ(cut.status, 400) << cut.body;

  EXPECT_EQ(summary(ops), before);
  EXPECT_EQ(exported(ops), before_export);
  EXPECT_EQ(agg.stop(), 0);
  agg.start();
  auto again = patient_client(agg);
  EXPECT_EQ(summary(again), before);
  EXPECT_EQ(exported(again), before_export);
}

}  // namespace
}  // namespace hsns::testing
