// The reconciler: one pass converges the kernel to a DesiredState over rtnetlink (addresses, MTU, link
// up, a routing table and a "from" rule per port, ARP sysctls) and, when isolation is on, the port's
// allowed prefixes; then it reports per port.
//
// Contract:
// - reconcile() observes, plans (plan.h), executes, and records what it added in the PersistentState it
//   was given (the caller saves it). A converged system makes no changes. Failures are per port: a
//   port whose netdev is missing, whose address conflicts or whose MTU the link refuses is reported
//   "failed" with the reason while the other ports are applied. Repairs of a port that was already
//   converged are reported as `drift` ("address 198.18.1.2/24 added on eth2").
// - It deletes only what hsnsd added: addresses listed in the state's ownership records, routes and
//   rules carrying hsnsd's protocol in hsnsd's table range.
// - rebuild_ownership() recovers the ownership records from the live system (IPv4 addresses labelled
//   "<netdev>:hsns") after a corrupt state file was set aside.
// - Thread-compatible: used by the main loop only. References passed in must outlive the object.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config.h"
#include "desired_state.h"
#include "netlink.h"
#include "state_store.h"

namespace hsns::daemon {

class IsolationManager;

struct PortStatus {
  std::string port_id;
  std::optional<std::string> netdev;
  std::string state;  // "converged", "failed", "pending"
  std::string reason;
  std::vector<std::string> drift;
  std::optional<std::uint64_t> isolation_dropped_packets;
};

struct PassReport {
  std::int64_t generation = 0;
  std::vector<PortStatus> ports;
  std::uint64_t changes = 0;        // netlink changes + sysctl writes in this pass
  std::uint64_t drift_repairs = 0;  // of which repairs on already converged ports
  std::vector<std::string> errors;  // clean-up errors and observation failures
};

class Reconciler {
 public:
  Reconciler(const DaemonConfig& config, Netlink& netlink, PersistentState& state,
             IsolationManager* isolation);

  PassReport reconcile(const DesiredState& desired);
  tl::expected<void, std::string> rebuild_ownership();

 private:
  void apply_port(const DesiredPort& port, const PortPlan& plan, PortStatus& status, PassReport& report);
  tl::expected<bool, std::string> ensure_sysctl(const std::string& netdev, const char* key,
                                                const char* value);
  void apply_isolation(const DesiredPort& port, PortStatus& status);

  const DaemonConfig& config_;
  Netlink& netlink_;
  PersistentState& state_;
  IsolationManager* isolation_;
  std::set<std::string> converged_;  // "<port_id>@<netdev>" converged in an earlier pass
};

}  // namespace hsns::daemon
