#include "config.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>

namespace hsns::daemon {
namespace {

using Result = tl::expected<void, std::string>;

Result check_keys(const YAML::Node& node, const std::string& where, const std::set<std::string>& allowed) {
  if (!node.IsMap()) return tl::unexpected(where + ": must be a mapping");
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())
      return tl::unexpected(where + ": a key must be a plain name, not a mapping or list");
    const auto& key = kv.first.Scalar();
    if (!allowed.count(key)) {
      std::string message = where;
      message += ": unknown key '";
      message += key;
      message += "'";
      return tl::unexpected(std::move(message));
    }
  }
  return {};
}

template <typename T>
T get(const YAML::Node& node, const std::string& key, const std::string& where) {
  try {
    return node[key].as<T>();
  } catch (const YAML::Exception&) {
    throw std::invalid_argument(where + key + ": wrong type");
  }
}

std::chrono::milliseconds ms(const YAML::Node& node, const std::string& key, const std::string& where) {
  return std::chrono::milliseconds(get<long>(node, key, where));
}

Result parse(const YAML::Node& root, DaemonConfig& c) {
  if (root.IsNull()) return {};
  if (auto r = check_keys(root, "config",
                          {"host", "aggregator", "state_dir", "sysfs_root", "procfs_root", "metrics",
                           "interval_ms", "telemetry_interval_ms", "backoff", "routing", "npus", "qos",
                           "isolation", "flow_probe", "report", "log_level"});
      !r)
    return r;
  if (root["host"]) c.host = get<std::string>(root, "host", "");
  if (root["state_dir"]) c.state_dir = get<std::string>(root, "state_dir", "");
  if (root["sysfs_root"]) c.sysfs_root = get<std::string>(root, "sysfs_root", "");
  if (root["procfs_root"]) c.procfs_root = get<std::string>(root, "procfs_root", "");
  if (root["interval_ms"]) c.interval = ms(root, "interval_ms", "");
  if (root["telemetry_interval_ms"]) c.telemetry_interval = ms(root, "telemetry_interval_ms", "");
  if (root["log_level"]) {
    const auto level = get<std::string>(root, "log_level", "");
    if (!log::parse_level(level, c.log_level))
      return tl::unexpected("log_level: '" + level + "' is not one of error, warning, notice, info, debug");
  }
  if (const auto a = root["aggregator"]) {
    if (auto r = check_keys(a, "aggregator", {"url", "token_file", "ca_file", "timeout_ms"}); !r) return r;
    if (a["url"]) c.aggregator_url = get<std::string>(a, "url", "aggregator.");
    if (a["token_file"]) c.token_file = get<std::string>(a, "token_file", "aggregator.");
    if (a["ca_file"]) c.ca_file = get<std::string>(a, "ca_file", "aggregator.");
    if (a["timeout_ms"]) c.request_timeout = ms(a, "timeout_ms", "aggregator.");
  }
  if (const auto m = root["metrics"]) {
    if (auto r = check_keys(m, "metrics", {"listen"}); !r) return r;
    if (m["listen"]) c.metrics_listen = get<std::string>(m, "listen", "metrics.");
  }
  if (const auto b = root["backoff"]) {
    if (auto r = check_keys(b, "backoff", {"initial_ms", "max_ms"}); !r) return r;
    if (b["initial_ms"]) c.backoff_initial = ms(b, "initial_ms", "backoff.");
    if (b["max_ms"]) c.backoff_max = ms(b, "max_ms", "backoff.");
  }
  if (const auto r = root["routing"]) {
    if (auto k = check_keys(r, "routing", {"table_base", "rule_priority_base", "protocol"}); !k) return k;
    if (r["table_base"]) c.table_base = get<int>(r, "table_base", "routing.");
    if (r["rule_priority_base"]) c.rule_priority_base = get<int>(r, "rule_priority_base", "routing.");
    if (r["protocol"]) c.route_protocol = get<int>(r, "protocol", "routing.");
  }
  if (const auto n = root["npus"]) {
    if (!n.IsSequence()) return tl::unexpected(std::string("npus: must be a list of {index, netdev}"));
    for (const auto& e : n) {
      if (auto k = check_keys(e, "npus[]", {"index", "netdev"}); !k) return k;
      if (!e["index"] || !e["netdev"])
        return tl::unexpected(std::string("npus[]: index and netdev are required"));
      const int index = get<int>(e, "index", "npus[].");
      if (c.npus.count(index))
        return tl::unexpected("npus: index " + std::to_string(index) + " listed twice");
      c.npus[index] = get<std::string>(e, "netdev", "npus[].");
    }
  }
  if (const auto q = root["qos"]) {
    if (auto k = check_keys(q, "qos", {"enabled", "pfc_priorities", "trust", "ecn_priorities"}); !k) return k;
    c.qos.enabled = q["enabled"] ? get<bool>(q, "enabled", "qos.") : true;
    if (q["pfc_priorities"]) c.qos.pfc_priorities = get<std::vector<int>>(q, "pfc_priorities", "qos.");
    if (q["ecn_priorities"]) c.qos.ecn_priorities = get<std::vector<int>>(q, "ecn_priorities", "qos.");
    if (q["trust"]) c.qos.trust = get<std::string>(q, "trust", "qos.");
  }
  if (const auto i = root["isolation"]) {
    if (auto k = check_keys(i, "isolation", {"enabled", "pin_dir"}); !k) return k;
    if (i["enabled"]) c.isolation_enabled = get<bool>(i, "enabled", "isolation.");
    if (i["pin_dir"]) c.isolation_pin_dir = get<std::string>(i, "pin_dir", "isolation.");
  }
  if (const auto rep = root["report"]; rep && !rep.IsNull()) {
    if (auto k =
            check_keys(rep, "report", {"enabled", "spool_dir", "max_bytes", "interval_ms", "upload_bytes"});
        !k)
      return k;
    c.report.enabled = rep["enabled"] ? get<bool>(rep, "enabled", "report.") : true;
    if (rep["spool_dir"]) c.report.spool_dir = get<std::string>(rep, "spool_dir", "report.");
    if (rep["max_bytes"]) c.report.max_bytes = get<std::uint64_t>(rep, "max_bytes", "report.");
    if (rep["interval_ms"]) c.report.interval = ms(rep, "interval_ms", "report.");
    if (rep["upload_bytes"]) c.report.upload_bytes = get<std::uint64_t>(rep, "upload_bytes", "report.");
  }
  if (const auto f = root["flow_probe"]; f && !f.IsNull()) {
    // Handed to the probe's own parser wrapped in a document of its own, so that its messages name the
    // keys as flow_probe.<key> (and a nested "flow_probe" key is reported as unknown, not unwrapped).
    YAML::Node doc;
    doc["flow_probe"] = f;
    YAML::Emitter out;
    out << doc;
    auto parsed = parse_flow_probe_config(out.c_str());
    if (!parsed) return tl::unexpected(parsed.error());
    c.flow_probe = std::move(*parsed);
  }
  return {};
}

bool valid_netdev_name(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char ch : name)
    if (ch == '/' || ch == ':' || ch <= ' ') return false;
  return true;
}

// The report section's bounds; with reporting on, one harvest of the flow probe must fit one report.
tl::expected<void, std::string> validate_report(const DaemonConfig& c) {
  const auto& r = c.report;
  if (!r.enabled) return {};
  if (r.max_bytes < (1ULL << 20) || r.max_bytes > (1ULL << 40))
    return tl::unexpected(
        std::string("report.max_bytes must be between 1048576 (1 MiB) and 1099511627776 (1 TiB)"));
  if (r.interval < std::chrono::milliseconds(100) || r.interval > std::chrono::hours(1))
    return tl::unexpected(std::string("report.interval_ms must be between 100 and 3600000"));
  if (r.upload_bytes < 1024 || r.upload_bytes > r.max_bytes)
    return tl::unexpected(std::string("report.upload_bytes must be between 1024 and report.max_bytes"));
  if (r.spool_dir.empty() && c.state_dir.empty())
    return tl::unexpected(std::string("report.spool_dir: no state_dir to put it under"));
  if (flow_probe_enabled(c) && c.flow_probe.table_size > kMaxReportedFlowTableSize)
    return tl::unexpected("flow_probe.table_size must be at most " +
                          std::to_string(kMaxReportedFlowTableSize) +
                          " while reporting is on (one harvest must fit one report)");
  return {};
}

}  // namespace

namespace {

// One reading for a file and for text: `load` yields the YAML root; errors are prefixed with `origin`.
template <typename Load>
tl::expected<DaemonConfig, std::string> read_config(const Load& load, const std::string& origin) {
  DaemonConfig c;
  try {
    const YAML::Node root = load();
    if (auto r = parse(root, c); !r) return tl::unexpected(origin + ": " + r.error());
  } catch (const YAML::Exception& e) {
    return tl::unexpected(origin + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    return tl::unexpected(origin + ": " + e.what());
  }
  if (auto r = validate(c); !r) return tl::unexpected(origin + ": " + r.error());
  return c;
}

}  // namespace

tl::expected<DaemonConfig, std::string> load_config(const std::string& path, bool required) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (required) return tl::unexpected("config file " + path + " does not exist");
    return DaemonConfig{};
  }
  return read_config([&path] { return YAML::LoadFile(path); }, path);
}

tl::expected<DaemonConfig, std::string> parse_config_text(const std::string& yaml,
                                                          const std::string& origin) {
  return read_config([&yaml] { return YAML::Load(yaml); }, origin);
}

tl::expected<void, std::string> validate(const DaemonConfig& c) {
  auto fail = [](std::string m) { return tl::unexpected(std::move(m)); };
  if (c.aggregator_url.rfind("http://", 0) != 0 && c.aggregator_url.rfind("https://", 0) != 0)
    return fail("aggregator.url must start with http:// or https://");
  if (c.state_dir.empty()) return fail("state_dir must not be empty");
  if (c.interval < std::chrono::milliseconds(100) || c.interval > std::chrono::hours(1))
    return fail("interval_ms must be between 100 and 3600000");
  if (c.telemetry_interval && (*c.telemetry_interval < std::chrono::milliseconds(100) ||
                               *c.telemetry_interval > std::chrono::hours(1)))
    return fail("telemetry_interval_ms must be between 100 and 3600000");
  if (c.backoff_initial < std::chrono::milliseconds(10) || c.backoff_max < c.backoff_initial)
    return fail("backoff: need 10 <= initial_ms <= max_ms");
  if (c.request_timeout < std::chrono::milliseconds(100)) return fail("aggregator.timeout_ms must be >= 100");
  if (c.table_base < 1 || c.table_base > 0x7fff0000 || c.table_base == 253 || c.table_base == 254 ||
      c.table_base == 255)
    return fail("routing.table_base must be a free table number (not 253-255)");
  if (c.rule_priority_base < 1 || c.rule_priority_base > 32000)
    return fail("routing.rule_priority_base must be between 1 and 32000 (main is 32766)");
  if (c.route_protocol < 5 || c.route_protocol > 254)
    return fail("routing.protocol must be between 5 and 254 (0-4 belong to the kernel)");
  if (!c.metrics_listen.empty() && c.metrics_listen.rfind(':') == std::string::npos)
    return fail("metrics.listen must be address:port or empty");
  for (const auto& [index, netdev] : c.npus) {
    if (index < 0 || index > 4095)
      return fail("npus: index " + std::to_string(index) + " out of range 0..4095");
    if (!valid_netdev_name(netdev)) return fail("npus: '" + netdev + "' is not a valid netdev name");
  }
  for (int p : c.qos.pfc_priorities)
    if (p < 0 || p > 7) return fail("qos.pfc_priorities: " + std::to_string(p) + " is not 0..7");
  for (int p : c.qos.ecn_priorities)
    if (p < 0 || p > 7) return fail("qos.ecn_priorities: " + std::to_string(p) + " is not 0..7");
  if (c.qos.trust != "dscp" && c.qos.trust != "pcp") return fail("qos.trust must be dscp or pcp");
  if (auto r = validate_report(c); !r) return r;
  return {};
}

bool same_flow_probe_attachment(const FlowProbeConfig& a, const FlowProbeConfig& b) {
  if (a.table_size != b.table_size || a.ring_buffer_bytes != b.ring_buffer_bytes || a.pin_dir != b.pin_dir ||
      a.interfaces.size() != b.interfaces.size())
    return false;
  for (std::size_t i = 0; i < a.interfaces.size(); ++i) {
    const auto& x = a.interfaces[i];
    const auto& y = b.interfaces[i];
    if (x.name != y.name || x.attach != y.attach || x.ingress != y.ingress || x.egress != y.egress ||
        x.mirror != y.mirror)
      return false;
  }
  return true;
}

bool same_flow_probe(const FlowProbeConfig& a, const FlowProbeConfig& b) {
  return same_flow_probe_attachment(a, b) && a.interval == b.interval && a.sink == b.sink;
}

std::string report_spool_dir(const DaemonConfig& config) {
  if (!config.report.spool_dir.empty()) return config.report.spool_dir;
  return (std::filesystem::path(config.state_dir) / "report-spool").string();
}

std::string effective_host(const DaemonConfig& config) {
  if (!config.host.empty()) return config.host;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace hsns::daemon
