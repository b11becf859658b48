// Storage interface for the network brain's incidents (aggregator/brain/incident_service.h): what GET
// /api/v1/incidents answers, kept across restarts.
//
// Contract (every backend keeps it; SqliteIncidentStore is the first):
// - A record is one incident: its id ("inc-<sequence>"), sequence (unique, grows), state ("open" or
//   "resolved"), first and last event time (Unix ms), the JSON document the API answers (stored as given)
//   and the JSON array of its alarms (the correlator's input, so a restart can restore open incidents).
// - save(upserts, removals) writes every record (insert or replace by id) and removes the ids given (merged
//   incidents) in one transaction: all or nothing. It then keeps at most options.keep_resolved resolved
//   incidents (the oldest by sequence go).
// - get(id) is not_found for an unknown id. list(q) answers the incidents of a state (nullopt: all),
//   newest (highest sequence) first, q.offset skipped, at most q.limit, with the total matching.
//   open_incidents() every open one in sequence order; max_sequence() the highest sequence ever stored
//   (0 when none), so ids are never reused.
// - Errors are StoreError values (not_found, unavailable). Thread-safe as the backend is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/network_store.h"

namespace hsns::store {

struct IncidentRecord {
  std::string id;
  std::uint64_t sequence = 0;
  std::string state;  // "open" | "resolved"
  std::int64_t first_ms = 0;
  std::int64_t last_ms = 0;
  std::string document;  // JSON object as the API answers it
  std::string alarms;    // JSON array of the alarms (restore)
};

struct IncidentQuery {
  std::optional<std::string> state;  // "open" | "resolved"; nullopt: both
  std::size_t limit = 100;
  std::size_t offset = 0;
};

struct IncidentPage {
  std::vector<IncidentRecord> items;
  std::uint64_t total = 0;
};

struct IncidentStoreOptions {
  std::size_t keep_resolved = 10'000;
};

class IncidentStore {
 public:
  virtual ~IncidentStore() = default;
  virtual StoreResult<void> save(std::span<const IncidentRecord> upserts,
                                 std::span<const std::string> removals) = 0;
  virtual StoreResult<IncidentRecord> get(const std::string& id) = 0;
  virtual StoreResult<IncidentPage> list(const IncidentQuery& q) = 0;
  virtual StoreResult<std::vector<IncidentRecord>> open_incidents() = 0;
  virtual StoreResult<std::uint64_t> max_sequence() = 0;
};

}  // namespace hsns::store
