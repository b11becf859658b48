// Configuration of the aggregator's SNMP poller (the `snmp:` section of aggregator.yaml;
// docs/configuration.md, "SNMP polling").
//
// Contract: the poller is off unless the section lists at least one switch. apply_snmp_yaml() reads the
// section (an unknown key, a wrong type or an out-of-range value throws std::runtime_error naming the field,
// "snmp.switches[2].timeout_ms: ..."), reads each switch's credentials file at once (so a missing or bad file
// fails the start and check-config, not the first poll) and checks the cross-field rules: unique switch
// names, at most max_switches switches, SNMPv2c needs a community, SNMPv3 a user with authentication and
// privacy keys (authPriv only: the poller never sends keys or counters in clear over v3).
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hsns::ingest {

enum class SnmpVersion : std::uint8_t { v2c, v3 };
enum class SnmpAuthProtocol : std::uint8_t { sha, sha256, sha512 };
enum class SnmpPrivProtocol : std::uint8_t { aes };

// What a credentials file holds: `community` (v2c), or `user`, `auth_protocol` (SHA, SHA-256, SHA-512),
// `auth_password`, `priv_protocol` (AES) and `priv_password` (v3; passwords at least 8 characters, RFC 3414).
struct SnmpCredentials {
  std::string community;
  std::string user;
  SnmpAuthProtocol auth_protocol = SnmpAuthProtocol::sha256;
  std::string auth_password;
  SnmpPrivProtocol priv_protocol = SnmpPrivProtocol::aes;
  std::string priv_password;
};

struct SnmpSwitchConfig {
  std::string name;     // the topology device; entities are "<name>/<ifName>"
  std::string address;  // IPv4 or IPv6 address of the agent
  std::uint16_t port = 161;
  SnmpVersion version = SnmpVersion::v2c;
  std::string credentials_file;  // YAML (see SnmpCredentials); a v2c community may be given inline instead
  SnmpCredentials credentials;
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds timeout{2'000};  // per request; net-snmp doubles it on each retry
  int retries = 1;
};

struct SnmpConfig {
  std::vector<SnmpSwitchConfig> switches;
  std::size_t max_switches = 256;
  std::size_t max_interfaces = 1024;  // per switch: rows beyond it are not walked (counted)
  int bulk_rows = 16;                 // GETBULK max-repetitions: rows per request
};

void apply_snmp_yaml(const YAML::Node& node, SnmpConfig& config);
// Reads a credentials file; throws std::runtime_error naming `where` and the file's key at fault.
SnmpCredentials read_snmp_credentials(const std::string& path, const std::string& where);

}  // namespace hsns::ingest
