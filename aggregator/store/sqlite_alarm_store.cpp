#include "store/sqlite_alarm_store.h"

#include <string_view>
#include <utility>

#include "store/sql_helpers.h"

namespace hsns::store {

const char* const kAlarmSchema = R"sql(
CREATE TABLE alarms (
  id TEXT PRIMARY KEY,
  fingerprint INTEGER NOT NULL,
  type TEXT NOT NULL,
  fault TEXT NOT NULL,
  severity TEXT NOT NULL,
  entity TEXT NOT NULL,
  peer TEXT NOT NULL,
  root_cause TEXT NOT NULL,
  role TEXT NOT NULL,
  state TEXT NOT NULL,
  suppressed INTEGER NOT NULL,
  flapping INTEGER NOT NULL,
  one_shot INTEGER NOT NULL,
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  detail TEXT NOT NULL,
  message TEXT NOT NULL,
  acknowledged_by TEXT NOT NULL,
  acknowledged_ms INTEGER NOT NULL,
  comment TEXT NOT NULL,
  cleared_ms INTEGER NOT NULL,
  silence_id TEXT NOT NULL
);
CREATE INDEX alarms_by_last ON alarms (last_ms);
CREATE INDEX alarms_by_state ON alarms (state, last_ms);
CREATE TABLE alarm_history (
  seq INTEGER PRIMARY KEY,
  alarm_id TEXT NOT NULL,
  change TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  actor TEXT NOT NULL,
  state TEXT NOT NULL,
  suppressed INTEGER NOT NULL,
  detail TEXT NOT NULL,
  comment TEXT NOT NULL
);
CREATE INDEX alarm_history_by_alarm ON alarm_history (alarm_id, seq);
CREATE TABLE alarm_silences (
  id TEXT PRIMARY KEY,
  entity TEXT NOT NULL,
  type TEXT NOT NULL,
  regex TEXT NOT NULL,
  expires_ms INTEGER,
  creator TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
)sql";

namespace {

using brain::Alarm;

constexpr const char* kAlarmColumns =
    "id, fingerprint, type, fault, severity, entity, peer, root_cause, role, state, suppressed, flapping, "
    "one_shot, first_ms, last_ms, count, detail, message, acknowledged_by, acknowledged_ms, comment, "
    "cleared_ms, "
    "silence_id";

Alarm read_alarm(const Statement& st) {
  Alarm a;
  a.id = st.column_text(0);
  a.fingerprint = static_cast<std::uint64_t>(st.column_int64(1));
  a.type = st.column_text(2);
  a.fault = st.column_text(3);
  a.severity = brain::parse_fault_severity(st.column_text(4)).value_or(brain::FaultSeverity::major);
  a.entity = st.column_text(5);
  a.peer = st.column_text(6);
  a.root_cause = st.column_text(7);
  a.role = brain::parse_root_cause_role(st.column_text(8)).value_or(brain::RootCauseRole::port);
  a.state = brain::parse_alarm_state(st.column_text(9)).value_or(brain::AlarmState::raised);
  a.suppressed = st.column_int64(10) != 0;
  a.flapping = st.column_int64(11) != 0;
  a.one_shot = st.column_int64(12) != 0;
  a.first_ms = st.column_int64(13);
  a.last_ms = st.column_int64(14);
  a.count = static_cast<std::uint64_t>(st.column_int64(15));
  a.detail = st.column_text(16);
  a.message = st.column_text(17);
  a.acknowledged_by = st.column_text(18);
  a.acknowledged_ms = st.column_int64(19);
  a.comment = st.column_text(20);
  a.cleared_ms = st.column_int64(21);
  a.silence_id = st.column_text(22);
  return a;
}

// The WHERE clause of a filter; binds numbered from 1 in the order bind_filter uses.
std::string where_clause(const AlarmFilter& f, int& n) {
  std::string w = " WHERE 1";
  n = 0;
  auto next = [&n] { return "?" + std::to_string(++n); };
  if (f.state) w += " AND state = " + next();
  if (f.severity) w += " AND severity = " + next();
  if (f.entity) {
    const auto p = next();
    w += " AND (entity = " + p + " OR root_cause = " + p + ")";
  }
  if (f.type) {
    const auto p = next();
    w += " AND (type = " + p + " OR fault = " + p + ")";
  }
  if (f.suppressed) w += " AND suppressed = " + next();
  if (f.since_ms) w += " AND last_ms >= " + next();
  if (f.until_ms) w += " AND last_ms < " + next();
  return w;
}

int bind_filter(Statement& st, const AlarmFilter& f) {
  int n = 0;
  if (f.state) st.bind_text(++n, brain::to_string(*f.state));
  if (f.severity) st.bind_text(++n, brain::to_string(*f.severity));
  if (f.entity) st.bind_text(++n, *f.entity);
  if (f.type) st.bind_text(++n, *f.type);
  if (f.suppressed) st.bind_int64(++n, *f.suppressed ? 1 : 0);
  if (f.since_ms) st.bind_int64(++n, *f.since_ms);
  if (f.until_ms) st.bind_int64(++n, *f.until_ms);
  return n;
}

}  // namespace

StoreResult<void> SqliteAlarmStore::apply(std::span<const brain::AlarmChange> changes) {
  if (changes.empty()) return {};
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(upsert,
                      sql::prepare_cached(c, std::string("INSERT OR REPLACE INTO alarms (") + kAlarmColumns +
                                                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                                                 "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
                                                 "?21, ?22, ?23)"));
    for (const brain::AlarmChange& a : changes) {
      Statement& st = **upsert;
      st.reset();
      st.bind_text(1, a.id).bind_int64(2, static_cast<std::int64_t>(a.fingerprint)).bind_text(3, a.type);
      st.bind_text(4, a.fault).bind_text(5, brain::to_string(a.severity)).bind_text(6, a.entity);
      st.bind_text(7, a.peer).bind_text(8, a.root_cause).bind_text(9, brain::to_string(a.role));
      st.bind_text(10, brain::to_string(a.state)).bind_int64(11, a.suppressed ? 1 : 0);
      st.bind_int64(12, a.flapping ? 1 : 0).bind_int64(13, a.one_shot ? 1 : 0).bind_int64(14, a.first_ms);
      st.bind_int64(15, a.last_ms).bind_int64(16, static_cast<std::int64_t>(a.count)).bind_text(17, a.detail);
      st.bind_text(18, a.message).bind_text(19, a.acknowledged_by).bind_int64(20, a.acknowledged_ms);
      st.bind_text(21, a.comment).bind_int64(22, a.cleared_ms).bind_text(23, a.silence_id);
      HSNS_STORE_TRY(sql::run(st));
    }
    HSNS_STORE_ASSIGN(
        history, sql::prepare(c,
                              "INSERT INTO alarm_history (alarm_id, change, at_ms, actor, state, suppressed, "
                              "detail, comment) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    for (const brain::AlarmChange& a : changes) {
      if (a.change == brain::AlarmChangeKind::updated) continue;
      history->reset();
      history->bind_text(1, a.id).bind_text(2, brain::to_string(a.change)).bind_int64(3, a.at_ms);
      history->bind_text(4, a.actor)
          .bind_text(5, brain::to_string(a.state))
          .bind_int64(6, a.suppressed ? 1 : 0);
      history->bind_text(7, a.detail);
      history->bind_text(8, a.change == brain::AlarmChangeKind::acknowledged ? a.comment : "");
      HSNS_STORE_TRY(sql::run(*history));
    }
    return {};
  });
}

StoreResult<std::vector<Alarm>> SqliteAlarmStore::load_active(std::size_t limit) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::vector<Alarm>> {
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c, std::string("SELECT ") + kAlarmColumns +
                                          " FROM alarms WHERE state != 'cleared' ORDER BY last_ms DESC, id "
                                          "LIMIT ?1"));
    st->bind_int64(1, static_cast<std::int64_t>(limit));
    std::vector<Alarm> out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      out.push_back(read_alarm(*st));
    }
    return out;
  });
}

StoreResult<AlarmPage> SqliteAlarmStore::query(const AlarmFilter& f) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<AlarmPage> {
    int params = 0;
    const std::string where = where_clause(f, params);
    AlarmPage page;
    HSNS_STORE_ASSIGN(count, sql::prepare(c, "SELECT COUNT(*) FROM alarms" + where));
    bind_filter(*count, f);
    HSNS_STORE_ASSIGN(counted, sql::step(*count));
    if (*counted) page.total = static_cast<std::size_t>(count->column_int64(0));
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c, std::string("SELECT ") + kAlarmColumns + " FROM alarms" + where +
                                          " ORDER BY last_ms DESC, id LIMIT ?" + std::to_string(params + 1) +
                                          " OFFSET ?" + std::to_string(params + 2)));
    const int n = bind_filter(*st, f);
    st->bind_int64(n + 1, static_cast<std::int64_t>(f.limit))
        .bind_int64(n + 2, static_cast<std::int64_t>(f.offset));
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      page.items.push_back(read_alarm(*st));
    }
    return page;
  });
}

StoreResult<std::optional<AlarmWithHistory>> SqliteAlarmStore::get(const std::string& id) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::optional<AlarmWithHistory>> {
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c, std::string("SELECT ") + kAlarmColumns + " FROM alarms WHERE id = ?1"));
    st->bind_text(1, id);
    HSNS_STORE_ASSIGN(found, sql::step(*st));
    if (!*found) return std::optional<AlarmWithHistory>();
    AlarmWithHistory out;
    out.alarm = read_alarm(*st);
    // The newest kMaxAlarmHistory rows, answered oldest first.
    HSNS_STORE_ASSIGN(
        h, sql::prepare(c,
                        "SELECT seq, change, at_ms, actor, state, suppressed, detail, comment FROM "
                        "(SELECT * FROM alarm_history WHERE alarm_id = ?1 ORDER BY seq DESC LIMIT "
                        "?2) ORDER BY seq"));
    h->bind_text(1, id).bind_int64(2, static_cast<std::int64_t>(kMaxAlarmHistory));
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*h));
      if (!*row) break;
      AlarmHistoryEntry e;
      e.seq = h->column_int64(0);
      e.change = brain::parse_alarm_change_kind(h->column_text(1)).value_or(brain::AlarmChangeKind::updated);
      e.at_ms = h->column_int64(2);
      e.actor = h->column_text(3);
      e.state = brain::parse_alarm_state(h->column_text(4)).value_or(brain::AlarmState::raised);
      e.suppressed = h->column_int64(5) != 0;
      e.detail = h->column_text(6);
      e.comment = h->column_text(7);
      out.history.push_back(std::move(e));
    }
    return std::optional<AlarmWithHistory>(std::move(out));
  });
}

StoreResult<void> SqliteAlarmStore::put_silence(const brain::Silence& s) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(exists, sql::prepare(c, "SELECT 1 FROM alarm_silences WHERE id = ?1"));
    exists->bind_text(1, s.id);
    HSNS_STORE_ASSIGN(found, sql::step(*exists));
    if (*found) return tl::unexpected(StoreError::conflict("id", "silence " + s.id + " exists"));
    HSNS_STORE_ASSIGN(
        st, sql::prepare(c,
                         "INSERT INTO alarm_silences (id, entity, type, regex, expires_ms, creator, "
                         "reason, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    st->bind_text(1, s.id).bind_text(2, s.entity).bind_text(3, s.type).bind_text(4, s.regex);
    if (s.expires_ms) {
      st->bind_int64(5, *s.expires_ms);
    } else {
      st->bind_null(5);
    }
    st->bind_text(6, s.creator).bind_text(7, s.reason).bind_int64(8, s.created_ms);
    return sql::run(*st);
  });
}

StoreResult<bool> SqliteAlarmStore::delete_silence(const std::string& id) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<bool> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "DELETE FROM alarm_silences WHERE id = ?1"));
    st->bind_text(1, id);
    HSNS_STORE_TRY(sql::run(*st));
    return st->changes() > 0;
  });
}

StoreResult<std::vector<brain::Silence>> SqliteAlarmStore::list_silences() {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::vector<brain::Silence>> {
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c,
                                   "SELECT id, entity, type, regex, expires_ms, creator, reason, created_ms "
                                   "FROM alarm_silences ORDER BY created_ms, id"));
    std::vector<brain::Silence> out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      brain::Silence s;
      s.id = st->column_text(0);
      s.entity = st->column_text(1);
      s.type = st->column_text(2);
      s.regex = st->column_text(3);
      if (!st->column_is_null(4)) s.expires_ms = st->column_int64(4);
      s.creator = st->column_text(5);
      s.reason = st->column_text(6);
      s.created_ms = st->column_int64(7);
      out.push_back(std::move(s));
    }
    return out;
  });
}

StoreResult<std::size_t> SqliteAlarmStore::prune(std::int64_t cleared_before_ms) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<std::size_t> {
    HSNS_STORE_ASSIGN(history,
                      sql::prepare(c,
                                   "DELETE FROM alarm_history WHERE alarm_id IN (SELECT id FROM alarms "
                                   "WHERE state = 'cleared' AND cleared_ms < ?1)"));
    history->bind_int64(1, cleared_before_ms);
    HSNS_STORE_TRY(sql::run(*history));
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "DELETE FROM alarms WHERE state = 'cleared' AND cleared_ms < ?1"));
    st->bind_int64(1, cleared_before_ms);
    HSNS_STORE_TRY(sql::run(*st));
    return static_cast<std::size_t>(st->changes());
  });
}

}  // namespace hsns::store
