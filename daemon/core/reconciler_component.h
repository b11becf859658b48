// The reconciler as an hsnsd component: owns the state file (StateStore), the rtnetlink socket and the
// Reconciler (reconciler.h), and runs the reconcile pass.
//
// Contract:
// - start() creates the state directory, loads state.json into NodeState::persistent (a corrupt file is
//   set aside, counted in hsns_daemon_corrupt_state_files_total and ownership rebuilt from the live
//   system), opens the netlink socket, takes the stored desired state (an unparsable one is logged and
//   ignored) and, when there is one, runs the first pass before anything talks to the aggregator. It fails
//   (hsnsd exits 1) when the state file cannot be read or netlink cannot be opened. ready() once started.
// - tick(): a pass when NodeState::pass_wanted is set or the interval elapsed since the last pass (a pass
//   without a desired state changes nothing but still counts and reports). A pass reconciles, logs its
//   errors and every drift repair, updates the pass metrics and saves state.json (with fsync) when what
//   it records changed. last_pass() is what the QoS check and the status report read.
// - reload(): the new configuration applies from the next pass (routing and state_dir changes are
//   refused by the main loop before this is called).
// - stop() saves state.json.
// - Metrics: hsns_daemon_reconcile_passes_total, _changes_total, _drift_repairs_total,
//   _corrupt_state_files_total, hsns_daemon_ports_converged, _ports_failed, _desired_generation,
//   _last_pass_duration_seconds (the reconcile and the state save).
#pragma once

#include <prometheus/registry.h>

#include <cstdint>
#include <memory>

#include "component.h"
#include "isolation_component.h"
#include "netlink.h"
#include "node_state.h"
#include "reconciler.h"
#include "state_store.h"

namespace hsns::daemon {

struct PassRecord {
  std::uint64_t number = 0;  // 0: no pass yet
  PassReport report;
  Component::Clock::time_point started;
  std::uint64_t changes_total = 0;  // changes of every pass since start
};

class ReconcilerComponent final : public Component {
 public:
  ReconcilerComponent(const DaemonConfig& config, NodeState& node, const IsolationComponent& isolation,
                      prometheus::Registry& registry);

  std::string_view name() const override { return "reconciler"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override { config_ = config; }
  void trigger() override { next_pass_ = Clock::now(); }
  void stop() override;
  bool ready() const override { return started_; }

  const PassRecord& last_pass() const { return last_pass_; }
  // Writes a file of the state directory atomically (status.json).
  tl::expected<void, std::string> write_state_file(const std::string& name,
                                                   const std::string& content) const {
    return store_.write_atomic(name, content, false);
  }

 private:
  void pass();

  DaemonConfig config_;  // the Reconciler reads it by reference: a reload applies from the next pass
  NodeState& node_;
  const IsolationComponent& isolation_;
  StateStore store_;
  std::unique_ptr<Netlink> netlink_;
  std::unique_ptr<Reconciler> reconciler_;
  std::string saved_state_;  // state.json as last written
  PassRecord last_pass_;
  Clock::time_point next_pass_ = Clock::now();
  bool started_ = false;

  prometheus::Counter& passes_;
  prometheus::Counter& changes_;
  prometheus::Counter& drift_repairs_;
  prometheus::Counter& corrupt_state_files_;
  prometheus::Gauge& ports_converged_;
  prometheus::Gauge& ports_failed_;
  prometheus::Gauge& generation_;
  prometheus::Gauge& last_pass_seconds_;
};

}  // namespace hsns::daemon
