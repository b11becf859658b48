// GET /api/v1/overlays/summary: the site view's top level at a glance. For each layout group (the SUs, the
// spine groups, the core: api/topology/layout.h) and each rail group ("rail:<n>": the leaves of rail n,
// topology_api::leaf_rail) its worst active alarm and the 95th percentile of its links' utilisation, so
// that the grouped view names both beside every group whatever overlay colours it (docs/rest-api.md,
// "Overlays"; aggregator/openapi.json, schema OverlaySummary).
//
// Contract:
// - summarise_groups(t, util, alarms): `util` is grade_topology's answer for the util overlay on `t`
//   (its group ids, link values and each node's group). The groups: util's group ids (layout order), then
//   the rail groups in rail order. Per group:
//     worst_alarm    the worst severity of the active alarms (raised or acknowledged, not suppressed: what
//                    the alarm overlay colours) whose entity or peer is a device of the group ("host003/eth1"
//                    names host003; a rail's devices are its leaves, and an NPU port entity names the rail of
//                    its link's leaf); none without one. An alarm naming devices of two groups counts in
//                    both, once in each; an entity that is no device of the topology counts nowhere.
//     active_alarms  how many such alarms.
//     util_p95       the nearest-rank 95th percentile of the utilisation (% of capacity, the util overlay's
//                    3-significant-digit values) of the links with a reading that have an end in the group
//                    (a leaf-spine link counts for its SU, its spine group and its leaf's rail); none
//                    without a reading.
//     util_grade     util_p95 graded by the util overlay's configured thresholds (kNoData without a value).
//     util_links     how many links the percentile was taken over.
// - summary_json: the answer; groups as parallel arrays in layout order, with the revision, the time and
//   the util thresholds used. Pure functions.
// - register_summary_route: role read; no query parameters (an unknown one is 400 naming it); readings of
//   the last kDefaultGradeMaxAgeS, now; 404 before a topology, 503 when the KPI store fails. A worker-pool
//   route: one KPI read of the util metrics and one scan of the active alarms, O(links + alarms).
//   The store, the cache and what `active_alarms` reads must outlive the router.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/overlays/grades.h"
#include "api/overlays/thresholds.h"
#include "brain/alarms.h"
#include "http/router.h"
#include "services/topology_cache.h"
#include "store/kpi_store.h"

namespace hsns::overlays {

struct GroupSummary {
  std::int64_t revision = 0;
  std::vector<std::string> group_ids;  // layout order
  std::vector<std::optional<brain::FaultSeverity>> worst_alarm;
  std::vector<std::uint32_t> active_alarms;
  std::vector<std::optional<double>> util_p95;
  std::vector<std::int8_t> util_grade;
  std::vector<std::uint32_t> util_links;
  bool truncated = false;  // the util KPI read was truncated (kMaxGradeEntities)
};

GroupSummary summarise_groups(const Overlay& util, const topology::Topology& t, const Grades& util_grades,
                              std::span<const brain::Alarm> active);
nlohmann::json summary_json(const Overlay& util, const GroupSummary& s, std::int64_t at_ms);

using ActiveAlarms = std::function<std::vector<brain::Alarm>()>;
void register_summary_route(http::Router& router, const OverlaySettings& overlays, store::KpiStore& kpis,
                            std::shared_ptr<services::TopologyCache> topology, ActiveAlarms active_alarms);

}  // namespace hsns::overlays
