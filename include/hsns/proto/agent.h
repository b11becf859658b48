// Documents hsnsd and hsns-aggregator exchange over the agent API (docs/agent-protocol.md):
//   host-registration  PUT /api/v1/hosts/{host}             daemon → aggregator   HostRegistration
//   desired-state      GET /api/v1/agents/{host}/desired    aggregator → daemon   DesiredState
//   status-report      PUT /api/v1/agents/{host}/status     daemon → aggregator   StatusReport
// (Telemetry batches (health reports) are planned as the next kind and not defined yet.)
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

namespace hsns {
class FieldReader;
}

namespace hsns::proto {

// ---- host registration ----

inline constexpr std::size_t kMaxRegisteredNpus = 64;  // indexes 0..63
inline constexpr std::int64_t kMaxLinkSpeedMbps = 10'000'000;

struct RegisteredNpu {
  int index = 0;
  std::string netdev;                // a Linux interface name (the kernel's dev_valid_name rules)
  std::string mac;                   // six colon-separated hex octets; the reader returns it lower-case
  std::string rdma_device;           // "" when the NPU has none (optional on read, always written)
  std::int64_t link_speed_mbps = 0;  // 0 when unknown (likewise)
  bool operator==(const RegisteredNpu&) const = default;
};

// The NPUs of one host, in the order sent; no index and no netdev twice. The host's name is not a member:
// it is the request path's ({host}), checked by the aggregator.
struct HostRegistration {
  std::vector<RegisteredNpu> npus;
  bool operator==(const HostRegistration&) const = default;
};

// Reads one registration with the caller's reader, so that a caller answering a Problem (the REST route)
// lists these findings with its own; every NPU's findings come in the order of its members (types, unknown
// members, netdev and MAC rules, repeats), then the caller's finish() adds the document's unknown members.
// nullopt when any finding was recorded. The other form is the contract's strict reader (kind invalid).
std::optional<HostRegistration> read_host_registration_fields(FieldReader& reader);
Result<HostRegistration> read_host_registration(const nlohmann::json& document);
// Every member of every NPU, rdma_device and link_speed_mbps included.
nlohmann::json to_json(const HostRegistration& registration);

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
struct Kind<HostRegistration> {
  static constexpr const char* kName = "host-registration";
  static constexpr std::size_t kMaxBytes = 64 << 10;
  static Result<HostRegistration> read(const nlohmann::json& d) { return read_host_registration(d); }
  static nlohmann::json write(const HostRegistration& v) { return to_json(v); }
};

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
