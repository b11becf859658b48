// Full-path diagnosis (issue 12, item 8; docs/brain.md "Path diagnosis"): every hop between two NPU ports,
// or between every communicating pair of a job's ranks, with each hop's latest KPIs, its active alarms and
// a verdict. The handlers (api/diagnose/routes.cpp) parse and answer; this service holds the work.
//
// Contract:
// - Topology: the cached current model with the jobs' NPUs allocated (TopologyCache::with_jobs); no
//   topology is not_found. An NPU is named "<host>/<npu>": the host's topology name and the NPU's port
//   (netdev) or, when no port has that name, its index. A malformed name is invalid naming the parameter
//   ("src"); an unknown host or NPU is not_found naming it in the detail ("src: no host 'x' ...").
// - Paths: when both NPUs of a path request belong to one registered job whose route plan can be
//   reproduced (below) and the pair communicates in it, the planned paths of the pair's QPs; else every
//   ECMP candidate up to max_paths (diagnose::ecmp_paths). "route" says which and why.
// - A job's route plan is not stored; it is reproduced: the job's stored request (parsed by the caller into
//   `request`) is scheduled again on the current topology with the job's own NPUs set back to their state
//   without the job and its NPU addresses as registered (schedule_job is deterministic). When the placement
//   that comes out differs from the stored ranks (the topology changed), the plan is not used: the pairs
//   are then a ring over the ranks in rank order (inter-host neighbours both ways) with their ECMP
//   candidates, and "route_plan" says why.
// - Job bounds: a job of more than limits.max_job_ranks ranks is unprocessable on "id"; the pairs
//   expanded stop at limits.max_expanded_paths / max_paths pairs ("pairs_truncated").
// - Evidence per hop: the topology state of its link or switch; the latest sample of every series of each
//   of its entities from the KPI store (KpiStore::list_series, the newest value and time; age against
//   the wall clock); the alarms the AlarmLookup answers for each of its entities (a link's ports, their
//   modules "<port>/module" and the link "link:<a>|<b>"; a switch's name). Verdicts by diagnose::judge.
// - Answers JSON documents (openapi.json schemas DiagnosePath and DiagnoseJob); hops
//   of a job worst first (verdict, then the number of pairs crossing them, then id).
// - Traffic (job diagnosis): per pair the bytes, packets and flow directions sent from the source rank's
//   NPU addresses to the destination rank's in the flow records the hosts reported over the last
//   `traffic_window` (batches with ts_ms at or after now - window), one direction only, a direction
//   reported by several hosts counted once (services/job_traffic.h); one telemetry read for the job, the
//   answer sized by its pairs. A pair without any is null ("no flow data"). "traffic" at the top says the
//   window and whether volumes are available: not without a telemetry store (TrafficSource), nor when the
//   window holds more than limits.max_traffic_flows directions of the job's addresses (then every pair is
//   null and the note says why).
// - Thread-safe as the stores and the lookup are; the cache and stores must outlive the service.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brain/diagnose/path_expansion.h"
#include "brain/diagnose/verdict.h"
#include "hsns/error.h"
#include "scheduling/placement/schedule.h"
#include "services/topology_cache.h"
#include "store/job_store.h"
#include "store/kpi_store.h"
#include "store/network_store.h"
#include "store/telemetry_store.h"

namespace hsns::services {

// The alarms active on one entity (the alarm service's lookup; main.cpp wires it). Empty function: none.
using AlarmLookup = std::function<std::vector<diagnose::ActiveAlarm>(const std::string& entity)>;

struct DiagnosisLimits {
  std::size_t max_job_ranks = 4096;
  std::size_t max_expanded_paths = 65'536;  // pairs x max_paths of one job diagnosis
  std::size_t max_kpis_per_entity = 1000;
  std::size_t max_traffic_flows = 100'000;  // flow directions of a job's addresses read for its volumes
};

// Where a job's pair volumes come from: the stored flow records and the ports' addresses. Null: none.
struct TrafficSource {
  store::TelemetryStore* telemetry = nullptr;
  store::NetworkStore* network = nullptr;
};

class DiagnosisService {
 public:
  DiagnosisService(std::shared_ptr<TopologyCache> topology, store::JobStore& jobs, store::KpiStore& kpis,
                   AlarmLookup alarms, TrafficSource traffic = {},
                   diagnose::VerdictRules rules = diagnose::default_verdict_rules(),
                   DiagnosisLimits limits = {})
      : topology_(std::move(topology)),
        jobs_(jobs),
        kpis_(kpis),
        alarms_(std::move(alarms)),
        traffic_(traffic),
        rules_(std::move(rules)),
        limits_(limits) {}

  // The job's stored request as a ScheduleRequest (the handler parses it: the API layer owns the format);
  // nullopt when it does not parse (the plan is then not reproduced).
  using RequestParser =
      std::function<std::optional<placement::ScheduleRequest>(const store::JobRecord& job, std::string& why)>;

  Result<nlohmann::json> diagnose_path(const std::string& src, const std::string& dst, std::size_t max_paths,
                                       const RequestParser& parse_request);
  Result<nlohmann::json> diagnose_job(const std::string& name, std::size_t max_paths,
                                      const RequestParser& parse_request,
                                      std::chrono::seconds traffic_window = std::chrono::minutes(15));

 private:
  std::shared_ptr<TopologyCache> topology_;
  store::JobStore& jobs_;
  store::KpiStore& kpis_;
  AlarmLookup alarms_;
  TrafficSource traffic_;
  diagnose::VerdictRules rules_;
  DiagnosisLimits limits_;
};

}  // namespace hsns::services
