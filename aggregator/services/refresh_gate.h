// When a consumer of a cached model (the topology, the jobs) reads it again: at once when the store's change
// mark moved (a write of this process: store/revision.h), else at most once a period (a store that keeps no
// mark, another process's write), and always the first time and when forced. The brain engine's peer map,
// the incident service's located topology and the syslog receiver's device resolver each keep one.
//
// Contract: due(mark, now, force) answers whether to read now and, when it does, records the mark and the
// time: the caller takes the mark before it reads, so what it reads is at least as new as the mark. A mark
// that is absent (nullopt) never counts as moved. Not thread-safe: the owner's lock guards it.
#pragma once

#include <chrono>
#include <optional>

namespace hsns::services {

template <typename Mark>
class RefreshGate {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RefreshGate(Clock::duration period) : period_(period) {}

  bool due(const std::optional<Mark>& mark, Clock::time_point now, bool force = false) {
    const bool moved = mark && mark != mark_;
    if (!force && !moved && checked_ && now - *checked_ < period_) return false;
    checked_ = now;
    mark_ = mark;
    return true;
  }

 private:
  Clock::duration period_;
  std::optional<Clock::time_point> checked_;
  std::optional<Mark> mark_;
};

}  // namespace hsns::services
