#include "qos_check.h"

#include "metrics.h"

namespace hsns::daemon {

QosCheck::QosCheck(const DaemonConfig& config, const NodeState& node, const ReconcilerComponent& reconciler,
                   prometheus::Registry& registry)
    : config_(config),
      node_(node),
      reconciler_(reconciler),
      drift_ports_(
          add_gauge(registry, "hsns_daemon_qos_drift_ports", "Ports whose QoS differs from the profile")) {}

tl::expected<void, std::string> QosCheck::start() {
  tick(Clock::now());
  started_ = true;
  return {};
}

Component::Clock::time_point QosCheck::tick(Clock::time_point) {
  const auto pass = reconciler_.last_pass().number;
  if (pass == checked_pass_) return Clock::time_point::max();
  checked_pass_ = pass;
  reports_.clear();
  if (config_.qos.enabled && node_.desired) {
    for (const auto& p : node_.desired->ports)
      if (p.netdev) reports_.push_back(check_qos(config_.sysfs_root, *p.netdev, config_.qos, read_dcb_qos));
  }
  int drift = 0;
  for (const auto& r : reports_) drift += r.state == "drift";
  drift_ports_.Set(drift);
  return Clock::time_point::max();
}

}  // namespace hsns::daemon
