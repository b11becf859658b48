// SQLite implementation of TelemetryStore: the telemetry_* tables of schema migration 7 and the indexes of
// migration 8 (kTelemetrySchema, kTelemetryQuerySchema below, applied by store/database.cpp's
// builtin_migrations()).
//
// Contract: as TelemetryStore. ingest and prune each run in one BEGIN IMMEDIATE transaction on the
// Database's writer connection (sql::write). Rows reference their batch by telemetry_batches.id
// (batch_id, indexed), so pruning deletes by batch from every table. Unsigned 64-bit counters (flow
// bytes and packets, counter values and deltas) are stored as the INTEGER of the same 64 bits (values
// above 2^63-1 read back negative in SQL; cast to unsigned in the reader). Port counters are one row per
// port and counter: port is "device/port" for RDMA counters and the netdev otherwise; source is "rdma",
// "rdma_hw", "statistics", "ethtool" or "pause" (counter "prio<N>.<rx_frames|tx_frames|rx_duration_us|
// tx_duration_us>"). Module diagnostics and LLDP neighbours keep their key members as columns and the
// section's document of the entry (JSON text) beside them. The Database must outlive the store.
#pragma once

#include "store/database.h"
#include "store/telemetry_store.h"

namespace hsns::store {

// The DDL of schema migration 7 (the telemetry tables).
extern const char* const kTelemetrySchema;
// The DDL of schema migration 8: the indexes of the read side (batches by host and time, QP records by
// their endpoints for the flows' QP join).
extern const char* const kTelemetryQuerySchema;

class SqliteTelemetryStore final : public TelemetryStore {
 public:
  explicit SqliteTelemetryStore(Database& db) : db_(db) {}
  StoreResult<IngestResult> ingest(const std::string& host, const proto::Report& report,
                                   std::uint64_t bytes) override;
  StoreResult<PruneResult> prune(const RetentionPolicy& policy,
                                 std::chrono::system_clock::time_point now) override;
  StoreResult<TelemetryUsage> usage() override;
  StoreResult<std::vector<FlowDirectionTotals>> flow_directions(const FlowQuery& query) override;
  StoreResult<TelemetryPage<CounterReading>> latest_counters(const std::string& host,
                                                             const CounterQuery& query) override;
  StoreResult<TelemetryPage<CounterReading>> counter_series(const std::string& host,
                                                            const CounterQuery& query,
                                                            const TimeRange& range) override;
  StoreResult<TelemetryPage<SectionDocument>> latest_modules(const std::string& host,
                                                             const std::optional<std::string>& netdev,
                                                             const Paging& paging) override;
  StoreResult<TelemetryPage<SectionDocument>> latest_neighbors(const std::string& host,
                                                               const std::optional<std::string>& netdev,
                                                               const Paging& paging) override;
  StoreResult<TelemetryPage<QpReading>> latest_qps(const std::string& host, const Paging& paging) override;

 private:
  Database& db_;
};

}  // namespace hsns::store
