// A budget of bytes shared by everything that buffers or decodes what clients send (request bodies and
// the documents decoded from them), so that the process refuses work (503, counted) before it is at risk,
// instead of ending with std::bad_alloc under its memory cap.
//
// Contract:
// - try_reserve(n) takes n bytes when used + n <= limit and answers a Reservation holding them, else
//   nothing (and counts a refusal). A Reservation gives its bytes back when it is destroyed; it is
//   move-only. reserve of 0 bytes always succeeds.
// - used(), limit() and refusals() are exact at any time; thread-safe, lock-free.
// - request_memory_cost(body) is what one request body may cost in memory while it is read and decoded:
//   the body itself plus its decoded document (bounded by kMaxDecodedDocumentBytes and by what each input
//   byte can become, kDecodedBytesPerInputByte) and the structures built from that document (half as much
//   again). Bodies of at most kSmallBodyBytes cost nothing here: they are bounded by the connection cap
//   and the header limit, and keep /healthz, logins and small writes working when the budget is spent.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace hsns {

// A decoded JSON/CBOR document may take at most this much memory (json_fields.h refuses beyond it).
inline constexpr std::size_t kMaxDecodedDocumentBytes = std::size_t{256} << 20;
// The worst a byte of input becomes in a decoded document: one CBOR byte can be one value (32 bytes
// estimated, json_fields.h).
inline constexpr std::size_t kDecodedBytesPerInputByte = 32;
inline constexpr std::size_t kSmallBodyBytes = std::size_t{64} << 10;

std::size_t request_memory_cost(std::size_t body_bytes);

class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit) : limit_(limit) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
      other.bytes_ = 0;
    }
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { release(); }
    void release();
    std::size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, std::size_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    std::size_t bytes_ = 0;
  };

  std::optional<Reservation> try_reserve(std::size_t bytes);
  std::size_t used() const { return used_.load(std::memory_order_relaxed); }
  std::size_t limit() const { return limit_; }
  std::uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  std::size_t limit_;
  std::atomic<std::size_t> used_{0};
  std::atomic<std::uint64_t> refusals_{0};
};

}  // namespace hsns
