// Ingest rate of telemetry report batches (hsns/proto/report.h) into SQLite through the store
// (store::SqliteTelemetryStore::ingest: one transaction per batch with its (host, seq) dedup check,
// statements prepared once per writer connection and kept across batches), printed
// beside the baseline of the same run: raw SQLite prepared inserts of the same rows into the same schema
// (the same migrations, WAL, synchronous=FULL), one transaction per batch, statements prepared once for
// the whole run and bound without copies. Rows per second of the calling thread's CPU time (one core) and
// of wall time; the ratio store / raw is the figure docs/performance.md reports (target >= 0.7).
//
// Batches carry the bulk sections of a report: flow records (one probe batch), port counters and port
// states (the sample's QP, optics and LLDP sections, a few rows each, are left out so both sides write
// exactly the same rows).
//
// Usage: hsns_bench_report_ingest [batches=40] [flow_records_per_batch=2000] [ports=8]
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "hsns/proto/report.h"
#include "store/database.h"
#include "store/sqlite_telemetry_store.h"
#include "support/report_sample.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::thread_cpu_ms;
namespace proto = hsns::proto;
namespace store = hsns::store;

struct Figures {
  std::size_t rows = 0;
  double cpu_ms = 0;
  double wall_ms = 0;
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "report_ingest: %s\n", what);
    std::exit(1);
  }
}

void register_host(store::Database& db) {
  auto lease = db.writer();
  check(lease.has_value(), "writer");
  check(lease->connection()
            .execute(
                "INSERT INTO hosts (name, generation, created_at, updated_at) VALUES ('node-1', 1, '', '')")
            .has_value(),
        "register host");
}

Figures through_store(const std::filesystem::path& file, const std::vector<proto::Report>& batches) {
  store::Database db({file.string()});
  register_host(db);
  store::SqliteTelemetryStore telemetry(db);
  Figures f;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& b : batches) {
    auto r = telemetry.ingest("node-1", b, 1000);
    check(r.has_value() && !r->duplicate, "store ingest");
    f.rows += r->rows;
  }
  f.cpu_ms = thread_cpu_ms() - cpu0;
  f.wall_ms = ms_since(t0);
  return f;
}

// Raw sqlite3: one statement per table, prepared once; text bound SQLITE_STATIC.
class RawInserter {
 public:
  explicit RawInserter(sqlite3* db) : db_(db) {
    batch_ = prepare(
        "INSERT INTO telemetry_batches (host, seq, ts_ms, received_at, received_ms, bytes) VALUES (?1, ?2, "
        "?3, "
        "?4, ?5, ?6)");
    flow_batch_ = prepare("INSERT INTO telemetry_flow_batches (batch_id, epoch) VALUES (?1, ?2)");
    flow_ = prepare(
        "INSERT INTO telemetry_flows (batch_id, flow_batch_id, ifindex, ifname, direction, family, src, dst, "
        "sport, dest_qp, packets, bytes, first_ns, last_ns, op, ect, ce, cnp, nak, psn_regressions, "
        "psn_first, "
        "psn_last, psn_max) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
        "?17, "
        "?18, ?19, ?20, ?21, ?22, ?23)");
    counter_ = prepare(
        "INSERT INTO telemetry_port_counters (batch_id, ts_ms, port, source, counter, value, delta, rate) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    port_ = prepare(
        "INSERT INTO telemetry_ports (batch_id, ts_ms, name, oper_state, speed_mbps) VALUES (?1, ?2, ?3, ?4, "
        "?5)");
  }
  ~RawInserter() {
    for (auto* st : {batch_, flow_batch_, flow_, counter_, port_}) sqlite3_finalize(st);
  }
  RawInserter(const RawInserter&) = delete;
  RawInserter& operator=(const RawInserter&) = delete;

  std::size_t insert(const proto::Report& r) {
    exec("BEGIN IMMEDIATE");
    std::size_t rows = 0;
    const std::string received_at = "2026-12-02T00:00:00.000Z";
    sqlite3_bind_text(batch_, 1, "node-1", -1, SQLITE_STATIC);
    sqlite3_bind_int64(batch_, 2, static_cast<sqlite3_int64>(r.seq));
    sqlite3_bind_int64(batch_, 3, r.ts_ms);
    sqlite3_bind_text(batch_, 4, received_at.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(batch_, 5, r.ts_ms);
    sqlite3_bind_int64(batch_, 6, 1000);
    rows += step(batch_);
    const auto batch_id = sqlite3_last_insert_rowid(db_);
    for (const auto& p : r.counters->rdma) {
      const std::string port = p.device + "/" + std::to_string(p.port);
      for (const auto& [name, v] : p.counters)
        rows += counter(batch_id, r.counters->ts_ms, port, "rdma", name, v);
      for (const auto& [name, v] : p.hw_counters)
        rows += counter(batch_id, r.counters->ts_ms, port, "rdma_hw", name, v);
    }
    for (const auto& n : r.counters->netdevs) {
      for (const auto& [name, v] : n.statistics)
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "statistics", name, v);
      for (const auto& [name, v] : n.ethtool)
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "ethtool", name, v);
      for (const auto& p : n.pause) {
        const std::string prio = "prio" + std::to_string(p.priority) + ".";
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "pause", prio + "rx_frames", p.rx_frames);
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "pause", prio + "tx_frames", p.tx_frames);
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "pause", prio + "rx_duration_us",
                        p.rx_duration_us);
        rows += counter(batch_id, r.counters->ts_ms, n.netdev, "pause", prio + "tx_duration_us",
                        p.tx_duration_us);
      }
    }
    for (const auto& b : r.flows) {
      sqlite3_bind_int64(flow_batch_, 1, batch_id);
      sqlite3_bind_int64(flow_batch_, 2, static_cast<sqlite3_int64>(b.epoch));
      rows += step(flow_batch_);
      const auto flow_batch_id = sqlite3_last_insert_rowid(db_);
      for (const auto& f : b.records) rows += flow(batch_id, flow_batch_id, f);
    }
    for (const auto& p : r.ports) {
      sqlite3_bind_int64(port_, 1, batch_id);
      sqlite3_bind_int64(port_, 2, r.ts_ms);
      sqlite3_bind_text(port_, 3, p.name.c_str(), static_cast<int>(p.name.size()), SQLITE_STATIC);
      sqlite3_bind_text(port_, 4, p.oper_state.c_str(), static_cast<int>(p.oper_state.size()), SQLITE_STATIC);
      if (p.speed_mbps)
        sqlite3_bind_int64(port_, 5, *p.speed_mbps);
      else
        sqlite3_bind_null(port_, 5);
      rows += step(port_);
    }
    exec("COMMIT");
    return rows;
  }

 private:
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* st = nullptr;
    check(sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) == SQLITE_OK, sqlite3_errmsg(db_));
    return st;
  }
  void exec(const char* sql) {
    check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK, sqlite3_errmsg(db_));
  }
  std::size_t step(sqlite3_stmt* st) {
    check(sqlite3_step(st) == SQLITE_DONE, sqlite3_errmsg(db_));
    sqlite3_reset(st);
    return 1;
  }
  std::size_t counter(sqlite3_int64 batch_id, std::int64_t ts_ms, const std::string& port, const char* source,
                      const std::string& name, const proto::CounterSample& v) {
    sqlite3_bind_int64(counter_, 1, batch_id);
    sqlite3_bind_int64(counter_, 2, ts_ms);
    sqlite3_bind_text(counter_, 3, port.c_str(), static_cast<int>(port.size()), SQLITE_STATIC);
    sqlite3_bind_text(counter_, 4, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(counter_, 5, name.c_str(), static_cast<int>(name.size()), SQLITE_STATIC);
    sqlite3_bind_int64(counter_, 6, static_cast<sqlite3_int64>(v.value));
    sqlite3_bind_int64(counter_, 7, static_cast<sqlite3_int64>(v.delta));
    sqlite3_bind_double(counter_, 8, v.rate);
    return step(counter_);
  }
  template <std::size_t N>
  static std::string counts(const std::array<std::uint64_t, N>& a) {
    std::string out = "[";
    for (std::size_t i = 0; i < N; ++i) out += (i > 0 ? "," : "") + std::to_string(a[i]);
    return out + "]";
  }
  std::size_t flow(sqlite3_int64 batch_id, sqlite3_int64 flow_batch_id, const proto::FlowRecord& f) {
    const std::string op = counts(f.op);
    const std::string nak = counts(f.nak);
    const char* direction = proto::to_string(f.direction);
    sqlite3_bind_int64(flow_, 1, batch_id);
    sqlite3_bind_int64(flow_, 2, flow_batch_id);
    sqlite3_bind_int64(flow_, 3, f.ifindex);
    sqlite3_bind_text(flow_, 4, f.ifname.c_str(), static_cast<int>(f.ifname.size()), SQLITE_STATIC);
    sqlite3_bind_text(flow_, 5, direction, -1, SQLITE_STATIC);
    sqlite3_bind_int64(flow_, 6, f.family);
    sqlite3_bind_text(flow_, 7, f.src.c_str(), static_cast<int>(f.src.size()), SQLITE_STATIC);
    sqlite3_bind_text(flow_, 8, f.dst.c_str(), static_cast<int>(f.dst.size()), SQLITE_STATIC);
    sqlite3_bind_int64(flow_, 9, f.sport);
    sqlite3_bind_int64(flow_, 10, f.dest_qp);
    sqlite3_bind_int64(flow_, 11, static_cast<sqlite3_int64>(f.packets));
    sqlite3_bind_int64(flow_, 12, static_cast<sqlite3_int64>(f.bytes));
    sqlite3_bind_int64(flow_, 13, f.first_ns);
    sqlite3_bind_int64(flow_, 14, f.last_ns);
    sqlite3_bind_text(flow_, 15, op.c_str(), static_cast<int>(op.size()), SQLITE_STATIC);
    sqlite3_bind_int64(flow_, 16, static_cast<sqlite3_int64>(f.ect));
    sqlite3_bind_int64(flow_, 17, static_cast<sqlite3_int64>(f.ce));
    sqlite3_bind_int64(flow_, 18, static_cast<sqlite3_int64>(f.cnp));
    sqlite3_bind_text(flow_, 19, nak.c_str(), static_cast<int>(nak.size()), SQLITE_STATIC);
    sqlite3_bind_int64(flow_, 20, static_cast<sqlite3_int64>(f.psn_regressions));
    if (f.psn) {
      sqlite3_bind_int64(flow_, 21, f.psn->first);
      sqlite3_bind_int64(flow_, 22, f.psn->last);
      sqlite3_bind_int64(flow_, 23, f.psn->max);
    } else {
      for (int i = 21; i <= 23; ++i) sqlite3_bind_null(flow_, i);
    }
    return step(flow_);
  }

  sqlite3* db_;
  sqlite3_stmt* batch_ = nullptr;
  sqlite3_stmt* flow_batch_ = nullptr;
  sqlite3_stmt* flow_ = nullptr;
  sqlite3_stmt* counter_ = nullptr;
  sqlite3_stmt* port_ = nullptr;
};

Figures raw_inserts(const std::filesystem::path& file, const std::vector<proto::Report>& batches) {
  store::Database db({file.string()});
  auto lease = db.writer();
  check(lease.has_value(), "writer");
  RawInserter raw(lease->connection().handle());
  Figures f;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& b : batches) f.rows += raw.insert(b);
  f.cpu_ms = thread_cpu_ms() - cpu0;
  f.wall_ms = ms_since(t0);
  return f;
}

double per_second(std::size_t rows, double ms) {
  return ms > 0 ? static_cast<double>(rows) / (ms / 1e3) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n_batches = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 40;
  const std::size_t records = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2000;
  const std::size_t ports = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 8;
  std::vector<proto::Report> batches;
  for (std::size_t i = 1; i <= n_batches; ++i) {
    auto r = hsns::testing::sample_report(i, records, ports);
    r.qp.reset();
    r.optics.reset();
    r.lldp.reset();
    batches.push_back(std::move(r));
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("hsns-report-ingest-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // Raw first, then the store, then raw again: the page cache and CPU state are alike for both.
  const Figures raw1 = raw_inserts(dir / "raw1.db", batches);
  const Figures via_store = through_store(dir / "store.db", batches);
  const Figures raw2 = raw_inserts(dir / "raw2.db", batches);
  std::filesystem::remove_all(dir);
  check(raw1.rows == via_store.rows && raw2.rows == via_store.rows, "both sides wrote the same rows");
  const Figures raw = raw1.cpu_ms < raw2.cpu_ms ? raw1 : raw2;  // the better baseline
  std::printf("report_ingest: %zu batches x (%zu flow records, %zu ports) = %zu rows\n", n_batches, records,
              ports, via_store.rows);
  std::printf("  raw sqlite3 prepared inserts: %10.0f rows/s cpu  %10.0f rows/s wall\n",
              per_second(raw.rows, raw.cpu_ms), per_second(raw.rows, raw.wall_ms));
  std::printf("  store (SqliteTelemetryStore): %10.0f rows/s cpu  %10.0f rows/s wall\n",
              per_second(via_store.rows, via_store.cpu_ms), per_second(via_store.rows, via_store.wall_ms));
  std::printf("  store / raw: %.2fx cpu, %.2fx wall (target >= 0.70)\n", raw.cpu_ms / via_store.cpu_ms,
              raw.wall_ms / via_store.wall_ms);
  return 0;
}
