#include "brain/own_level.h"

#include <algorithm>
#include <cmath>

namespace hsns::brain {

std::optional<double> OwnLevel::departure(std::string_view entity, std::int64_t ts_ms, double reading) {
  if (!std::isfinite(reading)) return std::nullopt;
  const double value = sign_ * reading;  // kept so that lower is worse
  std::string key(entity);
  auto it = levels_.find(key);
  if (it == levels_.end()) {
    if (levels_.size() >= max_entities_ && !order_.empty()) {
      levels_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    levels_.emplace(std::move(key), Level{value, ts_ms});
    return 0.0;
  }
  Level& level = it->second;
  const double away = std::max(0.0, level.value - value);
  if (ts_ms <= level.ts_ms) return away;  // late or repeated: judged, but it does not move the level
  const double seconds = static_cast<double>(ts_ms - level.ts_ms) / 1000.0;
  level.ts_ms = ts_ms;
  if (value >= level.value) {
    level.value = value;
  } else {
    level.value -= (level.value - value) * std::min(1.0, seconds / settle_s_);
  }
  return away;
}

}  // namespace hsns::brain
