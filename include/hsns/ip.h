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
// - Address rules for parameter-plane subnets (the one place that decides them; request validation, the
//   store's fixed-IP path and its allocator all call these):
//   check_subnet_prefix() refuses special-purpose ranges (see kSpecialRanges in ip.cpp for each range
//   and the reason), check_unicast_address() refuses an address inside one, and check_host_address()
//   says whether an address may be a host's address (port, gateway, pool bound) in a subnet.
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

// The usable host range of a prefix, or nullopt when nothing is usable: the prefix without its first
// address (IPv4 network address; IPv6 Subnet-Router anycast address, RFC 4291 2.6.1) and, for IPv4,
// without its last (the broadcast address); IPv4 /31 and /32 and IPv6 /127 and /128 keep every address
// (point-to-point links, RFC 3021 and RFC 6164). Exactly the addresses check_host_address() accepts
// for a prefix that check_subnet_prefix() accepts.
std::optional<IpRange> default_host_range(const IpPrefix& prefix);

// Why `prefix` cannot be a parameter-plane subnet, or nullopt when it can: it is inside or overlaps a
// special-purpose range (IPv4: "this network" 0.0.0.0/8, loopback, link-local, IETF protocol
// assignments, 6to4 relay anycast, multicast, reserved 240.0.0.0/4 with the limited broadcast
// address; IPv6: anything outside global unicast 2000::/3 and unique local fc00::/7, which covers the
// unspecified and loopback addresses, IPv4-compatible, IPv4-mapped, NAT64, discard-only, link-local,
// site-local and multicast, plus Teredo and 6to4 inside 2000::/3). Private, shared (100.64.0.0/10),
// benchmarking (198.18.0.0/15), documentation (192.0.2.0/24 and the other TEST-NETs, 2001:db8::/32,
// 3fff::/20), unique local and public unicast ranges are allowed. The reason names the range and why.
std::optional<std::string> check_subnet_prefix(const IpPrefix& prefix);

// Why `address` is not an address any host may use (it lies in a range check_subnet_prefix()
// refuses), or nullopt.
std::optional<std::string> check_unicast_address(const IpAddress& address);

// Why `address` cannot be a host address in `subnet` (a port's fixed or allocated address, a gateway,
// an allocation pool bound), or nullopt when it can: it must be of the subnet's family, inside it, in
// default_host_range() (not the IPv4 network or broadcast address, not the IPv6 Subnet-Router anycast
// address, which Linux joins on every interface with the prefix once forwarding is on), and pass
// check_unicast_address(). The reason starts with the address and names the subnet.
std::optional<std::string> check_host_address(const IpPrefix& subnet, const IpAddress& address);

}  // namespace hsns
