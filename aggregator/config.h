// Configuration of hsns-aggregator: a YAML file (default /etc/hsns/aggregator.yaml) overridden by flags.
//
// Contract:
// - parse_command_line() understands `hsns-aggregator [run] [flags]`, `hsns-aggregator check-config
//   [flags]` and `--version`; it loads the YAML file named by --config (a missing default file is fine,
//   a missing explicitly named one is an error), then applies the flags on top.
// - Unknown YAML keys and out-of-range values are errors that name the key; they never start a server
//   with a half-understood configuration.
// - validate() checks cross-field rules: auth may be off only with insecure_no_auth AND a loopback
//   listen address; TLS needs both certificate and key; the database setting names a backend this
//   binary has (store::parse_database_setting: an SQLite file path; a postgresql:// URL is refused as
//   planned, not built).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "api/overlays/thresholds.h"
#include "brain/alarm_config.h"
#include "brain/pipeline_settings.h"
#include "hsns/log.h"
#include "http/server.h"
#include "http/sessions.h"
#include "ingest/data_time.h"
#include "ingest/prometheus_config.h"
#include "ingest/snmp_config.h"
#include "ingest/syslog_config.h"

namespace hsns {

inline constexpr const char* kDefaultConfigPath = "/etc/hsns/aggregator.yaml";
// The topology routes (PUT /api/v1/topology and everything under it) have their own body limit, sized
// for an import of 100,000 hosts x 8 NPUs (docs/configuration.md): http.topology_body_limit_bytes,
// --topology-body-limit.
inline constexpr const char* kTopologyPathPrefix = "/api/v1/topology";
inline constexpr std::size_t kDefaultTopologyBodyLimit = std::size_t{256} << 20;

// The HTTP limits with the topology routes' own body limit set to `topology_body_limit`.
http::ServerLimits with_topology_body_limit(http::ServerLimits limits, std::size_t topology_body_limit);
// The telemetry report route (POST /api/v1/agents/{host}/reports) has its own body limit too:
// http.report_body_limit_bytes, --report-body-limit (at most the report kind's 256 MiB).
inline constexpr const char* kReportPathPattern = "/api/v1/agents/*/reports";
inline constexpr std::size_t kDefaultReportBodyLimit = std::size_t{64} << 20;
http::ServerLimits with_report_body_limit(http::ServerLimits limits, std::size_t report_body_limit);

// What the aggregator believes of what senders send (the `ingest:` section; docs/security.md).
struct IngestSettings {
  ingest::DataTimeWindow data_time;  // ingest.max_future_s, ingest.max_past_s (0: no past bound)
  // Request bodies and their decoded documents together (hsns/memory_budget.h); beyond it 503.
  std::size_t memory_budget_bytes = std::size_t{1536} << 20;
};

struct AggregatorConfig {
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 8080;
  int threads = 2;
  std::string database = "/var/lib/hsns/aggregator.db";  // store/factory.h: SQLite file path
  std::string tokens_file = "/etc/hsns/tokens.yaml";
  bool insecure_no_auth = false;  // only for local demos; forces a loopback listen address
  std::string tls_certificate;    // PEM chain; TLS is on when set
  std::string tls_private_key;    // PEM key
  http::ServerLimits limits = with_report_body_limit(with_topology_body_limit({}, kDefaultTopologyBodyLimit),
                                                     kDefaultReportBodyLimit);
  // Retention of telemetry report batches (telemetry.*, --telemetry-*; 0 switches a limit off).
  std::chrono::seconds telemetry_max_age{std::chrono::hours(24 * 7)};
  std::uint64_t telemetry_max_bytes = std::uint64_t{8} << 30;
  std::chrono::milliseconds telemetry_prune_interval{60'000};
  int worker_threads = 2;              // threads for heavy requests (import, generate, search, schedule)
  std::size_t heavy_queue_limit = 16;  // heavy requests that may wait for a worker; more get 503
  int worker_nice = 10;                // added to the process's niceness for worker threads (0 = same)
  std::chrono::milliseconds shutdown_grace{10'000};
  std::string ready_file;  // written with "<address> <port>" once listening (for tests and scripts)
  log::Level log_level = log::Level::info;  // --log-level: messages below it are not written
  IngestSettings ingest;                    // data time window, memory budget of request bodies
  ingest::SyslogConfig syslog;              // syslog receivers (off unless a listen address is set)
  ingest::SnmpConfig snmp;                  // SNMP poller (off unless switches are listed)
  alarms::AlarmServiceOptions alarms;       // the alarm engine's damping, windows and caps
  alarms::AlertmanagerConfig alertmanager;  // Alertmanager push (off unless URLs are listed)
  brain_pipeline::BrainSettings brain;      // the network brain's live pipeline (brain/engine.h)
  // prometheus_sources: Prometheus servers whose query API is polled for KPIs (none unless listed)
  ingest::PrometheusSourcesConfig prometheus;
  // The dashboard's built assets (web_root, --web-root); "" = default_web_root().
  std::string web_root;
  http::SessionLimits sessions;  // browser sessions: http.session_ttl_s, http.max_sessions
  // The dashboard's overlays and the thresholds they grade by (overlays.*; GET /api/v1/overlays).
  overlays::OverlaySettings overlays = overlays::default_overlays();
};

// The dashboard's assets when web_root is not set: the build tree's web output for a binary run from its
// build tree, else the installed /usr/share/hsns/web (the package's path).
std::string default_web_root();

enum class Command { run, check_config, exit_ok };

struct CommandLine {
  Command command = Command::run;
  AggregatorConfig config;
};

// argv parsing; on --help/--version prints and returns Command::exit_ok. Errors carry the message.
tl::expected<CommandLine, std::string> parse_command_line(int argc, char** argv);
tl::expected<AggregatorConfig, std::string> load_config_yaml(const std::string& text, AggregatorConfig base);
tl::expected<void, std::string> validate(const AggregatorConfig& config);

}  // namespace hsns
