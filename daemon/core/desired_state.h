// The aggregator's DesiredState document (GET /api/v1/agents/{host}/desired), parsed strictly.
//
// Contract: parse_desired_state() never throws; a malformed document (not JSON, a missing or mistyped
// field, an address outside its cidr, two ports on one netdev) is an error naming the field, and the
// caller keeps its previous desired state. Unknown fields are ignored (the aggregator may add some).
// Plain data, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/ip.h"

namespace hsns::daemon {

struct DesiredPort {
  std::string port_id;
  std::string name;
  int npu = 0;
  std::optional<std::string> netdev;  // null when the NPU is not registered
  IpAddress address;
  IpPrefix cidr;
  int mtu = 0;
  std::optional<IpAddress> gateway;
  std::vector<IpPrefix> allowed_prefixes;

  std::string address_cidr() const { return address.to_string() + "/" + std::to_string(cidr.length()); }
};

struct DesiredState {
  std::string host;
  std::int64_t generation = 0;
  std::vector<DesiredPort> ports;
};

tl::expected<DesiredState, std::string> parse_desired_state(const std::string& body);
std::string desired_state_to_json(const DesiredState& state);

}  // namespace hsns::daemon
