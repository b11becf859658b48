// Failed authentications throttled per client address, so that a client guessing tokens (through the
// login route or any route's bearer token) gets 429 instead of an unlimited stream of 401 answers, while
// every other address, and the operator among them, logs in as before.
//
// Contract: each address has a bucket of `burst` attempts that refills by one every `refill`; failed()
// takes one. wait(address, now) is zero while the bucket holds an attempt, else the time until it does:
// the caller answers 429 with Retry-After without checking the credential. Successful attempts cost
// nothing. At most max_addresses buckets are kept: beyond that the one untouched longest is forgotten
// (a full bucket is the same as none). An empty address (an in-process caller) is never throttled.
// Thread-safe (one mutex, O(log n) per call).
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace hsns::http {

struct AuthThrottleLimits {
  std::size_t burst = 100;                 // http.auth_failure_burst
  std::chrono::milliseconds refill{1000};  // one attempt back per this (http.auth_failure_refill_ms)
  std::size_t max_addresses = 4096;
};

class AuthThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AuthThrottle(AuthThrottleLimits limits = {}) : limits_(limits) {}

  std::chrono::milliseconds wait(std::string_view address, Clock::time_point now);
  void failed(std::string_view address, Clock::time_point now);

 private:
  struct Bucket {
    double attempts = 0;
    Clock::time_point at;
    std::list<std::string>::iterator touched;
  };
  // The bucket refilled up to now.
  void refill(Bucket& b, Clock::time_point now) const;

  AuthThrottleLimits limits_;
  std::mutex mu_;
  std::map<std::string, Bucket, std::less<>> buckets_;
  std::list<std::string> touched_;  // addresses, least recently touched first
};

}  // namespace hsns::http
