#include "brain/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <future>

#include "brain/peer_map.h"
#include "brain/pipeline_metrics.h"
#include "hsns/log.h"

namespace hsns::brain_pipeline {
namespace {

using Clock = std::chrono::steady_clock;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

double ms_since(Clock::time_point t, Clock::time_point now) {
  return std::chrono::duration<double, std::milli>(now - t).count();
}

void record(std::vector<double>& ring, std::size_t& next, double value) {
  if (ring.size() < kLagWindow) {
    ring.push_back(value);
  } else {
    ring[next] = value;
  }
  next = (next + 1) % kLagWindow;
}

LagSummary summarise(std::vector<double> values) {
  LagSummary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  s.p50_ms = at(0.50);
  s.p99_ms = at(0.99);
  s.max_ms = values.back();
  return s;
}

// The active-fault key: a link fault is one fault for both ends (either end may clear it).
std::string active_key(const brain::FaultMatch& m) {
  const bool link = m.pattern->scope == brain::PatternScope::link_both_ends;
  return m.pattern->id + '\0' + (link ? m.root_cause : m.entity);
}

// A log pattern without clears_on is one-shot: raised by every matching line, never active.
bool one_shot(const brain::Pattern& p) {
  return p.match.log.has_value() && !p.clears_on.has_value();
}

}  // namespace

BrainMetric map_kpi_metric(std::string_view metric) {
  // hsnsd's PFC pause duration per priority (report_kpis.h) is what the patterns call
  // {tx,rx}_prio<N>_pause_duration (mlx5's ethtool name), in microseconds per second.
  if (starts_with(metric, "pfc_prio") && ends_with(metric, "_pause_us_per_s")) {
    const auto middle = metric.substr(8, metric.size() - 8 - 15);  // "<N>_tx" or "<N>_rx"
    const auto underscore = middle.find('_');
    if (underscore != std::string_view::npos && underscore > 0) {
      const auto prio = middle.substr(0, underscore);
      const auto dir = middle.substr(underscore + 1);
      if ((dir == "tx" || dir == "rx") && prio.find_first_not_of("0123456789") == std::string_view::npos) {
        return {std::string(dir) + "_prio" + std::string(prio) + "_pause_duration", true};
      }
    }
  }
  // hsnsd's pause frames per second and a switch's raw pause frame counters are one series name.
  if (starts_with(metric, "pfc_prio") &&
      (ends_with(metric, "_rx_pause_per_s") || ends_with(metric, "_tx_pause_per_s"))) {
    return {std::string(metric.substr(0, metric.size() - 6)) + "_frames", true};
  }
  if (metric == "module_temperature_celsius") return {"temperature_celsius", false};
  if (ends_with(metric, "_per_s") && metric.size() > 6) {
    return {std::string(metric.substr(0, metric.size() - 6)), true};
  }
  return {std::string(metric), false};
}

std::optional<std::string_view> lane_power_metric(std::string_view metric) {
  if (!starts_with(metric, "lane") || metric.size() <= 4) return std::nullopt;
  const auto rest = metric.substr(4);
  const auto underscore = rest.find('_');
  if (underscore == 0 || underscore == std::string_view::npos) return std::nullopt;
  if (rest.substr(0, underscore).find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const auto name = rest.substr(underscore + 1);
  if (name == "rx_power_watts") return std::string_view("rx_power_dbm");
  if (name == "tx_power_watts") return std::string_view("tx_power_dbm");
  return std::nullopt;
}

namespace {
constexpr std::ptrdiff_t kLaneScan = 4;  // entries of lane_power_ a lane sample looks back at
}  // namespace

double watts_to_dbm(double watts) {
  if (!(watts > 0)) return kNoLightDbm;
  return std::max(kNoLightDbm, 10.0 * std::log10(watts * 1000.0));
}

BrainEngine::BrainEngine(brain::BrainConfig detectors, brain::PatternLibrary library, FaultHandler on_faults,
                         TopologySource topology, EngineOptions options, BrainMetrics* metrics)
    : on_faults_(std::move(on_faults)),
      topology_(std::move(topology)),
      options_(options),
      metrics_(metrics),
      bank_(std::move(detectors), options.bank),
      matcher_(
          std::move(library),
          [this](std::string_view entity) -> std::optional<std::string> {
            const auto it = peers_.find(std::string(entity));
            if (it == peers_.end()) return std::nullopt;
            return it->second;
          },
          options.matcher),
      topology_gate_(options.topology_refresh) {
  published_.queue_capacity = options_.queue_capacity;
  published_.library_patterns = matcher_.library().size();
  if (metrics_ != nullptr) metrics_->set_library_size(matcher_.library().size());
}

BrainEngine::~BrainEngine() {
  stop();
}

void BrainEngine::set_clock_handler(ClockHandler on_clock) {
  on_clock_ = std::move(on_clock);
}

void BrainEngine::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void BrainEngine::stop() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool BrainEngine::enqueue(Item item, std::size_t units) {
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return false;
    depth_ += units;
    queue_.push_back(std::move(item));
    if (metrics_ != nullptr) metrics_->set_queue_depth(depth_);
  }
  queue_cv_.notify_one();
  return true;
}

std::size_t BrainEngine::submit(std::span<const store::KpiSample> samples) {
  if (samples.empty()) return 0;
  std::size_t take = 0;
  {
    std::lock_guard lock(queue_mutex_);
    const std::size_t room =
        stopping_ ? 0 : (depth_ >= options_.queue_capacity ? 0 : options_.queue_capacity - depth_);
    take = std::min(room, samples.size());
    // Reserve the room now, so that concurrent submitters cannot overfill the queue while this one copies.
    depth_ += take;
  }
  const std::size_t dropped = samples.size() - take;
  if (dropped > 0) {
    dropped_samples_.fetch_add(dropped, std::memory_order_relaxed);
    if (metrics_ != nullptr) metrics_->observe_dropped_samples(dropped);
  }
  if (take == 0) return 0;
  Item item;
  item.kind = Item::Kind::kpi;
  item.arrival = Clock::now();
  item.samples.assign(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(take));
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(std::move(item));
    if (metrics_ != nullptr) metrics_->set_queue_depth(depth_);
  }
  queue_cv_.notify_one();
  samples_.fetch_add(take, std::memory_order_relaxed);
  if (metrics_ != nullptr) metrics_->observe_samples(take);
  return take;
}

bool BrainEngine::submit(LogInput log) {
  Item item;
  item.kind = Item::Kind::log;
  item.arrival = Clock::now();
  item.log = std::move(log);
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_ || depth_ >= options_.queue_capacity) {
      dropped_logs_.fetch_add(1, std::memory_order_relaxed);
      if (metrics_ != nullptr) metrics_->observe_dropped_logs(1);
      return false;
    }
    ++depth_;
    queue_.push_back(std::move(item));
    if (metrics_ != nullptr) metrics_->set_queue_depth(depth_);
  }
  queue_cv_.notify_one();
  logs_.fetch_add(1, std::memory_order_relaxed);
  if (metrics_ != nullptr) metrics_->observe_logs(1);
  return true;
}

Result<std::size_t> BrainEngine::reload(const std::string& directory) {
  std::lock_guard serial(reload_mutex_);
  auto library = brain::load_pattern_library(directory);
  if (!library) {
    reload_failures_.fetch_add(1);
    if (metrics_ != nullptr) metrics_->observe_reload(false);
    return tl::unexpected(std::move(library.error()));
  }
  const std::size_t size = library->size();
  auto applied = std::make_shared<std::promise<void>>();
  auto done = applied->get_future();
  Item item;
  item.kind = Item::Kind::control;
  item.arrival = Clock::now();
  item.control = [this, lib = std::move(*library)]() mutable {
    clear_active(last_event_ms_);
    matcher_.replace_library(std::move(lib));
  };
  item.done = applied;
  if (!enqueue(std::move(item), 0)) return tl::unexpected(Error::unavailable("the brain engine is stopped"));
  done.wait();
  reloads_.fetch_add(1);
  if (metrics_ != nullptr) {
    metrics_->observe_reload(true);
    metrics_->set_library_size(size);
  }
  return size;
}

void BrainEngine::flush() {
  auto processed = std::make_shared<std::promise<void>>();
  auto done = processed->get_future();
  Item item;
  item.kind = Item::Kind::control;
  item.arrival = Clock::now();
  item.done = processed;
  if (!enqueue(std::move(item), 0)) return;
  done.wait();
}

void BrainEngine::run() {
  std::deque<Item> batch;
  refresh_topology(true);
  for (;;) {
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait_for(lock, options_.topology_refresh, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) break;
      batch.swap(queue_);
    }
    refresh_topology(false);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto& item = batch[i];
      process(item, i + 1 == batch.size());
      std::size_t units = 0;
      if (item.kind == Item::Kind::kpi) units = item.samples.size();
      if (item.kind == Item::Kind::log) units = 1;
      if (units > 0) {
        std::lock_guard lock(queue_mutex_);
        depth_ -= units;
        if (metrics_ != nullptr) metrics_->set_queue_depth(depth_);
      }
    }
    batch.clear();
    // Status is copied out at most every kPublishInterval (and before every control item, so a flush or a
    // reload sees everything before it): the copy would cost more than a small batch's processing.
    if (Clock::now() - published_at_ >= kPublishInterval) publish_stats();
  }
  publish_stats();
}

void BrainEngine::process(Item& item, bool last_of_batch) {
  switch (item.kind) {
    case Item::Kind::kpi:
      process_batch(item.samples);
      break;
    case Item::Kind::log:
      process_log(item.log);
      break;
    case Item::Kind::control:
      hand_over();                       // the faults of the items before it first
      if (item.control) item.control();  // may produce faults (a reload clears the active ones)
      fault_arrivals_.resize(faults_.size(), item.arrival);
      hand_over();
      publish_stats();
      if (item.done) item.done->set_value();  // the caller sees everything before it done and published
      return;
  }
  const auto now = Clock::now();
  const double lag = ms_since(item.arrival, now);
  record(processing_lag_, processing_next_, lag);
  if (metrics_ != nullptr) metrics_->observe_processing_lag(lag / 1000.0);
  fault_arrivals_.resize(faults_.size(), item.arrival);
  const bool clock_due = on_clock_ && last_event_ms_ >= clock_reported_ms_ + kClockStep;
  // The faults of the items taken together are handed over together (one alarm and incident write for a
  // burst of lines), at the batch's end, before the clock moves on, or once kMaxGroupedFaults are held.
  if (last_of_batch || clock_due || faults_.size() >= kMaxGroupedFaults) hand_over();
  if (clock_due) {
    clock_reported_ms_ = last_event_ms_;
    try {
      on_clock_(last_event_ms_);
    } catch (const std::exception& e) {
      HSNS_LOG(error) << "brain: the clock handler failed: " << e.what();
    }
  }
}

void BrainEngine::process_batch(const std::vector<store::KpiSample>& samples) {
  lane_power_.clear();
  for (const auto& sample : samples) {
    process_sample(sample);
    const auto port_metric = lane_power_metric(sample.metric);
    if (!port_metric || !std::isfinite(sample.value)) continue;
    // A module's lanes come together (report_kpis.h): the last few entries hold its port's, so the work
    // stays constant per sample (lanes scattered through a batch give the port more than one sample at
    // that time; the bank ignores the repeats).
    const auto from =
        std::ssize(lane_power_) > kLaneScan ? lane_power_.end() - kLaneScan : lane_power_.begin();
    auto it = std::find_if(from, lane_power_.end(), [&](const store::KpiSample& s) {
      return s.ts_ms == sample.ts_ms && s.metric == *port_metric && s.entity == sample.entity;
    });
    if (it == lane_power_.end()) {
      lane_power_.push_back({sample.entity, std::string(*port_metric), sample.ts_ms, sample.value});
    } else {
      it->value = std::min(it->value, sample.value);
    }
  }
  for (auto& port : lane_power_) {
    port.value = watts_to_dbm(port.value);
    process_sample(port);
  }
}

void BrainEngine::process_sample(const store::KpiSample& sample) {
  ++processed_samples_;
  last_event_ms_ = std::max(last_event_ms_, sample.ts_ms);
  const BrainMetric mapped = map_kpi_metric(sample.metric);
  const brain::DetectorConfig* config = bank_.config().resolve(sample.entity, mapped.metric);
  const bool counter = config != nullptr && config->type == brain::SeriesType::counter;

  double bank_value = sample.value;  // what the detectors see
  double observed = sample.value;    // what the matcher sees: a gauge's value, a counter's rate
  bool observe = true;
  if (counter) {
    key_.assign(sample.entity).append(1, '\0').append(mapped.metric);
    auto it = totals_.find(key_);
    if (it == totals_.end()) {
      // Beyond the cap every total starts afresh: the bank sees a counter going back, a reset (no anomaly).
      if (totals_.size() >= options_.bank.max_series) totals_.clear();
      it = totals_.emplace(key_, CounterTotal{sample.ts_ms, sample.value, 0}).first;
      if (!mapped.rate) observe = false;  // a raw counter's first reading has no rate yet
    } else {
      CounterTotal& t = it->second;
      const double seconds = static_cast<double>(sample.ts_ms - t.last_ms) / 1000.0;
      if (seconds > 0) {
        if (mapped.rate) {
          t.total += std::max(0.0, sample.value) * seconds;
        } else {
          observed = sample.value >= t.last_raw ? (sample.value - t.last_raw) / seconds : 0;
        }
        t.last_ms = sample.ts_ms;
        t.last_raw = sample.value;
      } else if (!mapped.rate) {
        observe = false;  // late or duplicate: the bank ignores it, and there is no rate
      }
    }
    if (mapped.rate) bank_value = it->second.total;
  }

  // A module's own thresholds are kept, not judged; a reading of a module that has them is judged by its
  // margin to them (module_thresholds.h) instead of the library's generic bound.
  if (module_thresholds_.absorb(sample.entity, mapped.metric, sample.value)) return;
  verdicts_.clear();
  bank_.observe({sample.entity, mapped.metric, sample.ts_ms, bank_value}, verdicts_);
  if (!observe) return;
  if (mapped.metric == "if_mtu") observe_mtu(sample);
  if (mapped.metric == "sys_uptime_seconds") observe_uptime(sample);
  if (mapped.metric == "rx_power_dbm") observe_own_level(sample, rx_level_, "rx_power_fall_db", -30.0);
  if (mapped.metric == "temperature_celsius") {
    observe_own_level(sample, temp_level_, "temperature_rise_celsius", std::nullopt);
  }
  if (mapped.metric == "pfc_enabled_mask" || mapped.metric == "ecn_enabled") observe_fabric_setting(sample);
  margins_.clear();
  if (module_thresholds_.margins(sample.entity, mapped.metric, observed, margins_)) {
    for (const auto& margin : margins_) {
      matcher_.observe(brain::KpiObservation{sample.entity, std::string(margin.metric), sample.ts_ms,
                                             margin.value, verdicts_},
                       faults_);
    }
    return;
  }
  matcher_.observe(brain::KpiObservation{sample.entity, mapped.metric, sample.ts_ms, observed, verdicts_},
                   faults_);
}

// Both ends of a link should carry the same MTU: each reading of a port gives it the difference to its
// peer's last reading ("mtu_peer_difference_bytes", 0 when equal), which the mtu_mismatch pattern judges.
void BrainEngine::observe_mtu(const store::KpiSample& sample) {
  if (!std::isfinite(sample.value)) return;
  if (mtu_.size() >= options_.bank.max_series && !mtu_.contains(sample.entity)) mtu_.clear();
  mtu_[sample.entity] = sample.value;
  const auto peer = peers_.find(sample.entity);
  if (peer == peers_.end()) return;
  const auto other = mtu_.find(peer->second);
  if (other == mtu_.end()) return;
  const double difference = std::abs(sample.value - other->second);
  verdicts_.clear();
  matcher_.observe(
      brain::KpiObservation{sample.entity, "mtu_peer_difference_bytes", sample.ts_ms, difference, verdicts_},
      faults_);
}

// sysUpTime going back is a restart: "sys_uptime_went_back" is 1 at that reading and 0 at the others, so the
// reboot is an event at its time, not a state held while the uptime is small.
void BrainEngine::observe_uptime(const store::KpiSample& sample) {
  if (!std::isfinite(sample.value)) return;
  if (uptime_.size() >= options_.bank.max_series && !uptime_.contains(sample.entity)) uptime_.clear();
  const auto [it, fresh] = uptime_.try_emplace(sample.entity, Reading{sample.ts_ms, sample.value});
  if (fresh) return;
  if (sample.ts_ms <= it->second.ts_ms) return;  // a late or repeated poll says nothing new
  const bool went_back = sample.value < it->second.value;
  it->second = {sample.ts_ms, sample.value};
  verdicts_.clear();
  matcher_.observe(brain::KpiObservation{sample.entity, "sys_uptime_went_back", sample.ts_ms,
                                         went_back ? 1.0 : 0.0, verdicts_},
                   faults_);
}

// A reading that moved a long way the bad way from the port's own usual level within minutes is a fault
// before any threshold (own_level.h): received light sliding a few dB (a degrading fiber or far laser) is
// "rx_power_fall_db", a module heating by tens of degrees "temperature_rise_celsius", which the
// optics-rx-power-falling and module-temperature-rising patterns judge. A dark receiver (at or below
// dark_at_or_below) is a link down, judged by its own patterns: it answers 0 here, so that a fall that
// ends in darkness clears into the link's own fault instead of doubling it.
void BrainEngine::observe_own_level(const store::KpiSample& sample, brain::OwnLevel& level,
                                    std::string_view derived, std::optional<double> dark_at_or_below) {
  const std::optional<double> away = level.departure(sample.entity, sample.ts_ms, sample.value);
  if (!away) return;
  const bool dark = dark_at_or_below && sample.value <= *dark_at_or_below;
  // No verdicts of its own: the reading's detectors' verdicts stay with the reading.
  matcher_.observe(brain::KpiObservation{sample.entity, derived, sample.ts_ms, dark ? 0.0 : *away, {}},
                   faults_);
}

// A lossless fabric needs one QoS setting everywhere (the same PFC priorities, ECN on the RoCE queue): a
// port whose setting changed from its own first reading, or differs from what most ports of the fabric
// report once kFabricQuorum ports do ("<metric>_differs_from_fabric" 1, else 0), is drifted configuration.
void BrainEngine::observe_fabric_setting(const store::KpiSample& sample) {
  constexpr std::size_t kFabricQuorum = 4;
  if (!std::isfinite(sample.value)) return;
  auto& setting = fabric_settings_[sample.metric];
  if (setting.by_entity.size() >= options_.bank.max_series && !setting.by_entity.contains(sample.entity)) {
    setting = {};
  }
  auto [it, fresh] = setting.by_entity.try_emplace(sample.entity, PortSetting{sample.value, sample.value});
  if (fresh) {
    ++setting.ports_with[sample.value];
  } else if (it->second.last != sample.value) {
    if (--setting.ports_with[it->second.last] == 0) setting.ports_with.erase(it->second.last);
    it->second.last = sample.value;
    ++setting.ports_with[sample.value];
  }
  // Drifted: changed from the port's own first reading (a whole switch reconfigured at once moves the
  // majority too), or, once enough ports report, different from what most of the fabric runs.
  bool differs = sample.value != it->second.first;
  if (!differs && setting.by_entity.size() >= kFabricQuorum) {
    const auto mode = std::max_element(setting.ports_with.begin(), setting.ports_with.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    differs = sample.value != mode->first;
  }
  verdicts_.clear();
  matcher_.observe(brain::KpiObservation{sample.entity, sample.metric + "_differs_from_fabric", sample.ts_ms,
                                         differs ? 1.0 : 0.0, verdicts_},
                   faults_);
}

void BrainEngine::process_log(const LogInput& log) {
  ++processed_logs_;
  last_event_ms_ = std::max(last_event_ms_, log.timestamp_ms);
  fields_.clear();
  for (const auto& [name, value] : log.fields) fields_.push_back({name, value});
  matcher_.observe(brain::LogEvent{log.entity, log.timestamp_ms, log.message, log.app, log.hostname,
                                   log.msgid, log.procid, log.severity, fields_},
                   faults_);
}

void BrainEngine::track(const brain::FaultMatch& match) {
  if (match.state == brain::FaultState::raised) {
    ++raised_;
    if (!one_shot(*match.pattern)) active_.insert_or_assign(active_key(match), match);
  } else {
    ++cleared_;
    active_.erase(active_key(match));
  }
  recent_.push_back(match);
  if (recent_.size() > kRecentFaults) recent_.pop_front();
}

void BrainEngine::clear_active(std::int64_t now_ms) {
  for (auto& [key, match] : active_) {
    brain::FaultMatch cleared = match;
    cleared.state = brain::FaultState::cleared;
    cleared.timestamp_ms = std::max(now_ms, match.timestamp_ms);
    cleared.detail = "pattern library reloaded";
    faults_.push_back(std::move(cleared));
  }
  // track() below erases them again as it sees the cleared matches.
}

void BrainEngine::hand_over() {
  if (faults_.empty()) return;
  const auto now = Clock::now();
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const auto& match = faults_[i];
    const double lag = ms_since(fault_arrivals_[i], now);
    track(match);
    record(fault_lag_, fault_next_, lag);
    if (metrics_ != nullptr) {
      metrics_->observe_fault(match.pattern->fault, match.state == brain::FaultState::raised);
      metrics_->observe_fault_lag(lag / 1000.0);
    }
  }
  if (on_faults_) {
    delivering_arrival_ = fault_arrivals_.front();  // the oldest: the stages after it measure the worst lag
    try {
      on_faults_(faults_);
    } catch (const std::exception& e) {
      HSNS_LOG(error) << "brain: the fault handler failed: " << e.what();
    }
  }
  faults_.clear();
  fault_arrivals_.clear();
}

void BrainEngine::refresh_topology(bool force) {
  if (!topology_.read) return;
  const auto now = Clock::now();
  std::optional<std::int64_t> mark;
  try {
    if (topology_.change_mark) mark = topology_.change_mark();
  } catch (const std::exception& e) {
    HSNS_LOG(warning) << "brain: reading the topology's change mark failed: " << e.what();
  }
  if (!topology_gate_.due(mark, now, force)) return;  // the mark is taken before the read
  std::optional<TopologyView> view;
  try {
    view = topology_.read();
  } catch (const std::exception& e) {
    HSNS_LOG(warning) << "brain: reading the topology failed: " << e.what();
    return;
  }
  if (!view || !view->topology || view->revision == topology_revision_) return;
  peers_ = build_peer_map(*view->topology);
  topology_revision_ = view->revision;
}

void BrainEngine::publish_stats() {
  published_at_ = Clock::now();
  EngineStatus s;
  s.library_patterns = matcher_.library().size();
  s.queue_capacity = options_.queue_capacity;
  s.processed_samples = processed_samples_;
  s.processed_logs = processed_logs_;
  s.faults_raised = raised_;
  s.faults_cleared = cleared_;
  s.active_faults = active_.size();
  s.topology_revision = topology_revision_;
  s.peers = peers_.size();
  s.detectors = bank_.stats();
  s.detector_series = bank_.series_count();
  s.matcher = matcher_.stats();
  s.matcher_states = matcher_.state_count();
  s.recent_faults.assign(recent_.begin(), recent_.end());
  std::lock_guard lock(stats_mutex_);
  published_ = std::move(s);
  published_processing_lag_ = processing_lag_;
  published_fault_lag_ = fault_lag_;
}

EngineStatus BrainEngine::status() const {
  EngineStatus s;
  std::vector<double> processing;
  std::vector<double> fault;
  {
    std::lock_guard lock(stats_mutex_);
    s = published_;
    processing = published_processing_lag_;
    fault = published_fault_lag_;
  }
  // Sorted here, on the caller's thread: the engine thread only copies its rings.
  s.processing_lag = summarise(std::move(processing));
  s.fault_lag = summarise(std::move(fault));
  {
    std::lock_guard lock(queue_mutex_);
    s.queue_depth = depth_;
  }
  s.samples = samples_.load(std::memory_order_relaxed);
  s.logs = logs_.load(std::memory_order_relaxed);
  s.dropped_samples = dropped_samples_.load(std::memory_order_relaxed);
  s.dropped_logs = dropped_logs_.load(std::memory_order_relaxed);
  s.reloads = reloads_.load();
  s.reload_failures = reload_failures_.load();
  return s;
}

}  // namespace hsns::brain_pipeline
