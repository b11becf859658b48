// Unit tests for hsns/ip.h: parsing and printing, sort keys, neighbours, prefixes and ranges.
#include "hsns/ip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace hsns {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

IpAddress addr(std::string_view text) {
  auto a = IpAddress::parse(text);
  EXPECT_TRUE(a.has_value()) << text << ": " << (a ? "" : a.error());
  return a.value_or(IpAddress{});
}

IpPrefix prefix(std::string_view text) {
  auto p = IpPrefix::parse(text);
  EXPECT_TRUE(p.has_value()) << text << ": " << (p ? "" : p.error());
  return p.value_or(IpPrefix{});
}

std::string str(const std::optional<IpRange>& r) {
  if (!r) return "none";
  return r->first.to_string() + "-" + r->last.to_string();
}

uint128 v6(std::uint64_t high, std::uint64_t low) {
  return (uint128{high} << 64) | low;
}

// ---------------------------------------------------------------------------------------------------
// IpAddress::parse and to_string

TEST(IpAddressParse, Ipv4DottedQuad) {
  const auto a = addr("192.168.1.10");
  EXPECT_EQ(a.family(), IpFamily::v4);
  EXPECT_EQ(a.bits(), 32);
  EXPECT_TRUE(a.value() == 0xC0A8010Au);
  EXPECT_EQ(a.to_string(), "192.168.1.10");
  EXPECT_EQ(addr("0.0.0.0").to_string(), "0.0.0.0");
  EXPECT_TRUE(addr("0.0.0.0").value() == 0);
  EXPECT_EQ(addr("255.255.255.255").to_string(), "255.255.255.255");
  EXPECT_TRUE(addr("255.255.255.255").value() == 0xFFFFFFFFu);
}

TEST(IpAddressParse, Ipv6Value) {
  const auto a = addr("2001:db8::1");
  EXPECT_EQ(a.family(), IpFamily::v6);
  EXPECT_EQ(a.bits(), 128);
  EXPECT_TRUE(a.value() == v6(0x20010db800000000ULL, 1));
  EXPECT_TRUE(addr("::").value() == 0);
  EXPECT_TRUE(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").value() == ~uint128{0});
  // An IPv4-mapped address is an IPv6 address, not the IPv4 one.
  const auto mapped = addr("::ffff:10.0.0.1");
  EXPECT_EQ(mapped.family(), IpFamily::v6);
  EXPECT_TRUE(mapped.value() == v6(0, 0x0000FFFF0A000001ULL));
}

struct PrintCase {
  const char* input;
  const char* canonical;
};

void PrintTo(const PrintCase& c, std::ostream* os) {
  *os << c.input << " -> " << c.canonical;
}

class Rfc5952Print : public ::testing::TestWithParam<PrintCase> {};

TEST_P(Rfc5952Print, CanonicalText) {
  const auto& c = GetParam();
  const auto a = addr(c.input);
  EXPECT_EQ(a.to_string(), c.canonical) << "input " << c.input;
  // The canonical text parses back to the same address and prints identically.
  const auto again = IpAddress::parse(a.to_string());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, a);
  EXPECT_EQ(again->to_string(), c.canonical);
}

INSTANTIATE_TEST_SUITE_P(
    Ipv6, Rfc5952Print,
    ::testing::Values(
        // 4.1: leading zeros suppressed; 4.3: lower case.
        PrintCase{"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
        PrintCase{"2001:DB8:AB:CD:EF:AbCd:0:1", "2001:db8:ab:cd:ef:abcd:0:1"},
        // 4.2.1: "::" shortens as much as possible.
        PrintCase{"2001:db8:0:0:0:0:2:1", "2001:db8::2:1"},
        // 4.2.2: a single zero word is not shortened.
        PrintCase{"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
        // 4.2.3: the longest run is shortened; of equal runs, the first.
        PrintCase{"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},
        PrintCase{"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
        // Runs at either end and the extremes.
        PrintCase{"0:0:0:0:0:0:0:0", "::"}, PrintCase{"0:0:0:0:0:0:0:1", "::1"},
        PrintCase{"1:0:0:0:0:0:0:0", "1::"}, PrintCase{"fe80:0:0:0:0:0:0:0", "fe80::"},
        PrintCase{"0:0:1:0:0:0:0:0", "0:0:1::"},
        PrintCase{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
        PrintCase{"fd00:1:2:3:4:5:6:7", "fd00:1:2:3:4:5:6:7"},
        // 5: mixed notation for IPv4-mapped addresses only.
        PrintCase{"::ffff:192.0.2.1", "::ffff:192.0.2.1"}, PrintCase{"::ffff:c000:0201", "::ffff:192.0.2.1"},
        PrintCase{"::ffff:0.0.0.0", "::ffff:0.0.0.0"},
        // The deprecated IPv4-compatible form and the NAT64 prefix print in hexadecimal.
        PrintCase{"::192.0.2.1", "::c000:201"}, PrintCase{"64:ff9b::192.0.2.1", "64:ff9b::c000:201"},
        PrintCase{"::ffff:0:1", "::ffff:0.0.0.1"}, PrintCase{"0:0:0:0:ffff:0:0:1", "::ffff:0:0:1"},
        PrintCase{"0:0:0:0:1:ffff:c000:201", "::1:ffff:c000:201"}));

TEST(IpAddressParse, RejectsMalformedText) {
  const std::vector<std::string> bad = {
      "",
      " 10.0.0.1",
      "10.0.0.1 ",
      "10.0.0",
      "10.0.0.1.2",
      "256.0.0.1",
      "010.0.0.1",  // leading zeros are ambiguous (octal in some parsers)
      "10.0.0.-1",
      "10.0.0.1/32",
      "0x0a.0.0.1",
      "1::2::3",
      "12345::",
      "g::1",
      ":::",
      "1:2:3:4:5:6:7:8:9",
      "::ffff:1.2.3",
      "fe80::1%eth0",
      "localhost",
      std::string("10.0.0.1\0junk", 13),  // an embedded NUL must not cut the text short
      std::string("::1\0", 4),
  };
  for (const auto& text : bad) {
    const auto a = IpAddress::parse(text);
    EXPECT_FALSE(a.has_value()) << "accepted '" << text << "' as " << a->to_string();
    if (!a) {
      EXPECT_FALSE(a.error().empty());
    }
  }
  EXPECT_NE(IpAddress::parse("nonsense").error().find("'nonsense'"), std::string::npos);
  EXPECT_NE(IpAddress::parse("fe80::1%2").error().find("zone"), std::string::npos);
}

TEST(IpAddress, DefaultAndComparison) {
  const IpAddress def;
  EXPECT_EQ(def.family(), IpFamily::v4);
  EXPECT_TRUE(def.value() == 0);
  EXPECT_LT(addr("10.0.0.1"), addr("10.0.0.2"));
  EXPECT_LT(addr("9.255.255.255"), addr("10.0.0.0"));
  // Every IPv4 address orders before every IPv6 address, whatever the numeric value.
  EXPECT_LT(addr("255.255.255.255"), addr("::"));
  EXPECT_NE(IpAddress(IpFamily::v4, 1), IpAddress(IpFamily::v6, 1));
}

// ---------------------------------------------------------------------------------------------------
// sort_key

TEST(IpAddressSortKey, Format) {
  EXPECT_EQ(addr("10.0.0.1").sort_key(), "4" + std::string(24, '0') + "0a000001");
  EXPECT_EQ(addr("::").sort_key(), "6" + std::string(32, '0'));
  EXPECT_EQ(addr("2001:db8::ff").sort_key(),
            "6"
            "20010db8" +
                std::string(22, '0') + "ff");
  EXPECT_EQ(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").sort_key(), "6" + std::string(32, 'f'));
  EXPECT_EQ(addr("10.0.0.1").sort_key().size(), 33u);
}

TEST(IpAddressSortKey, RoundTrip) {
  for (const char* text :
       {"0.0.0.0", "10.1.2.3", "255.255.255.255", "::", "::1", "2001:db8::1", "::ffff:10.0.0.1",
        "fd00:aaaa:bbbb:cccc:dddd:eeee:ffff:1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}) {
    const auto a = addr(text);
    const auto back = IpAddress::from_sort_key(a.sort_key());
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, a) << text;
    EXPECT_EQ(back->to_string(), a.to_string());
  }
}

TEST(IpAddressSortKey, RejectsBadKeys) {
  const std::string good = addr("10.0.0.1").sort_key();
  EXPECT_TRUE(IpAddress::from_sort_key(good).has_value());
  EXPECT_FALSE(IpAddress::from_sort_key("").has_value());
  EXPECT_FALSE(IpAddress::from_sort_key(good.substr(0, 32)).has_value());
  EXPECT_FALSE(IpAddress::from_sort_key(good + "0").has_value());
  EXPECT_FALSE(IpAddress::from_sort_key("5" + good.substr(1)).has_value());              // unknown family
  EXPECT_FALSE(IpAddress::from_sort_key("4" + std::string(31, '0') + "A").has_value());  // upper case
  EXPECT_FALSE(IpAddress::from_sort_key("4" + std::string(31, '0') + "g").has_value());
  EXPECT_FALSE(IpAddress::from_sort_key("4" + std::string(31, '0') + " ").has_value());
  // An IPv4 key whose value does not fit in 32 bits.
  EXPECT_FALSE(IpAddress::from_sort_key("4" + std::string(23, '0') + "100000000").has_value());
  EXPECT_FALSE(IpAddress::from_sort_key("4" + std::string(32, 'f')).has_value());
  EXPECT_TRUE(IpAddress::from_sort_key("4" + std::string(24, '0') + "ffffffff").has_value());
}

TEST(IpAddressSortKey, OrderMatchesAddressOrder) {
  std::mt19937_64 rng(20240229);
  std::vector<IpAddress> all;
  for (int i = 0; i < 500; ++i) {
    const bool is_v4 = (rng() & 1) != 0;
    // Bias towards small values and shared prefixes so that neighbouring keys differ late.
    uint128 v = is_v4 ? uint128{rng() & 0xFFFFFFFFu} : v6(rng(), rng());
    if (i % 3 == 0) v &= 0xFFFF;
    all.emplace_back(is_v4 ? IpFamily::v4 : IpFamily::v6, v);
  }
  all.push_back(addr("0.0.0.0"));
  all.push_back(addr("255.255.255.255"));
  all.push_back(addr("::"));
  all.push_back(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
  auto by_key = all;
  std::sort(all.begin(), all.end());
  std::sort(by_key.begin(), by_key.end(),
            [](const IpAddress& a, const IpAddress& b) { return a.sort_key() < b.sort_key(); });
  EXPECT_EQ(all, by_key);
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    EXPECT_EQ(all[i] < all[i + 1], all[i].sort_key() < all[i + 1].sort_key());
    EXPECT_EQ(all[i] == all[i + 1], all[i].sort_key() == all[i + 1].sort_key());
  }
}

// ---------------------------------------------------------------------------------------------------
// next / prev

TEST(IpAddressNeighbours, Ipv4) {
  EXPECT_EQ(addr("10.0.0.255").next()->to_string(), "10.0.1.0");
  EXPECT_EQ(addr("10.0.1.0").prev()->to_string(), "10.0.0.255");
  EXPECT_EQ(addr("0.0.0.0").next()->to_string(), "0.0.0.1");
  EXPECT_FALSE(addr("0.0.0.0").prev().has_value());
  EXPECT_EQ(addr("255.255.255.255").prev()->to_string(), "255.255.255.254");
  // The end of the IPv4 space does not wrap and does not continue into IPv6.
  EXPECT_FALSE(addr("255.255.255.255").next().has_value());
  EXPECT_EQ(addr("10.0.0.1").next()->family(), IpFamily::v4);
}

TEST(IpAddressNeighbours, Ipv6) {
  EXPECT_FALSE(addr("::").prev().has_value());
  EXPECT_EQ(addr("::").next()->to_string(), "::1");
  EXPECT_FALSE(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").next().has_value());
  EXPECT_EQ(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").prev()->to_string(),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe");
  EXPECT_EQ(addr("2001:db8::ffff:ffff:ffff:ffff").next()->to_string(), "2001:db8:0:1::");
  EXPECT_EQ(addr("2001:db8:0:1::").prev()->to_string(), "2001:db8::ffff:ffff:ffff:ffff");
  // Numerically past 2^32, an IPv6 address just keeps counting.
  EXPECT_EQ(addr("::ffff:ffff").next()->to_string(), "::1:0:0");
  EXPECT_EQ(addr("::1").next()->family(), IpFamily::v6);
}

// ---------------------------------------------------------------------------------------------------
// IpPrefix

TEST(IpPrefixParse, Valid) {
  const auto p = prefix("10.20.0.0/16");
  EXPECT_EQ(p.family(), IpFamily::v4);
  EXPECT_EQ(p.length(), 16);
  EXPECT_EQ(p.network().to_string(), "10.20.0.0");
  EXPECT_EQ(p.first().to_string(), "10.20.0.0");
  EXPECT_EQ(p.last().to_string(), "10.20.255.255");
  EXPECT_EQ(p.to_string(), "10.20.0.0/16");

  const auto q = prefix("2001:DB8:0::/32");
  EXPECT_EQ(q.family(), IpFamily::v6);
  EXPECT_EQ(q.length(), 32);
  EXPECT_EQ(q.to_string(), "2001:db8::/32");
  EXPECT_EQ(q.last().to_string(), "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");

  EXPECT_EQ(prefix("0.0.0.0/0").last().to_string(), "255.255.255.255");
  EXPECT_EQ(prefix("::/0").last().to_string(), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  EXPECT_EQ(prefix("10.0.0.7/32").last().to_string(), "10.0.0.7");
  EXPECT_EQ(prefix("2001:db8::7/128").last().to_string(), "2001:db8::7");
  EXPECT_EQ(prefix("fd00:1::/64").last().to_string(), "fd00:1::ffff:ffff:ffff:ffff");
  EXPECT_EQ(prefix("10.0.0.0/8"), IpPrefix(addr("10.0.0.0"), 8));
  EXPECT_FALSE(prefix("10.0.0.0/8") == prefix("10.0.0.0/9"));
}

TEST(IpPrefixParse, HostBitsSetSuggestsTheNetwork) {
  const auto p = IpPrefix::parse("198.18.0.1/24");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().find("host bits"), std::string::npos) << p.error();
  EXPECT_NE(p.error().find("did you mean 198.18.0.0/24?"), std::string::npos) << p.error();

  const auto q = IpPrefix::parse("2001:db8::1/64");
  ASSERT_FALSE(q.has_value());
  EXPECT_NE(q.error().find("did you mean 2001:db8::/64?"), std::string::npos) << q.error();

  const auto r = IpPrefix::parse("10.0.0.128/0");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("did you mean 0.0.0.0/0?"), std::string::npos) << r.error();

  const auto s = IpPrefix::parse("10.255.255.255/31");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("did you mean 10.255.255.254/31?"), std::string::npos) << s.error();
}

TEST(IpPrefixParse, BadLengths) {
  const std::vector<std::string> bad_v4 = {"10.0.0.0/33",   "10.0.0.0/-1",  "10.0.0.0/-0",
                                           "10.0.0.0/",     "10.0.0.0/abc", "10.0.0.0/24 ",
                                           "10.0.0.0/ 24",  "10.0.0.0/+24", "10.0.0.0/024",
                                           "10.0.0.0/24/8", "10.0.0.0/2.4", "10.0.0.0/99999999999999999999"};
  for (const auto& text : bad_v4) {
    const auto p = IpPrefix::parse(text);
    ASSERT_FALSE(p.has_value()) << "accepted " << text << " as " << p->to_string();
    EXPECT_NE(p.error().find("must be 0..32"), std::string::npos) << text << ": " << p.error();
  }
  for (const std::string text : {"::/129", "::/-1", "::/", "::/1280"}) {
    const auto p = IpPrefix::parse(text);
    ASSERT_FALSE(p.has_value()) << text;
    EXPECT_NE(p.error().find("must be 0..128"), std::string::npos) << text << ": " << p.error();
  }
  // A leading zero is refused, but "0" itself is a valid length.
  EXPECT_TRUE(IpPrefix::parse("0.0.0.0/0").has_value());
  EXPECT_TRUE(IpPrefix::parse("::/128").has_value());
  EXPECT_TRUE(IpPrefix::parse("0.0.0.0/32").has_value());
}

TEST(IpPrefixParse, MissingSlashAndBadAddress) {
  const auto p = IpPrefix::parse("10.0.0.0");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().find("no prefix length"), std::string::npos) << p.error();
  EXPECT_FALSE(IpPrefix::parse("").has_value());
  EXPECT_FALSE(IpPrefix::parse("/24").has_value());
  EXPECT_FALSE(IpPrefix::parse("10.0.0/24").has_value());
  EXPECT_FALSE(IpPrefix::parse("10.0.0.0 /24").has_value());
  EXPECT_FALSE(IpPrefix::parse("fe80::%eth0/64").has_value());
  EXPECT_FALSE(IpPrefix::parse(std::string("10.0.0.0\0/8", 11)).has_value());
}

TEST(IpPrefix, ContainsWithinOneFamily) {
  const auto p = prefix("10.0.0.0/24");
  EXPECT_TRUE(p.contains(addr("10.0.0.0")));
  EXPECT_TRUE(p.contains(addr("10.0.0.77")));
  EXPECT_TRUE(p.contains(addr("10.0.0.255")));
  EXPECT_FALSE(p.contains(addr("10.0.1.0")));
  EXPECT_FALSE(p.contains(addr("9.255.255.255")));
  EXPECT_TRUE(prefix("0.0.0.0/0").contains(addr("255.255.255.255")));
  EXPECT_TRUE(prefix("10.0.0.5/32").contains(addr("10.0.0.5")));
  EXPECT_FALSE(prefix("10.0.0.5/32").contains(addr("10.0.0.4")));

  const auto q = prefix("fd00:1::/64");
  EXPECT_TRUE(q.contains(addr("fd00:1::")));
  EXPECT_TRUE(q.contains(addr("fd00:1::ffff:ffff:ffff:ffff")));
  EXPECT_FALSE(q.contains(addr("fd00:1:0:1::")));
  EXPECT_TRUE(prefix("::/0").contains(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
}

TEST(IpPrefix, ContainsAcrossFamilies) {
  // The same numeric value in the other family is never contained.
  EXPECT_FALSE(prefix("10.0.0.0/24").contains(IpAddress(IpFamily::v6, 0x0A000001u)));
  EXPECT_FALSE(prefix("10.0.0.0/24").contains(addr("::ffff:10.0.0.1")));
  EXPECT_FALSE(prefix("0.0.0.0/0").contains(addr("::")));
  EXPECT_FALSE(prefix("::/0").contains(addr("0.0.0.0")));
  EXPECT_FALSE(prefix("::/96").contains(addr("10.0.0.1")));
}

TEST(IpPrefix, Overlaps) {
  const auto big = prefix("10.0.0.0/8");
  const auto small = prefix("10.1.0.0/16");
  EXPECT_TRUE(big.overlaps(small));
  EXPECT_TRUE(small.overlaps(big));
  EXPECT_TRUE(big.overlaps(big));
  EXPECT_FALSE(prefix("10.0.0.0/24").overlaps(prefix("10.0.1.0/24")));
  EXPECT_FALSE(prefix("10.0.1.0/24").overlaps(prefix("10.0.0.0/24")));
  EXPECT_TRUE(prefix("0.0.0.0/0").overlaps(prefix("192.168.0.0/16")));
  EXPECT_TRUE(prefix("fd00::/8").overlaps(prefix("fd00:1::/64")));
  EXPECT_FALSE(prefix("fd00:1::/64").overlaps(prefix("fd00:2::/64")));
  // Across families nothing overlaps, not even the two default routes or equal numeric values.
  EXPECT_FALSE(prefix("0.0.0.0/0").overlaps(prefix("::/0")));
  EXPECT_FALSE(prefix("::/0").overlaps(prefix("0.0.0.0/0")));
  EXPECT_FALSE(prefix("10.0.0.0/24").overlaps(IpPrefix(IpAddress(IpFamily::v6, 0x0A000000u), 120)));
}

// ---------------------------------------------------------------------------------------------------
// IpRange and default_host_range

TEST(IpRange, ContainsAndOverlaps) {
  const IpRange r{addr("10.0.0.10"), addr("10.0.0.20")};
  EXPECT_TRUE(r.contains(addr("10.0.0.10")));
  EXPECT_TRUE(r.contains(addr("10.0.0.20")));
  EXPECT_FALSE(r.contains(addr("10.0.0.9")));
  EXPECT_FALSE(r.contains(addr("10.0.0.21")));
  EXPECT_FALSE(r.contains(IpAddress(IpFamily::v6, addr("10.0.0.15").value())));

  EXPECT_TRUE(r.overlaps({addr("10.0.0.20"), addr("10.0.0.30")}));  // shares one address
  EXPECT_TRUE(r.overlaps({addr("10.0.0.0"), addr("10.0.0.10")}));
  EXPECT_TRUE(r.overlaps({addr("10.0.0.12"), addr("10.0.0.13")}));  // inside
  EXPECT_TRUE(r.overlaps({addr("10.0.0.0"), addr("10.0.0.255")}));  // around
  EXPECT_FALSE(r.overlaps({addr("10.0.0.21"), addr("10.0.0.30")}));
  EXPECT_FALSE(r.overlaps({addr("10.0.0.0"), addr("10.0.0.9")}));
  const IpRange same_numbers_v6{IpAddress(IpFamily::v6, r.first.value()),
                                IpAddress(IpFamily::v6, r.last.value())};
  EXPECT_FALSE(r.overlaps(same_numbers_v6));
  EXPECT_FALSE(same_numbers_v6.overlaps(r));
}

TEST(IpRange, SizeAndSaturation) {
  EXPECT_EQ((IpRange{addr("10.0.0.1"), addr("10.0.0.1")}.size()), 1u);
  EXPECT_EQ((IpRange{addr("10.0.0.1"), addr("10.0.0.254")}.size()), 254u);
  EXPECT_EQ((IpRange{addr("0.0.0.0"), addr("255.255.255.255")}.size()), std::uint64_t{1} << 32);
  EXPECT_EQ((IpRange{addr("fd00::1"), addr("fd00::ffff:ffff:ffff:ffff")}.size()), kU64Max);  // 2^64 - 1
  // The largest exact value below the saturation point.
  EXPECT_EQ((IpRange{IpAddress(IpFamily::v6, 0), IpAddress(IpFamily::v6, kU64Max - 2)}.size()), kU64Max - 1);
  EXPECT_EQ((IpRange{IpAddress(IpFamily::v6, 0), IpAddress(IpFamily::v6, kU64Max - 1)}.size()), kU64Max);
  // 2^64 addresses and beyond saturate.
  EXPECT_EQ((IpRange{addr("fd00::"), addr("fd00::ffff:ffff:ffff:ffff")}.size()), kU64Max);
  EXPECT_EQ((IpRange{addr("fd00::"), addr("fd00::1:0:0:0:0")}.size()), kU64Max);
  EXPECT_EQ((IpRange{addr("::"), addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")}.size()), kU64Max);
}

TEST(DefaultHostRange, Ipv4) {
  EXPECT_EQ(str(default_host_range(prefix("10.0.0.0/24"))), "10.0.0.1-10.0.0.254");
  EXPECT_EQ(str(default_host_range(prefix("10.0.0.0/30"))), "10.0.0.1-10.0.0.2");
  EXPECT_EQ(str(default_host_range(prefix("10.0.0.4/30"))), "10.0.0.5-10.0.0.6");
  // RFC 3021: both addresses of a /31 are usable; a /32 is the one address.
  EXPECT_EQ(str(default_host_range(prefix("10.0.0.0/31"))), "10.0.0.0-10.0.0.1");
  EXPECT_EQ(str(default_host_range(prefix("10.0.0.9/32"))), "10.0.0.9-10.0.0.9");
  EXPECT_EQ(str(default_host_range(prefix("0.0.0.0/0"))), "0.0.0.1-255.255.255.254");
  EXPECT_EQ(default_host_range(prefix("10.0.0.0/24"))->size(), 254u);
  EXPECT_EQ(default_host_range(prefix("10.0.0.0/30"))->size(), 2u);
}

TEST(DefaultHostRange, Ipv6) {
  // The Subnet-Router anycast address (the network address) is skipped; IPv6 has no broadcast.
  EXPECT_EQ(str(default_host_range(prefix("fd00:1::/64"))), "fd00:1::1-fd00:1::ffff:ffff:ffff:ffff");
  EXPECT_EQ(default_host_range(prefix("fd00:1::/64"))->size(), kU64Max);
  EXPECT_EQ(str(default_host_range(prefix("fd00:1::/126"))), "fd00:1::1-fd00:1::3");
  // RFC 6164: both addresses of a point-to-point /127 are usable.
  EXPECT_EQ(str(default_host_range(prefix("fd00:1::/127"))), "fd00:1::-fd00:1::1");
  EXPECT_EQ(str(default_host_range(prefix("fd00:1::5/128"))), "fd00:1::5-fd00:1::5");
  EXPECT_EQ(str(default_host_range(prefix("::/0"))), "::1-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(DefaultHostRange, AlwaysInsideThePrefix) {
  for (int len = 0; len <= 32; ++len) {
    const IpPrefix p(addr("0.0.0.0"), len);
    const auto r = default_host_range(p);
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(p.contains(r->first) && p.contains(r->last)) << p.to_string();
    EXPECT_LE(r->first, r->last);
  }
  for (int len = 0; len <= 128; ++len) {
    const IpPrefix p(IpAddress(IpFamily::v6, 0), len);
    const auto r = default_host_range(p);
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(p.contains(r->first) && p.contains(r->last)) << p.to_string();
    EXPECT_LE(r->first, r->last);
  }
}

// ---------------------------------------------------------------------------------------------------
// Address rules: which prefixes may be subnets and which addresses hosts may have.

struct Refused {
  const char* cidr;
  const char* range;   // the special-purpose range the reason names
  const char* reason;  // a word of the reason
};

TEST(CheckSubnetPrefix, RefusesSpecialPurposeRangesWithTheirReason) {
  const std::vector<Refused> cases = {
      // IPv4
      {"0.0.0.0/8", "0.0.0.0/8", "this network"},
      {"0.1.2.0/24", "0.0.0.0/8", "this network"},
      {"127.0.0.0/8", "127.0.0.0/8", "loopback"},
      {"127.10.0.0/16", "127.0.0.0/8", "loopback"},
      {"169.254.0.0/16", "169.254.0.0/16", "link-local"},
      {"169.254.10.0/24", "169.254.0.0/16", "link-local"},
      {"192.0.0.0/24", "192.0.0.0/24", "IETF protocol assignments"},
      {"192.88.99.0/24", "192.88.99.0/24", "6to4 relay anycast"},
      {"224.0.0.0/24", "224.0.0.0/4", "multicast"},
      {"239.1.0.0/16", "224.0.0.0/4", "multicast"},
      {"240.0.0.0/4", "240.0.0.0/4", "reserved for future use"},
      {"250.1.2.0/24", "240.0.0.0/4", "reserved for future use"},
      {"255.255.255.255/32", "255.255.255.255/32", "limited broadcast"},
      {"255.255.255.0/24", "240.0.0.0/4", "reserved for future use"},
      // IPv4 prefixes that are larger than a special range and contain it.
      {"0.0.0.0/0", "0.0.0.0/8", "overlaps"},
      {"192.0.0.0/16", "192.0.0.0/24", "overlaps"},
      {"224.0.0.0/3", "224.0.0.0/4", "overlaps"},
      {"126.0.0.0/7", "127.0.0.0/8", "overlaps"},
      // IPv6
      {"::/128", "::/128", "unspecified"},
      {"::1/128", "::1/128", "loopback"},
      {"::/96", "::/96", "IPv4-compatible"},  // the range it is, not the smaller ones it contains
      {"::10.0.0.0/120", "::/96", "IPv4-compatible"},
      {"::ffff:0:0/96", "::ffff:0.0.0.0/96", "IPv4-mapped"},
      {"::ffff:10.10.0.0/120", "::ffff:0.0.0.0/96", "IPv4-mapped"},
      {"64:ff9b::/96", "64:ff9b::/96", "NAT64"},
      {"64:ff9b:1::/64", "64:ff9b:1::/48", "NAT64"},
      {"100::/64", "100::/64", "discard-only"},
      {"2001::/32", "2001::/32", "Teredo"},
      {"2001:0:1::/64", "2001::/32", "Teredo"},
      {"2002::/16", "2002::/16", "6to4"},
      {"2002:c000:201::/64", "2002::/16", "6to4"},
      {"fe80::/10", "fe80::/10", "link-local"},
      {"fe80::/64", "fe80::/10", "link-local"},
      {"fec0::/64", "fec0::/10", "site-local"},
      {"ff00::/8", "ff00::/8", "multicast"},
      {"ff02::/64", "ff00::/8", "multicast"},
      {"::/0", "::/128", "overlaps"},
      {"2000::/3", "2001::/32", "overlaps"},  // contains Teredo and 6to4
      {"2000::/15", "2001::/32", "overlaps"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cidr);
    const auto why = check_subnet_prefix(prefix(c.cidr));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->find(prefix(c.cidr).to_string() + " "), 0u) << *why;  // names the subnet first
    EXPECT_NE(why->find(c.range), std::string::npos) << *why;
    EXPECT_NE(why->find(c.reason), std::string::npos) << *why;
  }
}

TEST(CheckSubnetPrefix, RefusesIpv6OutsideTheUnicastSpaceInUse) {
  for (const char* cidr :
       {"4000::/3", "4000::/64", "e000::/64", "1000::/64", "200::/7", "fe00::/64", "::2:0:0/96"}) {
    SCOPED_TRACE(cidr);
    const auto why = check_subnet_prefix(prefix(cidr));
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("2000::/3"), std::string::npos) << *why;
    EXPECT_NE(why->find("fc00::/7"), std::string::npos) << *why;
  }
}

TEST(CheckSubnetPrefix, AllowsPrivateDocumentationBenchmarkingAndPublicRanges) {
  for (const char* cidr :
       {// private and shared
        "10.0.0.0/8", "10.20.0.0/24", "172.16.0.0/12", "192.168.1.0/24", "100.64.0.0/10",
        // benchmarking (the project's tests and demos) and documentation
        "198.18.0.0/15", "198.18.0.0/24", "198.19.255.0/24", "192.0.2.0/24", "198.51.100.0/24",
        "203.0.113.0/24",
        // public unicast, including neighbours of refused ranges
        "8.8.8.0/24", "1.0.0.0/8", "126.0.0.0/8", "128.0.0.0/8", "169.253.0.0/16", "192.0.1.0/24",
        "192.88.98.0/24", "223.255.255.0/24",
        // IPv6: documentation, benchmarking, unique local, global unicast
        "2001:db8::/32", "2001:db8:1::/64", "3fff::/20", "3fff:1::/64", "2001:2::/48", "fc00::/7", "fd00::/8",
        "fd12:3456:789a::/64", "2400:cb00::/32", "2001:1::/32", "2003::/16"}) {
    SCOPED_TRACE(cidr);
    const auto why = check_subnet_prefix(prefix(cidr));
    EXPECT_FALSE(why.has_value()) << *why;
  }
}

TEST(CheckUnicastAddress, NamesTheRange) {
  const std::vector<Refused> cases = {
      {"0.0.0.0", "0.0.0.0/8", "this network"},
      {"127.0.0.1", "127.0.0.0/8", "loopback"},
      {"169.254.1.1", "169.254.0.0/16", "link-local"},
      {"224.0.0.1", "224.0.0.0/4", "multicast"},
      {"240.0.0.1", "240.0.0.0/4", "reserved"},
      {"255.255.255.255", "255.255.255.255/32", "limited broadcast"},
      {"::", "::/128", "unspecified"},
      {"::1", "::1/128", "loopback"},
      {"::10.0.0.1", "::/96", "IPv4-compatible"},
      {"::ffff:10.10.0.1", "::ffff:0.0.0.0/96", "IPv4-mapped"},
      {"64:ff9b::a00:1", "64:ff9b::/96", "NAT64"},
      {"fe80::1", "fe80::/10", "link-local"},
      {"ff02::1", "ff00::/8", "multicast"},
      {"4000::1", "2000::/3", "reserves the rest"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cidr);
    const auto why = check_unicast_address(addr(c.cidr));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->find(addr(c.cidr).to_string() + " "), 0u) << *why;
    EXPECT_NE(why->find(c.range), std::string::npos) << *why;
    EXPECT_NE(why->find(c.reason), std::string::npos) << *why;
  }
  for (const char* ok : {"10.0.0.1", "198.18.0.1", "8.8.8.8", "100.64.0.1", "2001:db8::1", "fd00::1"}) {
    EXPECT_FALSE(check_unicast_address(addr(ok)).has_value()) << ok;
  }
}

TEST(CheckHostAddress, NetworkBroadcastAndRouterAnycastAreNotHostAddresses) {
  const auto v4 = prefix("198.18.0.0/24");
  EXPECT_FALSE(check_host_address(v4, addr("198.18.0.1")).has_value());
  EXPECT_FALSE(check_host_address(v4, addr("198.18.0.254")).has_value());
  auto why = check_host_address(v4, addr("198.18.0.0"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "198.18.0.0 is not a usable host address of 198.18.0.0/24: it is the network address");
  why = check_host_address(v4, addr("198.18.0.255"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "198.18.0.255 is not a usable host address of 198.18.0.0/24: it is the broadcast address");
  why = check_host_address(v4, addr("198.18.1.1"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "198.18.1.1 is outside 198.18.0.0/24");
  why = check_host_address(v4, addr("2001:db8::1"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("is outside"), std::string::npos);

  const auto v6 = prefix("2001:db8:1::/64");
  EXPECT_FALSE(check_host_address(v6, addr("2001:db8:1::1")).has_value());
  // IPv6 has no broadcast: the last address is a host address.
  EXPECT_FALSE(check_host_address(v6, addr("2001:db8:1:0:ffff:ffff:ffff:ffff")).has_value());
  why = check_host_address(v6, addr("2001:db8:1::"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("2001:db8:1:: is not a usable host address of 2001:db8:1::/64"), std::string::npos)
      << *why;
  EXPECT_NE(why->find("Subnet-Router anycast"), std::string::npos) << *why;
  EXPECT_TRUE(check_host_address(v6, addr("2001:db8:2::1")).has_value());
  EXPECT_TRUE(check_host_address(v6, addr("198.18.0.1")).has_value());
}

TEST(CheckHostAddress, PointToPointPrefixesUseEveryAddress) {
  EXPECT_FALSE(check_host_address(prefix("198.18.0.0/31"), addr("198.18.0.0")).has_value());
  EXPECT_FALSE(check_host_address(prefix("198.18.0.0/31"), addr("198.18.0.1")).has_value());
  EXPECT_FALSE(check_host_address(prefix("198.18.0.7/32"), addr("198.18.0.7")).has_value());
  EXPECT_FALSE(check_host_address(prefix("2001:db8::/127"), addr("2001:db8::")).has_value());
  EXPECT_FALSE(check_host_address(prefix("2001:db8::/127"), addr("2001:db8::1")).has_value());
  EXPECT_FALSE(check_host_address(prefix("2001:db8::5/128"), addr("2001:db8::5")).has_value());
}

TEST(CheckHostAddress, SpecialPurposeAddressesAreRefusedEvenInsideTheirSubnet) {
  // A subnet stored before the rules existed must not hand out such addresses either.
  auto why = check_host_address(prefix("::ffff:10.10.0.0/120"), addr("::ffff:10.10.0.1"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("IPv4-mapped"), std::string::npos) << *why;
  why = check_host_address(prefix("224.0.0.0/24"), addr("224.0.0.1"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("multicast"), std::string::npos) << *why;
}

TEST(CheckHostAddress, AgreesWithDefaultHostRange) {
  for (const char* cidr :
       {"198.18.0.0/24", "10.0.0.0/30", "10.0.0.0/31", "10.0.0.9/32", "10.0.0.0/8", "2001:db8::/64",
        "2001:db8::/126", "2001:db8::/127", "2001:db8::5/128", "fd00::/48"}) {
    SCOPED_TRACE(cidr);
    const auto p = prefix(cidr);
    const auto r = default_host_range(p);
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(check_host_address(p, r->first).has_value());
    EXPECT_FALSE(check_host_address(p, r->last).has_value());
    if (r->first != p.first()) {
      EXPECT_TRUE(check_host_address(p, p.first()).has_value());
    }
    if (r->last != p.last()) {
      EXPECT_TRUE(check_host_address(p, p.last()).has_value());
    }
    if (const auto before = p.first().prev()) {
      EXPECT_TRUE(check_host_address(p, *before).has_value());
    }
    if (const auto after = p.last().next()) {
      EXPECT_TRUE(check_host_address(p, *after).has_value());
    }
  }
}

}  // namespace
}  // namespace hsns
