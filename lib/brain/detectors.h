// Incremental anomaly detectors for one KPI series. Each takes one in-order sample at a time with
// constant work and a state whose size is fixed when it is built (by its configuration, config.h), never
// by the number of samples seen:
//
//   RobustBaseline  exact median and MAD of a fixed window: a sorted copy of the window kept by one
//                   insertion and one removal (O(window) moves), the MAD by walking outward from the
//                   median (O(window / 2)); 2 x window doubles.
//   CounterRate     per-second rate of a counter; a decrease is a 32- or 64-bit wrap when the wrapped
//                   delta is plausible (the previous value was in the top half of the width and the new
//                   one in the bottom half), else a reset; neither yields a rate nor an anomaly.
//   RateOfChange    |rate| above a maximum.
//   LevelShift      two adjacent windows' means as a t statistic, recomputed from a ring of 2 x window
//                   values (O(window), no drift of running sums).
//   CounterBurst    increments in a sliding time window of 12 buckets.
//   ThresholdDuration  beyond a bound for at least D seconds, cleared with hysteresis.
//
// Each detector answers a Reading per sample: whether it raised or cleared, its score and baseline.
// Contract: not thread-safe (one owner); inputs must be finite (the bank drops others).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "brain/config.h"

namespace hsns::brain {

enum class Change : std::uint8_t { none, raised, cleared };

struct Reading {
  Change change = Change::none;
  double score = 0;
  double baseline = 0;
};

class RobustBaseline {
 public:
  explicit RobustBaseline(const BaselineConfig& config);
  Reading observe(double x);
  bool active() const { return active_; }
  double median() const { return median_; }
  double spread() const { return spread_; }
  std::size_t state_bytes() const;

 private:
  void update_statistics();

  BaselineConfig config_;
  std::vector<double> ring_;    // capacity == window, in arrival order
  std::vector<double> sorted_;  // the same values sorted; capacity == window
  std::size_t next_ = 0;
  double median_ = 0;
  double spread_ = 0;
  bool active_ = false;
};

struct CounterStep {
  enum class Kind : std::uint8_t { first, normal, reset, wrap, same_time };
  Kind kind = Kind::first;
  double delta = 0;  // increments since the previous sample (wraps included; 0 for first/reset)
  double rate = 0;   // delta per second; valid for normal and wrap
  bool has_rate() const { return kind == Kind::normal || kind == Kind::wrap; }
};

class CounterRate {
 public:
  explicit CounterRate(std::uint8_t counter_bits) : bits_(counter_bits) {}
  // t_ms strictly after the previous sample's (the bank guarantees it).
  CounterStep observe(std::int64_t t_ms, double value);
  std::size_t state_bytes() const { return sizeof(*this); }

 private:
  std::uint8_t bits_;
  bool primed_ = false;
  std::int64_t last_ms_ = 0;
  double last_ = 0;
};

class RateOfChange {
 public:
  explicit RateOfChange(const RateConfig& config) : config_(config) {}
  Reading observe(double rate);
  bool active() const { return active_; }
  std::size_t state_bytes() const { return sizeof(*this); }

 private:
  RateConfig config_;
  bool active_ = false;
};

class LevelShift {
 public:
  explicit LevelShift(const LevelShiftConfig& config);
  Reading observe(double x);
  bool active() const { return active_; }
  double recent_mean() const { return recent_mean_; }
  std::size_t state_bytes() const;

 private:
  LevelShiftConfig config_;
  std::vector<double> ring_;  // capacity == 2 x window
  std::size_t next_ = 0;
  double recent_mean_ = 0;
  bool active_ = false;
};

class CounterBurst {
 public:
  static constexpr std::size_t kBuckets = 12;
  explicit CounterBurst(const BurstConfig& config);
  // increments: the counter's delta at t_ms (0 after a reset).
  Reading observe(std::int64_t t_ms, double increments);
  bool active() const { return active_; }
  double window_count() const { return window_count_; }
  std::size_t state_bytes() const { return sizeof(*this); }

 private:
  BurstConfig config_;
  std::int64_t bucket_ms_;
  std::array<std::int64_t, kBuckets> bucket_id_{};
  std::array<double, kBuckets> bucket_count_{};
  double window_count_ = 0;
  bool active_ = false;
};

class ThresholdDuration {
 public:
  explicit ThresholdDuration(const ThresholdConfig& config) : config_(config) {}
  Reading observe(std::int64_t t_ms, double x);
  bool active() const { return active_; }
  // When the value first went beyond the bound in the current run (valid while beyond or active).
  std::int64_t beyond_since_ms() const { return beyond_since_ms_; }
  std::size_t state_bytes() const { return sizeof(*this); }

 private:
  bool beyond(double x) const;
  bool back_inside(double x) const;

  ThresholdConfig config_;
  bool beyond_ = false;
  bool active_ = false;
  std::int64_t beyond_since_ms_ = 0;
};

}  // namespace hsns::brain
