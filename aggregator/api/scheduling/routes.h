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
//   field. Library errors (SearchError, ScheduleError) are 422 naming their field. No topology: 404.
// - Search and schedule see the stored topology with every registered job's NPUs allocated
//   (TopologyCache::with_jobs, rebuilt only when the topology or jobs revision moves), so search never
//   proposes and schedule never uses an NPU a job holds.
// - Schedule checks, in order: body (400), topology (404), job name taken (409 "job_name"), held NPUs,
//   addresses and placement (422), reachability (422), the atomic store. A requested host on which
//   registered jobs hold NPUs the request needs (with npus_per_host 0: any NPU) is 409 on "hosts[i]"
//   naming the NPUs and the job.
// - NPU addresses come from the network store's ports. Among the ports of the NPUs the job uses
//   (placement::used_npus): one subnet holding a port of every used NPU; else, per rail (local rank), a
//   subnet holding a port of every used NPU of that rail; else (and for NPUs the job does not use) the
//   NPU's port whose subnet name sorts first. Ties between qualifying subnets: the first by (name, id).
//   A used NPU without a port is the library's 422 on "npu_ips[<host>:<npu>]".
// - Reachability: every inter-host (source, destination) pair of the route plan (DP and PP phases) must
//   have both addresses in one subnet (hsns isolates subnets from each other). Otherwise 422 on "hosts"
//   (detail: the count; invalid_params: up to 8 rank pairs "ranks[a,b]", a < b, with hosts, NPUs,
//   addresses, subnets and traffic) and nothing is stored, unless the body says "allow_unreachable": true;
//   the answer's route_plan.unreachable_pairs counts such pairs (0 normally). The job is stored by
//   JobStore::create_job, whose single transaction re-checks name, NPUs and topology revision: of concurrent
//   schedules claiming one NPU exactly one succeeds, the others get 409 ("hosts[i]", "job_name" or
//   "topology"). A rejected request stores nothing.
// - The stores and the cache must outlive the router; handlers are thread-safe.
#pragma once

#include <memory>

#include "http/router.h"
#include "store/job_store.h"
#include "store/network_store.h"
#include "api/topology/routes.h"

namespace hsns::scheduling_api {

void register_scheduling_routes(http::Router& router, std::shared_ptr<topology_api::TopologyCache> topology,
                                store::JobStore& jobs, store::NetworkStore& network);

}  // namespace hsns::scheduling_api
