#include "ingest/windowed_kpi_sink.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hsns::ingest {

WindowedKpiSink::WindowedKpiSink(store::KpiSink& inner, DataTimeWindow window, IngestMetrics& metrics,
                                 WallClock now)
    : inner_(inner), window_(window), metrics_(metrics), now_(std::move(now)) {}

store::StoreResult<store::KpiAppendResult> WindowedKpiSink::append(
    std::span<const store::KpiSample> samples) {
  const std::int64_t now = now_();
  const auto in_future = [&](const store::KpiSample& s) {
    return judge_data_time(window_, s.ts_ms, now) == TimeVerdict::future;
  };
  const auto future = static_cast<std::uint64_t>(std::count_if(samples.begin(), samples.end(), in_future));
  if (future == 0) return inner_.append(samples);
  // Validated here, before any sample is left out, so that a finding names the sample's index as sent.
  if (auto errors = store::validate_kpi_samples(samples); !errors.empty())
    return tl::unexpected(store::StoreError::invalid(std::move(errors)));
  metrics_.outside_window("kpis", TimeVerdict::future, future);
  std::vector<store::KpiSample> kept;
  kept.reserve(samples.size() - future);
  std::copy_if(samples.begin(), samples.end(), std::back_inserter(kept),
               [&](const store::KpiSample& s) { return !in_future(s); });
  store::KpiAppendResult result;
  if (!kept.empty()) {
    auto appended = inner_.append(kept);
    if (!appended) return appended;
    result = *appended;
  }
  result.future += future;
  return result;
}

}  // namespace hsns::ingest
