// REST handlers of the KPI store (store/kpi_store.h) and the events other monitoring platforms push.
//
// Routes (docs/rest-api.md "KPIs", aggregator/openapi.json):
//   POST /api/v1/kpis          {"samples": [{"entity","metric","ts","value"}, ...]} (1..kMaxKpiBatch);
//                              role agent or operator (a monitoring
//                              platform pushes with an agent token); 200
//                              {"accepted","duplicate","out_of_order",
//                              "rejected","new_series","unknown_entities"}
//   GET  /api/v1/kpis?entity=&metric=&since=&until=&resolution=raw|1m|1h&limit=   one series' points
//   GET  /api/v1/kpis/series?entity=&metric=&limit=                                 the series list
//   GET  /api/v1/kpis/latest?metric=&at=&max_age_s=&limit=                           newest value per entity
//   POST /api/v1/events        (api/kpis/events.h)
// Contract:
// - ts (a sample's, since, until): an RFC 3339 time with an offset ("2026-12-02T05:07:56.123Z") or an
//   integer of Unix milliseconds. A bad body or a bad sample is a 400 naming every bad field
//   ("samples[3].ts") and stores nothing (all or nothing); a sample the store counts (duplicate, late or
//   dated beyond the data time window's future bound: "rejected") is not an error. An agent token bound
//   to a host may push samples of that host's entities only (403 naming each samples[i].entity, nothing
//   stored: http/auth.h). unknown_entities counts the samples whose entity's device (the part
//   before the first '/') is no device of the topology: stored all the same, and counted in /metrics.
// - GET /api/v1/kpis: entity and metric required; since (default: everything) inclusive, until
//   (default: everything) exclusive, resolution default raw, limit 1..kMaxKpiPoints (default 10000);
//   {"entity","metric","resolution","points":[{"ts_ms","min","max","avg","count","last"}],"truncated"}.
//   A series never seen answers no points.
// - GET /api/v1/kpis/series: limit 1..kMaxKpiSeriesLimit (default 1000);
//   {"items":[{"entity","metric","first_ms","last_ms","last_value"}],"truncated"}.
// - GET /api/v1/kpis/latest (the dashboard's overlays and time slider): metric required (exact name); at
//   (a time as above; default: now, each series' newest sample) picks per entity the newest sample at or
//   before it (raw samples: within the raw retention); max_age_s 1..kMaxKpiLatestAgeS (default 600) leaves
//   out samples older than at (or now) minus that; limit 1..kMaxKpiLatestLimit (default 100000).
//   Compact, columns in entity order: {"metric","at_ms" (null without at),"since_ms","entities":[...],
//   "ts_ms":[...],"values":[...],"truncated"}. Cost: one row per series of the metric.
// - Unknown query parameters and bad values are 400 naming the parameter; a store failure is 503.
// - KpiRetentionTask prunes (KpiStore::prune) on its own thread every interval, the first run at once,
//   until destroyed; a failed run is logged and retried at the next interval.
// The store, the metrics and the device check must outlive the router and the task. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/kpis/metrics.h"
#include "hsns/periodic_thread.h"
#include "http/router.h"
#include "store/kpi_store.h"

namespace hsns::kpis_api {

inline constexpr std::size_t kMaxKpiBatch = 10'000;
inline constexpr std::size_t kMaxKpiPoints = 100'000;
inline constexpr std::size_t kMaxKpiSeriesLimit = 10'000;
inline constexpr std::size_t kMaxKpiLatestLimit = 200'000;
inline constexpr std::int64_t kMaxKpiLatestAgeS = std::int64_t{7} * 24 * 3600;

// The topology's name of `device` (as ingest/topology_devices.h resolves a syslog HOSTNAME), nullopt when
// the current topology has no such device. (An empty function: every device is unknown.)
using DeviceCheck = std::function<std::optional<std::string>(std::string_view device)>;

// The device an entity id names: the part before its first '/'.
std::string_view entity_device(std::string_view entity);

// A time as the API takes it: RFC 3339 with an offset, or an integer of Unix milliseconds (JSON number or
// the text of one in a query), in [0, store::kMaxKpiTimestampMs].
std::optional<std::int64_t> parse_api_time(const nlohmann::json& value);
std::optional<std::int64_t> parse_api_time_text(std::string_view text);

// Reads go to `store`; pushes are written through `sink` (the data time window in front of the store:
// ingest/windowed_kpi_sink.h).
void register_kpi_routes(http::Router& router, store::KpiStore& store, store::KpiSink& sink,
                         KpiMetrics& metrics, DeviceCheck known_device);

class KpiRetentionTask {
 public:
  KpiRetentionTask(store::KpiStore& store, std::chrono::milliseconds interval, KpiMetrics& metrics);
  KpiRetentionTask(const KpiRetentionTask&) = delete;
  KpiRetentionTask& operator=(const KpiRetentionTask&) = delete;

 private:
  void prune();

  store::KpiStore& store_;
  KpiMetrics& metrics_;
  PeriodicThread thread_;  // last: starts once the members above exist
};

}  // namespace hsns::kpis_api
