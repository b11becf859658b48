// The detectors of one series, as its configuration enables them, fed in order: a counter goes through
// CounterRate first and its detectors see the per-second rate (the burst detector its increments); a
// gauge's detectors see the value and the rate-of-change detector its derivative.
//
// Contract: not thread-safe (the bank owns it); the state's size is fixed at construction; observe is
// called with strictly increasing timestamps and finite values (the bank checks both).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "brain/config.h"
#include "brain/detectors.h"

namespace hsns::brain {

enum class AnomalyKind : std::uint8_t { deviation, rate, level_shift, burst, threshold };
inline constexpr std::size_t kAnomalyKinds = 5;
std::string_view to_string(AnomalyKind kind);

// One raise or clear of one detector, before the bank names the series.
struct Transition {
  AnomalyKind kind = AnomalyKind::deviation;
  Change change = Change::none;
  std::int64_t started_ms = 0;
  std::int64_t ended_ms = 0;  // cleared only
  double value = 0;           // what the detector saw: the value, or a counter's rate (burst: increments)
  double baseline = 0;
  double score = 0;
};

struct SeriesStep {
  std::array<Transition, kAnomalyKinds> transitions{};
  std::size_t count = 0;
  CounterStep::Kind counter = CounterStep::Kind::first;  // counters only
};

class SeriesDetectors {
 public:
  explicit SeriesDetectors(const DetectorConfig& config);
  SeriesStep observe(std::int64_t t_ms, double value);
  // Raised anomalies, as transitions a caller would report if the series ended now (eviction).
  SeriesStep active_at(std::int64_t t_ms) const;
  std::size_t active_count() const;
  std::size_t state_bytes() const;

 private:
  void record(SeriesStep& step, AnomalyKind kind, const Reading& reading, std::int64_t t_ms, double value,
              std::int64_t started_ms);

  std::optional<CounterRate> counter_;
  std::optional<RobustBaseline> baseline_;
  std::optional<RateOfChange> rate_;
  std::optional<LevelShift> level_shift_;
  std::optional<CounterBurst> burst_;
  std::optional<ThresholdDuration> threshold_;
  bool has_previous_ = false;  // gauges: the previous sample, for the rate of change
  std::int64_t previous_ms_ = 0;
  double previous_ = 0;
  std::array<std::int64_t, kAnomalyKinds> started_ms_{};
  std::array<double, kAnomalyKinds> last_value_{};
  std::array<double, kAnomalyKinds> last_baseline_{};
};

}  // namespace hsns::brain
