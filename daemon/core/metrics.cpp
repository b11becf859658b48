#include "metrics.h"

#include "hsns/version.h"

namespace hsns::daemon {

prometheus::Counter& add_counter(prometheus::Registry& registry, const std::string& name,
                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Gauge& add_gauge(prometheus::Registry& registry, const std::string& name,
                             const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Histogram& add_histogram(prometheus::Registry& registry, const std::string& name,
                                     const std::string& help,
                                     const prometheus::Histogram::BucketBoundaries& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}

DaemonMetrics::DaemonMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      component_ready_family_(prometheus::BuildGauge()
                                  .Name("hsns_daemon_component_ready")
                                  .Help("1 once the hsnsd component is ready (started and serving)")
                                  .Register(*registry_)) {
  prometheus::BuildGauge()
      .Name("hsns_daemon_info")
      .Help("hsnsd build information")
      .Register(*registry_)
      .Add({{"version", kVersion}})
      .Set(1);
}

prometheus::Gauge& DaemonMetrics::component_ready(const std::string& component) {
  return component_ready_family_.Add({{"component", component}});
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
