#include "hsns/periodic_thread.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "hsns/log.h"

namespace hsns {
namespace {

// The object whose tick this thread runs: stop() from inside a tick must not join its own thread. A
// thread_local rather than a comparison with thread_.get_id(), which the constructor may still be writing
// when the first tick calls stop().
thread_local const PeriodicThread* running_on_this_thread = nullptr;

}  // namespace

PeriodicThread::PeriodicThread(std::string name, Options options, Tick tick)
    : name_(std::move(name)), options_(options), tick_(std::move(tick)) {
  if (options_.period <= Clock::duration::zero())
    throw std::invalid_argument(name_ + ": the period must be positive");
  thread_ = std::thread([this] { run(); });
}

PeriodicThread::~PeriodicThread() {
  stop();
}

void PeriodicThread::wake() {
  {
    const std::lock_guard lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

void PeriodicThread::request_stop() {
  {
    // Under the mutex: the thread tests the request and then waits atomically, so it cannot miss it.
    const std::lock_guard lock(mutex_);
    stop_.request_stop();
  }
  cv_.notify_all();
}

void PeriodicThread::stop() {
  request_stop();
  if (running_on_this_thread == this) return;  // the thread ends after this tick
  const std::lock_guard lock(join_mutex_);
  if (thread_.joinable()) thread_.join();
}

void PeriodicThread::run() {
  running_on_this_thread = this;
  std::unique_lock lock(mutex_);
  auto due = Clock::now();
  if (options_.start == Start::after_period) due += options_.period;
  for (;;) {
    cv_.wait_until(lock, due, [this] { return stop_.stop_requested() || woken_; });
    if (stop_.stop_requested()) break;
    if (woken_) due = std::min(due, Clock::now());  // the schedule counts from the woken tick
    woken_ = false;
    lock.unlock();
    run_tick();
    const auto ended = Clock::now();
    due = options_.pacing == Pacing::after_tick ? ended + options_.period
                                                : std::max(due + options_.period, ended);
    lock.lock();
  }
}

void PeriodicThread::run_tick() {
  try {
    tick_(stop_.get_token());
  } catch (const std::exception& e) {
    HSNS_LOG(error) << name_ << ": " << e.what();
  } catch (...) {
    HSNS_LOG(error) << name_ << ": a tick failed with an exception that is no std::exception";
  }
}

}  // namespace hsns
