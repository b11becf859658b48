// The brain pipeline's engine (aggregator/brain/engine.h) with the real DetectorBank and the real
// PatternMatcher over the shipped patterns/: syslog lines and KPI series in, the faults raised and cleared
// for the right entities and root causes out; the queue's bound and its drops; a pattern reload with a
// broken file keeping the previous library; the topology's peers; the taps (the KPI store tee over a real
// SQLite file, the log buffer's observer).
#include "brain/engine.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "brain/peer_map.h"
#include "brain/pipeline_settings.h"
#include "brain/taps.h"
#include "store/database.h"
#include "store/sqlite_kpi_store.h"
#include "support/temp_dir.h"

namespace hsns::brain_pipeline {
namespace {

namespace fs = std::filesystem;
using brain::FaultMatch;
using brain::FaultState;

brain::PatternLibrary shipped() {
  auto library = brain::load_pattern_library(HSNS_PATTERNS_DIR);
  EXPECT_TRUE(library) << library.error().message();
  return library ? *library : brain::PatternLibrary{};
}

// leaf01/Ethernet1 <-> host01/ens1f0np0 (an NPU link), leaf01/Ethernet9 <-> spine01/Ethernet1.
std::shared_ptr<const topology::Topology> small_fabric() {
  topology::TopologyBuilder b;
  const auto host = b.add_host("host01");
  const auto leaf = b.add_switch("leaf01", topology::Tier::kLeaf);
  const auto spine = b.add_switch("spine01", topology::Tier::kSpine);
  b.add_npu(host, topology::Npu{.index = 0, .port = "ens1f0np0"});
  topology::Link npu_link;
  npu_link.lower = host;
  npu_link.upper = leaf;
  npu_link.upper_port = "Ethernet1";  // lower_port left out: the NPU's port names it
  npu_link.npu = 0;
  npu_link.bandwidth_gbps = 400;
  b.add_link(npu_link);
  topology::Link uplink;
  uplink.lower = leaf;
  uplink.upper = spine;
  uplink.lower_port = "Ethernet9";
  uplink.upper_port = "Ethernet1";
  uplink.bandwidth_gbps = 400;
  b.add_link(uplink);
  auto built = std::move(b).build();
  EXPECT_TRUE(built) << built.error().message();
  return std::make_shared<const topology::Topology>(std::move(*built));
}

// An engine over the shipped library that records every fault it hands over.
class EngineTest : public ::testing::Test {
 protected:
  void make(EngineOptions options = {}, brain::PatternLibrary library = shipped()) {
    engine_ = std::make_unique<BrainEngine>(
        brain::default_brain_config(), std::move(library),
        [this](std::span<const FaultMatch> faults) {
          std::lock_guard lock(mutex_);
          faults_.insert(faults_.end(), faults.begin(), faults.end());
        },
        TopologySource{.read = [this]() -> std::optional<TopologyView> {
                         std::lock_guard lock(mutex_);
                         if (!topology_) return std::nullopt;
                         return TopologyView{revision_, topology_};
                       },
                       .change_mark = [this]() -> std::optional<std::int64_t> {
                         std::lock_guard lock(mutex_);
                         return revision_;
                       }},
        options);
  }

  std::vector<FaultMatch> faults() {
    std::lock_guard lock(mutex_);
    return faults_;
  }
  // The faults of one pattern, in order.
  std::vector<FaultMatch> of(const std::string& pattern) {
    std::vector<FaultMatch> out;
    for (auto& f : faults()) {
      if (f.pattern->id == pattern) out.push_back(f);
    }
    return out;
  }

  // A topology write while the engine runs: the fabric appears at a new revision.
  void write_topology(std::int64_t revision) {
    std::lock_guard lock(mutex_);
    topology_ = small_fabric();
    revision_ = revision;
  }

  void kpi(const std::string& entity, const std::string& metric, std::int64_t t_s, double value) {
    const store::KpiSample s{entity, metric, kBase + t_s * 1000, value};
    EXPECT_EQ(engine_->submit(std::span(&s, 1)), 1U);
  }

  static constexpr std::int64_t kBase = 1'764'651'276'000;  // 2025-12-02T05:07:56Z
  std::shared_ptr<const topology::Topology> topology_;
  std::int64_t revision_ = 1;
  std::mutex mutex_;
  std::vector<FaultMatch> faults_;
  std::unique_ptr<BrainEngine> engine_;
};

LogInput sonic_line(const std::string& text, std::int64_t t_ms) {
  LogInput in;
  in.entity = "leaf01";
  in.timestamp_ms = t_ms;
  in.hostname = "leaf01";
  in.app = "swss#orchagent";
  in.severity = 5;
  in.message = text;
  return in;
}

TEST(MapKpiMetric, RatesPfcAndModuleNamesBecomeThePatternsNames) {
  EXPECT_EQ(map_kpi_metric("symbol_error_per_s").metric, "symbol_error");
  EXPECT_TRUE(map_kpi_metric("symbol_error_per_s").rate);
  EXPECT_EQ(map_kpi_metric("pfc_prio3_tx_pause_us_per_s").metric, "tx_prio3_pause_duration");
  EXPECT_EQ(map_kpi_metric("pfc_prio0_rx_pause_us_per_s").metric, "rx_prio0_pause_duration");
  EXPECT_TRUE(map_kpi_metric("pfc_prio0_rx_pause_us_per_s").rate);
  // Pause frames (not duration): hsnsd's rate is the rate of the frame counter switches report.
  EXPECT_EQ(map_kpi_metric("pfc_prio3_tx_pause_per_s").metric, "pfc_prio3_tx_pause_frames");
  EXPECT_TRUE(map_kpi_metric("pfc_prio3_tx_pause_per_s").rate);
  EXPECT_EQ(map_kpi_metric("pfc_prio3_rx_pause_frames").metric, "pfc_prio3_rx_pause_frames");
  EXPECT_FALSE(map_kpi_metric("pfc_prio3_rx_pause_frames").rate);
  EXPECT_EQ(map_kpi_metric("pfc_prioX_tx_pause_us_per_s").metric, "pfc_prioX_tx_pause_us");
  EXPECT_EQ(map_kpi_metric("module_temperature_celsius").metric, "temperature_celsius");
  EXPECT_FALSE(map_kpi_metric("module_temperature_celsius").rate);
  EXPECT_EQ(map_kpi_metric("rx_power_dbm").metric, "rx_power_dbm");
  EXPECT_FALSE(map_kpi_metric("rx_power_dbm").rate);
  EXPECT_EQ(map_kpi_metric("_per_s").metric, "_per_s");
}

TEST(PeerMap, BothEndsOfEveryNamedLink) {
  const auto peers = build_peer_map(*small_fabric());
  EXPECT_EQ(peers.size(), 4U);
  EXPECT_EQ(peers.at("host01/ens1f0np0"), "leaf01/Ethernet1");
  EXPECT_EQ(peers.at("leaf01/Ethernet1"), "host01/ens1f0np0");
  EXPECT_EQ(peers.at("leaf01/Ethernet9"), "spine01/Ethernet1");
  EXPECT_EQ(peers.at("spine01/Ethernet1"), "leaf01/Ethernet9");
}

TEST_F(EngineTest, LinkDownSyslogLineRaisesForThePortAndTheUpLineClearsIt) {
  make();
  engine_->start();
  engine_->submit(sonic_line("updatePortOperStatus: Port Ethernet48 oper state set from up to down", kBase));
  engine_->flush();
  auto raised = of("link-down-sonic");
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_EQ(raised[0].state, FaultState::raised);
  EXPECT_EQ(raised[0].entity, "leaf01/Ethernet48");
  EXPECT_EQ(raised[0].root_cause, "leaf01/Ethernet48");
  EXPECT_EQ(raised[0].pattern->fault, "link_down");
  EXPECT_EQ(raised[0].timestamp_ms, kBase);  // event time, not the wall clock

  engine_->submit(
      sonic_line("updatePortOperStatus: Port Ethernet48 oper state set from down to up", kBase + 5000));
  engine_->flush();
  auto both = of("link-down-sonic");
  ASSERT_EQ(both.size(), 2U);
  EXPECT_EQ(both[1].state, FaultState::cleared);
  EXPECT_EQ(both[1].entity, "leaf01/Ethernet48");

  const auto status = engine_->status();
  EXPECT_EQ(status.logs, 2U);
  EXPECT_EQ(status.processed_logs, 2U);
  EXPECT_EQ(status.faults_raised, 1U);
  EXPECT_EQ(status.faults_cleared, 1U);
  EXPECT_EQ(status.active_faults, 0U);
  EXPECT_EQ(status.matcher.log_events, 2U);
  EXPECT_EQ(status.recent_faults.size(), 2U);
  EXPECT_EQ(status.fault_lag.count, 2U);
  EXPECT_GE(status.fault_lag.p99_ms, status.fault_lag.p50_ms);
}

TEST_F(EngineTest, OpticalPowerBelowThresholdRaisesForTheLinkThenClears) {
  topology_ = small_fabric();
  make();
  engine_->start();
  for (int t = 0; t < 10; ++t) kpi("host01/ens1f0np0", "rx_power_dbm", t, -4.0);
  engine_->flush();
  EXPECT_TRUE(of("optics-rx-power-low").empty());
  for (int t = 10; t <= 45; ++t) kpi("host01/ens1f0np0", "rx_power_dbm", t, -12.5);
  engine_->flush();
  auto raised = of("optics-rx-power-low");
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_EQ(raised[0].state, FaultState::raised);
  EXPECT_EQ(raised[0].entity, "host01/ens1f0np0");
  EXPECT_EQ(raised[0].peer, "leaf01/Ethernet1");
  EXPECT_EQ(raised[0].root_cause, "host01/ens1f0np0<->leaf01/Ethernet1");
  EXPECT_EQ(raised[0].timestamp_ms, kBase + 40'000);  // 30 s after the first sample below -10 dBm
  EXPECT_EQ(raised[0].metric, "rx_power_dbm");

  kpi("host01/ens1f0np0", "rx_power_dbm", 46, -4.0);
  engine_->flush();
  auto all = of("optics-rx-power-low");
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[1].state, FaultState::cleared);
  // The detector bank saw the series as well: its threshold detector raised (below -10 for 30 s).
  const auto status = engine_->status();
  EXPECT_EQ(status.detectors.samples, 47U);
  EXPECT_GE(status.detectors.raised, 1U);
  EXPECT_EQ(status.topology_revision, 1);
  EXPECT_EQ(status.peers, 4U);
}

TEST_F(EngineTest, ReportedCounterRatesBurstOnBothEndsRaiseTheLink) {
  // hsnsd reports symbol_error as a rate (symbol_error_per_s); the engine integrates it into a counter, so
  // the bank's burst detector (a counter's) raises on each end, and the both-ends pattern names the link.
  topology_ = small_fabric();
  make();
  engine_->start();
  for (int t = 0; t < 5; ++t) {
    kpi("host01/ens1f0np0", "symbol_error_per_s", t, 0);
    kpi("leaf01/Ethernet1", "symbol_error_per_s", t, 0);
  }
  for (int t = 5; t < 30; ++t) {
    kpi("host01/ens1f0np0", "symbol_error_per_s", t, 200);
    kpi("leaf01/Ethernet1", "symbol_error_per_s", t, 150);
  }
  engine_->flush();
  auto raised = of("symbol-errors-both-ends");
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_EQ(raised[0].root_cause, "host01/ens1f0np0<->leaf01/Ethernet1");
  EXPECT_EQ(raised[0].pattern->fault, "crc_errors");
  const auto status = engine_->status();
  EXPECT_EQ(status.detectors.counter_resets, 0U);
  EXPECT_EQ(status.detectors.untracked, 0U);
}

TEST_F(EngineTest, LinkDownedCounterRisingInThreePollsIsAFlap) {
  // Pushed as the raw counter: the matcher sees its per-second rate.
  make();
  engine_->start();
  const double readings[] = {4, 4, 5, 5, 6, 7};
  for (int i = 0; i < 6; ++i) kpi("host01/mlx5_0/1", "link_downed", std::int64_t{i} * 30, readings[i]);
  engine_->flush();
  auto raised = of("link-flap-counter");
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_EQ(raised[0].entity, "host01/mlx5_0/1");
  EXPECT_EQ(raised[0].occurrences, 3U);
}

TEST_F(EngineTest, AFullQueueDropsAndCountsNeverBlocks) {
  EngineOptions options;
  options.queue_capacity = 10;
  make(options);
  // Not started: nothing drains the queue.
  std::vector<store::KpiSample> batch;
  batch.reserve(25);
  for (int i = 0; i < 25; ++i) {
    batch.push_back({"leaf01/Ethernet1", "rx_power_dbm", kBase + std::int64_t{i} * 1000, -3});
  }
  EXPECT_EQ(engine_->submit(batch), 10U);
  EXPECT_EQ(engine_->submit(std::span(batch).first(1)), 0U);
  EXPECT_FALSE(engine_->submit(sonic_line("Port Ethernet2 oper state set from up to down", kBase)));
  auto status = engine_->status();
  EXPECT_EQ(status.samples, 10U);
  EXPECT_EQ(status.dropped_samples, 16U);
  EXPECT_EQ(status.dropped_logs, 1U);
  EXPECT_EQ(status.queue_depth, 10U);
  engine_->start();
  engine_->flush();
  status = engine_->status();
  EXPECT_EQ(status.processed_samples, 10U);
  EXPECT_EQ(status.queue_depth, 0U);
  // Room again.
  EXPECT_TRUE(engine_->submit(sonic_line("Port Ethernet2 oper state set from up to down", kBase)));
}

TEST_F(EngineTest, StopProcessesWhatIsQueued) {
  make();
  engine_->submit(sonic_line("updatePortOperStatus: Port Ethernet7 oper state set from up to down", kBase));
  engine_->start();
  engine_->stop();
  EXPECT_EQ(of("link-down-sonic").size(), 1U);
  EXPECT_FALSE(engine_->submit(sonic_line("Port Ethernet8 oper state set from up to down", kBase)));
}

TEST_F(EngineTest, AReloadWithABrokenFileKeepsThePreviousLibrary) {
  testing::TempDir dir;
  const fs::path patterns = dir.path() / "patterns";
  fs::copy(HSNS_PATTERNS_DIR, patterns);
  make();
  engine_->start();
  const std::size_t before = engine_->status().library_patterns;
  ASSERT_GT(before, 20U);
  engine_->submit(sonic_line("updatePortOperStatus: Port Ethernet48 oper state set from up to down", kBase));
  engine_->flush();

  std::ofstream(patterns / "zz-site.yaml") << "patterns:\n  - id: broken\n    fault: x\n    bogus: 1\n";
  auto failed = engine_->reload(patterns.string());
  ASSERT_FALSE(failed);
  const std::string reason =
      failed.error().fields.empty() ? failed.error().detail : failed.error().fields[0].reason;
  EXPECT_NE(reason.find("zz-site.yaml:"), std::string::npos) << reason;
  auto status = engine_->status();
  EXPECT_EQ(status.library_patterns, before);
  EXPECT_EQ(status.reload_failures, 1U);
  EXPECT_EQ(status.active_faults, 1U);  // nothing was cleared: the old library is still matching
  // The old library still matches.
  engine_->submit(
      sonic_line("updatePortOperStatus: Port Ethernet49 oper state set from up to down", kBase + 1));
  engine_->flush();
  EXPECT_EQ(of("link-down-sonic").size(), 2U);

  // A good library: the faults still active are cleared (their state is gone), then it is in use.
  fs::remove(patterns / "zz-site.yaml");
  fs::remove(patterns / "physical.yaml");
  auto loaded = engine_->reload(patterns.string());
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_LT(*loaded, before);
  status = engine_->status();
  EXPECT_EQ(status.library_patterns, *loaded);
  EXPECT_EQ(status.reloads, 1U);
  EXPECT_EQ(status.active_faults, 0U);
  const auto sonic = of("link-down-sonic");
  ASSERT_EQ(sonic.size(), 4U);
  EXPECT_EQ(sonic[2].state, FaultState::cleared);
  EXPECT_EQ(sonic[2].detail, "pattern library reloaded");
  EXPECT_EQ(sonic[3].state, FaultState::cleared);
}

TEST_F(EngineTest, ANewTopologyRevisionRebuildsThePeers) {
  EngineOptions options;
  options.topology_refresh = std::chrono::milliseconds(10);
  make(options);
  engine_->start();
  engine_->flush();
  EXPECT_EQ(engine_->status().peers, 0U);
  write_topology(7);
  // The engine looks again at most every topology_refresh, also while idle.
  for (int i = 0; i < 200 && engine_->status().topology_revision != 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    engine_->flush();
  }
  EXPECT_EQ(engine_->status().topology_revision, 7);
  EXPECT_EQ(engine_->status().peers, 4U);
}

TEST_F(EngineTest, TheFirstBatchAfterATopologyWriteSeesItsLinks) {
  EngineOptions options;
  options.topology_refresh = std::chrono::hours(1);  // no periodic look: only the change mark tells
  make(options);
  engine_->start();
  engine_->flush();
  EXPECT_EQ(engine_->status().peers, 0U);
  write_topology(7);
  kpi("leaf01/Ethernet1", "rx_power_dbm", 0, -3);
  engine_->flush();
  EXPECT_EQ(engine_->status().topology_revision, 7);
  EXPECT_EQ(engine_->status().peers, 4U);
}

TEST_F(EngineTest, TheKpiTeeFeedsAcceptedBatchesOnly) {
  testing::TempDir dir;
  store::Database db(store::DatabaseOptions{(dir.path() / "aggregator.db").string()});
  store::SqliteKpiStore sqlite(db);
  make();
  engine_->start();
  BrainKpiStore tee(sqlite, engine_.get());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::vector<store::KpiSample> good = {{"leaf01/Ethernet1", "rx_power_dbm", now - 2000, -3},
                                              {"leaf01/Ethernet1", "rx_power_dbm", now - 1000, -3.1}};
  auto stored = tee.append(good);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->accepted, 2U);
  const std::vector<store::KpiSample> bad = {{"leaf01/Ethernet1", "rx power", now, -3}};
  EXPECT_FALSE(tee.append(bad));
  engine_->flush();
  EXPECT_EQ(engine_->status().samples, 2U);
  EXPECT_EQ(engine_->status().processed_samples, 2U);
  // Reads go to the store.
  store::KpiQuery q;
  q.entity = "leaf01/Ethernet1";
  q.metric = "rx_power_dbm";
  auto points = tee.query(q);
  ASSERT_TRUE(points);
  EXPECT_EQ(points->points.size(), 2U);
}

TEST_F(EngineTest, TheLogBufferObserverFeedsEveryLineWithItsStructuredData) {
  make();
  engine_->start();
  ingest::LogBuffer buffer({.per_device = 10, .max_devices = 1, .window = {}});
  feed_logs(buffer, *engine_);
  ingest::IngestedLog log;
  log.device = "leaf01";
  log.known_device = true;
  log.message.hostname = "leaf01.example";
  log.message.app = "swss#orchagent";
  log.message.severity = 5;
  log.message.timestamp_ms = kBase;
  log.message.message = "updatePortOperStatus: Port Ethernet3 oper state set from up to down";
  log.message.structured_data.push_back({"meta@1", {{"sequenceId", "42"}}});
  const LogInput in = log_input(log);
  EXPECT_EQ(in.entity, "leaf01");
  ASSERT_EQ(in.fields.size(), 1U);
  EXPECT_EQ(in.fields[0].first, "meta@1.sequenceId");
  EXPECT_EQ(in.fields[0].second, "42");
  EXPECT_TRUE(buffer.add(log).stored);
  // A second topology device is refused by the buffer (max 1 device), yet the brain still sees the line.
  log.device = "leaf03";
  log.message.hostname = "leaf03";
  EXPECT_FALSE(buffer.add(log).stored);
  // A sender the topology does not name is kept in the log but raises nothing (issue 31: a line from a
  // host not in the topology raised a stored link-down alarm).
  log.device = "unknown:10.0.0.9";
  log.known_device = false;
  log.message.hostname = "leaf02";
  EXPECT_TRUE(buffer.add(log).stored);
  EXPECT_EQ(log_input(log).entity, "leaf02");
  engine_->flush();
  const auto raised = of("link-down-sonic");
  ASSERT_EQ(raised.size(), 2U);
  EXPECT_EQ(raised[0].entity, "leaf01/Ethernet3");
  EXPECT_EQ(raised[1].entity, "leaf03/Ethernet3");
}

// ---- Device inputs (docs/brain.md "Device inputs"): what the engine derives before the patterns ----

TEST_F(EngineTest, AModulesOwnThresholdsReplaceTheGenericBound) {
  topology_ = small_fabric();
  make();
  engine_->start();
  // -11.5 dBm: beyond the library's generic -10 dBm, inside this module's own -13.9 dBm alarm.
  kpi("host01/ens1f0np0", "rx_power_low_alarm_dbm", 0, -13.9);
  kpi("host01/ens1f0np0", "rx_power_low_warning_dbm", 0, -11.0);
  for (int t = 1; t <= 40; ++t) kpi("host01/ens1f0np0", "rx_power_dbm", t, -11.5);
  engine_->flush();
  EXPECT_TRUE(of("optics-rx-power-low").empty());
  EXPECT_TRUE(of("optics-rx-power-below-module-alarm").empty());
  EXPECT_TRUE(of("optics-rx-power-below-module-warning").empty());  // 39 s below the warning
  for (int t = 41; t <= 70; ++t) kpi("host01/ens1f0np0", "rx_power_dbm", t, -11.5);
  engine_->flush();
  ASSERT_EQ(of("optics-rx-power-below-module-warning").size(), 1U);  // a minute below its warning
  for (int t = 71; t <= 110; ++t) kpi("host01/ens1f0np0", "rx_power_dbm", t, -14.5);
  engine_->flush();
  const auto alarm = of("optics-rx-power-below-module-alarm");
  ASSERT_EQ(alarm.size(), 1U);
  EXPECT_EQ(alarm[0].root_cause, "host01/ens1f0np0<->leaf01/Ethernet1");
  EXPECT_TRUE(of("optics-rx-power-low").empty());
  // A module without thresholds of its own is judged by the generic bound.
  for (int t = 0; t <= 40; ++t) kpi("leaf01/Ethernet1", "rx_power_dbm", t, -11.5);
  engine_->flush();
  EXPECT_EQ(of("optics-rx-power-low").size(), 1U);
}

TEST_F(EngineTest, LinkEndsWithDifferentMtusAreAMismatchUntilTheyAgree) {
  topology_ = small_fabric();
  make();
  engine_->start();
  kpi("leaf01/Ethernet1", "if_mtu", 0, 9216);
  kpi("host01/ens1f0np0", "if_mtu", 1, 9216);
  engine_->flush();
  EXPECT_TRUE(of("mtu-differs-between-ends").empty());
  kpi("host01/ens1f0np0", "if_mtu", 30, 1500);
  engine_->flush();
  auto mtu = of("mtu-differs-between-ends");
  ASSERT_EQ(mtu.size(), 1U);
  EXPECT_EQ(mtu[0].state, FaultState::raised);
  EXPECT_EQ(mtu[0].root_cause, "host01/ens1f0np0<->leaf01/Ethernet1");
  kpi("host01/ens1f0np0", "if_mtu", 60, 9216);
  engine_->flush();
  mtu = of("mtu-differs-between-ends");
  ASSERT_EQ(mtu.size(), 2U);
  EXPECT_EQ(mtu[1].state, FaultState::cleared);
}

TEST_F(EngineTest, APortWhoseQosSettingDiffersFromTheFabricIsDrift) {
  topology_ = small_fabric();
  make();
  engine_->start();
  // PFC on priority 3 (bit 3) everywhere; one port loses it.
  for (int k = 1; k <= 5; ++k) kpi("leaf01/Ethernet" + std::to_string(k), "pfc_enabled_mask", 0, 8);
  engine_->flush();
  EXPECT_TRUE(of("qos-setting-differs-from-fabric").empty());
  kpi("leaf01/Ethernet3", "pfc_enabled_mask", 30, 0);
  engine_->flush();
  const auto drift = of("qos-setting-differs-from-fabric");
  ASSERT_EQ(drift.size(), 1U);
  EXPECT_EQ(drift[0].entity, "leaf01/Ethernet3");
  EXPECT_EQ(drift[0].metric, "pfc_enabled_mask_differs_from_fabric");
}

TEST_F(EngineTest, SysUpTimeGoingBackIsARestartAtThatReadingOnly) {
  topology_ = small_fabric();
  make();
  engine_->start();
  kpi("spine01", "sys_uptime_seconds", 0, 864'000);
  kpi("spine01", "sys_uptime_seconds", 30, 864'030);
  kpi("spine01", "sys_uptime_seconds", 20, 864'010);  // a late poll: no news, no restart
  engine_->flush();
  EXPECT_TRUE(of("switch-uptime-restarted").empty());
  kpi("spine01", "sys_uptime_seconds", 90, 12);
  kpi("spine01", "sys_uptime_seconds", 120, 42);
  engine_->flush();
  const auto reboot = of("switch-uptime-restarted");
  ASSERT_EQ(reboot.size(), 2U);
  EXPECT_EQ(reboot[0].state, FaultState::raised);
  EXPECT_EQ(reboot[0].root_cause, "spine01");
  EXPECT_EQ(reboot[0].timestamp_ms, kBase + 90'000);
  EXPECT_EQ(reboot[1].state, FaultState::cleared);  // the next reading: the event is over
}

TEST_F(EngineTest, RawPauseFrameCountersBecomeRatesThatRaiseAStorm) {
  topology_ = small_fabric();
  make();
  engine_->start();
  double frames = 1000;
  for (int t = 0; t <= 40; t += 5) {
    kpi("host01/ens1f0np0", "pfc_prio3_tx_pause_frames", t, frames);
    frames += t < 15 ? 50 : 5 * 24'000;  // a NIC pausing its leaf nonstop from t = 15 s
  }
  engine_->flush();
  const auto storm = of("pfc-pause-frames-sent-storm");
  ASSERT_EQ(storm.size(), 1U);
  EXPECT_EQ(storm[0].metric, "pfc_prio3_tx_pause_frames");
  EXPECT_NEAR(storm[0].value, 24'000, 1);
}

TEST(BrainSettings, KeysRangesAndTheDefaultLibrary) {
  BrainSettings s;
  apply_brain_yaml(YAML::Load("{enabled: false, patterns_dir: /srv/p, queue_capacity: 1000, max_series: 5}"),
                   s);
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(patterns_dir(s), "/srv/p");
  EXPECT_EQ(s.queue_capacity, 1000U);
  EXPECT_EQ(s.max_series, 5U);
  EXPECT_THROW(apply_brain_yaml(YAML::Load("{queue_capacity: 0}"), s), std::runtime_error);
  EXPECT_THROW(apply_brain_yaml(YAML::Load("{patterns: x}"), s), std::runtime_error);
  EXPECT_THROW(apply_brain_yaml(YAML::Load("{patterns_dir: ''}"), s), std::runtime_error);
  // Some library exists by default (installed, or the repository's in a build tree) and loads.
  auto library = brain::load_pattern_library(default_patterns_dir());
  ASSERT_TRUE(library) << default_patterns_dir() << ": " << library.error().message();
  EXPECT_GT(library->size(), 20U);
}

}  // namespace
}  // namespace hsns::brain_pipeline
