// Exponential backoff with jitter for retrying the aggregator.
//
// Contract: next() returns a delay drawn uniformly from [0, current] ("full jitter": many daemons retrying
// one aggregator after an outage spread over the whole window instead of bunching in its upper half) and
// then doubles current up to max; reset() returns to initial after a success. The random source is injected
// (seeded) so tests are deterministic. Not thread-safe; one owner.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace hsns::daemon {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, std::uint64_t seed)
      : initial_(initial), max_(max), current_(initial), rng_(seed) {}

  std::chrono::milliseconds next() {
    std::uniform_int_distribution<long> d(0, current_.count());
    const std::chrono::milliseconds delay(d(rng_));
    current_ = std::min(max_, current_ * 2);
    return delay;
  }
  void reset() { current_ = initial_; }

 private:
  std::chrono::milliseconds initial_, max_, current_;
  std::mt19937_64 rng_;
};

}  // namespace hsns::daemon
