// The alarm store: the network brain's alarms (lib/brain/alarms.h) with every state change of each, and the
// silence rules (docs/brain.md, "Alarms").
//
// Contract (every backend keeps it; SqliteAlarmStore is the first):
// - apply(changes) writes a batch of AlarmChanges atomically, in order: each upserts its alarm's row (by
//   id: the alarm as the change carries it) and, unless it is an "updated" change (repeats counted), adds
//   one history row (change kind, time, actor, state after, detail). So the row is always the alarm's last
//   state and the history its every state change.
// - load_active(limit): the alarms not cleared, newest last_ms first, at most limit (a restart reloads them).
// - query(filter): alarms filtered by state, severity, entity (exact, matched against entity or root
//   cause), type (pattern id or fault type), suppressed, and last_ms within [since_ms, until_ms), newest
//   last_ms first (then id), offset/limit; total counts every match.
// - get(id): the alarm and its history (oldest first, at most kMaxAlarmHistory rows: the newest), or
//   nullopt.
// - Silences: put_silence inserts (conflict on an id used), delete_silence answers whether one went,
//   list_silences answers every rule (expired ones are deleted by the service).
// - prune(cleared_before_ms): deletes cleared alarms whose clear is older, with their history; answers
//   how many alarms went.
// - Errors are StoreError values (unavailable when the backend fails). Thread-safe as the backend is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brain/alarms.h"
#include "store/network_store.h"

namespace hsns::store {

inline constexpr std::size_t kMaxAlarmHistory = 1000;

struct AlarmHistoryEntry {
  std::int64_t seq = 0;  // order of writing
  brain::AlarmChangeKind change = brain::AlarmChangeKind::raised;
  std::int64_t at_ms = 0;
  std::string actor;
  brain::AlarmState state = brain::AlarmState::raised;
  bool suppressed = false;
  std::string detail;
  std::string comment;
};

struct AlarmFilter {
  std::optional<brain::AlarmState> state;
  std::optional<brain::FaultSeverity> severity;
  std::optional<std::string> entity;
  std::optional<std::string> type;
  std::optional<bool> suppressed;
  std::optional<std::int64_t> since_ms;
  std::optional<std::int64_t> until_ms;
  std::size_t limit = 100;
  std::size_t offset = 0;
};

struct AlarmPage {
  std::vector<brain::Alarm> items;
  std::size_t total = 0;
};

struct AlarmWithHistory {
  brain::Alarm alarm;
  std::vector<AlarmHistoryEntry> history;
};

class AlarmStore {
 public:
  virtual ~AlarmStore() = default;
  virtual StoreResult<void> apply(std::span<const brain::AlarmChange> changes) = 0;
  virtual StoreResult<std::vector<brain::Alarm>> load_active(std::size_t limit) = 0;
  virtual StoreResult<AlarmPage> query(const AlarmFilter& filter) = 0;
  virtual StoreResult<std::optional<AlarmWithHistory>> get(const std::string& id) = 0;
  virtual StoreResult<void> put_silence(const brain::Silence& silence) = 0;
  virtual StoreResult<bool> delete_silence(const std::string& id) = 0;
  virtual StoreResult<std::vector<brain::Silence>> list_silences() = 0;
  virtual StoreResult<std::size_t> prune(std::int64_t cleared_before_ms) = 0;
};

}  // namespace hsns::store
