// Parsing and stateless validation of network-management request bodies and parameters.
//
// Contract: each parse_* function takes untrusted input (a parsed JSON object, a path parameter) and
// returns either a fully validated value or a 400 Problem naming every offending field
// ("allocation_pools[1].end"). Unknown fields are rejected. No I/O, no stored state: checks that need
// stored state (duplicates, overlaps with other subnets, free addresses) belong to the store. These
// functions are the fuzzing surface (tests/fuzz/fuzz_request_bodies.cpp) and must not throw or crash
// on any input.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/problem.h"
#include "model/network.h"

namespace hsns::network {

inline constexpr int kMinMtu = 576;
inline constexpr int kMinMtuV6 = 1280;
inline constexpr int kMaxMtu = 9216;
inline constexpr int kDefaultMtu = 9000;
inline constexpr int kMaxNpusPerHost = 64;
inline constexpr std::size_t kMaxPools = 64;
inline constexpr const char* kDefaultTenant = "default";

// Host names: 1..253 characters of [A-Za-z0-9._-], starting with an alphanumeric.
std::optional<std::string> check_host_name(std::string_view name);
// Subnet/port names and tenants: 1..64 characters of [A-Za-z0-9._-], starting with an alphanumeric.
std::optional<std::string> check_name(std::string_view name);

tl::expected<HostRegistration, Problem> parse_host_registration(std::string_view host,
                                                                const nlohmann::json& body);
tl::expected<SubnetSpec, Problem> parse_subnet_create(const nlohmann::json& body);
tl::expected<SubnetUpdate, Problem> parse_subnet_update(const nlohmann::json& body);
tl::expected<PortSpec, Problem> parse_port_create(const nlohmann::json& body);

// Subnet rules: parse_subnet_create refuses a cidr that check_subnet_prefix() refuses (hsns/ip.h:
// multicast, loopback, link-local, IPv4-mapped, ... with the reason), and a gateway or pool bound that
// check_host_address() refuses; parse_port_create refuses an ip_address check_unicast_address() refuses.
// Its pools must pass ipam::validate_pools() (services/ipam.h; every finding is listed).

}  // namespace hsns::network
