// IP addresses, prefixes and ranges for address management (IPv4 and IPv6 alike).
//
// Contract:
// - IpAddress holds either family as a 128-bit unsigned number plus the family, so that ordering,
//   "next address" and range arithmetic are the same code for both. Parsing and printing use
//   Boost.Asio's ip::address (RFC 5952 text for IPv6).
// - IpPrefix::parse is strict: the text must be "<address>/<length>" with no host bits set
//   ("10.0.0.1/24" is an error, not silently "10.0.0.0/24"), because an operator typing host bits has
//   usually made a mistake worth telling them about.
// - IpRange is an inclusive [first, last] range of one family.
// - All functions are pure and thread-safe; errors are returned as values with a human-readable reason.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace hsns {

enum class IpFamily : std::uint8_t { v4 = 4, v6 = 6 };

// __extension__: a GCC/Clang built-in type, so -Wpedantic does not flag it.
__extension__ typedef unsigned __int128 uint128;

class IpAddress {
 public:
  IpAddress() = default;
  IpAddress(IpFamily family, uint128 value) : family_(family), value_(value) {}

  // Parses dotted-quad IPv4 or RFC 4291 IPv6 text; no surrounding whitespace, no zone index.
  static tl::expected<IpAddress, std::string> parse(std::string_view text);

  IpFamily family() const { return family_; }
  uint128 value() const { return value_; }
  int bits() const { return family_ == IpFamily::v4 ? 32 : 128; }
  std::string to_string() const;

  // A fixed-width, order-preserving key (family digit + 32 hex digits) for storage and indexing.
  std::string sort_key() const;
  static std::optional<IpAddress> from_sort_key(std::string_view key);

  // The next/previous address, or nullopt at the end of the family's address space.
  std::optional<IpAddress> next() const;
  std::optional<IpAddress> prev() const;

  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;

 private:
  IpFamily family_ = IpFamily::v4;
  uint128 value_ = 0;
};

class IpPrefix {
 public:
  IpPrefix() = default;
  IpPrefix(IpAddress network, int length) : network_(network), length_(length) {}

  // Strict "<network>/<length>": the address must have no bits set beyond the prefix length.
  static tl::expected<IpPrefix, std::string> parse(std::string_view text);

  const IpAddress& network() const { return network_; }
  int length() const { return length_; }
  IpFamily family() const { return network_.family(); }
  IpAddress first() const { return network_; }
  IpAddress last() const;  // the highest address (the IPv4 broadcast address for IPv4)
  bool contains(const IpAddress& a) const;
  bool overlaps(const IpPrefix& other) const;
  std::string to_string() const;

  friend bool operator==(const IpPrefix&, const IpPrefix&) = default;

 private:
  IpAddress network_;
  int length_ = 0;
};

struct IpRange {
  IpAddress first;
  IpAddress last;

  bool contains(const IpAddress& a) const { return a.family() == first.family() && first <= a && a <= last; }
  bool overlaps(const IpRange& o) const {
    return first.family() == o.first.family() && first <= o.last && o.first <= last;
  }
  // Number of addresses, saturating at 2^64 - 1 (enough to say "plenty" for IPv6).
  std::uint64_t size() const;
  friend bool operator==(const IpRange&, const IpRange&) = default;
};

// The usable host range of a prefix (see IpPrefix comment), or nullopt when nothing is usable.
std::optional<IpRange> default_host_range(const IpPrefix& prefix);

}  // namespace hsns
