// The pure half of the Prometheus source (prometheus_source.h): an instant query's answer
// (GET /api/v1/query, Prometheus' HTTP API) read and its series mapped to KPI samples.
//
// Contract:
// - parse_prometheus_response(): the body is parsed strictly (hsns::parse_json_strict: RFC 8259, nesting at
//   most kMaxJsonDepth, no repeated key) after a size check (kMaxPrometheusResponseBytes). It must be
//   {"status":"success","data":{"resultType":"vector"|"matrix"|"scalar","result":...}}: a vector's elements
//   {"metric":{label:string...},"value":[<unix seconds>, "<number>"]} (labels as given), a matrix's
//   {"metric":{...},"values":[[<unix seconds>, "<number>"], ...]} (a range selector such as
//   `ifHCInOctets[1m]`: every sample with its own scrape time), a scalar's [<unix seconds>, "<number>"]
//   (one series without labels). At most kMaxPrometheusPoints points in all. "status":"error" is an error of
//   kind error_status with Prometheus' errorType and error; anything else of another shape is malformed,
//   naming where ("data.result[3].value"). Values are Prometheus' texts: a decimal number, "NaN",
//   "+Inf", "-Inf" (kept as doubles; the mapping skips the non-finite). Extra members are ignored
//   (Prometheus adds "warnings", "stats" and may add more).
// - render_template(): "{label}" replaced by the series' label value, "{{"/"}}" literal braces; a label
//   the series lacks: nullopt.
// - map_series(): for each series in order, at most query.max_series, and each of its points in order: the
//   entity (template; characters
//   outside printable ASCII and space become '_'; empty or longer than store::kMaxKpiEntityLength:
//   unmapped), the metric (template; must be a KPI metric name: else unmapped), the time (the value's
//   seconds, to whole milliseconds) and the value (non-finite: invalid_value). A gauge gives its value. A
//   counter gives the per-second rate since the previous point of the same (entity, metric), in this answer
//   or kept in `counters` from the previous one (state the caller keeps per query): none for the first
//   point, a point not newer than the previous (skipped: a range overlapping the last answer's), or a
//   decrease (a counter reset: counted, the new value is the baseline). Rates are exact when the points
//   carry their own scrape times (a range selector); an instant vector's points carry the evaluation time.
//   `counters` keeps the series of the latest answer only (at most max_series).
// - Pure; thread-compatible (the counter state belongs to one caller).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/prometheus_config.h"
#include "store/kpi_store.h"

namespace hsns::ingest {

inline constexpr std::size_t kMaxPrometheusResponseBytes = std::size_t{64} * 1024 * 1024;
inline constexpr std::size_t kMaxPrometheusPoints = 1'000'000;

struct PrometheusPoint {
  double ts_seconds = 0;
  double value = 0;
};

struct PrometheusSeries {
  std::map<std::string, std::string> labels;
  std::vector<PrometheusPoint> points;  // one for a vector or scalar; a matrix's in its order
};

struct PrometheusError {
  enum class Kind : std::uint8_t { malformed, error_status, too_large } kind = Kind::malformed;
  std::string detail;
};

struct PrometheusResult {
  std::vector<PrometheusSeries> series;
  std::optional<PrometheusError> error;
};

PrometheusResult parse_prometheus_response(std::string_view body);

// A template's syntax: balanced placeholders of label names ([A-Za-z_][A-Za-z0-9_]*), "{{"/"}}" literal.
bool valid_template(std::string_view tmpl);
std::optional<std::string> render_template(std::string_view tmpl,
                                           const std::map<std::string, std::string>& labels);

struct CounterState {
  std::int64_t ts_ms = 0;
  double value = 0;
};
using CounterStates = std::map<std::pair<std::string, std::string>, CounterState>;

struct MappedSamples {
  std::vector<store::KpiSample> samples;
  std::size_t unmapped = 0;       // a label missing, an entity or metric outside the rules
  std::size_t invalid_value = 0;  // NaN or infinite
  std::size_t over_limit = 0;     // beyond max_series
  std::size_t counter_resets = 0;
  std::size_t counter_baselines = 0;  // first point of a counter series: no rate yet
  std::size_t not_newer = 0;          // counter points at or before the series' previous point
};

MappedSamples map_series(const PrometheusQueryConfig& query, const std::vector<PrometheusSeries>& series,
                         CounterStates& counters);

}  // namespace hsns::ingest
