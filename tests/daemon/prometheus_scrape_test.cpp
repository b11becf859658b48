// The real Prometheus server scraping the real hsnsd: hsnsd runs in a network namespace of the test's own
// with every component on (isolation and the flow probe on a veth named like the fixture's port, the
// counters on the recorded sysfs tree tests/fixtures/daemon/sysfs-counters, QP inventory, optics, LLDP),
// against the real aggregator on the root side of a management veth; hsns-roce-gen sends RoCEv2 frames into
// the probed port. Prometheus (Debian `prometheus`,
// installed by scripts/install-deps.sh) runs in the same namespace on loopback with a temporary
// configuration scraping hsnsd every second; the test waits until its target is up, then reads health and
// telemetry metrics through Prometheus' query API and compares them with hsnsd's own /metrics. The full
// /metrics text passes `promtool check metrics`.
//
// Needs root (namespaces, bpf, tc), prometheus, promtool and curl: a missing one is a failure, not a skip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/prometheus_server.h"

namespace hsns::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kNpu = "ens1f0np0";  // the mlx5 port of the sysfs-counters fixture

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A TCP port nothing listens on in namespace ns (the kernel's choice for a socket bound to port 0).
int free_port_in(const std::string& ns) {
  const NetnsScope in_ns(ns);
  return free_loopback_port();
}

class PrometheusScrape : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0U) << "needs root (network namespaces, bpf, tc)";
    for (const char* tool : {"prometheus", "promtool", "curl"})
      ASSERT_EQ(sh(std::string("command -v ") + tool).status, 0)
          << tool << " is missing: scripts/install-deps.sh installs it";
    pin_root_ = "/sys/fs/bpf/hsns-test-prometheus-" + std::to_string(::getpid());
    sh("rm -rf " + pin_root_);
    ns_ = nets_.add("0");
    mgmt_ = nets_.link_to_root(ns_, "mgmt0");
    nets_.veth({ns_, kNpu, {}}, {ns_, std::string(kNpu) + "p", {}});
    std::ofstream(work_.path() / "agent.token") << kAgentToken << "\n";
    aggregator_.set_listen(mgmt_.root_address);
    aggregator_.start();
    ASSERT_GT(aggregator_.port(), 0);
  }

  void TearDown() override {
    generator_.reset();
    prometheus_.reset();
    if (hsnsd_) hsnsd_->stop();  // SIGTERM: the probe and isolation detach
    sh("rm -rf " + pin_root_);
  }

  void start_hsnsd() {
    metrics_port_ = free_port_in(ns_);
    ASSERT_GT(metrics_port_, 0);
    std::ofstream(work_.path() / "hsnsd.yaml")
        << "host: prom-node\n"
        << "aggregator: {url: \"http://" << mgmt_.root_address << ":" << aggregator_.port()
        << "\", token_file: \"" << (work_.path() / "agent.token").string() << "\", timeout_ms: 2000}\n"
        << "state_dir: " << (work_.path() / "state").string() << "\n"
        << "sysfs_root: " << source_path("tests/fixtures/daemon/sysfs-counters").string() << "\n"
        << "metrics: {listen: \"127.0.0.1:" << metrics_port_ << "\"}\n"
        << "interval_ms: 1000\n"
        << "backoff: {initial_ms: 100, max_ms: 1000}\n"
        << "npus:\n  - {index: 0, netdev: " << kNpu << "}\n"
        << "isolation: {enabled: true, pin_dir: " << pin_root_ << "/isolation}\n"
        << "flow_probe:\n  interval_ms: 1000\n  table_size: 4096\n  pin_dir: " << pin_root_
        << "/roce_flow\n  sink: " << (work_.path() / "flows.jsonl").string() << "\n  interfaces:\n"
        << "    - {name: " << kNpu << ", attach: tc, direction: both}\n";
    // nsenter keeps the host's mount namespace: the bpffs pins and the fixture tree stay visible.
    hsnsd_ =
        std::make_unique<Process>(Namespaces::in(ns_, {build_path("daemon/core/hsnsd").string(), "run",
                                                       "--config", (work_.path() / "hsnsd.yaml").string()}),
                                  log_to(work_.path() / "hsnsd.log"));
  }

  void start_prometheus() {
    prometheus_port_ = free_port_in(ns_);
    ASSERT_GT(prometheus_port_, 0);
    std::ofstream(work_.path() / "prometheus.yml")
        << "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
        << "scrape_configs:\n"
        << "  - job_name: hsnsd\n"
        << "    static_configs:\n"
        << "      - targets: [\"127.0.0.1:" << metrics_port_ << "\"]\n";
    prometheus_ = std::make_unique<Process>(
        Namespaces::in(ns_, {"prometheus", "--config.file=" + (work_.path() / "prometheus.yml").string(),
                             "--storage.tsdb.path=" + (work_.path() / "tsdb").string(),
                             "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_)}),
        log_to(work_.path() / "prometheus.log"));
  }

  // A GET inside the namespace; "" when it fails. args: extra curl arguments (query parameters).
  std::string get(int port, const std::string& path, const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {"curl", "-sf", "--max-time", "5"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("http://127.0.0.1:" + std::to_string(port) + path);
    const auto r = Namespaces::exec(ns_, argv);
    return r.ok() ? r.output : "";
  }
  std::string hsnsd_metrics() { return get(metrics_port_, "/metrics"); }
  std::optional<double> direct(const std::string& selector) {
    return metric_value(hsnsd_metrics(), selector);
  }

  // The value Prometheus answers for an instant query of one series (nullopt: no or several series).
  std::optional<double> query(const std::string& promql) {
    const auto body = get(prometheus_port_, "/api/v1/query", {"-G", "--data-urlencode", "query=" + promql});
    const auto j = json::parse(body, nullptr, false);
    if (!j.is_object() || j.value("status", "") != "success") return std::nullopt;
    const auto& result = j["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    return std::stod(result[0]["value"][1].get<std::string>());
  }

  // The value of the first sample of one series that Prometheus scraped after unix time `after`.
  std::optional<double> first_sample_after(const std::string& selector, double after) {
    const auto body =
        get(prometheus_port_, "/api/v1/query", {"-G", "--data-urlencode", "query=" + selector + "[30s]"});
    const auto j = json::parse(body, nullptr, false);
    if (!j.is_object() || j.value("status", "") != "success") return std::nullopt;
    const auto& result = j["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    for (const auto& sample : result[0]["values"])
      if (sample[0].get<double>() > after) return std::stod(sample[1].get<std::string>());
    return std::nullopt;
  }

  bool target_up() {
    const auto j = json::parse(get(prometheus_port_, "/api/v1/targets"), nullptr, false);
    if (!j.is_object()) return false;
    for (const auto& t : j["data"]["activeTargets"])
      if (t.value("scrapePool", "") == "hsnsd" && t.value("health", "") == "up") return true;
    return false;
  }

  std::string logs() {
    return "--- hsnsd.log\n" + read_file(work_.path() / "hsnsd.log") + "--- prometheus.log\n" +
           read_file(work_.path() / "prometheus.log");
  }

  TempDir work_;
  Namespaces nets_{"hsnsprom"};  // before the processes: they are killed before their namespace goes
  std::string ns_;
  RootLink mgmt_;
  std::string pin_root_;
  AggregatorProcess aggregator_{work_.path()};
  std::unique_ptr<Process> hsnsd_;
  std::unique_ptr<Process> prometheus_;
  std::unique_ptr<Process> generator_;  // hsns-roce-gen
  int metrics_port_ = 0;
  int prometheus_port_ = 0;
};

TEST_F(PrometheusScrape, PrometheusScrapesHsnsdHealthAndTelemetryAndPromtoolIsClean) {
  start_hsnsd();
  // Every component ready, the flow probe attached, a status report accepted and a harvest done.
  ASSERT_TRUE(wait_for(
      [&] {
        const auto text = hsnsd_metrics();
        for (const char* c : {"isolation", "agent", "reconciler", "qos", "status", "counters", "flows",
                              "rdma_qp", "optics", "lldp"})
          if (metric_value(text, std::string("hsns_daemon_component_ready{component=\"") + c + "\"}") != 1.0)
            return false;
        return metric_value(text, "hsns_flow_probe_up") == 1.0 &&
               metric_value(text, "hsns_daemon_last_successful_report_timestamp_seconds").value_or(0) > 0 &&
               metric_value(text, "hsns_flow_probe_harvest_duration_seconds_count").value_or(0) >= 1;
      },
      30s))
      << hsnsd_metrics() << logs();

  const std::string text = hsnsd_metrics();
  // The health metrics, in base units, with the values this configuration gives.
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_table_slots"), 8192.0)
      << "4096 flows: 1.5 x rounded up to 2^n";
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_table_entries"), 0.0) << "no RoCE traffic on the port";
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_table_full_packets_total"), 0.0);
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_ringbuf_dropped_packets_total"), 0.0);
  // Every harvest so far was empty: all of them in the le="0" bucket.
  const auto harvests = metric_value(text, "hsns_flow_probe_harvest_records_count");
  EXPECT_GE(harvests.value_or(0), 1.0) << text;
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_harvest_records_bucket{le=\"0\"}"), harvests);
  const double now = unix_now();
  for (const char* ts : {"hsns_daemon_last_successful_report_timestamp_seconds",
                         "hsns_daemon_last_successful_desired_poll_timestamp_seconds",
                         "hsns_flow_probe_last_harvest_timestamp_seconds"}) {
    const double v = metric_value(text, ts).value_or(0);
    EXPECT_GT(v, now - 60) << ts;
    EXPECT_LE(v, now + 1) << ts;
  }
  EXPECT_GE(metric_value(text, "hsns_daemon_status_reports_total").value_or(0), 1.0);
  EXPECT_GE(metric_value(text, "hsns_daemon_desired_polls_total").value_or(0), 1.0);
  EXPECT_EQ(metric_value(text, "hsns_daemon_status_report_errors_total"), 0.0);
  // The telemetry of the fixture tree: the kernel's 4-byte words as bytes.
  EXPECT_GT(metric_value(text, "hsns_rdma_port_bytes_total{device=\"mlx5_0\",port=\"1\",direction=\"tx\"}")
                .value_or(0),
            0.0)
      << text;

  // RoCEv2 traffic into the probed port: 16 flows sent from the veth's other end for 8 s (2000 packets a
  // second), so every 1 s harvest finds all 16 in the table.
  generator_ = std::make_unique<Process>(
      Namespaces::in(ns_, {build_path("lab/roce_gen/hsns-roce-gen").string(), "--mode", "raw", "--iface",
                           std::string(kNpu) + "p", "--src", "198.18.60.1", "--dst", "198.18.60.2", "--seed",
                           "7", "--flows", "16", "--packets", "1000", "--rate", "2000"}),
      log_to(work_.path() / "roce-gen.log"));
  std::string busy;
  EXPECT_TRUE(wait_for(
      [&] {
        busy = hsnsd_metrics();
        return metric_value(busy, "hsns_flow_probe_table_entries") == 16.0 &&
               metric_value(busy, "hsns_flow_probe_last_harvest_records") == 16.0;
      },
      10s, 100ms))
      << busy << read_file(work_.path() / "roce-gen.log") << logs();
  // At least that harvest in the (10, 100] records bucket; none lost or overflowing with 16 flows.
  EXPECT_GE(metric_value(busy, "hsns_flow_probe_harvest_records_bucket{le=\"100\"}").value_or(0) -
                metric_value(busy, "hsns_flow_probe_harvest_records_bucket{le=\"10\"}").value_or(0),
            1.0);
  EXPECT_EQ(metric_value(busy, "hsns_flow_probe_table_full_packets_total"), 0.0);
  EXPECT_EQ(metric_value(busy, "hsns_flow_probe_ringbuf_dropped_packets_total"), 0.0);
  EXPECT_GT(metric_value(busy, "hsns_flow_probe_packets_total{counter=\"roce\"}").value_or(0), 0.0);

  // promtool on the whole exposition, every component on and the probe counting.
  std::ofstream(work_.path() / "metrics.txt") << busy;
  const auto lint = run_command({"promtool", "check", "metrics"}, busy);
  EXPECT_EQ(lint.status, 0) << lint;
  EXPECT_EQ(lint.output, "") << "promtool reported lint problems";

  start_prometheus();
  ASSERT_TRUE(wait_for([&] { return target_up(); }, 30s, 200ms))
      << get(prometheus_port_, "/api/v1/targets") << logs();
  EXPECT_EQ(query("up{job=\"hsnsd\"}"), 1.0);

  // Series that stay put while nothing changes: Prometheus' value is hsnsd's value.
  for (const std::string selector :
       {"hsns_flow_probe_up", "hsns_flow_probe_table_slots", "hsns_flow_probe_table_entries",
        "hsns_flow_probe_ringbuf_dropped_packets_total", "hsns_daemon_component_ready{component=\"flows\"}",
        "hsns_daemon_aggregator_up", "hsns_daemon_status_report_errors_total",
        "hsns_rdma_port_bytes_total{device=\"mlx5_0\",port=\"1\",direction=\"tx\"}",
        "hsns_netdev_bytes_total{netdev=\"ens1f0np0\",direction=\"rx\"}"}) {
    std::optional<double> scraped;
    std::optional<double> own;
    EXPECT_TRUE(wait_for(
        [&] {
          scraped = query(selector);
          own = direct(selector);
          return scraped && own && *scraped == *own;
        },
        10s, 250ms))
        << selector << ": Prometheus " << scraped.value_or(-1) << ", hsnsd " << own.value_or(-1);
  }

  // Series that only grow (harvests every second, a poll every interval, a report per heartbeat): the
  // first sample Prometheus scraped after a reading of /metrics lies between that reading and one taken
  // after the query. The samples come with their scrape times from a range selector.
  for (const std::string selector :
       {"hsns_flow_probe_harvest_duration_seconds_count", "hsns_flow_probe_harvests_total",
        "hsns_flow_probe_records_total", "hsns_flow_probe_packets_total{counter=\"roce\"}",
        "hsns_daemon_last_successful_desired_poll_timestamp_seconds",
        "hsns_daemon_last_successful_report_timestamp_seconds", "hsns_daemon_desired_polls_total"}) {
    const auto before = direct(selector);
    const double read_at = unix_now();
    ASSERT_TRUE(before) << selector;
    std::optional<double> scraped;
    EXPECT_TRUE(wait_for(
        [&] {
          scraped = first_sample_after(selector, read_at);
          return scraped.has_value();
        },
        10s, 250ms))
        << selector;
    const auto after = direct(selector);
    ASSERT_TRUE(scraped && after) << selector;
    EXPECT_LE(*before, *scraped) << selector;
    EXPECT_LE(*scraped, *after) << selector;
  }
}

}  // namespace
}  // namespace hsns::testing
