// Storage of the telemetry report batches hsnsd sends (POST /api/v1/agents/{host}/reports, kind "report" of
// hsns/proto/report.h): flow records, port counters, module diagnostics, LLDP neighbours, QP records, port
// states, and the batches received.
//
// Contract:
// - ingest(host, report, bytes) stores the whole batch atomically (all its rows or none) and records
//   (host, report.seq) as received. A batch whose (host, seq) was received before stores nothing again
//   and answers the same acknowledgement with `duplicate` set; so an agent that resends after a lost
//   answer is safe. The host must be registered (not_found otherwise). `bytes` is the size of the batch as
//   it arrived (its encoded body): the measure of the size budget below.
// - prune(policy, now) removes, in one transaction, every batch received more than policy.max_age before
//   `now` (when max_age > 0), then, while the batches left hold more than policy.max_bytes (when > 0),
//   the oldest received batches first, each with all its rows. It answers how many batches and rows of
//   each table went. A pruned (host, seq) is forgotten: the same seq sent again is a new batch.
// - usage() answers the batches held and their bytes (for metrics and tests).
// Read side (each call one read snapshot; `host` must be registered, not_found otherwise; times are the
// batches' and sections' ts_ms, Unix milliseconds; a range is since <= ts_ms < until, either end open):
// - flow_directions(query): the flow records of the batches in the range (reporting host, addresses),
//   summed per direction key (host, family, src, dst, sport, dest_qp), each with what the QP inventories
//   say about its two endpoints (FlowDirectionTotals). At most query.max_keys + 1 keys are answered, so the
//   caller can tell the range holds more than it may join.
// - latest_counters / counter_series: the port counters of the host's newest report carrying a counters
//   section (one snapshot: every port), or every reading in the range; ordered by port, source, counter
//   (then time); offset/limit pages them (limit + 1 rows read, so the caller knows a next page exists).
// - latest_modules, latest_neighbors, latest_qps: the rows of the host's newest report carrying that
//   section, paged likewise.
// - Errors are StoreError values (unavailable when the backend fails). Thread-safe as the backend is.
// - Implementations: SqliteTelemetryStore (the tables of schema migration 7); a column store (ClickHouse)
//   may implement the same interface later.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hsns/proto/report.h"
#include "store/network_store.h"

namespace hsns::store {

// The tables of a batch's rows, in the order of kTelemetryTableNames (metric labels, prune counts).
enum class TelemetryTable : std::uint8_t {
  batches,
  flow_batches,
  flows,
  port_counters,
  modules,
  lldp_neighbors,
  qps,
  ports,
};
inline constexpr std::size_t kTelemetryTables = 8;
inline constexpr std::array<const char*, kTelemetryTables> kTelemetryTableNames = {
    "batches", "flow_batches", "flows", "port_counters", "modules", "lldp_neighbors", "qps", "ports"};

struct IngestResult {
  std::uint64_t acked_seq = 0;
  bool duplicate = false;  // (host, seq) was received before: nothing stored this time
  std::size_t rows = 0;    // rows written (0 for a duplicate)
};

struct RetentionPolicy {
  std::chrono::milliseconds max_age{0};  // 0: no age limit
  std::uint64_t max_bytes = 0;           // 0: no size budget
};

struct PruneResult {
  std::uint64_t batches_by_age = 0;
  std::uint64_t batches_by_size = 0;
  std::array<std::uint64_t, kTelemetryTables> rows{};  // by TelemetryTable (batches included)
  std::uint64_t total_rows() const;
};

struct TelemetryUsage {
  std::uint64_t batches = 0;
  std::uint64_t bytes = 0;
};

// ---- read side ----

struct TimeRange {
  std::optional<std::int64_t> since_ms;  // inclusive
  std::optional<std::int64_t> until_ms;  // exclusive
};

struct Paging {
  std::size_t offset = 0;
  std::size_t limit = 100;
};

// A page of rows: `more` when rows beyond this page exist.
template <typename T>
struct TelemetryPage {
  std::vector<T> items;
  bool more = false;
};

struct FlowQuery {
  std::optional<std::string> host;                    // reporting host
  std::optional<std::vector<std::string>> addresses;  // src or dst among them (an empty list matches none)
  TimeRange range;
  std::size_t max_keys = 100000;
};

// What a QP inventory record says about a flow endpoint: the process that owns the QP.
struct QpOwner {
  std::string host;  // the host whose inventory holds the QP
  std::string device;
  std::uint32_t qpn = 0;
  std::optional<std::uint32_t> pid;
  std::string comm;
  bool kernel = false;
  std::int64_t ts_ms = 0;  // the inventory's reading
};

struct FlowDirectionTotals {
  std::string host;  // the reporting host
  int family = 4;
  std::string src;
  std::string dst;
  std::uint32_t sport = 0;
  std::uint32_t dest_qp = 0;
  std::optional<std::uint32_t> src_qp;  // from a QP record on either end (none: unknown)
  std::vector<std::string> ifnames;     // sorted, each once
  std::vector<std::string> directions;  // "egress", "ingress", "xdp": sorted, each once
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ect = 0;
  std::uint64_t ce = 0;
  std::uint64_t cnp = 0;
  std::uint64_t naks = 0;
  std::uint64_t psn_regressions = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
  std::uint64_t records = 0;           // flow records summed
  std::optional<QpOwner> src_process;  // the QP (src, src_qp), when an inventory holds it
  std::optional<QpOwner> dst_process;  // the QP (dst, dest_qp)
};

struct CounterReading {
  std::string port;  // "device/port" (RDMA) or the netdev
  std::string source;
  std::string counter;
  std::uint64_t value = 0;
  std::uint64_t delta = 0;
  double rate = 0;
  std::int64_t ts_ms = 0;
};

struct CounterQuery {
  std::optional<std::string> port;
  std::optional<std::string> counter;
  Paging paging;
};

// A module or LLDP neighbour as its section's document (JSON text) with the reading's time.
struct SectionDocument {
  std::string document;
  std::int64_t ts_ms = 0;
};

struct QpReading {
  proto::QpRecord record;
  std::int64_t ts_ms = 0;
};

class TelemetryStore {
 public:
  virtual ~TelemetryStore() = default;
  virtual StoreResult<IngestResult> ingest(const std::string& host, const proto::Report& report,
                                           std::uint64_t bytes) = 0;
  virtual StoreResult<PruneResult> prune(const RetentionPolicy& policy,
                                         std::chrono::system_clock::time_point now) = 0;
  virtual StoreResult<TelemetryUsage> usage() = 0;

  virtual StoreResult<std::vector<FlowDirectionTotals>> flow_directions(const FlowQuery& query) = 0;
  virtual StoreResult<TelemetryPage<CounterReading>> latest_counters(const std::string& host,
                                                                     const CounterQuery& query) = 0;
  virtual StoreResult<TelemetryPage<CounterReading>> counter_series(const std::string& host,
                                                                    const CounterQuery& query,
                                                                    const TimeRange& range) = 0;
  // `netdev`: only that port's module / neighbours.
  virtual StoreResult<TelemetryPage<SectionDocument>> latest_modules(const std::string& host,
                                                                     const std::optional<std::string>& netdev,
                                                                     const Paging& paging) = 0;
  virtual StoreResult<TelemetryPage<SectionDocument>> latest_neighbors(
      const std::string& host, const std::optional<std::string>& netdev, const Paging& paging) = 0;
  virtual StoreResult<TelemetryPage<QpReading>> latest_qps(const std::string& host, const Paging& paging) = 0;
};

}  // namespace hsns::store
