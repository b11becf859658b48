#include "flow_harvester.h"

#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "config.h"
#include "hsns/log.h"
#include "metrics.h"
#include "report_encoding.h"

namespace hsns::daemon {

FlowProbeMetrics::FlowProbeMetrics(prometheus::Registry& r)
    : up(add_gauge(r, "hsns_flow_probe_up", "1 while the RoCEv2 flow probe is attached")),
      interfaces(add_gauge(r, "hsns_flow_probe_interfaces", "Interfaces the flow probe is attached to")),
      start_failures(add_counter(r, "hsns_flow_probe_start_failures_total",
                                 "Failed flow probe starts (load or attach)")),
      harvests(add_counter(r, "hsns_flow_probe_harvests_total", "Flow table harvests")),
      harvest_errors(add_counter(r, "hsns_flow_probe_harvest_errors_total", "Failed flow table harvests")),
      records(add_counter(r, "hsns_flow_probe_records_total", "Flow records harvested")),
      sink_errors(
          add_counter(r, "hsns_flow_probe_sink_errors_total", "Failed writes of a harvest to the flow sink")),
      records_unwritten(add_counter(r, "hsns_flow_probe_records_unwritten_total",
                                    "Harvested flow records a failed sink write may have lost")),
      last_harvest_seconds(add_gauge(r, "hsns_flow_probe_last_harvest_duration_seconds",
                                     "Duration of the last harvest and write")),
      last_harvest_records(
          add_gauge(r, "hsns_flow_probe_last_harvest_records", "Flow records of the last harvest")),
      last_harvest_timestamp(add_gauge(r, "hsns_flow_probe_last_harvest_timestamp_seconds",
                                       "Unix time of the last successful harvest")),
      harvest_duration(
          add_histogram(r, "hsns_flow_probe_harvest_duration_seconds",
                        "Duration of the successful harvests (harvest, sink write, commit)",
                        {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})),
      harvest_records(add_histogram(r, "hsns_flow_probe_harvest_records",
                                    "Flow records of each successful harvest",
                                    {0, 1, 10, 100, 1000, 10000, 100000, 1000000})),
      table_slots(add_gauge(r, "hsns_flow_probe_table_slots",
                            "Slots of one flow table (its capacity; 0 while the probe is not running)")),
      table_entries(add_gauge(r, "hsns_flow_probe_table_entries",
                              "Flows the flow table held at the last harvest (at most its slots)")),
      table_full_packets(add_counter(r, "hsns_flow_probe_table_full_packets_total",
                                     "Packets whose flow found no table slot (table full, or the slot being "
                                     "claimed on another CPU): recorded through the overflow ring buffer")),
      ringbuf_dropped_packets(add_counter(r, "hsns_flow_probe_ringbuf_dropped_packets_total",
                                          "Packets lost to the flow records: table and overflow ring buffer "
                                          "both full")),
      packets_family_(prometheus::BuildCounter()
                          .Name("hsns_flow_probe_packets_total")
                          .Help("Packets counted by the flow probe program, by counter (bpf/roce_flow.h: "
                                "packets = all, roce, non_roce, malformed cases, table_full, erspan, ...), "
                                "cumulative since the pinned maps were created")
                          .Register(r)) {}

void FlowProbeMetrics::set_probe_counters(const std::vector<std::string>& names,
                                          const std::vector<std::uint64_t>& counters) {
  const std::lock_guard lock(packets_mutex_);
  if (packets_.size() < counters.size()) packets_.resize(counters.size(), {nullptr, 0});
  for (std::size_t i = 0; i < counters.size() && i < names.size(); ++i) {
    auto& [metric, seen] = packets_[i];
    if (metric == nullptr) metric = &packets_family_.Add({{"counter", names[i]}});
    const std::uint64_t now = counters[i];
    // Maps purged and recreated: the kernel counter restarted from zero, so all of `now` is new.
    const std::uint64_t grew = now >= seen ? now - seen : now;
    if (grew > 0) {
      metric->Increment(static_cast<double>(grew));
      if (i == ROCE_CNT_TABLE_FULL) table_full_packets.Increment(static_cast<double>(grew));
      if (i == ROCE_CNT_RINGBUF_DROP) ringbuf_dropped_packets.Increment(static_cast<double>(grew));
    }
    seen = now;
  }
}

namespace {

std::size_t records_per_report_default() {
  const char* v = std::getenv("HSNS_TEST_FLOW_RECORDS_PER_REPORT");
  if (v == nullptr) return kFlowRecordsPerReport;
  char* end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  return end != v && *end == '\0' && n > 0 ? n : kFlowRecordsPerReport;
}

// A harvested record as the report's row: its key's address bytes as they are (no text), no host.
void fill_row(const FlowRecord& r, report::FlowRow& row) {
  const auto& k = r.key;
  const auto& s = r.stats;
  row.ifindex = k.ifindex;
  row.set_ifname(r.ifname);
  row.direction = static_cast<proto::FlowDirection>(k.direction);
  row.family = k.family;
  static_assert(sizeof k.src == sizeof row.src && sizeof k.dst == sizeof row.dst);
  std::memcpy(row.src.data(), k.src, sizeof k.src);
  std::memcpy(row.dst.data(), k.dst, sizeof k.dst);
  row.sport = k.sport;
  row.dest_qp = k.dest_qp;
  row.packets = s.packets;
  row.bytes = s.bytes;
  row.first_ns = r.first_unix_ns;
  row.last_ns = r.last_unix_ns;
  std::copy(std::begin(s.op), std::end(s.op), row.op.begin());
  row.ect = s.ect;
  row.ce = s.ce;
  row.cnp = s.cnp;
  std::copy(std::begin(s.nak), std::end(s.nak), row.nak.begin());
  row.psn_regressions = s.psn_regressions;
  if (s.has_psn) {
    row.psn = proto::FlowPsn{s.first_psn, s.last_psn, s.max_psn};
  } else {
    row.psn.reset();
  }
}

}  // namespace

FlowHarvester::FlowHarvester(const FlowProbeConfig& config, std::string host, prometheus::Registry& registry,
                             std::shared_ptr<report::SharedSpool> spool, std::size_t records_per_report)
    : wanted_(config),
      host_(std::move(host)),
      metrics_(registry),
      spool_(std::move(spool)),
      records_per_report_(
          std::clamp<std::size_t>(records_per_report > 0 ? records_per_report : records_per_report_default(),
                                  1, proto::kMaxFlowBatchRecords)) {
  for (int i = 0; i < ROCE_CNT_MAX; ++i) counter_names_.emplace_back(counter_name(i));
}

tl::expected<void, std::string> FlowHarvester::start() {
  apply(wanted_);
  settled_ = true;
  return {};
}

Component::Clock::time_point FlowHarvester::tick(Clock::time_point now) {
  if (now >= next_retry_) apply(wanted_);
  return next_retry_;
}

void FlowHarvester::reload(const DaemonConfig& config) {
  wanted_ = config.flow_probe;
  start_error_.clear();  // a failure to start is logged again after every SIGHUP
  apply(wanted_);        // restarts the probe only when its section changed (or it is not running)
}

void FlowHarvester::apply(const FlowProbeConfig& fp) {
  const bool was_running = running();
  auto r = change_to(fp);
  if (r) {
    next_retry_ = Clock::time_point::max();
    start_error_.clear();
    const std::string harvest = "harvest every " + std::to_string(fp.interval.count()) + " ms into " +
                                (spool_            ? "the report spool " + spool_->dir()
                                 : fp.sink.empty() ? std::string("no sink")
                                                   : fp.sink);
    switch (*r) {
      case Change::none:
        return;
      case Change::stopped:
        HSNS_LOG(info) << "flow probe stopped (no interfaces configured)";
        return;
      case Change::harvest_only:
        HSNS_LOG(info) << "flow probe stays attached; " << harvest;
        return;
      case Change::started: {
        std::string names;
        for (const auto& i : fp.interfaces) names += (names.empty() ? "" : ",") + i.name;
        HSNS_LOG(info) << "flow probe attached to " << names << ", maps pinned under " << fp.pin_dir << "; "
                       << harvest;
        return;
      }
    }
    return;
  }
  if (running()) {
    HSNS_LOG(error) << "flow probe: " << r.error() << " (keeping the running probe and its sink)";
    return;
  }
  if (r.error() != start_error_ || was_running)
    HSNS_LOG(error) << "flow probe: " << r.error() << " (not running; retried every "
                    << kFlowProbeRetry.count() << " s and on SIGHUP)";
  start_error_ = r.error();
  next_retry_ = Clock::now() + kFlowProbeRetry;
}

tl::expected<FlowHarvester::Change, std::string> FlowHarvester::change_to(const FlowProbeConfig& config) {
  if (config.interfaces.empty()) {
    const bool was_running = running();
    stop();
    return was_running ? Change::stopped : Change::none;
  }
  if (running() && same_flow_probe(config, config_)) return Change::none;
  if (running() && same_flow_probe_attachment(config, config_)) {
    auto sink = open_sink(config);
    if (!sink) return tl::unexpected(sink.error());
    stop_thread();
    drain();  // what was counted so far goes to the old sink
    sink_ = std::move(*sink);
    config_ = config;
    if (auto r = recover(); !r) HSNS_LOG(error) << "flow probe: recovery: " << r.error();
    start_thread();
    return Change::harvest_only;
  }
  stop();
  auto sink = open_sink(config);
  if (!sink) return failed(sink.error());
  auto probe = FlowProbe::start(config);
  if (!probe) return failed(probe.error());
  probe_ = std::move(*probe);
  sink_ = std::move(*sink);
  config_ = config;
  if (auto r = recover(); !r) {
    probe_->stop(false);
    probe_.reset();
    sink_.reset();
    return failed("recovery: " + r.error());
  }
  metrics_.up.Set(1);
  metrics_.interfaces.Set(static_cast<double>(config.interfaces.size()));
  metrics_.table_slots.Set(roce_table_slots(config.table_size));
  metrics_.table_entries.Set(0);
  start_thread();
  return Change::started;
}

void FlowHarvester::stop() {
  if (!probe_) return;
  stop_thread();
  drain();
  probe_->stop(false);
  probe_.reset();
  sink_.reset();
  metrics_.up.Set(0);
  metrics_.interfaces.Set(0);
  metrics_.table_slots.Set(0);
  metrics_.table_entries.Set(0);
}

tl::expected<std::unique_ptr<FlowSink>, std::string> FlowHarvester::open_sink(
    const FlowProbeConfig& config) const {
  if (spool_) {
    // The flow batches go to the report spool; the JSON-lines sink is not written.
    if (auto r = spool_->open(); !r) return tl::unexpected(r.error().message());
    return std::unique_ptr<FlowSink>();
  }
  if (config.sink.empty()) return std::unique_ptr<FlowSink>();
  auto s = FlowSink::open(config.sink, host_);
  if (!s) return tl::unexpected(s.error());
  return std::make_unique<FlowSink>(std::move(*s));
}

tl::unexpected<std::string> FlowHarvester::failed(std::string error) {
  metrics_.start_failures.Increment();
  metrics_.up.Set(0);
  metrics_.interfaces.Set(0);
  return tl::unexpected(std::move(error));
}

void FlowHarvester::start_thread() {
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = false;
  }
  thread_ = std::thread([this] {
    // Named for top -H, perf and the benchmark's per-thread CPU (at most 15 characters).
    pthread_setname_np(pthread_self(), "hsnsd-harvest");
    loop();
  });
}

void FlowHarvester::stop_thread() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void FlowHarvester::loop() {
  const auto interval = config_.interval;  // config_ changes only while no thread runs
  auto next = Clock::now() + interval;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_until(lock, next, [&] { return stop_requested_; })) {
    lock.unlock();
    harvest_once();
    lock.lock();
    next += interval;
    // Fell behind (a harvest or a write slower than the interval): no burst of catch-up harvests.
    if (const auto now = Clock::now(); next < now) next = now + interval;
  }
}

void FlowHarvester::log_limited(const std::string& msg) {
  const auto now = Clock::now();
  if (msg == last_error_ && now - last_error_at_ < std::chrono::minutes(1)) return;
  last_error_ = msg;
  last_error_at_ = now;
  HSNS_LOG(error) << msg;
}

void FlowHarvester::drain() {
  for (int i = 0; i < kHarvestsToCatchUp; ++i)
    if (harvest_once()) return;
}

// One two-phase harvest: the batch is written to the sink (write + fdatasync) and only then committed.
bool FlowHarvester::harvest_once() {
  const auto t0 = Clock::now();
  auto batch = probe_->harvest();
  if (!batch) {
    metrics_.harvest_errors.Increment();
    log_limited("flow probe: harvest: " + batch.error());
    return false;
  }
  const auto& records = batch->records;
  // The batch is the table's flows plus those only the ring buffer held (distinct keys): capped at slots.
  const auto slots = static_cast<std::size_t>(roce_table_slots(config_.table_size));
  metrics_.table_entries.Set(static_cast<double>(std::min(records.size(), slots)));
  const auto counters = probe_->counters();
  metrics_.set_probe_counters(counter_names_, std::vector<std::uint64_t>(counters.begin(), counters.end()));
  {
    if (auto w = write_batch(*batch, counters); !w) {
      metrics_.sink_errors.Increment();
      metrics_.records_unwritten.Increment(static_cast<double>(records.size()));
      log_limited("flow probe: " + w.error() + " (" + std::to_string(records.size()) +
                  " record(s) of epoch " + std::to_string(batch->epoch) +
                  " kept in the kernel, written again at the next harvest)");
      return false;
    }
  }
  if (auto c = probe_->commit(*batch); !c) {
    metrics_.harvest_errors.Increment();
    log_limited("flow probe: commit: " + c.error());
    return false;
  }
  metrics_.harvests.Increment();
  metrics_.records.Increment(static_cast<double>(records.size()));
  metrics_.last_harvest_records.Set(static_cast<double>(records.size()));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  metrics_.last_harvest_seconds.Set(seconds);
  metrics_.harvest_duration.Observe(seconds);
  metrics_.harvest_records.Observe(static_cast<double>(records.size()));
  metrics_.last_harvest_timestamp.Set(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  return batch->caught_up;
}

tl::expected<void, std::string> FlowHarvester::write_batch(
    const FlowBatch& batch, const std::array<std::uint64_t, ROCE_CNT_MAX>& counters) {
  if (spool_) {
    if (batch.records.empty()) return {};
    const auto ts_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    const std::size_t n = batch.records.size();
    const std::size_t per = records_per_report_;
    // One report (the steady case): encoded once into report_bytes_, reused harvest after harvest. Several:
    // each is measured and then encoded again in pieces, so that a large harvest's encoded form is never
    // whole in memory beside its records (the burst's peak).
    const std::size_t count = (n + per - 1) / per;
    report::FlowReportBytes* keep = count == 1 ? &report_bytes_ : nullptr;
    if (count > 1) report_bytes_.release();  // not held beside a large harvest's records
    std::vector<report::FlowReportEncoder> encoders;
    encoders.reserve(count);
    for (std::size_t from = 0; from < n; from += per) {
      encoders.emplace_back(
          ts_ms, batch.epoch, std::min(per, n - from),
          [&batch, from](std::size_t i, report::FlowRow& row) { fill_row(batch.records[from + i], row); },
          keep);
    }
    report::SpoolParts parts;
    parts.count = encoders.size();
    parts.size = [&](std::uint64_t seq, std::size_t part) { return encoders[part].size(seq); };
    parts.write = [&](std::uint64_t seq, std::size_t part, report::SpoolSink& sink) {
      return encoders[part].write(seq, [&sink](std::string_view bytes) { return sink.write(bytes); });
    };
    auto seq = spool_->append_parts(report::SpoolKind::flow_batch, batch.epoch, parts);
    if (!seq) return tl::unexpected("report spool " + spool_->dir() + ": " + seq.error().message());
    return {};
  }
  if (sink_) return sink_->write(batch, counters);
  return {};
}

// Settles a batch a killed process left pending, against the sink now in use (see FlowProbe::recover).
tl::expected<void, std::string> FlowHarvester::recover() {
  if (spool_) {
    const auto last = spool_->last_flow_epoch();
    // Never recover(nullopt) here: that would settle a pending batch the spool does not hold.
    if (!last) return tl::unexpected("the report spool " + spool_->dir() + " is not open");
    return probe_->recover(*last);
  }
  if (sink_ && sink_->truncated_bytes() > 0)
    HSNS_LOG(notice) << "flow probe: " << config_.sink << ": removed a batch cut short by a crash ("
                     << sink_->truncated_bytes() << " bytes after epoch " << sink_->last_epoch() << ")";
  return probe_->recover(sink_ ? std::optional<std::uint64_t>(sink_->last_epoch()) : std::nullopt);
}

}  // namespace hsns::daemon
