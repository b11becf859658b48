// The driver's ethtool statistics of a netdev, by name, and the PFC pause counters among them.
//
// Contract:
// - read_ethtool_stats(netdev) asks the kernel in the calling thread's network namespace with the
//   SIOCETHTOOL ioctl: ETHTOOL_GSSET_INFO (how many ETH_SS_STATS strings), ETHTOOL_GSTRINGS (their
//   names), ETHTOOL_GSTATS (their u64 values), in the driver's order. A netdev without statistics gives
//   an empty list; a netdev that does not exist, an invalid name or a failing ioctl is an error naming
//   the netdev and the step. When the count changes between the calls (a channel added), it asks again
//   once, then gives up with an error. Nothing throws.
// - priority_pause() maps the mlx5 per-priority names, rx_prio<N>_pause, tx_prio<N>_pause (PFC pause
//   frames received/sent on priority N) and rx_prio<N>_pause_duration, tx_prio<N>_pause_duration (time
//   paused, in microseconds as mlx5 counts it), for N in 0..7, to one entry per priority that has all
//   four; other names (rx_prio<N>_pause_transition, the global pause counters) are not PFC frames and
//   stay in the plain list. Sorted by priority.
// - parse_ethtool_listing() reads the text `ethtool -S <netdev>` prints ("NIC statistics:" then one
//   "name: value" per line), the form in which statistics lists of real NICs are recorded as fixtures;
//   lines that are not that are errors naming the line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace hsns::daemon::counters {

using EthtoolStats = std::vector<std::pair<std::string, std::uint64_t>>;
// How the counters component gets a netdev's statistics (tests pass recorded lists).
using EthtoolSource = std::function<tl::expected<EthtoolStats, std::string>(const std::string& netdev)>;

tl::expected<EthtoolStats, std::string> read_ethtool_stats(const std::string& netdev);

struct PriorityPauseRaw {
  int priority = 0;
  std::uint64_t rx_frames = 0;
  std::uint64_t tx_frames = 0;
  std::uint64_t rx_duration_us = 0;
  std::uint64_t tx_duration_us = 0;
  bool operator==(const PriorityPauseRaw&) const = default;
};

std::vector<PriorityPauseRaw> priority_pause(const EthtoolStats& stats);

tl::expected<EthtoolStats, std::string> parse_ethtool_listing(std::string_view text);

}  // namespace hsns::daemon::counters
