// Glue between the Database layer (DbError values) and the store interfaces (StoreError values), shared
// by the SQLite store implementations: each call converts its error, and two macros propagate them.
//
// Contract: SQLITE_CONSTRAINT becomes a conflict (the stores check constraints under the write lock
// first, so this only happens when another process wrote the same file); every other failure becomes
// StoreError::unavailable with SQLite's message. Header-only; no state.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
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

// Declares var as the result of a StoreResult-returning expression, returning its error.
#define HSNS_STORE_ASSIGN(var, expr) \
  auto var = (expr);                 \
  if (!var) return tl::unexpected(std::move(var).error())

namespace hsns::store::sql {

inline StoreError from_db(const DbError& e) {
  if ((e.code & 0xFF) == SQLITE_CONSTRAINT)
    return StoreError::conflict("", "constraint violated: " + e.message);
  return StoreError::unavailable("database error: " + e.message);
}

inline StoreResult<Statement> prepare(Connection& c, std::string_view text) {
  auto s = c.prepare(text);
  if (!s) return tl::unexpected(from_db(s.error()));
  return std::move(*s);
}

inline StoreResult<bool> step(Statement& s) {
  auto r = s.step();
  if (!r) return tl::unexpected(from_db(r.error()));
  return *r;
}

inline StoreResult<void> run(Statement& s) {
  auto r = s.run();
  if (!r) return tl::unexpected(from_db(r.error()));
  return {};
}

inline StoreResult<Transaction> begin(Connection& c, Transaction::Mode mode) {
  auto t = Transaction::begin(c, mode);
  if (!t) return tl::unexpected(from_db(t.error()));
  return std::move(*t);
}

inline StoreResult<void> commit(Transaction& t) {
  auto r = t.commit();
  if (!r) return tl::unexpected(from_db(r.error()));
  return {};
}

inline StoreResult<Database::WriteLease> writer(Database& db) {
  auto w = db.writer();
  if (!w) return tl::unexpected(from_db(w.error()));
  return std::move(*w);
}

inline StoreResult<Database::ReadLease> reader(Database& db) {
  auto r = db.reader();
  if (!r) return tl::unexpected(from_db(r.error()));
  return std::move(*r);
}

}  // namespace hsns::store::sql
