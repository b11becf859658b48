// A series' own level (lib/brain/own_level.h): the departure from it the bad way (lower or higher), a level
// that follows a better reading at once and settles towards a worse one slowly, late readings, non-finite
// values and the bound.
#include "brain/own_level.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>

namespace hsns::brain {
namespace {

constexpr std::int64_t kPoll = 30'000;  // a switch's optics poll, in ms

TEST(OwnLevel, AFallOverMinutesStandsOutAgainstTheLevel) {
  OwnLevel level(OwnLevel::Bad::lower);
  EXPECT_EQ(level.departure("sp00/Ethernet28", 0, -1.3), 0.0);  // the first reading is the level
  for (int i = 1; i <= 20; ++i) EXPECT_NEAR(*level.departure("sp00/Ethernet28", i * kPoll, -1.3), 0.0, 1e-12);
  // 3.7 dB down over six minutes: the level moves by a few hundredths of a dB meanwhile.
  std::optional<double> fall;
  for (int i = 1; i <= 12; ++i) {
    fall = level.departure("sp00/Ethernet28", (20 + i) * kPoll, -1.3 - 3.7 * i / 12.0);
  }
  ASSERT_TRUE(fall.has_value());
  EXPECT_GT(*fall, 3.6);
  EXPECT_LE(*fall, 3.7);
}

TEST(OwnLevel, ARiseIsTheNewLevelAtOnceAndAStepDownSettlesInHours) {
  OwnLevel level(OwnLevel::Bad::lower, /*settle_s=*/3600);
  level.departure("lf003/Ethernet4", 0, -5.0);
  EXPECT_EQ(level.departure("lf003/Ethernet4", kPoll, -2.0), 0.0);  // cleaned: the light is back
  EXPECT_NEAR(*level.departure("lf003/Ethernet4", 2 * kPoll, -5.0), 3.0, 1e-12);
  // Held at the lower level for five settle times, the fall is all but gone.
  std::optional<double> fall;
  for (std::int64_t t = 3 * kPoll; t <= std::int64_t{5} * 3'600'000; t += kPoll)
    fall = level.departure("lf003/Ethernet4", t, -5.0);
  ASSERT_TRUE(fall.has_value());
  EXPECT_LT(*fall, 0.05);
}

TEST(OwnLevel, AStableMarginalModuleIsNotFalling) {
  OwnLevel level(OwnLevel::Bad::lower);
  for (int i = 0; i < 100; ++i) {
    const double reading = -9.3 + ((i % 2) != 0 ? 0.05 : -0.05);  // one step of a 0.1 dB quantisation
    EXPECT_LE(*level.departure("host0001/eth0", i * kPoll, reading), 0.1 + 1e-9);
  }
}

TEST(OwnLevel, HigherIsWorseForATemperature) {
  OwnLevel level(OwnLevel::Bad::higher);
  level.departure("sp00/Ethernet28", 0, 44.0);
  EXPECT_EQ(level.departure("sp00/Ethernet28", kPoll, 40.0), 0.0);  // cooler: the new level at once
  std::optional<double> rise;
  for (int i = 1; i <= 14; ++i) rise = level.departure("sp00/Ethernet28", (1 + i) * kPoll, 40.0 + 2.0 * i);
  ASSERT_TRUE(rise.has_value());
  EXPECT_GT(*rise, 27.5);  // 28 degrees in seven minutes; the level crept up by a few hundredths
  EXPECT_LE(*rise, 28.0);
}

TEST(OwnLevel, LateReadingsAreJudgedWithoutMovingTheLevel) {
  OwnLevel level(OwnLevel::Bad::lower, /*settle_s=*/60);
  level.departure("a/Ethernet0", 60'000, -2.0);
  EXPECT_NEAR(*level.departure("a/Ethernet0", 30'000, -8.0), 6.0, 1e-12);  // before the last reading
  EXPECT_NEAR(*level.departure("a/Ethernet0", 60'000, -8.0), 6.0, 1e-12);  // at it
  EXPECT_NEAR(*level.departure("a/Ethernet0", 61'000, -2.0), 0.0, 1e-12);  // the level did not move
}

TEST(OwnLevel, NonFiniteReadingsChangeNothing) {
  OwnLevel level(OwnLevel::Bad::lower);
  EXPECT_FALSE(level.departure("a/Ethernet0", 0, std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_EQ(level.size(), 0U);
  level.departure("a/Ethernet0", 0, -2.0);
  EXPECT_FALSE(level.departure("a/Ethernet0", kPoll, -std::numeric_limits<double>::infinity()).has_value());
  EXPECT_NEAR(*level.departure("a/Ethernet0", 2 * kPoll, -4.0), 2.0, 1e-12);
}

TEST(OwnLevel, TheCapForgetsTheOldestEntity) {
  OwnLevel level(OwnLevel::Bad::lower, 3600, /*max_entities=*/2);
  level.departure("a/1", 0, -2.0);
  level.departure("b/1", 0, -2.0);
  level.departure("c/1", 0, -2.0);  // forgets a/1
  EXPECT_EQ(level.size(), 2U);
  EXPECT_EQ(level.departure("a/1", kPoll, -6.0), 0.0);  // a/1 starts afresh: its first reading is its level
  EXPECT_NEAR(*level.departure("c/1", kPoll, -6.0), 4.0, 1e-12);
}

}  // namespace
}  // namespace hsns::brain
