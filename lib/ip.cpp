#include "hsns/ip.h"

#include <array>
#include <boost/asio/ip/address.hpp>
#include <limits>
#include <vector>

namespace hsns {
namespace {

uint128 max_value(IpFamily f) {
  return f == IpFamily::v4 ? uint128{0xFFFFFFFFu} : ~uint128{0};
}

uint128 host_mask(IpFamily f, int length) {
  const int bits = f == IpFamily::v4 ? 32 : 128;
  const int host_bits = bits - length;
  if (host_bits <= 0) return 0;
  if (host_bits >= 128) return ~uint128{0};
  return (uint128{1} << host_bits) - 1;
}

}  // namespace

tl::expected<IpAddress, std::string> IpAddress::parse(std::string_view text) {
  if (text.empty()) return tl::unexpected(std::string("empty address"));
  if (text.find('%') != std::string_view::npos) return tl::unexpected(std::string("zone index not allowed"));
  // Boost parses a C string: an embedded NUL would silently cut the text short ("1.2.3.4\0junk").
  if (text.find('\0') != std::string_view::npos) {
    return tl::unexpected(std::string("an address must not contain NUL characters"));
  }
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(std::string(text), ec);
  if (ec) return tl::unexpected("'" + std::string(text) + "' is not an IPv4 or IPv6 address");
  if (a.is_v4()) return IpAddress(IpFamily::v4, a.to_v4().to_uint());
  uint128 v = 0;
  for (auto byte : a.to_v6().to_bytes()) v = (v << 8) | byte;
  return IpAddress(IpFamily::v6, v);
}

std::string IpAddress::to_string() const {
  if (family_ == IpFamily::v4) {
    return boost::asio::ip::address_v4(static_cast<std::uint32_t>(value_)).to_string();
  }
  // RFC 5952 text, written here rather than by inet_ntop, whose output differs between C libraries
  // (glibc prints the deprecated IPv4-compatible form "::1.2.3.4" for ::102:304).
  std::array<unsigned, 8> words{};
  for (std::size_t i = 0; i < 8; ++i) {
    words[i] = static_cast<unsigned>((value_ >> (112 - 16 * i)) & 0xFFFF);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  auto hex = [](std::string& out, unsigned w) {
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      const unsigned d = (w >> static_cast<unsigned>(shift)) & 0xF;
      if (d != 0 || started || shift == 0) {
        out.push_back(kHex[d]);
        started = true;
      }
    }
  };
  // Section 5: mixed notation for IPv4-mapped addresses (::ffff:0:0/96).
  if (words[0] == 0 && words[1] == 0 && words[2] == 0 && words[3] == 0 && words[4] == 0 &&
      words[5] == 0xFFFF) {
    return "::ffff:" + boost::asio::ip::address_v4(static_cast<std::uint32_t>(value_)).to_string();
  }
  // Section 4.2: "::" replaces the longest run (the first of equal runs) of two or more zero words.
  std::size_t best_start = 8;
  std::size_t best_len = 0;
  for (std::size_t i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > best_len) {
      best_start = i;
      best_len = j - i;
    }
    i = j;
  }
  if (best_len < 2) best_start = 8;
  std::string out;
  out.reserve(39);
  for (std::size_t i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out.push_back(':');
    hex(out, words[i]);
  }
  return out;
}

std::string IpAddress::sort_key() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key(33, '0');
  key[0] = family_ == IpFamily::v4 ? '4' : '6';
  uint128 v = value_;
  for (int i = 32; i >= 1; --i) {
    key[static_cast<std::size_t>(i)] = kHex[static_cast<unsigned>(v & 0xF)];
    v >>= 4;
  }
  return key;
}

std::optional<IpAddress> IpAddress::from_sort_key(std::string_view key) {
  if (key.size() != 33 || (key[0] != '4' && key[0] != '6')) return std::nullopt;
  uint128 v = 0;
  for (std::size_t i = 1; i < key.size(); ++i) {
    const char c = key[i];
    unsigned d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    v = (v << 4) | d;
  }
  const IpFamily f = key[0] == '4' ? IpFamily::v4 : IpFamily::v6;
  if (v > max_value(f)) return std::nullopt;
  return IpAddress(f, v);
}

std::optional<IpAddress> IpAddress::next() const {
  if (value_ == max_value(family_)) return std::nullopt;
  return IpAddress(family_, value_ + 1);
}

std::optional<IpAddress> IpAddress::prev() const {
  if (value_ == 0) return std::nullopt;
  return IpAddress(family_, value_ - 1);
}

tl::expected<IpPrefix, std::string> IpPrefix::parse(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    return tl::unexpected("'" + std::string(text) + "' has no prefix length (expected address/length)");
  }
  auto addr = IpAddress::parse(text.substr(0, slash));
  if (!addr) return tl::unexpected(addr.error());
  const auto len_text = text.substr(slash + 1);
  // Decimal digits only: no sign (std::from_chars would read "-0" as 0), no leading zero, no spaces.
  const bool digits_only = !len_text.empty() && len_text.size() <= 3 &&
                           len_text.find_first_not_of("0123456789") == std::string_view::npos &&
                           (len_text.size() == 1 || len_text.front() != '0');
  int length = -1;
  if (digits_only) {
    length = 0;
    for (char c : len_text) length = length * 10 + (c - '0');
  }
  if (!digits_only || length < 0 || length > addr->bits()) {
    return tl::unexpected("prefix length '" + std::string(len_text) + "' must be 0.." +
                          std::to_string(addr->bits()));
  }
  if ((addr->value() & host_mask(addr->family(), length)) != 0) {
    const IpAddress net(addr->family(), addr->value() & ~host_mask(addr->family(), length));
    return tl::unexpected("'" + std::string(text) + "' has host bits set (did you mean " + net.to_string() +
                          "/" + std::to_string(length) + "?)");
  }
  return IpPrefix(*addr, length);
}

IpAddress IpPrefix::last() const {
  return IpAddress(family(), network_.value() | host_mask(family(), length_));
}

bool IpPrefix::contains(const IpAddress& a) const {
  return a.family() == family() && (a.value() & ~host_mask(family(), length_)) == network_.value();
}

bool IpPrefix::overlaps(const IpPrefix& other) const {
  return other.family() == family() && (contains(other.network_) || other.contains(network_));
}

std::string IpPrefix::to_string() const {
  return network_.to_string() + "/" + std::to_string(length_);
}

std::uint64_t IpRange::size() const {
  const uint128 n = last.value() - first.value();
  if (n >= std::numeric_limits<std::uint64_t>::max()) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(n) + 1;
}

std::optional<IpRange> default_host_range(const IpPrefix& prefix) {
  IpAddress first = prefix.first();
  IpAddress last = prefix.last();
  if (prefix.family() == IpFamily::v4) {
    if (prefix.length() >= 31) return IpRange{first, last};
    first = *first.next();
    last = *last.prev();
  } else {
    // RFC 6164: both addresses of a /127 are usable (as for an IPv4 /31); otherwise the network
    // address is the Subnet-Router anycast address and is not handed out.
    if (prefix.length() >= 127) return IpRange{first, last};
    first = *first.next();
  }
  return IpRange{first, last};
}

namespace {

// Special-purpose ranges (IANA's IPv4 and IPv6 special-purpose address registries, RFC 6890) that can
// never hold a parameter-plane subnet, with the reason an operator is shown. Where one range lies
// inside another, the inner one comes first, so an address or prefix is named by the closest range.
// Deliberately absent, because a cluster may number hosts from them: private (10/8, 172.16/12,
// 192.168/16), shared (100.64.0.0/10), benchmarking (198.18.0.0/15, 2001:2::/48), documentation
// (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20; the tests and demos use
// them), unique local (fc00::/7) and any public unicast range.
struct SpecialRange {
  const char* cidr;
  const char* why;
};

constexpr SpecialRange kSpecialRanges[] = {
    {"0.0.0.0/8", "\"this network\" (RFC 1122): a source address while a host has none, never a host's own"},
    {"127.0.0.0/8", "loopback (RFC 1122): never leaves the host"},
    {"169.254.0.0/16", "link-local (RFC 3927): the kernel's zero-configuration addresses, not routed"},
    {"192.0.0.0/24", "IETF protocol assignments (RFC 6890), not for numbering hosts"},
    {"192.88.99.0/24", "6to4 relay anycast (RFC 7526)"},
    {"224.0.0.0/4", "multicast (RFC 5771): group addresses, never a host's own"},
    {"255.255.255.255/32", "the limited broadcast address (RFC 919)"},
    {"240.0.0.0/4", "reserved for future use (RFC 1112): many stacks and switches drop it"},
    {"::/128", "the unspecified address (RFC 4291)"},
    {"::1/128", "the loopback address (RFC 4291): never leaves the host"},
    {"::/96", "IPv4-compatible addresses (deprecated, RFC 4291 2.5.5.1)"},
    {"::ffff:0:0/96",
     "IPv4-mapped addresses (RFC 4291 2.5.5.2): IPv4 peers of dual-stack sockets, never on the wire"},
    {"64:ff9b::/96", "the NAT64 well-known prefix (RFC 6052): IPv4 hosts behind a translator"},
    {"64:ff9b:1::/48", "local-use NAT64 (RFC 8215): IPv4 hosts behind a translator"},
    {"100::/64", "discard-only (RFC 6666)"},
    {"2001::/32", "Teredo (RFC 4380): addresses derived from IPv4 tunnel endpoints"},
    {"2002::/16", "6to4 (RFC 3056): addresses derived from IPv4 addresses"},
    {"fe80::/10", "link-local (RFC 4291): every interface has its own, not routed"},
    {"fec0::/10", "site-local (deprecated, RFC 3879)"},
    {"ff00::/8", "multicast (RFC 4291): group addresses, never a host's own"},
};

// IPv6 unicast space assigned for use; the IETF reserves the rest (RFC 4291, IANA IPv6 address space).
constexpr const char* kIpv6UnicastSpace[] = {"2000::/3", "fc00::/7"};

struct ParsedRange {
  IpPrefix prefix;
  const char* why;
};

const std::vector<ParsedRange>& special_ranges() {
  static const std::vector<ParsedRange> ranges = [] {
    std::vector<ParsedRange> out;
    for (const auto& r : kSpecialRanges) out.push_back({IpPrefix::parse(r.cidr).value(), r.why});
    return out;
  }();
  return ranges;
}

bool inside(const IpPrefix& inner, const IpPrefix& outer) {
  return outer.length() <= inner.length() && outer.contains(inner.network());
}

bool in_ipv6_unicast_space(const IpPrefix& p) {
  static const std::array<IpPrefix, 2> spaces = {IpPrefix::parse(kIpv6UnicastSpace[0]).value(),
                                                 IpPrefix::parse(kIpv6UnicastSpace[1]).value()};
  return inside(p, spaces[0]) || inside(p, spaces[1]);
}

constexpr const char* kOutsideIpv6UnicastSpace =
    "outside the IPv6 unicast space in use, global unicast 2000::/3 and unique local fc00::/7 (the IETF "
    "reserves the rest, RFC 4291)";

// The first special range `p` lies in, or nullptr.
const ParsedRange* enclosing_range(const IpPrefix& p) {
  for (const auto& r : special_ranges()) {
    if (inside(p, r.prefix)) return &r;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> check_subnet_prefix(const IpPrefix& prefix) {
  const std::string text = prefix.to_string();
  if (const auto* r = enclosing_range(prefix)) {
    return text + " is inside " + r->prefix.to_string() + ", " + r->why;
  }
  for (const auto& r : special_ranges()) {
    if (prefix.overlaps(r.prefix)) return text + " overlaps " + r.prefix.to_string() + ", " + r.why;
  }
  if (prefix.family() == IpFamily::v6 && !in_ipv6_unicast_space(prefix)) {
    return text + " is " + kOutsideIpv6UnicastSpace;
  }
  return std::nullopt;
}

std::optional<std::string> check_unicast_address(const IpAddress& address) {
  const IpPrefix single(address, address.bits());
  if (const auto* r = enclosing_range(single)) {
    return address.to_string() + " is inside " + r->prefix.to_string() + ", " + r->why;
  }
  if (address.family() == IpFamily::v6 && !in_ipv6_unicast_space(single)) {
    return address.to_string() + " is " + kOutsideIpv6UnicastSpace;
  }
  return std::nullopt;
}

std::optional<std::string> check_host_address(const IpPrefix& subnet, const IpAddress& address) {
  const std::string text = address.to_string();
  const std::string cidr = subnet.to_string();
  if (!subnet.contains(address)) return text + " is outside " + cidr;
  const auto usable = default_host_range(subnet);
  if (!usable || !usable->contains(address)) {
    std::string what;
    if (address == subnet.first()) {
      what = subnet.family() == IpFamily::v4
                 ? "the network address"
                 : "the Subnet-Router anycast address (all host bits zero, RFC 4291 2.6.1), which routers "
                   "answer for the whole subnet";
    } else {
      what = "the broadcast address";
    }
    return text + " is not a usable host address of " + cidr + ": it is " + what;
  }
  return check_unicast_address(address);
}

}  // namespace hsns
