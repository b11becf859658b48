#include "brain/detectors.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hsns::brain {
namespace {

// 1.4826 x MAD estimates the standard deviation of normally distributed data.
constexpr double kMadToSigma = 1.4826;

// Raise at score >= raise, clear below clear: the one hysteresis rule of the score-based detectors.
Change step_state(bool& active, double score, double raise, double clear) {
  if (!active && score >= raise) {
    active = true;
    return Change::raised;
  }
  if (active && score < clear) {
    active = false;
    return Change::cleared;
  }
  return Change::none;
}

// Halves first so two huge values of one sign do not overflow.
double midpoint(double a, double b) {
  return 0.5 * a + 0.5 * b;
}

}  // namespace

RobustBaseline::RobustBaseline(const BaselineConfig& config) : config_(config) {
  ring_.reserve(config_.window);
  sorted_.reserve(config_.window);
}

std::size_t RobustBaseline::state_bytes() const {
  return sizeof(*this) + (ring_.capacity() + sorted_.capacity()) * sizeof(double);
}

Reading RobustBaseline::observe(double x) {
  if (ring_.size() < config_.window) {
    ring_.push_back(x);
    sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), x), x);
    if (ring_.size() < config_.window) return {};
  } else {
    const double oldest = ring_[next_];
    ring_[next_] = x;
    next_ = (next_ + 1) % ring_.size();
    // Move the elements between the oldest value's slot and the new value's slot by one (one pass).
    auto out = std::lower_bound(sorted_.begin(), sorted_.end(), oldest);
    if (x >= oldest) {
      auto in = std::upper_bound(out, sorted_.end(), x);
      std::move(out + 1, in, out);
      *(in - 1) = x;
    } else {
      auto in = std::upper_bound(sorted_.begin(), out, x);
      std::move_backward(in, out, out + 1);
      *in = x;
    }
  }
  update_statistics();
  const double deviation = std::fabs(x - median_);
  Reading r;
  r.score = deviation == 0 ? 0 : deviation / spread_;
  r.baseline = median_;
  r.change = step_state(active_, r.score, config_.raise, config_.clear);
  return r;
}

void RobustBaseline::update_statistics() {
  const std::size_t n = sorted_.size();
  median_ = n % 2 == 1 ? sorted_[n / 2] : midpoint(sorted_[n / 2 - 1], sorted_[n / 2]);
  // The deviations from the median, read outward from the middle, are two ascending runs: merging them
  // up to the middle rank gives the median absolute deviation without a scratch array.
  const std::size_t k_high = n / 2;
  const std::size_t k_low = n % 2 == 1 ? k_high : k_high - 1;
  std::size_t left = (n - 1) / 2 + 1;  // one past the next left element
  std::size_t right = (n - 1) / 2 + 1;
  double low = 0;
  double high = 0;
  for (std::size_t k = 0; k <= k_high; ++k) {
    double d = 0;
    const bool take_left = right == n || (left > 0 && std::fabs(median_ - sorted_[left - 1]) <=
                                                          std::fabs(sorted_[right] - median_));
    if (take_left) {
      d = std::fabs(median_ - sorted_[--left]);
    } else {
      d = std::fabs(sorted_[right++] - median_);
    }
    if (k == k_low) low = d;
    if (k == k_high) high = d;
  }
  const double mad = k_low == k_high ? high : midpoint(low, high);
  spread_ = std::max(kMadToSigma * mad, config_.min_spread);
}

CounterStep CounterRate::observe(std::int64_t t_ms, double value) {
  CounterStep step;
  if (!primed_) {
    primed_ = true;
    last_ms_ = t_ms;
    last_ = value;
    return step;
  }
  if (t_ms <= last_ms_) {
    step.kind = CounterStep::Kind::same_time;
    return step;
  }
  const double seconds = static_cast<double>(t_ms - last_ms_) / 1000.0;
  if (value >= last_) {
    step.kind = CounterStep::Kind::normal;
    step.delta = value - last_;
  } else {
    constexpr double k32 = 4294967296.0;            // 2^32
    constexpr double k64 = 18446744073709551616.0;  // 2^64
    const double width = bits_ == 32 ? k32 : bits_ == 64 ? k64 : (last_ < k32 ? k32 : k64);
    // A wrap leaves the top half of the width and lands in the bottom half; anything else (a counter
    // cleared by a driver reload or a port reset) is a reset whose increments are unknown.
    if (last_ >= width / 2 && last_ < width && value >= 0 && value < width / 2) {
      step.kind = CounterStep::Kind::wrap;
      step.delta = (width - last_) + value;
    } else {
      step.kind = CounterStep::Kind::reset;
    }
  }
  if (step.has_rate()) step.rate = step.delta / seconds;
  last_ms_ = t_ms;
  last_ = value;
  return step;
}

Reading RateOfChange::observe(double rate) {
  const double magnitude = std::fabs(rate);
  Reading r;
  r.baseline = config_.max_per_s;
  r.score = config_.max_per_s > 0 ? magnitude / config_.max_per_s : 0;
  if (!active_ && magnitude > config_.max_per_s) {
    active_ = true;
    r.change = Change::raised;
  } else if (active_ && magnitude <= config_.clear_per_s.value_or(config_.max_per_s)) {
    active_ = false;
    r.change = Change::cleared;
  }
  return r;
}

LevelShift::LevelShift(const LevelShiftConfig& config) : config_(config) {
  ring_.reserve(2 * static_cast<std::size_t>(config_.window));
}

std::size_t LevelShift::state_bytes() const {
  return sizeof(*this) + ring_.capacity() * sizeof(double);
}

Reading LevelShift::observe(double x) {
  const std::size_t w = config_.window;
  if (ring_.size() < 2 * w) {
    ring_.push_back(x);
    if (ring_.size() < 2 * w) return {};
  } else {
    ring_[next_] = x;
    next_ = (next_ + 1) % ring_.size();
  }
  // ring_[next_] is the oldest value: the reference window is the first w from there, the recent one the
  // next w. Both are summed in the same order, so a constant series has exactly equal means; each term is
  // scaled first so values near the largest double do not overflow the sum.
  const std::size_t size = ring_.size();
  const auto index = [&](std::size_t k) {  // no division: k < size and next_ < size
    const std::size_t i = next_ + k;
    return i >= size ? i - size : i;
  };
  const double n = static_cast<double>(w);
  const double share = 1 / n;
  double reference_mean = 0;
  recent_mean_ = 0;
  for (std::size_t k = 0; k < w; ++k) {
    reference_mean += ring_[index(k)] * share;
    recent_mean_ += ring_[index(w + k)] * share;
  }
  double reference_ss = 0;
  double recent_ss = 0;
  for (std::size_t k = 0; k < w; ++k) {
    const double a = ring_[index(k)] - reference_mean;
    const double b = ring_[index(w + k)] - recent_mean_;
    reference_ss += a * a;
    recent_ss += b * b;
  }
  const double standard_error =
      std::max(std::sqrt((reference_ss + recent_ss) / (n - 1) / n), config_.min_spread);
  const double shift = recent_mean_ - reference_mean;
  Reading r;
  r.baseline = reference_mean;
  r.score = shift == 0 ? 0 : std::fabs(shift) / standard_error;
  if (std::fabs(shift) < config_.min_shift && !active_) return r;
  r.change = step_state(active_, r.score, config_.raise, config_.clear);
  return r;
}

CounterBurst::CounterBurst(const BurstConfig& config)
    : config_(config),
      bucket_ms_(std::max<std::int64_t>(
          1, static_cast<std::int64_t>(config.window_s * 1000.0 / static_cast<double>(kBuckets)))) {
  bucket_id_.fill(std::numeric_limits<std::int64_t>::min());
}

Reading CounterBurst::observe(std::int64_t t_ms, double increments) {
  // Floor division, so times before the epoch land in the right bucket too.
  const std::int64_t id = t_ms / bucket_ms_ - (t_ms % bucket_ms_ < 0 ? 1 : 0);
  const auto buckets = static_cast<std::int64_t>(kBuckets);
  const auto slot = static_cast<std::size_t>(((id % buckets) + buckets) % buckets);
  if (bucket_id_[slot] != id) {
    bucket_id_[slot] = id;
    bucket_count_[slot] = 0;
  }
  bucket_count_[slot] += increments;
  window_count_ = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (bucket_id_[i] > id - buckets) window_count_ += bucket_count_[i];
  }
  const double rate = window_count_ / config_.window_s;
  Reading r;
  r.baseline = config_.rate_per_s;
  r.score = config_.rate_per_s > 0 ? rate / config_.rate_per_s : rate;
  if (!active_ && window_count_ >= config_.min_count && rate > config_.rate_per_s) {
    active_ = true;
    r.change = Change::raised;
  } else if (active_ && rate <= config_.rate_per_s * config_.clear_ratio) {
    active_ = false;
    r.change = Change::cleared;
  }
  return r;
}

bool ThresholdDuration::beyond(double x) const {
  return config_.direction == ThresholdConfig::Direction::above ? x > config_.bound : x < config_.bound;
}

bool ThresholdDuration::back_inside(double x) const {
  return config_.direction == ThresholdConfig::Direction::above ? x <= config_.bound - config_.hysteresis
                                                                : x >= config_.bound + config_.hysteresis;
}

Reading ThresholdDuration::observe(std::int64_t t_ms, double x) {
  Reading r;
  r.baseline = config_.bound;
  r.score = std::fabs(x - config_.bound);
  if (active_) {
    if (back_inside(x)) {
      active_ = false;
      beyond_ = false;
      r.change = Change::cleared;
    }
    return r;
  }
  if (!beyond(x)) {
    beyond_ = false;
    return r;
  }
  if (!beyond_) {
    beyond_ = true;
    beyond_since_ms_ = t_ms;
  }
  if (static_cast<double>(t_ms - beyond_since_ms_) >= config_.for_s * 1000.0) {
    active_ = true;
    r.change = Change::raised;
  }
  return r;
}

}  // namespace hsns::brain
