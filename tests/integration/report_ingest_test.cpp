// Telemetry report batches over real HTTP on loopback: POST /api/v1/agents/{host}/reports against the real
// aggregator with its SQLite file, read back with a read-only SQLite connection. Covers CBOR and JSON
// bodies, the acknowledgement and (host, seq) dedup, bad bodies stored nowhere, the route's own body
// limit, tokens bound to a host, and retention by size and by age with its /metrics counters.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "hsns/proto/report.h"
#include "store/database.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/report_sample.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kCbor = "application/vnd.hsns.report.v1+cbor";
constexpr const char* kRegistration = R"({"npus":[{"index":0,"netdev":"eth2","mac":"02:00:00:00:00:01"}]})";

std::int64_t count(const AggregatorProcess& agg, const std::string& sql) {
  store::Connection c(agg.database().string(), true, 5000ms);
  auto st = c.prepare(sql);
  if (!st) throw std::runtime_error(st.error().message);
  auto row = st->step();
  if (!row || !*row) throw std::runtime_error("no row for " + sql);
  return st->column_int64(0);
}

std::int64_t batches(const AggregatorProcess& agg) {
  return count(agg, "SELECT COUNT(*) FROM telemetry_batches");
}

HttpClient::Response post_report(HttpClient& client, const std::string& host, const proto::Report& report,
                                 proto::Encoding encoding = proto::Encoding::cbor) {
  auto r = client.request("POST", "/api/v1/agents/" + host + "/reports", proto::encode(report, encoding),
                          encoding == proto::Encoding::cbor ? kCbor : "application/json");
  if (!r) throw std::runtime_error(r.error());
  return *r;
}

double metric(AggregatorProcess& agg, const std::string& selector) {
  auto r = agg.client().get("/metrics");
  if (!r) throw std::runtime_error(r.error());
  return metric_value(r->body, selector).value_or(-1);
}

// Polls until pred() holds, for at most 20 s (a bound for a hung aggregator, not a timing check).
template <typename Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return pred();
}

// Starts the aggregator and registers node-1 with the unbound agent token, which the test then uses.
HttpClient start_with_node(AggregatorProcess& agg) {
  agg.start();
  auto agent = agg.client(kAgentToken);
  auto r = agent.put("/api/v1/hosts/node-1", kRegistration);
  if (!r || r->status != 201) throw std::runtime_error("registering node-1 failed");
  return agent;
}

TEST(ReportIngest, BatchesAreStoredAcknowledgedAndStoredOncePerSeq) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  auto agent = start_with_node(agg);

  auto r = post_report(agent, "node-1", sample_report(1, 5, 2));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"acked_seq", 1}}));
  r = post_report(agent, "node-1", sample_report(2, 3, 2), proto::Encoding::json);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"acked_seq", 2}}));
  EXPECT_EQ(batches(agg), 2);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_flows"), 8);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_qps"), 2);

  // The same seq again (a resend after a lost answer): the same acknowledgement, nothing stored again.
  r = post_report(agent, "node-1", sample_report(1, 5, 2));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"acked_seq", 1}}));
  EXPECT_EQ(batches(agg), 2);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_flows"), 8);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_batches_total{result="duplicate"})"), 1);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_batches_total{result="stored"})"), 2);

  // An unregistered host: 404, nothing stored.
  auto unregistered = sample_report(3);
  for (auto* section_host : {&unregistered.qp->host, &unregistered.optics->host, &unregistered.lldp->host})
    *section_host = "node-9";
  EXPECT_EQ(post_report(agent, "node-9", unregistered).status, 404);
  EXPECT_EQ(batches(agg), 2);
}

TEST(ReportIngest, BadBodiesAreRefusedNamingTheFieldAndStoreNothing) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  auto agent = start_with_node(agg);

  json bad = proto::to_json(sample_report(1));
  bad["flows"][0]["records"][1]["sport"] = "x";
  bad["qp"]["qps"][0]["state"] = "HAPPY";
  auto r = agent.request("POST", "/api/v1/agents/node-1/reports",
                         proto::encode_document(bad, proto::Encoding::cbor), kCbor);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(r->content_type, "application/problem+json");
  EXPECT_NE(r->body.find("flows[0].records[1].sport"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("qp.qps[0].state"), std::string::npos) << r->body;

  // A section naming another host.
  auto other = sample_report(2);
  other.lldp->host = "node-2";
  r = agent.request("POST", "/api/v1/agents/node-1/reports", proto::encode(other, proto::Encoding::cbor),
                    kCbor);
  ASSERT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("lldp.host"), std::string::npos) << r->body;

  // Not CBOR at all, and a media type the route does not read.
  r = agent.request("POST", "/api/v1/agents/node-1/reports", "\xff\x00", kCbor);
  EXPECT_EQ(r->status, 400) << r->body;
  r = agent.request("POST", "/api/v1/agents/node-1/reports", "seq=1", "text/plain");
  EXPECT_EQ(r->status, 415) << r->body;
  EXPECT_NE(r->body.find("Content-Type"), std::string::npos) << r->body;
  EXPECT_EQ(batches(agg), 0);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_flows"), 0);
}

TEST(ReportIngest, TheRouteHasItsOwnBodyLimit) {
  TempDir dir;
  AggregatorProcess agg(dir.path(), {"--report-body-limit", "4096"});
  auto agent = start_with_node(agg);
  const auto big = sample_report(1, 200, 2);
  ASSERT_GT(proto::encode(big, proto::Encoding::cbor).size(), 4096U);
  EXPECT_EQ(post_report(agent, "node-1", big).status, 413);
  EXPECT_EQ(post_report(agent, "node-1", sample_report(2, 0, 1)).status, 200);
  EXPECT_EQ(batches(agg), 1);

  // Configured in the YAML file: http.report_body_limit_bytes; larger than the 1 MiB of other routes.
  TempDir dir2;
  AggregatorProcess configured(dir2.path());
  configured.set_config("http:\n  report_body_limit_bytes: 8388608\n");
  configured.start();
  auto agent2 = configured.client(kAgentToken);
  ASSERT_EQ(agent2.put("/api/v1/hosts/node-1", kRegistration)->status, 201);
  // Over 1 MiB in long LLDP descriptions (a few hundred rows: cheap to store under the sanitizers).
  auto large = sample_report(1, 10, 2);
  const auto neighbor = large.lldp->neighbors.front();
  large.lldp->neighbors.clear();
  for (int i = 0; i < 600; ++i) {
    auto n = neighbor;
    n.port_id = "swp" + std::to_string(i);
    n.system_description = std::string(1000, 'd');
    n.port_description = std::string(900, 'p');
    large.lldp->neighbors.push_back(n);
  }
  ASSERT_GT(proto::encode(large, proto::Encoding::cbor).size(), std::size_t{1} << 20);
  auto r = post_report(agent2, "node-1", large);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(count(configured, "SELECT COUNT(*) FROM telemetry_lldp_neighbors"), 600);
}

TEST(ReportIngest, ATokenBoundToAHostActsForThatHostOnly) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto bound = agg.client(kBoundAgentToken);
  ASSERT_EQ(bound.put("/api/v1/hosts/node-1", kRegistration)->status, 201);
  ASSERT_EQ(agg.client().put("/api/v1/hosts/node-2", kRegistration)->status, 201);
  EXPECT_EQ(post_report(bound, "node-1", sample_report(1)).status, 200);

  auto wrong = sample_report(1);
  for (auto* section_host : {&wrong.qp->host, &wrong.optics->host, &wrong.lldp->host})
    *section_host = "node-2";
  auto r = post_report(bound, "node-2", wrong);
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("bound to host node-1"), std::string::npos) << r.body;
  EXPECT_EQ(r.content_type, "application/problem+json");
  // The other agent routes that take {host}: status, desired state, host registration.
  const std::string status = R"({"applied_generation":1})";
  EXPECT_EQ(bound.put("/api/v1/agents/node-2/status", status)->status, 403);
  EXPECT_EQ(bound.get("/api/v1/agents/node-2/desired")->status, 403);
  EXPECT_EQ(bound.put("/api/v1/hosts/node-2", kRegistration)->status, 403);
  EXPECT_EQ(bound.put("/api/v1/agents/node-1/status", status)->status, 200);
  EXPECT_EQ(bound.get("/api/v1/agents/node-1/desired")->status, 200);
  EXPECT_EQ(metric(agg, R"(hsns_http_auth_failures_total{reason="wrong_host"})"), 4);

  // An agent token without a binding acts for every host, as before, and the start-up log says so.
  auto unbound = agg.client(kAgentToken);
  EXPECT_EQ(post_report(unbound, "node-2", wrong).status, 200);
  EXPECT_NE(agg.log().find("agent token 'hsnsd' is not bound to a host"), std::string::npos) << agg.log();
  EXPECT_EQ(agg.log().find("agent token 'hsnsd-node-1' is not bound"), std::string::npos);
  EXPECT_EQ(batches(agg), 2);
}

TEST(ReportIngest, RetentionPrunesTheOldestBatchesOverTheSizeBudget) {
  TempDir dir;
  AggregatorProcess agg(dir.path(), {"--telemetry-prune-interval", "100", "--telemetry-max-age", "0"});
  // The budget holds about two of the batches below.
  const auto one = proto::encode(sample_report(1), proto::Encoding::cbor).size();
  agg.set_config("telemetry:\n  max_bytes: " + std::to_string(2 * one + one / 2) + "\n");
  auto agent = start_with_node(agg);
  for (std::uint64_t seq = 1; seq <= 5; ++seq)
    ASSERT_EQ(post_report(agent, "node-1", sample_report(seq)).status, 200);
  ASSERT_TRUE(eventually([&] { return batches(agg) <= 2; })) << batches(agg);
  EXPECT_EQ(count(agg, "SELECT MIN(seq) FROM telemetry_batches"), 4);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_flows"), 8);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_pruned_batches_total{reason="size"})"), 3);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_pruned_rows_total{table="flows"})"), 12);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_pruned_batches_total{reason="age"})"), 0);
}

TEST(ReportIngest, RetentionPrunesBatchesOlderThanTheMaximumAge) {
  TempDir dir;
  AggregatorProcess agg(dir.path(), {"--telemetry-prune-interval", "100", "--telemetry-max-age", "1"});
  auto agent = start_with_node(agg);
  ASSERT_EQ(post_report(agent, "node-1", sample_report(1)).status, 200);
  ASSERT_EQ(post_report(agent, "node-1", sample_report(2)).status, 200);
  ASSERT_TRUE(eventually([&] { return batches(agg) == 0; })) << batches(agg);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM telemetry_port_counters"), 0);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_pruned_batches_total{reason="age"})"), 2);
  EXPECT_EQ(metric(agg, R"(hsns_telemetry_pruned_rows_total{table="port_counters"})"), 36);
}

}  // namespace
}  // namespace hsns::testing
