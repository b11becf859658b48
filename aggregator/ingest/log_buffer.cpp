#include "ingest/log_buffer.h"

#include <algorithm>

namespace hsns::ingest {

bool LogBuffer::add(IngestedLog log) {
  if (observer_) observer_(log);
  const std::lock_guard lock(mutex_);
  auto it = by_device_.find(log.device);
  if (it == by_device_.end()) {
    if (by_device_.size() >= max_devices_) return false;
    it = by_device_.emplace(log.device, std::deque<IngestedLog>{}).first;
  }
  log.sequence = next_sequence_++;
  auto& ring = it->second;
  if (ring.size() >= per_device_) ring.pop_front();
  ring.push_back(std::move(log));
  return true;
}

std::vector<IngestedLog> LogBuffer::query(const Query& q) const {
  const auto wanted = [&](const IngestedLog& l) {
    return !q.since_ms || l.message.timestamp_ms >= *q.since_ms;
  };
  std::vector<IngestedLog> out;
  const std::lock_guard lock(mutex_);
  // Newest first from each ring, at most `limit` from each, then the newest `limit` of them all.
  const auto collect = [&](const std::deque<IngestedLog>& ring) {
    std::size_t taken = 0;
    for (auto it = ring.rbegin(); it != ring.rend() && taken < q.limit; ++it) {
      if (!wanted(*it)) continue;
      out.push_back(*it);
      ++taken;
    }
  };
  if (q.device) {
    if (const auto it = by_device_.find(*q.device); it != by_device_.end()) collect(it->second);
  } else {
    for (const auto& [name, ring] : by_device_) collect(ring);
  }
  std::sort(out.begin(), out.end(),
            [](const IngestedLog& a, const IngestedLog& b) { return a.sequence > b.sequence; });
  if (out.size() > q.limit) out.resize(q.limit);
  std::reverse(out.begin(), out.end());
  return out;
}

std::size_t LogBuffer::devices() const {
  const std::lock_guard lock(mutex_);
  return by_device_.size();
}

}  // namespace hsns::ingest
