#include "brain/bank.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hsns::brain {
namespace {

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

// What a raise means, in words an operator reads in an alert.
std::string raise_detail(const Transition& t, const DetectorConfig& c) {
  switch (t.kind) {
    case AnomalyKind::deviation:
      return number(t.value) + " is " + number(t.score) + " robust deviations from the median " +
             number(t.baseline) + " of the last " + std::to_string(c.baseline.window) + " samples";
    case AnomalyKind::rate:
      return "rate of change " + number(t.value) + "/s beyond " + number(t.baseline) + "/s";
    case AnomalyKind::level_shift:
      return "mean of the last " + std::to_string(c.level_shift.window) + " samples moved from " +
             number(t.baseline) + " (t = " + number(t.score) + ")";
    case AnomalyKind::burst:
      return "burst: " + number(t.score * t.baseline) + " increments/s over the last " +
             number(c.burst.window_s) + " s, above " + number(t.baseline) + "/s";
    case AnomalyKind::threshold:
      return number(t.value) +
             (c.threshold.direction == ThresholdConfig::Direction::above ? " above " : " below ") +
             number(t.baseline) + " for " + number(static_cast<double>(t.ended_ms - t.started_ms) / 1000.0) +
             " s (at least " + number(c.threshold.for_s) + " s)";
  }
  return {};
}

}  // namespace

std::string_view to_string(EventState state) {
  return state == EventState::raised ? "raised" : "cleared";
}

DetectorBank::DetectorBank(BrainConfig config, BankLimits limits)
    : config_(std::move(config)), limits_(limits) {
  limits_.max_series = std::max<std::size_t>(limits_.max_series, 1);
  index_.reserve(std::min<std::size_t>(limits_.max_series, 1 << 20));
}

void DetectorBank::build_key(std::string_view entity, std::string_view metric) {
  key_.assign(entity);
  key_.push_back('\0');
  key_.append(metric);
}

bool DetectorBank::has_series(std::string_view entity, std::string_view metric) const {
  std::string key(entity);
  key.push_back('\0');
  key.append(metric);
  return index_.contains(key);
}

std::size_t DetectorBank::active_anomalies() const {
  std::size_t n = 0;
  for (const Series& s : lru_) n += s.detectors.active_count();
  return n;
}

DetectorBank::Series* DetectorBank::find_or_add(const Sample& sample, std::vector<AnomalyEvent>& events) {
  build_key(sample.entity, sample.metric);
  if (auto it = index_.find(key_); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // iterators stay valid
    return &*it->second;
  }
  const DetectorConfig* config = config_.resolve(sample.entity, sample.metric);
  if (config == nullptr || !config->any_enabled()) return nullptr;  // nothing would ever raise on it
  if (index_.size() >= limits_.max_series) {
    Series& victim = lru_.back();
    emit(victim, victim.detectors.active_at(victim.last_ms), "series evicted", events);
    index_.erase(victim.key);
    lru_.pop_back();
    ++stats_.evicted;
  }
  lru_.emplace_front(key_, sample.entity.size(), *config);
  index_.emplace(lru_.front().key, lru_.begin());
  return &lru_.front();
}

void DetectorBank::observe(const Sample& sample, std::vector<AnomalyEvent>& events) {
  ++stats_.samples;
  if (!std::isfinite(sample.value) || sample.entity.find('\0') != std::string_view::npos) {
    ++stats_.invalid;
    return;
  }
  Series* series = find_or_add(sample, events);
  if (series == nullptr) {
    ++stats_.untracked;
    return;
  }
  if (series->has_last && sample.timestamp_ms <= series->last_ms) {
    ++(sample.timestamp_ms == series->last_ms ? stats_.duplicate : stats_.late);
    return;
  }
  series->has_last = true;
  series->last_ms = sample.timestamp_ms;
  ++stats_.accepted;
  const SeriesStep step = series->detectors.observe(sample.timestamp_ms, sample.value);
  if (step.counter == CounterStep::Kind::reset) ++stats_.counter_resets;
  if (step.counter == CounterStep::Kind::wrap) ++stats_.counter_wraps;
  if (step.count > 0) emit(*series, step, nullptr, events);
}

void DetectorBank::emit(const Series& series, const SeriesStep& step, const char* reason,
                        std::vector<AnomalyEvent>& events) {
  const std::string_view key = series.key;
  const std::string_view metric = key.substr(series.entity_length + 1);
  for (std::size_t i = 0; i < step.count; ++i) {
    const Transition& t = step.transitions[i];
    AnomalyEvent& e = events.emplace_back();
    e.entity = key.substr(0, series.entity_length);
    e.metric = metric;
    e.kind = t.kind;
    e.started_ms = t.started_ms;
    e.value = t.value;
    e.baseline = t.baseline;
    e.score = t.score;
    if (t.change == Change::raised) {
      ++stats_.raised;
      e.state = EventState::raised;
      Transition shown = t;
      shown.ended_ms = series.last_ms;
      e.detail = raise_detail(shown, *series.config);
    } else {
      ++stats_.cleared;
      e.state = EventState::cleared;
      e.ended_ms = t.ended_ms;
      e.detail = reason != nullptr ? reason : "back to normal";
    }
  }
}

}  // namespace hsns::brain
