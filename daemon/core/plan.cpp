#include "plan.h"

#include <sys/socket.h>

#include <algorithm>
#include <set>

namespace hsns::daemon {
namespace {

std::string host_part(const std::string& cidr) {
  return cidr.substr(0, cidr.find('/'));
}

std::vector<RouteSpec> desired_routes(const DesiredPort& p, int ifindex, const RoutingParams& r) {
  std::vector<RouteSpec> out;
  const auto table = r.table_for(p.npu);
  out.push_back({table, p.cidr.to_string(), "", ifindex, p.address.to_string(), false});
  const std::string any = p.address.family() == IpFamily::v4 ? "0.0.0.0/0" : "::/0";
  if (p.gateway)
    out.push_back({table, any, p.gateway->to_string(), ifindex, "", false});
  else  // the catch-all: without it, the rule's lookup falls through to the main table and another subnet
    out.push_back({table, any, "", 0, "", true});
  return out;
}

RuleSpec desired_rule(const DesiredPort& p, const RoutingParams& r) {
  const bool v4 = p.address.family() == IpFamily::v4;
  return {v4 ? AF_INET : AF_INET6, p.address.to_string() + (v4 ? "/32" : "/128"), r.table_for(p.npu),
          r.priority_for(p.npu)};
}

Action make(ActionKind kind, const std::string& netdev, int ifindex) {
  Action a;
  a.kind = kind;
  a.netdev = netdev;
  a.ifindex = ifindex;
  return a;
}

PortPlan plan_port(const DesiredPort& p, const Observation& o, const std::map<std::string, OwnedPort>& owned,
                   const RoutingParams& r, std::set<RouteSpec>& wanted_routes,
                   std::set<RuleSpec>& wanted_rules) {
  PortPlan plan{p.port_id, p.netdev, std::nullopt, {}};
  if (!p.netdev) {
    plan.failure = "NPU " + std::to_string(p.npu) + " has no registered netdev";
    return plan;
  }
  const auto link_it = o.links.find(*p.netdev);
  if (link_it == o.links.end()) {
    plan.failure = "netdev " + *p.netdev + " does not exist";
    return plan;
  }
  const ObservedLink& link = link_it->second;
  const std::string want = p.address_cidr();
  const std::string want_host = p.address.to_string();
  bool present = false;
  for (const auto& a : o.addresses) {
    if (host_part(a.cidr) != want_host) continue;
    if (a.ifindex != link.ifindex) {
      std::string other = std::to_string(a.ifindex);
      for (const auto& [name, l] : o.links)
        if (l.ifindex == a.ifindex) other = name;
      plan.failure = "address conflict: " + want_host + " is already configured on " + other;
      return plan;
    }
    if (a.cidr == want)
      present = true;
    else {
      plan.failure = "address conflict: " + a.cidr + " is on " + link.name + " with another prefix length";
      return plan;
    }
  }
  if (link.mtu != p.mtu) {
    auto a = make(ActionKind::set_mtu, link.name, link.ifindex);
    a.mtu = p.mtu;
    plan.actions.push_back(a);
  }
  if (!link.up) plan.actions.push_back(make(ActionKind::set_up, link.name, link.ifindex));
  // Addresses hsnsd added earlier on this netdev that are no longer wanted.
  if (const auto own = owned.find(link.name); own != owned.end()) {
    for (const auto& cidr : own->second.addresses) {
      if (cidr == want) continue;
      for (const auto& a : o.addresses) {
        if (a.ifindex == link.ifindex && a.cidr == cidr) {
          auto del = make(ActionKind::del_address, link.name, link.ifindex);
          del.address = cidr;
          plan.actions.push_back(del);
        }
      }
    }
  }
  if (!present) {
    auto add = make(ActionKind::add_address, link.name, link.ifindex);
    add.address = want;
    if (p.address.family() == IpFamily::v4) add.label = address_label(link.name);
    plan.actions.push_back(add);
  }
  for (const auto& route : desired_routes(p, link.ifindex, r)) {
    wanted_routes.insert(route);
    if (std::find(o.routes.begin(), o.routes.end(), route) == o.routes.end()) {
      auto add = make(ActionKind::add_route, link.name, link.ifindex);
      add.route = route;
      plan.actions.push_back(add);
    }
  }
  const auto rule = desired_rule(p, r);
  wanted_rules.insert(rule);
  if (std::find(o.rules.begin(), o.rules.end(), rule) == o.rules.end()) {
    auto add = make(ActionKind::add_rule, link.name, link.ifindex);
    add.rule = rule;
    plan.actions.push_back(add);
  }
  return plan;
}

}  // namespace

std::string address_label(const std::string& netdev) {
  const std::string label = netdev + ":hsns";
  return label.size() <= 15 ? label : "";
}

Plan make_plan(const DesiredState& desired, const Observation& o,
               const std::map<std::string, OwnedPort>& owned, const RoutingParams& r) {
  Plan plan;
  std::set<RouteSpec> wanted_routes;
  std::set<RuleSpec> wanted_rules;
  std::set<std::string> desired_netdevs;
  for (const auto& p : desired.ports) {
    plan.ports.push_back(plan_port(p, o, owned, r, wanted_routes, wanted_rules));
    if (p.netdev) desired_netdevs.insert(*p.netdev);
  }
  // Ports that left the desired state: remove the addresses hsnsd added there.
  for (const auto& [netdev, own] : owned) {
    if (desired_netdevs.count(netdev)) continue;
    const auto link = o.links.find(netdev);
    if (link == o.links.end()) continue;
    for (const auto& cidr : own.addresses) {
      for (const auto& a : o.addresses) {
        if (a.ifindex == link->second.ifindex && a.cidr == cidr) {
          auto del = make(ActionKind::del_address, netdev, a.ifindex);
          del.address = cidr;
          plan.cleanup.push_back(del);
        }
      }
    }
  }
  // Rules first, then routes, so no rule points at a half-emptied table.
  for (const auto& rule : o.rules) {
    if (wanted_rules.count(rule) || !r.in_range(rule.table)) continue;
    auto del = make(ActionKind::del_rule, "", 0);
    del.rule = rule;
    plan.cleanup.push_back(del);
  }
  for (const auto& route : o.routes) {
    if (wanted_routes.count(route) || !r.in_range(route.table)) continue;
    std::string name;
    for (const auto& [n, l] : o.links)
      if (l.ifindex == route.ifindex) name = n;
    auto del = make(ActionKind::del_route, name, route.ifindex);
    del.route = route;
    plan.cleanup.push_back(del);
  }
  return plan;
}

std::string Action::describe() const {
  auto route_text = [this] {
    return (route.unreachable ? "unreachable " : "") + route.dst +
           (route.gateway.empty() ? "" : " via " + route.gateway) + " table " + std::to_string(route.table);
  };
  switch (kind) {
    case ActionKind::set_mtu:
      return "mtu of " + netdev + " set to " + std::to_string(mtu);
    case ActionKind::set_up:
      return "link " + netdev + " set up";
    case ActionKind::add_address:
      return "address " + address + " added on " + netdev;
    case ActionKind::del_address:
      return "address " + address + " removed from " + netdev;
    case ActionKind::add_route:
      return "route " + route_text() + " added";
    case ActionKind::del_route:
      return "route " + route_text() + " removed";
    case ActionKind::add_rule:
      return "rule from " + rule.from + " table " + std::to_string(rule.table) + " added";
    case ActionKind::del_rule:
      return "rule from " + rule.from + " table " + std::to_string(rule.table) + " removed";
  }
  return "?";
}

}  // namespace hsns::daemon
