// Pure diff logic of the reconciler: from the desired state, what the kernel has now (an Observation)
// and what hsnsd added earlier (the state file's ownership records), compute the netlink actions that
// converge each port, and the clean-up of hsnsd's own leftovers.
//
// Contract:
// - make_plan() has no side effects and never throws. Equal inputs give equal plans; a converged system
//   gives a plan with no actions (that is what makes a second pass change nothing).
// - It never emits a deletion of something hsnsd did not add: addresses are deleted only when listed
//   in `owned`; routes and rules only when they carry hsnsd's protocol mark and use hsnsd's table range.
// - A port that cannot be applied (no netdev, the netdev is missing, its address is on another netdev)
//   gets `failure` and no actions; the other ports are planned normally.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "desired_state.h"
#include "state_store.h"

namespace hsns::daemon {

struct ObservedLink {
  int ifindex = 0;
  std::string name;
  int mtu = 0;
  bool up = false;
};

struct ObservedAddress {
  int ifindex = 0;
  std::string cidr;  // "addr/len"
  std::string label;
};

struct RouteSpec {
  std::uint32_t table = 0;
  std::string dst;      // "cidr"; "0.0.0.0/0" or "::/0" for default
  std::string gateway;  // "" = directly connected
  int ifindex = 0;
  std::string src;  // preferred source ("" = none)
  // Type unreachable (RTN_UNREACHABLE) instead of unicast: no gateway, ifindex 0, no src. hsnsd puts one as
  // the default route of a port's table when the port has no gateway, so that a lookup for a packet sourced
  // from the port's address ends there instead of falling through to the main table (another port's subnet).
  bool unreachable = false;
  friend auto operator<=>(const RouteSpec&, const RouteSpec&) = default;
};

struct RuleSpec {
  int family = 0;    // AF_INET / AF_INET6
  std::string from;  // "addr/32" or "addr/128"
  std::uint32_t table = 0;
  std::uint32_t priority = 0;
  friend auto operator<=>(const RuleSpec&, const RuleSpec&) = default;
};

// Only what the planner needs: all links and addresses, and the routes/rules carrying hsnsd's mark.
struct Observation {
  std::map<std::string, ObservedLink> links;  // by name
  std::vector<ObservedAddress> addresses;
  std::vector<RouteSpec> routes;  // protocol == hsnsd's, table in hsnsd's range
  std::vector<RuleSpec> rules;    // protocol == hsnsd's
};

struct RoutingParams {
  int table_base = 1000;
  int rule_priority_base = 1000;
  int protocol = 200;
  std::uint32_t table_for(int npu) const { return static_cast<std::uint32_t>(table_base + npu); }
  std::uint32_t priority_for(int npu) const { return static_cast<std::uint32_t>(rule_priority_base + npu); }
  bool in_range(std::uint32_t table) const {
    return table >= static_cast<std::uint32_t>(table_base) &&
           table < static_cast<std::uint32_t>(table_base) + 4096;
  }
};

enum class ActionKind { set_mtu, set_up, add_address, del_address, add_route, del_route, add_rule, del_rule };

struct Action {
  ActionKind kind = ActionKind::set_up;
  std::string netdev;
  int ifindex = 0;
  int mtu = 0;
  std::string address;  // "addr/len"
  std::string label;    // IPv4 address label ("<netdev>:hsns" when it fits)
  RouteSpec route;
  RuleSpec rule;
  std::string describe() const;  // e.g. "address 198.18.1.2/24 added on veth0"
};

struct PortPlan {
  std::string port_id;
  std::optional<std::string> netdev;
  std::optional<std::string> failure;
  std::vector<Action> actions;
};

struct Plan {
  std::vector<PortPlan> ports;
  std::vector<Action> cleanup;  // hsnsd's own leftovers (ports removed from the desired state)
};

Plan make_plan(const DesiredState& desired, const Observation& observed,
               const std::map<std::string, OwnedPort>& owned, const RoutingParams& routing);

// The label hsnsd gives IPv4 addresses on netdev ("" when the name is too long for one).
std::string address_label(const std::string& netdev);

}  // namespace hsns::daemon
