// hsnsd's Prometheus metrics (hsns_daemon_* names, base units, _total counters) and the optional
// prometheus-cpp Exposer serving them on /metrics.
//
// Contract: DaemonMetrics owns the registry; start_exposer() binds the listen address ("" = no HTTP
// endpoint) and returns an error (the exposer's exception text) instead of throwing. Counter and gauge
// updates are thread-safe (prometheus-cpp); the exposer serves from its own threads.
//
// Flow probe (hsns_flow_probe_*): the harvester thread updates these; set_probe_counters() turns the
// probe's cumulative per-CPU-summed counters (which live in pinned maps and so outlast hsnsd) into
// hsns_flow_probe_packets_total{counter=...} by adding what grew since the previous call (a counter that
// went down, because the maps were purged and recreated, restarts from its new value).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::daemon {

class DaemonMetrics {
 public:
  DaemonMetrics();
  tl::expected<void, std::string> start_exposer(const std::string& listen);

  prometheus::Counter& passes;
  prometheus::Counter& changes;
  prometheus::Counter& drift_repairs;
  prometheus::Counter& fetch_errors;
  prometheus::Counter& register_errors;
  prometheus::Counter& status_errors;
  prometheus::Counter& corrupt_state_files;
  prometheus::Gauge& ports_converged;
  prometheus::Gauge& ports_failed;
  prometheus::Gauge& generation;
  prometheus::Gauge& qos_drift_ports;
  prometheus::Gauge& last_pass_seconds;
  prometheus::Gauge& aggregator_up;

  prometheus::Gauge& flow_probe_up;          // 1 while the probe is attached
  prometheus::Gauge& flow_probe_interfaces;  // interfaces attached
  prometheus::Counter& flow_probe_start_failures;
  prometheus::Counter& flow_probe_harvests;
  prometheus::Counter& flow_probe_harvest_errors;
  prometheus::Counter& flow_probe_records;
  prometheus::Counter& flow_probe_sink_errors;
  prometheus::Counter& flow_probe_records_unwritten;
  prometheus::Gauge& flow_probe_last_harvest_seconds;
  prometheus::Gauge& flow_probe_last_harvest_records;
  prometheus::Gauge& flow_probe_last_harvest_timestamp;
  // counters[i] is the probe's cumulative value of counter i, named names[i].
  void set_probe_counters(const std::vector<std::string>& names, const std::vector<std::uint64_t>& counters);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Counter>& probe_counter_family_;
  std::mutex probe_counters_mutex_;
  std::vector<std::pair<prometheus::Counter*, std::uint64_t>> probe_counters_;  // by counter index

  explicit DaemonMetrics(std::shared_ptr<prometheus::Registry> registry);
  static prometheus::Counter& counter(prometheus::Registry& r, const std::string& name,
                                      const std::string& help);
  static prometheus::Gauge& gauge(prometheus::Registry& r, const std::string& name, const std::string& help);
};

}  // namespace hsns::daemon
