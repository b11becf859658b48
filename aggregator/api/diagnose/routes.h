// REST handlers of the full-path diagnosis (issue 12, item 8; docs/brain.md "Path diagnosis").
//
// Routes (aggregator/openapi.json, docs/brain.md "Path diagnosis"); role: any (read):
//   GET /api/v1/diagnose/path?src=<host>/<npu>&dst=<host>/<npu>&max_paths=   every hop between two NPU
//        ports with its KPIs, alarms and verdict (schema DiagnosePath)
//   GET /api/v1/diagnose/job/{id}?max_paths=&traffic_window_s=   every communicating pair of a registered
//        job's ranks with the bytes its flows carried over the last traffic_window_s seconds, the hops they
//        cross worst first, and a summary (schema DiagnoseJob); id is the job's name
// Contract:
// - Query: unknown parameters, a missing src/dst, a malformed NPU name, a max_paths outside
//   1..diagnose::kMaxPathsLimit (default kDefaultMaxPaths for a path, kDefaultJobMaxPaths for a job) or
//   a traffic_window_s outside 1..kMaxTrafficWindowS (default kDefaultTrafficWindowS) are 400 naming the
//   parameter; a bad job name is 400 on "id". No topology, an unknown host or NPU, an
//   unknown job: 404 (the detail names the parameter). A job beyond the service's size bound: 422 on
//   "id". A store failure: 503.
// - Both routes are heavy (worker pool): a job diagnosis reschedules the job to reproduce its route plan.
// - The handlers parse the job's stored request with scheduling_api::parse_schedule_request (the format
//   the schedule route accepted) for services::DiagnosisService, which does the rest.
// The service must outlive the router; handlers are thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "http/router.h"
#include "services/diagnosis_service.h"

namespace hsns::diagnose_api {

inline constexpr std::size_t kDefaultJobMaxPaths = 16;
inline constexpr long long kDefaultTrafficWindowS = 900;       // the dashboard's overlays look 15 min back
inline constexpr long long kMaxTrafficWindowS = 7LL * 86'400;  // the flow records' default retention

void register_diagnose_routes(http::Router& router,
                              const std::shared_ptr<services::DiagnosisService>& service);

}  // namespace hsns::diagnose_api
