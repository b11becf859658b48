// REST handlers of host telemetry as the report batches stored it (store/telemetry_store.h).
//
// Routes (docs/rest-api.md "Telemetry", aggregator/openapi.json), all GET, permission read:
//   /api/v1/flows?host=&port=&job=&since=&until=&limit=&offset=
//       flow rows: both directions of a QP pair in one row, totals over the range, the processes owning the
//       two QPs (flow_pairs.h); host: the reporting host; port: a port id, flows from or to its address;
//       job: a registered job, flows from or to the addresses of its NPUs' ports; since/until: the
//       batches closed in [since, until). Runs on the worker pool (Cost::heavy).
//   /api/v1/hosts/{host}/counters?port=&counter=&since=&until=&limit=&offset=
//       without since/until: the newest counters snapshot (every port); with either: every reading in the
//       range, ordered by port, source, counter, time.
//   /api/v1/hosts/{host}/optics?netdev=&limit=&offset=   module diagnostics of the newest optics section
//   /api/v1/hosts/{host}/lldp?netdev=&limit=&offset=     LLDP neighbours of the newest lldp section
//   /api/v1/hosts/{host}/qps?limit=&offset=              QP records of the newest qp section
// Contract:
// - Strict query: an unknown parameter or a bad value is a 400 problem naming the parameter (times RFC 3339
//   with an offset, since before until; limit 1..kMaxTelemetryLimit, default kDefaultTelemetryLimit;
//   offset 0..kMaxTelemetryOffset). An unregistered host, an unknown port id or job is 404.
// - Bounded: a page holds at most `limit` rows; "next_offset" is the offset of the next page, or null on
//   the last one. /flows joins at most kMaxFlowKeys direction keys per request: a range holding more is a
//   422 naming "since" (narrow it with since/until, host, port or job).
// - Answers {"items": [...], "next_offset": n|null}; every row carries the time of its reading (ts_ms,
//   Unix milliseconds, and time, RFC 3339 UTC).
// The stores must outlive the router. Thread-safe as the stores are.
#pragma once

#include <cstddef>

#include "http/router.h"
#include "store/job_store.h"
#include "store/network_store.h"
#include "store/telemetry_store.h"

namespace hsns::telemetry_api {

inline constexpr std::size_t kDefaultTelemetryLimit = 1000;
inline constexpr std::size_t kMaxTelemetryLimit = 10000;
inline constexpr std::size_t kMaxTelemetryOffset = 1'000'000;
inline constexpr std::size_t kMaxFlowKeys = 100'000;

void register_telemetry_routes(http::Router& router, store::TelemetryStore& telemetry, store::JobStore& jobs,
                               store::NetworkStore& network);

}  // namespace hsns::telemetry_api
