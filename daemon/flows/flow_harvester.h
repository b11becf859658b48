// The RoCEv2 flow probe inside hsnsd, as an hsnsd component (daemon/core/component.h), and its metrics.
//
// Contract:
// - start() (and reload()) make the probe match the `flow_probe:` section (no interfaces = off): load and
//   attach the probe on the calling (main) thread, open the sink (which cuts a batch a crash left
//   half-written) and settle a batch a killed hsnsd left pending (FlowProbe::recover). A thread of its own
//   then harvests every interval into the sink and the metrics -- harvest, write + fdatasync, commit: kill
//   -9 at any moment loses and repeats nothing -- so that a long harvest (about 0.3 s for 100,000 flows,
//   plus the sink's fdatasync) never delays the main loop's WATCHDOG=1 or its passes.
// - A start failure (a missing interface, the verifier, a pinned table of another size, a sink that cannot
//   be opened) is logged and counted (hsns_flow_probe_start_failures_total, hsns_flow_probe_up 0) and never
//   stops hsnsd: start() succeeds, and tick() retries every kFlowProbeRetry; a reload retries too. The same
//   failure is logged once until a reload. ready() once the first attempt settled (attached, off, or
//   failed and scheduled for retry): the ports are hsnsd's first job, the probe never holds READY=1 back.
// - reload(): unchanged section: nothing happens. Only the interval or the sink changed: the probe stays
//   attached (no window without a filter), what was counted so far goes to the old sink, and the harvest
//   thread restarts with the new one; a new sink that cannot be opened keeps the running probe and its
//   old sink. Otherwise the probe is stopped and started with the new section.
// - stop() joins the thread, harvests one last time and detaches; the pinned maps stay, so a restarted
//   hsnsd harvests what was counted meanwhile.
// - Harvest failures and sink errors repeat every interval while their cause lasts: logged when the
//   message changes and otherwise once a minute (the metrics count every one). A batch whose write failed
//   is not committed: the kernel keeps it and the next harvest returns it again.
// - Report spool (reporting on: hsnsd's `report:` section; the spool is given at construction): each
//   harvest goes into the report spool instead of the JSON-lines sink (flow_probe.sink is then not
//   written): one record of kind flow_batch tagged with the batch's epoch, whose payload is the report
//   {seq, ts_ms, flows: [{epoch, records}]} (daemon/report/report_encoding.h) with the record's spool seq,
//   encoded once into a buffer the harvester keeps from harvest to harvest (a harvest split into several
//   reports is measured and encoded again piece by piece instead, and the buffer given back, so that its
//   encoded form is never whole in memory beside its records);
//   the append returns after fdatasync, and only then is the batch committed, so kill -9 at any moment
//   loses and repeats nothing here either. A batch without records is committed without a record (nothing
//   to lose; a pending empty batch is harvested empty again). Recovery uses the spool's last_flow_epoch().
//   The harvest thread appends through SharedSpool, whose mutex makes it one owner with the reporter; the
//   spool is opened by start() when the reporter has not opened it yet (a failure is a start failure,
//   retried like one). A batch the spool refuses (full beyond its bound is not a refusal: the spool drops
//   its oldest records) is handled like a failed sink write.
// - Threads: every public method is called from the main thread. FlowProbe and FlowSink are used by one
//   thread at a time: the harvest thread's start and join order the hand-overs. Metrics are thread-safe.
// - Metrics: hsns_flow_probe_up, _interfaces, _start_failures_total, _harvests_total,
//   _harvest_errors_total, _records_total, _sink_errors_total, _records_unwritten_total,
//   _last_harvest_duration_seconds, _last_harvest_records, _last_harvest_timestamp_seconds, and
//   hsns_flow_probe_packets_total{counter=...}: the probe's cumulative per-CPU-summed counters (which
//   live in pinned maps and so outlast hsnsd), advanced by what grew since the previous harvest (a counter
//   that went down, because the maps were purged and recreated, restarts from its new value).
// - Probe health: _harvest_duration_seconds and _harvest_records (histograms of the successful harvests:
//   harvest + write + commit, and the records of each), _table_slots (the capacity of one flow table,
//   roce_table_slots(table_size); 0 while not running), _table_entries (flows the table held at the last
//   harvest: the batch's record count, which also holds flows that only reached the overflow ring buffer,
//   so it is capped at the slots; 0 while not running), and the program's two loss points under names of
//   their own, advanced together with their packets_total series: _table_full_packets_total (no slot: table
//   full, or the flow's slot being claimed on another CPU; the packet went to the overflow ring buffer, still
//   counted exactly) and _ringbuf_dropped_packets_total (ring buffer full too: the packet is lost to the flow
//   records).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "component.h"
#include "flow_probe.h"
#include "flow_probe_config.h"
#include "flow_sink.h"
#include "report_encoding.h"
#include "shared_spool.h"

namespace hsns::daemon {

inline constexpr auto kFlowProbeRetry = std::chrono::seconds(60);
inline constexpr std::size_t kFlowRecordsPerReport = 16384;

class FlowProbeMetrics {
 public:
  explicit FlowProbeMetrics(prometheus::Registry& registry);

  prometheus::Gauge& up;          // 1 while the probe is attached
  prometheus::Gauge& interfaces;  // interfaces attached
  prometheus::Counter& start_failures;
  prometheus::Counter& harvests;
  prometheus::Counter& harvest_errors;
  prometheus::Counter& records;
  prometheus::Counter& sink_errors;
  prometheus::Counter& records_unwritten;
  prometheus::Gauge& last_harvest_seconds;
  prometheus::Gauge& last_harvest_records;
  prometheus::Gauge& last_harvest_timestamp;
  prometheus::Histogram& harvest_duration;
  prometheus::Histogram& harvest_records;
  prometheus::Gauge& table_slots;
  prometheus::Gauge& table_entries;
  prometheus::Counter& table_full_packets;
  prometheus::Counter& ringbuf_dropped_packets;
  // counters[i] is the probe's cumulative value of counter i, named names[i].
  void set_probe_counters(const std::vector<std::string>& names, const std::vector<std::uint64_t>& counters);

 private:
  prometheus::Family<prometheus::Counter>& packets_family_;
  std::mutex packets_mutex_;
  std::vector<std::pair<prometheus::Counter*, std::uint64_t>> packets_;  // by counter index
};

class FlowHarvester final : public Component {
 public:
  // spool: the report spool when reporting is on (flow batches go there), else nullptr (the JSON sink).
  // records_per_report: the split size of a harvest in the spool; 0: kFlowRecordsPerReport, or the
  // test-only HSNS_TEST_FLOW_RECORDS_PER_REPORT when it is set (the loss-free test splits every harvest).
  FlowHarvester(const FlowProbeConfig& config, std::string host, prometheus::Registry& registry,
                std::shared_ptr<report::SharedSpool> spool = nullptr, std::size_t records_per_report = 0);
  ~FlowHarvester() override { stop(); }
  FlowHarvester(const FlowHarvester&) = delete;
  FlowHarvester& operator=(const FlowHarvester&) = delete;

  std::string_view name() const override { return "flows"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override;
  void stop() override;
  bool ready() const override { return settled_; }

  bool running() const { return probe_ != nullptr; }

 private:
  enum class Change { none, started, harvest_only, stopped };
  // Makes the probe match `config` and logs what changed; a failure schedules a retry.
  void apply(const FlowProbeConfig& config);
  tl::expected<Change, std::string> change_to(const FlowProbeConfig& config);
  tl::expected<std::unique_ptr<FlowSink>, std::string> open_sink(const FlowProbeConfig& config) const;
  tl::unexpected<std::string> failed(std::string error);
  void start_thread();
  void stop_thread();
  void loop();
  void log_limited(const std::string& msg);
  // One two-phase harvest; true when its batch was caught up (FlowBatch::caught_up), written and committed.
  bool harvest_once();
  // Writes a harvested batch durably: into the report spool when there is one, else into the sink.
  tl::expected<void, std::string> write_batch(const FlowBatch& batch,
                                              const std::array<std::uint64_t, ROCE_CNT_MAX>& counters);
  // The last harvest before the probe stops or changes its sink: harvests until a batch is caught up, so
  // nothing counted before the call stays in the kernel (a pending batch or a table a killed process left
  // behind take one harvest each; at most three harvests).
  void drain();
  tl::expected<void, std::string> recover();

  FlowProbeConfig wanted_;  // the configured section (the running probe's may differ after a failure)
  std::string host_;
  FlowProbeMetrics metrics_;
  std::vector<std::string> counter_names_;
  FlowProbeConfig config_;  // the running probe's section
  std::unique_ptr<FlowProbe> probe_;
  std::unique_ptr<FlowSink> sink_;
  std::shared_ptr<report::SharedSpool> spool_;
  std::size_t records_per_report_;
  report::FlowReportBytes report_bytes_;  // a one-report harvest's encoded records (harvest thread only)
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mutex_
  std::string last_error_;       // harvest thread only
  Clock::time_point last_error_at_;
  Clock::time_point next_retry_ = Clock::time_point::max();
  std::string start_error_;  // last start failure logged (logged again only when it changes)
  bool settled_ = false;
};

}  // namespace hsns::daemon
