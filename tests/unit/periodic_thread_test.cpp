// hsns::PeriodicThread (include/hsns/periodic_thread.h): ticks, wake, stop while idle and while ticking,
// the stop token, exceptions out of a tick. Correctness only: every wait has a bound of seconds, far above
// what the behaviour needs, so a loaded machine does not fail the tests.
#include "hsns/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/stderr_capture.h"

namespace {

using hsns::PeriodicThread;
using namespace std::chrono_literals;

constexpr auto kBound = 20s;  // "eventually": far beyond any expected delay
constexpr auto kLong = 1h;    // a period no test waits for

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// The count reaches n and stays there a while: no further tick comes.
void expect_settles_at(const std::atomic<int>& ticks, int n) {
  EXPECT_TRUE(eventually([&] { return ticks.load() == n; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ticks.load(), n);
}

PeriodicThread::Options every(PeriodicThread::Clock::duration period,
                              PeriodicThread::Start start = PeriodicThread::Start::at_once) {
  return {.period = period, .start = start};
}

TEST(PeriodicThread, TicksEveryPeriod) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(5ms), [&] { ++ticks; });
  EXPECT_TRUE(eventually([&] { return ticks.load() >= 3; }));
}

TEST(PeriodicThread, FirstTickAtOnceOrAfterThePeriod) {
  std::atomic<int> at_once{0};
  std::atomic<int> after{0};
  PeriodicThread a("at once", every(kLong), [&] { ++at_once; });
  PeriodicThread b("after", every(kLong, PeriodicThread::Start::after_period), [&] { ++after; });
  expect_settles_at(at_once, 1);  // the next is an hour away
  EXPECT_EQ(after.load(), 0);
}

TEST(PeriodicThread, WakeRunsATickEarly) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(kLong, PeriodicThread::Start::after_period), [&] { ++ticks; });
  thread.wake();
  EXPECT_TRUE(eventually([&] { return ticks.load() == 1; }));
  thread.wake();
  EXPECT_TRUE(eventually([&] { return ticks.load() == 2; }));
}

TEST(PeriodicThread, WakesDuringATickAreOneMoreTick) {
  std::atomic<int> ticks{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> in_first{false};
  PeriodicThread thread("test", every(kLong), [&] {
    if (ticks.load() == 0) {
      in_first = true;
      released.wait();
    }
    ++ticks;
  });
  ASSERT_TRUE(eventually([&] { return in_first.load(); }));
  thread.wake();
  thread.wake();
  thread.wake();
  release.set_value();
  expect_settles_at(ticks, 2);
}

TEST(PeriodicThread, StopIsPromptWithALongPeriod) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(kLong), [&] { ++ticks; });
  ASSERT_TRUE(eventually([&] { return ticks.load() == 1; }));
  const auto started = std::chrono::steady_clock::now();
  thread.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, kBound);
  EXPECT_EQ(ticks.load(), 1);
}

TEST(PeriodicThread, StopFromAnotherThreadWaitsForTheRunningTick) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> in_tick{false};
  std::atomic<bool> tick_done{false};
  PeriodicThread thread("test", every(kLong), [&] {
    in_tick = true;
    released.wait();
    tick_done = true;
  });
  ASSERT_TRUE(eventually([&] { return in_tick.load(); }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    thread.stop();
    stopped = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(stopped.load());  // the tick is still running
  release.set_value();
  stopper.join();
  EXPECT_TRUE(stopped.load());
  EXPECT_TRUE(tick_done.load());
}

TEST(PeriodicThread, StopTokenCutsALongTickShort) {
  std::atomic<bool> in_tick{false};
  std::atomic<bool> saw_stop{false};
  PeriodicThread thread("test", every(kLong), [&](const std::stop_token& token) {
    in_tick = true;
    saw_stop = eventually([&] { return token.stop_requested(); });
  });
  ASSERT_TRUE(eventually([&] { return in_tick.load(); }));
  thread.stop();
  EXPECT_TRUE(saw_stop.load());
}

TEST(PeriodicThread, NoTickAfterStopReturns) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(1ms), [&] { ++ticks; });
  ASSERT_TRUE(eventually([&] { return ticks.load() >= 3; }));
  thread.stop();
  const int after_stop = ticks.load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ticks.load(), after_stop);
  thread.wake();  // no effect once stopped
  thread.stop();  // idempotent
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), after_stop);
}

TEST(PeriodicThread, RequestStopDoesNotWaitAndNoTickStartsAfterIt) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(1ms), [&] {
    ++ticks;
    released.wait();
  });
  ASSERT_TRUE(eventually([&] { return ticks.load() == 1; }));
  thread.request_stop();  // returns while the tick is blocked
  release.set_value();
  thread.stop();
  EXPECT_EQ(ticks.load(), 1);
}

TEST(PeriodicThread, ConcurrentStopsAllReturnAfterTheThreadEnded) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", every(1ms), [&] {
    ++ticks;
    std::this_thread::sleep_for(2ms);
  });
  ASSERT_TRUE(eventually([&] { return ticks.load() >= 1; }));
  std::vector<int> seen(4, -1);
  std::vector<std::thread> stoppers;
  stoppers.reserve(seen.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    stoppers.emplace_back([&, i] {
      thread.stop();
      seen[i] = ticks.load();
    });
  }
  for (auto& s : stoppers) s.join();
  std::this_thread::sleep_for(20ms);
  for (const int n : seen) EXPECT_EQ(n, ticks.load());
}

TEST(PeriodicThread, StopFromItsOwnTickEndsTheThread) {
  std::atomic<int> ticks{0};
  PeriodicThread* self = nullptr;
  std::promise<void> constructed;
  std::shared_future<void> ready = constructed.get_future().share();
  PeriodicThread thread("test", every(1ms), [&] {
    ready.wait();
    ++ticks;
    self->stop();  // only requests: does not wait for itself
  });
  self = &thread;
  constructed.set_value();
  expect_settles_at(ticks, 1);
}

TEST(PeriodicThread, PacingFromStartRunsAnOverrunTickAgainAtOnce) {
  std::atomic<int> ticks{0};
  PeriodicThread thread("test", {.period = 1ms, .pacing = PeriodicThread::Pacing::from_start}, [&] {
    ++ticks;
    std::this_thread::sleep_for(3ms);  // overruns the period every time
  });
  EXPECT_TRUE(eventually([&] { return ticks.load() >= 5; }));
}

TEST(PeriodicThread, APeriodMustBePositive) {
  EXPECT_THROW(PeriodicThread("test", every(0ms), [] {}), std::invalid_argument);
  EXPECT_THROW(PeriodicThread("test", every(-1ms), [] {}), std::invalid_argument);
}

TEST(PeriodicThread, AnExceptionIsLoggedAndTheThreadGoesOn) {
  const hsns::testing::StderrCapture capture("periodic-thread-exception");
  std::atomic<int> ticks{0};
  {
    PeriodicThread thread("flaky task", every(1ms), [&] {
      const int n = ++ticks;
      if (n == 1) throw std::runtime_error("the store is gone");
      if (n == 2) throw 42;
    });
    EXPECT_TRUE(eventually([&] { return ticks.load() >= 4; }));
  }
  const std::string log = capture.output();
  EXPECT_NE(log.find("flaky task: the store is gone"), std::string::npos) << log;
  EXPECT_NE(log.find("flaky task: a tick failed"), std::string::npos) << log;
}

}  // namespace
