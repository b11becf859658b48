// A module's own thresholds (lib/brain/module_thresholds.h): kept per entity, the margins of its readings,
// forgotten by a non-finite value, bounded.
#include "brain/module_thresholds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace hsns::brain {
namespace {

std::vector<MarginObservation> margins_of(const ModuleThresholds& t, const char* entity, const char* metric,
                                          double value) {
  std::vector<MarginObservation> out;
  t.margins(entity, metric, value, out);
  return out;
}

TEST(ModuleThresholds, ThresholdsAreKeptAndReadingsGetTheirMargins) {
  ModuleThresholds t;
  EXPECT_TRUE(t.absorb("leaf01/Ethernet4", "rx_power_low_alarm_dbm", -13.9));
  EXPECT_TRUE(t.absorb("leaf01/Ethernet4", "rx_power_low_warning_dbm", -9.9));
  EXPECT_TRUE(t.absorb("leaf01/Ethernet4", "temperature_high_alarm_celsius", 75));
  EXPECT_TRUE(t.absorb("leaf01/Ethernet4", "rx_power_high_alarm_dbm", 4));  // recognised, not kept
  EXPECT_FALSE(t.absorb("leaf01/Ethernet4", "rx_power_dbm", -3));           // a reading, not a bound
  EXPECT_EQ(t.size(), 1U);

  auto m = margins_of(t, "leaf01/Ethernet4", "rx_power_dbm", -11.0);
  ASSERT_EQ(m.size(), 2U);
  EXPECT_EQ(m[0].metric, "rx_power_alarm_margin_db");
  EXPECT_DOUBLE_EQ(m[0].value, -11.0 + 13.9);
  EXPECT_EQ(m[1].metric, "rx_power_warning_margin_db");
  EXPECT_DOUBLE_EQ(m[1].value, -11.0 + 9.9);
  m = margins_of(t, "leaf01/Ethernet4", "temperature_celsius", 78);
  ASSERT_EQ(m.size(), 1U);  // no warning threshold given: only the alarm's margin
  EXPECT_EQ(m[0].metric, "temperature_alarm_margin_celsius");
  EXPECT_DOUBLE_EQ(m[0].value, -3);
  // No own transmit threshold, another module, another metric: the generic bound applies.
  EXPECT_TRUE(margins_of(t, "leaf01/Ethernet4", "tx_power_dbm", -9).empty());
  EXPECT_TRUE(margins_of(t, "leaf01/Ethernet8", "rx_power_dbm", -11).empty());
  EXPECT_TRUE(margins_of(t, "leaf01/Ethernet4", "symbol_error", 3).empty());
}

TEST(ModuleThresholds, ANonFiniteValueForgetsAThresholdAndTheCapForgetsTheOldest) {
  ModuleThresholds t(2);
  t.absorb("a/1", "rx_power_low_alarm_dbm", -12);
  t.absorb("a/1", "rx_power_low_alarm_dbm", std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(margins_of(t, "a/1", "rx_power_dbm", -13).empty());
  t.absorb("a/1", "rx_power_low_alarm_dbm", -12);
  t.absorb("b/1", "rx_power_low_alarm_dbm", -12);
  t.absorb("c/1", "rx_power_low_alarm_dbm", -12);  // beyond the cap of 2: "a/1" goes
  EXPECT_EQ(t.size(), 2U);
  EXPECT_TRUE(margins_of(t, "a/1", "rx_power_dbm", -13).empty());
  EXPECT_EQ(margins_of(t, "c/1", "rx_power_dbm", -13).size(), 1U);
}

}  // namespace
}  // namespace hsns::brain
