// The RoCE QoS conformance check (qos.h) as an hsnsd component: after every reconcile pass it compares
// each desired port's NIC QoS (sysfs and DCB netlink) with the `qos:` profile. Read-only.
//
// Contract:
// - tick() checks once per pass, in the loop turn of the pass (it follows the reconciler); start()
//   checks the pass the reconciler ran at its start, if any. Nothing is checked while `qos.enabled` is
//   false or no desired state is known (reports() is then empty). ready() once started.
// - reload(): the new profile applies from the next pass.
// - Metrics: hsns_daemon_qos_drift_ports (ports whose QoS differs from the profile, last check).
#pragma once

#include <prometheus/registry.h>

#include <vector>

#include "component.h"
#include "node_state.h"
#include "qos.h"
#include "reconciler_component.h"

namespace hsns::daemon {

class QosCheck final : public Component {
 public:
  QosCheck(const DaemonConfig& config, const NodeState& node, const ReconcilerComponent& reconciler,
           prometheus::Registry& registry);

  std::string_view name() const override { return "qos"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override { config_ = config; }
  bool ready() const override { return started_; }

  // The reports of the last pass checked, and that pass's number.
  const std::vector<QosReport>& reports() const { return reports_; }
  std::uint64_t checked_pass() const { return checked_pass_; }

 private:
  DaemonConfig config_;
  const NodeState& node_;
  const ReconcilerComponent& reconciler_;
  prometheus::Gauge& drift_ports_;
  std::vector<QosReport> reports_;
  std::uint64_t checked_pass_ = 0;
  bool started_ = false;
};

}  // namespace hsns::daemon
