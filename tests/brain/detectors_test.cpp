// Each detector of lib/brain/detectors.h on synthetic series with known answers: steps, ramps, spikes,
// long runs of seeded noise with no false alarm, counter wraps and resets.
#include "brain/detectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace hsns::brain {
namespace {

constexpr std::int64_t kStepMs = 10'000;  // one sample every 10 s, as the daemon's counter readers poll

BaselineConfig baseline_config(std::uint32_t window = 64) {
  BaselineConfig c;
  c.enabled = true;
  c.window = window;
  return c;
}

LevelShiftConfig level_shift_config() {
  LevelShiftConfig c;
  c.enabled = true;
  return c;
}

TEST(RobustBaseline, MedianAndMadAreExactOverTheWindow) {
  RobustBaseline b(baseline_config(5));
  for (double x : {100.0, 1.0, 4.0, 3.0, 2.0}) b.observe(x);
  EXPECT_DOUBLE_EQ(b.median(), 3.0);
  // Deviations 97, 2, 1, 0, 1: their median is 1.
  EXPECT_DOUBLE_EQ(b.spread(), 1.4826);
  // 100 leaves the window, 6 enters: {1, 4, 3, 2, 6}, median 3, deviations 2, 1, 0, 1, 3.
  b.observe(6.0);
  EXPECT_DOUBLE_EQ(b.median(), 3.0);
  EXPECT_DOUBLE_EQ(b.spread(), 1.4826);
}

TEST(RobustBaseline, MatchesABruteForceMedianAndMadOnRandomData) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> pick(-20, 20);  // many equal values exercise the removal path
  for (std::uint32_t window : {3U, 4U, 8U, 33U}) {
    RobustBaseline b(baseline_config(window));
    std::vector<double> history;
    for (int i = 0; i < 2000; ++i) {
      const double x = pick(rng);
      history.push_back(x);
      b.observe(x);
      if (history.size() < window) continue;
      std::vector<double> w(history.end() - window, history.end());
      std::sort(w.begin(), w.end());
      const auto median_of = [](const std::vector<double>& v) {
        const std::size_t n = v.size();
        return n % 2 == 1 ? v[n / 2] : 0.5 * v[n / 2 - 1] + 0.5 * v[n / 2];
      };
      const double median = median_of(w);
      std::vector<double> deviations;
      deviations.reserve(w.size());
      for (double v : w) deviations.push_back(std::fabs(v - median));
      std::sort(deviations.begin(), deviations.end());
      ASSERT_DOUBLE_EQ(b.median(), median) << "window " << window << " sample " << i;
      ASSERT_DOUBLE_EQ(b.spread(), std::max(1.4826 * median_of(deviations), 1e-9))
          << "window " << window << " sample " << i;
    }
  }
}

TEST(RobustBaseline, RaisesOnASpikeAndClearsOnTheNextNormalSample) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(100, 1);
  RobustBaseline b(baseline_config());
  for (int i = 0; i < 500; ++i) ASSERT_EQ(b.observe(noise(rng)).change, Change::none);
  const Reading spike = b.observe(150);
  EXPECT_EQ(spike.change, Change::raised);
  EXPECT_NEAR(spike.baseline, 100, 0.5);
  EXPECT_GT(spike.score, 30);
  EXPECT_EQ(b.observe(100).change, Change::cleared);
}

TEST(RobustBaseline, AStepRaisesOnceAndClearsWhenTheMedianHasMoved) {
  std::mt19937_64 rng(12);
  std::normal_distribution<double> noise(0, 1);
  RobustBaseline b(baseline_config());
  for (int i = 0; i < 200; ++i) b.observe(noise(rng));
  int raised_at = -1;
  int cleared_at = -1;
  for (int i = 0; i < 200; ++i) {
    const Change c = b.observe(20 + noise(rng)).change;
    if (c == Change::raised) raised_at = raised_at < 0 ? i : raised_at;
    if (c == Change::cleared) cleared_at = cleared_at < 0 ? i : cleared_at;
  }
  EXPECT_EQ(raised_at, 0);
  // The median crosses to the new level once half the window (32 samples) holds it.
  EXPECT_GT(cleared_at, 20);
  EXPECT_LE(cleared_at, 40);
  EXPECT_FALSE(b.active());
}

TEST(RobustBaseline, ASlowRampWithNoiseDoesNotRaise) {
  std::mt19937_64 rng(13);
  std::normal_distribution<double> noise(0, 1);
  RobustBaseline b(baseline_config());
  for (int i = 0; i < 20'000; ++i) {
    ASSERT_EQ(b.observe(0.01 * i + noise(rng)).change, Change::none) << "sample " << i;
  }
}

TEST(RobustBaseline, NoFalseAlarmOverAMillionNoiseSamples) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(-3, 0.2);
  RobustBaseline b(baseline_config());
  int raised = 0;
  for (int i = 0; i < 1'000'000; ++i) raised += b.observe(noise(rng)).change == Change::raised;
  EXPECT_EQ(raised, 0);
}

TEST(CounterRate, PerSecondRateFromDeltas) {
  CounterRate r(0);
  EXPECT_EQ(r.observe(0, 1000).kind, CounterStep::Kind::first);
  const CounterStep s = r.observe(2000, 5000);
  EXPECT_EQ(s.kind, CounterStep::Kind::normal);
  EXPECT_DOUBLE_EQ(s.delta, 4000);
  EXPECT_DOUBLE_EQ(s.rate, 2000);
}

TEST(CounterRate, A32BitWrapCountsTheIncrementsAcrossIt) {
  CounterRate r(0);
  r.observe(0, 4294967000.0);
  const CounterStep s = r.observe(1000, 200);
  EXPECT_EQ(s.kind, CounterStep::Kind::wrap);
  EXPECT_DOUBLE_EQ(s.delta, 296 + 200);
  EXPECT_DOUBLE_EQ(s.rate, 496);
}

TEST(CounterRate, A64BitWrapCountsTheIncrementsAcrossIt) {
  CounterRate r(0);
  r.observe(0, 18446744073709551616.0 - 1048576.0);  // 2^64 - 2^20, exact in a double
  const CounterStep s = r.observe(1000, 4096);
  EXPECT_EQ(s.kind, CounterStep::Kind::wrap);
  EXPECT_DOUBLE_EQ(s.delta, 1048576.0 + 4096);
}

TEST(CounterRate, ADropThatIsNoWrapIsAReset) {
  CounterRate r(0);
  r.observe(0, 5000);
  EXPECT_EQ(r.observe(1000, 10).kind, CounterStep::Kind::reset);
  const CounterStep after = r.observe(2000, 110);
  EXPECT_EQ(after.kind, CounterStep::Kind::normal);
  EXPECT_DOUBLE_EQ(after.rate, 100);
  // A 64-bit counter well below 2^63 that drops was reset, even from the top half of 32 bits.
  CounterRate wide(64);
  wide.observe(0, 4e9);
  EXPECT_EQ(wide.observe(1000, 5).kind, CounterStep::Kind::reset);
  // A declared 32-bit counter never wraps at 64 bits.
  CounterRate narrow(32);
  narrow.observe(0, 1e12);
  EXPECT_EQ(narrow.observe(1000, 5).kind, CounterStep::Kind::reset);
}

TEST(RateOfChange, RaisesWhileARampIsTooSteepAndClearsWhenItFlattens) {
  RateConfig c;
  c.enabled = true;
  c.max_per_s = 1;
  c.clear_per_s = 0.5;
  RateOfChange r(c);
  EXPECT_EQ(r.observe(0.9).change, Change::none);
  EXPECT_EQ(r.observe(-2).change, Change::raised);  // falling counts as much as rising
  EXPECT_EQ(r.observe(0.8).change, Change::none);   // hysteresis: still above clear_per_s
  EXPECT_EQ(r.observe(0.2).change, Change::cleared);
}

TEST(LevelShift, AStepRaisesWithinTheWindowAndClearsOnceBothWindowsHoldTheNewLevel) {
  std::mt19937_64 rng(21);
  std::normal_distribution<double> noise(0, 1);
  LevelShift l(level_shift_config());
  for (int i = 0; i < 300; ++i) ASSERT_EQ(l.observe(noise(rng)).change, Change::none);
  int raised_at = -1;
  int cleared_at = -1;
  for (int i = 0; i < 100; ++i) {
    const Reading r = l.observe(5 + noise(rng));
    if (r.change == Change::raised && raised_at < 0) raised_at = i;
    if (r.change == Change::cleared && cleared_at < 0) cleared_at = i;
  }
  ASSERT_GE(raised_at, 0);
  EXPECT_LT(raised_at, 16);
  EXPECT_GT(cleared_at, raised_at);
  EXPECT_LT(cleared_at, 32);
  EXPECT_NEAR(l.recent_mean(), 5, 1);
}

TEST(LevelShift, ASpikeIsNoLevelShift) {
  std::mt19937_64 rng(22);
  std::normal_distribution<double> noise(0, 1);
  LevelShift l(level_shift_config());
  for (int i = 0; i < 300; ++i) l.observe(noise(rng));
  EXPECT_EQ(l.observe(100).change, Change::none);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(l.observe(noise(rng)).change, Change::none);
}

TEST(LevelShift, NoFalseAlarmOverAMillionNoiseSamples) {
  std::mt19937_64 rng(43);
  std::normal_distribution<double> noise(1e9, 1e6);
  LevelShift l(level_shift_config());
  int raised = 0;
  for (int i = 0; i < 1'000'000; ++i) raised += l.observe(noise(rng)).change == Change::raised;
  EXPECT_EQ(raised, 0);
}

TEST(LevelShift, MinShiftIgnoresTinyShiftsOfQuietSeries) {
  LevelShiftConfig c = level_shift_config();
  c.min_shift = 1;
  LevelShift l(c);
  for (int i = 0; i < 64; ++i) l.observe(10);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(l.observe(10.5).change, Change::none);
}

TEST(CounterBurst, RaisesOnABurstOfErrorsAndClearsWhenTheWindowEmpties) {
  BurstConfig c;
  c.enabled = true;
  c.window_s = 60;
  c.rate_per_s = 1;
  c.min_count = 10;
  CounterBurst b(c);
  std::int64_t t = 0;
  // Background: one error a minute, well under 1/s.
  for (int i = 0; i < 60; ++i, t += kStepMs) ASSERT_EQ(b.observe(t, i % 6 == 0 ? 1 : 0).change, Change::none);
  // 100 errors per 10 s poll: 10/s.
  int raised_at = -1;
  for (int i = 0; i < 6; ++i, t += kStepMs) {
    if (b.observe(t, 100).change == Change::raised && raised_at < 0) raised_at = i;
  }
  EXPECT_EQ(raised_at, 0);  // the first poll already holds 100 increments: 100 / 60 s > 1/s
  int cleared_at = -1;
  for (int i = 0; i < 12; ++i, t += kStepMs) {
    if (b.observe(t, 0).change == Change::cleared && cleared_at < 0) cleared_at = i;
  }
  EXPECT_GE(cleared_at, 4);  // the burst leaves the 60 s window bucket by bucket
  EXPECT_LE(cleared_at, 7);
}

TEST(CounterBurst, MinCountKeepsASingleIncrementQuiet) {
  BurstConfig c;
  c.enabled = true;
  c.window_s = 1;  // 1 increment in 1 s is above 0.5/s, but below min_count
  c.rate_per_s = 0.5;
  c.min_count = 5;
  CounterBurst b(c);
  EXPECT_EQ(b.observe(0, 1).change, Change::none);
  EXPECT_EQ(b.observe(100, 4).change, Change::raised);
}

ThresholdConfig rx_power_low() {
  ThresholdConfig c;
  c.enabled = true;
  c.direction = ThresholdConfig::Direction::below;
  c.bound = -10;
  c.bound_given = true;
  c.for_s = 30;
  c.hysteresis = 0.5;
  return c;
}

TEST(ThresholdDuration, RaisesOnlyAfterTheDurationAndNamesWhenItStarted) {
  ThresholdDuration d(rx_power_low());
  EXPECT_EQ(d.observe(0, -9).change, Change::none);
  EXPECT_EQ(d.observe(5'000, -11).change, Change::none);
  EXPECT_EQ(d.observe(20'000, -12).change, Change::none);
  EXPECT_EQ(d.observe(34'999, -11).change, Change::none);
  const Reading r = d.observe(35'000, -11);
  EXPECT_EQ(r.change, Change::raised);
  EXPECT_EQ(d.beyond_since_ms(), 5'000);
  EXPECT_DOUBLE_EQ(r.baseline, -10);
}

TEST(ThresholdDuration, AnInterruptedRunStartsAgain) {
  ThresholdDuration d(rx_power_low());
  d.observe(0, -11);
  d.observe(20'000, -9);  // back above the bound: the run ends
  EXPECT_EQ(d.observe(40'000, -11).change, Change::none);
  EXPECT_EQ(d.observe(60'000, -11).change, Change::none);
  EXPECT_EQ(d.observe(70'000, -11).change, Change::raised);
}

TEST(ThresholdDuration, ClearsOnlyOutsideTheHysteresisBand) {
  ThresholdDuration d(rx_power_low());
  d.observe(0, -11);
  ASSERT_EQ(d.observe(30'000, -11).change, Change::raised);
  EXPECT_EQ(d.observe(40'000, -9.8).change, Change::none);  // above the bound, inside the band
  EXPECT_EQ(d.observe(50'000, -10.2).change, Change::none);
  EXPECT_EQ(d.observe(60'000, -9.4).change, Change::cleared);
}

}  // namespace
}  // namespace hsns::brain
