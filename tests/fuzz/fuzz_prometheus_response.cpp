// The Prometheus source's answer parser and series mapping (aggregator/ingest/prometheus_response.h): any
// bytes as a query answer, mapped as a gauge and (twice, so rates across answers run) as a counter. Checks:
// no crash; a refusal says why; every sample is one the KPI store accepts (entity, metric, finite value);
// no more samples than points; the counter state holds at most one entry per series.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/prometheus_response.h"
#include "store/kpi_store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hsns::ingest;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_prometheus_response(input);
  if (parsed.error) {
    if (parsed.error->detail.empty()) __builtin_trap();
    return 0;
  }
  std::size_t points = 0;
  for (const auto& s : parsed.series) points += s.points.size();
  if (points > kMaxPrometheusPoints) __builtin_trap();
  PrometheusQueryConfig gauge;
  gauge.query = "x";
  gauge.entity = "{instance}/{ifName}";
  gauge.metric = "{__name__}";
  gauge.max_series = 1000;
  PrometheusQueryConfig counter = gauge;
  counter.type = PrometheusSeriesType::counter;
  counter.metric = "rate_per_s";
  CounterStates state;
  for (const auto* q : {&gauge, &counter, &counter}) {
    const auto m = map_series(*q, parsed.series, state);
    if (m.samples.size() > points) __builtin_trap();
    for (const auto& s : m.samples) {
      if (!hsns::store::is_kpi_entity(s.entity) || !hsns::store::is_kpi_metric(s.metric) ||
          !std::isfinite(s.value))
        __builtin_trap();
    }
    if (state.size() > parsed.series.size()) __builtin_trap();
  }
  return 0;
}
