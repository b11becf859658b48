#include "store/factory.h"

#include <exception>
#include <filesystem>
#include <string_view>

#include "store/database.h"
#include "store/sqlite_agent_store.h"
#include "store/sqlite_alarm_store.h"
#include "store/sqlite_incident_store.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_kpi_store.h"
#include "store/sqlite_network_store.h"
#include "store/sqlite_telemetry_store.h"
#include "store/sqlite_topology_store.h"

namespace hsns::store {
namespace {

class SqliteStores final : public Stores {
 public:
  SqliteStores(const DatabaseOptions& options, const KpiStoreOptions& kpi)
      : db_(options),
        network_(db_),
        agents_(db_),
        topology_(db_),
        jobs_(db_),
        telemetry_(db_),
        kpis_(db_, kpi),
        alarms_(db_),
        incidents_(db_) {}

  NetworkStore& network() override { return network_; }
  AgentStore& agents() override { return agents_; }
  TopologyStore& topology() override { return topology_; }
  JobStore& jobs() override { return jobs_; }
  TelemetryStore& telemetry() override { return telemetry_; }
  KpiStore& kpis() override { return kpis_; }
  AlarmStore& alarms() override { return alarms_; }
  IncidentStore& incidents() override { return incidents_; }
  StoreResult<void> check() override { return unavailable_on_error(db_.check()); }
  StoreResult<void> close() override { return unavailable_on_error(db_.close()); }
  std::string describe() const override {
    return "SQLite " + db_.path() + ", schema v" + std::to_string(db_.schema_version());
  }

 private:
  static StoreResult<void> unavailable_on_error(const DbResult<void>& r) {
    if (!r) return tl::unexpected(StoreError::unavailable(r.error().message));
    return {};
  }

  Database db_;
  SqliteNetworkStore network_;
  SqliteAgentStore agents_;
  SqliteTopologyStore topology_;
  SqliteJobStore jobs_;
  SqliteTelemetryStore telemetry_;
  SqliteKpiStore kpis_;
  SqliteAlarmStore alarms_;
  SqliteIncidentStore incidents_;
};

}  // namespace

StoreResult<DatabaseSetting> parse_database_setting(const std::string& setting) {
  if (setting.empty()) return tl::unexpected(StoreError::invalid("database", "database is empty"));
  const auto scheme_end = setting.find("://");
  if (scheme_end == std::string::npos) {
    if (setting == ":memory:" || setting.rfind("file:", 0) == 0) {
      return tl::unexpected(StoreError::invalid(
          "database", "database '" + setting + "' is not a file path: the data must survive a restart"));
    }
    return DatabaseSetting{Backend::sqlite, setting};
  }
  const std::string_view scheme(setting.data(), scheme_end);
  if (scheme == "postgresql" || scheme == "postgres") {
    return tl::unexpected(StoreError::invalid(
        "database", "database " + std::string(scheme) +
                        "://...: the PostgreSQL backend is planned but not built into this hsns-aggregator; "
                        "set database to an SQLite file path"));
  }
  return tl::unexpected(StoreError::invalid(
      "database",
      "database " + std::string(scheme) + "://...: unknown backend; set database to an SQLite file path"));
}

StoreResult<void> check_database(const std::string& setting) {
  auto parsed = parse_database_setting(setting);
  if (!parsed) return tl::unexpected(std::move(parsed).error());
  const auto dir = std::filesystem::path(parsed->location).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return tl::unexpected(
        StoreError::invalid("database", "database directory " + dir.string() + " does not exist"));
  }
  return {};
}

StoreResult<std::unique_ptr<Stores>> open_stores(const StoreOptions& options) {
  auto parsed = parse_database_setting(options.database);
  if (!parsed) return tl::unexpected(std::move(parsed).error());
  DatabaseOptions db;
  db.path = parsed->location;
  db.read_connections = options.read_connections;
  try {
    return std::unique_ptr<Stores>(std::make_unique<SqliteStores>(db, KpiStoreOptions{}));
  } catch (const std::exception& e) {
    return tl::unexpected(
        StoreError::unavailable("cannot open database " + parsed->location + ": " + e.what()));
  }
}

}  // namespace hsns::store
