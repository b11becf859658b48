// hsnsd configuration: the YAML file (/etc/hsns/hsnsd.yaml by default) merged with command-line overrides.
//
// Contract:
// - load_config() reads and validates one file (parse_config_text() the same from text); unknown keys,
//   wrong types and out-of-range values are errors naming the key (returned as a value; yaml-cpp
//   exceptions never escape). A missing file is an error only when required (an explicit --config);
//   otherwise the defaults apply.
// - validate() checks a config assembled from file + flags (called again after overrides).
// - The `flow_probe:` section is parsed by parse_flow_probe_config (daemon/flows/flow_probe_config.h), so
//   its errors name the key the same way ("flow_probe.interfaces[0].attach: expected tc or xdp"). An absent
//   or null section, or one without interfaces, leaves the probe off (flow_probe_enabled() false).
// - The `report:` section (ReportConfig) turns the report uploader on when present (unless `enabled:
//   false`): the spool directory (default <state_dir>/report-spool), its byte bound, the report interval
//   and the payload bytes one upload round sends. With reporting on, the flow probe's batches go into the
//   spool instead of flow_probe.sink, so flow_probe.table_size is bounded by what one report can carry.
// - Plain data: copy freely; no threads, no I/O besides load_config's file read.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "flow_probe_config.h"
#include "hsns/log.h"

namespace hsns::daemon {

struct QosProfile {
  bool enabled = false;             // compare the NICs' QoS with this profile
  std::vector<int> pfc_priorities;  // priorities with PFC enabled (all others disabled)
  std::string trust = "dscp";       // "dscp" or "pcp"
  std::vector<int> ecn_priorities;  // priorities with RoCE ECN (NP and RP) enabled
};

// With reporting on, one harvest goes into one report (hsns/proto/report.h: at most 2^18 flow records): the
// largest flow table whose slots (roce_table_slots: the power of two >= 1.5 x table_size) stay within that.
inline constexpr std::uint32_t kMaxReportedFlowTableSize = 174762;

// The `report:` section (daemon/report/reporter_component.h).
struct ReportConfig {
  bool enabled = false;                    // true when the section is present (unless enabled: false)
  std::string spool_dir;                   // "" = <state_dir>/report-spool
  std::uint64_t max_bytes = 256ULL << 20;  // the spool's bound on disk
  std::chrono::milliseconds interval{10000};
  std::uint64_t upload_bytes = 16ULL << 20;  // payload bytes one upload round reads and sends
};

struct DaemonConfig {
  std::string host;  // name registered with the aggregator ("" = gethostname)
  std::string aggregator_url = "http://127.0.0.1:8080";
  std::string token_file;  // agent bearer token ("" = none)
  std::string ca_file;     // https only
  std::chrono::milliseconds request_timeout{5000};
  std::string state_dir = "/var/lib/hsns";
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string metrics_listen = "127.0.0.1:9810";  // "" disables /metrics
  std::chrono::milliseconds interval{10000};      // fetch + reconcile period
  // Reading period of the host telemetry (counters, module diagnostics, QP inventory): telemetry_interval_ms,
  // unset = `interval`. Its own setting so that a host can read and report every second without polling
  // the aggregator's desired state (and reconciling) every second too.
  std::optional<std::chrono::milliseconds> telemetry_interval;
  std::chrono::milliseconds backoff_initial{1000};
  std::chrono::milliseconds backoff_max{60000};
  int table_base = 1000;            // routing table of NPU n = table_base + n
  int rule_priority_base = 1000;    // priority of NPU n's "from" rule = rule_priority_base + n
  int route_protocol = 200;         // rtnetlink protocol marking hsnsd's routes and rules
  std::map<int, std::string> npus;  // NPU index -> netdev
  QosProfile qos;
  bool isolation_enabled = false;
  std::string isolation_pin_dir = "/sys/fs/bpf/hsns/isolation";
  FlowProbeConfig flow_probe;               // RoCEv2 flow probe; off while flow_probe.interfaces is empty
  ReportConfig report;                      // the report uploader; off while report.enabled is false
  log::Level log_level = log::Level::info;  // messages below this level are not written
};

inline std::chrono::milliseconds telemetry_interval(const DaemonConfig& config) {
  return config.telemetry_interval.value_or(config.interval);
}

inline bool flow_probe_enabled(const DaemonConfig& config) {
  return !config.flow_probe.interfaces.empty();
}
// The spool directory in use: report.spool_dir, else <state_dir>/report-spool.
std::string report_spool_dir(const DaemonConfig& config);
// True when a and b describe the same flow probe (every field, interfaces in order).
bool same_flow_probe(const FlowProbeConfig& a, const FlowProbeConfig& b);
// True when a and b differ only in what the harvester uses (interval, sink): the attached probe can stay.
bool same_flow_probe_attachment(const FlowProbeConfig& a, const FlowProbeConfig& b);

tl::expected<DaemonConfig, std::string> load_config(const std::string& path, bool required);
// The same reading and validation of a configuration file's text; errors start with "<origin>: ".
tl::expected<DaemonConfig, std::string> parse_config_text(const std::string& yaml, const std::string& origin);
tl::expected<void, std::string> validate(const DaemonConfig& config);
// The host name to use: config.host, else the kernel's host name.
std::string effective_host(const DaemonConfig& config);

}  // namespace hsns::daemon
