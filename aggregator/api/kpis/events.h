// POST /api/v1/events: events pushed by other monitoring platforms, kept with the switches' syslog
// messages (ingest/log_buffer.h) and listed with them by GET /api/v1/logs (format "api").
//
// Body: {"events": [{"entity": "leaf01/Ethernet1", "type": "link_flap", "severity": "warning",
//                    "message": "...", "ts": "2026-12-02T05:07:56Z" | 1764651276000,
//                    "attributes": {"name": "text" | number | boolean, ...}}, ...]} (1..kMaxEventBatch).
// Contract:
// - entity: a KPI entity id (store::is_kpi_entity); type: 1..64 of [A-Za-z0-9_.:-]; severity: one of the
//   syslog severity names (emergency .. debug); message: 0..kMaxEventMessage characters; ts (optional: the
//   receive time when absent, timestamp_from_receipt true): as api/kpis/routes.h; attributes (optional): at
//   most kMaxEventAttributes members, names 1..64 characters, values a string of at most 1024
//   characters, a number or a boolean (kept as text). A bad event is a 400 naming "events[i].<field>" and
//   nothing of the batch is kept.
// - Each event becomes one log entry: device the entity's device (the part before the first '/') when the
//   topology has it, else "unknown:<device>" (counted unknown_entities), hostname the whole entity, app
//   the type, structured data element "attributes" with the attributes, facility 1 (user-level), source
//   "api:<token name>" ("api" without authentication). The buffer's bounds apply as to a syslog message
//   (bytes, the known and unknown pools, per device; ingest/log_buffer.h): an event of a new topology
//   device beyond syslog.max_devices is dropped and counted ("dropped"); an event dated outside the data
//   time window takes its receive time (counted in hsns_ingest_data_time_outside_window_total).
// - An agent token bound to a host may push events of that host's entities only (403 naming each
//   events[i].entity otherwise, nothing kept: http/auth.h).
// - Role agent or operator (a monitoring platform pushes with an agent token); 200
// {"stored","dropped","unknown_entities"}. Thread-safe; the buffer, the
//   metrics and the device check must outlive the router.
#pragma once

#include "api/kpis/metrics.h"
#include "api/kpis/routes.h"
#include "http/router.h"
#include "ingest/log_buffer.h"
#include "ingest/syslog_receiver.h"

namespace hsns::kpis_api {

inline constexpr std::size_t kMaxEventBatch = 1000;
inline constexpr std::size_t kMaxEventMessage = 4096;
inline constexpr std::size_t kMaxEventAttributes = 32;

void register_event_routes(http::Router& router, ingest::LogBuffer& logs, KpiMetrics& metrics,
                           ingest::IngestMetrics& ingest_metrics, DeviceCheck known_device);

}  // namespace hsns::kpis_api
