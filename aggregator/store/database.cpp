#include "store/database.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <string_view>
#include <utility>

#include "hsns/time.h"
#include "store/sqlite_alarm_store.h"
#include "store/sqlite_incident_store.h"
#include "store/sqlite_kpi_store.h"
#include "store/sqlite_telemetry_store.h"

namespace hsns::store {
namespace {

// Keys of IP addresses are IpAddress::sort_key() strings: fixed width and order-preserving, so range
// queries on them are range queries on addresses (and IPv4 keys never compare inside IPv6 ranges).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE hosts (
  name TEXT PRIMARY KEY,
  generation INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE host_npus (
  host TEXT NOT NULL REFERENCES hosts(name) ON DELETE CASCADE,
  npu_index INTEGER NOT NULL,
  netdev TEXT NOT NULL,
  mac TEXT NOT NULL,
  rdma_device TEXT NOT NULL,
  link_speed_mbps INTEGER NOT NULL,
  PRIMARY KEY (host, npu_index)
);
CREATE TABLE subnets (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tenant TEXT NOT NULL,
  cidr TEXT NOT NULL,
  ip_version INTEGER NOT NULL CHECK (ip_version IN (4, 6)),
  prefix_length INTEGER NOT NULL,
  network_key TEXT NOT NULL,
  last_key TEXT NOT NULL,
  gateway_ip TEXT,
  mtu INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant, name)
);
CREATE INDEX subnets_by_tenant_range ON subnets (tenant, network_key);
CREATE TABLE allocation_pools (
  subnet_id TEXT NOT NULL REFERENCES subnets(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  first_key TEXT NOT NULL,
  last_key TEXT NOT NULL,
  PRIMARY KEY (subnet_id, ordinal)
);
CREATE TABLE ports (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  subnet_id TEXT NOT NULL REFERENCES subnets(id),
  tenant TEXT NOT NULL,
  host TEXT NOT NULL REFERENCES hosts(name),
  npu INTEGER NOT NULL,
  ip TEXT NOT NULL,
  ip_key TEXT NOT NULL,
  fixed_ip INTEGER NOT NULL CHECK (fixed_ip IN (0, 1)),
  created_at TEXT NOT NULL,
  UNIQUE (subnet_id, ip_key),
  UNIQUE (host, npu, subnet_id)
);
-- UNIQUE (subnet_id, ip_key) also indexes the subnet_id filter, UNIQUE (host, npu, subnet_id) the host
-- filter.
CREATE INDEX ports_by_tenant ON ports (tenant);
)sql";

}  // namespace

// The last status report of each host's daemon (one row per host; replaced by every report).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE agent_status (
  host TEXT PRIMARY KEY REFERENCES hosts(name) ON DELETE CASCADE,
  applied_generation INTEGER NOT NULL,
  report TEXT NOT NULL,
  received_at TEXT NOT NULL
);
)sql";

// One current topology (a single row, id 1) in the import file schema, and the LLDP neighbours daemons
// reported, keyed by (host, "port:<netdev>" or "npu:<index>").
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE topology (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL,
  document TEXT NOT NULL,
  source TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE lldp_observations (
  host TEXT NOT NULL,
  port_key TEXT NOT NULL,
  port TEXT NOT NULL,
  npu INTEGER,
  neighbor_system TEXT NOT NULL,
  neighbor_port TEXT NOT NULL,
  observed_at TEXT NOT NULL,
  PRIMARY KEY (host, port_key)
);
)sql";

// Registered jobs (POST /api/v1/schedule): one row per job, one per rank holding an NPU (an NPU is held
// by at most one job), and the jobs revision (one row, bumped by every create and delete).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE jobs (
  name TEXT PRIMARY KEY,
  request TEXT NOT NULL,
  summary TEXT NOT NULL,
  topology_revision INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE job_npus (
  job TEXT NOT NULL REFERENCES jobs(name) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  host TEXT NOT NULL,
  npu INTEGER NOT NULL,
  ip TEXT NOT NULL,
  PRIMARY KEY (job, rank),
  UNIQUE (host, npu)
);
CREATE TABLE job_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL
);
INSERT INTO job_revision (id, revision) VALUES (1, 0);
)sql";

// Device states set after the topology document was stored (PATCH /api/v1/topology/devices): one row per
// host or switch (npu -1) or NPU, applied on top of the document; a newly stored document carries every
// state and clears them. The document moves to a table of its own: SQLite rewrites a whole row on any
// update, and a state change bumps the revision without touching a document of up to 256 MiB.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE topology_device_states (
  device TEXT NOT NULL,
  npu INTEGER NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (device, npu)
) WITHOUT ROWID;
CREATE TABLE topology_document (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  document TEXT NOT NULL
);
INSERT INTO topology_document (id, document) SELECT id, document FROM topology;
ALTER TABLE topology DROP COLUMN document;
)sql";

namespace {

// Store revisions (store/revision.h): one counter per domain, bumped by a trigger on every row written to
// the domain's tables, inside the writing transaction; and the random instance name of this database.
struct RevisionTables {
  const char* domain;
  std::vector<const char*> tables;
};

// A counter row per domain and the triggers that bump it on every row written to its tables.
std::string revision_triggers(const std::vector<RevisionTables>& domains) {
  std::string sql;
  for (const auto& d : domains) {
    sql += std::string("INSERT INTO store_revisions (domain, revision) VALUES ('") + d.domain + "', 0);\n";
    for (const char* table : d.tables) {
      for (const char* event : {"INSERT", "UPDATE", "DELETE"}) {
        sql += std::string("CREATE TRIGGER ") + table + "_" + event + "_revision AFTER " + event + " ON " +
               table + " BEGIN UPDATE store_revisions SET revision = revision + 1 WHERE domain = '" +
               d.domain + "'; END;\n";
      }
    }
  }
  return sql;
}

std::string schema_v5() {
  return "CREATE TABLE store_revisions (domain TEXT PRIMARY KEY, revision INTEGER NOT NULL);\n"
         "CREATE TABLE store_instance (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL);\n"
         "INSERT INTO store_instance (id, name) VALUES (1, lower(hex(randomblob(6))));\n" +
         revision_triggers({
             {"network", {"hosts", "host_npus", "subnets", "allocation_pools", "ports"}},
             {"agents", {"agent_status"}},
             {"lldp", {"lldp_observations"}},
         });
}

std::string schema_v12() {
  return revision_triggers({
      {"topology", {"topology", "topology_document", "topology_device_states"}},
      {"jobs", {"jobs", "job_npus"}},
  });
}

}  // namespace

const std::vector<Migration>& builtin_migrations() {
  static const std::string v5 = schema_v5();
  static const std::string v12 = schema_v12();
  static const std::vector<Migration> migrations = {
      {1, "hosts, NPUs, subnets, allocation pools, ports", kSchemaV1},
      {2, "agent status reports", kSchemaV2},
      {3, "cluster topology and LLDP observations", kSchemaV3},
      {4, "registered jobs and the NPUs they hold", kSchemaV4},
      {5, "store revisions bumped by every write of hosts, subnets, ports, agent status, LLDP", v5.c_str()},
      {6, "topology device states stored as rows", kSchemaV6},
      {7, "telemetry report batches: flows, port counters, modules, LLDP, QPs, port states",
       kTelemetrySchema},
      {8, "telemetry read side: batches by host and time, QP records by endpoint", kTelemetryQuerySchema},
      {9, "KPI series: raw samples and their 1-minute and 1-hour rollups", kKpiSchema},
      {10, "alarms, their history and the silence rules", kAlarmSchema},
      {11, "network brain incidents: ranked root causes, affected jobs, their alarms", kIncidentSchema},
      {12, "store revisions of the topology and the jobs", v12.c_str()},
  };
  return migrations;
}

// ---------------------------------------------------------------------------------------------------
// Statement

Statement::Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

void Statement::record_bind_error(int rc, int index) {
  if (rc == SQLITE_OK || bind_error_) return;
  bind_error_ = DbError{rc, "binding parameter " + std::to_string(index) + ": " +
                                std::string(sqlite3_errmsg(sqlite3_db_handle(stmt_)))};
}

Statement& Statement::bind_text(int index, std::string_view value) {
  record_bind_error(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
  return *this;
}

Statement& Statement::bind_text_unowned(int index, std::string_view value) {
  record_bind_error(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8),
                    index);
  return *this;
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
  record_bind_error(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  record_bind_error(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind_null(int index) {
  record_bind_error(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

Statement& Statement::bind_optional_text(int index, const std::optional<std::string>& value) {
  return value ? bind_text(index, *value) : bind_null(index);
}

DbResult<bool> Statement::step() {
  if (bind_error_) return tl::unexpected(*bind_error_);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return tl::unexpected(DbError{rc, std::string(sqlite3_errmsg(db))});
}

DbResult<void> Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_.reset();
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_, index);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::int64_t Statement::column_int64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::optional<std::string> Statement::column_optional_text(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_text(index);
}

std::int64_t Statement::changes() const {
  return sqlite3_changes64(sqlite3_db_handle(stmt_));
}

// ---------------------------------------------------------------------------------------------------
// Connection

Connection::Connection(const std::string& path, bool read_only, std::chrono::milliseconds busy_timeout) {
  const int flags =
      (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    close();
    throw DatabaseOpenError("cannot open database " + path + (read_only ? " (read-only)" : "") + ": " +
                            message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
}

Connection::~Connection() {
  close();
}

void Connection::close() {
  cached_.clear();
  if (db_ == nullptr) return;
  // Every Statement of this connection has been finalized by now (see the ownership contract), so the
  // close succeeds; sqlite3_close_v2 would defer it otherwise rather than leak.
  sqlite3_close_v2(db_);
  db_ = nullptr;
}

DbResult<Statement*> Connection::prepare_cached(std::string_view sql) {
  const auto found = cached_.find(std::string(sql));
  if (found != cached_.end()) {
    found->second.reset();  // also after a use cut short by an error
    return &found->second;
  }
  auto prepared = prepare(sql);
  if (!prepared) return tl::unexpected(prepared.error());
  return &cached_.emplace(std::string(sql), std::move(*prepared)).first->second;
}

DbResult<Statement> Connection::prepare(std::string_view sql) {
  if (db_ == nullptr) return tl::unexpected(DbError{SQLITE_MISUSE, "database connection is closed"});
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) return tl::unexpected(error(rc, "preparing statement"));
  if (stmt == nullptr) return tl::unexpected(DbError{SQLITE_MISUSE, "prepare: empty SQL statement"});
  Statement statement(stmt);
  const std::string_view rest(tail, static_cast<std::size_t>(sql.data() + sql.size() - tail));
  if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    return tl::unexpected(DbError{SQLITE_MISUSE, "prepare: more than one SQL statement"});
  }
  return statement;
}

DbResult<void> Connection::execute(const std::string& sql) {
  if (db_ == nullptr) return tl::unexpected(DbError{SQLITE_MISUSE, "database connection is closed"});
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    DbError e{rc, message != nullptr ? std::string(message) : std::string(sqlite3_errstr(rc))};
    sqlite3_free(message);
    return tl::unexpected(std::move(e));
  }
  return {};
}

DbError Connection::error(int rc, std::string_view what) const {
  std::string message(what);
  message += ": ";
  message += db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  return DbError{rc, std::move(message)};
}

bool Connection::in_transaction() const {
  return db_ != nullptr && sqlite3_get_autocommit(db_) == 0;
}

// ---------------------------------------------------------------------------------------------------
// Transaction

DbResult<Transaction> Transaction::begin(Connection& connection, Mode mode) {
  auto r = connection.execute(mode == Mode::write ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!r) return tl::unexpected(r.error());
  return Transaction(&connection);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)) {}

Transaction::~Transaction() {
  rollback();
}

DbResult<void> Transaction::commit() {
  if (connection_ == nullptr) return tl::unexpected(DbError{SQLITE_MISUSE, "no transaction to commit"});
  auto r = connection_->execute("COMMIT");
  if (!r) {
    // A failed COMMIT (e.g. SQLITE_FULL, SQLITE_BUSY) may leave the transaction open: roll it back so
    // that nothing of it is stored and the connection is usable again.
    rollback();
    return r;
  }
  connection_ = nullptr;
  return {};
}

void Transaction::rollback() noexcept {
  if (connection_ == nullptr) return;
  // SQLite rolls back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, ...); only roll back what
  // is still open.
  if (connection_->in_transaction()) (void)connection_->execute("ROLLBACK");
  connection_ = nullptr;
}

// ---------------------------------------------------------------------------------------------------
// Database

Database::ReadLease::~ReadLease() {
  if (connection_) db_->release_reader(std::move(connection_));
}

Database::Database(DatabaseOptions options) : options_(std::move(options)) {
  const auto& path = options_.path;
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) {
    throw DatabaseOpenError("database path must be a file name (got '" + path + "')");
  }
  writer_ = std::make_unique<Connection>(path, false, options_.busy_timeout);

  auto pragma = [&](const std::string& sql) {
    auto r = writer_->execute(sql);
    if (!r) throw DatabaseOpenError("database " + path + ": " + sql + " failed: " + r.error().message);
  };
  {
    auto stmt = writer_->prepare("PRAGMA journal_mode=WAL");
    std::string mode;
    if (stmt) {
      auto row = stmt->step();
      if (row && *row) mode = stmt->column_text(0);
      if (!row) throw DatabaseOpenError("database " + path + ": cannot enable WAL: " + row.error().message);
    } else {
      throw DatabaseOpenError("database " + path + ": cannot enable WAL: " + stmt.error().message);
    }
    if (mode != "wal") {
      throw DatabaseOpenError("database " + path + ": cannot enable WAL journal mode (got '" + mode + "')");
    }
  }
  pragma("PRAGMA synchronous=FULL");
  pragma("PRAGMA foreign_keys=ON");

  migrate(options_.migrations != nullptr ? *options_.migrations : builtin_migrations());
  load_instance();
  refresh_revisions(*writer_);

  const std::size_t readers = std::max<std::size_t>(1, options_.read_connections);
  for (std::size_t i = 0; i < readers; ++i) {
    auto reader = std::make_unique<Connection>(path, true, options_.busy_timeout);
    auto r = reader->execute("PRAGMA foreign_keys=ON");
    if (!r)
      throw DatabaseOpenError("database " + path + ": configuring a reader failed: " + r.error().message);
    idle_readers_.push_back(std::move(reader));
  }
}

Database::~Database() {
  (void)close();
}

void Database::migrate(const std::vector<Migration>& migrations) {
  const auto& path = options_.path;
  // Increasing numbers; a gap is a migration of another branch not merged yet.
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version <= (i == 0 ? 0 : migrations[i - 1].version)) {
      throw DatabaseOpenError("internal error: schema migrations must be numbered in increasing order");
    }
  }
  const int known = migrations.empty() ? 0 : migrations.back().version;
  auto fail = [&](const std::string& what, const DbError& e) {
    throw DatabaseOpenError("database " + path + ": " + what + ": " + e.message);
  };

  if (auto r = writer_->execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                                "applied_at TEXT NOT NULL)");
      !r) {
    fail("creating schema_migrations", r.error());
  }

  auto current_version = [&]() -> int {
    auto stmt = writer_->prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    if (!stmt) fail("reading the schema version", stmt.error());
    auto row = stmt->step();
    if (!row) fail("reading the schema version", row.error());
    return static_cast<int>(stmt->column_int64(0));
  };

  int version = current_version();
  if (version > known) {
    throw DatabaseOpenError("database " + path + " has schema version " + std::to_string(version) +
                            ", newer than this binary supports (" + std::to_string(known) +
                            "): it was written by a newer hsns-aggregator; upgrade the binary or restore "
                            "a backup made for this version");
  }
  for (const auto& m : migrations) {
    if (m.version <= version) continue;
    auto txn = Transaction::begin(*writer_, Transaction::Mode::write);
    if (!txn) fail("starting migration " + std::to_string(m.version), txn.error());
    // Another process may have migrated meanwhile: re-read under the write lock.
    version = current_version();
    if (version > known) {
      throw DatabaseOpenError("database " + path + " was migrated to schema version " +
                              std::to_string(version) + " by a newer hsns-aggregator while opening");
    }
    if (m.version <= version) continue;
    if (auto r = writer_->execute(m.sql); !r) {
      fail("schema migration " + std::to_string(m.version) + " (" + m.description + ")", r.error());
    }
    auto insert = writer_->prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)");
    if (!insert) fail("recording migration " + std::to_string(m.version), insert.error());
    insert->bind_int64(1, m.version).bind_text(2, format_rfc3339_utc(std::chrono::system_clock::now()));
    if (auto r = insert->run(); !r) fail("recording migration " + std::to_string(m.version), r.error());
    if (auto r = txn->commit(); !r) fail("committing migration " + std::to_string(m.version), r.error());
    version = m.version;
  }
  schema_version_ = current_version();
}

void Database::load_instance() {
  auto stmt = writer_->prepare("SELECT name FROM store_instance WHERE id = 1");
  if (!stmt) return;  // a schema without revisions (custom migrations): no instance name
  if (auto row = stmt->step(); row && *row) instance_ = stmt->column_text(0);
}

void Database::refresh_revisions(Connection& connection) {
  static constexpr std::array<std::string_view, kRevisionDomains> kNames = {"network", "agents", "lldp",
                                                                            "topology", "jobs"};
  auto stmt = connection.prepare("SELECT domain, revision FROM store_revisions");
  if (!stmt) return;  // a schema without revisions (custom migrations): the mirror stays 0
  for (;;) {
    auto row = stmt->step();
    if (!row || !*row) return;
    const std::string domain = stmt->column_text(0);
    const auto it = std::find(kNames.begin(), kNames.end(), domain);
    if (it == kNames.end()) continue;
    auto& mirror = revisions_.at(static_cast<std::size_t>(it - kNames.begin()));
    // Monotonic: a value read later never replaces a newer one.
    const std::int64_t value = stmt->column_int64(1);
    std::int64_t seen = mirror.load();
    while (seen < value && !mirror.compare_exchange_weak(seen, value)) {
    }
  }
}

std::int64_t Database::revision(RevisionDomain domain) const {
  return revisions_.at(static_cast<std::size_t>(domain)).load(std::memory_order_acquire);
}

DbResult<Database::WriteLease> Database::writer() {
  std::unique_lock<std::mutex> lock(writer_mutex_);
  if (!writer_) return tl::unexpected(DbError{SQLITE_MISUSE, "database is closed"});
  return WriteLease(std::move(lock), writer_.get());
}

DbResult<Database::ReadLease> Database::reader() {
  std::unique_lock<std::mutex> lock(pool_mutex_);
  pool_cv_.wait(lock, [&] { return closed_ || !idle_readers_.empty(); });
  if (closed_) return tl::unexpected(DbError{SQLITE_MISUSE, "database is closed"});
  auto connection = std::move(idle_readers_.back());
  idle_readers_.pop_back();
  ++borrowed_readers_;
  return ReadLease(this, std::move(connection));
}

void Database::release_reader(std::unique_ptr<Connection> connection) {
  // A lease may end with a transaction still open (early return after an error): never let the next
  // user inherit an old snapshot.
  if (connection->in_transaction()) (void)connection->execute("ROLLBACK");
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    --borrowed_readers_;
    if (!closed_) idle_readers_.push_back(std::move(connection));
  }
  pool_cv_.notify_all();
  // When closed, the connection is destroyed (closed) here, outside the pool lock.
}

DbResult<void> Database::check() {
  auto lease = reader();
  if (!lease) return tl::unexpected(lease.error());
  auto stmt = lease->connection().prepare("SELECT COUNT(*) FROM schema_migrations");
  if (!stmt) return tl::unexpected(stmt.error());
  auto row = stmt->step();
  if (!row) return tl::unexpected(row.error());
  if (!*row) return tl::unexpected(DbError{SQLITE_ERROR, "health check query returned no row"});
  return {};
}

DbResult<void> Database::close() {
  std::vector<std::unique_ptr<Connection>> readers;
  {
    std::unique_lock<std::mutex> lock(pool_mutex_);
    closed_ = true;
    pool_cv_.notify_all();
    pool_cv_.wait(lock, [&] { return borrowed_readers_ == 0; });
    readers.swap(idle_readers_);
  }
  readers.clear();  // closes them

  std::lock_guard<std::mutex> lock(writer_mutex_);
  if (!writer_) return {};
  DbResult<void> result;
  if (writer_->in_transaction()) (void)writer_->execute("ROLLBACK");
  if (auto r = writer_->execute("PRAGMA wal_checkpoint(TRUNCATE)"); !r) {
    result = tl::unexpected(DbError{r.error().code, "checkpointing the WAL: " + r.error().message});
  }
  writer_.reset();
  return result;
}

}  // namespace hsns::store
