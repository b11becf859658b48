#include "store/sqlite_kpi_store.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "store/sql_helpers.h"

namespace hsns::store {

const char* const kKpiSchema = R"sql(
CREATE TABLE kpi_series (
  id INTEGER PRIMARY KEY,
  entity TEXT NOT NULL,
  metric TEXT NOT NULL,
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  last_value REAL NOT NULL,
  UNIQUE (entity, metric)
);
CREATE TABLE kpi_raw (
  series_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (series_id, ts_ms)
) WITHOUT ROWID;
CREATE TABLE kpi_1m (
  series_id INTEGER NOT NULL,
  bucket_ms INTEGER NOT NULL,
  min REAL NOT NULL,
  max REAL NOT NULL,
  sum REAL NOT NULL,
  count INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  last_value REAL NOT NULL,
  PRIMARY KEY (series_id, bucket_ms)
) WITHOUT ROWID;
CREATE TABLE kpi_1h (
  series_id INTEGER NOT NULL,
  bucket_ms INTEGER NOT NULL,
  min REAL NOT NULL,
  max REAL NOT NULL,
  sum REAL NOT NULL,
  count INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  last_value REAL NOT NULL,
  PRIMARY KEY (series_id, bucket_ms)
) WITHOUT ROWID;
)sql";

namespace {

using Clock = std::chrono::system_clock;

std::int64_t unix_ms(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The rollup table of a resolution ("" for raw).
std::string_view rollup_table(KpiResolution resolution) {
  switch (resolution) {
    case KpiResolution::raw:
      return "";
    case KpiResolution::minute:
      return "kpi_1m";
    case KpiResolution::hour:
      return "kpi_1h";
  }
  return "";
}

// A bucket's samples of one batch, folded before the one upsert of the bucket.
struct Fold {
  double min = 0;
  double max = 0;
  double sum = 0;
  std::int64_t count = 0;
  std::int64_t last_ms = 0;
  double last_value = 0;

  void add(std::int64_t ts_ms, double value) {
    if (count == 0) {
      min = max = value;
      last_ms = ts_ms;
      last_value = value;
    } else {
      min = std::min(min, value);
      max = std::max(max, value);
      if (ts_ms >= last_ms) {
        last_ms = ts_ms;
        last_value = value;
      }
    }
    sum += value;
    ++count;
  }
};

// A series as the batch has seen and changed it.
struct SeriesState {
  std::int64_t id = 0;
  std::int64_t first_ms = 0;
  std::int64_t last_ms = 0;
  double last_value = 0;
  bool changed = false;
};

class BatchWriter {
 public:
  BatchWriter(Connection& c, const KpiStoreOptions& options, std::int64_t raw_floor_ms)
      : c_(c), window_ms_(options.late_window.count()), raw_floor_ms_(raw_floor_ms) {}

  StoreResult<void> prepare() {
    HSNS_STORE_ASSIGN(find, sql::prepare(c_,
                                         "SELECT id, first_ms, last_ms, last_value FROM kpi_series "
                                         "WHERE entity = ?1 AND metric = ?2"));
    HSNS_STORE_ASSIGN(create,
                      sql::prepare(c_,
                                   "INSERT INTO kpi_series (entity, metric, first_ms, last_ms, last_value) "
                                   "VALUES (?1, ?2, ?3, ?3, ?4) RETURNING id"));
    HSNS_STORE_ASSIGN(
        raw, sql::prepare(c_, "INSERT OR IGNORE INTO kpi_raw (series_id, ts_ms, value) VALUES (?1, ?2, ?3)"));
    find_ = std::move(*find);
    create_ = std::move(*create);
    raw_ = std::move(*raw);
    return {};
  }

  StoreResult<void> add(const KpiSample& s) {
    if (s.ts_ms <= raw_floor_ms_) {
      ++result_.late;
      return {};
    }
    HSNS_STORE_ASSIGN(series, series_of(s));
    SeriesState& state = **series;
    if (s.ts_ms < state.last_ms - window_ms_) {
      ++result_.late;
      return {};
    }
    raw_.reset();
    raw_.bind_int64(1, state.id).bind_int64(2, s.ts_ms).bind_double(3, s.value);
    HSNS_STORE_TRY(sql::run(raw_));
    if (raw_.changes() == 0) {
      ++result_.duplicate;
      return {};
    }
    ++result_.accepted;
    if (s.ts_ms < state.last_ms) ++result_.out_of_order;
    if (s.ts_ms >= state.last_ms) {
      state.last_ms = s.ts_ms;
      state.last_value = s.value;
    }
    state.first_ms = std::min(state.first_ms, s.ts_ms);
    state.changed = true;
    minute_[{state.id, s.ts_ms - (s.ts_ms % 60'000)}].add(s.ts_ms, s.value);
    hour_[{state.id, s.ts_ms - (s.ts_ms % 3'600'000)}].add(s.ts_ms, s.value);
    return {};
  }

  // Writes the folded buckets and the series' new bounds.
  StoreResult<KpiAppendResult> finish() {
    HSNS_STORE_TRY(upsert("kpi_1m", minute_));
    HSNS_STORE_TRY(upsert("kpi_1h", hour_));
    HSNS_STORE_ASSIGN(update,
                      sql::prepare(c_,
                                   "UPDATE kpi_series SET first_ms = ?2, last_ms = ?3, last_value = ?4 "
                                   "WHERE id = ?1"));
    for (const auto& [key, state] : series_) {
      if (!state.changed) continue;
      update->reset();
      update->bind_int64(1, state.id).bind_int64(2, state.first_ms).bind_int64(3, state.last_ms);
      update->bind_double(4, state.last_value);
      HSNS_STORE_TRY(sql::run(*update));
    }
    return result_;
  }

 private:
  using Buckets = std::map<std::pair<std::int64_t, std::int64_t>, Fold>;

  StoreResult<SeriesState*> series_of(const KpiSample& s) {
    key_.assign(s.entity).push_back('\0');
    key_.append(s.metric);
    if (auto it = series_.find(key_); it != series_.end()) return &it->second;
    SeriesState state;
    find_.reset();
    find_.bind_text(1, s.entity).bind_text(2, s.metric);
    HSNS_STORE_ASSIGN(found, sql::step(find_));
    if (*found) {
      state.id = find_.column_int64(0);
      state.first_ms = find_.column_int64(1);
      state.last_ms = find_.column_int64(2);
      state.last_value = find_.column_double(3);
    } else {
      create_.reset();
      create_.bind_text(1, s.entity).bind_text(2, s.metric).bind_int64(3, s.ts_ms).bind_double(4, s.value);
      HSNS_STORE_ASSIGN(created, sql::step(create_));
      if (!*created) return tl::unexpected(StoreError::internal("creating a KPI series returned no id"));
      state.id = create_.column_int64(0);
      HSNS_STORE_ASSIGN(done, sql::step(create_));
      state.first_ms = state.last_ms = s.ts_ms;
      state.last_value = s.value;
      ++result_.new_series;
    }
    return &series_.emplace(key_, state).first->second;
  }

  StoreResult<void> upsert(std::string_view table, const Buckets& buckets) {
    const std::string t(table);
    HSNS_STORE_ASSIGN(
        st,
        sql::prepare(
            c_,
            "INSERT INTO " + t +
                " (series_id, bucket_ms, min, max, sum, count, last_ms, last_value) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (series_id, bucket_ms) DO UPDATE SET "
                "min = min(min, excluded.min), max = max(max, excluded.max), "
                "sum = sum + excluded.sum, count = count + excluded.count, "
                "last_value = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_value "
                "ELSE last_value END, last_ms = max(last_ms, excluded.last_ms)"));
    for (const auto& [key, f] : buckets) {
      st->reset();
      st->bind_int64(1, key.first).bind_int64(2, key.second).bind_double(3, f.min).bind_double(4, f.max);
      st->bind_double(5, f.sum).bind_int64(6, f.count).bind_int64(7, f.last_ms).bind_double(8, f.last_value);
      HSNS_STORE_TRY(sql::run(*st));
    }
    return {};
  }

  Connection& c_;
  std::int64_t window_ms_;
  std::int64_t raw_floor_ms_;
  Statement find_;
  Statement create_;
  Statement raw_;
  std::string key_;
  std::unordered_map<std::string, SeriesState> series_;
  Buckets minute_;
  Buckets hour_;
  KpiAppendResult result_;
};

}  // namespace

StoreResult<KpiAppendResult> SqliteKpiStore::append(std::span<const KpiSample> samples) {
  if (auto errors = validate_kpi_samples(samples); !errors.empty()) {
    return tl::unexpected(StoreError::invalid(std::move(errors)));
  }
  const auto now_ms = unix_ms(Clock::now());
  // Nothing that could be stored (an old report replayed, say): no transaction, no commit to wait for.
  const auto raw_floor_ms = now_ms - options_.retention.raw.count();
  if (std::all_of(samples.begin(), samples.end(),
                  [&](const KpiSample& s) { return s.ts_ms <= raw_floor_ms; })) {
    KpiAppendResult all_late;
    all_late.late = samples.size();
    return all_late;
  }
  return sql::write(db_, [&](Connection& c) -> StoreResult<KpiAppendResult> {
    BatchWriter writer(c, options_, raw_floor_ms);
    HSNS_STORE_TRY(writer.prepare());
    for (const auto& s : samples) HSNS_STORE_TRY(writer.add(s));
    return writer.finish();
  });
}

StoreResult<KpiSeriesPoints> SqliteKpiStore::query(const KpiQuery& q) {
  const auto table = rollup_table(q.resolution);
  const std::string text =
      table.empty() ? std::string("SELECT ts_ms, value, value, value, 1, value FROM kpi_raw ")
                    : "SELECT bucket_ms, min, max, sum, count, last_value FROM " + std::string(table) + " ";
  const std::string column = table.empty() ? "ts_ms" : "bucket_ms";
  const std::string sql =
      text + "WHERE series_id = (SELECT id FROM kpi_series WHERE entity = ?1 AND metric = ?2) AND " + column +
      " >= ?3 AND " + column + " < ?4 ORDER BY " + column + " LIMIT ?5";
  return sql::read(db_, [&](Connection& c) -> StoreResult<KpiSeriesPoints> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, sql));
    st->bind_text(1, q.entity).bind_text(2, q.metric).bind_int64(3, q.since_ms).bind_int64(4, q.until_ms);
    st->bind_int64(5, static_cast<std::int64_t>(q.limit) + 1);
    KpiSeriesPoints out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      if (out.points.size() == q.limit) {
        out.truncated = true;
        break;
      }
      KpiPoint p;
      p.ts_ms = st->column_int64(0);
      p.min = st->column_double(1);
      p.max = st->column_double(2);
      p.count = static_cast<std::uint64_t>(st->column_int64(4));
      const double sum = st->column_double(3);
      p.avg = table.empty() || p.count == 0 ? sum : sum / static_cast<double>(p.count);
      // A bucket written before values were bounded may hold an overflowed sum: answer a number anyway.
      if (!std::isfinite(p.avg)) p.avg = p.min / 2 + p.max / 2;
      p.last = st->column_double(5);
      out.points.push_back(p);
    }
    return out;
  });
}

StoreResult<KpiSeriesList> SqliteKpiStore::list_series(const KpiSeriesFilter& filter) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<KpiSeriesList> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c,
                                       "SELECT entity, metric, first_ms, last_ms, last_value FROM kpi_series "
                                       "WHERE (?1 IS NULL OR entity = ?1) AND (?2 IS NULL OR metric = ?2) "
                                       "ORDER BY entity, metric LIMIT ?3"));
    st->bind_optional_text(1, filter.entity).bind_optional_text(2, filter.metric);
    st->bind_int64(3, static_cast<std::int64_t>(filter.limit) + 1);
    KpiSeriesList out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      if (out.items.size() == filter.limit) {
        out.truncated = true;
        break;
      }
      out.items.push_back({st->column_text(0), st->column_text(1), st->column_int64(2), st->column_int64(3),
                           st->column_double(4)});
    }
    return out;
  });
}

StoreResult<KpiLatestValues> SqliteKpiStore::latest(const KpiLatestQuery& q) {
  // Without a time: the series table's newest sample. At a time: per series of the metric, the newest raw
  // sample in [since, at] (a seek on kpi_raw's primary key per series).
  const char* const newest =
      "SELECT entity, last_ms, last_value FROM kpi_series WHERE metric = ?1 AND last_ms >= ?2 "
      "ORDER BY entity LIMIT ?3";
  const char* const at_time =
      "SELECT s.entity, r.ts_ms, r.value FROM kpi_series s JOIN kpi_raw r ON r.series_id = s.id AND r.ts_ms "
      "= "
      "(SELECT MAX(ts_ms) FROM kpi_raw WHERE series_id = s.id AND ts_ms >= ?2 AND ts_ms <= ?4) "
      "WHERE s.metric = ?1 ORDER BY s.entity LIMIT ?3";
  return sql::read(db_, [&](Connection& c) -> StoreResult<KpiLatestValues> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, q.at_ms ? at_time : newest));
    st->bind_text(1, q.metric).bind_int64(2, q.since_ms);
    st->bind_int64(3, static_cast<std::int64_t>(q.limit) + 1);
    if (q.at_ms) st->bind_int64(4, *q.at_ms);
    KpiLatestValues out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      if (out.items.size() == q.limit) {
        out.truncated = true;
        break;
      }
      out.items.push_back({st->column_text(0), st->column_int64(1), st->column_double(2)});
    }
    return out;
  });
}

StoreResult<KpiPruneResult> SqliteKpiStore::prune(Clock::time_point now) {
  const auto now_ms = unix_ms(now);
  const auto& r = options_.retention;
  const std::int64_t raw_cutoff = now_ms - r.raw.count();
  const std::int64_t minute_cutoff = now_ms - r.minute.count();
  const std::int64_t hour_cutoff = now_ms - r.hour.count();
  const std::int64_t series_cutoff = now_ms - std::max({r.raw, r.minute, r.hour}).count();
  return sql::write(db_, [&](Connection& c) -> StoreResult<KpiPruneResult> {
    KpiPruneResult out;
    HSNS_STORE_ASSIGN(ids, sql::prepare(c, "SELECT id FROM kpi_series WHERE first_ms < ?1"));
    ids->bind_int64(1, raw_cutoff);
    HSNS_STORE_ASSIGN(raw, sql::prepare(c, "DELETE FROM kpi_raw WHERE series_id = ?1 AND ts_ms < ?2"));
    HSNS_STORE_ASSIGN(minute, sql::prepare(c, "DELETE FROM kpi_1m WHERE series_id = ?1 AND bucket_ms < ?2"));
    HSNS_STORE_ASSIGN(hour, sql::prepare(c, "DELETE FROM kpi_1h WHERE series_id = ?1 AND bucket_ms < ?2"));
    const auto remove = [](Statement& st, std::int64_t id, std::int64_t cutoff,
                           std::uint64_t& count) -> StoreResult<void> {
      st.reset();
      st.bind_int64(1, id).bind_int64(2, cutoff);
      HSNS_STORE_TRY(sql::run(st));
      count += static_cast<std::uint64_t>(st.changes());
      return {};
    };
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*ids));
      if (!*row) break;
      const std::int64_t id = ids->column_int64(0);
      HSNS_STORE_TRY(remove(*raw, id, raw_cutoff, out.raw));
      HSNS_STORE_TRY(remove(*minute, id, minute_cutoff, out.minute));
      HSNS_STORE_TRY(remove(*hour, id, hour_cutoff, out.hour));
    }
    HSNS_STORE_ASSIGN(gone, sql::prepare(c, "DELETE FROM kpi_series WHERE last_ms < ?1"));
    gone->bind_int64(1, series_cutoff);
    HSNS_STORE_TRY(sql::run(*gone));
    out.series = static_cast<std::uint64_t>(gone->changes());
    return out;
  });
}

}  // namespace hsns::store
