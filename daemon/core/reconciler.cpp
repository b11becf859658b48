#include "reconciler.h"

#include <fstream>
#include <sstream>

#include "../isolation/isolation.h"

namespace hsns::daemon {
namespace {

std::string key_of(const DesiredPort& p) {
  return p.port_id + "@" + p.netdev.value_or("");
}

RoutingParams routing_of(const DaemonConfig& c) {
  return {c.table_base, c.rule_priority_base, c.route_protocol};
}

}  // namespace

Reconciler::Reconciler(const DaemonConfig& config, Netlink& netlink, PersistentState& state,
                       IsolationManager* isolation)
    : config_(config), netlink_(netlink), state_(state), isolation_(isolation) {}

tl::expected<bool, std::string> Reconciler::ensure_sysctl(const std::string& netdev, const char* key,
                                                          const char* value) {
  const std::string path = config_.procfs_root + "/sys/net/ipv4/conf/" + netdev + "/" + key;
  std::ifstream in(path);
  if (!in) return tl::unexpected("cannot read " + path);
  std::string current;
  in >> current;
  if (current == value) return false;
  std::ofstream out(path);
  out << value << "\n";
  out.flush();
  if (!out) return tl::unexpected("cannot write " + path);
  return true;
}

void Reconciler::apply_isolation(const DesiredPort& port, PortStatus& status) {
  if (!isolation_ || !port.netdev) return;
  if (auto r = isolation_->apply(*port.netdev, port.allowed_prefixes); !r) {
    status.state = "failed";
    status.reason = "isolation: " + r.error();
    return;
  }
  for (const auto& c : isolation_->counters())
    if (c.netdev == *port.netdev) status.isolation_dropped_packets = c.dropped_packets;
}

void Reconciler::apply_port(const DesiredPort& port, const PortPlan& plan, PortStatus& status,
                            PassReport& report) {
  const bool was_converged = converged_.count(key_of(port)) > 0;
  std::vector<std::string> done;
  std::vector<std::string> failures;
  for (const auto& action : plan.actions) {
    auto r = netlink_.execute(action);
    if (!r) {
      failures.push_back(r.error());
      continue;
    }
    done.push_back(action.describe());
    if (action.kind == ActionKind::add_address) state_.owned[action.netdev].addresses.insert(action.address);
    if (action.kind == ActionKind::del_address) state_.owned[action.netdev].addresses.erase(action.address);
    state_.owned[action.netdev].npu = port.npu;
  }
  for (const auto* key : {"arp_ignore", "arp_announce"}) {
    const char* value = std::string(key) == "arp_ignore" ? "1" : "2";
    auto changed = ensure_sysctl(*port.netdev, key, value);
    if (!changed)
      failures.push_back(changed.error());
    else if (*changed)
      done.push_back(std::string(key) + " of " + *port.netdev + " set to " + value);
  }
  report.changes += done.size();
  status.state = failures.empty() ? "converged" : "failed";
  for (std::size_t i = 0; i < failures.size(); ++i) status.reason += (i ? "; " : "") + failures[i];
  if (was_converged) {
    status.drift = done;
    report.drift_repairs += done.size();
  }
  if (failures.empty()) apply_isolation(port, status);
  if (status.state == "converged")
    converged_.insert(key_of(port));
  else
    converged_.erase(key_of(port));
}

PassReport Reconciler::reconcile(const DesiredState& desired) {
  PassReport report;
  report.generation = desired.generation;
  auto observed = netlink_.observe();
  if (!observed) {
    report.errors.push_back(observed.error());
    for (const auto& p : desired.ports)
      report.ports.push_back({p.port_id, p.netdev, "pending", observed.error(), {}, {}});
    return report;
  }
  const Plan plan = make_plan(desired, *observed, state_.owned, routing_of(config_));
  for (const auto& action : plan.cleanup) {
    if (auto r = netlink_.execute(action); !r) {
      report.errors.push_back(r.error());
      continue;
    }
    ++report.changes;
    if (action.kind == ActionKind::del_address) {
      auto it = state_.owned.find(action.netdev);
      if (it != state_.owned.end()) it->second.addresses.erase(action.address);
    }
  }
  std::set<std::string> desired_netdevs;
  for (std::size_t i = 0; i < desired.ports.size(); ++i) {
    const auto& port = desired.ports[i];
    const auto& port_plan = plan.ports[i];
    PortStatus status{port.port_id, port.netdev, "pending", "", {}, {}};
    if (port.netdev) desired_netdevs.insert(*port.netdev);
    if (port_plan.failure) {
      status.state = "failed";
      status.reason = *port_plan.failure;
      converged_.erase(key_of(port));
    } else {
      apply_port(port, port_plan, status, report);
    }
    report.ports.push_back(std::move(status));
  }
  // Forget ownership of netdevs no longer desired once nothing of hsnsd's is left there.
  for (auto it = state_.owned.begin(); it != state_.owned.end();) {
    if (!desired_netdevs.count(it->first) && it->second.addresses.empty()) {
      if (isolation_) (void)isolation_->remove(it->first);
      it = state_.owned.erase(it);
    } else {
      ++it;
    }
  }
  return report;
}

tl::expected<void, std::string> Reconciler::rebuild_ownership() {
  auto observed = netlink_.observe();
  if (!observed) return tl::unexpected(observed.error());
  for (const auto& a : observed->addresses) {
    for (const auto& [name, link] : observed->links) {
      if (link.ifindex == a.ifindex && !a.label.empty() && a.label == address_label(name))
        state_.owned[name].addresses.insert(a.cidr);
    }
  }
  return {};
}

}  // namespace hsns::daemon
