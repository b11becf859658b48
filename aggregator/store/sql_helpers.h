// Glue between the Database layer (DbError values) and the store interfaces (StoreError values), shared
// by the SQLite store implementations: the one transaction helper every store method runs in, the
// statement calls with their errors converted, and two macros that propagate errors.
//
// Contract:
// - read(db, fn) / write(db, fn) run fn(Connection&) in one transaction and return fn's result
//   (a StoreResult<T>). read borrows a pooled read-only connection and opens BEGIN (one snapshot for
//   everything fn reads); write takes the writer connection under the Database's writer mutex and opens
//   BEGIN IMMEDIATE (the write lock is held from the start, so writers are serialised and a decision fn
//   makes on what it read stays true until the commit). fn's result decides: a value commits, an error
//   rolls back, so a failed operation stores nothing. After a commit, still under the writer lease, write
//   refreshes the Database's revision mirror (store/revision.h). Statements fn prepares die with fn's locals,
//   before the commit.
// - Failures of the database itself become StoreError::unavailable carrying SQLite's message: the
//   write lock still held by another process after the busy timeout (SQLITE_BUSY), a full disk
//   (SQLITE_FULL, at any statement or at COMMIT), I/O errors, a closed database. A failed COMMIT is
//   rolled back (Transaction::commit). SQLITE_CONSTRAINT becomes a conflict: the stores check
//   constraints under the write lock first, so this only happens when another process wrote the file.
// - Header-only; no state. Thread-safe as Database is.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "store/database.h"
#include "store/network_store.h"

// Propagates the error of a StoreResult-returning expression; the value (if any) is discarded.
#define HSNS_STORE_TRY(expr)                                      \
  do {                                                            \
    if (auto hsns_try_result_ = (expr); !hsns_try_result_) {      \
      return tl::unexpected(std::move(hsns_try_result_).error()); \
    }                                                             \
  } while (false)

// Declares var as the result of a StoreResult-returning expression, returning its error. var is a
// declarator, which cannot be parenthesised (bugprone-macro-parentheses).
#define HSNS_STORE_ASSIGN(var, expr)                          \
  auto var = (expr); /* NOLINT(bugprone-macro-parentheses) */ \
  if (!(var)) return tl::unexpected(std::move(var).error())

namespace hsns::store::sql {

inline StoreError from_db(const DbError& e) {
  if ((e.code & 0xFF) == SQLITE_CONSTRAINT)
    return StoreError::conflict("", "constraint violated: " + e.message);
  return StoreError::unavailable("database error: " + e.message);
}

// Converts a DbResult into a StoreResult (from_db for the error).
template <typename T>
StoreResult<T> converted(DbResult<T>&& r) {
  if (!r) return tl::unexpected(from_db(r.error()));
  if constexpr (std::is_void_v<T>) {
    return {};
  } else {
    return std::move(*r);
  }
}

inline StoreResult<Statement> prepare(Connection& c, std::string_view text) {
  return converted(c.prepare(text));
}

// A statement prepared once per connection (Connection::prepare_cached), reset and ready to bind.
inline StoreResult<Statement*> prepare_cached(Connection& c, std::string_view text) {
  return converted(c.prepare_cached(text));
}

inline StoreResult<bool> step(Statement& s) {
  return converted(s.step());
}

inline StoreResult<void> run(Statement& s) {
  return converted(s.run());
}

namespace detail {

template <typename F>
using TransactionResult = std::invoke_result_t<F&, Connection&>;

template <typename F>
TransactionResult<F> run_in_transaction(Connection& c, Transaction::Mode mode, F& fn) {
  auto txn = Transaction::begin(c, mode);
  if (!txn) return tl::unexpected(from_db(txn.error()));
  TransactionResult<F> result = fn(c);
  if (!result) return result;  // ~Transaction rolls back
  if (auto committed = txn->commit(); !committed) return tl::unexpected(from_db(committed.error()));
  return result;
}

}  // namespace detail

// fn(Connection&) -> StoreResult<T> in one read transaction on a pooled read-only connection.
template <typename F>
detail::TransactionResult<F> read(Database& db, F&& fn) {
  auto lease = db.reader();
  if (!lease) return tl::unexpected(from_db(lease.error()));
  return detail::run_in_transaction(lease->connection(), Transaction::Mode::read, fn);
}

// fn(Connection&) -> StoreResult<T> in one BEGIN IMMEDIATE transaction on the writer connection.
template <typename F>
detail::TransactionResult<F> write(Database& db, F&& fn) {
  auto lease = db.writer();
  if (!lease) return tl::unexpected(from_db(lease.error()));
  auto result = detail::run_in_transaction(lease->connection(), Transaction::Mode::write, fn);
  if (result) db.refresh_revisions(lease->connection());
  return result;
}

}  // namespace hsns::store::sql
