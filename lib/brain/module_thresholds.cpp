#include "brain/module_thresholds.h"

#include <cmath>

namespace hsns::brain {

namespace {

// Thresholds kept for the record but not judged yet: warnings (fault prediction will read them).
bool is_other_threshold(std::string_view metric) {
  return metric == "rx_power_low_warning_dbm" || metric == "tx_power_low_warning_dbm" ||
         metric == "temperature_high_warning_celsius" || metric == "rx_power_high_alarm_dbm" ||
         metric == "temperature_low_alarm_celsius";
}

}  // namespace

bool ModuleThresholds::absorb(std::string_view entity, std::string_view metric, double value) {
  std::optional<double> Own::*member = nullptr;
  if (metric == "rx_power_low_alarm_dbm") member = &Own::rx_low_alarm;
  if (metric == "tx_power_low_alarm_dbm") member = &Own::tx_low_alarm;
  if (metric == "temperature_high_alarm_celsius") member = &Own::temp_high_alarm;
  if (member == nullptr) return is_other_threshold(metric);
  const std::string key(entity);
  auto it = by_entity_.find(key);
  if (it == by_entity_.end()) {
    if (!std::isfinite(value)) return true;
    if (by_entity_.size() >= max_entities_ && !order_.empty()) {
      by_entity_.erase(order_.front());
      order_.pop_front();
    }
    it = by_entity_.emplace(key, Own{}).first;
    order_.push_back(key);
  }
  it->second.*member = std::isfinite(value) ? std::optional(value) : std::nullopt;
  return true;
}

std::optional<MarginObservation> ModuleThresholds::margin(std::string_view entity, std::string_view metric,
                                                          double value) const {
  if (by_entity_.empty()) return std::nullopt;
  const auto it = by_entity_.find(std::string(entity));
  if (it == by_entity_.end()) return std::nullopt;
  const Own& own = it->second;
  if (metric == "rx_power_dbm" && own.rx_low_alarm)
    return MarginObservation{"rx_power_alarm_margin_db", value - *own.rx_low_alarm};
  if (metric == "tx_power_dbm" && own.tx_low_alarm)
    return MarginObservation{"tx_power_alarm_margin_db", value - *own.tx_low_alarm};
  if (metric == "temperature_celsius" && own.temp_high_alarm)
    return MarginObservation{"temperature_alarm_margin_celsius", *own.temp_high_alarm - value};
  return std::nullopt;
}

}  // namespace hsns::brain
