// The report uploader of hsnsd ("report"), the last component: every report interval it closes one
// telemetry report batch (hsns/proto/report.h) from the other components' last snapshots, appends it to
// the durable report spool, and a thread of its own uploads the spool's oldest unacknowledged records to
// the aggregator (POST /api/v1/agents/{host}/reports, CBOR) until each is acknowledged.
//
// Contract:
// - Sections: ports (oper state and speed of every NPU netdev, from sysfs) and the QP, optics and LLDP
//   documents go into a report when they changed since the last report that carried them (their ts_ms
//   aside) or kSectionRefresh passed; counters whenever the counters component took a new reading. A
//   report with no section due is not written (nothing changed: no record, no request). A report that
//   the wire contract's reader would refuse is not spooled: logged (once per message) and counted in
//   hsns_report_build_errors_total.
// - Spool: the SharedSpool given at construction, opened by start() (or by the flow harvester before it,
//   which appends its harvests to the same spool as flow batches). A spool that cannot be opened (another
//   hsnsd holds its lock, no permission) is logged and tried again every tick; start() succeeds: the
//   aggregator and the reporting are not what hsnsd needs to manage its ports.
// - Upload, on a thread of its own so that the main loop never waits for the aggregator (a backlog after
//   an outage is many requests, and a slow aggregator holds each one up to aggregator.timeout_ms; the main
//   loop must keep sending WATCHDOG=1 and running its passes). The thread takes up to report.upload_bytes
//   of payload from the spool (at least one record) and POSTs each record as one request, in seq order;
//   each record is streamed from its segment file (SpoolPayloadStream as the request's body source: no
//   copy of the batch in memory) and checked while it is read, in the same pass: its header at the first
//   piece, its checksum before the last piece goes out. A record that fails (the segment changed on disk,
//   its bytes cannot be read) is cut short, so the aggregator never receives it whole and stores nothing of
//   it; it can never be sent right: logged at error level, dropped (acknowledged) and counted in
//   hsns_report_batches_corrupt_total (not as a send failure). The record's payload already carries its seq,
//   so a record sent twice (the answer lost, hsnsd killed before the ack) is deduplicated by the aggregator
//   on (host, seq). On the acknowledgement (200 with acked_seq equal to the record's seq) the record is
//   acknowledged in the spool (deleted with its segment). Failures, by the status the aggregator answered:
//     400, 413, 415, 422   the aggregator says the batch itself is bad: logged at error level with its
//                          seq, the record acknowledged (dropped) and counted in
//                          hsns_report_batches_rejected_total; sending goes on with the next one.
//     401, 403             the token is refused (not this host's, expired): logged at error level each
//                          time, retried no sooner than kUnauthorizedRetry; nothing is dropped.
//     anything else        (no answer, timeout, 404 host not registered yet, 408, 429, 5xx, a 200
//                          without acked_seq) retried with exponential backoff and jitter (backoff.h,
//                          backoff.initial_ms .. backoff.max_ms); reset by the next success.
//   The thread wakes when a report or a flow batch was appended, or when its backoff ends.
// - reload(): a new interval, upload size, aggregator URL, token or timeout takes effect (the thread is
//   restarted with a new client); the spool directory and its bound are fixed until hsnsd restarts
//   (logged when they changed). trigger(): a report at the next tick and an upload attempt now.
// - stop() joins the upload thread (at most one request timeout); the spool keeps what is not
//   acknowledged for the next start.
// - Metrics: hsns_report_spool_bytes (segment files on disk), hsns_report_spool_records (unacknowledged
//   records), hsns_report_spool_drops_total (records the spool's byte bound dropped),
//   hsns_report_batches_sent_total (acknowledged), hsns_report_batches_rejected_total,
//   hsns_report_batches_corrupt_total,
//   hsns_report_send_failures_total{reason=transport|timeout|unauthorized|rejected|unregistered|
//   throttled|server|malformed|spool}, hsns_report_last_success_timestamp_seconds,
//   hsns_report_upload_duration_seconds (histogram of each POST), hsns_report_build_errors_total,
//   hsns_report_reports_total (telemetry reports appended).
// - Threads: the Component methods on the main thread; the upload thread uses only the spool (thread-safe),
//   its own AgentClient, its backoff and the metrics (thread-safe).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent_client.h"
#include "component.h"
#include "config.h"
#include "hsns/proto/report.h"
#include "shared_spool.h"

namespace hsns::daemon::report {

inline constexpr auto kSectionRefresh = std::chrono::seconds(60);
inline constexpr auto kUnauthorizedRetry = std::chrono::seconds(60);

// Where the report's sections come from: the other components' last snapshots (main.cpp), or a test's.
// An unset function, or one answering nullopt or an empty list, contributes no section.
struct ReportSources {
  std::function<std::optional<proto::CountersSnapshot>()> counters;
  std::function<std::optional<proto::QpInventory>()> qp;
  std::function<std::optional<proto::OpticsReport>()> optics;
  std::function<std::optional<proto::LldpNeighbors>()> lldp;
  std::function<std::vector<proto::PortOperState>()> ports;
};

// The spool's options for this configuration (directory and byte bound).
SpoolOptions spool_options(const DaemonConfig& config);

// Oper state and speed of each netdev from <sysfs_root>/class/net/<netdev>/{operstate,speed}: a netdev
// that is missing reads "notpresent"; an unreadable or negative speed is absent.
std::vector<proto::PortOperState> read_port_states(const std::string& sysfs_root,
                                                   const std::vector<std::string>& netdevs);

// How the uploader treats an aggregator's failure (see the contract above).
enum class SendVerdict { drop, unauthorized, retry };
SendVerdict classify(const AgentError& error);
// The metric label of a failure.
const char* failure_reason(const AgentError& error);

class ReporterComponent final : public Component {
 public:
  ReporterComponent(const DaemonConfig& config, std::string host, std::shared_ptr<SharedSpool> spool,
                    ReportSources sources, prometheus::Registry& registry);
  ~ReporterComponent() override;
  ReporterComponent(const ReporterComponent&) = delete;
  ReporterComponent& operator=(const ReporterComponent&) = delete;

  std::string_view name() const override { return "report"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override;
  void trigger() override;
  void stop() override;
  bool ready() const override { return started_; }

  // Closes and spools one report now (what tick() does when the interval is due); false when no
  // section was due or the append failed. For tests and the benchmark.
  bool report_now();

 private:
  // A section's last sent form with its timestamps zeroed, and when it was sent.
  template <typename T>
  struct Sent {
    std::optional<T> value;
    Clock::time_point at{};
  };

  bool open_spool();
  // The due sections as the report's canonical document (proto::to_json), checked against the wire contract
  // (built once: the same DOM is checked and encoded).
  std::optional<nlohmann::json> build(Clock::time_point now);
  void update_spool_metrics();
  void start_thread();
  void stop_thread();
  void wake_uploader();
  void upload_loop();
  // One round: sends what peek() gives; answers when to try again (now: more is waiting).
  Clock::time_point upload_round();
  void log_limited(const std::string& message);

  DaemonConfig config_;
  std::string host_;
  std::shared_ptr<SharedSpool> spool_;
  ReportSources sources_;

  prometheus::Gauge& spool_bytes_;
  prometheus::Gauge& spool_records_;
  prometheus::Counter& spool_drops_;
  prometheus::Counter& sent_;
  prometheus::Counter& rejected_;
  prometheus::Counter& corrupt_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Gauge& last_success_;
  prometheus::Histogram& upload_duration_;
  prometheus::Counter& build_errors_;
  prometheus::Counter& reports_;
  std::uint64_t drops_seen_ = 0;

  bool started_ = false;
  bool spool_error_logged_ = false;
  Clock::time_point next_report_{};
  std::int64_t counters_sent_ts_ = 0;
  Sent<proto::QpInventory> qp_sent_;
  Sent<proto::OpticsReport> optics_sent_;
  Sent<proto::LldpNeighbors> lldp_sent_;
  Sent<std::vector<proto::PortOperState>> ports_sent_;
  std::string last_build_error_;

  // Upload thread.
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;          // guarded by mutex_
  bool woken_ = false;                   // guarded by mutex_
  std::unique_ptr<AgentClient> client_;  // upload thread only while it runs
  std::mutex log_mutex_;                 // log_limited() is called from both threads
  std::string last_upload_error_;        // guarded by log_mutex_
  Clock::time_point last_upload_error_at_{};
};

}  // namespace hsns::daemon::report
