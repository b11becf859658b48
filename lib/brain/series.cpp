#include "brain/series.h"

namespace hsns::brain {

std::string_view to_string(AnomalyKind kind) {
  switch (kind) {
    case AnomalyKind::deviation:
      return "deviation";
    case AnomalyKind::rate:
      return "rate";
    case AnomalyKind::level_shift:
      return "level_shift";
    case AnomalyKind::burst:
      return "burst";
    case AnomalyKind::threshold:
      return "threshold";
  }
  return "unknown";
}

SeriesDetectors::SeriesDetectors(const DetectorConfig& config) {
  if (config.type == SeriesType::counter) counter_.emplace(config.counter_bits);
  if (config.baseline.enabled) baseline_.emplace(config.baseline);
  if (config.rate.enabled) rate_.emplace(config.rate);
  if (config.level_shift.enabled) level_shift_.emplace(config.level_shift);
  if (config.burst.enabled && config.type == SeriesType::counter) burst_.emplace(config.burst);
  if (config.threshold.enabled) threshold_.emplace(config.threshold);
}

void SeriesDetectors::record(SeriesStep& step, AnomalyKind kind, const Reading& reading, std::int64_t t_ms,
                             double value, std::int64_t started_ms) {
  const auto i = static_cast<std::size_t>(kind);
  last_value_[i] = value;
  last_baseline_[i] = reading.baseline;
  if (reading.change == Change::none) return;
  Transition& t = step.transitions[step.count++];
  t.kind = kind;
  t.change = reading.change;
  t.value = value;
  t.baseline = reading.baseline;
  t.score = reading.score;
  if (reading.change == Change::raised) {
    started_ms_[i] = started_ms;
    t.started_ms = started_ms;
  } else {
    t.started_ms = started_ms_[i];
    t.ended_ms = t_ms;
  }
}

SeriesStep SeriesDetectors::observe(std::int64_t t_ms, double value) {
  SeriesStep step;
  double seen = value;
  std::optional<double> rate;
  double increments = 0;
  if (counter_) {
    const CounterStep c = counter_->observe(t_ms, value);
    step.counter = c.kind;
    increments = c.delta;
    // Until a counter has a rate (its first sample, after a reset) its detectors see nothing.
    if (!c.has_rate()) {
      if (burst_) record(step, AnomalyKind::burst, burst_->observe(t_ms, 0), t_ms, 0, t_ms);
      return step;
    }
    seen = c.rate;
    rate = c.rate;
  } else {
    if (has_previous_) rate = (value - previous_) / (static_cast<double>(t_ms - previous_ms_) / 1000.0);
    has_previous_ = true;
    previous_ms_ = t_ms;
    previous_ = value;
  }
  if (baseline_) record(step, AnomalyKind::deviation, baseline_->observe(seen), t_ms, seen, t_ms);
  if (rate_ && rate) record(step, AnomalyKind::rate, rate_->observe(*rate), t_ms, *rate, t_ms);
  if (level_shift_) record(step, AnomalyKind::level_shift, level_shift_->observe(seen), t_ms, seen, t_ms);
  if (burst_) record(step, AnomalyKind::burst, burst_->observe(t_ms, increments), t_ms, increments, t_ms);
  if (threshold_) {
    const Reading r = threshold_->observe(t_ms, seen);
    record(step, AnomalyKind::threshold, r, t_ms, seen, threshold_->beyond_since_ms());
  }
  return step;
}

SeriesStep SeriesDetectors::active_at(std::int64_t t_ms) const {
  SeriesStep step;
  const std::array<bool, kAnomalyKinds> active = {
      baseline_ && baseline_->active(), rate_ && rate_->active(), level_shift_ && level_shift_->active(),
      burst_ && burst_->active(), threshold_ && threshold_->active()};
  for (std::size_t i = 0; i < kAnomalyKinds; ++i) {
    if (!active[i]) continue;
    Transition& t = step.transitions[step.count++];
    t.kind = static_cast<AnomalyKind>(i);
    t.change = Change::cleared;
    t.started_ms = started_ms_[i];
    t.ended_ms = t_ms;
    t.value = last_value_[i];
    t.baseline = last_baseline_[i];
  }
  return step;
}

std::size_t SeriesDetectors::active_count() const {
  return active_at(0).count;
}

std::size_t SeriesDetectors::state_bytes() const {
  std::size_t bytes = sizeof(*this);
  if (baseline_) bytes += baseline_->state_bytes() - sizeof(RobustBaseline);
  if (level_shift_) bytes += level_shift_->state_bytes() - sizeof(LevelShift);
  return bytes;
}

}  // namespace hsns::brain
