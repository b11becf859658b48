#include "shared_spool.h"

namespace hsns::daemon::report {
namespace {

Error not_open(const std::string& dir) {
  return Error::unavailable("the report spool " + dir + " is not open");
}

}  // namespace

Result<void> SharedSpool::open() {
  const std::lock_guard lock(mutex_);
  if (spool_) return {};
  auto s = Spool::open(options_);
  if (!s) return tl::unexpected(s.error());
  spool_ = std::move(*s);
  return {};
}

bool SharedSpool::is_open() const {
  const std::lock_guard lock(mutex_);
  return spool_ != nullptr;
}

Result<std::uint64_t> SharedSpool::append(SpoolKind kind, std::uint64_t epoch,
                                          const std::function<std::string(std::uint64_t seq)>& encode) {
  std::uint64_t expected = 0;
  {
    const std::lock_guard lock(mutex_);
    if (!spool_) return tl::unexpected(not_open(options_.dir));
    expected = spool_->last_seq() + 1;
  }
  std::string payload = encode(expected);
  Result<std::uint64_t> seq;
  {
    const std::lock_guard lock(mutex_);
    if (!spool_) return tl::unexpected(not_open(options_.dir));
    // The other writer appended meanwhile: the payload must name the seq this record gets.
    if (spool_->last_seq() + 1 != expected) {
      expected = spool_->last_seq() + 1;
      payload = encode(expected);
    }
    seq = spool_->append(kind, epoch, payload);
  }
  if (!seq) return seq;
  if (*seq != expected)
    return tl::unexpected(Error::internal("the report spool gave seq " + std::to_string(*seq) + ", not " +
                                          std::to_string(expected)));
  const std::lock_guard lock(notify_mutex_);
  if (on_append_) on_append_();
  return seq;
}

Result<std::uint64_t> SharedSpool::append_parts(SpoolKind kind, std::uint64_t epoch,
                                                const SpoolParts& parts) {
  Result<std::uint64_t> first;
  {
    const std::lock_guard lock(mutex_);
    if (!spool_) return tl::unexpected(not_open(options_.dir));
    first = spool_->append_parts(kind, epoch, parts);
  }
  if (!first) return first;
  const std::lock_guard lock(notify_mutex_);
  if (on_append_) on_append_();
  return first;
}

Result<std::vector<SpoolEntry>> SharedSpool::peek_payloads(std::uint64_t max_bytes) const {
  const std::lock_guard lock(mutex_);
  if (!spool_) return tl::unexpected(not_open(options_.dir));
  return spool_->peek_payloads(max_bytes);
}

void SharedSpool::on_append(std::function<void()> fn) {
  const std::lock_guard lock(notify_mutex_);
  on_append_ = std::move(fn);
}

Result<std::vector<SpoolRecord>> SharedSpool::peek(std::uint64_t max_bytes) const {
  const std::lock_guard lock(mutex_);
  if (!spool_) return tl::unexpected(not_open(options_.dir));
  return spool_->peek(max_bytes);
}

Result<void> SharedSpool::ack(std::uint64_t seq) {
  const std::lock_guard lock(mutex_);
  if (!spool_) return tl::unexpected(not_open(options_.dir));
  return spool_->ack(seq);
}

std::optional<SpoolStats> SharedSpool::stats() const {
  const std::lock_guard lock(mutex_);
  if (!spool_) return std::nullopt;
  return spool_->stats();
}

std::optional<std::uint64_t> SharedSpool::last_flow_epoch() const {
  const std::lock_guard lock(mutex_);
  if (!spool_) return std::nullopt;
  return spool_->last_flow_epoch();
}

}  // namespace hsns::daemon::report
