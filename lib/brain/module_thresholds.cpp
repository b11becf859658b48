#include "brain/module_thresholds.h"

#include <cmath>

namespace hsns::brain {

namespace {

// Bounds recognised but not kept: nothing judges them yet.
bool is_other_threshold(std::string_view metric) {
  return metric == "tx_power_low_warning_dbm" || metric == "rx_power_high_alarm_dbm" ||
         metric == "rx_power_high_warning_dbm" || metric == "temperature_low_alarm_celsius" ||
         metric == "temperature_low_warning_celsius";
}

}  // namespace

bool ModuleThresholds::absorb(std::string_view entity, std::string_view metric, double value) {
  std::optional<double> Own::*member = nullptr;
  if (metric == "rx_power_low_alarm_dbm") member = &Own::rx_low_alarm;
  if (metric == "rx_power_low_warning_dbm") member = &Own::rx_low_warning;
  if (metric == "tx_power_low_alarm_dbm") member = &Own::tx_low_alarm;
  if (metric == "temperature_high_alarm_celsius") member = &Own::temp_high_alarm;
  if (metric == "temperature_high_warning_celsius") member = &Own::temp_high_warning;
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

bool ModuleThresholds::margins(std::string_view entity, std::string_view metric, double value,
                               std::vector<MarginObservation>& out) const {
  if (by_entity_.empty()) return false;
  const auto it = by_entity_.find(std::string(entity));
  if (it == by_entity_.end()) return false;
  const Own& own = it->second;
  if (metric == "rx_power_dbm" && own.rx_low_alarm) {
    out.push_back({"rx_power_alarm_margin_db", value - *own.rx_low_alarm});
    if (own.rx_low_warning) out.push_back({"rx_power_warning_margin_db", value - *own.rx_low_warning});
    return true;
  }
  if (metric == "tx_power_dbm" && own.tx_low_alarm) {
    out.push_back({"tx_power_alarm_margin_db", value - *own.tx_low_alarm});
    return true;
  }
  if (metric == "temperature_celsius" && own.temp_high_alarm) {
    out.push_back({"temperature_alarm_margin_celsius", *own.temp_high_alarm - value});
    if (own.temp_high_warning) {
      out.push_back({"temperature_warning_margin_celsius", *own.temp_high_warning - value});
    }
    return true;
  }
  return false;
}

}  // namespace hsns::brain
