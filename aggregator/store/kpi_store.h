// The KPI store: one time series per (entity, metric) of the network brain (docs/brain.md, "KPI store"),
// kept raw and rolled up into 1-minute and 1-hour buckets, each resolution with its own retention.
//
// Contract (every backend keeps it; SqliteKpiStore is the first, a column store (ClickHouse) may follow):
// - A sample is (entity, metric, ts_ms, value). entity: 1..kMaxKpiEntityLength printable ASCII characters
//   without space (is_kpi_entity); the scheme ("<host>/<netdev>" for a host port, "<device>/<port>" for a
//   switch port, "<device>" for a device) is docs/brain.md's. metric: 1..kMaxKpiMetricLength of
//   [A-Za-z0-9_.:], starting with a letter or '_' (is_kpi_metric). ts_ms: Unix milliseconds in
//   [0, kMaxKpiTimestampMs]. value: finite, of magnitude at most kMaxKpiMagnitude (so that a bucket's sum of
//   millions of samples stays finite and its average a number). validate_kpi_samples names the first bad
//   field of each bad sample
//   ("samples[3].metric").
// - append(samples) (KpiSink, also what the SNMP poller and the report route call) validates the whole batch
//   first: a bad sample is an invalid error naming "samples[i].<field>" and nothing is stored. Otherwise the
//   batch is stored atomically (every sample counted below, or nothing at all on a backend failure):
//   * duplicate: a sample whose (entity, metric, ts_ms) is stored already (also twice in one batch) is
//     ignored, the first value kept;
//   * late: a sample more than options.late_window before its series' newest timestamp is refused (its
//     buckets may be pruned or final); it is counted, never stored;
//   * out_of_order: a sample before its series' newest timestamp but within the window is stored and
//     counted (so accepted includes out_of_order);
//   * accepted: stored raw and folded into its 1m and 1h buckets in the same transaction (downsampling on
//     write: a bucket's min, max, sum, count and last, the last being the value of the latest timestamp, so
//     an out-of-order sample updates its bucket correctly).
//   A sample at or before now - raw retention is late as well (it would be pruned at once).
// - query(q): the points of one series with since_ms <= ts < until_ms in ascending time, at most q.limit
//   (truncated says more were there). raw: one point per sample (min = max = avg = last = value, count 1);
//   minute / hour: one per bucket (ts the bucket start), min, max, avg (sum / count), count, last. A series
//   never seen answers no points (not an error).
// - list_series(filter): the series (entity, metric, first and newest timestamp, newest value) in
//   (entity, metric) order, optionally of one entity and/or one metric, at most limit.
// - latest(q): per entity, the newest sample of one metric (the dashboard's overlays), in entity order, at
//   most q.limit (truncated says more were there). Without q.at_ms: each series' newest sample (its
//   last_ms, last_value); with q.at_ms: the newest raw sample at or before at_ms (so a time beyond the raw
//   retention finds nothing). Either way only samples at or after q.since_ms (how old a value may be).
// - prune(now): removes raw samples older than now - retention.raw, minute buckets older than now -
//   retention.minute, hour buckets older than now - retention.hour (by the bucket's start), and series with
//   nothing left, in one transaction; answers what went.
// - Errors are StoreError values (invalid for a bad sample, unavailable when the backend fails).
//   Thread-safe as the backend is.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/network_store.h"

namespace hsns::store {

inline constexpr std::size_t kMaxKpiEntityLength = 256;
inline constexpr std::size_t kMaxKpiMetricLength = 128;
// 9999-12-31T23:59:59.999Z: what RFC 3339 can write.
inline constexpr std::int64_t kMaxKpiTimestampMs = 253'402'300'799'999;
// 1e300 x 3,600,000 samples (an hour bucket at one per millisecond) < DBL_MAX (1.8e308).
inline constexpr double kMaxKpiMagnitude = 1e300;

struct KpiSample {
  std::string entity;
  std::string metric;
  std::int64_t ts_ms = 0;
  double value = 0;
  bool operator==(const KpiSample&) const = default;
};

bool is_kpi_entity(std::string_view entity);
bool is_kpi_metric(std::string_view metric);
// Every finding of the batch, one per bad sample (its first bad field), "samples[i].<field>".
std::vector<FieldError> validate_kpi_samples(std::span<const KpiSample> samples);

struct KpiAppendResult {
  std::uint64_t accepted = 0;      // stored (out_of_order included)
  std::uint64_t duplicate = 0;     // (entity, metric, ts) stored already: ignored
  std::uint64_t out_of_order = 0;  // older than the series' newest sample, within the window: stored
  std::uint64_t late = 0;          // beyond the window (or the raw retention): refused
  std::uint64_t future = 0;        // dated beyond the data time window (ingest/windowed_kpi_sink.h): refused
  std::uint64_t new_series = 0;    // series seen for the first time
  KpiAppendResult& operator+=(const KpiAppendResult& other);
};

// What the SNMP poller, the report route and POST /api/v1/kpis hand their samples to.
class KpiSink {
 public:
  virtual ~KpiSink() = default;
  virtual StoreResult<KpiAppendResult> append(std::span<const KpiSample> samples) = 0;
};

enum class KpiResolution : std::uint8_t { raw, minute, hour };
inline constexpr std::array<const char*, 3> kKpiResolutionNames = {"raw", "1m", "1h"};
std::optional<KpiResolution> parse_kpi_resolution(std::string_view name);
std::string_view to_string(KpiResolution resolution);
// The bucket width in milliseconds (1 for raw).
std::int64_t kpi_bucket_ms(KpiResolution resolution);

struct KpiQuery {
  std::string entity;
  std::string metric;
  std::int64_t since_ms = 0;
  std::int64_t until_ms = kMaxKpiTimestampMs + 1;  // exclusive
  KpiResolution resolution = KpiResolution::raw;
  std::size_t limit = 10'000;
};

struct KpiPoint {
  std::int64_t ts_ms = 0;  // the sample's time, or the bucket's start
  double min = 0;
  double max = 0;
  double avg = 0;
  std::uint64_t count = 0;
  double last = 0;
};

struct KpiSeriesPoints {
  std::vector<KpiPoint> points;
  bool truncated = false;  // more points matched than q.limit
};

struct KpiSeriesFilter {
  std::optional<std::string> entity;
  std::optional<std::string> metric;
  std::size_t limit = 1000;
};

struct KpiSeries {
  std::string entity;
  std::string metric;
  std::int64_t first_ms = 0;
  std::int64_t last_ms = 0;
  double last_value = 0;
};

struct KpiSeriesList {
  std::vector<KpiSeries> items;
  bool truncated = false;
};

struct KpiLatestQuery {
  std::string metric;
  std::optional<std::int64_t> at_ms;  // none: each series' newest sample
  std::int64_t since_ms = 0;          // older samples are left out
  std::size_t limit = 10'000;
};

struct KpiLatestValue {
  std::string entity;
  std::int64_t ts_ms = 0;
  double value = 0;
};

struct KpiLatestValues {
  std::vector<KpiLatestValue> items;
  bool truncated = false;
};

struct KpiRetention {
  std::chrono::milliseconds raw = std::chrono::hours(48);
  std::chrono::milliseconds minute = std::chrono::hours(24 * 30);
  std::chrono::milliseconds hour = std::chrono::hours(24 * 400);
};

struct KpiStoreOptions {
  KpiRetention retention;
  // How far before its series' newest sample a sample is still accepted (then counted out_of_order).
  std::chrono::milliseconds late_window = std::chrono::hours(1);
};

struct KpiPruneResult {
  std::uint64_t raw = 0;     // samples
  std::uint64_t minute = 0;  // buckets
  std::uint64_t hour = 0;    // buckets
  std::uint64_t series = 0;  // series with nothing left
};

class KpiStore : public KpiSink {
 public:
  virtual StoreResult<KpiSeriesPoints> query(const KpiQuery& q) = 0;
  virtual StoreResult<KpiSeriesList> list_series(const KpiSeriesFilter& filter) = 0;
  virtual StoreResult<KpiLatestValues> latest(const KpiLatestQuery& q) = 0;
  virtual StoreResult<KpiPruneResult> prune(std::chrono::system_clock::time_point now) = 0;
};

}  // namespace hsns::store
