// DetectorBank (lib/brain/bank.h): events with their series, late and duplicate samples, counters whose
// wraps and resets raise nothing, and the series cap with LRU eviction.
#include "brain/bank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace hsns::brain {
namespace {

// One metric per detector, as a configuration file would set them up.
BrainConfig test_config() {
  BrainConfig b = default_brain_config();
  DetectorConfig all;
  all.type = SeriesType::counter;
  all.baseline.enabled = true;
  all.rate.enabled = true;
  all.rate.max_per_s = 1e6;
  all.level_shift.enabled = true;
  all.burst.enabled = true;
  all.burst.rate_per_s = 1e6;
  all.threshold = {
      .enabled = true, .direction = ThresholdConfig::Direction::above, .bound = 1e6, .bound_given = true};
  b.metrics["all_on_counter"] = all;
  return b;
}

TEST(DetectorBank, ALowReceivePowerRaisesOnceAndClearsWithItsSeries) {
  DetectorBank bank(test_config());
  std::vector<AnomalyEvent> events;
  std::int64_t t = 1'700'000'000'000;
  for (int i = 0; i < 100; ++i, t += 10'000)
    bank.observe({"host0001/mlx5_0/1", "rx_power_dbm", t, -3.0}, events);
  ASSERT_TRUE(events.empty());
  const std::int64_t low_since = t;
  for (int i = 0; i < 4; ++i, t += 10'000)
    bank.observe({"host0001/mlx5_0/1", "rx_power_dbm", t, -12.0}, events);
  // Deviation raises at once (a step of 9 dB on a flat series); the threshold after 30 s.
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, AnomalyKind::deviation);
  EXPECT_EQ(events[1].kind, AnomalyKind::threshold);
  EXPECT_EQ(events[1].state, EventState::raised);
  EXPECT_EQ(events[1].entity, "host0001/mlx5_0/1");
  EXPECT_EQ(events[1].metric, "rx_power_dbm");
  EXPECT_EQ(events[1].started_ms, low_since);
  EXPECT_DOUBLE_EQ(events[1].value, -12.0);
  EXPECT_DOUBLE_EQ(events[1].baseline, -10.0);
  EXPECT_EQ(events[1].detail, "-12 below -10 for 30 s (at least 30 s)");
  events.clear();
  bank.observe({"host0001/mlx5_0/1", "rx_power_dbm", t, -3.0}, events);
  bool threshold_cleared = false;
  for (const auto& e : events) {
    if (e.kind == AnomalyKind::threshold) {
      threshold_cleared = e.state == EventState::cleared && e.started_ms == low_since && e.ended_ms == t;
    }
  }
  EXPECT_TRUE(threshold_cleared);
  EXPECT_EQ(bank.stats().raised, 2U);
}

TEST(DetectorBank, LateAndDuplicateSamplesAreCountedAndIgnored) {
  DetectorBank bank(test_config());
  std::vector<AnomalyEvent> events;
  bank.observe({"h/p", "symbol_error", 10'000, 5}, events);
  bank.observe({"h/p", "symbol_error", 20'000, 6}, events);
  bank.observe({"h/p", "symbol_error", 20'000, 1e12}, events);  // duplicate time, any value
  bank.observe({"h/p", "symbol_error", 5'000, 0}, events);      // late: would be a reset if taken
  bank.observe({"h/p", "symbol_error", std::numeric_limits<std::int64_t>::min(), 0}, events);
  bank.observe({"h/p", "symbol_error", 30'000, std::nan("")}, events);
  bank.observe({"h/p", "symbol_error", 30'000, std::numeric_limits<double>::infinity()}, events);
  bank.observe({"h/p", "no_such_metric", 30'000, 1}, events);
  bank.observe({std::string_view("h\0p", 3), "symbol_error", 30'000, 1}, events);
  bank.observe({"h/p", "symbol_error", 30'000, 7}, events);
  EXPECT_TRUE(events.empty());
  const BankStats& s = bank.stats();
  EXPECT_EQ(s.samples, 10U);
  EXPECT_EQ(s.accepted, 3U);
  EXPECT_EQ(s.duplicate, 1U);
  EXPECT_EQ(s.late, 2U);
  EXPECT_EQ(s.invalid, 3U);
  EXPECT_EQ(s.untracked, 1U);
  EXPECT_EQ(s.counter_resets, 0U);
  EXPECT_FALSE(bank.has_series("h/p", "no_such_metric"));
}

TEST(DetectorBank, CounterWrapsAndResetsRaiseNothingWithEveryDetectorOn) {
  DetectorBank bank(test_config());
  std::vector<AnomalyEvent> events;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  double counter = 4294967296.0 - 5e7;  // a 32-bit counter near its top
  std::int64_t t = 0;
  for (int i = 0; i < 2000; ++i, t += 1000) {
    counter += 1e5 * jitter(rng);
    if (counter >= 4294967296.0) counter -= 4294967296.0;  // wraps about every 43,000 s
    if (i == 1000) counter = 0;                            // the driver was reloaded
    bank.observe({"h/p", "all_on_counter", t, counter}, events);
  }
  EXPECT_TRUE(events.empty()) << to_string(events.front().kind) << ": " << events.front().detail;
  EXPECT_GE(bank.stats().counter_wraps, 1U);
  EXPECT_EQ(bank.stats().counter_resets, 1U);
}

TEST(DetectorBank, AnErrorBurstOnOneOfManyPortsNamesThatPort) {
  DetectorBank bank(test_config());
  std::vector<AnomalyEvent> events;
  std::vector<double> errors(8, 0);
  for (std::int64_t t = 0; t < 3'600'000; t += 10'000) {
    for (int port = 0; port < 8; ++port) {
      if (port == 3 && t >= 1'800'000 && t < 1'860'000) errors[port] += 500;
      bank.observe({"host7/mlx5_" + std::to_string(port) + "/1", "symbol_error", t, errors[port]}, events);
    }
  }
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].entity, "host7/mlx5_3/1");
  EXPECT_EQ(events[0].kind, AnomalyKind::burst);
  EXPECT_EQ(events[0].state, EventState::raised);
  EXPECT_EQ(events[0].started_ms, 1'800'000);
  EXPECT_EQ(events[1].state, EventState::cleared);
  EXPECT_GT(events[1].ended_ms, 1'860'000);
  EXPECT_EQ(bank.active_anomalies(), 0U);
}

TEST(DetectorBank, TheSeriesCapEvictsTheLeastRecentlyUpdated) {
  DetectorBank bank(test_config(), {.max_series = 3});
  std::vector<AnomalyEvent> events;
  bank.observe({"a", "rx_power_dbm", 1000, -3}, events);
  bank.observe({"b", "rx_power_dbm", 1000, -3}, events);
  bank.observe({"c", "rx_power_dbm", 1000, -3}, events);
  bank.observe({"a", "rx_power_dbm", 2000, -3}, events);  // a is now the most recent
  bank.observe({"d", "rx_power_dbm", 1000, -3}, events);  // evicts b
  EXPECT_EQ(bank.series_count(), 3U);
  EXPECT_EQ(bank.stats().evicted, 1U);
  EXPECT_TRUE(bank.has_series("a", "rx_power_dbm"));
  EXPECT_FALSE(bank.has_series("b", "rx_power_dbm"));
  EXPECT_TRUE(bank.has_series("c", "rx_power_dbm"));
  // b comes back as a new series: its old timestamp is no longer known, so 500 is not late.
  bank.observe({"b", "rx_power_dbm", 500, -3}, events);
  EXPECT_EQ(bank.stats().late, 0U);
  EXPECT_EQ(bank.stats().evicted, 2U);
  EXPECT_FALSE(bank.has_series("c", "rx_power_dbm"));
  EXPECT_TRUE(events.empty());
}

TEST(DetectorBank, EvictingASeriesWithARaisedAnomalyReportsItCleared) {
  DetectorBank bank(test_config(), {.max_series = 1});
  std::vector<AnomalyEvent> events;
  bank.observe({"a", "temperature_celsius", 0, 90}, events);
  bank.observe({"a", "temperature_celsius", 60'000, 91}, events);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].state, EventState::raised);
  bank.observe({"b", "temperature_celsius", 60'000, 40}, events);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[1].entity, "a");
  EXPECT_EQ(events[1].state, EventState::cleared);
  EXPECT_EQ(events[1].detail, "series evicted");
  EXPECT_EQ(events[1].started_ms, 0);
  EXPECT_EQ(events[1].ended_ms, 60'000);
  EXPECT_EQ(bank.active_anomalies(), 0U);
}

TEST(DetectorBank, AnOverrideAppliesToMatchingEntitiesOnly) {
  BrainConfig config = default_brain_config();
  EntityOverride o{"spine*/*", "temperature_celsius", config.metrics["temperature_celsius"]};
  o.config.threshold.bound = 95;
  config.overrides.push_back(o);
  DetectorBank bank(std::move(config));
  std::vector<AnomalyEvent> events;
  for (std::int64_t t = 0; t <= 60'000; t += 10'000) {
    bank.observe({"spine01/asic0", "temperature_celsius", t, 85}, events);
    bank.observe({"leaf01/asic0", "temperature_celsius", t, 85}, events);
  }
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].entity, "leaf01/asic0");
}

}  // namespace
}  // namespace hsns::brain
