#include "http/auth_throttle.h"

#include <algorithm>
#include <cmath>

namespace hsns::http {

void AuthThrottle::refill(Bucket& b, Clock::time_point now) const {
  const auto elapsed = std::chrono::duration<double, std::milli>(now - b.at).count();
  b.attempts = std::min(static_cast<double>(limits_.burst),
                        b.attempts + elapsed / static_cast<double>(limits_.refill.count()));
  b.at = now;
}

std::chrono::milliseconds AuthThrottle::wait(std::string_view address, Clock::time_point now) {
  if (address.empty()) return std::chrono::milliseconds(0);
  const std::lock_guard lock(mu_);
  const auto it = buckets_.find(address);
  if (it == buckets_.end()) return std::chrono::milliseconds(0);
  refill(it->second, now);
  if (it->second.attempts >= 1) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(
      std::ceil((1 - it->second.attempts) * static_cast<double>(limits_.refill.count()))));
}

void AuthThrottle::failed(std::string_view address, Clock::time_point now) {
  if (address.empty()) return;
  const std::lock_guard lock(mu_);
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    if (buckets_.size() >= limits_.max_addresses && !touched_.empty()) {
      buckets_.erase(touched_.front());
      touched_.pop_front();
    }
    it = buckets_.emplace(std::string(address), Bucket{static_cast<double>(limits_.burst), now, {}}).first;
    it->second.touched = touched_.insert(touched_.end(), it->first);
  } else {
    touched_.splice(touched_.end(), touched_, it->second.touched);
  }
  refill(it->second, now);
  it->second.attempts = std::max(0.0, it->second.attempts - 1);
}

}  // namespace hsns::http
