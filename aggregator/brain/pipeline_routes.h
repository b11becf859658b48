// The brain pipeline's REST routes (docs/rest-api.md, "Network brain"):
// - GET /api/v1/brain/status (read): {"enabled", "patterns_dir", "library": {"patterns"}, "queue": {"depth",
//   "capacity"}, "counters": {samples, logs, dropped_samples, dropped_logs, processed_samples,
//   processed_logs, faults_raised, faults_cleared, active_faults, reloads, reload_failures}, "detectors":
//   {the bank's counts, "series"}, "matcher": {the matcher's counts, "states"}, "topology": {"revision",
//   "peers"}, "lag": {"processing": {count, p50_ms, p99_ms, max_ms}, "fault": {...}}, "recent_faults":
//   [the last faults raised or cleared, newest last]}. With the brain off: {"enabled": false}.
// - POST /api/v1/brain/reload (manage_network; no body, no query): reloads the configured patterns
//   directory; 200 {"patterns": N, "patterns_dir"}; a library with an error is 422 whose detail and
//   invalid_params name the file, line and column, and the previous library stays active; the brain off
//   is 409.
// The engine (nullptr when the brain is off) must outlive the router. Thread-safe.
#pragma once

#include <string>

#include "brain/engine.h"
#include "http/router.h"

namespace hsns::brain_pipeline {

void register_brain_routes(http::Router& router, BrainEngine* engine, std::string patterns_dir);

}  // namespace hsns::brain_pipeline
