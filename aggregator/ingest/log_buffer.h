// The last parsed syslog messages and pushed events of each device, in memory, for GET /api/v1/logs.
//
// Contract:
// - Bounded in bytes, not only in messages: every message is costed (log_cost: its strings and the
//   structures holding them). Devices of the topology (known) and every other sender (unknown: invented
//   hostnames, spoofed sources, entities no topology names) live in two pools, so unknown senders can never
//   take what known devices need:
//   * known: at most max_devices devices and max_bytes - unknown_bytes bytes; a new known device beyond
//     max_devices is refused (add answers stored = false) and nothing stored is evicted for it;
//   * unknown: at most unknown_devices devices and unknown_bytes bytes; a new unknown device beyond the cap
//     evicts the unknown device heard from least recently, whole (so invented names age out and a real
//     sender that keeps talking stays).
//   Within a pool over its bytes, the oldest message of the device holding the most bytes goes first: every
//   device keeps a fair share, and one that floods loses its own history, not its neighbours'. Each device
//   also keeps at most per_device messages (its oldest goes first).
// - Data time: a message dated outside the window around its receive time (ingest/data_time.h) is stored
//   with its receive time as its timestamp (timestamp_clamped set), before anyone sees it; add() says so.
// - Every stored message gets a sequence number in arrival order. query() answers, oldest first, the last
//   `limit` messages (of one device, or of all) whose timestamp is at or after since_ms; it copies only the
//   messages it answers.
// - Nothing survives a restart. Thread-safe (one mutex; add and query are short).
// An observer set before the first add() sees every message offered to add() (after the clamp), stored or
// refused (the network brain's tap: aggregator/brain/taps.h), on the adding thread, outside the lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ingest/data_time.h"
#include "ingest/syslog_parser.h"

namespace hsns::ingest {

// A parsed message as the receiver delivers it: the device it was mapped to and when it arrived.
struct IngestedLog {
  std::uint64_t sequence = 0;  // set by LogBuffer::add
  std::string device;          // a topology device name, or "unknown:<hostname or source address>"
  bool known_device = false;
  bool timestamp_clamped = false;  // set by LogBuffer::add: the sender's time was outside the window
  std::int64_t received_ms = 0;
  SyslogMessage message;
};

// What a message costs in memory: its strings' bytes and the structures around them.
std::size_t log_cost(const IngestedLog& log);

struct LogBufferLimits {
  std::size_t per_device = 1000;
  std::size_t max_devices = 32'768;                   // known devices
  std::size_t max_bytes = std::size_t{256} << 20;     // both pools together
  std::size_t unknown_devices = 256;                  // unknown senders kept at once
  std::size_t unknown_bytes = std::size_t{32} << 20;  // the unknown pool's share of max_bytes
  DataTimeWindow window;
};

class LogBuffer {
 public:
  explicit LogBuffer(LogBufferLimits limits);

  struct Added {
    bool stored = false;
    TimeVerdict time = TimeVerdict::inside;  // outside: the timestamp was replaced by the receive time
    std::size_t evicted = 0;                 // messages removed to make room (devices' whole rings included)
  };
  Added add(IngestedLog log);
  // Before the first add(): called with every message add() is offered.
  void set_observer(std::function<void(const IngestedLog&)> observer) { observer_ = std::move(observer); }

  struct Query {
    std::optional<std::string> device;
    std::optional<std::int64_t> since_ms;
    std::size_t limit = 100;
  };
  std::vector<IngestedLog> query(const Query& q) const;

  struct Usage {
    std::size_t known_devices = 0;
    std::size_t unknown_devices = 0;
    std::size_t known_bytes = 0;
    std::size_t unknown_bytes = 0;
    std::size_t messages = 0;
  };
  Usage usage() const;
  std::size_t devices() const;

 private:
  struct Ring {
    std::deque<IngestedLog> logs;
    std::size_t bytes = 0;
    bool known = false;
    std::list<const std::string*>::iterator heard;  // unknown devices: place in unknown_heard_
  };
  struct Pool {
    std::size_t max_devices = 0;
    std::size_t max_bytes = 0;
    std::size_t bytes = 0;
    // Every ring of the pool by its size, largest last (so its size() is the pool's device count).
    std::set<std::pair<std::size_t, const std::string*>> by_bytes;
  };
  using Rings = std::map<std::string, Ring, std::less<>>;

  Pool& pool_of(const Ring& ring) { return ring.known ? known_ : unknown_; }
  void resize(Pool& pool, const std::string& name, Ring& ring, std::size_t new_bytes);
  void pop_oldest(const std::string& name, Ring& ring);
  void erase_device(Rings::iterator it);
  std::size_t shrink(Pool& pool);

  LogBufferLimits limits_;
  std::function<void(const IngestedLog&)> observer_;
  mutable std::mutex mutex_;
  std::uint64_t next_sequence_ = 1;
  std::size_t messages_ = 0;
  Rings by_device_;
  Pool known_;
  Pool unknown_;
  std::list<const std::string*> unknown_heard_;  // least recently heard first
};

}  // namespace hsns::ingest
