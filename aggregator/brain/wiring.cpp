#include "brain/wiring.h"

namespace hsns::brain_pipeline {

Result<std::unique_ptr<BrainEngine>> make_brain_engine(const BrainSettings& settings, FaultHandler on_faults,
                                                       TopologySource topology, BrainMetrics* metrics) {
  brain::BrainConfig detectors = brain::default_brain_config();
  if (!settings.detector_config.empty()) {
    auto loaded = brain::load_brain_config(settings.detector_config);
    if (!loaded) return tl::unexpected(std::move(loaded.error()));
    detectors = std::move(*loaded);
  }
  auto library = brain::load_pattern_library(patterns_dir(settings));
  if (!library) return tl::unexpected(std::move(library.error()));
  EngineOptions options;
  options.queue_capacity = settings.queue_capacity;
  options.bank.max_series = settings.max_series;
  options.matcher.max_states = settings.max_states;
  return std::make_unique<BrainEngine>(std::move(detectors), std::move(*library), std::move(on_faults),
                                       std::move(topology), options, metrics);
}

TopologySource cache_topology(std::shared_ptr<services::TopologyCache> cache) {
  TopologySource source;
  source.change_mark = [cache]() { return cache->change_mark(); };
  source.read = [cache = std::move(cache)]() -> std::optional<TopologyView> {
    auto snapshot = cache->current();
    if (!snapshot || !snapshot->topology) return std::nullopt;
    return TopologyView{snapshot->revision, snapshot->topology};
  };
  return source;
}

}  // namespace hsns::brain_pipeline
