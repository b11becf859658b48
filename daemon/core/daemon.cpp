#include "daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "../isolation/isolation.h"
#include "agent_client.h"
#include "backoff.h"
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

void log(int level, const std::string& msg) {
  std::cerr << "<" << level << ">hsnsd: " << msg << std::endl;
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
        if (p.netdev) qos.push_back(check_qos(config_.sysfs_root, *p.netdev, config_.qos));
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

  // Serve the last applied configuration before talking to anyone.
  if (desired) do_pass();
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
    now = Clock::now();
    const auto wake = std::min(next_fetch, next_pass);
    auto wait = std::chrono::duration_cast<milliseconds>(wake - now);
    wait = std::clamp(wait, milliseconds(0), milliseconds(5000));
    pollfd pfd{signals.fd(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) continue;
    while (auto sig = signals.read()) {
      if (*sig == SIGTERM || *sig == SIGINT) {
        sd_notify(0, "STOPPING=1");
        log(6, "stopping");
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
        }
        sd_notify(0, "READY=1");
      }
      next_fetch = Clock::now();
      next_pass = Clock::now();
    }
  }
}

}  // namespace hsns::daemon
