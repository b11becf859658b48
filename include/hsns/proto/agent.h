// Documents hsnsd and hsns-aggregator exchange over the agent API (docs/agent-protocol.md):
//   desired-state   GET /api/v1/agents/{host}/desired   aggregator → daemon   DesiredState
//   status-report   PUT /api/v1/agents/{host}/status    daemon → aggregator   StatusReport
// (Host registration, PUT /api/v1/hosts/{host}, is still read by aggregator/api/network/requests.cpp and
// written by daemon/core/inventory.cpp; it joins this contract next. Telemetry batches (health reports)
// are planned as the next kind and not defined yet.)
//
// Contract: the rules of hsns/proto/codec.h (strict, unknown members refused, version in the media type,
// JSON and CBOR). read_*() take the strict DOM and return the typed value or an Error naming every bad
// field; to_json() returns the canonical v1 document, which is what the REST API documents: the
// aggregator's desired-state body and the daemon's status body are written by these functions.
// Values only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/ip.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

// ---- desired state ----

inline constexpr std::size_t kMaxDesiredPorts = 4096;
inline constexpr std::size_t kMaxAllowedPrefixes = 256;

struct DesiredPort {
  std::string port_id;
  std::string name;
  int npu = 0;
  std::optional<std::string> netdev;  // null when the host did not register the NPU
  std::optional<std::string> mac;     // likewise
  // Which subnet the port is on. Always written by the aggregator; optional on read because hsnsd's state
  // files of earlier versions kept the desired state without them.
  std::optional<std::string> subnet_id;
  std::optional<std::string> subnet_name;
  std::optional<std::string> tenant;
  IpAddress address;
  IpPrefix cidr;
  int mtu = 0;
  std::optional<IpAddress> gateway;
  std::vector<IpPrefix> allowed_prefixes;

  std::string address_cidr() const { return address.to_string() + "/" + std::to_string(cidr.length()); }
};

// Every port's address and gateway lie inside its cidr, prefix_length equals the cidr's, and no two ports
// name the same netdev.
struct DesiredState {
  std::string host;
  std::int64_t generation = 0;
  std::vector<DesiredPort> ports;
};

Result<DesiredState> read_desired_state(const nlohmann::json& document);
nlohmann::json to_json(const DesiredState& state);

// ---- status report ----

inline constexpr std::size_t kMaxReportPorts = 256;
inline constexpr std::size_t kMaxReportQos = 64;
inline constexpr std::size_t kMaxReportStrings = 64;  // drift and findings entries per item
inline constexpr std::size_t kMaxReportStringLength = 512;

enum class PortState { converged, failed, pending };
enum class QosState { conformant, drift, unknown };
const char* to_string(PortState state);
const char* to_string(QosState state);

struct PortReport {
  std::string port_id;
  std::optional<std::string> netdev;  // none when the host has no interface for the port's NPU
  PortState state = PortState::pending;
  std::string reason;              // written when not empty
  std::vector<std::string> drift;  // written when not empty
  std::optional<std::uint64_t> isolation_dropped_packets;
};

struct QosReport {
  std::string netdev;
  QosState state = QosState::unknown;
  std::vector<std::string> findings;
};

struct DaemonInfo {
  std::optional<std::string> version;
  std::optional<std::string> started_at;
};

struct StatusReport {
  std::int64_t applied_generation = 0;
  std::vector<PortReport> ports;
  std::vector<QosReport> qos;
  std::optional<DaemonInfo> daemon;
};

Result<StatusReport> read_status_report(const nlohmann::json& document);
nlohmann::json to_json(const StatusReport& report);

template <>
struct Kind<DesiredState> {
  static constexpr const char* kName = "desired-state";
  static constexpr std::size_t kMaxBytes = 16 << 20;
  static Result<DesiredState> read(const nlohmann::json& d) { return read_desired_state(d); }
  static nlohmann::json write(const DesiredState& v) { return to_json(v); }
};

template <>
struct Kind<StatusReport> {
  static constexpr const char* kName = "status-report";
  static constexpr std::size_t kMaxBytes = 16 << 20;
  static Result<StatusReport> read(const nlohmann::json& d) { return read_status_report(d); }
  static nlohmann::json write(const StatusReport& v) { return to_json(v); }
};

}  // namespace hsns::proto
