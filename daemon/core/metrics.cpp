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
      flow_probe_up(gauge(*r, "hsns_flow_probe_up", "1 while the RoCEv2 flow probe is attached")),
      flow_probe_interfaces(
          gauge(*r, "hsns_flow_probe_interfaces", "Interfaces the flow probe is attached to")),
      flow_probe_start_failures(
          counter(*r, "hsns_flow_probe_start_failures_total", "Failed flow probe starts (load or attach)")),
      flow_probe_harvests(counter(*r, "hsns_flow_probe_harvests_total", "Flow table harvests")),
      flow_probe_harvest_errors(
          counter(*r, "hsns_flow_probe_harvest_errors_total", "Failed flow table harvests")),
      flow_probe_records(counter(*r, "hsns_flow_probe_records_total", "Flow records harvested")),
      flow_probe_sink_errors(
          counter(*r, "hsns_flow_probe_sink_errors_total", "Failed writes of a harvest to the flow sink")),
      flow_probe_records_unwritten(counter(*r, "hsns_flow_probe_records_unwritten_total",
                                           "Harvested flow records a failed sink write may have lost")),
      flow_probe_last_harvest_seconds(gauge(*r, "hsns_flow_probe_last_harvest_duration_seconds",
                                            "Duration of the last harvest and write")),
      flow_probe_last_harvest_records(
          gauge(*r, "hsns_flow_probe_last_harvest_records", "Flow records of the last harvest")),
      flow_probe_last_harvest_timestamp(gauge(*r, "hsns_flow_probe_last_harvest_timestamp_seconds",
                                              "Unix time of the last successful harvest")),
      registry_(std::move(r)),
      probe_counter_family_(
          prometheus::BuildCounter()
              .Name("hsns_flow_probe_packets_total")
              .Help("Packets counted by the flow probe program, by counter (bpf/roce_flow.h: "
                    "packets = all, roce, non_roce, malformed cases, table_full, erspan, ...), "
                    "cumulative since the pinned maps were created")
              .Register(*registry_)) {
  prometheus::BuildGauge()
      .Name("hsns_daemon_info")
      .Help("hsnsd build information")
      .Register(*registry_)
      .Add({{"version", kVersion}})
      .Set(1);
}

void DaemonMetrics::set_probe_counters(const std::vector<std::string>& names,
                                       const std::vector<std::uint64_t>& counters) {
  const std::lock_guard lock(probe_counters_mutex_);
  if (probe_counters_.size() < counters.size()) probe_counters_.resize(counters.size(), {nullptr, 0});
  for (std::size_t i = 0; i < counters.size() && i < names.size(); ++i) {
    auto& [metric, seen] = probe_counters_[i];
    if (metric == nullptr) metric = &probe_counter_family_.Add({{"counter", names[i]}});
    const std::uint64_t now = counters[i];
    // Maps purged and recreated: the kernel counter restarted from zero, so all of `now` is new.
    const std::uint64_t grew = now >= seen ? now - seen : now;
    if (grew > 0) metric->Increment(static_cast<double>(grew));
    seen = now;
  }
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
