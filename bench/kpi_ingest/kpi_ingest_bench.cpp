// Ingest rate of KPI samples into SQLite through the store (store::SqliteKpiStore::append: validation, the
// duplicate check, the series' newest timestamp, the raw row and the 1m and 1h buckets folded on write, one
// transaction per batch), printed beside the baseline of the same run: raw SQLite prepared inserts of the
// same (series, ts, value) rows into the same kpi_raw table (same migrations, WAL, synchronous=FULL), one
// transaction per batch, the statement prepared once and the series ids known. Samples per second of the
// calling thread's CPU time (one core) and of wall time; the ratio store / raw.
// Then the query of one series holding 24 h of samples every 10 s: 1440 one-minute buckets
// (KpiStore::query at 1m), and its 8640 raw samples, median and p99 over the repeats.
//
// A batch is one poll of every series (like one hsnsd report of many ports and counters): `series` samples
// at one timestamp, 10 s apart from the batch before, the newest batch now.
//
// Usage: hsns_bench_kpi_ingest [batches=100] [series=2000] [query_repeats=50]
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "store/database.h"
#include "store/sqlite_kpi_store.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::percentile;
using hsns::bench::thread_cpu_ms;
namespace store = hsns::store;

struct Figures {
  std::size_t rows = 0;
  double cpu_ms = 0;
  double wall_ms = 0;
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "kpi_ingest: %s\n", what);
    std::exit(1);
  }
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::vector<store::KpiSample>> make_batches(std::size_t batches, std::size_t series) {
  const std::int64_t newest = now_ms() - 1000;
  std::vector<std::vector<store::KpiSample>> out(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const std::int64_t ts = newest - static_cast<std::int64_t>(batches - 1 - b) * 10'000;
    out[b].reserve(series);
    for (std::size_t s = 0; s < series; ++s) {
      out[b].push_back({"host" + std::to_string(s / 16) + "/ens" + std::to_string(s / 8 % 2) + "f0np0",
                        "metric_" + std::to_string(s % 8) + "_per_s", ts,
                        1000.0 + static_cast<double>((b * 7919 + s * 104729) % 1000)});
    }
  }
  return out;
}

Figures through_store(const std::filesystem::path& file,
                      const std::vector<std::vector<store::KpiSample>>& batches) {
  store::Database db({file.string()});
  store::SqliteKpiStore kpis(db);
  Figures f;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& batch : batches) {
    auto r = kpis.append(batch);
    check(r.has_value() && r->accepted == batch.size(), "store append");
    f.rows += r->accepted;
  }
  f.cpu_ms = thread_cpu_ms() - cpu0;
  f.wall_ms = ms_since(t0);
  return f;
}

Figures raw_inserts(const std::filesystem::path& file,
                    const std::vector<std::vector<store::KpiSample>>& batches) {
  store::Database db({file.string()});
  auto lease = db.writer();
  check(lease.has_value(), "writer");
  sqlite3* h = lease->connection().handle();
  // The series exist beforehand: the baseline writes only the raw rows.
  check(sqlite3_exec(h, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK, "begin");
  sqlite3_stmt* series = nullptr;
  check(sqlite3_prepare_v2(h,
                           "INSERT INTO kpi_series (id, entity, metric, first_ms, last_ms, last_value) "
                           "VALUES (?1, ?2, ?3, 0, 0, 0)",
                           -1, &series, nullptr) == SQLITE_OK,
        "prepare series");
  for (std::size_t s = 0; s < batches.front().size(); ++s) {
    const auto& k = batches.front()[s];
    sqlite3_bind_int64(series, 1, static_cast<sqlite3_int64>(s) + 1);
    sqlite3_bind_text(series, 2, k.entity.data(), static_cast<int>(k.entity.size()), SQLITE_STATIC);
    sqlite3_bind_text(series, 3, k.metric.data(), static_cast<int>(k.metric.size()), SQLITE_STATIC);
    check(sqlite3_step(series) == SQLITE_DONE, "insert series");
    sqlite3_reset(series);
  }
  sqlite3_finalize(series);
  check(sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK, "commit series");

  sqlite3_stmt* raw = nullptr;
  check(sqlite3_prepare_v2(h, "INSERT INTO kpi_raw (series_id, ts_ms, value) VALUES (?1, ?2, ?3)", -1, &raw,
                           nullptr) == SQLITE_OK,
        "prepare raw");
  Figures f;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& batch : batches) {
    check(sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK, "begin");
    for (std::size_t s = 0; s < batch.size(); ++s) {
      sqlite3_bind_int64(raw, 1, static_cast<sqlite3_int64>(s) + 1);
      sqlite3_bind_int64(raw, 2, batch[s].ts_ms);
      sqlite3_bind_double(raw, 3, batch[s].value);
      check(sqlite3_step(raw) == SQLITE_DONE, "insert raw");
      sqlite3_reset(raw);
      ++f.rows;
    }
    check(sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK, "commit");
  }
  f.cpu_ms = thread_cpu_ms() - cpu0;
  f.wall_ms = ms_since(t0);
  sqlite3_finalize(raw);
  return f;
}

// 24 h of one series every 10 s, then `repeats` queries at 1m and raw; median and p99 in ms.
void query_day(const std::filesystem::path& file, int repeats) {
  store::Database db({file.string()});
  store::SqliteKpiStore kpis(db);
  const std::int64_t newest = now_ms() - 1000;
  std::vector<store::KpiSample> day;
  for (std::int64_t i = 0; i < 8640; ++i) {
    day.push_back(
        {"leaf01/Ethernet1/1", "rx_bytes_per_s", newest - (8639 - i) * 10'000, static_cast<double>(i % 97)});
  }
  auto appended = kpis.append(day);
  check(appended.has_value() && appended->accepted == day.size(), "append day");
  for (const auto resolution : {store::KpiResolution::minute, store::KpiResolution::raw}) {
    std::vector<double> ms;
    std::size_t points = 0;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = Clock::now();
      auto r = kpis.query(
          {"leaf01/Ethernet1/1", "rx_bytes_per_s", newest - 86'400'000, newest + 1, resolution, 100'000});
      ms.push_back(ms_since(t0));
      check(r.has_value(), "query");
      points = r->points.size();
    }
    std::printf("query 24 h at %s: %zu points, median %.3f ms, p99 %.3f ms (%d runs)\n",
                std::string(store::to_string(resolution)).c_str(), points, percentile(ms, 0.5),
                percentile(ms, 0.99), repeats);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t batches = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100;
  const std::size_t series = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 50;
  check(batches > 0 && series > 0 && repeats > 0,
        "usage: hsns_bench_kpi_ingest [batches] [series] [repeats]");
  const auto dir = std::filesystem::temp_directory_path() / ("hsns-kpi-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto data = make_batches(batches, series);

  const auto raw = raw_inserts(dir / "raw.db", data);
  const auto kpi = through_store(dir / "store.db", data);
  const auto rate = [](const Figures& f, double ms) { return static_cast<double>(f.rows) / (ms / 1000.0); };
  std::printf("%zu batches x %zu series = %zu samples\n", batches, series, kpi.rows);
  std::printf("raw prepared inserts: %.0f samples/s CPU, %.0f samples/s wall\n", rate(raw, raw.cpu_ms),
              rate(raw, raw.wall_ms));
  std::printf("KPI store append:     %.0f samples/s CPU, %.0f samples/s wall\n", rate(kpi, kpi.cpu_ms),
              rate(kpi, kpi.wall_ms));
  std::printf("store / raw: %.2f CPU, %.2f wall\n", rate(kpi, kpi.cpu_ms) / rate(raw, raw.cpu_ms),
              rate(kpi, kpi.wall_ms) / rate(raw, raw.wall_ms));
  query_day(dir / "query.db", repeats);
  std::filesystem::remove_all(dir);
  return 0;
}
