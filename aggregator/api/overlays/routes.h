// REST handler of the dashboard's overlay definitions (api/overlays/thresholds.h).
//
// Route (docs/rest-api.md, "Overlays"; aggregator/openapi.json, schema Overlays):
//   GET /api/v1/overlays   every overlay the dashboard offers, in its order: id, label, kind, unit, grading,
//                          the thresholds the configuration set (null for state and alarms) and the
//                          describe text that states them
// Contract: role read; no query parameters (an unknown one is 400 naming it). The answer is built once at
// registration (the configuration does not change while the aggregator runs). Thread-safe.
#pragma once

#include "api/overlays/thresholds.h"
#include "http/router.h"

namespace hsns::overlays {

void register_overlay_routes(http::Router& router, const OverlaySettings& overlays);

}  // namespace hsns::overlays
