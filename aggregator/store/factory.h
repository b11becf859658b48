// The store backend factory: picks the backend from the `database` setting of the configuration and
// builds every store interface on it, so nothing outside store/ names a backend class.
//
// Contract:
// - parse_database_setting: "postgresql://..." or "postgres://..." names the PostgreSQL backend, which
//   is planned but not built: invalid "database" saying so. Any other "<scheme>://..." is invalid
//   "database" (unknown backend). "", ":memory:" and "file:" URIs are invalid "database" (the data must
//   survive a restart). Everything else is the path of an SQLite database file.
// - check_database: what `check-config` can check without opening: the setting parses and, for SQLite,
//   the file's directory exists (invalid "database" otherwise).
// - open_stores: opens the backend (SQLite: the file in WAL mode, migrations applied) and returns the
//   stores on it; a setting parse_database_setting refuses is refused the same way, a backend that cannot
//   be opened is unavailable with the reason.
// - Stores owns the backend and its store objects; the references it hands out live as long as it does.
//   close() flushes and closes the backend (SQLite: WAL checkpoint) once every caller is done (the
//   aggregator's workers have stopped); afterwards every store call is unavailable. Thread-safe as the
//   stores are.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "store/agent_store.h"
#include "store/alarm_store.h"
#include "store/incident_store.h"
#include "store/job_store.h"
#include "store/kpi_store.h"
#include "store/network_store.h"
#include "store/telemetry_store.h"
#include "store/topology_store.h"

namespace hsns::store {

enum class Backend { sqlite };

struct DatabaseSetting {
  Backend backend = Backend::sqlite;
  std::string location;  // SQLite: the database file path
};

StoreResult<DatabaseSetting> parse_database_setting(const std::string& setting);

StoreResult<void> check_database(const std::string& setting);

struct StoreOptions {
  std::string database;              // the `database` setting
  std::size_t read_connections = 4;  // SQLite: pooled read-only connections
};

class Stores {
 public:
  virtual ~Stores() = default;
  virtual NetworkStore& network() = 0;
  virtual AgentStore& agents() = 0;
  virtual TopologyStore& topology() = 0;
  virtual JobStore& jobs() = 0;
  virtual TelemetryStore& telemetry() = 0;
  virtual KpiStore& kpis() = 0;
  virtual AlarmStore& alarms() = 0;
  virtual IncidentStore& incidents() = 0;
  // Is the backend usable? (/readyz)
  virtual StoreResult<void> check() = 0;
  // Flushes and closes the backend; idempotent. The error reports a failed flush (data stays safe).
  virtual StoreResult<void> close() = 0;
  // What the start-up log says about the backend, e.g. "SQLite /var/lib/hsns/aggregator.db, schema v4".
  virtual std::string describe() const = 0;
};

StoreResult<std::unique_ptr<Stores>> open_stores(const StoreOptions& options);

}  // namespace hsns::store
