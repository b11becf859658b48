// hsns::PeriodicThread: a thread of its own that runs one callable (a "tick") every period until it is
// stopped: the loop of the background tasks (retention runs, change notifiers, tickers, pollers), written
// once with its stop flag, wake-up and join.
//
// Contract:
// - The constructor starts the thread. The first tick runs at once (Start::at_once) or one period later
//   (Start::after_period). The period must be positive (std::invalid_argument otherwise, no thread).
// - Pacing::after_tick: the next tick is due one period after the previous one ended, so a slow tick
//   pushes the schedule back. Pacing::from_start: due one period after the previous one was due (no drift);
//   a tick that overran the period is followed by the next one at once, never by several (none queued).
// - wake(): the next tick runs at once, or right after the running one; wakes before that tick starts are
//   one tick. The schedule then counts from that tick.
// - Ticks run only on the thread, one after the other: never concurrently with themselves. A callable that
//   takes a std::stop_token gets one that is requested as soon as a stop is asked for, to cut a long tick
//   short.
// - An exception out of a tick is caught and logged (level error, prefixed with the thread's name); the
//   thread goes on with the next tick.
// - request_stop(): no tick starts after it returns (one running goes on); it does not wait. stop():
//   request_stop(), then waits until the thread ended (a running tick finishes first), so once it returns
//   no tick runs any more. Both are idempotent and callable from any thread; stop() from a tick of the
//   same object only requests (it cannot wait for itself). The destructor stops; the object must not be
//   destroyed from its own tick.
// - Thread-safe: wake, request_stop and stop may be called concurrently.
#pragma once

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

namespace hsns {

class PeriodicThread {
 public:
  using Clock = std::chrono::steady_clock;
  using Tick = std::function<void(std::stop_token)>;

  enum class Start { at_once, after_period };
  enum class Pacing { after_tick, from_start };

  struct Options {
    Clock::duration period{};
    Start start = Start::at_once;
    Pacing pacing = Pacing::after_tick;
  };

  // name: what the log lines of a failed tick start with (e.g. "telemetry retention").
  PeriodicThread(std::string name, Options options, Tick tick);
  // A tick that takes no stop token.
  template <typename F>
  requires std::invocable<F&> PeriodicThread(std::string name, Options options, F tick)
      : PeriodicThread(std::move(name), options,
                       Tick([f = std::move(tick)](const std::stop_token&) mutable { f(); })) {}
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;
  PeriodicThread(PeriodicThread&&) = delete;
  PeriodicThread& operator=(PeriodicThread&&) = delete;

  void wake();
  void request_stop();
  void stop();

 private:
  void run();
  void run_tick();

  std::string name_;
  Options options_;
  Tick tick_;
  std::mutex mutex_;  // guards woken_ and orders a stop request before the thread's wait
  std::condition_variable cv_;
  bool woken_ = false;
  std::stop_source stop_;
  std::mutex join_mutex_;  // one caller of stop() joins, the others wait for it
  std::thread thread_;     // last: started once the members above exist
};

}  // namespace hsns
