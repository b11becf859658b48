// An optical module's own alarm thresholds, as read from its EEPROM (SFF-8636 page 03h, CMIS page 02h),
// judging its readings instead of the shipped library's generic bounds.
//
// Contract:
// - absorb(entity, metric, value) takes a threshold sample (kThresholdMetrics: rx_power_low_alarm_dbm,
//   tx_power_low_alarm_dbm, temperature_high_alarm_celsius) and answers true; the warning thresholds and
//   the other alarm bounds are recognised (true) but not kept yet; any other metric is not a threshold:
//   false. A non-finite value forgets that threshold of the entity.
// - margin(entity, metric, value) answers, for a reading of a module that has the matching threshold, the
//   observation the patterns judge instead of the raw reading: its distance to the module's own alarm
//   threshold, positive inside, negative beyond it (rx_power_dbm -> rx_power_alarm_margin_db = reading -
//   low alarm; tx_power_dbm -> tx_power_alarm_margin_db; temperature_celsius ->
//   temperature_alarm_margin_celsius = high alarm - reading). nullopt: no own threshold known, the
//   generic bound applies.
// - Bounded: at most max_entities modules (a new one beyond the cap forgets the oldest-inserted).
// Pure; not thread-safe (the brain engine's thread owns it).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hsns::brain {

struct MarginObservation {
  std::string_view metric;
  double value = 0;
};

class ModuleThresholds {
 public:
  explicit ModuleThresholds(std::size_t max_entities = 200'000) : max_entities_(max_entities) {}

  bool absorb(std::string_view entity, std::string_view metric, double value);
  std::optional<MarginObservation> margin(std::string_view entity, std::string_view metric,
                                          double value) const;
  std::size_t size() const { return by_entity_.size(); }

 private:
  struct Own {
    std::optional<double> rx_low_alarm;
    std::optional<double> tx_low_alarm;
    std::optional<double> temp_high_alarm;
  };
  std::size_t max_entities_;
  std::unordered_map<std::string, Own> by_entity_;
  std::deque<std::string> order_;  // insertion order, for the cap
};

}  // namespace hsns::brain
