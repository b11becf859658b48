#include "metrics.h"

#include "hsns/version.h"

namespace hsns::daemon {

prometheus::Counter& DaemonMetrics::counter(prometheus::Registry& r, const std::string& name,
                                            const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

prometheus::Gauge& DaemonMetrics::gauge(prometheus::Registry& r, const std::string& name,
                                        const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
}

namespace {
std::shared_ptr<prometheus::Registry> new_registry() {
  return std::make_shared<prometheus::Registry>();
}
}  // namespace

DaemonMetrics::DaemonMetrics() : DaemonMetrics(new_registry()) {}

DaemonMetrics::DaemonMetrics(std::shared_ptr<prometheus::Registry> r)
    : passes(counter(*r, "hsns_daemon_reconcile_passes_total", "Reconcile passes run")),
      changes(counter(*r, "hsns_daemon_changes_total", "Netlink changes and sysctl writes made")),
      drift_repairs(
          counter(*r, "hsns_daemon_drift_repairs_total", "Changes that repaired drift on converged ports")),
      fetch_errors(counter(*r, "hsns_daemon_desired_fetch_errors_total", "Failed desired-state fetches")),
      register_errors(counter(*r, "hsns_daemon_register_errors_total", "Failed host registrations")),
      status_errors(counter(*r, "hsns_daemon_status_report_errors_total", "Failed status reports")),
      corrupt_state_files(
          counter(*r, "hsns_daemon_corrupt_state_files_total", "Corrupt state files set aside")),
      ports_converged(gauge(*r, "hsns_daemon_ports_converged", "Ports converged in the last pass")),
      ports_failed(gauge(*r, "hsns_daemon_ports_failed", "Ports failed in the last pass")),
      generation(gauge(*r, "hsns_daemon_desired_generation", "Generation of the desired state applied")),
      qos_drift_ports(gauge(*r, "hsns_daemon_qos_drift_ports", "Ports whose QoS differs from the profile")),
      last_pass_seconds(gauge(*r, "hsns_daemon_last_pass_duration_seconds", "Duration of the last pass")),
      aggregator_up(gauge(*r, "hsns_daemon_aggregator_up", "1 when the last aggregator request succeeded")),
      registry_(std::move(r)) {
  prometheus::BuildGauge()
      .Name("hsns_daemon_info")
      .Help("hsnsd build information")
      .Register(*registry_)
      .Add({{"version", kVersion}})
      .Set(1);
}

tl::expected<void, std::string> DaemonMetrics::start_exposer(const std::string& listen) {
  if (listen.empty()) return {};
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, 1);
    exposer_->RegisterCollectable(registry_);
  } catch (const std::exception& e) {
    return tl::unexpected("cannot serve metrics on " + listen + ": " + e.what());
  }
  return {};
}

}  // namespace hsns::daemon
