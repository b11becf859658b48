#include "hsns/memory_budget.h"

#include <algorithm>

namespace hsns {

std::size_t request_memory_cost(std::size_t body_bytes) {
  if (body_bytes <= kSmallBodyBytes) return 0;
  // body_bytes is at most the largest body limit (configuration: 4 GiB), so the product cannot overflow.
  const std::size_t decoded = std::min(body_bytes * kDecodedBytesPerInputByte, kMaxDecodedDocumentBytes);
  return body_bytes + decoded + decoded / 2;
}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = other.budget_;
    bytes_ = other.bytes_;
    other.budget_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void MemoryBudget::Reservation::release() {
  if (budget_ != nullptr && bytes_ > 0) budget_->used_.fetch_sub(bytes_, std::memory_order_relaxed);
  budget_ = nullptr;
  bytes_ = 0;
}

std::optional<MemoryBudget::Reservation> MemoryBudget::try_reserve(std::size_t bytes) {
  if (bytes == 0) return Reservation{};
  std::size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || used > limit_ - bytes) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return Reservation(this, bytes);
}

}  // namespace hsns
