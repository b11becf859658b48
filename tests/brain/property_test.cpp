// Properties of the detectors (RapidCheck): the state of a series does not grow with the number of
// samples it has seen, a constant series raises nothing but a threshold it sits beyond, and the bank
// never holds more series than its cap.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include "brain/bank.h"
#include "brain/series.h"

namespace hsns::brain {
namespace {

// Every statistical detector on, with generated parameters inside the documented bounds.
DetectorConfig generated_config(SeriesType type) {
  DetectorConfig c;
  c.type = type;
  c.counter_bits = *rc::gen::element<std::uint8_t>(0, 32, 64);
  c.baseline.enabled = true;
  c.baseline.window = *rc::gen::inRange<std::uint32_t>(3, kMaxBaselineWindow + 1);
  c.baseline.raise = *rc::gen::inRange(1, 20);
  c.baseline.clear = c.baseline.raise / 2;
  c.rate.enabled = true;
  c.rate.max_per_s = *rc::gen::inRange(1, 1'000'000);
  c.level_shift.enabled = true;
  c.level_shift.window = *rc::gen::inRange<std::uint32_t>(2, kMaxLevelShiftWindow + 1);
  c.level_shift.raise = *rc::gen::inRange(1, 20);
  c.level_shift.clear = c.level_shift.raise / 2;
  c.burst.enabled = type == SeriesType::counter;
  c.burst.window_s = *rc::gen::inRange(1, 3600);
  c.burst.rate_per_s = *rc::gen::inRange(0, 100);
  c.burst.min_count = *rc::gen::inRange(0, 100);
  return c;
}

// Finite doubles of every magnitude, with many repeats and negatives.
rc::Gen<double> finite_value() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::inRange(-1000, 1000), [](int v) { return double(v); }),
      rc::gen::suchThat(rc::gen::arbitrary<double>(), [](double v) { return std::isfinite(v); }));
}

RC_GTEST_PROP(BrainProperties, SeriesStateDoesNotGrowWithTheNumberOfSamples, ()) {
  const auto type = *rc::gen::element(SeriesType::gauge, SeriesType::counter);
  DetectorConfig c = generated_config(type);
  c.threshold = {.enabled = true, .bound = *finite_value(), .bound_given = true, .for_s = 10};
  SeriesDetectors series(c);
  const std::size_t bytes = series.state_bytes();
  const auto values = *rc::gen::container<std::vector<double>>(finite_value());
  const auto steps = *rc::gen::container<std::vector<int>>(values.size(), rc::gen::inRange(1, 100'000));
  std::int64_t t = *rc::gen::inRange<std::int64_t>(-1'000'000'000, 1'000'000'000);
  for (std::size_t i = 0; i < values.size(); ++i) {
    t += steps[i];
    series.observe(t, values[i]);
    RC_ASSERT(series.state_bytes() == bytes);
  }
  // A long tail of samples past every window size: still the same size.
  for (int i = 0; i < 600; ++i) series.observe(t += 1000, values.empty() ? 1.0 : values[i % values.size()]);
  RC_ASSERT(series.state_bytes() == bytes);
}

RC_GTEST_PROP(BrainProperties, AConstantSeriesNeverRaises, ()) {
  const auto type = *rc::gen::element(SeriesType::gauge, SeriesType::counter);
  const DetectorConfig c = generated_config(type);
  SeriesDetectors series(c);
  const double constant = *finite_value();
  const auto count = *rc::gen::inRange(1, 2 * static_cast<int>(kMaxBaselineWindow) + 50);
  std::int64_t t = 0;
  for (int i = 0; i < count; ++i) {
    t += *rc::gen::inRange(1, 60'000);
    const SeriesStep step = series.observe(t, constant);
    RC_ASSERT(step.count == 0U);
    RC_ASSERT(step.counter != CounterStep::Kind::reset);
    RC_ASSERT(step.counter != CounterStep::Kind::wrap);
  }
}

RC_GTEST_PROP(BrainProperties, AConstantBeyondAThresholdRaisesOnceAfterItsDuration, ()) {
  ThresholdConfig c;
  c.enabled = true;
  c.direction = *rc::gen::element(ThresholdConfig::Direction::above, ThresholdConfig::Direction::below);
  c.bound = *rc::gen::inRange(-100, 100);
  c.bound_given = true;
  c.for_s = *rc::gen::inRange(0, 300);
  c.hysteresis = *rc::gen::inRange(0, 5);
  const double constant = *rc::gen::inRange(-110, 110);
  const bool beyond =
      c.direction == ThresholdConfig::Direction::above ? constant > c.bound : constant < c.bound;
  ThresholdDuration d(c);
  const auto count = *rc::gen::inRange(1, 200);
  std::int64_t t = 0;
  int raised = 0;
  int cleared = 0;
  std::int64_t raised_at = -1;
  for (int i = 0; i < count; ++i) {
    const Change change = d.observe(t, constant).change;
    raised += change == Change::raised;
    cleared += change == Change::cleared;
    if (change == Change::raised) raised_at = t;
    t += 5000;
  }
  const std::int64_t last = t - 5000;
  const bool long_enough = static_cast<double>(last) >= c.for_s * 1000;
  RC_ASSERT(cleared == 0);
  RC_ASSERT(raised == (beyond && long_enough ? 1 : 0));
  if (raised == 1) RC_ASSERT(static_cast<double>(raised_at) >= c.for_s * 1000);
  if (raised == 1) RC_ASSERT(static_cast<double>(raised_at) < c.for_s * 1000 + 5000);
}

RC_GTEST_PROP(BrainProperties, TheBankEvictsLikeAnLruOfItsCap, ()) {
  const auto cap = *rc::gen::inRange<std::size_t>(1, 20);
  DetectorBank bank(default_brain_config(), {.max_series = cap});
  const auto entities = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 40));
  std::vector<AnomalyEvent> events;
  std::list<int> model;  // most recent first
  std::uint64_t model_evicted = 0;
  std::int64_t t = 0;
  for (int e : entities) {
    bank.observe({"host" + std::to_string(e), "symbol_error", t += 1000, 0}, events);
    const auto it = std::find(model.begin(), model.end(), e);
    if (it != model.end()) {
      model.erase(it);
    } else if (model.size() == cap) {
      model.pop_back();
      ++model_evicted;
    }
    model.push_front(e);
    RC_ASSERT(bank.series_count() == model.size());
  }
  for (int e : model) RC_ASSERT(bank.has_series("host" + std::to_string(e), "symbol_error"));
  RC_ASSERT(bank.stats().evicted == model_evicted);
  RC_ASSERT(bank.stats().accepted == entities.size());
  RC_ASSERT(events.empty());
}

}  // namespace
}  // namespace hsns::brain
