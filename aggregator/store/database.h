// RAII layer over the embedded SQLite database of the aggregator.
//
// Contract:
// - Database owns one writer connection and a small pool of read-only connections to one database
//   file in WAL mode (journal_mode=WAL, synchronous=FULL, foreign_keys=ON, busy_timeout). WAL lets the
//   readers run concurrently with the writer, each reader seeing a consistent snapshot per transaction.
// - Opening applies the numbered schema migrations (table schema_migrations(version, applied_at)), each
//   in its own BEGIN IMMEDIATE transaction, and is idempotent on reopen. A database whose schema version
//   is newer than the newest migration this binary knows is refused.
// - Errors while opening throw DatabaseOpenError (startup: the process cannot run without its
//   database). After that every error is a value (DbError with SQLite's result code and message).
// - Threads: Database is thread-safe. writer() hands out the writer connection under a mutex (one
//   writer at a time, callers queue); reader() borrows a read-only connection from the pool (blocks
//   while all are borrowed). A Connection, Statement or Transaction is used by one thread at a time: the
//   thread holding the lease.
// - Ownership: a Statement belongs to the Connection that prepared it and must be destroyed before the
//   connection is returned (i.e. before the lease ends); a Transaction likewise. Leases must end before
//   close() can finish (close() waits for borrowed read connections).
// - Store revisions (store/revision.h): the Database is the RevisionSource of its stores; the writer
//   refreshes the in-process mirror after each commit (refresh_revisions, called by sql::write).
// - close() (also run by the destructor) closes the readers, checkpoints the WAL into the main file with
//   PRAGMA wal_checkpoint(TRUNCATE) and closes the writer. Afterwards writer()/reader()/check() return
//   an error instead of blocking.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <unordered_map>
#include <vector>

#include "store/revision.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hsns::store {

// An SQLite failure after startup: the result code (SQLITE_FULL, SQLITE_BUSY, ...) and a message that
// says what was being done and what SQLite answered.
struct DbError {
  int code = 0;
  std::string message;
};

template <typename T>
using DbResult = tl::expected<T, DbError>;

// Thrown only while opening a Database (or a Connection).
class DatabaseOpenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One numbered schema migration. Versions start at 1 and increase (a gap is a migration of a branch not
// merged yet); a migration is never edited
// once released: schema changes are new migrations.
struct Migration {
  int version = 0;
  const char* description = "";
  const char* sql = "";  // one or more SQL statements
};

// The migrations of the aggregator database, in order.
const std::vector<Migration>& builtin_migrations();

// A prepared statement. Bind functions record the first failure; step() reports it, so binding can be
// chained without checking each call.
class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite. Text is copied (SQLITE_TRANSIENT).
  Statement& bind_text(int index, std::string_view value);
  // Text bound without a copy (SQLITE_STATIC): `value` must stay alive and unchanged until the statement
  // is stepped for the last time or reset (bulk inserts of values that outlive the row).
  Statement& bind_text_unowned(int index, std::string_view value);
  Statement& bind_int64(int index, std::int64_t value);
  Statement& bind_double(int index, double value);
  Statement& bind_null(int index);
  Statement& bind_optional_text(int index, const std::optional<std::string>& value);

  // true: a row is available through the column getters; false: the statement has finished.
  DbResult<bool> step();
  // Steps to completion ignoring rows (INSERT/UPDATE/DELETE).
  DbResult<void> run();
  // Makes the statement ready to run again and clears the bindings.
  void reset();

  // Columns are numbered from 0. NULL reads as "" / 0.
  std::string column_text(int index) const;
  std::int64_t column_int64(int index) const;
  double column_double(int index) const;
  bool column_is_null(int index) const;
  std::optional<std::string> column_optional_text(int index) const;

  // Rows changed by the last run (sqlite3_changes of the owning connection).
  std::int64_t changes() const;

 private:
  void record_bind_error(int rc, int index);

  sqlite3_stmt* stmt_ = nullptr;
  std::optional<DbError> bind_error_;
};

class Connection {
 public:
  // Opens path read-write (creating the file) or read-only. Throws DatabaseOpenError.
  Connection(const std::string& path, bool read_only, std::chrono::milliseconds busy_timeout);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One SQL statement; trailing text after the first statement is an error.
  DbResult<Statement> prepare(std::string_view sql);
  // The same, prepared once per connection and kept until the connection closes (statements run once per
  // row of every batch of a bulk writer): the cached statement, reset with its bindings cleared. It
  // belongs to the connection: valid until the next prepare_cached of the same text or close().
  DbResult<Statement*> prepare_cached(std::string_view sql);
  // One or more statements without results (DDL, PRAGMAs).
  DbResult<void> execute(const std::string& sql);
  // A DbError for result code rc with the connection's current message, prefixed by what was done.
  DbError error(int rc, std::string_view what) const;
  // True while a transaction is open on this connection.
  bool in_transaction() const;
  sqlite3* handle() const { return db_; }

  // Closes the connection (also done by the destructor).
  void close();

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, Statement> cached_;  // finalized by close(), before the handle
};

// BEGIN IMMEDIATE (write: takes the write lock at once, so the transaction cannot fail later with
// SQLITE_BUSY on lock upgrade) or BEGIN (read: the snapshot starts at the first read). The destructor
// rolls back unless commit() succeeded.
class Transaction {
 public:
  enum class Mode { read, write };

  static DbResult<Transaction> begin(Connection& connection, Mode mode);
  ~Transaction();
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  DbResult<void> commit();
  void rollback() noexcept;

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_ = nullptr;  // null once committed or rolled back
};

struct DatabaseOptions {
  std::string path;
  std::size_t read_connections = 4;  // at least 1 is opened
  std::chrono::milliseconds busy_timeout{5000};
  const std::vector<Migration>* migrations = nullptr;  // null: builtin_migrations()
};

class Database final : public RevisionSource {
 public:
  // Exclusive use of the writer connection; holds the writer mutex until destroyed.
  class WriteLease {
   public:
    Connection& connection() const { return *connection_; }
    Connection* operator->() const { return connection_; }

   private:
    friend class Database;
    WriteLease(std::unique_lock<std::mutex> lock, Connection* connection)
        : lock_(std::move(lock)), connection_(connection) {}
    std::unique_lock<std::mutex> lock_;
    Connection* connection_;
  };

  // A borrowed read-only connection; returned to the pool when destroyed.
  class ReadLease {
   public:
    ReadLease(ReadLease&& other) noexcept = default;
    ReadLease& operator=(ReadLease&&) = delete;
    ReadLease(const ReadLease&) = delete;
    ReadLease& operator=(const ReadLease&) = delete;
    ~ReadLease();
    Connection& connection() const { return *connection_; }
    Connection* operator->() const { return connection_.get(); }

   private:
    friend class Database;
    ReadLease(Database* db, std::unique_ptr<Connection> connection)
        : db_(db), connection_(std::move(connection)) {}
    Database* db_;
    std::unique_ptr<Connection> connection_;
  };

  // Opens (creating if needed) and migrates the database. Throws DatabaseOpenError.
  explicit Database(DatabaseOptions options);
  ~Database() override;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  DbResult<WriteLease> writer();
  DbResult<ReadLease> reader();

  // A trivial query on a read connection: is the database usable? (/readyz)
  DbResult<void> check();

  // Closes the readers, checkpoints the WAL (TRUNCATE) and closes the writer. Idempotent; the result
  // reports a failed checkpoint (the data is safe in the WAL either way).
  DbResult<void> close();

  // The schema version after the migrations at open.
  int schema_version() const { return schema_version_; }
  const std::string& path() const { return options_.path; }

  // RevisionSource: the random name of this database and the mirrors of its revision counters ("" and 0
  // for a schema without them).
  const std::string& instance() const override { return instance_; }
  std::int64_t revision(RevisionDomain domain) const override;
  // Reads the stored counters into the mirror (never lowering it). Called on the writer connection, under
  // the writer lease, after a commit.
  void refresh_revisions(Connection& connection);

 private:
  void migrate(const std::vector<Migration>& migrations);
  void load_instance();
  void release_reader(std::unique_ptr<Connection> connection);

  DatabaseOptions options_;
  int schema_version_ = 0;
  std::string instance_;
  std::array<std::atomic<std::int64_t>, kRevisionDomains> revisions_{};

  std::mutex writer_mutex_;
  std::unique_ptr<Connection> writer_;  // null once closed

  std::mutex pool_mutex_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Connection>> idle_readers_;
  std::size_t borrowed_readers_ = 0;
  bool closed_ = false;
};

}  // namespace hsns::store
