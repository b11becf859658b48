// Topology search and job scheduling on the cached topology, with the registered jobs' NPUs allocated
// and the NPUs' addresses taken from the network store; the registered jobs themselves. Handlers
// (api/scheduling/routes.cpp) parse the request, call one of these and answer the result or convert the
// error.
//
// Contract:
// - search and schedule see the stored topology with every registered job's NPUs allocated
//   (TopologyCache::with_jobs, rebuilt only when the topology or jobs revision moves), so search never
//   proposes and schedule never uses an NPU a job holds. No topology: not_found.
// - search: search::search_topology on that model (its errors: unprocessable naming the field).
// - schedule checks, in order: topology (not_found), job name taken (conflict "job_name"), held NPUs,
//   addresses and placement (unprocessable), reachability (unprocessable), the atomic store. A requested
//   host on which registered jobs hold NPUs the request needs (with npus_per_host 0: any NPU) is a
//   conflict on "hosts[i]" naming the NPUs and the job.
// - NPU addresses come from the network store's ports. Among the ports of the NPUs the job uses
//   (placement::used_npus): one subnet holding a port of every used NPU; else, per rail (local rank), a
//   subnet holding a port of every used NPU of that rail; else (and for NPUs the job does not use) the
//   NPU's port whose subnet name sorts first. Ties between qualifying subnets: the first by (name, id).
//   Any address the request already gives an NPU is kept. A used NPU without a port is the library's
//   unprocessable on "npu_ips[<host>:<npu>]".
// - Reachability: every inter-host (source, destination) pair of the route plan (DP and PP phases) must
//   have both addresses in one subnet (hsns isolates subnets from each other). Otherwise unprocessable on
//   "hosts" (detail: the count and what to do; fields: "hosts" with the count, then up to 8 rank pairs
//   "ranks[a,b]", a < b, with hosts, NPUs, addresses, subnets and traffic) and nothing is stored, unless
//   allow_unreachable; ScheduledJob::unreachable_pairs counts such pairs (0 normally).
// - The job is stored by JobStore::create_job, whose single transaction re-checks name, NPUs and topology
//   revision: of concurrent schedules claiming one NPU exactly one succeeds, the others get a conflict
//   ("hosts[i]", "job_name" or "topology"). The record keeps request_document (the request as accepted)
//   and the schedule summary (schedule_summary). A refused schedule stores nothing.
// - Store errors pass through from_store (services/store_errors.h). The stores and the cache must outlive
//   the service; it is thread-safe as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"
#include "services/topology_cache.h"
#include "store/job_store.h"
#include "store/network_store.h"

namespace hsns::services {

struct SearchOutcome {
  search::SearchResult result;
  std::int64_t topology_revision = 0;
  std::int64_t jobs_revision = 0;
};

struct ScheduledJob {
  placement::Schedule schedule;
  store::JobRecord record;  // as stored (created_at set)
  std::uint32_t npus_per_host = 0;
  std::size_t unreachable_pairs = 0;  // non-zero only with allow_unreachable
};

class SchedulingService {
 public:
  SchedulingService(std::shared_ptr<TopologyCache> topology, store::JobStore& jobs,
                    store::NetworkStore& network)
      : topology_(std::move(topology)), jobs_(jobs), network_(network) {}

  Result<SearchOutcome> search(const search::SearchRequest& request);
  // request.npu_ips is completed from the network store's ports.
  Result<ScheduledJob> schedule(placement::ScheduleRequest request, bool allow_unreachable,
                                std::string request_document);

  Result<std::vector<store::JobRecord>> list_jobs();
  Result<store::JobRecord> get_job(const std::string& name);
  // Releases the job's NPUs; not_found for an unknown name.
  Result<void> delete_job(const std::string& name);

 private:
  std::shared_ptr<TopologyCache> topology_;
  store::JobStore& jobs_;
  store::NetworkStore& network_;
};

// What a job record keeps of its schedule (GET /api/v1/jobs/{name} "schedule"; docs/rest-api.md).
nlohmann::json schedule_summary(const placement::Schedule& schedule, std::uint32_t npus_per_host);

}  // namespace hsns::services
