// hsnsd: the hsns node daemon. `hsnsd run` (the default) runs the service; `hsnsd check-config` validates
// the configuration and exits; `hsnsd inventory` prints what discovery finds. Flags override the file.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "agent_link.h"
#include "config.h"
#include "counters_component.h"
#include "daemon.h"
#include "flow_harvester.h"
#include "hsns/log.h"
#include "hsns/version.h"
#include "inventory.h"
#include "isolation_component.h"
#include "lldp_component.h"
#include "optics_component.h"
#include "qos_check.h"
#include "rdma_qp_component.h"
#include "reconciler_component.h"
#include "reporter_component.h"
#include "status_reporter.h"

namespace {

using hsns::daemon::DaemonConfig;

struct Overrides {
  std::optional<std::string> host, aggregator_url, token_file, state_dir, sysfs_root, procfs_root,
      metrics_listen, log_level;
  std::optional<long> interval_ms;
  std::vector<std::string> npus;  // "index=netdev"
};

tl::expected<DaemonConfig, std::string> assemble(const std::string& path, bool required, const Overrides& o) {
  auto c = hsns::daemon::load_config(path, required);
  if (!c) return c;
  if (o.host) c->host = *o.host;
  if (o.aggregator_url) c->aggregator_url = *o.aggregator_url;
  if (o.token_file) c->token_file = *o.token_file;
  if (o.state_dir) c->state_dir = *o.state_dir;
  if (o.sysfs_root) c->sysfs_root = *o.sysfs_root;
  if (o.procfs_root) c->procfs_root = *o.procfs_root;
  if (o.metrics_listen) c->metrics_listen = *o.metrics_listen;
  if (o.interval_ms) c->interval = std::chrono::milliseconds(*o.interval_ms);
  if (o.log_level && !hsns::log::parse_level(*o.log_level, c->log_level))
    return tl::unexpected("--log-level: '" + *o.log_level +
                          "' is not one of error, warning, notice, info, debug");
  for (const auto& n : o.npus) {
    const auto eq = n.find('=');
    if (eq == std::string::npos) return tl::unexpected("--npu " + n + ": expected INDEX=NETDEV");
    try {
      c->npus[std::stoi(n.substr(0, eq))] = n.substr(eq + 1);
    } catch (const std::exception&) {
      return tl::unexpected("--npu " + n + ": INDEX is not a number");
    }
  }
  if (auto v = hsns::daemon::validate(*c); !v) return tl::unexpected(v.error());
  return c;
}

// hsnsd's components in start and tick order: isolation before the reconciler that applies it, the agent
// link before the reconciler so a fetched desired state is applied in the same loop turn, the QoS check
// and the status report after the pass they describe, then the ports' counters, the flow probe (never before
// the ports), then the read-only telemetry: the RDMA QP inventory, the optical modules' diagnostics and the
// LLDP receiver, and last the report uploader, which reads the snapshots of all of them. With reporting on,
// the flow harvester and the reporter share one report spool (the harvester appends flow batches from its
// thread, the reporter telemetry reports and uploads); the spool outlives both (shared ownership).
void add_components(hsns::daemon::Daemon& d) {
  using namespace hsns::daemon;
  const auto& config = d.config();
  std::shared_ptr<report::SharedSpool> spool;
  if (config.report.enabled) spool = std::make_shared<report::SharedSpool>(report::spool_options(config));
  auto& isolation = d.add<IsolationComponent>(config);
  auto& agent = d.add<AgentLink>(config, d.node(), d.registry());
  auto& reconciler = d.add<ReconcilerComponent>(config, d.node(), isolation, d.registry());
  auto& qos = d.add<QosCheck>(config, d.node(), reconciler, d.registry());
  d.add<StatusReporter>(d.node(), reconciler, qos, agent, d.registry());
  auto& counters = d.add<counters::CountersComponent>(config, d.registry());
  d.add<FlowHarvester>(config.flow_probe, d.node().host, d.registry(), spool);
  auto& qp = d.add<RdmaQpComponent>(config, d.node().host, d.registry());
  auto& optics = d.add<OpticsComponent>(config, d.registry());
  auto& lldp = d.add<LldpComponent>(config, d.node().host, d.registry());
  if (!spool) return;
  std::vector<std::string> netdevs;
  for (const auto& [index, netdev] : config.npus) netdevs.push_back(netdev);
  const std::string host = d.node().host;
  report::ReportSources sources;
  sources.counters = [&counters] { return std::optional(counters.snapshot()); };
  sources.qp = [&qp] { return std::optional(qp.inventory()); };
  sources.optics = [&optics, host] {
    return std::optional(optics.report(host, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::system_clock::now().time_since_epoch())
                                                 .count()));
  };
  sources.lldp = [&lldp] { return std::optional(lldp.neighbors()); };
  sources.ports = [&d, netdevs] { return report::read_port_states(d.config().sysfs_root, netdevs); };
  d.add<report::ReporterComponent>(config, host, spool, std::move(sources), d.registry());
}

}  // namespace

int main(int argc, char** argv) {
  hsns::log::init("hsnsd");
  CLI::App app{"hsnsd: hsns node daemon (NPU port discovery, reconciliation, QoS conformance)"};
  app.set_version_flag("--version", std::string("hsnsd ") + hsns::kVersion + " (" + hsns::kGitRevision + ")");
  std::string config_path = "/etc/hsns/hsnsd.yaml";
  Overrides o;
  app.add_option("-c,--config", config_path, "YAML configuration file")->capture_default_str();
  app.add_option("--host", o.host, "host name to register (default: the kernel's host name)");
  app.add_option("--aggregator-url", o.aggregator_url, "aggregator base URL, http(s)://host:port");
  app.add_option("--token-file", o.token_file, "file holding the agent bearer token");
  app.add_option("--state-dir", o.state_dir, "state directory (default /var/lib/hsns)");
  app.add_option("--sysfs-root", o.sysfs_root, "sysfs root (default /sys; fixtures in tests)");
  app.add_option("--procfs-root", o.procfs_root, "procfs root for sysctls (default /proc)");
  app.add_option("--metrics-listen", o.metrics_listen, "address:port for /metrics; empty disables");
  app.add_option("--interval-ms", o.interval_ms, "fetch and reconcile interval in milliseconds");
  app.add_option("--log-level", o.log_level, "error, warning, notice, info (default) or debug");
  app.add_option("--npu", o.npus, "NPU index to netdev, INDEX=NETDEV (repeatable)");
  app.require_subcommand(0, 1);
  app.fallthrough();  // global flags may follow the subcommand: hsnsd run --config x
  auto* run = app.add_subcommand("run", "run the daemon (default)");
  auto* check = app.add_subcommand("check-config", "validate the configuration and exit");
  auto* inventory = app.add_subcommand("inventory", "print the discovered inventory as JSON and exit");
  (void)run;
  CLI11_PARSE(app, argc, argv);

  const bool explicit_config = app.count("--config") > 0;
  auto config = assemble(config_path, explicit_config, o);
  if (!config) {
    HSNS_LOG(error) << "configuration error: " << config.error();
    return 2;
  }
  hsns::log::set_level(config->log_level);
  if (check->parsed()) {
    std::cout << "configuration OK: host " << hsns::daemon::effective_host(*config) << ", aggregator "
              << config->aggregator_url << ", " << config->npus.size() << " NPU(s), state "
              << config->state_dir << ", flow probe "
              << (hsns::daemon::flow_probe_enabled(*config)
                      ? "on " + std::to_string(config->flow_probe.interfaces.size()) + " interface(s)"
                      : std::string("off"))
              << ", report "
              << (config->report.enabled ? "every " + std::to_string(config->report.interval.count()) +
                                               " ms, spool " + hsns::daemon::report_spool_dir(*config)
                                         : std::string("off"))
              << "\n";
    return 0;
  }
  if (inventory->parsed()) {
    const auto inv = hsns::daemon::discover(*config);
    auto doc = nlohmann::json::parse(hsns::daemon::registration_body(inv));
    nlohmann::json rdma = nlohmann::json::array();
    for (const auto& r : inv.rdma)
      rdma.push_back({{"device", r.device},
                      {"port", r.port},
                      {"state", r.state},
                      {"link_layer", r.link_layer},
                      {"rate_mbps", r.rate_mbps},
                      {"netdev", r.netdev},
                      {"rocev2_gids", r.rocev2_gids}});
    doc["rdma"] = rdma;
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  hsns::daemon::Daemon daemon(*config, [=] { return assemble(config_path, explicit_config, o); });
  add_components(daemon);
  return daemon.run();
}
