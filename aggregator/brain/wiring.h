// How hsns-aggregator builds its brain pipeline (main.cpp): the engine from the `brain:` settings, fed the
// current topology's link peers through the topology cache.
//
// Contract: make_brain_engine() reads the detector configuration (detector_config, else the built-in
// defaults) and the pattern library (patterns_dir(settings)); either failing is the error (the file, line
// and column in its reason), and no engine is made. The engine is not started. cache_topology(cache)
// answers the cache's current model and revision (nullopt while there is none, or when it cannot be read:
// the engine keeps its peers) and the cache's change mark.
#pragma once

#include <memory>

#include "brain/engine.h"
#include "brain/pipeline_settings.h"
#include "services/topology_cache.h"

namespace hsns::brain_pipeline {

Result<std::unique_ptr<BrainEngine>> make_brain_engine(const BrainSettings& settings, FaultHandler on_faults,
                                                       TopologySource topology, BrainMetrics* metrics);
TopologySource cache_topology(std::shared_ptr<services::TopologyCache> cache);

}  // namespace hsns::brain_pipeline
