// REST handlers for topology search and job scheduling: rank host sets for a job, place and register a
// job (launcher files, route plan), list and release registered jobs.
//
// Routes (see docs/rest-api.md, "Topology search and scheduling"):
//   POST   /api/v1/topology/search   rank candidate host sets (search::search_topology); role scheduler or
//                                    operator (it stores nothing, but as every POST it needs more than read)
//   POST   /api/v1/schedule          place a job on given hosts (placement::schedule_job) and register it;
//                                    201 + Location /api/v1/jobs/{name}; role scheduler or operator
//   GET    /api/v1/jobs              registered jobs (summaries); role: any
//   GET    /api/v1/jobs/{name}       one job with its ranks, request and schedule summary; 404
//   DELETE /api/v1/jobs/{name}       release the job's NPUs; 204; 404; role scheduler or operator
// Contract:
// - Bodies are validated strictly (api/scheduling/requests.h) before anything else: 400 naming every bad
//   field. The handlers then call services::SchedulingService (services/scheduling_service.h: the
//   orchestration, its order of checks and its errors) and answer its result, or its hsns::Error through
//   http::to_problem: not_found 404 (no topology, unknown job), conflict 409 (job name taken, NPUs held
//   by a job: "hosts[i]", topology changed), unprocessable 422 (the libraries' errors naming their
//   field, addresses, reachability on "hosts" with the rank pairs in invalid_params).
// - The stores and the cache must outlive the router; handlers are thread-safe.
#pragma once

#include <memory>

#include "http/router.h"
#include "services/topology_cache.h"
#include "store/job_store.h"
#include "store/network_store.h"

namespace hsns::scheduling_api {

void register_scheduling_routes(http::Router& router, std::shared_ptr<services::TopologyCache> topology,
                                store::JobStore& jobs, store::NetworkStore& network);

}  // namespace hsns::scheduling_api
