// Configuration of the aggregator's syslog receivers (the `syslog:` section of aggregator.yaml and the
// --syslog-udp / --syslog-tcp flags; docs/configuration.md, "Syslog ingest").
//
// Contract: both receivers are off unless a listen address is set. apply_syslog_yaml() reads the section's
// keys (an unknown key or an out-of-range value throws std::runtime_error naming "syslog.<key>");
// parse_listen_endpoint() reads "address:port" ("[v6]:port" for IPv6; port 0 lets the kernel choose).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <tl/expected.hpp>

namespace hsns::ingest {

struct ListenEndpoint {
  std::string address;
  std::uint16_t port = 0;
};

struct SyslogConfig {
  std::optional<ListenEndpoint> udp;  // one message per datagram
  std::optional<ListenEndpoint> tcp;  // RFC 6587, octet counting or LF framing per message
  std::size_t max_message_bytes = 8192;
  std::size_t max_connections = 64;            // TCP; a newcomer beyond takes an idle unknown sender's slot
  std::size_t max_connections_per_source = 8;  // TCP connections from one address
  std::size_t messages_per_device = 1000;      // kept in memory for GET /api/v1/logs (events too)
  std::size_t max_devices = 32'768;            // topology devices kept in memory
  std::size_t buffer_bytes = std::size_t{256} << 20;         // every kept message and event, in bytes
  std::size_t unknown_devices = 256;                         // senders no topology names, kept apart
  std::size_t unknown_buffer_bytes = std::size_t{32} << 20;  // their share of buffer_bytes
  std::size_t tcp_idle_timeout_ms = 300'000;                 // a TCP connection silent this long is closed
  std::size_t tcp_frame_timeout_ms = 10'000;                 // a frame begun must be complete within this
};

tl::expected<ListenEndpoint, std::string> parse_listen_endpoint(const std::string& text);
void apply_syslog_yaml(const YAML::Node& node, SyslogConfig& config);

}  // namespace hsns::ingest
