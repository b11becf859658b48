// SQLite implementation of IncidentStore: the incidents table of schema migration 11 (kIncidentSchema,
// applied by store/database.cpp's builtin_migrations()).
//
// Contract: as IncidentStore. save runs in one BEGIN IMMEDIATE transaction (sql::write), reads in one read
// transaction (sql::read). Rows: id (primary key), sequence (unique), state, first_ms, last_ms, document,
// alarms; an index on (state, sequence) serves the list and its count. The Database must outlive the store.
#pragma once

#include "store/database.h"
#include "store/incident_store.h"

namespace hsns::store {

// The DDL of schema migration 11 (incidents).
extern const char* const kIncidentSchema;

class SqliteIncidentStore final : public IncidentStore {
 public:
  explicit SqliteIncidentStore(Database& db, IncidentStoreOptions options = {})
      : db_(db), options_(options) {}
  StoreResult<void> save(std::span<const IncidentRecord> upserts,
                         std::span<const std::string> removals) override;
  StoreResult<IncidentRecord> get(const std::string& id) override;
  StoreResult<IncidentPage> list(const IncidentQuery& q) override;
  StoreResult<std::vector<IncidentRecord>> open_incidents() override;
  StoreResult<std::uint64_t> max_sequence() override;

 private:
  Database& db_;
  IncidentStoreOptions options_;
};

}  // namespace hsns::store
