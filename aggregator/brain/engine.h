// BrainEngine: the network brain's live pipeline (docs/brain.md, "Live pipeline"). KPI samples and log
// events from every ingest path go through one bounded queue to one thread of its own, which feeds the
// DetectorBank and the PatternMatcher (lib/brain) and hands the faults they raise or clear to a
// FaultHandler.
//
// Contract:
// - submit() is called from any ingest thread and never waits for processing: it takes the queue's lock
//   only to append. When the queue holds `queue_capacity` units (one per KPI sample, one per log event),
//   what does not fit is dropped and counted (dropped_samples, dropped_logs); ingest never blocks.
// - The engine thread takes items in arrival order. Per KPI sample: its metric is mapped to the brain's
//   name (map_kpi_metric: "<x>_per_s" is the rate of counter <x>, hsnsd's PFC and module names to the
//   patterns'), DetectorBank::observe, then PatternMatcher::observe(KpiObservation with the bank's events
//   for that sample). A counter the detector configuration knows, arriving as a rate, is integrated into
//   a running total for the bank (so its burst and wrap logic see a counter); a counter arriving raw gives
//   the matcher its per-second rate. Per log event: PatternMatcher::observe(LogEvent). Every time is the
//   input's own (event time); the wall clock only measures lag.
// - Output: the faults the items raised or cleared, in order, in one call of the FaultHandler, on the
//   engine thread, for the items the thread took from the queue together (group commit: a burst of log
//   lines is one alarm and incident write, not one per line): handed over after the last of them, before
//   a control item runs, before the ClockHandler is called, and whenever kMaxGroupedFaults are held. A
//   lone item's faults are therefore handed over right after it, as before. The handler must not call back
//   into the engine, except for delivering_arrival(): while the handler runs, when the oldest item whose
//   faults are handed over arrived, so that the stages after the engine measure their lag from it.
// - Event clock: after an input item that moved the newest event time seen (samples and lines) at least
//   kClockStep past the last time reported, the ClockHandler (set_clock_handler, before start()) gets
//   that time, on the engine thread, after the item's faults. The alarm and incident services run their
//   deadlines (incident confirmation and resolution, flap damping) on it: the fabric's telemetry is their
//   clock, so a replay faster than real time confirms and resolves like the live stream would.
// - Per-lane optical power: the lane<N>_{rx,tx}_power_watts samples of one entity and time in a KPI batch
//   also give one {rx,tx}_power_dbm sample of that entity at that time, the weakest lane in dBm (a port is
//   as good as its worst lane), after the batch's own samples.
// - Peers (scope link_both_ends, root cause link) come from the topology (peer_map.h), re-read through
//   `topology` before the next batch once its change mark moved, else at most every `topology_refresh`,
//   and rebuilt only when its revision changed.
// - reload(dir) loads a pattern library on the caller's thread; on an error nothing changes and the error
//   is returned (kind invalid, reason "file:line:column: ..."). On success the engine thread first clears
//   every fault still active (detail "pattern library reloaded": the old library's state is gone, a
//   condition that still holds raises again under the new one), then swaps the library in.
// - Bounds: the queue (queue_capacity units), the bank (bank.max_series), the matcher (matcher.max_states),
//   the counter totals (bank.max_series series; beyond it they start afresh, the bank counting a reset),
//   the active faults (one per matcher state), the recent faults kept for status (kRecentFaults) and the
//   lag windows (kLagWindow).
// - status(): the queue's depth and the submit counters are live; the rest is what the engine thread last
//   published, at most kPublishInterval old while it works, and current as of every flush() and reload().
// - stop() (also the destructor) processes what is queued, then ends the thread. Thread-safe otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brain/bank.h"
#include "brain/config.h"
#include "brain/module_thresholds.h"
#include "brain/own_level.h"
#include "brain/patterns.h"
#include "hsns/error.h"
#include "services/refresh_gate.h"
#include "store/kpi_store.h"
#include "topology/topology.h"

namespace hsns::brain_pipeline {

class BrainMetrics;

// Faults raised or cleared by one queue item (the contract's hand-over to the alarm service).
using FaultHandler = std::function<void(std::span<const brain::FaultMatch>)>;
// The newest event time the engine has seen (Unix ms), reported as it moves on (the contract's event clock).
using ClockHandler = std::function<void(std::int64_t event_ms)>;

// A log line as the engine keeps it (owning copies of the parsed message's fields).
struct LogInput {
  std::string entity;  // the device resolved from the hostname ("leaf01")
  std::int64_t timestamp_ms = 0;
  std::string message;
  std::string app;
  std::string hostname;
  std::string msgid;
  std::string procid;
  int severity = 6;
  std::vector<std::pair<std::string, std::string>> fields;  // "<sd-id>.<param>" -> value
};

// The current topology as the peer resolver needs it; nullopt when there is none.
struct TopologyView {
  std::int64_t revision = 0;
  std::shared_ptr<const topology::Topology> topology;
};
// Where the engine reads the topology. `read` answers the current model. `change_mark`, when set, is a
// cheap in-process mark of topology writes (TopologyCache::change_mark) looked at before every batch: the
// model is read again as soon as the mark moves (a batch right after an import sees the new links), and
// otherwise at most every topology_refresh.
struct TopologySource {
  std::function<std::optional<TopologyView>()> read;
  std::function<std::optional<std::int64_t>()> change_mark;
};

// A KPI store metric as the brain names it. rate: the value is a per-second rate (of counter `metric`).
struct BrainMetric {
  std::string metric;
  bool rate = false;
};
BrainMetric map_kpi_metric(std::string_view metric);

// hsnsd's per-lane optical power, "lane<N>_rx_power_watts" / "lane<N>_tx_power_watts": the port-level
// metric the optics patterns read ("rx_power_dbm" / "tx_power_dbm"), or nothing for any other name.
std::optional<std::string_view> lane_power_metric(std::string_view metric);
// Watts as dBm (10 log10(mW)); no light (0 W or less) reads as kNoLightDbm.
inline constexpr double kNoLightDbm = -40.0;
double watts_to_dbm(double watts);

struct EngineOptions {
  std::size_t queue_capacity = 262'144;  // units: KPI samples and log events waiting
  brain::BankLimits bank;
  brain::MatcherLimits matcher;
  std::chrono::milliseconds topology_refresh{1000};
};

inline constexpr std::size_t kRecentFaults = 64;
inline constexpr std::size_t kLagWindow = 4096;
inline constexpr std::chrono::milliseconds kPublishInterval{100};
inline constexpr std::size_t kMaxGroupedFaults = 4096;  // faults held before they are handed over anyway
inline constexpr std::int64_t kClockStep = 1000;        // ms of event time between two ClockHandler calls

struct LagSummary {
  std::uint64_t count = 0;  // observations in the window
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

struct EngineStatus {
  std::size_t library_patterns = 0;
  std::size_t queue_depth = 0;
  std::size_t queue_capacity = 0;
  std::uint64_t samples = 0;  // KPI samples taken into the queue
  std::uint64_t logs = 0;     // log events taken into the queue
  std::uint64_t dropped_samples = 0;
  std::uint64_t dropped_logs = 0;
  std::uint64_t processed_samples = 0;
  std::uint64_t processed_logs = 0;
  std::uint64_t faults_raised = 0;
  std::uint64_t faults_cleared = 0;
  std::size_t active_faults = 0;
  std::uint64_t reloads = 0;
  std::uint64_t reload_failures = 0;
  std::int64_t topology_revision = 0;  // 0: none seen
  std::size_t peers = 0;               // entities with a known link peer
  brain::BankStats detectors;
  std::size_t detector_series = 0;
  brain::MatcherStats matcher;
  std::size_t matcher_states = 0;
  LagSummary processing_lag;                     // arrival -> processed, per queue item
  LagSummary fault_lag;                          // arrival -> fault handed over, per fault
  std::vector<brain::FaultMatch> recent_faults;  // newest last
};

class BrainEngine {
 public:
  BrainEngine(brain::BrainConfig detectors, brain::PatternLibrary library, FaultHandler on_faults,
              TopologySource topology, EngineOptions options = {}, BrainMetrics* metrics = nullptr);
  ~BrainEngine();
  BrainEngine(const BrainEngine&) = delete;
  BrainEngine& operator=(const BrainEngine&) = delete;

  // Before start(): the event clock's listener (see the contract).
  void set_clock_handler(ClockHandler on_clock);
  void start();
  void stop();

  // Any thread. Answers how many were queued (the rest dropped).
  std::size_t submit(std::span<const store::KpiSample> samples);
  bool submit(LogInput log);

  // Loads the directory and swaps its library in (see the contract); answers the library's size.
  Result<std::size_t> reload(const std::string& directory);
  // Returns once everything submitted before the call has been processed (tests and the bench).
  void flush();

  EngineStatus status() const;

  // Only from within the FaultHandler (the engine thread): when the oldest queue item arrived whose
  // faults are being handed over.
  std::chrono::steady_clock::time_point delivering_arrival() const { return delivering_arrival_; }

 private:
  struct Item {
    enum class Kind : std::uint8_t { kpi, log, control } kind = Kind::kpi;
    std::chrono::steady_clock::time_point arrival;
    std::vector<store::KpiSample> samples;
    LogInput log;
    std::function<void()> control;             // control items: run on the engine thread
    std::shared_ptr<std::promise<void>> done;  // control items: set once it ran and status was published
  };
  struct CounterTotal {
    std::int64_t last_ms = 0;
    double last_raw = 0;
    double total = 0;
  };

  void run();
  bool enqueue(Item item, std::size_t units);
  void process(Item& item, bool last_of_batch);
  void process_sample(const store::KpiSample& sample);
  void process_batch(const std::vector<store::KpiSample>& samples);
  void process_log(const LogInput& log);
  void observe_mtu(const store::KpiSample& sample);
  void observe_uptime(const store::KpiSample& sample);
  void observe_own_level(const store::KpiSample& sample, brain::OwnLevel& level, std::string_view derived,
                         std::optional<double> dark_at_or_below);
  void observe_fabric_setting(const store::KpiSample& sample);
  void hand_over();  // faults_ to the FaultHandler, then cleared
  void refresh_topology(bool force);
  void track(const brain::FaultMatch& match);
  void clear_active(std::int64_t now_ms);
  void publish_stats();

  // Set once, read by the engine thread.
  FaultHandler on_faults_;
  ClockHandler on_clock_;
  TopologySource topology_;
  EngineOptions options_;
  BrainMetrics* metrics_;

  // The queue.
  mutable std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Item> queue_;
  std::size_t depth_ = 0;  // units queued
  bool stopping_ = false;
  std::atomic<std::uint64_t> samples_{0}, logs_{0}, dropped_samples_{0}, dropped_logs_{0};
  std::thread thread_;
  std::mutex reload_mutex_;  // one reload at a time

  // The engine thread's own state.
  brain::DetectorBank bank_;
  std::unordered_map<std::string, std::string> peers_;
  brain::PatternMatcher matcher_;
  std::vector<brain::AnomalyEvent> verdicts_;
  std::vector<brain::FaultMatch> faults_;
  std::vector<std::chrono::steady_clock::time_point> fault_arrivals_;  // per fault: its item's arrival
  std::chrono::steady_clock::time_point delivering_arrival_{};  // engine thread: see delivering_arrival()
  std::vector<brain::LogField> fields_;
  std::string key_;
  std::unordered_map<std::string, CounterTotal> totals_;
  brain::ModuleThresholds module_thresholds_;  // optics judged by the module's own alarm thresholds
  std::vector<brain::MarginObservation> margins_;
  brain::OwnLevel rx_level_{brain::OwnLevel::Bad::lower};     // each receiver's own usual power
  brain::OwnLevel temp_level_{brain::OwnLevel::Bad::higher};  // each module's own usual temperature
  std::unordered_map<std::string, double> mtu_;               // the last if_mtu per port entity
  struct Reading {
    std::int64_t ts_ms = 0;
    double value = 0;
  };
  std::unordered_map<std::string, Reading> uptime_;  // the newest sys_uptime_seconds per device
  struct PortSetting {
    double first = 0;  // the first reading: the port's baseline while the fabric's is unknown
    double last = 0;
  };
  struct FabricSetting {
    std::unordered_map<std::string, PortSetting> by_entity;
    std::map<double, std::size_t> ports_with;  // value -> ports whose last reading it is
  };
  std::unordered_map<std::string, FabricSetting> fabric_settings_;  // by metric
  std::unordered_map<std::string, brain::FaultMatch> active_;       // (pattern id, entity or link) -> raised
  std::int64_t topology_revision_ = 0;
  services::RefreshGate<std::int64_t> topology_gate_;  // when to read the topology again
  std::int64_t last_event_ms_ = 0;
  std::int64_t clock_reported_ms_ = 0;        // the last time given to on_clock_
  std::vector<store::KpiSample> lane_power_;  // a batch's weakest lane per (entity, metric, time), in watts
  std::uint64_t processed_samples_ = 0, processed_logs_ = 0, raised_ = 0, cleared_ = 0;
  std::atomic<std::uint64_t> reloads_{0}, reload_failures_{0};
  std::vector<double> processing_lag_, fault_lag_;  // rings of kLagWindow
  std::size_t processing_next_ = 0, fault_next_ = 0;
  std::deque<brain::FaultMatch> recent_;
  std::chrono::steady_clock::time_point published_at_{};

  // What status() reads (published by the engine thread).
  mutable std::mutex stats_mutex_;
  EngineStatus published_;
  std::vector<double> published_processing_lag_, published_fault_lag_;
};

}  // namespace hsns::brain_pipeline
