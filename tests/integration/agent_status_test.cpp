// Node-daemon status reports: PUT/GET /api/v1/agents/{host}/status and GET /api/v1/agents against the
// real aggregator.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

TEST(AgentStatus, ReportsAreValidatedStoredAndSummarised) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto agent = agg.client(kAgentToken);
  ASSERT_EQ(
      agent.put("/api/v1/hosts/h1", R"({"npus":[{"index":0,"netdev":"eth2","mac":"02:00:00:00:00:01"}]})")
          ->status,
      201);
  ASSERT_EQ(ops.put("/api/v1/hosts/h2", R"({"npus":[]})")->status, 201);
  auto subnet = json::parse(ops.post("/api/v1/subnets", R"({"name":"a","cidr":"198.18.0.0/24"})")->body);
  auto port = json::parse(
      ops.post("/api/v1/ports", json({{"subnet_id", subnet["id"]}, {"host", "h1"}, {"npu", 0}}).dump())
          ->body);
  const auto desired = json::parse(agent.get("/api/v1/agents/h1/desired")->body);
  const int generation = desired["generation"];

  EXPECT_EQ(agent.get("/api/v1/agents/h1/status")->status, 404);  // nothing reported yet
  const json report = {
      {"applied_generation", generation},
      {"ports",
       {{{"port_id", port["id"]},
         {"netdev", "eth2"},
         {"state", "converged"},
         {"drift", {"address was missing"}}}}},
      {"qos", {{{"netdev", "eth2"}, {"state", "drift"}, {"findings", {"PFC disabled on priority 3"}}}}},
      {"daemon", {{"version", "0.1.0"}, {"started_at", "2026-11-29T17:00:00Z"}}}};
  auto put = agent.put("/api/v1/agents/h1/status", report.dump());
  ASSERT_EQ(put->status, 200) << put->body;
  auto s = json::parse(put->body);
  EXPECT_EQ(s["in_sync"], true);
  EXPECT_EQ(s["ports_converged"], 1);
  EXPECT_EQ(s["qos_drift"], 1);

  auto got = json::parse(ops.get("/api/v1/agents/h1/status")->body);
  EXPECT_EQ(got["report"], report);
  EXPECT_EQ(got["applied_generation"], generation);

  // A new port makes the host's desired generation move past what the daemon applied.
  ASSERT_EQ(ops.put("/api/v1/hosts/h1", R"({"npus":[{"index":0,"netdev":"eth2","mac":"02:00:00:00:00:01"},)"
                                        R"({"index":1,"netdev":"eth3","mac":"02:00:00:00:00:02"}]})")
                ->status,
            200);
  auto list = json::parse(ops.get("/api/v1/agents")->body);
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["host"], "h1");
  EXPECT_EQ(list["items"][0]["in_sync"], false);
  EXPECT_EQ(list["items"][1]["host"], "h2");
  EXPECT_TRUE(list["items"][1]["applied_generation"].is_null());

  // Bad reports are rejected naming the field, and the stored report stays as it was.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"applied_generation":-1})", "applied_generation"},
      {R"({"applied_generation":1,"ports":[{"port_id":"x","state":"happy"}]})", "ports[0].state"},
      {R"({"applied_generation":1,"qos":[{"netdev":"eth2","state":"drift","findings":[7]}]})",
       "qos[0].findings[0]"},
      {R"({"applied_generation":1,"extra":true})", "extra"},
  };
  for (const auto& [body, field] : bad) {
    auto r = agent.put("/api/v1/agents/h1/status", body);
    ASSERT_EQ(r->status, 400) << body;
    EXPECT_NE(r->body.find(field), std::string::npos) << r->body;
  }
  EXPECT_EQ(agent.put("/api/v1/agents/nope/status", report.dump())->status, 404);
  EXPECT_EQ(agg.client(kViewerToken).put("/api/v1/agents/h1/status", report.dump())->status, 403);
  EXPECT_EQ(json::parse(ops.get("/api/v1/agents/h1/status")->body)["report"], report);
  EXPECT_EQ(agg.stop(), 0);
}

}  // namespace
}  // namespace hsns::testing
