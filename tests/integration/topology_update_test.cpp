// Device state updates and large imports over REST against the real aggregator (real SQLite file, real
// HTTP over loopback): one PATCH changes one device and nothing else, the bulk route is all or nothing
// and names every bad entry, states survive a restart, search sees a bulk update at once, and the
// topology routes' own body limit (imports over the general 1 MiB accepted, over the topology limit 413
// with nothing changed).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/aggregator_process.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

// An import document in the file schema: `hosts` hosts of `npus` NPUs, NPU i of every host on rail
// leaf i, every leaf up to one spine. Names "h<i>", "leaf<i>", "spine0".
std::string cluster_document(int hosts, int npus) {
  json switches = json::array();
  json links = json::array();
  for (int l = 0; l < npus; ++l) {
    switches.push_back({{"name", "leaf" + std::to_string(l)}, {"tier", "leaf"}});
    links.push_back({{"lower", "leaf" + std::to_string(l)}, {"upper", "spine0"}, {"bandwidth_gbps", 3200}});
  }
  switches.push_back({{"name", "spine0"}, {"tier", "spine"}});
  json host_list = json::array();
  for (int h = 0; h < hosts; ++h) {
    json npu_list = json::array();
    for (int n = 0; n < npus; ++n) {
      npu_list.push_back({{"index", n},
                          {"port", "eth" + std::to_string(n)},
                          {"leaf", "leaf" + std::to_string(n)},
                          {"leaf_port", "Eth1/" + std::to_string(h + 1)}});
    }
    host_list.push_back({{"name", "h" + std::to_string(h)}, {"npus", npu_list}});
  }
  return json{{"version", 1},
              {"name", "bulk"},
              {"defaults", {{"bandwidth_gbps", 400}, {"latency_us", 0.5}}},
              {"switches", switches},
              {"hosts", host_list},
              {"links", links}}
      .dump();
}

HttpClient::Response call(HttpClient& c, const std::string& method, const std::string& target,
                          const std::string& body = "") {
  auto r = c.request(method, target, body, body.empty() ? "" : "application/json");
  EXPECT_TRUE(r.has_value()) << method << " " << target << ": " << (r ? "" : r.error());
  return r ? *r : HttpClient::Response{};
}

json body_of(const HttpClient::Response& r) {
  return json::parse(r.body, nullptr, false);
}

// The model as a client sees it (the import file schema export) and its summary.
json export_model(HttpClient& c) {
  auto r = call(c, "GET", "/api/v1/topology/export?format=json");
  EXPECT_EQ(r.status, 200) << r.body;
  return body_of(r);
}

json summary(HttpClient& c) {
  auto r = call(c, "GET", "/api/v1/topology");
  EXPECT_EQ(r.status, 200) << r.body;
  return body_of(r);
}

std::set<std::string> invalid_names(const HttpClient::Response& r) {
  std::set<std::string> out;
  for (const auto& p : body_of(r).value("invalid_params", json::array())) out.insert(p.value("name", ""));
  return out;
}

class TopologyUpdate : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
    ops_ = std::make_unique<HttpClient>(agg_->client());
    auto put = call(*ops_, "PUT", "/api/v1/topology", cluster_document(8, 4));
    ASSERT_EQ(put.status, 200) << put.body;
  }

  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
  std::unique_ptr<HttpClient> ops_;
};

TEST_F(TopologyUpdate, PatchOfOneDeviceChangesOnlyThatDevice) {
  const json before = export_model(*ops_);
  const auto rev = summary(*ops_)["revision"].get<std::int64_t>();
  const auto lldp_etag = call(*ops_, "GET", "/api/v1/topology/lldp").etag;
  const auto hosts_etag = call(*ops_, "GET", "/api/v1/hosts").etag;
  ASSERT_FALSE(lldp_etag.empty());
  ASSERT_FALSE(hosts_etag.empty());

  auto host = call(*ops_, "PATCH", "/api/v1/topology/devices/h3", R"({"state":"sub-health"})");
  ASSERT_EQ(host.status, 200) << host.body;
  EXPECT_EQ(body_of(host),
            json({{"revision", rev + 1}, {"device", "h3"}, {"tier", "host"}, {"state", "sub-health"}}));
  auto npu = call(*ops_, "PATCH", "/api/v1/topology/devices/h5", R"({"state":"isolated","npu":2})");
  ASSERT_EQ(npu.status, 200) << npu.body;
  EXPECT_EQ(body_of(npu)["revision"], rev + 2);
  auto leaf = call(*ops_, "PATCH", "/api/v1/topology/devices/leaf1", R"({"state":"isolated"})");
  ASSERT_EQ(leaf.status, 200) << leaf.body;
  EXPECT_EQ(body_of(leaf)["tier"], "leaf");
  // A state already set stores nothing and keeps the revision.
  auto same = call(*ops_, "PATCH", "/api/v1/topology/devices/leaf1", R"({"state":"isolated"})");
  ASSERT_EQ(same.status, 200) << same.body;
  EXPECT_EQ(body_of(same)["revision"], rev + 3);

  // Exactly three values differ from the model before, each a state.
  const json after = export_model(*ops_);
  const json flat_before = before.flatten();
  const json flat_after = after.flatten();
  EXPECT_EQ(flat_after.size(), flat_before.size());
  int changed = 0;
  for (const auto& [path, value] : flat_after.items()) {
    if (value == flat_before.value(path, json())) continue;
    ++changed;
    EXPECT_TRUE(path.ends_with("/state")) << path << " " << value;
  }
  EXPECT_EQ(changed, 3);
  const json s = summary(*ops_);
  EXPECT_EQ(s["revision"], rev + 3);
  EXPECT_EQ(s["source"], "state");
  EXPECT_EQ(s["states"]["hosts"]["sub-health"], 1);
  EXPECT_EQ(s["states"]["hosts"]["healthy"], 7);
  EXPECT_EQ(s["states"]["npus"]["isolated"], 1);
  EXPECT_EQ(s["states"]["switches"]["isolated"], 1);
  // Other areas did not change: their list ETags are the same.
  EXPECT_EQ(call(*ops_, "GET", "/api/v1/topology/lldp").etag, lldp_etag);
  EXPECT_EQ(call(*ops_, "GET", "/api/v1/hosts").etag, hosts_etag);

  // The single route's errors keep their wording and store nothing.
  auto unknown = call(*ops_, "PATCH", "/api/v1/topology/devices/nope", R"({"state":"isolated"})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  auto switch_npu = call(*ops_, "PATCH", "/api/v1/topology/devices/leaf0", R"({"state":"isolated","npu":0})");
  EXPECT_EQ(switch_npu.status, 400) << switch_npu.body;
  EXPECT_EQ(invalid_names(switch_npu), std::set<std::string>{"npu"});
  auto no_npu = call(*ops_, "PATCH", "/api/v1/topology/devices/h0", R"({"state":"isolated","npu":9})");
  EXPECT_EQ(no_npu.status, 422) << no_npu.body;
  EXPECT_EQ(export_model(*ops_), after);
}

TEST_F(TopologyUpdate, BulkIsAllOrNothingNamesBadEntriesAndSurvivesRestart) {
  const json before = export_model(*ops_);
  const auto rev = summary(*ops_)["revision"].get<std::int64_t>();

  const json bad = {{"devices",
                     {{{"name", "h0"}, {"state", "isolated"}},
                      {{"name", "h1"}, {"state", "broken"}},
                      {{"name", "ghost"}, {"state", "isolated"}},
                      {{"name", "leaf0"}, {"state", "isolated"}, {"npu", 1}},
                      {{"name", "h2"}, {"state", "isolated"}, {"npu", 7}},
                      {{"name", "h0"}, {"state", "healthy"}},
                      {{"name", "h4"}, {"state", "isolated"}, {"extra", 1}}}}};
  // Field errors of the request itself come first (nothing is looked up until they are fixed).
  auto shape = call(*ops_, "PATCH", "/api/v1/topology/devices", bad.dump());
  EXPECT_EQ(shape.status, 400) << shape.body;
  EXPECT_EQ(invalid_names(shape), (std::set<std::string>{"devices[1].state", "devices[6].extra"}));
  json refs = bad;
  refs["devices"][1]["state"] = "healthy";
  refs["devices"][6].erase("extra");
  auto named = call(*ops_, "PATCH", "/api/v1/topology/devices", refs.dump());
  EXPECT_EQ(named.status, 400) << named.body;
  EXPECT_EQ(invalid_names(named),
            (std::set<std::string>{"devices[2].name", "devices[3].npu", "devices[4].npu", "devices[5]"}));
  EXPECT_EQ(export_model(*ops_), before);
  EXPECT_EQ(summary(*ops_)["revision"], rev);
  EXPECT_EQ(call(*ops_, "PATCH", "/api/v1/topology/devices", R"({"devices":[]})").status, 200);
  EXPECT_EQ(call(*ops_, "PATCH", "/api/v1/topology/devices", R"({})").status, 400);

  // Six of eight hosts isolated in one transaction: one new revision.
  json good = {{"devices", json::array()}};
  for (int h = 0; h < 6; ++h)
    good["devices"].push_back({{"name", "h" + std::to_string(h)}, {"state", "isolated"}});
  good["devices"].push_back({{"name", "h7"}, {"state", "sub-health"}, {"npu", 3}});
  good["devices"].push_back({{"name", "leaf3"}, {"state", "isolated"}});
  auto ok = call(*ops_, "PATCH", "/api/v1/topology/devices", good.dump());
  ASSERT_EQ(ok.status, 200) << ok.body;
  const json answer = body_of(ok);
  EXPECT_EQ(answer["revision"], rev + 1);
  ASSERT_EQ(answer["devices"].size(), 8u);
  EXPECT_EQ(answer["devices"][6],
            json({{"device", "h7"}, {"tier", "host"}, {"state", "sub-health"}, {"npu", 3}}));
  EXPECT_EQ(answer["devices"][7]["tier"], "leaf");
  const json s = summary(*ops_);
  EXPECT_EQ(s["states"]["hosts"]["isolated"], 6);
  EXPECT_EQ(s["states"]["npus"]["sub-health"], 1);
  EXPECT_EQ(s["states"]["switches"]["isolated"], 1);

  // Search honours the states at once: only h6 and h7 are usable, never an NPU on rail leaf3 (isolated)
  // nor h7's NPU 3.
  auto sched = agg_->client(kSchedulerToken);
  const json search = {{"model",
                        {{"parameters", 1000000000},
                         {"layers", 8},
                         {"hidden", 2048},
                         {"heads", 16},
                         {"seq_len", 2048},
                         {"micro_batch", 1},
                         {"global_batch", 64}}},
                       {"parallel", {{"tp", 2}, {"dp", 1}}},
                       {"answers", 10}};
  auto found = call(sched, "POST", "/api/v1/topology/search", search.dump());
  ASSERT_EQ(found.status, 200) << found.body;
  const json result = body_of(found);
  EXPECT_EQ(result["usable_hosts"], 2);
  ASSERT_FALSE(result["candidates"].empty());
  for (const auto& c : result["candidates"]) {
    for (const auto& h : c["hosts"]) {
      EXPECT_TRUE(h["name"] == "h6" || h["name"] == "h7") << h.dump();
      for (const auto& n : h["npus"]) EXPECT_NE(n, 3) << c.dump();
    }
  }

  // The states are rows of the database: a restart reads them back on top of the document.
  const json model = export_model(*ops_);
  EXPECT_EQ(agg_->stop(), 0);
  agg_->start();
  auto again = agg_->client();
  EXPECT_EQ(export_model(again), model);
  EXPECT_EQ(summary(again)["revision"], rev + 1);
  EXPECT_EQ(summary(again)["states"], s["states"]);

  // A new import carries its own states: the rows set before are void.
  auto put = call(again, "PUT", "/api/v1/topology", cluster_document(8, 4));
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(summary(again)["states"]["hosts"]["healthy"], 8);
  EXPECT_EQ(agg_->stop(), 0);
  agg_->start();
  auto third = agg_->client();
  EXPECT_EQ(summary(third)["states"]["hosts"]["healthy"], 8);
  EXPECT_EQ(summary(third)["revision"], rev + 2);
}

// 2,500 hosts x 8 NPUs: about 1.35 MB of JSON, over the general 1 MiB body limit.
TEST(TopologyImportLimit, LargeImportIsAcceptedAndOneOverTheTopologyLimitChangesNothing) {
  const std::string large = cluster_document(2500, 8);
  ASSERT_GT(large.size(), std::size_t{1} << 20);
  TempDir dir;
  // The flag lowers the topology routes' limit to 4 MiB so that a document over it stays small here.
  AggregatorProcess agg(dir.path(), {"--topology-body-limit", std::to_string(std::size_t{4} << 20)});
  agg.start();
  // An import of this size takes seconds in a sanitizer build on a busy machine.
  HttpClientOptions options;
  options.bearer_token = kOperatorToken;
  options.timeout = std::chrono::minutes(5);
  HttpClient ops(agg.url(), options);
  auto put = call(ops, "PUT", "/api/v1/topology", large);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(body_of(put)["hosts"], 2500);
  const json before = summary(ops);

  // Other routes keep the general 1 MiB limit.
  auto plain = agg.client();
  auto other = call(plain, "POST", "/api/v1/subnets", std::string(std::size_t{2} << 20, ' '));
  EXPECT_EQ(other.status, 413) << other.body;

  const std::string over = cluster_document(8500, 8);
  ASSERT_GT(over.size(), std::size_t{4} << 20);
  auto refused = call(ops, "PUT", "/api/v1/topology", over);
  EXPECT_EQ(refused.status, 413) << refused.body;
  EXPECT_NE(refused.body.find(std::to_string(std::size_t{4} << 20)), std::string::npos) << refused.body;
  auto fresh = agg.client();
  EXPECT_EQ(summary(fresh), before);

  // The configuration file's key sets the same limit (the flag, given above, would override it).
  EXPECT_EQ(agg.stop(), 0);
  TempDir dir2;
  AggregatorProcess configured(dir2.path());
  configured.set_config("http:\n  topology_body_limit_bytes: 1048576\n");
  configured.start();
  auto small = configured.client();
  auto too_big = call(small, "PUT", "/api/v1/topology", large);
  EXPECT_EQ(too_big.status, 413) << too_big.body;
  auto after = configured.client();
  EXPECT_EQ(call(after, "GET", "/api/v1/topology").status, 404);
}

}  // namespace
}  // namespace hsns::testing
