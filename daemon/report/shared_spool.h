// The report spool shared by its two writers in hsnsd: the reporter (main thread: telemetry reports; its
// upload thread: peek and ack) and the flow harvester's thread (flow batches). Spool itself has one owner
// thread; SharedSpool is that owner: every call takes one mutex, so the threads take turns and each call
// sees the spool as the previous one left it.
//
// Contract:
// - open() opens the directory once (later calls answer the first result while it succeeded; a failed open
//   is tried again by the next call). Every other call fails with `unavailable` while the spool is not
//   open.
// - append(kind, epoch, encode) stores one record whose payload is encode(seq), seq being the seq the spool
//   gives that very record, so that a payload can carry its own sequence number (the report's seq is the
//   spool's). encode runs outside the mutex with the seq expected at that moment (a 100,000-flow batch
//   takes a while to encode, and the other writer must not wait for it) and once more under the mutex
//   when the other writer appended in between.
// - append_parts(kind, epoch, parts): Spool::append_parts under the mutex, the streamed encode included
//   (each part's payload is written into the segment while it is encoded, so the seq it carries is the one
//   it gets and no copy of the batch exists); the other writer waits for it (about 0.1 s for 100,000 flows).
// - peek/peek_payloads/ack/stats/last_flow_epoch: Spool's, under the mutex (a peeked SpoolPayload is read
//   afterwards without it).
// - on_append(fn): fn() is called after every successful append (by the appending thread, outside the
//   spool's mutex): the uploader's wake-up. on_append({}) removes it; it is never called after that
//   returns.
// - Thread-safe. The mutex is held during the spool's own writes (pwritev + fdatasync), never during an
//   HTTP request, a read of a peeked payload, or an encode of append()'s first try.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "spool.h"

namespace hsns::daemon::report {

class SharedSpool {
 public:
  explicit SharedSpool(SpoolOptions options) : options_(std::move(options)) {}

  Result<void> open();
  bool is_open() const;

  Result<std::uint64_t> append(SpoolKind kind, std::uint64_t epoch,
                               const std::function<std::string(std::uint64_t seq)>& encode);
  Result<std::uint64_t> append_parts(SpoolKind kind, std::uint64_t epoch, const SpoolParts& parts);
  Result<std::vector<SpoolRecord>> peek(std::uint64_t max_bytes) const;
  Result<std::vector<SpoolEntry>> peek_payloads(std::uint64_t max_bytes) const;
  Result<void> ack(std::uint64_t seq);
  std::optional<SpoolStats> stats() const;
  std::optional<std::uint64_t> last_flow_epoch() const;
  const std::string& dir() const { return options_.dir; }
  void on_append(std::function<void()> fn);

 private:
  SpoolOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<Spool> spool_;  // guarded by mutex_
  std::mutex notify_mutex_;
  std::function<void()> on_append_;  // guarded by notify_mutex_
};

}  // namespace hsns::daemon::report
