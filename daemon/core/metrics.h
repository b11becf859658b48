// hsnsd's Prometheus metrics (hsns_daemon_* names, base units, _total counters) and the optional
// prometheus-cpp Exposer serving them on /metrics.
//
// Contract: DaemonMetrics owns the registry; start_exposer() binds the listen address ("" = no HTTP
// endpoint) and returns an error (the exposer's exception text) instead of throwing. Counter and gauge
// updates are thread-safe (prometheus-cpp); the exposer serves from its own threads.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <tl/expected.hpp>

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

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;

  explicit DaemonMetrics(std::shared_ptr<prometheus::Registry> registry);
  static prometheus::Counter& counter(prometheus::Registry& r, const std::string& name,
                                      const std::string& help);
  static prometheus::Gauge& gauge(prometheus::Registry& r, const std::string& name, const std::string& help);
};

}  // namespace hsns::daemon
