#include "store/sqlite_incident_store.h"

#include <utility>

#include "store/sql_helpers.h"

namespace hsns::store {

const char* const kIncidentSchema = R"sql(
CREATE TABLE incidents (
  id TEXT PRIMARY KEY,
  sequence INTEGER NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('open', 'resolved')),
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  document TEXT NOT NULL,
  alarms TEXT NOT NULL
);
CREATE INDEX incidents_by_state ON incidents (state, sequence);
)sql";

namespace {

constexpr const char* kColumns = "id, sequence, state, first_ms, last_ms, document, alarms";

IncidentRecord read_row(const Statement& st) {
  IncidentRecord r;
  r.id = st.column_text(0);
  r.sequence = static_cast<std::uint64_t>(st.column_int64(1));
  r.state = st.column_text(2);
  r.first_ms = st.column_int64(3);
  r.last_ms = st.column_int64(4);
  r.document = st.column_text(5);
  r.alarms = st.column_text(6);
  return r;
}

StoreResult<std::vector<IncidentRecord>> read_rows(Statement& st) {
  std::vector<IncidentRecord> out;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(st));
    if (!*row) break;
    out.push_back(read_row(st));
  }
  return out;
}

}  // namespace

StoreResult<void> SqliteIncidentStore::save(std::span<const IncidentRecord> upserts,
                                            std::span<const std::string> removals) {
  if (upserts.empty() && removals.empty()) return {};
  for (const auto& r : upserts) {
    if (r.state != "open" && r.state != "resolved")
      return tl::unexpected(StoreError::invalid("state", "must be open or resolved, got '" + r.state + "'"));
  }
  const auto keep = static_cast<std::int64_t>(options_.keep_resolved);
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(del, sql::prepare_cached(c, "DELETE FROM incidents WHERE id = ?1"));
    for (const auto& id : removals) {
      (*del)->reset();
      (*del)->bind_text(1, id);
      HSNS_STORE_TRY(sql::run(**del));
    }
    HSNS_STORE_ASSIGN(put,
                      sql::prepare_cached(c,
                                          "INSERT INTO incidents (id, sequence, state, first_ms, last_ms, "
                                          "document, alarms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                                          "ON CONFLICT (id) DO UPDATE SET state = excluded.state, "
                                          "first_ms = excluded.first_ms, last_ms = excluded.last_ms, "
                                          "document = excluded.document, alarms = excluded.alarms"));
    for (const auto& r : upserts) {
      (*put)->reset();
      (*put)
          ->bind_text(1, r.id)
          .bind_int64(2, static_cast<std::int64_t>(r.sequence))
          .bind_text(3, r.state)
          .bind_int64(4, r.first_ms)
          .bind_int64(5, r.last_ms)
          .bind_text(6, r.document)
          .bind_text(7, r.alarms);
      HSNS_STORE_TRY(sql::run(**put));
    }
    HSNS_STORE_ASSIGN(prune,
                      sql::prepare_cached(c,
                                          "DELETE FROM incidents WHERE state = 'resolved' AND sequence < "
                                          "(SELECT sequence FROM incidents WHERE state = 'resolved' "
                                          "ORDER BY sequence DESC LIMIT 1 OFFSET ?1)"));
    (*prune)->reset();
    (*prune)->bind_int64(1, keep > 0 ? keep - 1 : 0);
    return sql::run(**prune);
  });
}

StoreResult<IncidentRecord> SqliteIncidentStore::get(const std::string& id) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<IncidentRecord> {
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c, std::string("SELECT ") + kColumns + " FROM incidents WHERE id = ?1"));
    st->bind_text(1, id);
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) return tl::unexpected(StoreError::not_found("no incident '" + id + "'"));
    return read_row(*st);
  });
}

StoreResult<IncidentPage> SqliteIncidentStore::list(const IncidentQuery& q) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<IncidentPage> {
    IncidentPage page;
    const std::string where = q.state ? " WHERE state = ?1" : "";
    {
      HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COUNT(*) FROM incidents" + where));
      if (q.state) st->bind_text(1, *q.state);
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      page.total = *row ? static_cast<std::uint64_t>(st->column_int64(0)) : 0;
    }
    const int base = q.state ? 2 : 1;
    HSNS_STORE_ASSIGN(st, sql::prepare(c, std::string("SELECT ") + kColumns + " FROM incidents" + where +
                                              " ORDER BY sequence DESC LIMIT ?" + std::to_string(base) +
                                              " OFFSET ?" + std::to_string(base + 1)));
    if (q.state) st->bind_text(1, *q.state);
    st->bind_int64(base, static_cast<std::int64_t>(q.limit));
    st->bind_int64(base + 1, static_cast<std::int64_t>(q.offset));
    HSNS_STORE_ASSIGN(items, read_rows(*st));
    page.items = std::move(*items);
    return page;
  });
}

StoreResult<std::vector<IncidentRecord>> SqliteIncidentStore::open_incidents() {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::vector<IncidentRecord>> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, std::string("SELECT ") + kColumns +
                                              " FROM incidents WHERE state = 'open' ORDER BY sequence"));
    return read_rows(*st);
  });
}

StoreResult<std::uint64_t> SqliteIncidentStore::max_sequence() {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::uint64_t> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COALESCE(MAX(sequence), 0) FROM incidents"));
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    return *row ? static_cast<std::uint64_t>(st->column_int64(0)) : 0;
  });
}

}  // namespace hsns::store
