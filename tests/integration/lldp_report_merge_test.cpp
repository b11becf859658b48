// The "lldp" section of telemetry reports feeding the topology's LLDP merge, over real HTTP on loopback
// against the real aggregator and its SQLite file (api/agents/reports.h, services/topology_service.h):
// - a report that arrives before any topology exists is stored and acknowledged, the merge counted as
//   no_topology;
// - after the import, a report's neighbours become the host links the topology lacked (added), confirm
//   the ones it has, and show in GET /api/v1/topology/lldp; the same neighbours again are not merged
//   again (unchanged), also after another host's links moved the revision; a resent batch (same seq) is
//   not merged at all;
// - a neighbour naming an unknown switch, or a leaf port the topology contradicts, is counted and logged,
//   never applied, and the batch is still stored and acknowledged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/proto/report.h"
#include "store/database.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "topology/import.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kCbor = "application/vnd.hsns.report.v1+cbor";

// node-1 has no host links (LLDP adds them); node-2 is cabled in the file (LLDP confirms or contradicts).
constexpr const char* kTopology = R"(version: 1
name: rails
defaults: {bandwidth_gbps: 400, latency_us: 0.5}
switches:
  - {name: leaf0, tier: leaf}
  - {name: leaf1, tier: leaf}
  - {name: spine0, tier: spine}
hosts:
  - name: node-1
    npus:
      - {index: 0, port: eth0}
      - {index: 1, port: eth1}
  - name: node-2
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: h2}
      - {index: 1, port: eth1, leaf: leaf1, leaf_port: h2}
  - name: node-3
    npus:
      - {index: 0, port: eth0}
links:
  - {lower: leaf0, upper: spine0, lower_port: up0, upper_port: leaf0}
  - {lower: leaf1, upper: spine0, lower_port: up0, upper_port: leaf1}
)";

proto::LldpNeighbor neighbor(const std::string& netdev, int npu, const std::string& system,
                             const std::string& port) {
  proto::LldpNeighbor n;
  n.netdev = netdev;
  n.npu = npu;
  n.source_mac = "02:00:00:aa:00:0" + std::to_string(npu);
  n.chassis_id_subtype = "mac_address";
  n.chassis_id = n.source_mac;
  n.port_id_subtype = "interface_name";
  n.port_id = port;
  n.ttl_s = 120;
  n.last_seen_ms = 1'764'640'000'000;
  n.system_name = system;
  return n;
}

proto::Report lldp_report(std::uint64_t seq, const std::string& host, std::vector<proto::LldpNeighbor> seen) {
  proto::Report r;
  r.seq = seq;
  r.ts_ms = 1'764'640'000'000 + static_cast<std::int64_t>(seq);
  r.lldp = proto::LldpNeighbors{host, r.ts_ms, std::move(seen)};
  return r;
}

class LldpReports : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_.start();
    agent_ = agg_.client(kAgentToken);
    for (const char* host : {"node-1", "node-2", "node-3"}) {
      const auto mac = [&](int npu) {
        std::string m = "02:00:00:00:0";
        m += host[5];
        m += ":0";
        m += std::to_string(npu);
        return m;
      };
      const json registration = {{"npus",
                                  {{{"index", 0}, {"netdev", "eth0"}, {"mac", mac(0)}},
                                   {{"index", 1}, {"netdev", "eth1"}, {"mac", mac(1)}}}}};
      auto r = agent_.put(std::string("/api/v1/hosts/") + host, registration.dump());
      ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error());
    }
  }

  // POSTs the report with the agent token; the acknowledgement must be the ack of its seq.
  void post_acked(const std::string& host, const proto::Report& report) {
    auto r = agent_.request("POST", "/api/v1/agents/" + host + "/reports",
                            proto::encode(report, proto::Encoding::cbor), kCbor);
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body), json({{"acked_seq", report.seq}}));
  }

  void import_topology() {
    auto r = ops_().request("PUT", "/api/v1/topology", kTopology, "application/yaml");
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, 200) << r->body;
  }

  json get(const std::string& target) {
    auto r = ops_().get(target);
    EXPECT_TRUE(r) << r.error();
    EXPECT_EQ(r->status, 200) << target << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }

  // The host link of (host, npu) in the exported model: "leaf/port", "" when none.
  std::string npu_link(const std::string& host, std::uint32_t npu) {
    auto yaml = ops_().get("/api/v1/topology/export?format=yaml");
    EXPECT_TRUE(yaml && yaml->status == 200);
    auto t = topology::import_topology(yaml->body);
    EXPECT_TRUE(t) << yaml->body;
    if (!t) return "?";
    const auto* n = t->npu({*t->find(host), npu});
    if (n == nullptr || n->link == topology::kNoLink) return "";
    const auto& l = t->link(n->link);
    return t->node(l.upper).name + "/" + l.upper_port;
  }

  double metric(const std::string& selector) {
    auto r = agg_.client().get("/metrics");
    EXPECT_TRUE(r);
    return metric_value(r->body, selector).value_or(-1);
  }

  std::int64_t batches() {
    store::Connection c(agg_.database().string(), true, 5000ms);
    auto st = c.prepare("SELECT COUNT(*) FROM telemetry_batches");
    EXPECT_TRUE(st);
    EXPECT_TRUE(st->step().value_or(false));
    return st->column_int64(0);
  }

  HttpClient ops_() { return agg_.client(); }

  TempDir dir_;
  AggregatorProcess agg_{dir_.path()};
  HttpClient agent_ = agg_.client(kAgentToken);
};

TEST_F(LldpReports, NeighboursOfAReportBecomeTheHostsLinks) {
  const std::vector<proto::LldpNeighbor> cabled = {neighbor("eth0", 0, "leaf0", "h1"),
                                                   neighbor("eth1", 1, "leaf1", "h1")};
  // No topology yet: stored and acknowledged, the merge counted as not possible.
  post_acked("node-1", lldp_report(1, "node-1", cabled));
  EXPECT_EQ(batches(), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="no_topology"})"), 1);

  import_topology();
  EXPECT_EQ(npu_link("node-1", 0), "");
  post_acked("node-1", lldp_report(2, "node-1", cabled));
  EXPECT_EQ(npu_link("node-1", 0), "leaf0/h1");
  EXPECT_EQ(npu_link("node-1", 1), "leaf1/h1");
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="merged"})"), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_links_total{change="added"})"), 2);
  auto summary = get("/api/v1/topology");
  EXPECT_EQ(summary["links"], 6);  // 2 fabric, 2 of node-2, 2 added
  EXPECT_EQ(summary["revision"], 2);
  const auto observed = get("/api/v1/topology/lldp")["items"];
  ASSERT_EQ(observed.size(), 2U) << observed.dump();
  EXPECT_EQ(observed[0], json({{"host", "node-1"},
                               {"port", "eth0"},
                               {"npu", 0},
                               {"neighbor_system", "leaf0"},
                               {"neighbor_port", "h1"},
                               {"observed_at", observed[0]["observed_at"]}}));
  EXPECT_EQ(observed[1]["neighbor_system"], "leaf1");

  // node-2 sees what its file says: confirmed, the model unchanged.
  post_acked("node-2", lldp_report(1, "node-2",
                                   {neighbor("eth0", 0, "leaf0", "h2"), neighbor("eth1", 1, "leaf1", "h2")}));
  EXPECT_EQ(get("/api/v1/topology")["revision"], 2);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="merged"})"), 2);
  EXPECT_EQ(get("/api/v1/topology/lldp")["items"].size(), 4U);

  // The same neighbours in the next batch: not merged again, also after another host's links moved the
  // revision (the model holds them already); a resent batch: not merged at all.
  post_acked("node-3", lldp_report(1, "node-3", {neighbor("eth0", 0, "leaf0", "h3")}));
  EXPECT_EQ(npu_link("node-3", 0), "leaf0/h3");
  EXPECT_EQ(get("/api/v1/topology")["revision"], 3);
  post_acked("node-1", lldp_report(3, "node-1", cabled));
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="unchanged"})"), 1);
  post_acked("node-1", lldp_report(3, "node-1", cabled));
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="unchanged"})"), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="merged"})"), 3);
  EXPECT_EQ(get("/api/v1/topology")["revision"], 3);
  EXPECT_EQ(batches(), 5);
}

TEST_F(LldpReports, UnknownSwitchesAndContradictionsAreCountedNotApplied) {
  import_topology();
  // eth0 names a switch the topology lacks; eth1 a leaf port other than the file's.
  post_acked("node-2", lldp_report(1, "node-2",
                                   {neighbor("eth0", 0, "leaf9", "h2"), neighbor("eth1", 1, "leaf1", "h7")}));
  EXPECT_EQ(batches(), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_merges_total{result="merged"})"), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_issues_total{kind="unresolved"})"), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_issues_total{kind="conflict"})"), 1);
  EXPECT_EQ(metric(R"(hsns_telemetry_lldp_links_total{change="added"})"), 0);
  EXPECT_EQ(npu_link("node-2", 0), "leaf0/h2");
  EXPECT_EQ(npu_link("node-2", 1), "leaf1/h2");
  EXPECT_EQ(get("/api/v1/topology")["revision"], 1);
  const std::string log = agg_.log();
  EXPECT_NE(log.find("report of node-2: LLDP observations[0].neighbor_system 'leaf9'"), std::string::npos)
      << log;
  EXPECT_NE(log.find("observations[1].neighbor_port 'h7'"), std::string::npos) << log;
  // Still serving, and a later good report merges.
  post_acked("node-1", lldp_report(1, "node-1", {neighbor("eth0", 0, "leaf0", "h1")}));
  EXPECT_EQ(npu_link("node-1", 0), "leaf0/h1");
}

}  // namespace
}  // namespace hsns::testing
