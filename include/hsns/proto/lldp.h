// The LLDP neighbours hsnsd hears on its parameter-plane ports (daemon/lldp): the telemetry section
// "lldp-neighbors" that hsnsd sends to the aggregator with its other report sections.
//
//   {"host": "h1", "ts_ms": 1700000000000,
//    "neighbors": [{"netdev": "npu0", "npu": 0, "source_mac": "aa:bb:cc:dd:ee:01",
//                   "chassis_id_subtype": "mac_address", "chassis_id": "aa:bb:cc:dd:ee:01",
//                   "port_id_subtype": "interface_name", "port_id": "swp12", "ttl_s": 120,
//                   "last_seen_ms": 1700000000000, "port_description": "to h1 npu0",
//                   "system_name": "leaf-3", "system_description": "...",
//                   "capabilities": {"system": 20, "enabled": 20},
//                   "management_addresses": [{"family": 1, "address": "198.18.7.1",
//                                             "interface_subtype": 2, "interface_number": 7}]}]}
//
// Contract: the rules of hsns/proto/codec.h (strict, unknown members refused, version in the media type,
// JSON and CBOR). Members: npu, port_description, system_name, system_description and capabilities are
// optional (omitted when absent); management_addresses is always written (possibly empty). Every string
// is what the LLDP parser made of the frame: printable ASCII, at most kMaxLldpText characters (a 255-byte
// TLV escaped as \xNN grows to 1020). For the topology's LLDP merge (POST /api/v1/topology/lldp) a
// neighbour is the observation {host, port: netdev, npu, neighbor_system: system_name (chassis_id when
// the neighbour sent none), neighbor_port: port_id} (lldp_observation_system()).
// Values only; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

inline constexpr std::size_t kMaxLldpNeighbors = 4096;
inline constexpr std::size_t kMaxLldpManagementAddresses = 8;
inline constexpr std::size_t kMaxLldpText = 1024;

// The subtype names of IEEE 802.1AB's Chassis ID (1..7) and Port ID (1..7), in subtype order.
inline constexpr std::array<const char*, 7> kLldpChassisIdSubtypes = {
    "chassis_component", "interface_alias", "port_component",  "mac_address",
    "network_address",   "interface_name",  "locally_assigned"};
inline constexpr std::array<const char*, 7> kLldpPortIdSubtypes = {
    "interface_alias", "port_component",   "mac_address",     "network_address",
    "interface_name",  "agent_circuit_id", "locally_assigned"};

struct LldpCapabilities {
  std::uint16_t system = 0;
  std::uint16_t enabled = 0;
  bool operator==(const LldpCapabilities&) const = default;
};

struct LldpManagementAddress {
  std::uint8_t family = 0;  // IANA address family (1 IPv4, 2 IPv6), 1..255
  std::string address;
  std::uint8_t interface_subtype = 0;
  std::uint32_t interface_number = 0;
  bool operator==(const LldpManagementAddress&) const = default;
};

struct LldpNeighbor {
  std::string netdev;
  std::optional<int> npu;
  std::string source_mac;
  std::string chassis_id_subtype;  // one of kLldpChassisIdSubtypes
  std::string chassis_id;
  std::string port_id_subtype;  // one of kLldpPortIdSubtypes
  std::string port_id;
  std::uint16_t ttl_s = 0;
  std::int64_t last_seen_ms = 0;  // Unix time of the last advertisement
  std::optional<std::string> port_description;
  std::optional<std::string> system_name;
  std::optional<std::string> system_description;
  std::optional<LldpCapabilities> capabilities;
  std::vector<LldpManagementAddress> management_addresses;
  bool operator==(const LldpNeighbor&) const = default;
};

struct LldpNeighbors {
  std::string host;
  std::int64_t ts_ms = 0;
  std::vector<LldpNeighbor> neighbors;
  bool operator==(const LldpNeighbors&) const = default;
};

Result<LldpNeighbors> read_lldp_neighbors(const nlohmann::json& document);
nlohmann::json to_json(const LldpNeighbors& neighbors);

// The neighbour's name for the topology's LLDP merge: its system name, else its chassis ID.
const std::string& lldp_observation_system(const LldpNeighbor& neighbor);

template <>
struct Kind<LldpNeighbors> {
  static constexpr const char* kName = "lldp-neighbors";
  static constexpr std::size_t kMaxBytes = 16 << 20;
  static Result<LldpNeighbors> read(const nlohmann::json& d) { return read_lldp_neighbors(d); }
  static nlohmann::json write(const LldpNeighbors& v) { return to_json(v); }
};

}  // namespace hsns::proto
