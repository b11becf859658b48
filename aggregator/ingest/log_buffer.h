// The last parsed syslog messages of each device, in memory, for GET /api/v1/logs.
//
// Contract: add() keeps at most per_device messages of one device (the oldest goes first) and at most
// max_devices devices; a message of a new device beyond max_devices is refused (add returns false, the
// receiver counts it as dropped), never a stored one evicted for it. Every message gets a sequence number
// in arrival order. query() answers, oldest first, the last `limit` messages (of one device, or of all)
// whose timestamp is at or after since_ms. Nothing survives a restart. Thread-safe (one mutex; add and
// query are short).
// An observer set before the first add() sees every message offered to add(), stored or refused (the
// network brain's tap: aggregator/brain/engine.h), on the adding thread, outside the buffer's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ingest/syslog_parser.h"

namespace hsns::ingest {

// A parsed message as the receiver delivers it: the device it was mapped to and when it arrived.
struct IngestedLog {
  std::uint64_t sequence = 0;  // set by LogBuffer::add
  std::string device;          // a topology device name, or "unknown:<hostname or source address>"
  bool known_device = false;
  std::int64_t received_ms = 0;
  SyslogMessage message;
};

class LogBuffer {
 public:
  LogBuffer(std::size_t per_device, std::size_t max_devices)
      : per_device_(per_device), max_devices_(max_devices) {}

  bool add(IngestedLog log);
  // Before the first add(): called with every message add() is offered.
  void set_observer(std::function<void(const IngestedLog&)> observer) { observer_ = std::move(observer); }

  struct Query {
    std::optional<std::string> device;
    std::optional<std::int64_t> since_ms;
    std::size_t limit = 100;
  };
  std::vector<IngestedLog> query(const Query& q) const;
  std::size_t devices() const;

 private:
  std::size_t per_device_;
  std::size_t max_devices_;
  std::function<void(const IngestedLog&)> observer_;
  mutable std::mutex mutex_;
  std::uint64_t next_sequence_ = 1;
  std::map<std::string, std::deque<IngestedLog>, std::less<>> by_device_;
};

}  // namespace hsns::ingest
