// The hsnsd main loop: sequences the components (component.h), handles signals and talks to systemd.
//
// Contract:
// - add<C>(args...) appends a component and returns it (later components take earlier ones by reference).
//   The order is the start and tick order; stop runs in reverse. hsnsd's order (daemon/core/main.cpp):
//   isolation, agent link, reconciler, QoS check, status report, flow harvester.
// - run() owns the signalfd and the metrics exposer and returns the process exit code: 0 after
//   SIGTERM/SIGINT (STOPPING=1 sent, every component stopped in reverse order: the flow probe harvested a
//   last time and detached with its maps left pinned, state saved, isolation detached), 1 when start-up
//   fails (a component's start(), the signalfd, the metrics listen address); the components already
//   started are then stopped in reverse order.
// - READY=1 is sent once every component is ready (ready()), and again after each reload; each
//   component's readiness is logged when it changes and exported as hsns_daemon_component_ready{component}.
//   WATCHDOG=1 is sent from every loop turn. A turn ticks every component in order, then sleeps until the
//   earliest time a component asked for (at most 5 s) or a signal.
// - SIGHUP (RELOADING=1) reloads the configuration file (command-line overrides keep precedence); an
//   invalid file is logged and the running configuration kept; routing (table_base, rule_priority_base,
//   protocol) and state_dir changes are refused as a whole (they take effect after a restart). The
//   running configuration goes to every component's reload() and sets the log level; then every
//   component is triggered. SIGUSR1 triggers every component (an immediate fetch and pass).
// - Single-threaded but for the flow harvester's thread (and the metrics exposer's threads).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "component.h"
#include "config.h"
#include "metrics.h"
#include "node_state.h"

namespace hsns::daemon {

class Daemon {
 public:
  using Reload = std::function<tl::expected<DaemonConfig, std::string>()>;
  // reload() re-reads the config file and re-applies the command-line overrides.
  Daemon(DaemonConfig config, Reload reload);

  const DaemonConfig& config() const { return config_; }
  NodeState& node() { return node_; }
  prometheus::Registry& registry() { return metrics_.registry(); }

  template <typename C, typename... Args>
  C& add(Args&&... args) {
    auto component = std::make_unique<C>(std::forward<Args>(args)...);
    C& ref = *component;
    components_.push_back({std::move(component), nullptr, false});
    return ref;
  }

  int run();

 private:
  struct Slot {
    std::unique_ptr<Component> component;
    prometheus::Gauge* ready_gauge;
    bool ready;
  };
  // Notes readiness changes; sends READY=1 when every component is ready and it was not sent yet.
  void update_readiness();
  void reload();
  void stop_started(std::size_t count);

  DaemonConfig config_;
  Reload reload_;
  DaemonMetrics metrics_;
  NodeState node_;
  std::vector<Slot> components_;
  bool ready_sent_ = false;
  bool started_logged_ = false;
};

}  // namespace hsns::daemon
