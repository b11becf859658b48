// hsnsd's Prometheus registry, the optional prometheus-cpp Exposer serving it on /metrics, and the
// metrics of the main loop itself (hsns_daemon_info, hsns_daemon_component_ready{component}).
//
// Contract: DaemonMetrics owns the registry; every component registers its own metrics in it
// (registry(); names hsns_<area>_*, base units (seconds, bytes, watts, ...), _total counters,
// _timestamp_seconds for Unix times; add_counter, add_gauge and add_histogram for the label-less ones;
// docs/hsnsd.md#metrics lists every one). start_exposer() binds the listen address ("" = no HTTP endpoint)
// and returns an error (the exposer's exception text) instead of throwing. Counter and gauge updates are
// thread-safe (prometheus-cpp); the exposer serves from its own threads.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <tl/expected.hpp>

namespace hsns::daemon {

prometheus::Counter& add_counter(prometheus::Registry& registry, const std::string& name,
                                 const std::string& help);
prometheus::Gauge& add_gauge(prometheus::Registry& registry, const std::string& name,
                             const std::string& help);
prometheus::Histogram& add_histogram(prometheus::Registry& registry, const std::string& name,
                                     const std::string& help,
                                     const prometheus::Histogram::BucketBoundaries& buckets);

class DaemonMetrics {
 public:
  DaemonMetrics();
  tl::expected<void, std::string> start_exposer(const std::string& listen);
  prometheus::Registry& registry() { return *registry_; }
  // hsns_daemon_component_ready{component="<name>"}: 1 once the component is ready.
  prometheus::Gauge& component_ready(const std::string& component);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Gauge>& component_ready_family_;
};

}  // namespace hsns::daemon
