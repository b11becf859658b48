#include "daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "../isolation/isolation.h"
#include "agent_client.h"
#include "backoff.h"
#include "flow_probe.h"
#include "flow_sink.h"
#include "hsns/version.h"
#include "inventory.h"
#include "metrics.h"
#include "netlink.h"
#include "qos.h"
#include "reconciler.h"
#include "state_store.h"

namespace hsns::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kStatusHeartbeat = std::chrono::seconds(60);
constexpr auto kFlowProbeRetry = std::chrono::seconds(60);

// One insertion per line, so lines of the main loop and the flow harvester thread never interleave.
void log(int level, const std::string& msg) {
  std::cerr << ("<" + std::to_string(level) + ">hsnsd: " + msg + "\n") << std::flush;
}

std::string rfc3339_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class SignalFd {
 public:
  SignalFd() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, s);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;
  int fd() const { return fd_; }
  std::optional<int> read() const {
    signalfd_siginfo info{};
    if (::read(fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return std::nullopt;
    return static_cast<int>(info.ssi_signo);
  }

 private:
  int fd_ = -1;
};

// The RoCEv2 flow probe inside hsnsd (daemon/flows). apply() loads and attaches the probe on the calling
// (main) thread, opens the sink (which cuts a batch a crash left half-written) and settles a batch a killed
// hsnsd left pending (FlowProbe::recover); a thread of its own then harvests every interval into the sink
// and the metrics -- harvest, write + fdatasync, commit: kill -9 at any moment loses and repeats nothing --
// so that a long harvest (about 0.3 s for 100,000 flows, plus the sink's fdatasync) never delays the main
// loop's WATCHDOG=1 or its passes. stop() joins that thread, harvests one last time and detaches (pinned
// maps stay, so a restarted hsnsd harvests what was counted meanwhile). FlowProbe and FlowSink are
// used by one thread at a time: the thread's start and join order the hand-overs. Every public method is
// called from the main thread.
class FlowHarvester {
 public:
  FlowHarvester(DaemonMetrics& metrics, std::string host) : metrics_(metrics), host_(std::move(host)) {
    for (int i = 0; i < ROCE_CNT_MAX; ++i) counter_names_.emplace_back(counter_name(i));
  }
  ~FlowHarvester() { stop(); }
  FlowHarvester(const FlowHarvester&) = delete;
  FlowHarvester& operator=(const FlowHarvester&) = delete;

  bool running() const { return probe_ != nullptr; }

  // Makes the probe match `config` (no interfaces = off). Unchanged: nothing happens. Only the interval or
  // the sink changed: the probe stays attached (no window without a filter) and only the harvest thread is
  // restarted with the new sink. Otherwise the probe is stopped and started with the new configuration.
  // Returns what changed. A failed start leaves nothing attached and is counted in
  // hsns_flow_probe_start_failures_total; a sink that cannot be opened on a sink-only change keeps the
  // running probe and its old sink.
  enum class Change { none, started, harvest_only, stopped };
  tl::expected<Change, std::string> apply(const FlowProbeConfig& config) {
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
      harvest_once();  // what was counted so far goes to the old sink
      sink_ = std::move(*sink);
      config_ = config;
      if (auto r = recover(); !r) log(3, "flow probe: recovery: " + r.error());
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
    metrics_.flow_probe_up.Set(1);
    metrics_.flow_probe_interfaces.Set(static_cast<double>(config.interfaces.size()));
    start_thread();
    return Change::started;
  }

  // Last harvest, then detach everything the probe attached; the pinned maps stay.
  void stop() {
    if (!probe_) return;
    stop_thread();
    harvest_once();
    probe_->stop(false);
    probe_.reset();
    sink_.reset();
    metrics_.flow_probe_up.Set(0);
    metrics_.flow_probe_interfaces.Set(0);
  }

 private:
  using Clock = std::chrono::steady_clock;

  tl::expected<std::unique_ptr<FlowSink>, std::string> open_sink(const FlowProbeConfig& config) const {
    if (config.sink.empty()) return std::unique_ptr<FlowSink>();
    auto s = FlowSink::open(config.sink, host_);
    if (!s) return tl::unexpected(s.error());
    return std::make_unique<FlowSink>(std::move(*s));
  }

  tl::unexpected<std::string> failed(std::string error) {
    metrics_.flow_probe_start_failures.Increment();
    metrics_.flow_probe_up.Set(0);
    metrics_.flow_probe_interfaces.Set(0);
    return tl::unexpected(std::move(error));
  }

  void start_thread() {
    {
      const std::lock_guard lock(mutex_);
      stop_requested_ = false;
    }
    thread_ = std::thread([this] { loop(); });
  }

  void stop_thread() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard lock(mutex_);
      stop_requested_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void loop() {
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

  // Harvest failures and sink errors repeat every interval while their cause lasts: logged when the
  // message changes and otherwise once a minute (the metrics count every one).
  void log_limited(int level, const std::string& msg) {
    const auto now = Clock::now();
    if (msg == last_error_ && now - last_error_at_ < std::chrono::minutes(1)) return;
    last_error_ = msg;
    last_error_at_ = now;
    log(level, msg);
  }

  // One two-phase harvest: the batch is written to the sink (write + fdatasync) and only then committed,
  // so a kill -9 at any moment loses and repeats nothing. A batch whose write failed is not committed: the
  // kernel keeps it and the next harvest returns it again (no new counts are harvested meanwhile).
  void harvest_once() {
    const auto t0 = Clock::now();
    auto batch = probe_->harvest();
    if (!batch) {
      metrics_.flow_probe_harvest_errors.Increment();
      log_limited(3, "flow probe: harvest: " + batch.error());
      return;
    }
    const auto& records = batch->records;
    const auto counters = probe_->counters();
    metrics_.set_probe_counters(counter_names_, std::vector<std::uint64_t>(counters.begin(), counters.end()));
    if (sink_) {
      if (auto w = sink_->write(*batch, counters); !w) {
        metrics_.flow_probe_sink_errors.Increment();
        metrics_.flow_probe_records_unwritten.Increment(static_cast<double>(records.size()));
        log_limited(3, "flow probe: " + w.error() + " (" + std::to_string(records.size()) +
                           " record(s) of epoch " + std::to_string(batch->epoch) +
                           " kept in the kernel, written again at the next harvest)");
        return;
      }
    }
    if (auto c = probe_->commit(*batch); !c) {
      metrics_.flow_probe_harvest_errors.Increment();
      log_limited(3, "flow probe: commit: " + c.error());
      return;
    }
    metrics_.flow_probe_harvests.Increment();
    metrics_.flow_probe_records.Increment(static_cast<double>(records.size()));
    metrics_.flow_probe_last_harvest_records.Set(static_cast<double>(records.size()));
    metrics_.flow_probe_last_harvest_seconds.Set(std::chrono::duration<double>(Clock::now() - t0).count());
    metrics_.flow_probe_last_harvest_timestamp.Set(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  }

  // Settles a batch a killed process left pending, against the sink now in use (see FlowProbe::recover).
  tl::expected<void, std::string> recover() {
    if (sink_ && sink_->truncated_bytes() > 0)
      log(5, "flow probe: " + config_.sink + ": removed a batch cut short by a crash (" +
                 std::to_string(sink_->truncated_bytes()) + " bytes after epoch " +
                 std::to_string(sink_->last_epoch()) + ")");
    return probe_->recover(sink_ ? std::optional<std::uint64_t>(sink_->last_epoch()) : std::nullopt);
  }

  DaemonMetrics& metrics_;
  std::string host_;
  std::vector<std::string> counter_names_;
  FlowProbeConfig config_;
  std::unique_ptr<FlowProbe> probe_;
  std::unique_ptr<FlowSink> sink_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mutex_
  std::string last_error_;
  Clock::time_point last_error_at_;
};

nlohmann::json status_document(const PassReport& pass, const std::vector<QosReport>& qos,
                               const std::string& started) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : pass.ports) {
    nlohmann::json j = {{"port_id", p.port_id},
                        {"netdev", p.netdev ? nlohmann::json(*p.netdev) : nlohmann::json(nullptr)},
                        {"state", p.state}};
    if (!p.reason.empty()) j["reason"] = p.reason;
    if (!p.drift.empty()) j["drift"] = p.drift;
    if (p.isolation_dropped_packets) j["isolation_dropped_packets"] = *p.isolation_dropped_packets;
    ports.push_back(j);
  }
  nlohmann::json q = nlohmann::json::array();
  for (const auto& r : qos) q.push_back({{"netdev", r.netdev}, {"state", r.state}, {"findings", r.findings}});
  return {{"applied_generation", pass.generation},
          {"ports", ports},
          {"qos", q},
          {"daemon", {{"version", kVersion}, {"started_at", started}}}};
}

}  // namespace

Daemon::Daemon(DaemonConfig config, std::function<tl::expected<DaemonConfig, std::string>()> reload)
    : config_(std::move(config)), reload_(std::move(reload)) {}

int Daemon::run() {
  const std::string started_at = rfc3339_now();
  const std::string host = effective_host(config_);
  SignalFd signals;
  if (signals.fd() < 0) {
    log(3, "cannot create signalfd");
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  StateStore store(config_.state_dir);
  DaemonMetrics metrics;
  auto loaded = store.load();
  if (!loaded) {
    log(3, loaded.error());
    return 1;
  }
  PersistentState state = std::move(loaded->state);
  const RoutingParams routing{config_.table_base, config_.rule_priority_base, config_.route_protocol};
  auto netlink = Netlink::open(routing);
  if (!netlink) {
    log(3, netlink.error());
    return 1;
  }
  std::unique_ptr<IsolationManager> isolation;
  if (config_.isolation_enabled) {
#ifdef HSNS_HAVE_ISOLATION
    auto iso = IsolationManager::create({config_.isolation_pin_dir});
    if (!iso) {
      log(3, "isolation: " + iso.error());
      return 1;
    }
    isolation = std::move(*iso);
#else
    log(3, "isolation.enabled is true but this hsnsd was built without isolation support");
    return 1;
#endif
  }
  Reconciler reconciler(config_, **netlink, state, isolation.get());
  if (loaded->set_aside) {
    metrics.corrupt_state_files.Increment();
    log(4, "state file was corrupt; moved to " + *loaded->set_aside + "; rebuilding from the live system");
    if (auto r = reconciler.rebuild_ownership(); !r) log(4, "rebuild: " + r.error());
  }
  if (auto r = metrics.start_exposer(config_.metrics_listen); !r) {
    log(3, r.error());
    return 1;
  }
  std::optional<DesiredState> desired;
  if (!state.desired_json.empty()) {
    auto parsed = parse_desired_state(state.desired_json);
    if (parsed)
      desired = std::move(*parsed);
    else
      log(4, "stored desired state ignored: " + parsed.error());
  }
  auto client = AgentClient::make(config_, host);
  if (!client) log(4, "aggregator client: " + client.error() + " (will retry after SIGHUP)");

  Backoff backoff(config_.backoff_initial, config_.backoff_max, std::random_device{}());
  std::optional<Inventory> registered;
  auto next_fetch = Clock::now();
  auto next_pass = Clock::now();
  bool aggregator_ok = false;
  bool status_endpoint_missing_logged = false;
  std::uint64_t pass_number = 0;
  std::uint64_t changes_total = 0;
  std::string last_status_sent;
  auto last_status_at = Clock::now();
  std::string saved_state = loaded->set_aside ? "" : state_to_json(state);

  auto do_pass = [&] {
    const auto t0 = Clock::now();
    PassReport pass;
    if (desired) pass = reconciler.reconcile(*desired);
    for (const auto& e : pass.errors) log(4, e);
    std::vector<QosReport> qos;
    if (config_.qos.enabled && desired) {
      for (const auto& p : desired->ports)
        if (p.netdev) qos.push_back(check_qos(config_.sysfs_root, *p.netdev, config_.qos, read_dcb_qos));
    }
    int converged = 0, failed = 0, qos_drift = 0;
    for (const auto& p : pass.ports) {
      converged += p.state == "converged";
      failed += p.state == "failed";
      for (const auto& d : p.drift) log(4, "drift repaired on " + p.netdev.value_or("?") + ": " + d);
    }
    for (const auto& q : qos) qos_drift += q.state == "drift";
    metrics.passes.Increment();
    metrics.changes.Increment(static_cast<double>(pass.changes));
    metrics.drift_repairs.Increment(static_cast<double>(pass.drift_repairs));
    metrics.ports_converged.Set(converged);
    metrics.ports_failed.Set(failed);
    metrics.qos_drift_ports.Set(qos_drift);
    metrics.generation.Set(static_cast<double>(pass.generation));
    // The state file is rewritten (with fsync) only when what it records changed.
    if (const auto text = state_to_json(state); text != saved_state) {
      if (auto r = store.save(state); !r)
        log(3, "cannot save state: " + r.error());
      else
        saved_state = text;
    }
    auto doc = status_document(pass, qos, started_at);
    // Local extras (not part of the aggregator's status document): pass counters for tests and the lab.
    changes_total += pass.changes;
    doc["local"] = {{"pass", ++pass_number},
                    {"changes", pass.changes},
                    {"changes_total", changes_total},
                    {"aggregator_up", aggregator_ok},
                    {"pass_seconds", std::chrono::duration<double>(Clock::now() - t0).count()}};
    if (auto r = store.write_atomic("status.json", doc.dump(2) + "\n", false); !r) log(4, r.error());
    doc.erase("local");
    // Report when something changed, and at least every kStatusHeartbeat so the aggregator sees liveness.
    const std::string body = doc.dump();
    const bool due = body != last_status_sent || Clock::now() - last_status_at >= kStatusHeartbeat;
    if (client && aggregator_ok && desired && due) {
      auto r = (*client)->put_status(body);
      if (r) {
        last_status_sent = body;
        last_status_at = Clock::now();
      } else {
        metrics.status_errors.Increment();
        if (r.error().find(" 404") == std::string::npos || !status_endpoint_missing_logged) log(4, r.error());
        status_endpoint_missing_logged = true;
      }
    }
    metrics.last_pass_seconds.Set(std::chrono::duration<double>(Clock::now() - t0).count());
  };

  auto do_fetch = [&] {
    if (!client) {
      client = AgentClient::make(config_, host);
      if (!client) {
        log(4, client.error());
        return false;
      }
    }
    const Inventory inv = discover(config_);
    if (!registered || !(*registered == inv)) {
      if (auto r = (*client)->register_host(registration_body(inv)); !r) {
        metrics.register_errors.Increment();
        log(4, "registration: " + r.error());
        return false;
      }
      registered = inv;
      log(6, "registered " + std::to_string(inv.npus.size()) + " NPU(s), " + std::to_string(inv.rdma.size()) +
                 " RDMA port(s) as " + host);
    }
    auto f = (*client)->fetch_desired(desired ? state.etag : "");
    if (!f) {
      metrics.fetch_errors.Increment();
      if (f.error().rfind("404", 0) == 0) registered.reset();
      log(4, "desired state: " + f.error());
      return false;
    }
    if (!f->unchanged) {
      if (f->state.host != host) {
        log(4, "desired state names host " + f->state.host + ", not " + host + "; ignored");
        return false;
      }
      if (!desired || desired->generation != f->state.generation || state.etag != f->etag)
        log(6, "desired state generation " + std::to_string(f->state.generation) + " with " +
                   std::to_string(f->state.ports.size()) + " port(s)");
      desired = std::move(f->state);
      state.desired_json = desired_state_to_json(*desired);
      state.etag = f->etag;
    }
    return true;
  };

  // The flow probe starts after the pass above attached isolation, and before READY=1. A start failure
  // (a missing interface, the verifier, a pinned table of another size, a sink that cannot be opened) is
  // logged and counted but not fatal: the ports are hsnsd's first job. It is retried every
  // kFlowProbeRetry and on SIGHUP.
  FlowHarvester flows(metrics, host);
  auto next_probe_retry = Clock::time_point::max();
  std::string probe_error;
  auto apply_flow_probe = [&] {
    const bool was_running = flows.running();
    auto r = flows.apply(config_.flow_probe);
    if (r) {
      next_probe_retry = Clock::time_point::max();
      probe_error.clear();
      const auto& fp = config_.flow_probe;
      const std::string harvest = "harvest every " + std::to_string(fp.interval.count()) + " ms into " +
                                  (fp.sink.empty() ? std::string("no sink") : fp.sink);
      switch (*r) {
        case FlowHarvester::Change::none:
          return;
        case FlowHarvester::Change::stopped:
          log(6, "flow probe stopped (no interfaces configured)");
          return;
        case FlowHarvester::Change::harvest_only:
          log(6, "flow probe stays attached; " + harvest);
          return;
        case FlowHarvester::Change::started: {
          std::string names;
          for (const auto& i : fp.interfaces) names += (names.empty() ? "" : ",") + i.name;
          log(6, "flow probe attached to " + names + ", maps pinned under " + fp.pin_dir + "; " + harvest);
          return;
        }
      }
      return;
    }
    if (flows.running()) {
      log(3, "flow probe: " + r.error() + " (keeping the running probe and its sink)");
      return;
    }
    if (r.error() != probe_error || was_running)
      log(3, "flow probe: " + r.error() + " (not running; retried every " +
                 std::to_string(kFlowProbeRetry.count()) + " s and on SIGHUP)");
    probe_error = r.error();
    next_probe_retry = Clock::now() + kFlowProbeRetry;
  };

  // Serve the last applied configuration before talking to anyone.
  if (desired) do_pass();
  apply_flow_probe();
  sd_notify(0, "READY=1");
  log(6, std::string("started ") + kVersion + " for host " + host + ", aggregator " + config_.aggregator_url);

  for (;;) {
    sd_notify(0, "WATCHDOG=1");
    auto now = Clock::now();
    bool pass_now = false;
    if (now >= next_fetch) {
      const bool was_ok = aggregator_ok;
      const auto before = desired ? desired->generation : -1;
      aggregator_ok = do_fetch();
      metrics.aggregator_up.Set(aggregator_ok ? 1 : 0);
      if (aggregator_ok) {
        backoff.reset();
        next_fetch = now + config_.interval;
        if (!was_ok || (desired && desired->generation != before)) pass_now = true;
      } else {
        next_fetch = now + backoff.next();
      }
    }
    if (pass_now || now >= next_pass) {
      do_pass();
      next_pass = Clock::now() + config_.interval;
    }
    if (Clock::now() >= next_probe_retry) apply_flow_probe();
    now = Clock::now();
    const auto wake = std::min({next_fetch, next_pass, next_probe_retry});
    auto wait = std::chrono::duration_cast<milliseconds>(wake - now);
    wait = std::clamp(wait, milliseconds(0), milliseconds(5000));
    pollfd pfd{signals.fd(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) continue;
    while (auto sig = signals.read()) {
      if (*sig == SIGTERM || *sig == SIGINT) {
        sd_notify(0, "STOPPING=1");
        log(6, "stopping");
        flows.stop();  // last harvest, filters and programs detached, maps stay pinned
        if (isolation) isolation->detach_all();
        if (auto r = store.save(state); !r) log(3, "cannot save state: " + r.error());
        return 0;
      }
      if (*sig == SIGHUP) {
        sd_notify(0, "RELOADING=1");
        auto fresh = reload_();
        if (!fresh) {
          log(3, "reload failed, keeping the running configuration: " + fresh.error());
        } else {
          const bool routing_changed = fresh->table_base != config_.table_base ||
                                       fresh->rule_priority_base != config_.rule_priority_base ||
                                       fresh->route_protocol != config_.route_protocol ||
                                       fresh->state_dir != config_.state_dir;
          if (routing_changed)
            log(4, "routing and state_dir changes take effect after a restart");
          else
            config_ = std::move(*fresh);
          client = AgentClient::make(config_, host);
          registered.reset();
          log(6, "configuration reloaded");
          probe_error.clear();  // a failure to start is logged again after every SIGHUP
          apply_flow_probe();   // restarts the probe only when its section changed (or it is not running)
        }
        sd_notify(0, "READY=1");
      }
      next_fetch = Clock::now();
      next_pass = Clock::now();
    }
  }
}

}  // namespace hsns::daemon
