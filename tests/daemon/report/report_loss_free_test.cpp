// The loss-free acceptance of reporting (issue 11) on one host namespace pair: the real hsnsd with its flow
// probe and a `report:` section in namespace B, the real hsns-aggregator on B's loopback, hsns-roce-gen
// sending a known mix from namespace A over a veth pair for about a minute. During the run hsnsd is killed
// with SIGKILL at random moments (and at the flow probe's crash points between the spool append and the
// commit), and, separately, the aggregator; both are restarted. Afterwards the per-flow packet and byte
// totals in the aggregator's SQLite database equal what the generator sent, exactly: no loss, no double
// count (every flow of every flow-probe epoch stored once; each harvest is split over several reports). Root
// only; all traffic stays in the namespaces the test makes.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "lab.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/temp_dir.h"

namespace {

using hsns::test::add_flow;
using hsns::test::flow_id;
using hsns::test::FlowTotals;
using hsns::test::Lab;
using hsns::test::Proc;
using hsns::test::read_file;
using hsns::test::sh;
using hsns::test::wait_for;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kBuild = HSNS_TEST_BUILD_DIR;
const std::string kGen = kBuild + "/lab/roce_gen/hsns-roce-gen";
const std::string kHsnsd = kBuild + "/daemon/core/hsnsd";
constexpr const char* kHost = "loss-free-node";

// Rows of a query on the aggregator's database (read-only while it may run), each row as strings.
std::vector<std::vector<std::string>> query(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  std::vector<std::vector<std::string>> rows;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db;
    sqlite3_close(h);
    return rows;
  }
  sqlite3_busy_timeout(h, 10000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(h);
  } else {
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const auto* t = sqlite3_column_text(st, i);
        row.emplace_back(t != nullptr ? reinterpret_cast<const char*>(t) : "");
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(h);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return rows;
}

class ReportLossFree : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0) << "needs root (namespaces, bpf, tc)";
    dir_ = tmp_.string();
    pin_dir_ = "/sys/fs/bpf/hsns-test-report-loss-free-" + std::to_string(getpid());
    sh("rm -rf " + pin_dir_);
    a_ = lab_.ns("a");
    b_ = lab_.ns("b");
    ASSERT_TRUE(lab_.veth(a_, "va", b_, "vb", {"198.18.60.1/24"}, {"198.18.60.2/24"}));
    ASSERT_TRUE(wait_for([&] { return sh(Lab::in(a_, "ping -c1 -W1 198.18.60.2")).status == 0; }, 10s));
    std::ofstream(dir_ + "/agent.token") << hsns::testing::kAgentToken << "\n";
    aggregator_.set_netns(b_);
    aggregator_.start();
    agg_port_ = aggregator_.port();
    ASSERT_GT(agg_port_, 0);
  }

  void TearDown() override {
    hsnsd_.kill9();
    aggregator_.kill9();
    if (!pin_dir_.empty()) sh("rm -rf " + pin_dir_);
  }

  void write_config(int harvest_ms) {
    std::ofstream(dir_ + "/hsnsd.yaml", std::ios::trunc)
        << "host: " << kHost << "\n"
        << "aggregator: {url: \"http://127.0.0.1:" << agg_port_ << "\", token_file: " << dir_
        << "/agent.token, timeout_ms: 2000}\n"
        << "state_dir: " << dir_ << "/state\n"
        << "metrics: {listen: \"127.0.0.1:9811\"}\n"
        << "interval_ms: 500\n"
        << "backoff: {initial_ms: 50, max_ms: 500}\n"
        << "report: {interval_ms: 500, max_bytes: 67108864}\n"
        << "flow_probe:\n  interval_ms: " << harvest_ms << "\n  table_size: 4096\n  pin_dir: " << pin_dir_
        << "\n  sink: " << dir_
        << "/flows.jsonl\n  interfaces:\n    - {name: vb, attach: tc, direction: ingress}\n";
  }

  void start_hsnsd(const std::string& crash_hook = "") {
    ++starts_;
    // Every harvest of the 16 flows is split into reports of at most 5 records (one spool group), so the
    // kills also land between the parts of a group.
    std::map<std::string, std::string> env{{"HSNS_TEST_FLOW_RECORDS_PER_REPORT", "5"}};
    if (!crash_hook.empty()) env["HSNS_TEST_CRASH_AFTER_DRAIN"] = crash_hook;
    hsnsd_ = hsns::test::spawn(
        Lab::in(b_, std::vector<std::string>{kHsnsd, "run", "--config", dir_ + "/hsnsd.yaml"}),
        dir_ + "/hsnsd.out", log_path(), env);
    ASSERT_TRUE(wait_for([&] { return metric("hsns_flow_probe_up") == 1; }, 20s)) << log();
  }
  std::string log_path() const { return dir_ + "/hsnsd" + std::to_string(starts_) + ".err"; }
  std::string log() const { return read_file(log_path()); }
  double metric(const std::string& key) {
    const auto text = sh(Lab::in(b_, "curl -sf http://127.0.0.1:9811/metrics"), false).out;
    return hsns::testing::metric_value(text, key).value_or(-1);
  }

  void restart_aggregator_later(std::mt19937& rng) {
    aggregator_.kill9();
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(200, 1500)(rng)));
    aggregator_.set_listen("127.0.0.1", agg_port_);
    aggregator_.start();
  }

  // Per-flow totals the aggregator stored for the host (flow_id keys, as the generator's).
  std::map<std::string, FlowTotals> stored_totals() {
    std::map<std::string, FlowTotals> out;
    const auto rows =
        query(aggregator_.database(),
              "SELECT f.ifname, f.src, f.dst, f.sport, f.dest_qp, SUM(f.packets), SUM(f.bytes), "
              "SUM(f.ect), SUM(f.ce), SUM(f.cnp) FROM telemetry_flows f JOIN telemetry_batches b "
              "ON f.batch_id = b.id WHERE b.host = '" +
                  std::string(kHost) + "' GROUP BY 1, 2, 3, 4, 5");
    for (const auto& r : rows) {
      const json key = {
          {"src", r[1]}, {"dst", r[2]}, {"sport", std::stoi(r[3])}, {"dest_qp", std::stoul(r[4])}};
      auto& t = out[flow_id(r[0], key)];
      t["packets"] = std::stoull(r[5]);
      t["bytes"] = std::stoull(r[6]);
      t["ect"] = std::stoull(r[7]);
      t["ce"] = std::stoull(r[8]);
      t["cnp"] = std::stoull(r[9]);
    }
    return out;
  }

  hsns::testing::TempDir tmp_{"hsns-report-loss-free"};
  Lab lab_{"hrl"};
  std::string a_, b_, dir_, pin_dir_;
  int agg_port_ = 0;
  int starts_ = 0;
  hsns::testing::AggregatorProcess aggregator_{tmp_.path()};
  Proc hsnsd_;
};

TEST_F(ReportLossFree, KillNineOfHsnsdAndOfTheAggregatorDuringAMinuteOfTrafficLosesAndRepeatsNothing) {
  write_config(200);
  start_hsnsd();
  // About a minute of traffic: 16 flows x 7500 packets at 2000 packets/s; SIGTERM ends it early on a slow
  // machine, and its summary counts exactly what was sent.
  const std::string gen_out = dir_ + "/gen.json";
  Proc gen = hsns::test::spawn(
      Lab::in(a_, std::vector<std::string>{kGen, "--mode", "udp", "--src", "198.18.60.1", "--dst",
                                           "198.18.60.2", "--seed", "43", "--flows", "16", "--packets",
                                           "7500", "--rate", "2000"}),
      gen_out, dir_ + "/gen.err");
  const auto seed = static_cast<unsigned>(std::random_device{}());
  SCOPED_TRACE("random kill moments, seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const auto pause = [&](int lo_ms, int hi_ms) {
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(lo_ms, hi_ms)(rng)));
  };
  const auto began = std::chrono::steady_clock::now();
  // hsnsd between the durable append of a flow batch and its commit, and half-way through the commit.
  for (const std::string hook : {"before-commit", "mid-commit"}) {
    SCOPED_TRACE(hook);
    pause(500, 1500);
    hsnsd_.kill9();
    start_hsnsd(hook);
    EXPECT_EQ(hsnsd_.wait_signal(20s), SIGKILL) << "the crash hook did not fire\n" << log();
    hsnsd_.kill9();
    start_hsnsd();
  }
  // Then hsnsd and the aggregator, each at random moments, for the rest of the minute.
  int round = 0;
  while (std::chrono::steady_clock::now() - began < 50s && gen.alive()) {
    pause(1000, 4000);
    if (round++ % 2 == 0) {
      hsnsd_.kill9();
      pause(0, 1000);
      start_hsnsd();
    } else {
      restart_aggregator_later(rng);
    }
  }
  EXPECT_GE(round, 4) << "too few kills during the run";
  // The traffic ends; then hsnsd stops cleanly (its last harvest goes into the spool) and starts again to
  // upload what is left.
  gen.signal(SIGTERM);
  ASSERT_EQ(gen.wait(120s), 0) << read_file(dir_ + "/gen.err");
  std::this_thread::sleep_for(1s);
  hsnsd_.signal(SIGTERM);
  EXPECT_EQ(hsnsd_.wait(30s), 0) << log();
  start_hsnsd();
  ASSERT_TRUE(wait_for(
      [&] {
        return metric("hsns_daemon_component_ready{component=\"report\"}") == 1 &&
               metric("hsns_report_spool_records") == 0;
      },
      60s))
      << "the spool never emptied\n"
      << log() << aggregator_.log();

  std::map<std::string, FlowTotals> expected;
  const json summary = json::parse(read_file(gen_out).substr(0, read_file(gen_out).find('\n')));
  EXPECT_TRUE(summary.at("complete").get<bool>());
  for (const auto& fl : summary.at("flows")) {
    FlowTotals t;
    add_flow(t, fl);
    auto& e = expected[flow_id("vb", fl)];
    for (const char* k : {"packets", "bytes", "ect", "ce", "cnp"}) e[k] += t[k];
  }
  ASSERT_EQ(expected.size(), 16u);
  const auto got = stored_totals();
  EXPECT_EQ(got.size(), expected.size());
  std::uint64_t packets = 0;
  for (const auto& [id, want] : expected) {
    SCOPED_TRACE(id);
    const auto it = got.find(id);
    ASSERT_NE(it, got.end()) << "flow missing from the aggregator";
    for (const auto& [k, v] : want) EXPECT_EQ(it->second.at(k), v) << k;
    packets += want.at("packets");
  }
  EXPECT_EQ(packets, summary.at("sent").get<std::uint64_t>());
  for (const auto& [id, t] : got) EXPECT_TRUE(expected.count(id)) << "unexpected flow " << id;
  // Every flow of every epoch stored once (an epoch's records come in several reports, each flow in one),
  // and nothing went to the JSON-lines sink.
  const auto epochs =
      query(aggregator_.database(),
            "SELECT COUNT(*), COUNT(DISTINCT fb.epoch || '/' || f.ifname || '/' || f.src || "
            "'/' || f.dst || '/' || f.sport || '/' || f.dest_qp), COUNT(DISTINCT fb.id), "
            "COUNT(DISTINCT fb.epoch) FROM telemetry_flows f JOIN telemetry_flow_batches fb ON "
            "f.flow_batch_id = fb.id JOIN telemetry_batches b ON fb.batch_id = b.id WHERE "
            "b.host = '" +
                std::string(kHost) + "'");
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_EQ(epochs[0][0], epochs[0][1]) << "a flow of an epoch stored twice";
  EXPECT_GT(std::stoull(epochs[0][2]), std::stoull(epochs[0][3]))
      << "harvests were split over several reports";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/flows.jsonl"))
      << "with reporting on, the sink is not written";
  EXPECT_EQ(metric("hsns_report_spool_drops_total"), 0);
  hsnsd_.signal(SIGTERM);
  EXPECT_EQ(hsnsd_.wait(30s), 0) << log();
}

}  // namespace
