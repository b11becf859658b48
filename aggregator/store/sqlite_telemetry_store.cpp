#include "store/sqlite_telemetry_store.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "hsns/time.h"
#include "store/sql_helpers.h"

namespace hsns::store {

const char* const kTelemetrySchema = R"sql(
CREATE TABLE telemetry_batches (
  id INTEGER PRIMARY KEY,
  host TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  received_at TEXT NOT NULL,
  received_ms INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  UNIQUE (host, seq)
);
CREATE INDEX telemetry_batches_received ON telemetry_batches (received_ms);
CREATE TABLE telemetry_flow_batches (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL,
  epoch INTEGER NOT NULL
);
CREATE INDEX telemetry_flow_batches_batch ON telemetry_flow_batches (batch_id);
CREATE TABLE telemetry_flows (
  batch_id INTEGER NOT NULL,
  flow_batch_id INTEGER NOT NULL,
  ifindex INTEGER NOT NULL,
  ifname TEXT NOT NULL,
  direction TEXT NOT NULL,
  family INTEGER NOT NULL,
  src TEXT NOT NULL,
  dst TEXT NOT NULL,
  sport INTEGER NOT NULL,
  dest_qp INTEGER NOT NULL,
  packets INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  first_ns INTEGER NOT NULL,
  last_ns INTEGER NOT NULL,
  op TEXT NOT NULL,
  ect INTEGER NOT NULL,
  ce INTEGER NOT NULL,
  cnp INTEGER NOT NULL,
  nak TEXT NOT NULL,
  psn_regressions INTEGER NOT NULL,
  psn_first INTEGER,
  psn_last INTEGER,
  psn_max INTEGER
);
CREATE INDEX telemetry_flows_batch ON telemetry_flows (batch_id);
CREATE TABLE telemetry_port_counters (
  batch_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  port TEXT NOT NULL,
  source TEXT NOT NULL,
  counter TEXT NOT NULL,
  value INTEGER NOT NULL,
  delta INTEGER NOT NULL,
  rate REAL NOT NULL
);
CREATE INDEX telemetry_port_counters_batch ON telemetry_port_counters (batch_id);
CREATE TABLE telemetry_modules (
  batch_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  netdev TEXT NOT NULL,
  status TEXT NOT NULL,
  temperature_celsius REAL,
  voltage_volts REAL,
  document TEXT NOT NULL
);
CREATE INDEX telemetry_modules_batch ON telemetry_modules (batch_id);
CREATE TABLE telemetry_lldp_neighbors (
  batch_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  netdev TEXT NOT NULL,
  chassis_id TEXT NOT NULL,
  port_id TEXT NOT NULL,
  system_name TEXT,
  ttl_s INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  document TEXT NOT NULL
);
CREATE INDEX telemetry_lldp_neighbors_batch ON telemetry_lldp_neighbors (batch_id);
CREATE TABLE telemetry_qps (
  batch_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  device TEXT NOT NULL,
  port INTEGER NOT NULL,
  lqpn INTEGER NOT NULL,
  rqpn INTEGER,
  type TEXT NOT NULL,
  state TEXT NOT NULL,
  pid INTEGER,
  comm TEXT NOT NULL,
  kernel INTEGER NOT NULL,
  family INTEGER,
  src TEXT,
  dst TEXT,
  sport INTEGER
);
CREATE INDEX telemetry_qps_batch ON telemetry_qps (batch_id);
CREATE TABLE telemetry_ports (
  batch_id INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  name TEXT NOT NULL,
  oper_state TEXT NOT NULL,
  speed_mbps INTEGER
);
CREATE INDEX telemetry_ports_batch ON telemetry_ports (batch_id);
)sql";

namespace {

// The SQL table of each TelemetryTable.
constexpr std::array<const char*, kTelemetryTables> kSqlTables = {
    "telemetry_batches", "telemetry_flow_batches",   "telemetry_flows", "telemetry_port_counters",
    "telemetry_modules", "telemetry_lldp_neighbors", "telemetry_qps",   "telemetry_ports"};

// Unsigned 64-bit counters keep their bits in SQLite's signed INTEGER (see the header).
std::int64_t bits(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}

template <typename T>
void bind_optional_int(Statement& st, int index, const std::optional<T>& v) {
  if (v)
    st.bind_int64(index, static_cast<std::int64_t>(*v));
  else
    st.bind_null(index);
}

void bind_optional_double(Statement& st, int index, const std::optional<double>& v) {
  if (v)
    st.bind_double(index, *v);
  else
    st.bind_null(index);
}

// "[a,b,c]": a JSON array of counts, written without building a document (one per flow record).
template <std::size_t N>
std::string json_counts(const std::array<std::uint64_t, N>& counts) {
  std::string out = "[";
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += ',';
    out += std::to_string(counts[i]);
  }
  out += ']';
  return out;
}

// The rows of one batch. Statements are prepared once per writer connection (sql::prepare_cached) and
// run once per row; text that outlives the row is bound without a copy.
class BatchWriter {
 public:
  BatchWriter(Connection& c, std::int64_t batch_id) : c_(c), batch_id_(batch_id) {}

  StoreResult<std::size_t> write(const proto::Report& r) {
    if (r.counters) HSNS_STORE_TRY(counters(*r.counters));
    if (r.qp) HSNS_STORE_TRY(qps(*r.qp));
    if (r.optics) HSNS_STORE_TRY(modules(*r.optics));
    if (r.lldp) HSNS_STORE_TRY(neighbors(*r.lldp));
    if (!r.flows.empty()) HSNS_STORE_TRY(flows(r.flows));
    if (!r.ports.empty()) HSNS_STORE_TRY(ports(r.ports, r.ts_ms));
    return rows_;
  }

 private:
  StoreResult<void> run(Statement& st) {
    HSNS_STORE_TRY(sql::run(st));
    st.reset();
    ++rows_;
    return {};
  }

  StoreResult<void> counters(const proto::CountersSnapshot& s) {
    HSNS_STORE_ASSIGN(prepared, sql::prepare_cached(c_,
                                                    "INSERT INTO telemetry_port_counters (batch_id, ts_ms, "
                                                    "port, source, counter, value, delta, rate) VALUES "
                                                    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    Statement& st = **prepared;
    // `port` and `name` live until run() has stepped the row.
    const auto one = [&](const std::string& port, const char* source, const std::string& name,
                         const proto::CounterSample& v) -> StoreResult<void> {
      st.bind_int64(1, batch_id_)
          .bind_int64(2, s.ts_ms)
          .bind_text_unowned(3, port)
          .bind_text_unowned(4, source)
          .bind_text_unowned(5, name)
          .bind_int64(6, bits(v.value))
          .bind_int64(7, bits(v.delta))
          .bind_double(8, v.rate);
      return run(st);
    };
    for (const auto& p : s.rdma) {
      const std::string port = p.device + "/" + std::to_string(p.port);
      for (const auto& [name, v] : p.counters) HSNS_STORE_TRY(one(port, "rdma", name, v));
      for (const auto& [name, v] : p.hw_counters) HSNS_STORE_TRY(one(port, "rdma_hw", name, v));
    }
    for (const auto& n : s.netdevs) {
      for (const auto& [name, v] : n.statistics) HSNS_STORE_TRY(one(n.netdev, "statistics", name, v));
      for (const auto& [name, v] : n.ethtool) HSNS_STORE_TRY(one(n.netdev, "ethtool", name, v));
      for (const auto& p : n.pause) {
        const std::string prio = "prio" + std::to_string(p.priority) + ".";
        HSNS_STORE_TRY(one(n.netdev, "pause", prio + "rx_frames", p.rx_frames));
        HSNS_STORE_TRY(one(n.netdev, "pause", prio + "tx_frames", p.tx_frames));
        HSNS_STORE_TRY(one(n.netdev, "pause", prio + "rx_duration_us", p.rx_duration_us));
        HSNS_STORE_TRY(one(n.netdev, "pause", prio + "tx_duration_us", p.tx_duration_us));
      }
    }
    return {};
  }

  StoreResult<void> qps(const proto::QpInventory& inv) {
    HSNS_STORE_ASSIGN(prepared, sql::prepare_cached(c_,
                                                    "INSERT INTO telemetry_qps (batch_id, ts_ms, device, "
                                                    "port, lqpn, rqpn, type, state, pid, comm, kernel, "
                                                    "family, src, dst, sport) VALUES (?1, ?2, ?3, ?4, ?5, "
                                                    "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"));
    Statement& st = **prepared;
    for (const auto& q : inv.qps) {
      st.bind_int64(1, batch_id_)
          .bind_int64(2, inv.ts_ms)
          .bind_text_unowned(3, q.device)
          .bind_int64(4, q.port)
          .bind_int64(5, q.lqpn);
      bind_optional_int(st, 6, q.rqpn);
      st.bind_text_unowned(7, q.type).bind_text_unowned(8, q.state);
      bind_optional_int(st, 9, q.pid);
      st.bind_text_unowned(10, q.comm).bind_int64(11, q.kernel ? 1 : 0);
      if (q.addresses) {
        st.bind_int64(12, q.addresses->family)
            .bind_text_unowned(13, q.addresses->src)
            .bind_text_unowned(14, q.addresses->dst);
      } else {
        st.bind_null(12).bind_null(13).bind_null(14);
      }
      bind_optional_int(st, 15, q.sport);
      HSNS_STORE_TRY(run(st));
    }
    return {};
  }

  StoreResult<void> modules(const proto::OpticsReport& optics) {
    HSNS_STORE_ASSIGN(prepared, sql::prepare_cached(c_,
                                                    "INSERT INTO telemetry_modules (batch_id, ts_ms, netdev, "
                                                    "status, temperature_celsius, voltage_volts, document) "
                                                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    Statement& st = **prepared;
    for (const auto& m : optics.modules) {
      st.bind_int64(1, batch_id_)
          .bind_int64(2, optics.ts_ms)
          .bind_text_unowned(3, m.netdev)
          .bind_text_unowned(4, proto::kModuleStatusNames.at(static_cast<std::size_t>(m.status)));
      bind_optional_double(st, 5, m.temperature_celsius);
      bind_optional_double(st, 6, m.voltage_volts);
      st.bind_text(7, proto::to_json(m).dump());
      HSNS_STORE_TRY(run(st));
    }
    return {};
  }

  StoreResult<void> neighbors(const proto::LldpNeighbors& lldp) {
    HSNS_STORE_ASSIGN(prepared, sql::prepare_cached(c_,
                                                    "INSERT INTO telemetry_lldp_neighbors (batch_id, ts_ms, "
                                                    "netdev, chassis_id, port_id, system_name, ttl_s, "
                                                    "last_seen_ms, document) VALUES (?1, ?2, ?3, ?4, ?5, "
                                                    "?6, ?7, ?8, ?9)"));
    Statement& st = **prepared;
    for (const auto& n : lldp.neighbors) {
      proto::LldpNeighbors one{lldp.host, lldp.ts_ms, {n}};
      st.bind_int64(1, batch_id_)
          .bind_int64(2, lldp.ts_ms)
          .bind_text_unowned(3, n.netdev)
          .bind_text_unowned(4, n.chassis_id)
          .bind_text_unowned(5, n.port_id)
          .bind_optional_text(6, n.system_name)
          .bind_int64(7, n.ttl_s)
          .bind_int64(8, n.last_seen_ms)
          .bind_text(9, proto::to_json(one)["neighbors"][0].dump());
      HSNS_STORE_TRY(run(st));
    }
    return {};
  }

  StoreResult<void> flows(const std::vector<proto::ReportFlowBatch>& batches) {
    HSNS_STORE_ASSIGN(batch_prepared, sql::prepare_cached(c_,
                                                          "INSERT INTO telemetry_flow_batches (batch_id, "
                                                          "epoch) VALUES (?1, ?2)"));
    HSNS_STORE_ASSIGN(prepared,
                      sql::prepare_cached(
                          c_,
                          "INSERT INTO telemetry_flows (batch_id, flow_batch_id, ifindex, ifname, direction, "
                          "family, src, dst, sport, dest_qp, packets, bytes, first_ns, last_ns, op, ect, ce, "
                          "cnp, nak, psn_regressions, psn_first, psn_last, psn_max) VALUES (?1, ?2, ?3, ?4, "
                          "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
                          "?22, ?23)"));
    Statement& batch_st = **batch_prepared;
    Statement& st = **prepared;
    for (const auto& b : batches) {
      batch_st.bind_int64(1, batch_id_).bind_int64(2, bits(b.epoch));
      HSNS_STORE_TRY(run(batch_st));
      const std::int64_t flow_batch_id = sqlite3_last_insert_rowid(c_.handle());
      for (const auto& f : b.records) {
        const std::string op = json_counts(f.op);  // bound unowned: lives until run()
        const std::string nak = json_counts(f.nak);
        st.bind_int64(1, batch_id_)
            .bind_int64(2, flow_batch_id)
            .bind_int64(3, f.ifindex)
            .bind_text_unowned(4, f.ifname)
            .bind_text_unowned(5, proto::to_string(f.direction))
            .bind_int64(6, f.family)
            .bind_text_unowned(7, f.src)
            .bind_text_unowned(8, f.dst)
            .bind_int64(9, f.sport)
            .bind_int64(10, f.dest_qp)
            .bind_int64(11, bits(f.packets))
            .bind_int64(12, bits(f.bytes))
            .bind_int64(13, f.first_ns)
            .bind_int64(14, f.last_ns)
            .bind_text_unowned(15, op)
            .bind_int64(16, bits(f.ect))
            .bind_int64(17, bits(f.ce))
            .bind_int64(18, bits(f.cnp))
            .bind_text_unowned(19, nak)
            .bind_int64(20, bits(f.psn_regressions));
        if (f.psn) {
          st.bind_int64(21, f.psn->first).bind_int64(22, f.psn->last).bind_int64(23, f.psn->max);
        } else {
          st.bind_null(21).bind_null(22).bind_null(23);
        }
        HSNS_STORE_TRY(run(st));
      }
    }
    return {};
  }

  StoreResult<void> ports(const std::vector<proto::PortOperState>& ports, std::int64_t ts_ms) {
    HSNS_STORE_ASSIGN(prepared, sql::prepare_cached(c_,
                                                    "INSERT INTO telemetry_ports (batch_id, ts_ms, name, "
                                                    "oper_state, speed_mbps) VALUES (?1, ?2, ?3, ?4, ?5)"));
    Statement& st = **prepared;
    for (const auto& p : ports) {
      st.bind_int64(1, batch_id_)
          .bind_int64(2, ts_ms)
          .bind_text_unowned(3, p.name)
          .bind_text_unowned(4, p.oper_state);
      bind_optional_int(st, 5, p.speed_mbps);
      HSNS_STORE_TRY(run(st));
    }
    return {};
  }

  Connection& c_;
  std::int64_t batch_id_;
  std::size_t rows_ = 0;
};

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Deletes the batches `which` selects (SQL selecting telemetry_batches ids, parameter ?1) from every
// table, children first; adds the rows of each table to `rows`.
StoreResult<std::uint64_t> delete_batches(Connection& c, const std::string& which, std::int64_t param,
                                          std::array<std::uint64_t, kTelemetryTables>& rows) {
  std::uint64_t batches = 0;
  for (std::size_t t = kTelemetryTables; t-- > 0;) {
    std::string sql = "DELETE FROM ";
    sql += kSqlTables.at(t);
    sql += t == static_cast<std::size_t>(TelemetryTable::batches) ? " WHERE id IN (" : " WHERE batch_id IN (";
    sql += which;
    sql += ')';
    HSNS_STORE_ASSIGN(st, sql::prepare(c, sql));
    st->bind_int64(1, param);
    HSNS_STORE_TRY(sql::run(*st));
    const auto n = static_cast<std::uint64_t>(st->changes());
    rows.at(t) += n;
    if (t == static_cast<std::size_t>(TelemetryTable::batches)) batches = n;
  }
  return batches;
}

}  // namespace

std::uint64_t PruneResult::total_rows() const {
  std::uint64_t n = 0;
  for (const auto r : rows) n += r;
  return n;
}

StoreResult<IngestResult> SqliteTelemetryStore::ingest(const std::string& host, const proto::Report& report,
                                                       std::uint64_t bytes) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<IngestResult> {
    HSNS_STORE_ASSIGN(seen,
                      sql::prepare_cached(c, "SELECT 1 FROM telemetry_batches WHERE host = ?1 AND seq = ?2"));
    (*seen)->bind_text_unowned(1, host).bind_int64(2, bits(report.seq));
    HSNS_STORE_ASSIGN(duplicate, sql::step(**seen));
    (*seen)->reset();
    if (*duplicate) return IngestResult{report.seq, true, 0};
    HSNS_STORE_ASSIGN(exists, sql::prepare_cached(c, "SELECT 1 FROM hosts WHERE name = ?1"));
    (*exists)->bind_text_unowned(1, host);
    HSNS_STORE_ASSIGN(found, sql::step(**exists));
    (*exists)->reset();
    if (!*found) return tl::unexpected(StoreError::not_found("host " + host + " is not registered"));

    const auto now = std::chrono::system_clock::now();
    const std::string received_at = format_rfc3339_utc(now);
    HSNS_STORE_ASSIGN(batch, sql::prepare_cached(c,
                                                 "INSERT INTO telemetry_batches (host, seq, ts_ms, "
                                                 "received_at, received_ms, bytes) VALUES (?1, ?2, ?3, ?4, "
                                                 "?5, ?6)"));
    (*batch)
        ->bind_text_unowned(1, host)
        .bind_int64(2, bits(report.seq))
        .bind_int64(3, report.ts_ms)
        .bind_text_unowned(4, received_at)
        .bind_int64(5, unix_ms(now))
        .bind_int64(6, bits(bytes));
    HSNS_STORE_TRY(sql::run(**batch));
    (*batch)->reset();
    BatchWriter writer(c, sqlite3_last_insert_rowid(c.handle()));
    HSNS_STORE_ASSIGN(rows, writer.write(report));
    return IngestResult{report.seq, false, *rows + 1};
  });
}

StoreResult<PruneResult> SqliteTelemetryStore::prune(const RetentionPolicy& policy,
                                                     std::chrono::system_clock::time_point now) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<PruneResult> {
    PruneResult out;
    if (policy.max_age.count() > 0) {
      HSNS_STORE_ASSIGN(n, delete_batches(c, "SELECT id FROM telemetry_batches WHERE received_ms < ?1",
                                          unix_ms(now - policy.max_age), out.rows));
      out.batches_by_age = *n;
    }
    if (policy.max_bytes > 0) {
      // The newest batches that fit the budget stay; the first (newest-first) that does not fit and every
      // older one go. Ids increase in the order batches were received.
      HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT id, bytes FROM telemetry_batches ORDER BY id DESC"));
      std::uint64_t kept = 0;
      std::optional<std::int64_t> newest_pruned;
      for (;;) {
        HSNS_STORE_ASSIGN(row, sql::step(*st));
        if (!*row) break;
        kept += static_cast<std::uint64_t>(st->column_int64(1));
        if (kept > policy.max_bytes) {
          newest_pruned = st->column_int64(0);
          break;
        }
      }
      st->reset();  // the read ends before the deletes below
      if (newest_pruned) {
        HSNS_STORE_ASSIGN(n, delete_batches(c, "SELECT id FROM telemetry_batches WHERE id <= ?1",
                                            *newest_pruned, out.rows));
        out.batches_by_size = *n;
      }
    }
    return out;
  });
}

StoreResult<TelemetryUsage> SqliteTelemetryStore::usage() {
  return sql::read(db_, [](Connection& c) -> StoreResult<TelemetryUsage> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM telemetry_batches"));
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) return TelemetryUsage{};
    return TelemetryUsage{static_cast<std::uint64_t>(st->column_int64(0)),
                          static_cast<std::uint64_t>(st->column_int64(1))};
  });
}

}  // namespace hsns::store

// ---- read side ----

namespace hsns::store {

const char* const kTelemetryQuerySchema = R"sql(
CREATE INDEX telemetry_batches_host_ts ON telemetry_batches (host, ts_ms);
CREATE INDEX telemetry_batches_ts ON telemetry_batches (ts_ms);
CREATE INDEX telemetry_qps_local ON telemetry_qps (src, lqpn, ts_ms);
CREATE INDEX telemetry_qps_remote ON telemetry_qps (dst, rqpn, ts_ms);
)sql";

namespace {

StoreResult<void> require_host(Connection& c, const std::string& host) {
  HSNS_STORE_ASSIGN(exists, sql::prepare(c, "SELECT 1 FROM hosts WHERE name = ?1"));
  exists->bind_text(1, host);
  HSNS_STORE_ASSIGN(found, sql::step(*exists));
  if (!*found) return tl::unexpected(StoreError::not_found("host " + host + " is not registered"));
  return {};
}

// The id of the host's newest batch that holds rows in `table` (a telemetry table with batch_id).
StoreResult<std::optional<std::int64_t>> newest_batch_with(Connection& c, const std::string& host,
                                                           const char* table) {
  const std::string text = std::string("SELECT b.id FROM telemetry_batches b WHERE b.host = ?1 AND EXISTS ") +
                           "(SELECT 1 FROM " + table + " t WHERE t.batch_id = b.id) ORDER BY b.ts_ms DESC, " +
                           "b.id DESC LIMIT 1";
  HSNS_STORE_ASSIGN(st, sql::prepare(c, text));
  st->bind_text(1, host);
  HSNS_STORE_ASSIGN(row, sql::step(*st));
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(st->column_int64(0));
}

// " LIMIT limit+1 OFFSET offset" (one row more than the page: does a next page exist?).
std::string page_clause(const Paging& paging) {
  return " LIMIT " + std::to_string(paging.limit + 1) + " OFFSET " + std::to_string(paging.offset);
}

template <typename T>
TelemetryPage<T> paged(std::vector<T> rows, const Paging& paging) {
  TelemetryPage<T> page;
  page.more = rows.size() > paging.limit;
  if (page.more) rows.resize(paging.limit);
  page.items = std::move(rows);
  return page;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::uint64_t unsigned_column(const Statement& st, int index) {
  return static_cast<std::uint64_t>(st.column_int64(index));
}

// The newest QP record (at or before `until`) of the QP `qpn` whose rdma_cm connection runs from `local`
// to `peer` (which_qpn "lqpn": the QP is local's own; "rqpn": qpn is the remote QP of the record).
struct OwnerLookup {
  QpOwner owner;
  std::optional<std::uint32_t> lqpn;
  std::optional<std::uint32_t> rqpn;
};

StoreResult<std::optional<OwnerLookup>> find_qp(Connection& c, bool by_remote, const std::string& local,
                                                const std::string& peer, std::uint32_t qpn,
                                                const std::optional<std::int64_t>& until_ms) {
  const char* text =
      by_remote
          ? "SELECT b.host, q.device, q.lqpn, q.rqpn, q.pid, q.comm, q.kernel, q.ts_ms FROM telemetry_qps q "
            "JOIN telemetry_batches b ON b.id = q.batch_id WHERE q.dst = ?1 AND q.rqpn = ?2 AND q.src = ?3 "
            "AND q.ts_ms < ?4 ORDER BY q.ts_ms DESC LIMIT 1"
          : "SELECT b.host, q.device, q.lqpn, q.rqpn, q.pid, q.comm, q.kernel, q.ts_ms FROM telemetry_qps q "
            "JOIN telemetry_batches b ON b.id = q.batch_id WHERE q.src = ?1 AND q.lqpn = ?2 AND q.dst = ?3 "
            "AND q.ts_ms < ?4 ORDER BY q.ts_ms DESC LIMIT 1";
  HSNS_STORE_ASSIGN(st, sql::prepare_cached(c, text));
  Statement& q = **st;
  q.bind_text_unowned(1, by_remote ? peer : local)
      .bind_int64(2, qpn)
      .bind_text_unowned(3, by_remote ? local : peer)
      .bind_int64(4, until_ms.value_or(std::numeric_limits<std::int64_t>::max()));
  HSNS_STORE_ASSIGN(row, sql::step(q));
  if (!*row) return std::optional<OwnerLookup>();
  OwnerLookup found;
  found.owner.host = q.column_text(0);
  found.owner.device = q.column_text(1);
  found.lqpn = static_cast<std::uint32_t>(q.column_int64(2));
  if (!q.column_is_null(3)) found.rqpn = static_cast<std::uint32_t>(q.column_int64(3));
  found.owner.qpn = *found.lqpn;
  if (!q.column_is_null(4)) found.owner.pid = static_cast<std::uint32_t>(q.column_int64(4));
  found.owner.comm = q.column_text(5);
  found.owner.kernel = q.column_int64(6) != 0;
  found.owner.ts_ms = q.column_int64(7);
  q.reset();
  return std::optional<OwnerLookup>(std::move(found));
}

// Fills src_qp and the two endpoints' owners of one direction from the QP inventories: the destination's
// own record (local dst, lqpn dest_qp: its rqpn is the source QP) and the source's record (local src,
// rqpn dest_qp: its lqpn is the source QP, preferred).
StoreResult<void> resolve_qps(Connection& c, FlowDirectionTotals& d,
                              const std::optional<std::int64_t>& until) {
  HSNS_STORE_ASSIGN(at_dst, find_qp(c, false, d.dst, d.src, d.dest_qp, until));
  if (*at_dst) {
    d.dst_process = (*at_dst)->owner;
    d.src_qp = (*at_dst)->rqpn;
  }
  HSNS_STORE_ASSIGN(at_src, find_qp(c, true, d.src, d.dst, d.dest_qp, until));
  if (*at_src) {
    d.src_process = (*at_src)->owner;
    d.src_qp = (*at_src)->lqpn;
  }
  return {};
}

constexpr const char* kCounterColumns = "c.port, c.source, c.counter, c.value, c.delta, c.rate, c.ts_ms";

StoreResult<std::vector<CounterReading>> read_counters(Statement& st) {
  std::vector<CounterReading> rows;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(st));
    if (!*row) break;
    rows.push_back({st.column_text(0), st.column_text(1), st.column_text(2), unsigned_column(st, 3),
                    unsigned_column(st, 4), st.column_double(5), st.column_int64(6)});
  }
  return rows;
}

// " AND c.port = ?N AND c.counter = ?M" for the filters given, numbering from `next`.
std::string counter_filters(const CounterQuery& q, int next) {
  std::string out;
  if (q.port) out += " AND c.port = ?" + std::to_string(next++);
  if (q.counter) out += " AND c.counter = ?" + std::to_string(next);
  return out;
}

void bind_counter_filters(Statement& st, const CounterQuery& q, int next) {
  if (q.port) st.bind_text(next++, *q.port);
  if (q.counter) st.bind_text(next, *q.counter);
}

// The documents of one batch's rows of `table` (modules or neighbours), optionally of one netdev.
StoreResult<TelemetryPage<SectionDocument>> latest_documents(Database& db, const std::string& host,
                                                             const char* table, const char* order,
                                                             const std::optional<std::string>& netdev,
                                                             const Paging& paging) {
  return sql::read(db, [&](Connection& c) -> StoreResult<TelemetryPage<SectionDocument>> {
    HSNS_STORE_TRY(require_host(c, host));
    HSNS_STORE_ASSIGN(batch, newest_batch_with(c, host, table));
    if (!*batch) return TelemetryPage<SectionDocument>{};
    std::string text = std::string("SELECT document, ts_ms FROM ") + table + " WHERE batch_id = ?1";
    if (netdev) text += " AND netdev = ?2";
    text += std::string(" ORDER BY ") + order + page_clause(paging);
    HSNS_STORE_ASSIGN(st, sql::prepare(c, text));
    st->bind_int64(1, **batch);
    if (netdev) st->bind_text(2, *netdev);
    std::vector<SectionDocument> rows;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      rows.push_back({st->column_text(0), st->column_int64(1)});
    }
    return paged(std::move(rows), paging);
  });
}

}  // namespace

StoreResult<std::vector<FlowDirectionTotals>> SqliteTelemetryStore::flow_directions(const FlowQuery& query) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::vector<FlowDirectionTotals>> {
    if (query.host) HSNS_STORE_TRY(require_host(c, *query.host));
    std::string text =
        "SELECT b.host, f.family, f.src, f.dst, f.sport, f.dest_qp, SUM(f.packets), SUM(f.bytes), "
        "SUM(f.ect), "
        "SUM(f.ce), SUM(f.cnp), SUM((SELECT COALESCE(SUM(value), 0) FROM json_each(f.nak))), "
        "SUM(f.psn_regressions), MIN(f.first_ns), MAX(f.last_ns), COUNT(*), GROUP_CONCAT(DISTINCT f.ifname), "
        "GROUP_CONCAT(DISTINCT f.direction) FROM telemetry_batches b JOIN telemetry_flows f ON "
        "f.batch_id = b.id WHERE 1";
    if (query.host) text += " AND b.host = ?1";
    if (query.range.since_ms) text += " AND b.ts_ms >= ?2";
    if (query.range.until_ms) text += " AND b.ts_ms < ?3";
    if (query.addresses) {
      text +=
          " AND (f.src IN (SELECT value FROM json_each(?4)) OR f.dst IN (SELECT value FROM json_each(?4)))";
    }
    text += " GROUP BY b.host, f.family, f.src, f.dst, f.sport, f.dest_qp LIMIT ?5";
    HSNS_STORE_ASSIGN(st, sql::prepare(c, text));
    if (query.host) st->bind_text(1, *query.host);
    if (query.range.since_ms) st->bind_int64(2, *query.range.since_ms);
    if (query.range.until_ms) st->bind_int64(3, *query.range.until_ms);
    if (query.addresses) st->bind_text(4, nlohmann::json(*query.addresses).dump());
    st->bind_int64(5, static_cast<std::int64_t>(query.max_keys) + 1);
    std::vector<FlowDirectionTotals> out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      FlowDirectionTotals d;
      d.host = st->column_text(0);
      d.family = static_cast<int>(st->column_int64(1));
      d.src = st->column_text(2);
      d.dst = st->column_text(3);
      d.sport = static_cast<std::uint32_t>(st->column_int64(4));
      d.dest_qp = static_cast<std::uint32_t>(st->column_int64(5));
      d.packets = unsigned_column(*st, 6);
      d.bytes = unsigned_column(*st, 7);
      d.ect = unsigned_column(*st, 8);
      d.ce = unsigned_column(*st, 9);
      d.cnp = unsigned_column(*st, 10);
      d.naks = unsigned_column(*st, 11);
      d.psn_regressions = unsigned_column(*st, 12);
      d.first_ns = st->column_int64(13);
      d.last_ns = st->column_int64(14);
      d.records = unsigned_column(*st, 15);
      d.ifnames = split_list(st->column_text(16));
      d.directions = split_list(st->column_text(17));
      out.push_back(std::move(d));
    }
    st->reset();
    if (out.size() <= query.max_keys) {
      for (auto& d : out) HSNS_STORE_TRY(resolve_qps(c, d, query.range.until_ms));
    }
    return out;
  });
}

StoreResult<TelemetryPage<CounterReading>> SqliteTelemetryStore::latest_counters(const std::string& host,
                                                                                 const CounterQuery& query) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<TelemetryPage<CounterReading>> {
    HSNS_STORE_TRY(require_host(c, host));
    HSNS_STORE_ASSIGN(batch, newest_batch_with(c, host, "telemetry_port_counters"));
    if (!*batch) return TelemetryPage<CounterReading>{};
    const std::string text =
        std::string("SELECT ") + kCounterColumns + " FROM telemetry_port_counters c WHERE c.batch_id = ?1" +
        counter_filters(query, 2) + " ORDER BY c.port, c.source, c.counter" + page_clause(query.paging);
    HSNS_STORE_ASSIGN(st, sql::prepare(c, text));
    st->bind_int64(1, **batch);
    bind_counter_filters(*st, query, 2);
    HSNS_STORE_ASSIGN(rows, read_counters(*st));
    return paged(std::move(*rows), query.paging);
  });
}

StoreResult<TelemetryPage<CounterReading>> SqliteTelemetryStore::counter_series(const std::string& host,
                                                                                const CounterQuery& query,
                                                                                const TimeRange& range) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<TelemetryPage<CounterReading>> {
    HSNS_STORE_TRY(require_host(c, host));
    const std::string text = std::string("SELECT ") + kCounterColumns +
                             " FROM telemetry_batches b JOIN telemetry_port_counters c ON c.batch_id = b.id "
                             "WHERE b.host = ?1 AND c.ts_ms >= ?2 AND c.ts_ms < ?3" +
                             counter_filters(query, 4) + " ORDER BY c.port, c.source, c.counter, c.ts_ms" +
                             page_clause(query.paging);
    HSNS_STORE_ASSIGN(st, sql::prepare(c, text));
    st->bind_text(1, host)
        .bind_int64(2, range.since_ms.value_or(std::numeric_limits<std::int64_t>::min()))
        .bind_int64(3, range.until_ms.value_or(std::numeric_limits<std::int64_t>::max()));
    bind_counter_filters(*st, query, 4);
    HSNS_STORE_ASSIGN(rows, read_counters(*st));
    return paged(std::move(*rows), query.paging);
  });
}

StoreResult<TelemetryPage<SectionDocument>> SqliteTelemetryStore::latest_modules(
    const std::string& host, const std::optional<std::string>& netdev, const Paging& paging) {
  return latest_documents(db_, host, "telemetry_modules", "netdev", netdev, paging);
}

StoreResult<TelemetryPage<SectionDocument>> SqliteTelemetryStore::latest_neighbors(
    const std::string& host, const std::optional<std::string>& netdev, const Paging& paging) {
  return latest_documents(db_, host, "telemetry_lldp_neighbors", "netdev, chassis_id, port_id", netdev,
                          paging);
}

StoreResult<TelemetryPage<QpReading>> SqliteTelemetryStore::latest_qps(const std::string& host,
                                                                       const Paging& paging) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<TelemetryPage<QpReading>> {
    HSNS_STORE_TRY(require_host(c, host));
    HSNS_STORE_ASSIGN(batch, newest_batch_with(c, host, "telemetry_qps"));
    if (!*batch) return TelemetryPage<QpReading>{};
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c,
                                   "SELECT device, port, lqpn, rqpn, type, state, pid, comm, kernel, family, "
                                   "src, dst, sport, ts_ms FROM telemetry_qps WHERE batch_id = ?1 ORDER BY "
                                   "device, lqpn" +
                                       page_clause(paging)));
    st->bind_int64(1, **batch);
    std::vector<QpReading> rows;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      QpReading r;
      auto& q = r.record;
      q.device = st->column_text(0);
      q.port = static_cast<std::uint32_t>(st->column_int64(1));
      q.lqpn = static_cast<std::uint32_t>(st->column_int64(2));
      if (!st->column_is_null(3)) q.rqpn = static_cast<std::uint32_t>(st->column_int64(3));
      q.type = st->column_text(4);
      q.state = st->column_text(5);
      if (!st->column_is_null(6)) q.pid = static_cast<std::uint32_t>(st->column_int64(6));
      q.comm = st->column_text(7);
      q.kernel = st->column_int64(8) != 0;
      if (!st->column_is_null(9)) {
        q.addresses = proto::QpAddresses{static_cast<int>(st->column_int64(9)), st->column_text(10),
                                         st->column_text(11)};
      }
      if (!st->column_is_null(12)) q.sport = static_cast<std::uint16_t>(st->column_int64(12));
      r.ts_ms = st->column_int64(13);
      rows.push_back(std::move(r));
    }
    return paged(std::move(rows), paging);
  });
}

}  // namespace hsns::store
