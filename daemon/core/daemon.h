// The hsnsd main loop: registration, desired-state polling with backoff, reconcile passes, QoS checks,
// status reports, state persistence, signals and systemd notifications.
//
// Contract:
// - run() owns everything it creates (netlink socket, signalfd, isolation, exposer, flow probe) and returns
//   the process exit code: 0 after SIGTERM/SIGINT (flow probe harvested a last time and detached with its
//   maps left pinned, isolation detached, state saved, STOPPING=1 sent), 1 when start-up fails (netlink,
//   state dir, metrics listen address, isolation requested but unavailable).
// - READY=1 is sent once the state file is loaded (a corrupt one set aside and ownership rebuilt), the
//   stored desired state re-applied, isolation attached and the flow probe started (when `flow_probe:` has
//   interfaces). WATCHDOG=1 is sent from every loop turn.
// - Flow probe: a start failure is logged and counted (hsns_flow_probe_start_failures_total,
//   hsns_flow_probe_up 0) and never stops hsnsd; the start is retried every 60 s and on SIGHUP. Harvests
//   run on a thread of their own every flow_probe.interval_ms, writing the sink and /metrics; SIGHUP
//   restarts the probe only when its section changed (an interval or sink change keeps it attached).
// - The aggregator being unreachable never removes anything: the last desired state keeps being applied
//   (drift is still repaired) and requests are retried with exponential backoff and full jitter.
// - SIGHUP reloads the configuration file (command-line overrides keep precedence); an invalid file is
//   logged and the running configuration kept. SIGUSR1 triggers an immediate fetch and pass.
// - Each pass writes <state_dir>/status.json (the document sent to PUT /api/v1/agents/{host}/status plus
//   local counters). The aggregator gets the document when it changed, and at least once a minute.
// - Single-threaded but for the flow harvester thread (and the metrics exposer's threads).
#pragma once

#include <functional>
#include <string>

#include "config.h"

namespace hsns::daemon {

class Daemon {
 public:
  // reload() re-reads the config file and re-applies the command-line overrides.
  Daemon(DaemonConfig config, std::function<tl::expected<DaemonConfig, std::string>()> reload);
  int run();

 private:
  DaemonConfig config_;
  std::function<tl::expected<DaemonConfig, std::string>()> reload_;
};

}  // namespace hsns::daemon
