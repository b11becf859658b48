// Overflow-checked unsigned arithmetic for numbers that come from requests (model sizes, parallel sizes,
// counts derived from them).
//
// Contract:
// - Every function computes the exact mathematical result in 64 bits, or reports that it does not fit
//   (std::nullopt): nothing wraps, whatever the inputs. bounded_product() also rejects a result above
//   `limit`, so callers can validate a product against what the model can mean in one step.
// - Header-only, constexpr, no allocation: usable in validation hot paths and in fuzz targets.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace hsns::cost {

// a * b, or nullopt when the product does not fit in 64 bits.
constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when the sum does not fit in 64 bits.
constexpr std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of every factor, or nullopt when it exceeds `limit` (or 64 bits). A zero factor gives 0 even
// when the other factors' product would overflow: the product is what is checked, not its partial products.
constexpr std::optional<std::uint64_t> bounded_product(std::uint64_t limit,
                                                       std::initializer_list<std::uint64_t> factors) {
  for (std::uint64_t f : factors) {
    if (f == 0) return std::uint64_t{0};
  }
  std::uint64_t out = 1;
  for (std::uint64_t f : factors) {
    auto next = checked_mul(out, f);
    // With no zero factor the running product never decreases, so exceeding the limit early is final.
    if (!next || *next > limit) return std::nullopt;
    out = *next;
  }
  return out;
}

// The product of every factor, or nullopt when it does not fit in 64 bits.
constexpr std::optional<std::uint64_t> checked_product(std::initializer_list<std::uint64_t> factors) {
  return bounded_product(UINT64_MAX, factors);
}

}  // namespace hsns::cost
