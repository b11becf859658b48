// Storage of the telemetry report batches hsnsd sends (POST /api/v1/agents/{host}/reports, kind "report" of
// hsns/proto/report.h): flow records, port counters, module diagnostics, LLDP neighbours, QP records, port
// states, and the batches received.
//
// Contract:
// - ingest(host, report, bytes) stores the whole batch atomically (all its rows or none) and records
//   (host, report.seq) as received. A batch whose (host, seq) was received before stores nothing again
//   and answers the same acknowledgement with `duplicate` set; so an agent that resends after a lost
//   answer is safe. The host must be registered (not_found otherwise). `bytes` is the size of the batch as
//   it arrived (its encoded body): the measure of the size budget below.
// - prune(policy, now) removes, in one transaction, every batch received more than policy.max_age before
//   `now` (when max_age > 0), then, while the batches left hold more than policy.max_bytes (when > 0),
//   the oldest received batches first, each with all its rows. It answers how many batches and rows of
//   each table went. A pruned (host, seq) is forgotten: the same seq sent again is a new batch.
// - usage() answers the batches held and their bytes (for metrics and tests).
// - Errors are StoreError values (unavailable when the backend fails). Thread-safe as the backend is.
// - Implementations: SqliteTelemetryStore (the tables of schema migration 7); a column store (ClickHouse)
//   may implement the same interface later.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hsns/proto/report.h"
#include "store/network_store.h"

namespace hsns::store {

// The tables of a batch's rows, in the order of kTelemetryTableNames (metric labels, prune counts).
enum class TelemetryTable : std::uint8_t {
  batches,
  flow_batches,
  flows,
  port_counters,
  modules,
  lldp_neighbors,
  qps,
  ports,
};
inline constexpr std::size_t kTelemetryTables = 8;
inline constexpr std::array<const char*, kTelemetryTables> kTelemetryTableNames = {
    "batches", "flow_batches", "flows", "port_counters", "modules", "lldp_neighbors", "qps", "ports"};

struct IngestResult {
  std::uint64_t acked_seq = 0;
  bool duplicate = false;  // (host, seq) was received before: nothing stored this time
  std::size_t rows = 0;    // rows written (0 for a duplicate)
};

struct RetentionPolicy {
  std::chrono::milliseconds max_age{0};  // 0: no age limit
  std::uint64_t max_bytes = 0;           // 0: no size budget
};

struct PruneResult {
  std::uint64_t batches_by_age = 0;
  std::uint64_t batches_by_size = 0;
  std::array<std::uint64_t, kTelemetryTables> rows{};  // by TelemetryTable (batches included)
  std::uint64_t total_rows() const;
};

struct TelemetryUsage {
  std::uint64_t batches = 0;
  std::uint64_t bytes = 0;
};

class TelemetryStore {
 public:
  virtual ~TelemetryStore() = default;
  virtual StoreResult<IngestResult> ingest(const std::string& host, const proto::Report& report,
                                           std::uint64_t bytes) = 0;
  virtual StoreResult<PruneResult> prune(const RetentionPolicy& policy,
                                         std::chrono::system_clock::time_point now) = 0;
  virtual StoreResult<TelemetryUsage> usage() = 0;
};

}  // namespace hsns::store
