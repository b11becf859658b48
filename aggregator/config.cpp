#include "config.h"

#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <boost/asio/ip/address.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include "hsns/version.h"
#include "store/factory.h"

namespace hsns {
namespace {

template <typename T>
T read_int(const YAML::Node& n, const std::string& key, long long min, long long max) {
  const auto v = n.as<long long>();
  if (v < min || v > max) {
    throw std::runtime_error(key + ": must be between " + std::to_string(min) + " and " +
                             std::to_string(max));
  }
  return static_cast<T>(v);
}

// A list of origins ("https://dash.example.com:8443"), each stored normalised (http/websocket.h).
std::vector<std::string> read_origins(const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) throw std::runtime_error(key + ": must be a list of origins (scheme://host[:port])");
  std::vector<std::string> origins;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const auto text = n[i].as<std::string>();
    auto origin = http::normalize_origin(text);
    if (!origin) {
      std::string what = key;
      what.append("[").append(std::to_string(i)).append("]: '").append(text);
      what.append("' is not an origin (http or https scheme, host, optional port, no path)");
      throw std::runtime_error(what);
    }
    origins.push_back(std::move(*origin));
  }
  return origins;
}

void apply_http(const YAML::Node& node, AggregatorConfig& c) {
  auto& l = c.limits;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "http." + key;
    if (key == "header_limit_bytes") {
      l.header_limit = read_int<std::size_t>(v, where, 1024, 1 << 20);
    } else if (key == "body_limit_bytes") {
      l.body_limit = read_int<std::size_t>(v, where, 1024, 1LL << 30);
    } else if (key == "topology_body_limit_bytes") {
      l = with_topology_body_limit(std::move(l), read_int<std::size_t>(v, where, 1024, 1LL << 32));
    } else if (key == "report_body_limit_bytes") {
      l = with_report_body_limit(std::move(l), read_int<std::size_t>(v, where, 1024, 256LL << 20));
    } else if (key == "idle_timeout_ms") {
      l.idle_timeout = std::chrono::milliseconds(read_int<long long>(v, where, 100, 3'600'000));
    } else if (key == "read_timeout_ms") {
      l.read_timeout = std::chrono::milliseconds(read_int<long long>(v, where, 100, 3'600'000));
    } else if (key == "pipeline_limit") {
      l.pipeline_limit = read_int<std::size_t>(v, where, 1, 128);
    } else if (key == "max_connections") {
      l.max_connections = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "worker_threads") {
      c.worker_threads = read_int<int>(v, where, 1, 256);
    } else if (key == "heavy_queue_limit") {
      c.heavy_queue_limit = read_int<std::size_t>(v, where, 0, 10'000);
    } else if (key == "worker_nice") {
      c.worker_nice = read_int<int>(v, where, 0, 19);
    } else if (key == "websocket_allowed_origins") {
      l.websocket.allowed_origins = read_origins(v, where);
    } else if (key == "websocket_queue_messages") {
      l.websocket.queue_messages = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "websocket_queue_bytes") {
      l.websocket.queue_bytes = read_int<std::size_t>(v, where, 1024, 1LL << 30);
    } else if (key == "websocket_max_message_bytes") {
      l.websocket.max_message_bytes = read_int<std::size_t>(v, where, 125, 1LL << 30);
    } else if (key == "session_ttl_s") {
      c.sessions.ttl = std::chrono::seconds(read_int<long long>(v, where, 1, 30LL * 86'400));
    } else if (key == "max_sessions") {
      c.sessions.max_sessions = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "sessions_per_user") {
      c.sessions.sessions_per_user = read_int<std::size_t>(v, where, 0, 1'000'000);
    } else if (key == "websocket_streams_per_user") {
      c.sessions.streams_per_user = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "websocket_max_streams") {
      c.sessions.max_streams = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "auth_failure_burst") {
      c.sessions.auth_failures.burst = read_int<std::size_t>(v, where, 1, 1'000'000);
    } else if (key == "auth_failure_refill_ms") {
      c.sessions.auth_failures.refill =
          std::chrono::milliseconds(read_int<long long>(v, where, 1, 3'600'000));
    } else if (key == "websocket_stall_timeout_ms") {
      l.websocket.stall_timeout = std::chrono::milliseconds(read_int<long long>(v, where, 100, 3'600'000));
    } else if (key == "websocket_idle_timeout_ms") {
      l.websocket.idle_timeout = std::chrono::milliseconds(read_int<long long>(v, where, 1000, 3'600'000));
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

void apply_telemetry(const YAML::Node& node, AggregatorConfig& c) {
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const std::string where = "telemetry." + key;
    if (key == "max_age_s") {
      c.telemetry_max_age =
          std::chrono::seconds(read_int<long long>(kv.second, where, 0, 10LL * 365 * 86'400));
    } else if (key == "max_bytes") {
      c.telemetry_max_bytes = read_int<std::uint64_t>(kv.second, where, 0, 1LL << 50);
    } else if (key == "prune_interval_ms") {
      c.telemetry_prune_interval =
          std::chrono::milliseconds(read_int<long long>(kv.second, where, 100, 86'400'000));
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

void apply_ingest(const YAML::Node& node, IngestSettings& settings) {
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const std::string where = "ingest." + key;
    if (key == "max_future_s") {
      settings.data_time.max_future =
          std::chrono::seconds(read_int<long long>(kv.second, where, 1, 10LL * 365 * 86'400));
    } else if (key == "max_past_s") {
      settings.data_time.max_past =
          std::chrono::seconds(read_int<long long>(kv.second, where, 0, 10LL * 365 * 86'400));
    } else if (key == "memory_budget_bytes") {
      settings.memory_budget_bytes = read_int<std::size_t>(kv.second, where, 64LL << 20, 1LL << 40);
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

bool is_loopback(const std::string& address) {
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(address, ec);
  return !ec && a.is_loopback();
}

}  // namespace

http::ServerLimits with_topology_body_limit(http::ServerLimits limits, std::size_t topology_body_limit) {
  std::erase_if(limits.path_body_limits, [](const auto& p) { return p.prefix == kTopologyPathPrefix; });
  limits.path_body_limits.push_back({kTopologyPathPrefix, topology_body_limit});
  return limits;
}

http::ServerLimits with_report_body_limit(http::ServerLimits limits, std::size_t report_body_limit) {
  std::erase_if(limits.path_body_limits, [](const auto& p) { return p.prefix == kReportPathPattern; });
  limits.path_body_limits.push_back({kReportPathPattern, report_body_limit});
  return limits;
}

std::string default_web_root() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path() == std::filesystem::path(HSNS_BUILD_BINARY_DIR)) return HSNS_BUILD_WEB_ROOT;
  return HSNS_INSTALL_WEB_ROOT;
}

tl::expected<AggregatorConfig, std::string> load_config_yaml(const std::string& text, AggregatorConfig c) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return c;
    if (!root.IsMap()) return tl::unexpected(std::string("the configuration must be a YAML map"));
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      const auto& v = kv.second;
      if (key == "listen_address") {
        c.listen_address = v.as<std::string>();
      } else if (key == "port") {
        c.port = read_int<std::uint16_t>(v, key, 0, 65535);
      } else if (key == "threads") {
        c.threads = read_int<int>(v, key, 1, 256);
      } else if (key == "database") {
        c.database = v.as<std::string>();
      } else if (key == "tokens_file") {
        c.tokens_file = v.as<std::string>();
      } else if (key == "insecure_no_auth") {
        c.insecure_no_auth = v.as<bool>();
      } else if (key == "tls") {
        for (const auto& t : v) {
          const auto tkey = t.first.as<std::string>();
          if (tkey == "certificate") {
            c.tls_certificate = t.second.as<std::string>();
          } else if (tkey == "private_key") {
            c.tls_private_key = t.second.as<std::string>();
          } else {
            return tl::unexpected("unknown key 'tls." + tkey + "'");
          }
        }
      } else if (key == "http") {
        apply_http(v, c);
      } else if (key == "telemetry") {
        apply_telemetry(v, c);
      } else if (key == "ingest") {
        apply_ingest(v, c.ingest);
      } else if (key == "syslog") {
        ingest::apply_syslog_yaml(v, c.syslog);
      } else if (key == "snmp") {
        ingest::apply_snmp_yaml(v, c.snmp);
      } else if (key == "alarms") {
        alarms::apply_alarms_yaml(v, c.alarms);
      } else if (key == "alertmanager") {
        alarms::apply_alertmanager_yaml(v, c.alertmanager);
      } else if (key == "brain") {
        brain_pipeline::apply_brain_yaml(v, c.brain);
      } else if (key == "prometheus_sources") {
        ingest::apply_prometheus_sources_yaml(v, c.prometheus);
      } else if (key == "overlays") {
        overlays::apply_overlays_yaml(v, c.overlays);
      } else if (key == "web_root") {
        c.web_root = v.as<std::string>();
      } else if (key == "shutdown_grace_ms") {
        c.shutdown_grace = std::chrono::milliseconds(read_int<long long>(v, key, 0, 600'000));
      } else {
        return tl::unexpected("unknown key '" + key + "'");
      }
    }
  } catch (const YAML::Exception& e) {
    return tl::unexpected(std::string("invalid YAML: ") + e.what());
  } catch (const std::runtime_error& e) {
    return tl::unexpected(std::string(e.what()));
  }
  return c;
}

tl::expected<void, std::string> validate(const AggregatorConfig& c) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(c.listen_address, ec);
  if (ec) return tl::unexpected("listen_address '" + c.listen_address + "' is not an IP address");
  if (c.insecure_no_auth && !is_loopback(c.listen_address)) {
    return tl::unexpected(
        "authentication is off (insecure_no_auth), so the aggregator binds only to a loopback "
        "address; listen_address is " +
        c.listen_address);
  }
  if (c.tls_certificate.empty() != c.tls_private_key.empty()) {
    return tl::unexpected(std::string("TLS needs both tls.certificate and tls.private_key"));
  }
  if (auto database = store::parse_database_setting(c.database); !database) {
    return tl::unexpected(database.error().detail);
  }
  return {};
}

tl::expected<CommandLine, std::string> parse_command_line(int argc, char** argv) {
  CLI::App app{"hsns-aggregator: central service of the hsns high-speed network stack"};
  app.set_version_flag("--version", std::string("hsns-aggregator ") + kVersion + " (" + kGitRevision + ")");
  std::string config_path = kDefaultConfigPath;
  std::optional<std::string> listen, database, tokens_file, tls_cert, tls_key, ready_file, log_level,
      syslog_udp, syslog_tcp, web_root;
  std::optional<int> threads;
  std::optional<std::size_t> topology_body_limit, report_body_limit;
  std::optional<long long> telemetry_max_age_s, telemetry_prune_interval_ms;
  std::optional<std::uint64_t> telemetry_max_bytes;
  bool no_auth = false;
  auto add_flags = [&](CLI::App* a) {
    a->add_option("-c,--config", config_path, "YAML configuration file")->capture_default_str();
    a->add_option("--listen", listen, "listen address:port (IPv6 as [addr]:port); port 0 picks a free port");
    a->add_option("--database", database, "SQLite database file");
    a->add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 256));
    a->add_option("--tokens-file", tokens_file, "bearer tokens file (YAML)");
    a->add_option("--tls-cert", tls_cert, "TLS certificate chain (PEM)");
    a->add_option("--tls-key", tls_key, "TLS private key (PEM)");
    a->add_option("--ready-file", ready_file, "write '<address> <port>' here once listening");
    a->add_option("--topology-body-limit", topology_body_limit,
                  "body limit in bytes of the topology routes (imports; default 268435456)")
        ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32));
    a->add_option("--report-body-limit", report_body_limit,
                  "body limit in bytes of the telemetry report route (default 67108864)")
        ->check(CLI::Range(std::size_t{1024}, std::size_t{256} << 20));
    a->add_option("--telemetry-max-age", telemetry_max_age_s,
                  "seconds a telemetry report batch is kept (0: no age limit; default 604800)")
        ->check(CLI::Range(0LL, 10LL * 365 * 86'400));
    a->add_option("--telemetry-max-bytes", telemetry_max_bytes,
                  "bytes of report batches kept, oldest pruned first (0: no budget; default 8 GiB)");
    a->add_option("--telemetry-prune-interval", telemetry_prune_interval_ms,
                  "milliseconds between telemetry pruning runs (default 60000)")
        ->check(CLI::Range(100LL, 86'400'000LL));
    a->add_flag("--insecure-no-auth", no_auth, "switch authentication off (loopback only; local demos)");
    a->add_option("--log-level", log_level, "error, warning, notice, info (default) or debug");
    a->add_option("--syslog-udp", syslog_udp, "receive syslog over UDP at address:port (off by default)");
    a->add_option("--syslog-tcp", syslog_tcp, "receive syslog over TCP at address:port (off by default)");
    a->add_option("--web-root", web_root, "directory of the dashboard's built assets (default: installed)");
  };
  add_flags(&app);
  auto* run = app.add_subcommand("run", "run the aggregator (the default)");
  auto* check = app.add_subcommand("check-config", "validate the configuration and tokens, then exit");
  add_flags(run);
  add_flags(check);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    app.exit(e);
    return CommandLine{Command::exit_ok, {}};
  } catch (const CLI::ParseError& e) {
    std::ostringstream err;
    app.exit(e, err, err);
    return tl::unexpected(err.str());
  }

  CommandLine cl;
  cl.command = check->parsed() ? Command::check_config : Command::run;
  const bool explicit_config =
      app.count("--config") > 0 || run->count("--config") > 0 || check->count("--config") > 0;
  if (std::filesystem::exists(config_path)) {
    std::ifstream in(config_path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto loaded = load_config_yaml(ss.str(), cl.config);
    if (!loaded) return tl::unexpected(config_path + ": " + loaded.error());
    cl.config = *loaded;
  } else if (explicit_config) {
    return tl::unexpected("configuration file " + config_path + " does not exist");
  }
  if (listen) {
    const auto colon = listen->rfind(':');
    if (colon == std::string::npos) return tl::unexpected(std::string("--listen must be address:port"));
    std::string addr = listen->substr(0, colon);
    if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
    int port = -1;
    try {
      port = std::stoi(listen->substr(colon + 1));
    } catch (const std::exception&) {
    }
    if (port < 0 || port > 65535) return tl::unexpected(std::string("--listen: port must be 0..65535"));
    cl.config.listen_address = addr;
    cl.config.port = static_cast<std::uint16_t>(port);
  }
  if (database) cl.config.database = *database;
  if (threads) cl.config.threads = *threads;
  if (tokens_file) cl.config.tokens_file = *tokens_file;
  if (tls_cert) cl.config.tls_certificate = *tls_cert;
  if (tls_key) cl.config.tls_private_key = *tls_key;
  if (ready_file) cl.config.ready_file = *ready_file;
  if (web_root) cl.config.web_root = *web_root;
  if (no_auth) cl.config.insecure_no_auth = true;
  if (topology_body_limit) {
    cl.config.limits = with_topology_body_limit(std::move(cl.config.limits), *topology_body_limit);
  }
  if (report_body_limit)
    cl.config.limits = with_report_body_limit(std::move(cl.config.limits), *report_body_limit);
  if (telemetry_max_age_s) cl.config.telemetry_max_age = std::chrono::seconds(*telemetry_max_age_s);
  if (telemetry_max_bytes) cl.config.telemetry_max_bytes = *telemetry_max_bytes;
  if (telemetry_prune_interval_ms)
    cl.config.telemetry_prune_interval = std::chrono::milliseconds(*telemetry_prune_interval_ms);
  for (auto [flag, text, endpoint] : {std::tuple{"--syslog-udp", &syslog_udp, &cl.config.syslog.udp},
                                      std::tuple{"--syslog-tcp", &syslog_tcp, &cl.config.syslog.tcp}}) {
    if (!*text) continue;
    auto parsed = ingest::parse_listen_endpoint(**text);
    if (!parsed) return tl::unexpected(std::string(flag) + ": " + parsed.error());
    *endpoint = *parsed;
  }
  if (log_level && !log::parse_level(*log_level, cl.config.log_level))
    return tl::unexpected("--log-level: '" + *log_level +
                          "' is not one of error, warning, notice, info, debug");
  if (auto ok = validate(cl.config); !ok) return tl::unexpected(ok.error());
  return cl;
}

}  // namespace hsns
