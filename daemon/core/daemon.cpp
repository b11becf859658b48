#include "daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "hsns/log.h"
#include "hsns/time.h"
#include "hsns/version.h"

namespace hsns::daemon {
namespace {

using Clock = Component::Clock;
using std::chrono::milliseconds;

constexpr milliseconds kLongestSleep{5000};

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

}  // namespace

Daemon::Daemon(DaemonConfig config, Reload reload) : config_(std::move(config)), reload_(std::move(reload)) {
  node_.host = effective_host(config_);
  node_.started_at = format_rfc3339_utc(std::chrono::system_clock::now());
  log::set_level(config_.log_level);
}

void Daemon::update_readiness() {
  bool all = true;
  for (auto& slot : components_) {
    const bool ready = slot.component->ready();
    if (slot.ready_gauge == nullptr)
      slot.ready_gauge = &metrics_.component_ready(std::string(slot.component->name()));
    if (ready != slot.ready) {
      HSNS_LOG(info) << "component " << slot.component->name() << (ready ? " ready" : " not ready");
      slot.ready = ready;
    }
    slot.ready_gauge->Set(ready ? 1 : 0);
    all = all && ready;
  }
  if (!all || ready_sent_) return;
  sd_notify(0, "READY=1");
  ready_sent_ = true;
  if (!started_logged_) {
    HSNS_LOG(info) << "started " << kVersion << " for host " << node_.host << ", aggregator "
                   << config_.aggregator_url;
    started_logged_ = true;
  }
}

void Daemon::stop_started(std::size_t count) {
  for (std::size_t i = count; i-- > 0;) components_[i].component->stop();
}

void Daemon::reload() {
  sd_notify(0, "RELOADING=1");
  ready_sent_ = false;
  auto fresh = reload_();
  if (!fresh) {
    HSNS_LOG(error) << "reload failed, keeping the running configuration: " << fresh.error();
  } else {
    const bool routing_changed =
        fresh->table_base != config_.table_base || fresh->rule_priority_base != config_.rule_priority_base ||
        fresh->route_protocol != config_.route_protocol || fresh->state_dir != config_.state_dir;
    if (routing_changed)
      HSNS_LOG(warning) << "routing and state_dir changes take effect after a restart";
    else
      config_ = std::move(*fresh);
    log::set_level(config_.log_level);
    HSNS_LOG(info) << "configuration reloaded";
    for (auto& slot : components_) slot.component->reload(config_);
  }
  update_readiness();
}

int Daemon::run() {
  SignalFd signals;
  if (signals.fd() < 0) {
    HSNS_LOG(error) << "cannot create signalfd";
    return 1;
  }
  if (auto r = metrics_.start_exposer(config_.metrics_listen); !r) {
    HSNS_LOG(error) << r.error();
    return 1;
  }
  for (std::size_t i = 0; i < components_.size(); ++i) {
    if (auto r = components_[i].component->start(); !r) {
      HSNS_LOG(error) << r.error();
      stop_started(i);
      return 1;
    }
  }
  update_readiness();

  // WATCHDOG=1 only when systemd asked for it (WATCHDOG_USEC), at half its interval: sd_notify writes to a
  // blocking datagram socket, so notifying every turn could fill a slow reader's queue (10 datagrams by
  // default) and stall the loop inside sd_notify.
  std::uint64_t watchdog_usec = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0;
  const auto watchdog_period =
      std::max(milliseconds(1),
               std::chrono::duration_cast<milliseconds>(std::chrono::microseconds(watchdog_usec) / 2));
  auto next_watchdog = Clock::now();
  for (;;) {
    if (watchdog && Clock::now() >= next_watchdog) {
      sd_notify(0, "WATCHDOG=1");
      next_watchdog = Clock::now() + watchdog_period;
    }
    auto wake = watchdog ? next_watchdog : Clock::time_point::max();
    for (auto& slot : components_) wake = std::min(wake, slot.component->tick(Clock::now()));
    update_readiness();
    const auto now = Clock::now();
    auto wait = wake == Clock::time_point::max() ? kLongestSleep
                                                 : std::chrono::duration_cast<milliseconds>(wake - now);
    wait = std::clamp(wait, milliseconds(0), kLongestSleep);
    pollfd pfd{signals.fd(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) continue;
    while (auto sig = signals.read()) {
      if (*sig == SIGTERM || *sig == SIGINT) {
        sd_notify(0, "STOPPING=1");
        HSNS_LOG(info) << "stopping";
        stop_started(components_.size());
        return 0;
      }
      if (*sig == SIGHUP) reload();
      for (auto& slot : components_) slot.component->trigger();
    }
  }
}

}  // namespace hsns::daemon
