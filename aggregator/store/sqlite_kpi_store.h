// SQLite implementation of KpiStore: the kpi_* tables of schema migration 9 (kKpiSchema below, applied by
// store/database.cpp's builtin_migrations()).
//
// Contract: as KpiStore. append and prune each run in one BEGIN IMMEDIATE transaction on the Database's
// writer connection (sql::write); query and list_series in one read transaction (sql::read).
// - kpi_series: one row per (entity, metric) with its integer id, first and newest timestamp and newest
// value.
// - kpi_raw (series_id, ts_ms) -> value, WITHOUT ROWID: the primary key is the duplicate check (INSERT OR
//   IGNORE) and the query order. kpi_1m and kpi_1h (series_id, bucket_ms) -> min, max, sum, count,
//   last_ms, last_value: one upsert per bucket a batch touches (the batch's samples of one bucket are
//   folded in memory first), so a report batch costs one raw insert per sample and a few upserts.
// - prune deletes per series by the primary key (no index on time alone: it would slow every insert);
//   a series whose newest sample is older than the longest retention goes with its rows.
// append validates before it opens the transaction. The Database must outlive the store.
#pragma once

#include "store/database.h"
#include "store/kpi_store.h"

namespace hsns::store {

// The DDL of schema migration 9 (the KPI tables).
extern const char* const kKpiSchema;

class SqliteKpiStore final : public KpiStore {
 public:
  explicit SqliteKpiStore(Database& db, KpiStoreOptions options = {}) : db_(db), options_(options) {}
  StoreResult<KpiAppendResult> append(std::span<const KpiSample> samples) override;
  StoreResult<KpiSeriesPoints> query(const KpiQuery& q) override;
  StoreResult<KpiSeriesList> list_series(const KpiSeriesFilter& filter) override;
  StoreResult<KpiLatestValues> latest(const KpiLatestQuery& q) override;
  StoreResult<KpiPruneResult> prune(std::chrono::system_clock::time_point now) override;

 private:
  Database& db_;
  KpiStoreOptions options_;
};

}  // namespace hsns::store
