// `hsnsctl scenario run|judge` against the real aggregator: the scenario's topology, job, KPI samples (with
// a late and a duplicate one) and syslog lines (over the real TCP receiver) arrive at their event times
// (base + offset), whatever the speed; the run prints its JSON; --speed paces the replay; the offline judge
// exits 0 or 1 by the verdict.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "scenario.h"
#include "support/aggregator_process.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

class ScenarioRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    syslog_port_ = free_tcp_port();
    agg_.set_config("syslog:\n  tcp_listen: \"127.0.0.1:" + std::to_string(syslog_port_) + "\"\n");
    agg_.start();
    std::ofstream(dir_.path() / "token") << kOperatorToken << "\n";
  }

  CommandResult ctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {build_path("cli/hsnsctl").string(), "--server", agg_.url(),
                                     "--token-file", (dir_.path() / "token").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  }

  // A 4-host, 2-NPU cluster; a job on two hosts; rx power of one port every 5 s for 20 s plus a duplicate
  // and a late sample; two syslog lines of a leaf.
  fs::path write_scenario() {
    auto d = dir_.path() / "small-replay";
    fs::create_directories(d);
    std::ofstream(d / "generate.json")
        << R"({"hosts": 4, "npus_per_host": 2, "hosts_per_su": 2, "spines_per_plane": 2})";
    std::ofstream(d / "jobs.json")
        << R"([{"job_name": "sc-job", "hosts": ["host001", "host002"], "npus_per_host": 2,
      "model": {"parameters": 1000000000, "layers": 8, "hidden": 2048, "heads": 16, "seq_len": 2048,
                "micro_batch": 1, "global_batch": 64},
      "parallel": {"tp": 2, "dp": 2}, "ecmp_seeds": 1, "allow_unreachable": true}])";
    std::ofstream kpis(d / "kpis.jsonl");
    for (int i = 0; i <= 4; ++i) {
      kpis << json{{"at_ms", i * 5000},
                   {"entity", "host001/eth0"},
                   {"metric", "rx_power_dbm"},
                   {"value", -2.0 - i}}
                  .dump()
           << "\n";
    }
    kpis
        << R"({"at_ms": 12000, "ts_ms": 10000, "entity": "host001/eth0", "metric": "rx_power_dbm", "value": -50})"
        << "\n";  // a duplicate of the sample at 10 s: the first value stays
    kpis
        << R"({"at_ms": 21000, "ts_ms": 7500, "entity": "host001/eth0", "metric": "rx_power_dbm", "value": -7.5})"
        << "\n";  // late (out of order, within the store's window)
    kpis.close();
    std::ofstream(d / "syslog.jsonl")
        << R"({"at_ms": 3000, "line": "<131>1 {ts} leaf000 swss#portsyncd - - - Port Ethernet0 oper state set from up to down"})"
        << "\n"
        << R"({"at_ms": 8000, "line": "<134>{ts} leaf000 swss#portsyncd: Port Ethernet0 oper state set from down to up"})"
        << "\n";
    std::ofstream(d / "expect.yaml") << "class: demo\nincidents: []\n";
    return d;
  }

  TempDir dir_;
  AggregatorProcess agg_{dir_.path()};
  int syslog_port_ = 0;
};

TEST_F(ScenarioRunner, ReplaysEveryStreamAtItsEventTime) {
  const auto d = write_scenario();
  // A base on a whole second ten minutes ago: every event time is known exactly.
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const std::int64_t base = (now / 1000) * 1000 - 600'000;
  auto r = ctl({"scenario", "run", d.string(), "--speed", "0", "--settle", "0.2", "--base",
                std::to_string(base), "--syslog", "tcp://127.0.0.1:" + std::to_string(syslog_port_)});
  // Exit 0 once the aggregator has the incident API (the brain branches), 1 before; the JSON comes either
  // way.
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.output;
  const auto start = r.output.find('{');
  ASSERT_NE(start, std::string::npos) << r.output;
  auto out = json::parse(r.output.substr(start, r.output.rfind('}') - start + 1));
  EXPECT_EQ(out["scenario"], "small-replay");
  EXPECT_EQ(out["class"], "demo");
  EXPECT_EQ(out["base_ms"], base);
  EXPECT_EQ(out["duration_ms"], 21000);
  EXPECT_EQ(out["sent"]["kpi_samples"], 7);
  EXPECT_EQ(out["sent"]["syslog_lines"], 2);
  EXPECT_EQ(out["sent"]["jobs"], 1);
  // Sent in more than one batch: the syslog lines cut the KPI stream so the order of events is kept.
  EXPECT_GE(out["sent"]["kpi_batches"].get<int>(), 2);
  EXPECT_EQ(out["kpi_result"]["accepted"], 6) << out.dump(2);
  EXPECT_EQ(out["kpi_result"]["duplicate"], 1);
  EXPECT_EQ(out["kpi_result"]["out_of_order"], 1);
  if (r.status == 0) {
    EXPECT_TRUE(out["incidents"].is_array());
  } else {
    EXPECT_TRUE(out["incidents"].is_null());
    EXPECT_NE(out["error"].get<std::string>().find("/api/v1/incidents"), std::string::npos);
  }

  auto client = agg_.client();
  // The KPIs are stored at base + offset, the duplicate's first value kept, the late one in its place.
  auto points = client.get("/api/v1/kpis?entity=host001/eth0&metric=rx_power_dbm");
  ASSERT_TRUE(points && points->status == 200) << (points ? points->body : points.error());
  auto p = json::parse(points->body)["points"];
  ASSERT_EQ(p.size(), 6u) << p.dump();
  const std::vector<std::pair<std::int64_t, double>> want = {{0, -2.0},     {5000, -3.0},  {7500, -7.5},
                                                             {10000, -4.0}, {15000, -5.0}, {20000, -6.0}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(p[i]["ts_ms"], base + want[i].first) << i;
    EXPECT_EQ(p[i]["last"], want[i].second) << i;
  }
  // The syslog lines arrived over TCP with their event times, both formats.
  auto logs = client.get("/api/v1/logs?device=leaf000");
  ASSERT_TRUE(logs && logs->status == 200);
  auto items = json::parse(logs->body)["items"];
  ASSERT_EQ(items.size(), 2u) << logs->body;
  EXPECT_EQ(items[0]["format"], "rfc5424");
  EXPECT_EQ(items[1]["format"], "rfc3164");
  EXPECT_EQ(items[0]["timestamp"].get<std::string>().substr(0, 19),
            hsnsctl::format_time_ms(base + 3000).substr(0, 19));
  EXPECT_EQ(items[1]["timestamp"].get<std::string>().substr(0, 19),
            hsnsctl::format_time_ms(base + 8000).substr(0, 19));
  EXPECT_EQ(items[0]["timestamp_from_receipt"], false);
  EXPECT_EQ(items[0]["message"], "Port Ethernet0 oper state set from up to down");
  // The topology was generated and the job registered.
  auto job = client.get("/api/v1/jobs/sc-job");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, 200) << job->body;
  auto topo = client.get("/api/v1/topology");
  ASSERT_TRUE(topo && topo->status == 200);
  EXPECT_NE(topo->body.find("\"hosts\":4"), std::string::npos) << topo->body;
}

TEST_F(ScenarioRunner, HostnamelessLinesFromAManagementAddressAndJobsDatedByEventTime) {
  // A 4-host, 1-NPU fabric with one leaf whose management address is 127.20.0.5. Its NX-OS lines carry no
  // hostname; the replay sends them from that address. A job runs from 60 s to 120 s, before the fault
  // (a port down at 300 s); another is registered at 310 s, while it lasts: only the second is affected.
  const auto d = dir_.path() / "nxos-and-jobs";
  fs::create_directories(d);
  json topo = {{"version", 1},
               {"defaults", {{"bandwidth_gbps", 400}}},
               {"switches", {{{"name", "leaf00"}, {"tier", "leaf"}, {"management_address", "127.20.0.5"}}}},
               {"hosts", json::array()}};
  for (int h = 1; h <= 4; ++h) {
    topo["hosts"].push_back({{"name", "host00" + std::to_string(h)},
                             {"npus",
                              {{{"index", 0},
                                {"port", "eth0"},
                                {"leaf", "leaf00"},
                                {"leaf_port", "Ethernet1/" + std::to_string(h)}}}}});
  }
  std::ofstream(d / "topology.json") << topo.dump();
  auto job = [](const char* name) {
    return json{{"job_name", name},
                {"hosts", {"host001", "host002"}},
                {"npus_per_host", 1},
                {"model",
                 {{"parameters", 1000000000},
                  {"layers", 8},
                  {"hidden", 2048},
                  {"heads", 16},
                  {"seq_len", 2048},
                  {"micro_batch", 1},
                  {"global_batch", 64}}},
                {"parallel", {{"tp", 1}, {"dp", 2}}},
                {"ecmp_seeds", 1},
                {"allow_unreachable", true}};
  };
  std::ofstream(d / "jobs.jsonl") << json{{"at_ms", 60000}, {"schedule", job("before")}}.dump() << "\n"
                                  << json{{"at_ms", 120000}, {"release", "before"}}.dump() << "\n"
                                  << json{{"at_ms", 310000}, {"schedule", job("during")}}.dump() << "\n";
  std::ofstream kpis(d / "kpis.jsonl");  // a heartbeat moves the brain's event clock past the end
  for (int t = 0; t <= 420; t += 10) {
    kpis << json{{"at_ms", t * 1000}, {"entity", "host004/eth0"}, {"metric", "rx_power_dbm"}, {"value", -2}}
                .dump()
         << "\n";
  }
  kpis.close();
  std::ofstream(d / "syslog.jsonl") << json{{"at_ms", 300000},
                                            {"line",
                                             "<189>: 2026 Dec  7 10:05:00 UTC: "
                                             "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/1 is down "
                                             "(Link failure)"},
                                            {"source", "127.20.0.5"}}
                                           .dump()
                                    << "\n";
  std::ofstream(d / "expect.yaml")
      << "incidents:\n  - root_cause: [leaf00/Ethernet1/1, link:host001/eth0|leaf00/Ethernet1/1]\n"
         "    fault_type: link_down\n    affected_jobs: [during]\n    state: open\n";
  auto r = ctl({"scenario", "run", d.string(), "--speed", "0", "--judge", "--base", "2026-12-07T10:00:00Z",
                "--syslog", "tcp://127.0.0.1:" + std::to_string(syslog_port_)});
  ASSERT_EQ(r.status, 0) << r.output;
  const auto start = r.output.find('{');
  auto out = json::parse(r.output.substr(start, r.output.rfind('}') - start + 1));
  EXPECT_EQ(out["sent"]["job_events"], 3);
  EXPECT_TRUE(out["verdict"]["pass"]) << out["verdict"].dump(2);
  // The line was attributed to leaf00 by its sender's address, dated by its own (UTC) header.
  auto logs = agg_.client().get("/api/v1/logs?device=leaf00");
  ASSERT_TRUE(logs && logs->status == 200);
  auto items = json::parse(logs->body)["items"];
  ASSERT_EQ(items.size(), 1u) << logs->body;
  EXPECT_EQ(items[0]["timestamp"], "2026-12-07T10:05:00.000Z");
}

TEST_F(ScenarioRunner, SpeedPacesTheReplayAndSyslogNeedsAReceiver) {
  const auto d = dir_.path() / "paced";
  fs::create_directories(d);
  std::ofstream(d / "kpis.jsonl")
      << R"({"at_ms": 0, "entity": "h1/eth0", "metric": "temperature_celsius", "value": 40})"
      << "\n"
      << R"({"at_ms": 4000, "entity": "h1/eth0", "metric": "temperature_celsius", "value": 41})"
      << "\n";
  std::ofstream(d / "expect.yaml") << "incidents: []\n";
  auto r = ctl({"scenario", "run", d.string(), "--speed", "10", "--settle", "0"});
  const auto start = r.output.find('{');
  ASSERT_NE(start, std::string::npos) << r.output;
  auto out = json::parse(r.output.substr(start, r.output.rfind('}') - start + 1));
  // 4 s of scenario at 10x: at least 400 ms of replay.
  EXPECT_GE(out["replay_ms"].get<std::int64_t>(), 390) << out.dump(2);
  EXPECT_EQ(out["kpi_result"]["accepted"], 2);
  // The default base puts the whole scenario in the past: the last sample a minute before now or earlier.
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  EXPECT_LE(out["base_ms"].get<std::int64_t>() + 4000, now - 59'000);

  std::ofstream(d / "syslog.jsonl") << R"({"at_ms": 1, "line": "<13>1 {ts} h1 a - - - x"})"
                                    << "\n";
  auto refused = ctl({"scenario", "run", d.string(), "--speed", "0"});
  EXPECT_EQ(refused.status, 64) << refused.output;
  EXPECT_NE(refused.output.find("--syslog"), std::string::npos) << refused.output;
  auto bad_speed = ctl({"scenario", "run", d.string(), "--speed", "-1"});
  EXPECT_EQ(bad_speed.status, 64) << bad_speed.output;
  auto missing = ctl({"scenario", "run", (dir_.path() / "nope").string()});
  EXPECT_EQ(missing.status, 64) << missing.output;
}

TEST_F(ScenarioRunner, OfflineJudgeExitsByTheVerdict) {
  const auto d = dir_.path() / "judged";
  fs::create_directories(d);
  std::ofstream(d / "expect.yaml")
      << "class: storm\nincidents:\n  - {root_cause: spine01, fault_type: switch_reboot}\n"
         "min_compression: 10\n";
  std::ofstream(d / "syslog.jsonl") << R"({"at_ms": 1, "line": "x"})"
                                    << "\n";
  const json incident = {
      {"id", "i1"},
      {"root_causes", {{{"rank", 1}, {"entity", "spine01"}, {"fault_type", "switch_reboot"}}}},
      {"affected_jobs", json::array()}};
  std::ofstream(dir_.path() / "good.json") << json{{"incidents", {incident}}, {"alarms_total", 40}}.dump();
  std::ofstream(dir_.path() / "low.json") << json{{"incidents", {incident}}, {"alarms_total", 4}}.dump();
  std::ofstream(dir_.path() / "junk.json") << "[1,2]";
  auto good = ctl({"scenario", "judge", d.string(), "--result", (dir_.path() / "good.json").string()});
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_NE(good.output.find("\"pass\": true"), std::string::npos) << good.output;
  auto low = ctl({"scenario", "judge", d.string(), "--result", (dir_.path() / "low.json").string()});
  EXPECT_EQ(low.status, 1) << low.output;
  EXPECT_NE(low.output.find("\"compression_ok\": false"), std::string::npos) << low.output;
  auto junk = ctl({"scenario", "judge", d.string(), "--result", (dir_.path() / "junk.json").string()});
  EXPECT_EQ(junk.status, 64) << junk.output;
}

}  // namespace
}  // namespace hsns::testing
