#include "ingest/log_buffer.h"

#include <algorithm>
#include <queue>

namespace hsns::ingest {
namespace {

// A std::string's heap block when beyond the small-string buffer. By size, not capacity: a copy of a
// message (the one query() answers) costs what the kept one does.
std::size_t text_cost(const std::string& s) {
  return s.size() > 15 ? s.size() + 1 : 0;
}

}  // namespace

std::size_t log_cost(const IngestedLog& log) {
  const auto& m = log.message;
  std::size_t bytes = sizeof(IngestedLog) + text_cost(log.device) + text_cost(m.hostname) + text_cost(m.app) +
                      text_cost(m.procid) + text_cost(m.msgid) + text_cost(m.message) + text_cost(m.source);
  bytes += m.structured_data.size() * sizeof(SdElement);
  for (const auto& element : m.structured_data) {
    bytes += text_cost(element.id) + element.params.size() * sizeof(SdParam);
    for (const auto& p : element.params) bytes += text_cost(p.name) + text_cost(p.value);
  }
  return bytes;
}

LogBuffer::LogBuffer(LogBufferLimits limits) : limits_(limits) {
  limits_.unknown_bytes = std::min(limits_.unknown_bytes, limits_.max_bytes);
  known_.max_devices = limits_.max_devices;
  known_.max_bytes = limits_.max_bytes - limits_.unknown_bytes;
  unknown_.max_devices = limits_.unknown_devices;
  unknown_.max_bytes = limits_.unknown_bytes;
}

void LogBuffer::resize(Pool& pool, const std::string& name, Ring& ring, std::size_t new_bytes) {
  pool.by_bytes.erase({ring.bytes, &name});
  pool.bytes = pool.bytes - ring.bytes + new_bytes;
  ring.bytes = new_bytes;
  pool.by_bytes.insert({ring.bytes, &name});
}

void LogBuffer::pop_oldest(const std::string& name, Ring& ring) {
  resize(pool_of(ring), name, ring, ring.bytes - log_cost(ring.logs.front()));
  ring.logs.pop_front();
  --messages_;
}

void LogBuffer::erase_device(Rings::iterator it) {
  Ring& ring = it->second;
  Pool& pool = pool_of(ring);
  pool.by_bytes.erase({ring.bytes, &it->first});
  pool.bytes -= ring.bytes;
  messages_ -= ring.logs.size();
  if (!ring.known) unknown_heard_.erase(ring.heard);
  by_device_.erase(it);
}

// Evicts from the largest device of the pool until the pool fits; answers how many messages went.
std::size_t LogBuffer::shrink(Pool& pool) {
  std::size_t evicted = 0;
  while (pool.bytes > pool.max_bytes && !pool.by_bytes.empty()) {
    const std::string& name = *pool.by_bytes.rbegin()->second;
    const auto it = by_device_.find(name);
    pop_oldest(it->first, it->second);
    ++evicted;
    // An emptied ring keeps its place (its device is still known to talk); only unknown ones go.
    if (it->second.logs.empty() && !it->second.known) erase_device(it);
  }
  return evicted;
}

LogBuffer::Added LogBuffer::add(IngestedLog log) {
  Added added;
  added.time = judge_data_time(limits_.window, log.message.timestamp_ms, log.received_ms);
  if (added.time != TimeVerdict::inside) {
    log.message.timestamp_ms = log.received_ms;
    log.timestamp_clamped = true;
  }
  if (observer_) observer_(log);
  const std::size_t cost = log_cost(log);
  const std::lock_guard lock(mutex_);
  auto it = by_device_.find(log.device);
  if (it == by_device_.end()) {
    Pool& pool = log.known_device ? known_ : unknown_;
    if (pool.max_devices == 0) return added;
    if (pool.by_bytes.size() >= pool.max_devices) {
      if (log.known_device) return added;
      // The unknown sender heard from least recently makes room, whole.
      const auto oldest = by_device_.find(*unknown_heard_.front());
      added.evicted += oldest->second.logs.size();
      erase_device(oldest);
    }
    it = by_device_.emplace(log.device, Ring{}).first;
    it->second.known = log.known_device;
    pool.by_bytes.insert({0, &it->first});
    if (!log.known_device) it->second.heard = unknown_heard_.insert(unknown_heard_.end(), &it->first);
  } else if (!it->second.known) {
    unknown_heard_.splice(unknown_heard_.end(), unknown_heard_, it->second.heard);
  }
  Ring& ring = it->second;
  log.sequence = next_sequence_++;
  if (ring.logs.size() >= limits_.per_device) {
    pop_oldest(it->first, ring);
    ++added.evicted;
  }
  ring.logs.push_back(std::move(log));
  ++messages_;
  Pool& pool = pool_of(ring);
  resize(pool, it->first, ring, ring.bytes + cost);
  added.evicted += shrink(pool);
  added.stored = true;
  return added;
}

std::vector<IngestedLog> LogBuffer::query(const Query& q) const {
  const auto wanted = [&](const IngestedLog& l) {
    return !q.since_ms || l.message.timestamp_ms >= *q.since_ms;
  };
  // Each ring is in arrival order: merge them from their newest ends, taking the newest wanted message of
  // all each time, until `limit` are chosen. Only the chosen ones are copied.
  struct Cursor {
    const std::deque<IngestedLog>* ring;
    std::size_t remaining;  // the candidate is (*ring)[remaining - 1]
    std::uint64_t sequence() const { return (*ring)[remaining - 1].sequence; }
  };
  const auto older = [](const Cursor& a, const Cursor& b) { return a.sequence() < b.sequence(); };
  std::priority_queue<Cursor, std::vector<Cursor>, decltype(older)> heads(older);
  const auto push_next = [&](Cursor c) {
    while (c.remaining > 0 && !wanted((*c.ring)[c.remaining - 1])) --c.remaining;
    if (c.remaining > 0) heads.push(c);
  };
  std::vector<IngestedLog> out;
  const std::lock_guard lock(mutex_);
  if (q.device) {
    if (const auto it = by_device_.find(*q.device); it != by_device_.end())
      push_next({&it->second.logs, it->second.logs.size()});
  } else {
    for (const auto& [name, ring] : by_device_) push_next({&ring.logs, ring.logs.size()});
  }
  std::vector<const IngestedLog*> chosen;
  while (!heads.empty() && chosen.size() < q.limit) {
    Cursor c = heads.top();
    heads.pop();
    chosen.push_back(&(*c.ring)[c.remaining - 1]);
    --c.remaining;
    push_next(c);
  }
  out.reserve(chosen.size());
  for (auto p = chosen.rbegin(); p != chosen.rend(); ++p) out.push_back(**p);
  return out;
}

LogBuffer::Usage LogBuffer::usage() const {
  const std::lock_guard lock(mutex_);
  return {known_.by_bytes.size(), unknown_.by_bytes.size(), known_.bytes, unknown_.bytes, messages_};
}

std::size_t LogBuffer::devices() const {
  const std::lock_guard lock(mutex_);
  return by_device_.size();
}

}  // namespace hsns::ingest
