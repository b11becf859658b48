// The LLDP neighbours of each parameter-plane port, as the last advertisement each one sent, with their
// time-to-live.
//
// Contract:
// - A neighbour is identified on its port by its MSAP (IEEE 802.1AB): chassis ID and port ID with their
//   subtypes. update() with a frame of TTL > 0 adds or replaces it and (re)starts its expiry at now + TTL;
//   a frame with TTL 0 (the neighbour's shutdown LLDPDU) removes it at once. A port keeps at most
//   kMaxNeighborsPerPort neighbours; an advertisement from one more is refused (Update::table_full), so a
//   flood of forged chassis IDs costs bounded memory.
// - expire(now) removes every neighbour whose TTL ran out (expires_at <= now) and returns them;
//   next_expiry() is the earliest expires_at, for the caller's timer.
// - Pure data: no I/O, no clock of its own (the caller passes steady-clock and Unix times); not
//   thread-safe (one owner).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hsns/proto/lldp.h"
#include "lldpdu.h"

namespace hsns::lldp {

inline constexpr std::size_t kMaxNeighborsPerPort = 16;

using Clock = std::chrono::steady_clock;

struct Neighbor {
  std::string source_mac;
  Lldpdu lldpdu;
  Clock::time_point expires_at;
  std::int64_t last_seen_unix_ms = 0;
};

struct ExpiredNeighbor {
  std::string netdev;
  Neighbor neighbor;
};

class NeighborTable {
 public:
  enum class Update { added, refreshed, removed, unknown_shutdown, table_full };

  Update update(const std::string& netdev, const Frame& frame, Clock::time_point now, std::int64_t unix_ms);
  std::vector<ExpiredNeighbor> expire(Clock::time_point now);
  std::optional<Clock::time_point> next_expiry() const;
  // Forgets a port's neighbours (the port left the configuration); returns how many there were.
  std::size_t remove_port(const std::string& netdev);

  // Neighbours by netdev, each port's in the order they were first seen.
  const std::map<std::string, std::vector<Neighbor>>& ports() const { return ports_; }
  std::size_t size(const std::string& netdev) const;

 private:
  std::map<std::string, std::vector<Neighbor>> ports_;
};

// A neighbour as an entry of the lldp-neighbors section (hsns/proto/lldp.h).
proto::LldpNeighbor to_proto(const std::string& netdev, std::optional<int> npu, const Neighbor& neighbor);

// True when a and b advertise the same MSAP (chassis ID and port ID with their subtypes).
bool same_msap(const Lldpdu& a, const Lldpdu& b);

}  // namespace hsns::lldp
