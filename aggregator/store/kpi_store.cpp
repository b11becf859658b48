#include "store/kpi_store.h"

#include <cmath>

namespace hsns::store {
namespace {

bool is_metric_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_metric_char(char c) {
  return is_metric_start(c) || (c >= '0' && c <= '9') || c == '.' || c == ':';
}

}  // namespace

bool is_kpi_entity(std::string_view entity) {
  if (entity.empty() || entity.size() > kMaxKpiEntityLength) return false;
  for (const char c : entity) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

bool is_kpi_metric(std::string_view metric) {
  if (metric.empty() || metric.size() > kMaxKpiMetricLength || !is_metric_start(metric.front())) return false;
  for (const char c : metric) {
    if (!is_metric_char(c)) return false;
  }
  return true;
}

std::vector<FieldError> validate_kpi_samples(std::span<const KpiSample> samples) {
  std::vector<FieldError> errors;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    const auto field = [i](const char* name) { return "samples[" + std::to_string(i) + "]." + name; };
    if (!is_kpi_entity(s.entity)) {
      errors.push_back({field("entity"), "must be 1 to " + std::to_string(kMaxKpiEntityLength) +
                                             " printable ASCII characters without space"});
    } else if (!is_kpi_metric(s.metric)) {
      errors.push_back({field("metric"), "must be 1 to " + std::to_string(kMaxKpiMetricLength) +
                                             " characters of A-Z a-z 0-9 _ . : starting with a letter or _"});
    } else if (s.ts_ms < 0 || s.ts_ms > kMaxKpiTimestampMs) {
      errors.push_back({field("ts"), "must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"});
    } else if (!std::isfinite(s.value) || std::fabs(s.value) > kMaxKpiMagnitude) {
      errors.push_back({field("value"), "must be a finite number of magnitude at most 1e300"});
    }
  }
  return errors;
}

KpiAppendResult& KpiAppendResult::operator+=(const KpiAppendResult& other) {
  accepted += other.accepted;
  duplicate += other.duplicate;
  out_of_order += other.out_of_order;
  late += other.late;
  future += other.future;
  new_series += other.new_series;
  return *this;
}

std::optional<KpiResolution> parse_kpi_resolution(std::string_view name) {
  for (std::size_t i = 0; i < kKpiResolutionNames.size(); ++i) {
    if (name == kKpiResolutionNames[i]) return static_cast<KpiResolution>(i);
  }
  return std::nullopt;
}

std::string_view to_string(KpiResolution resolution) {
  return kKpiResolutionNames.at(static_cast<std::size_t>(resolution));
}

std::int64_t kpi_bucket_ms(KpiResolution resolution) {
  switch (resolution) {
    case KpiResolution::raw:
      return 1;
    case KpiResolution::minute:
      return 60'000;
    case KpiResolution::hour:
      return 3'600'000;
  }
  return 1;
}

}  // namespace hsns::store
