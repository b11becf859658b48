// An optical module's own alarm thresholds, as read from its EEPROM (SFF-8636 page 03h, CMIS page 02h),
// judging its readings instead of the shipped library's generic bounds.
//
// Contract:
// - absorb(entity, metric, value) takes a threshold sample (kThresholdMetrics: rx_power_low_alarm_dbm,
//   rx_power_low_warning_dbm, tx_power_low_alarm_dbm, temperature_high_alarm_celsius,
//   temperature_high_warning_celsius) and answers true; the other bounds (high receive power, low
//   temperature, low transmit warning) are recognised (true) but not kept; any other metric is not a
//   threshold: false. A non-finite value forgets that threshold of the entity.
// - margins(entity, metric, value, out) appends, for a reading of a module that has the matching
//   thresholds, the observations the patterns judge instead of the raw reading: its distance to the
//   module's own alarm and warning thresholds, positive inside, negative beyond (rx_power_dbm ->
//   rx_power_alarm_margin_db = reading - low alarm, rx_power_warning_margin_db; tx_power_dbm ->
//   tx_power_alarm_margin_db; temperature_celsius -> temperature_alarm_margin_celsius = high alarm -
//   reading, temperature_warning_margin_celsius). Answers false (nothing appended) when the module has no
//   own alarm threshold for that reading: the library's generic bound applies.
// - Bounded: at most max_entities modules (a new one beyond the cap forgets the oldest-inserted).
// Pure; not thread-safe (the brain engine's thread owns it).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hsns::brain {

struct MarginObservation {
  std::string_view metric;
  double value = 0;
};

class ModuleThresholds {
 public:
  explicit ModuleThresholds(std::size_t max_entities = 200'000) : max_entities_(max_entities) {}

  bool absorb(std::string_view entity, std::string_view metric, double value);
  bool margins(std::string_view entity, std::string_view metric, double value,
               std::vector<MarginObservation>& out) const;
  std::size_t size() const { return by_entity_.size(); }

 private:
  struct Own {
    std::optional<double> rx_low_alarm;
    std::optional<double> rx_low_warning;
    std::optional<double> tx_low_alarm;
    std::optional<double> temp_high_alarm;
    std::optional<double> temp_high_warning;
  };
  std::size_t max_entities_;
  std::unordered_map<std::string, Own> by_entity_;
  std::deque<std::string> order_;  // insertion order, for the cap
};

}  // namespace hsns::brain
