// Overflow-checked unsigned arithmetic for numbers that come from requests (model sizes, parallel sizes,
// topology counts, address pool sizes, and counts derived from them).
//
// Contract:
// - checked_*() and *_product() compute the exact mathematical result in 64 bits, or report that it does
//   not fit (std::nullopt): nothing wraps, whatever the inputs. bounded_product() also rejects a result
//   above `limit`, so callers can validate a product against what the model can mean in one step.
// - saturating_*() answer UINT64_MAX for a result that does not fit: for counts compared against a limit,
//   where "more than 64 bits" is simply over every limit.
// - Header-only, constexpr, no allocation: usable in validation hot paths and in fuzz targets.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace hsns {

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

// a + b, or UINT64_MAX when the sum does not fit.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return checked_add(a, b).value_or(UINT64_MAX);
}

// a * b, or UINT64_MAX when the product does not fit.
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return checked_mul(a, b).value_or(UINT64_MAX);
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

}  // namespace hsns
