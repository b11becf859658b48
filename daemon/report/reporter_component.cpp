#include "reporter_component.h"

#include <pthread.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "backoff.h"
#include "hsns/log.h"
#include "hsns/proto/codec.h"
#include "inventory.h"
#include "metrics.h"
#include "report_encoding.h"

namespace hsns::daemon::report {
namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A section's content without its timestamp, for "did it change".
template <typename T>
T without_ts(T value) {
  value.ts_ms = 0;
  return value;
}

// Whether a section is due: it changed since the last report that carried it, or kSectionRefresh passed.
template <typename Sent, typename T>
bool due(const Sent& sent, const T& now_value, Component::Clock::time_point now) {
  return !sent.value || !(*sent.value == now_value) || now - sent.at >= kSectionRefresh;
}

// A spool record as a request body: read from its segment file while it is sent, and checked on the way
// (SpoolPayloadStream), so that a record is read once. A record that fails its check is cut short before
// its last bytes: the aggregator never gets it whole, the request fails, and corrupt() says why.
class PayloadBody final : public HttpBodySource {
 public:
  explicit PayloadBody(const SpoolPayload& payload) : stream_(payload) {}
  std::uint64_t size() const override { return stream_.size(); }
  tl::expected<std::size_t, std::string> read(std::uint64_t offset, char* buf, std::size_t n) const override {
    auto r = stream_.read(offset, buf, n);
    if (!r) return tl::unexpected(r.error().message());
    return *r;
  }
  bool corrupt() const { return stream_.corrupt(); }

 private:
  // The HTTP client reads through a const source; the stream moves on with every read (offset, checksum).
  mutable SpoolPayloadStream stream_;
};

}  // namespace

SpoolOptions spool_options(const DaemonConfig& config) {
  SpoolOptions o;
  o.dir = report_spool_dir(config);
  o.max_bytes = config.report.max_bytes;
  // Segments small enough that the bound drops little at a time, large enough for one big flow batch.
  o.segment_bytes =
      std::min<std::uint64_t>(8ULL << 20, std::max<std::uint64_t>(config.report.max_bytes / 8, 1));
  o.max_record_bytes = std::min<std::uint64_t>(64ULL << 20, config.report.max_bytes / 2);
  return o;
}

std::vector<proto::PortOperState> read_port_states(const std::string& sysfs_root,
                                                   const std::vector<std::string>& netdevs) {
  std::vector<proto::PortOperState> out;
  for (const auto& netdev : netdevs) {
    const std::filesystem::path dir = std::filesystem::path(sysfs_root) / "class/net" / netdev;
    proto::PortOperState p;
    p.name = netdev;
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
      p.oper_state = "notpresent";
    } else if (auto state = read_sysfs_line(dir / "operstate")) {
      const bool known = std::any_of(proto::kPortOperStates.begin(), proto::kPortOperStates.end(),
                                     [&](const char* s) { return *state == s; });
      p.oper_state = known ? *state : "unknown";
    }
    if (auto speed = read_sysfs_line(dir / "speed")) {
      try {
        const long v = std::stol(*speed);
        if (v > 0 && v <= static_cast<long>(proto::kMaxPortSpeedMbps))
          p.speed_mbps = static_cast<std::uint32_t>(v);
      } catch (const std::exception&) {
        // EINVAL from a link that is down reads as no line; anything unparsable is "no speed" too.
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

SendVerdict classify(const AgentError& error) {
  if (error.kind != AgentError::Kind::http_status) return SendVerdict::retry;
  switch (error.status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return SendVerdict::drop;
    case 401:
    case 403:
      return SendVerdict::unauthorized;
    default:
      return SendVerdict::retry;
  }
}

const char* failure_reason(const AgentError& error) {
  switch (error.kind) {
    case AgentError::Kind::transport:
      return "transport";
    case AgentError::Kind::timeout:
      return "timeout";
    case AgentError::Kind::malformed:
      return "malformed";
    case AgentError::Kind::http_status:
      break;
  }
  if (classify(error) == SendVerdict::drop) return "rejected";
  if (classify(error) == SendVerdict::unauthorized) return "unauthorized";
  if (error.status == 404) return "unregistered";
  if (error.status == 408 || error.status == 429) return "throttled";
  return "server";
}

ReporterComponent::ReporterComponent(const DaemonConfig& config, std::string host,
                                     std::shared_ptr<SharedSpool> spool, ReportSources sources,
                                     prometheus::Registry& r)
    : config_(config),
      host_(std::move(host)),
      spool_(std::move(spool)),
      sources_(std::move(sources)),
      spool_bytes_(
          add_gauge(r, "hsns_report_spool_bytes", "Bytes of the report spool's segment files on disk")),
      spool_records_(add_gauge(r, "hsns_report_spool_records",
                               "Records in the report spool not yet acknowledged by the aggregator")),
      spool_drops_(add_counter(r, "hsns_report_spool_drops_total",
                               "Unacknowledged records the report spool's byte bound dropped")),
      sent_(add_counter(r, "hsns_report_batches_sent_total", "Report batches the aggregator acknowledged")),
      rejected_(add_counter(r, "hsns_report_batches_rejected_total",
                            "Report batches the aggregator refused as bad (400, 413, 415, 422), dropped")),
      corrupt_(
          add_counter(r, "hsns_report_batches_corrupt_total",
                      "Spooled report batches that failed their checksum while being uploaded, dropped")),
      failures_(prometheus::BuildCounter()
                    .Name("hsns_report_send_failures_total")
                    .Help("Failed report uploads, by reason")
                    .Register(r)),
      last_success_(add_gauge(r, "hsns_report_last_success_timestamp_seconds",
                              "Unix time of the last report batch the aggregator acknowledged (0: none)")),
      upload_duration_(add_histogram(r, "hsns_report_upload_duration_seconds",
                                     "Duration of each report upload request",
                                     {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30})),
      build_errors_(add_counter(r, "hsns_report_build_errors_total",
                                "Telemetry reports not spooled because the wire contract refused them")),
      reports_(
          add_counter(r, "hsns_report_reports_total", "Telemetry reports appended to the report spool")) {
  for (const char* reason : {"transport", "timeout", "unauthorized", "rejected", "unregistered", "throttled",
                             "server", "malformed", "spool"})
    failures_.Add({{"reason", reason}});
}

ReporterComponent::~ReporterComponent() {
  stop();
}

bool ReporterComponent::open_spool() {
  if (auto r = spool_->open(); !r) {
    if (!spool_error_logged_)
      HSNS_LOG(error) << "report: cannot open the report spool " << spool_->dir() << ": "
                      << r.error().message() << " (tried again every tick)";
    spool_error_logged_ = true;
    return false;
  }
  if (spool_error_logged_) HSNS_LOG(notice) << "report: report spool " << spool_->dir() << " open";
  spool_error_logged_ = false;
  return true;
}

tl::expected<void, std::string> ReporterComponent::start() {
  started_ = true;
  open_spool();
  spool_->on_append([this] { wake_uploader(); });
  update_spool_metrics();
  next_report_ = Clock::now() + config_.report.interval;
  start_thread();
  HSNS_LOG(info) << "report: every " << config_.report.interval.count() << " ms to " << config_.aggregator_url
                 << ", spool " << spool_->dir() << " (at most " << config_.report.max_bytes << " bytes)";
  return {};
}

Component::Clock::time_point ReporterComponent::tick(Clock::time_point now) {
  if (!started_) return Clock::time_point::max();
  if (!spool_->is_open() && open_spool()) wake_uploader();
  if (now >= next_report_) {
    report_now();
    next_report_ += config_.report.interval;
    if (next_report_ <= now) next_report_ = now + config_.report.interval;  // fell behind: no burst
  }
  update_spool_metrics();
  return next_report_;
}

void ReporterComponent::reload(const DaemonConfig& config) {
  if (report_spool_dir(config) != report_spool_dir(config_) ||
      config.report.max_bytes != config_.report.max_bytes)
    HSNS_LOG(warning) << "report: a new spool directory or bound takes effect when hsnsd restarts";
  const std::string dir = report_spool_dir(config_);
  const auto max_bytes = config_.report.max_bytes;
  stop_thread();
  config_ = config;
  config_.report.spool_dir = dir;
  config_.report.max_bytes = max_bytes;
  next_report_ = Clock::now() + config_.report.interval;
  if (started_) start_thread();
}

void ReporterComponent::trigger() {
  next_report_ = Clock::now();
  wake_uploader();
}

void ReporterComponent::stop() {
  stop_thread();
  if (spool_) spool_->on_append({});
}

bool ReporterComponent::report_now() {
  auto document = build(Clock::now());
  if (!document) return false;
  auto seq = spool_->append(SpoolKind::telemetry_report, 0,
                            [&document](std::uint64_t s) { return encode_telemetry_report(*document, s); });
  if (!seq) {
    failures_.Add({{"reason", "spool"}}).Increment();
    log_limited("report: cannot spool a telemetry report: " + seq.error().message());
    return false;
  }
  reports_.Increment();
  return true;
}

std::optional<nlohmann::json> ReporterComponent::build(Clock::time_point now) {
  proto::Report r;
  r.ts_ms = unix_ms();
  const auto take = [&](auto& sent, auto value, auto& slot) {
    auto bare = without_ts(value);
    if (!due(sent, bare, now)) return;
    slot = std::move(value);
    sent.value = std::move(bare);
    sent.at = now;
  };
  if (sources_.counters) {
    if (auto c = sources_.counters();
        c && c->ts_ms != 0 && c->ts_ms != counters_sent_ts_ && (!c->rdma.empty() || !c->netdevs.empty())) {
      counters_sent_ts_ = c->ts_ms;
      r.counters = std::move(*c);
    }
  }
  if (sources_.qp) {
    if (auto q = sources_.qp(); q && !q->qps.empty()) take(qp_sent_, std::move(*q), r.qp);
  }
  if (sources_.optics) {
    if (auto o = sources_.optics(); o && !o->modules.empty()) take(optics_sent_, std::move(*o), r.optics);
  }
  if (sources_.lldp) {
    if (auto l = sources_.lldp(); l && !l->neighbors.empty()) take(lldp_sent_, std::move(*l), r.lldp);
  }
  if (sources_.ports) {
    auto ports = sources_.ports();
    if (!ports.empty() && due(ports_sent_, ports, now)) {
      ports_sent_.value = ports;
      ports_sent_.at = now;
      r.ports = std::move(ports);
    }
  }
  if (!r.counters && !r.qp && !r.optics && !r.lldp && r.ports.empty()) return std::nullopt;
  // What the aggregator would refuse is never spooled (it would be dropped there, a request later).
  nlohmann::json document = proto::to_json(r);
  if (auto checked = proto::read_report(document); !checked) {
    build_errors_.Increment();
    const std::string message = checked.error().message();
    if (message != last_build_error_)
      HSNS_LOG(error) << "report: a telemetry report the wire contract refuses is not sent: " << message;
    last_build_error_ = message;
    return std::nullopt;
  }
  return document;
}

void ReporterComponent::update_spool_metrics() {
  const auto stats = spool_->stats();
  if (!stats) return;
  spool_bytes_.Set(static_cast<double>(stats->disk_bytes));
  spool_records_.Set(static_cast<double>(stats->records));
  if (stats->drops_total > drops_seen_)
    spool_drops_.Increment(static_cast<double>(stats->drops_total - drops_seen_));
  drops_seen_ = stats->drops_total;
}

void ReporterComponent::start_thread() {
  if (thread_.joinable()) return;
  auto client = AgentClient::make(config_, host_);
  if (!client) {
    HSNS_LOG(error) << "report: " << client.error() << " (reports stay in the spool until a reload fixes it)";
    return;
  }
  client_ = std::move(*client);
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = false;
    woken_ = true;  // whatever an earlier run left in the spool goes out at once
  }
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "hsnsd-upload");  // for top -H, perf and the benchmark
    upload_loop();
  });
}

void ReporterComponent::stop_thread() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ReporterComponent::wake_uploader() {
  {
    const std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void ReporterComponent::upload_loop() {
  Backoff backoff(config_.backoff_initial, config_.backoff_max, std::random_device{}());
  auto not_before = Clock::time_point::min();  // no request before this (backoff)
  std::unique_lock lock(mutex_);
  for (;;) {
    // Woken by an append or trigger(), or every report interval anyway (a spool opened late, a backlog).
    wake_.wait_until(lock, std::max(not_before, Clock::now() + config_.report.interval),
                     [this] { return stop_requested_ || woken_; });
    if (stop_requested_) return;
    if (Clock::now() < not_before) {
      wake_.wait_until(lock, not_before, [this] { return stop_requested_; });
      if (stop_requested_) return;
    }
    woken_ = false;
    lock.unlock();
    // Rounds back to back while records wait and the aggregator answers.
    for (;;) {
      auto peeked = spool_->peek_payloads(config_.report.upload_bytes);
      if (!peeked || peeked->empty()) break;
      bool failed = false;
      for (const auto& record : *peeked) {
        {
          const std::lock_guard stopping(mutex_);
          if (stop_requested_) return;
        }
        // A record that can never be sent right (its bytes changed on disk) is dropped: logged, counted,
        // acknowledged so that the rest goes on. False when even that fails (retried after a backoff).
        const auto drop_corrupt = [&](const std::string& why) {
          HSNS_LOG(error) << "report: batch seq " << record.seq << " (" << to_string(record.kind)
                          << ") cannot be sent: " << why << "; dropped";
          corrupt_.Increment();
          if (auto a = spool_->ack(record.seq); !a) {
            failures_.Add({{"reason", "spool"}}).Increment();
            log_limited("report: cannot drop seq " + std::to_string(record.seq) + ": " + a.error().message());
            failed = true;
            not_before = Clock::now() + backoff.next();
            return false;
          }
          return true;
        };
        // An empty payload gives the body nothing to read, so nothing would check its header on the way.
        if (record.payload.size() == 0) {
          if (auto valid = record.payload.verify(); !valid) {
            if (!drop_corrupt(valid.error().message())) break;
            continue;
          }
        }
        const auto sent_at = Clock::now();
        const PayloadBody body(record.payload);
        auto acked = client_->post_report(body);
        upload_duration_.Observe(std::chrono::duration<double>(Clock::now() - sent_at).count());
        if (!acked && body.corrupt()) {
          if (!drop_corrupt(acked.error().message)) break;
          continue;
        }
        if (acked && *acked == record.seq) {
          if (auto a = spool_->ack(record.seq); !a) {
            failures_.Add({{"reason", "spool"}}).Increment();
            log_limited("report: cannot acknowledge seq " + std::to_string(record.seq) +
                        " in the spool: " + a.error().message());
            failed = true;
            not_before = Clock::now() + backoff.next();
            break;
          }
          last_success_.Set(unix_seconds());
          sent_.Increment();
          backoff.reset();
          continue;
        }
        const AgentError error = acked ? AgentError{AgentError::Kind::malformed, 200,
                                                    "acknowledged seq " + std::to_string(*acked) +
                                                        " for seq " + std::to_string(record.seq)}
                                       : acked.error();
        failures_.Add({{"reason", failure_reason(error)}}).Increment();
        const SendVerdict verdict = classify(error);
        if (verdict == SendVerdict::drop) {
          HSNS_LOG(error) << "report: the aggregator refused batch seq " << record.seq << " ("
                          << to_string(record.kind) << ", " << record.payload.size()
                          << " bytes) as bad; dropped: " << describe(error);
          rejected_.Increment();
          if (auto a = spool_->ack(record.seq); !a)
            log_limited("report: cannot drop seq " + std::to_string(record.seq) + ": " + a.error().message());
          continue;
        }
        failed = true;
        if (verdict == SendVerdict::unauthorized) {
          HSNS_LOG(error) << "report: the aggregator refuses this host's token for reports ("
                          << describe(error) << "); nothing is dropped, retrying in "
                          << kUnauthorizedRetry.count() << " s";
          not_before = Clock::now() + std::max<Clock::duration>(kUnauthorizedRetry, backoff.next());
        } else {
          log_limited("report: upload of seq " + std::to_string(record.seq) + " failed: " + describe(error) +
                      " (retried with backoff)");
          not_before = Clock::now() + backoff.next();
        }
        break;
      }
      if (auto stats = spool_->stats()) {
        spool_bytes_.Set(static_cast<double>(stats->disk_bytes));
        spool_records_.Set(static_cast<double>(stats->records));
      }
      if (failed) break;
    }
    lock.lock();
  }
}

void ReporterComponent::log_limited(const std::string& message) {
  const std::lock_guard lock(log_mutex_);
  const auto now = Clock::now();
  if (message == last_upload_error_ && now - last_upload_error_at_ < std::chrono::minutes(1)) return;
  last_upload_error_ = message;
  last_upload_error_at_ = now;
  HSNS_LOG(warning) << message;
}

}  // namespace hsns::daemon::report
