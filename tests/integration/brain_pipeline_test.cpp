// The network brain's live pipeline in the real hsns-aggregator over loopback (aggregator/brain/): a
// link-down line of a topology switch sent to the syslog port and an optical-power series pushed through
// POST /api/v1/kpis raise their faults (the same line sent by util-linux `logger` under this machine's
// name, which no topology names, is kept in the log and raises nothing), seen in GET /api/v1/brain/status and
// in /metrics (promtool clean); a pattern file with an error is refused by POST /api/v1/brain/reload with a
// 422 naming its file and line, the previous library staying; SIGHUP reloads; the brain can be switched off.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/raw_connection.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class BrainPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(source_path("patterns"), patterns_);
    udp_port_ = free_loopback_port(SOCK_DGRAM);
    aggregator_.set_config("syslog:\n  udp_listen: \"127.0.0.1:" + std::to_string(udp_port_) +
                           "\"\nbrain:\n  patterns_dir: \"" + patterns_.string() + "\"\n");
    aggregator_.start();
  }

  json status() {
    auto r = aggregator_.client(kViewerToken).get("/api/v1/brain/status");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : r.error());
    return r && r->status == 200 ? json::parse(r->body) : json::object();
  }

  // The recent fault of this type and state whose entity is `entity`, waited for up to 10 s.
  json find_fault(const std::string& type, const std::string& state, const std::string& entity) {
    json found;
    const bool ok = wait_for(
        [&] {
          for (const auto& f : status().value("recent_faults", json::array())) {
            if (f["type"] == type && f["state"] == state && f["entity"] == entity) {
              found = f;
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(10));
    EXPECT_TRUE(ok) << "no " << state << " " << type << " on " << entity << "; status:\n"
                    << status().dump(2) << "\nlog:\n"
                    << aggregator_.log();
    return found;
  }

  std::string metrics_text() {
    auto r = aggregator_.client().get("/metrics");
    EXPECT_TRUE(r && r->status == 200);
    return r ? r->body : "";
  }

  TempDir dir_{"hsns-brain"};
  fs::path patterns_ = dir_.path() / "patterns";
  AggregatorProcess aggregator_{dir_.path()};
  int udp_port_ = 0;
};

TEST_F(BrainPipeline, SwitchLineAndPushedKpisRaiseFaults) {
  const auto initial = status();
  EXPECT_EQ(initial["enabled"], true);
  EXPECT_GT(initial["library"]["patterns"].get<int>(), 20);
  EXPECT_EQ(initial["patterns_dir"], patterns_.string());

  // A SONiC link-down line sent by logger over UDP under this machine's name: no topology names it, so it
  // is kept in the log and raises nothing (issue 31: a line from a host not in the topology raised a
  // stored link-down alarm).
  must({"logger", "--rfc5424", "-n", "127.0.0.1", "-P", std::to_string(udp_port_), "-d", "-t", "orchagent",
        "-p", "local0.notice", "updatePortOperStatus: Port Ethernet48 oper state set from up to down"});
  std::string hostname;
  ASSERT_TRUE(wait_for(
      [&] {
        auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?limit=10");
        if (!r || r->status != 200) return false;
        const auto page = json::parse(r->body);  // kept alive for the loop (a temporary's member is not)
        for (const auto& item : page["items"]) {
          if (item["app"] == "orchagent") hostname = item["hostname"];
        }
        return !hostname.empty();
      },
      std::chrono::seconds(10)));

  // The same line from a switch of the topology raises link_down on its port.
  const std::string switch_name = generate_small_fabric_leaf(aggregator_);
  ASSERT_FALSE(switch_name.empty());
  std::this_thread::sleep_for(
      std::chrono::milliseconds(1100));  // the resolver reads the topology once a second
  send_udp(udp_port_,
           "<133>1 - " + switch_name +
               " orchagent - - - updatePortOperStatus: Port Ethernet48 oper state set from up to down");
  const auto link_down = find_fault("link_down", "raised", switch_name + "/Ethernet48");
  EXPECT_EQ(link_down["pattern"], "link-down-sonic");
  EXPECT_EQ(link_down["root_cause"], switch_name + "/Ethernet48");
  EXPECT_EQ(link_down["severity"], "major");
  for (const auto& f : status().value("recent_faults", json::array())) {
    EXPECT_NE(f["entity"], hostname + "/Ethernet48") << "a line of no topology device raised a fault";
  }

  // Receive power below -10 dBm for 30 s (event time: the samples' own timestamps), pushed in one batch.
  const auto base = now_ms() - 60'000;
  json samples = json::array();
  for (int t = 0; t <= 40; ++t) {
    samples.push_back({{"entity", "leaf07/Ethernet3"},
                       {"metric", "rx_power_dbm"},
                       {"ts", base + std::int64_t{t} * 1000},
                       {"value", -12.5}});
  }
  auto pushed = aggregator_.client(kAgentToken).post("/api/v1/kpis", json{{"samples", samples}}.dump());
  ASSERT_TRUE(pushed && pushed->status == 200) << (pushed ? pushed->body : pushed.error());
  const auto optics = find_fault("optical_power_out_of_range", "raised", "leaf07/Ethernet3");
  EXPECT_EQ(optics["pattern"], "optics-rx-power-low");
  EXPECT_EQ(optics["time_ms"], base + 30'000);
  EXPECT_EQ(optics["metric"], "rx_power_dbm");
  // Back in range: cleared.
  pushed = aggregator_.client(kAgentToken)
               .post("/api/v1/kpis", json{{"samples",
                                           {{{"entity", "leaf07/Ethernet3"},
                                             {"metric", "rx_power_dbm"},
                                             {"ts", base + 41'000},
                                             {"value", -3.0}}}}}
                                         .dump());
  ASSERT_TRUE(pushed && pushed->status == 200);
  find_fault("optical_power_out_of_range", "cleared", "leaf07/Ethernet3");

  const auto after = status();
  EXPECT_EQ(after["counters"]["samples"], 42);
  EXPECT_GE(after["counters"]["logs"].get<int>(), 1);
  EXPECT_EQ(after["counters"]["dropped_samples"], 0);
  EXPECT_GE(after["counters"]["faults_raised"].get<int>(), 2);
  EXPECT_GE(after["counters"]["faults_cleared"].get<int>(), 1);
  EXPECT_EQ(after["detectors"]["samples"], 42);
  EXPECT_GE(after["lag"]["fault"]["count"].get<int>(), 3);

  const auto text = metrics_text();
  EXPECT_EQ(metric_value(text, "hsns_brain_samples_total"), 42);
  EXPECT_GE(metric_value(text, R"(hsns_brain_faults_total{type="link_down",state="raised"})").value_or(0), 1);
  EXPECT_EQ(
      metric_value(text, R"(hsns_brain_faults_total{type="optical_power_out_of_range",state="cleared"})"), 1);
  EXPECT_GE(metric_value(text, "hsns_brain_fault_lag_seconds_count").value_or(0), 3);
  EXPECT_EQ(metric_value(text, R"(hsns_brain_dropped_total{input="kpi"})"), 0);
  const auto promtool = run_command({"promtool", "check", "metrics"}, text);
  EXPECT_EQ(promtool.status, 0) << promtool.output;
  EXPECT_EQ(promtool.output, "") << "promtool reported lint problems";
}

TEST_F(BrainPipeline, ReloadRefusesABrokenFileAndKeepsTheLibrary) {
  const int before = status()["library"]["patterns"];
  const std::string site =
      "patterns:\n  - id: site-x\n    fault: site_fault\n    severity: SEVERITY\n    description: d\n"
      "    match: {log: {message: 'SITE-FAULT (?P<ifname>\\w+)'}}\n    root_cause: port\n    impact: i\n"
      "    action: a\n";
  const auto with_severity = [&](const std::string& severity) {
    std::string text = site;
    text.replace(text.find("SEVERITY"), 8, severity);
    return text;
  };
  std::ofstream(patterns_ / "site.yaml") << with_severity("loud");
  auto r = aggregator_.client().post("/api/v1/brain/reload", "");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 422) << r->body;
  const auto problem = json::parse(r->body);
  EXPECT_NE(problem["detail"].get<std::string>().find("site.yaml:4:"), std::string::npos) << r->body;
  EXPECT_EQ(problem["invalid_params"][0]["name"], "patterns[0].severity") << r->body;
  EXPECT_EQ(status()["library"]["patterns"], before);
  EXPECT_EQ(status()["counters"]["reload_failures"], 1);
  // Only an operator (manage) may reload; no body and no query are taken.
  auto viewer = aggregator_.client(kViewerToken).post("/api/v1/brain/reload", "");
  ASSERT_TRUE(viewer);
  EXPECT_EQ(viewer->status, 403);
  auto query = aggregator_.client().post("/api/v1/brain/reload?dir=/tmp", "");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 400);

  // A fixed file: the library grows by one; then SIGHUP reloads the same way.
  std::ofstream(patterns_ / "site.yaml") << with_severity("minor");
  r = aggregator_.client().post("/api/v1/brain/reload", "");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error());
  EXPECT_EQ(json::parse(r->body)["patterns"], before + 1);
  fs::remove(patterns_ / "site.yaml");
  ASSERT_EQ(::kill(aggregator_.pid(), SIGHUP), 0);
  ASSERT_TRUE(wait_for([&] { return status()["library"]["patterns"] == before; }, std::chrono::seconds(10)))
      << aggregator_.log();
  EXPECT_EQ(status()["counters"]["reloads"], 2);
  EXPECT_EQ(aggregator_.stop(), 0);
}

TEST(BrainPipelineOff, StatusSaysOffAndReloadConflicts) {
  TempDir dir("hsns-brain-off");
  AggregatorProcess aggregator(dir.path());
  aggregator.set_config("brain:\n  enabled: false\n");
  aggregator.start();
  auto r = aggregator.client(kViewerToken).get("/api/v1/brain/status");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(json::parse(r->body), json({{"enabled", false}}));
  r = aggregator.client().post("/api/v1/brain/reload", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
}

TEST(BrainPipelineConfig, ABrokenLibraryStopsTheStartWithItsFileAndLine) {
  TempDir dir("hsns-brain-bad");
  fs::create_directories(dir.path() / "patterns");
  std::ofstream(dir.path() / "patterns" / "bad.yaml") << "patterns:\n  - id: [\n";
  std::ofstream(dir.path() / "aggregator.yaml")
      << "brain:\n  patterns_dir: \"" << (dir.path() / "patterns").string() << "\"\n";
  const auto checked = run_command({build_path("aggregator/hsns-aggregator").string(), "check-config",
                                    "--config", (dir.path() / "aggregator.yaml").string(),
                                    "--insecure-no-auth", "--database", (dir.path() / "a.db").string()});
  EXPECT_EQ(checked.status, 1) << checked.output;
  EXPECT_NE(checked.output.find("bad.yaml:"), std::string::npos) << checked.output;
}

}  // namespace
}  // namespace hsns::testing
