#include "desired_state.h"

#include "qos.h"
#include "reconciler.h"

namespace hsns::daemon {

tl::expected<DesiredState, std::string> parse_desired_state(const std::string& body) {
  auto state = proto::decode<proto::DesiredState>(body);
  if (!state) return tl::unexpected("desired state: " + state.error().message());
  return std::move(*state);
}

std::string desired_state_to_json(const DesiredState& state) {
  return proto::encode(state);
}

proto::StatusReport status_report(const PassReport& pass, const std::vector<QosReport>& qos,
                                  const std::string& version, const std::string& started_at) {
  proto::StatusReport report;
  report.applied_generation = pass.generation;
  for (const auto& p : pass.ports) {
    proto::PortReport port;
    port.port_id = p.port_id;
    port.netdev = p.netdev;
    port.state = p.state == "converged" ? proto::PortState::converged
                 : p.state == "failed"  ? proto::PortState::failed
                                        : proto::PortState::pending;
    port.reason = p.reason;
    port.drift = p.drift;
    port.isolation_dropped_packets = p.isolation_dropped_packets;
    report.ports.push_back(std::move(port));
  }
  for (const auto& q : qos) {
    report.qos.push_back({q.netdev,
                          q.state == "conformant" ? proto::QosState::conformant
                          : q.state == "drift"    ? proto::QosState::drift
                                                  : proto::QosState::unknown,
                          q.findings});
  }
  report.daemon = proto::DaemonInfo{version, started_at};
  return report;
}

}  // namespace hsns::daemon
