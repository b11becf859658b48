// Deltas and rates of hardware counters between two readings, with resets and wraps told apart.
//
// Contract:
// - counter_delta(previous, current, width): current >= previous is an increase of current - previous.
//   A decrease is a wrap when the counter is `width` bits wide (32 or 64), previous lay in the top
//   quarter of its range and current lies in the bottom quarter: delta = 2^width - previous + current.
//   Any other decrease is a reset (the driver reloaded, perfquery -R, a device re-created): delta =
//   current, the count since the reset. A counter that saturates (the InfiniBand PMA error counters)
//   never decreases by itself, so it is never mistaken for a wrap.
// - Widths: every counter is 64 bits (sysfs statistics, ethtool statistics, hw_counters, the extended
//   PMA counters) except those counter_width() names: the data, packet and wait counters of the
//   InfiniBand PMA PortCounters attribute, 32 bits when a device lacks the extended counters. A counter
//   declared 32 bits that was ever seen above 2^32 - 1 is 64 bits from then on (the device does have the
//   extended counters), so a 64-bit counter is never taken for a wrapped 32-bit one.
// - DeltaTracker keeps the last raw value of each counter (by key) and turns readings into samples
//   (value, delta, rate, scaled by the counter's unit), counting resets and wraps. A counter read for
//   the first time has delta and rate 0. forget_unseen() drops counters not read since the last call
//   (a port that went away starts afresh when it comes back). Not thread-safe; one owner.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hsns/proto/counters.h"

namespace hsns::daemon::counters {

enum class Change { increase, reset, wrap };

struct Delta {
  std::uint64_t delta = 0;
  Change change = Change::increase;
  bool operator==(const Delta&) const = default;
};

Delta counter_delta(std::uint64_t previous, std::uint64_t current, unsigned width_bits);

// The declared width of an RDMA `counters/` file (32 or 64); every other counter is 64 bits.
unsigned counter_width(std::string_view rdma_counter_name);

class DeltaTracker {
 public:
  // One reading of counter `key`: raw is the value as read, width its declared width (32/64), scale
  // the unit factor (4 for port_xmit_data/port_rcv_data: bytes), interval_s the seconds since the
  // previous reading (0 on the first: delta and rate 0).
  proto::CounterSample update(const std::string& key, std::uint64_t raw, unsigned width, std::uint64_t scale,
                              double interval_s);
  // Whether update() of the last call was the counter's first reading.
  bool last_was_first() const { return last_first_; }
  void forget_unseen();
  std::uint64_t resets() const { return resets_; }
  std::uint64_t wraps() const { return wraps_; }

 private:
  struct State {
    std::uint64_t raw = 0;
    bool wide = false;  // seen above 2^32 - 1
    bool seen = false;  // read since the last forget_unseen()
  };
  std::unordered_map<std::string, State> states_;
  std::uint64_t resets_ = 0;
  std::uint64_t wraps_ = 0;
  bool last_first_ = false;
};

}  // namespace hsns::daemon::counters
