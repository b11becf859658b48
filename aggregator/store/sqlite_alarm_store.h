// SQLite implementation of AlarmStore: the alarms, alarm_history and alarm_silences tables of schema
// migration 10 (kAlarmSchema below, applied by store/database.cpp's builtin_migrations()).
//
// Contract: as AlarmStore. apply, put_silence, delete_silence and prune each run in one BEGIN IMMEDIATE
// transaction (sql::write); the reads in one read transaction (sql::read).
// - alarms: one row per alarm id (the alarm's last state); indexes on last_ms and (state, last_ms) for the
//   list's order and the restart's reload. The fingerprint is kept as the signed 64-bit value of its bits.
// - alarm_history: one row per state change (seq: INTEGER PRIMARY KEY, the order of writing), indexed by
//   (alarm_id, seq).
// - alarm_silences: one row per rule.
// The Database must outlive the store.
#pragma once

#include "store/alarm_store.h"
#include "store/database.h"

namespace hsns::store {

// The DDL of schema migration 10 (the alarm tables).
extern const char* const kAlarmSchema;

class SqliteAlarmStore final : public AlarmStore {
 public:
  explicit SqliteAlarmStore(Database& db) : db_(db) {}
  StoreResult<void> apply(std::span<const brain::AlarmChange> changes) override;
  StoreResult<std::vector<brain::Alarm>> load_active(std::size_t limit) override;
  StoreResult<AlarmPage> query(const AlarmFilter& filter) override;
  StoreResult<std::optional<AlarmWithHistory>> get(const std::string& id) override;
  StoreResult<void> put_silence(const brain::Silence& silence) override;
  StoreResult<bool> delete_silence(const std::string& id) override;
  StoreResult<std::vector<brain::Silence>> list_silences() override;
  StoreResult<std::size_t> prune(std::int64_t cleared_before_ms) override;

 private:
  Database& db_;
};

}  // namespace hsns::store
