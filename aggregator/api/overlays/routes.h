// REST handlers of the dashboard's overlays: their definitions (api/overlays/thresholds.h) and the grades
// of the metric overlays (api/overlays/grades.h).
//
// Routes (docs/rest-api.md, "Overlays"; aggregator/openapi.json, schemas Overlays and OverlayGrades):
//   GET /api/v1/overlays               every overlay the dashboard offers, in its order: id, label, kind,
//                                      unit, grading, the thresholds the configuration set (null for
//                                      state and alarms) and the describe text that states them; a metric
//                                      overlay also its metrics, fold and reading
//   GET /api/v1/overlays/{id}/grades   a metric overlay's grades: per link (in the order of GET
//                                      /api/v1/topology/links with the same `upper`, index-aligned) its
//                                      grade (-1 no data, 0 ok, 1 warning, 2 bad) and value in the
//                                      overlay's unit (null without data), per device (by id) and per
//                                      layout group its worst grade, and the topology revision graded
//   (the live stream of the grades is api/overlays/stream.h)
// Contract: role read. /overlays takes no query parameters; its answer is built once at registration (the
// configuration does not change while the aggregator runs). /grades takes `at` (a time as GET
// /api/v1/kpis/latest takes it: the time slider; default now), `max_age_s` (1..kMaxKpiLatestAgeS, default
// kDefaultGradeMaxAgeS: older readings are no data) and `upper` (as /topology/links); an unknown query
// parameter or a bad value is 400 naming it, an id that is no metric overlay 404, no topology 404, a store
// failure 503. /grades is a worker-pool route (one KPI read per metric of the overlay, O(links)).
// parse_grade_max_age(ctx) is `max_age_s` as /grades reads it (also its stream): kDefaultGradeMaxAgeS when
// absent, the bad parameter named otherwise.
// Thread-safe; the store and the cache must outlive the router.
#pragma once

#include <cstdint>
#include <memory>
#include <tl/expected.hpp>

#include "api/overlays/thresholds.h"
#include "http/router.h"
#include "services/topology_cache.h"
#include "store/kpi_store.h"

namespace hsns::overlays {

tl::expected<std::int64_t, InvalidParam> parse_grade_max_age(const http::RequestContext& ctx);

void register_overlay_routes(http::Router& router, const OverlaySettings& overlays, store::KpiStore& kpis,
                             std::shared_ptr<services::TopologyCache> topology);

}  // namespace hsns::overlays
