// The Prometheus source against a real Prometheus (Debian `prometheus`): Prometheus scrapes a small
// exposition this test serves on loopback (switch port gauges, and a counter with explicit timestamps so
// its rate is exact); the real hsns-aggregator's source queries Prometheus every second and
// GET /api/v1/kpis shows the mapped samples. A bad query, a dead server and an answer that is not JSON are
// counted by reason in /metrics while the good queries go on.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/prometheus_server.h"

namespace hsns::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json points(HttpClient& c, const std::string& entity, const std::string& metric) {
  auto r = c.get("/api/v1/kpis?entity=" + encode_query_value(entity) + "&metric=" + metric);
  if (!r || r->status != 200) return json::array();
  return json::parse(r->body, nullptr, false)["points"];
}

TEST(PrometheusSource, MapsARealPrometheusAnswersIntoTheKpiStore) {
  TempDir dir;
  // The counter rises 5000 per second of its own timestamps: Prometheus keeps the timestamps, the range
  // query answers them, so the source's rate is exactly 5000/s.
  const std::int64_t t0 = now_ms() - 60'000;
  ExpositionServer exposition([t0] {
    const std::int64_t k = (now_ms() - t0) / 1000;
    return std::string("# TYPE fabric_port_rx_errors gauge\n") +
           "fabric_port_rx_errors{switch=\"leaf01\",ifName=\"Ethernet1\"} 3\n" +
           "fabric_port_rx_errors{switch=\"leaf01\",ifName=\"Ethernet2\"} 0\n" +
           "fabric_port_rx_errors{ifName=\"Ethernet9\"} 1\n" +
           "# TYPE fabric_port_in_octets_total counter\n" +
           "fabric_port_in_octets_total{switch=\"leaf01\",ifName=\"Ethernet1\"} " + std::to_string(5000 * k) +
           " " + std::to_string(t0 + k * 1000) + "\n";
  });
  ASSERT_GT(exposition.port(), 0);
  PrometheusServer prometheus(dir.path());
  prometheus.start({{"fabric", "127.0.0.1:" + std::to_string(exposition.port())}});
  if (HasFatalFailure()) return;
  ASSERT_TRUE(wait_for([&] { return prometheus.target_up("fabric"); }, 30s)) << prometheus.log();

  const int dead = free_loopback_port();
  std::filesystem::create_directories(dir.path() / "agg");
  AggregatorProcess agg(dir.path() / "agg");
  agg.set_config(
      "prometheus_sources:\n"
      "  - name: lab\n"
      "    url: " +
      prometheus.url() +
      "\n"
      "    interval_ms: 1000\n"
      "    timeout_ms: 900\n"
      "    queries:\n"
      "      - {query: 'fabric_port_rx_errors', entity: '{switch}/{ifName}', metric: if_in_errors_per_s}\n"
      "      - {query: 'fabric_port_in_octets_total[10s]', entity: '{switch}/{ifName}',"
      " metric: if_in_octets_per_s, type: counter}\n"
      "      - {query: 'sum(', entity: x, metric: y}\n"
      "  - name: dead\n"
      "    url: http://127.0.0.1:" +
      std::to_string(dead) +
      "\n"
      "    interval_ms: 1000\n"
      "    timeout_ms: 500\n"
      "    queries: [{query: up, entity: '{instance}', metric: up}]\n"
      "  - name: notjson\n"
      "    url: http://127.0.0.1:" +
      std::to_string(exposition.port()) +
      "\n"
      "    interval_ms: 1000\n"
      "    timeout_ms: 500\n"
      "    queries: [{query: up, entity: '{instance}', metric: up}]\n");
  agg.start();
  auto viewer = agg.client(kViewerToken);

  // The gauges as Prometheus has them, at the queries' evaluation times.
  ASSERT_TRUE(
      wait_for([&] { return points(viewer, "leaf01/Ethernet1", "if_in_errors_per_s").size() >= 2; }, 30s))
      << agg.log() << prometheus.log();
  for (const auto& p : points(viewer, "leaf01/Ethernet1", "if_in_errors_per_s")) EXPECT_EQ(p["last"], 3.0);
  const auto zero = points(viewer, "leaf01/Ethernet2", "if_in_errors_per_s");
  ASSERT_FALSE(zero.empty());
  EXPECT_EQ(zero[0]["last"], 0.0);
  // The series without a switch label is not mapped (no "{switch}"), and nothing else is stored under it.
  EXPECT_TRUE(points(viewer, "Ethernet9", "if_in_errors_per_s").empty());

  // The counter's rate from the samples' own times: exactly 5000/s, at whole seconds after t0.
  ASSERT_TRUE(
      wait_for([&] { return points(viewer, "leaf01/Ethernet1", "if_in_octets_per_s").size() >= 3; }, 30s))
      << agg.log();
  for (const auto& p : points(viewer, "leaf01/Ethernet1", "if_in_octets_per_s")) {
    EXPECT_DOUBLE_EQ(p["last"].get<double>(), 5000.0) << p.dump();
    EXPECT_EQ((p["ts_ms"].get<std::int64_t>() - t0) % 1000, 0) << p.dump();
  }

  // Failures counted by reason, the good queries going on, the aggregator alive.
  ASSERT_TRUE(wait_for(
      [&] {
        auto m = viewer.get("/metrics");
        if (!m) return false;
        return metric_value(m->body,
                            R"(hsns_prometheus_source_failures_total{source="lab",reason="error_status"})")
                       .value_or(0) >= 2 &&
               metric_value(m->body,
                            R"(hsns_prometheus_source_failures_total{source="dead",reason="transport"})")
                       .value_or(0) >= 2 &&
               metric_value(m->body,
                            R"(hsns_prometheus_source_failures_total{source="notjson",reason="malformed"})")
                       .value_or(0) >= 2;
      },
      30s))
      << agg.log();
  auto m = viewer.get("/metrics");
  ASSERT_TRUE(m.has_value());
  EXPECT_GE(metric_value(m->body, R"(hsns_prometheus_source_samples_total{source="lab"})").value_or(0), 5.0);
  EXPECT_GE(
      metric_value(m->body, R"(hsns_prometheus_source_skipped_series_total{source="lab",reason="unmapped"})")
          .value_or(0),
      1.0);
  EXPECT_EQ(
      metric_value(m->body, R"(hsns_prometheus_source_failures_total{source="lab",reason="transport"})"),
      0.0);
  EXPECT_GT(metric_value(m->body, R"(hsns_prometheus_source_last_success_timestamp_seconds{source="lab"})")
                .value_or(0),
            1e9);
  EXPECT_FALSE(
      metric_value(m->body, R"(hsns_prometheus_source_last_success_timestamp_seconds{source="dead"})")
          .has_value());
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

TEST(PrometheusSource, AConfigurationErrorNamesTheFieldAndStopsTheStart) {
  TempDir dir;
  const auto config = dir.path() / "aggregator.yaml";
  std::ofstream(config) << "prometheus_sources:\n  - {name: a, url: 'http://127.0.0.1:9', "
                           "queries: [{query: up, entity: '{instance', metric: up}]}\n";
  const auto r = sh(build_path("aggregator/hsns-aggregator").string() + " check-config --config " +
                    config.string() + " --insecure-no-auth 2>&1");
  EXPECT_EQ(r.status, 64) << r.output;
  EXPECT_NE(r.output.find("prometheus_sources[0].queries[0].entity: must be a template"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace hsns::testing
