// One part of hsnsd that the main loop (daemon.h) sequences: the agent link, isolation, the reconciler,
// the QoS check, the status report, the flow harvester and the telemetry readers (counters, RDMA QP
// inventory, optical modules, LLDP); the next one (the report uploader) implements the same interface.
//
// Contract:
// - The main loop calls start() once per component in the order they were added, tick() on every loop
//   turn in that same order, reload() after a SIGHUP with the running configuration, trigger() on SIGUSR1
//   and after a reload, and stop() in reverse order on SIGTERM/SIGINT (or, for the components already
//   started, when a later start() failed). All of it from the main thread.
// - start() failing means hsnsd cannot run (exit code 1); everything a component can live without (the
//   aggregator away, a flow probe that cannot attach) is logged, counted and retried by the component
//   itself, and start() succeeds.
// - tick(now) does what is due at `now` and returns when the component wants its next tick
//   (time_point::max() = only when something else happens: a signal, or the loop turn of another
//   component's timer). The loop never sleeps longer than 5 s, so returning early is always safe.
//   Components later in the order see in the same turn what earlier ones did (a fetched desired state is
//   applied in the turn it arrived; the QoS check and the status report follow that pass).
// - ready() is true once the component has done what must happen before hsnsd tells systemd READY=1;
//   the main loop sends READY=1 once every component is ready, logs each component's readiness when it
//   changes and exports it as hsns_daemon_component_ready{component="<name()>"}.
// - Each component registers its own metrics (hsns_daemon_*, hsns_flow_probe_*) in the registry it is
//   given at construction; the main loop exposes that registry on /metrics.
// - Components share data through NodeState (node_state.h) and through the references they are given
//   at construction (the status report reads the reconciler's last pass); never through globals.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "config.h"

namespace hsns::daemon {

class Component {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~Component() = default;
  // Short stable name: the metric label and the log prefix ("agent", "reconciler", "flows", ...).
  virtual std::string_view name() const = 0;
  virtual tl::expected<void, std::string> start() = 0;
  virtual Clock::time_point tick(Clock::time_point now) = 0;
  // The running configuration after a SIGHUP (already validated; unchanged when the file was invalid).
  virtual void reload(const DaemonConfig& config) = 0;
  // SIGUSR1, and after a reload: do the periodic work at the next tick instead of waiting for its timer.
  virtual void trigger() {}
  virtual void stop() {}
  virtual bool ready() const = 0;
};

}  // namespace hsns::daemon
