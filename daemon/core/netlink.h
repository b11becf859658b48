// rtnetlink access for the reconciler, on libnl-route-3: observe links, addresses and hsnsd-marked
// routes and rules, and execute one planned Action at a time.
//
// Contract:
// - Netlink::open() connects a NETLINK_ROUTE socket in the caller's network namespace; the socket is
//   owned (RAII) and closed with the object. Errors come back as values with the kernel's reason.
// - observe() takes one consistent dump per object type; execute() sends one change and waits for the
//   kernel's acknowledgement. Every successful change increments changes() (tests count them).
// - Thread-compatible: one owner (the daemon's main loop).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>

#include "plan.h"

struct nl_sock;

namespace hsns::daemon {

class Netlink {
 public:
  static tl::expected<std::unique_ptr<Netlink>, std::string> open(const RoutingParams& routing);
  ~Netlink();
  Netlink(const Netlink&) = delete;
  Netlink& operator=(const Netlink&) = delete;

  tl::expected<Observation, std::string> observe();
  tl::expected<void, std::string> execute(const Action& action);
  std::uint64_t changes() const { return changes_; }

 private:
  Netlink(::nl_sock* sock, const RoutingParams& routing);
  ::nl_sock* sock_;
  RoutingParams routing_;
  std::uint64_t changes_ = 0;
};

}  // namespace hsns::daemon
