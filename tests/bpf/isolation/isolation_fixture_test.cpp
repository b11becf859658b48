// Katran-style fixtures: the real isolation program run on crafted frames with bpf_prog_test_run_opts,
// checking the exact verdict and the exact counter effect of every frame. Needs root (CAP_BPF).
// Every fixture runs through each of the program's three lookup paths (bpf/isolation.h): the inline
// policy (loopback, few prefixes), a policy whose families live in the tries (more prefixes than fit), and
// a port with an ifindex past the hot-path array (hash and tries; a veth in a namespace the test
// creates, named to bpf_prog_test_run_opts by ctx.ifindex). Randomised cases (seeded; the seed is printed,
// HSNS_ISOLATION_SEED replays one) compare the program with a reference implementation of the rule below.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "isolation/isolation.h"
#include "isolation/isolation_maps.h"
#include "packets.h"
#include "support/netns.h"
#include "support/shell.h"

namespace hsns::daemon {
namespace {

using test::Frame;

// bpf_prog_test_run_opts runs a tc program on an skb of the loopback device of the current namespace.
constexpr std::uint32_t kLoIfindex = 1;
// Past HSNS_ISO_FAST_IFINDEX: such a port takes the slow path.
constexpr std::uint32_t kLargeIfindex = HSNS_ISO_FAST_IFINDEX + 4242;

IpPrefix prefix(const char* text) {
  auto p = IpPrefix::parse(text);
  EXPECT_TRUE(p.has_value()) << text;
  return *p;
}

class IsolationFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF programs";
    auto maps = IsolationMaps::load("");
    ASSERT_TRUE(maps.has_value()) << maps.error();
    maps_ = std::move(*maps);
  }

  void enforce(const std::vector<IpPrefix>& allowed, std::uint32_t ifindex = kLoIfindex) {
    ASSERT_TRUE(maps_->set_prefixes(ifindex, allowed).has_value());
    ASSERT_TRUE(maps_->set_port(ifindex, hsns_iso_port{}).has_value());
  }

  // Runs the program on frame as egress of ifindex (a netdev of the calling thread's namespace).
  int run(const Frame& frame, std::uint32_t ifindex = kLoIfindex) {
    Frame out(frame.size() + 256);
    __sk_buff ctx{};
    ctx.ifindex = ifindex;
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out.data(),
                .data_size_in = static_cast<__u32>(frame.size()),
                .data_size_out = static_cast<__u32>(out.size()), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
                .repeat = 1);
    const int err = bpf_prog_test_run_opts(maps_->program_fd(), &opts);
    EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts failed: " << std::strerror(errno);
    return static_cast<int>(opts.retval);
  }

  // Runs every fixture on the port ifindex, enforced with fixture_policy(): verdict and counter deltas.
  void check_fixtures(std::uint32_t ifindex);

  std::unique_ptr<IsolationMaps> maps_;
};

struct Fixture {
  const char* description;
  Frame frame;
  int verdict;
  bool counted_drop;
  bool counted_pass;
};

// The fixed cases, each with its verdict and counter effect, for the policy kFixturePolicy.
const std::vector<const char*> kFixturePolicy = {"198.18.1.0/24", "198.18.9.7/32", "2001:db8:1::/64"};

std::vector<Fixture> fixtures() {
  return {
      {"IPv4 inside /24", test::ipv4_udp("198.18.1.2"), TC_ACT_OK, false, true},
      {"IPv4 /24 broadcast", test::ipv4_udp("198.18.1.255"), TC_ACT_OK, false, true},
      {"IPv4 other subnet", test::ipv4_udp("198.18.2.2"), TC_ACT_SHOT, true, false},
      {"IPv4 host route /32", test::ipv4_udp("198.18.9.7"), TC_ACT_OK, false, true},
      {"IPv4 next to /32", test::ipv4_udp("198.18.9.8"), TC_ACT_SHOT, true, false},
      {"IPv6 inside /64", test::ipv6_udp("2001:db8:1::2"), TC_ACT_OK, false, true},
      {"IPv6 other /64", test::ipv6_udp("2001:db8:2::2"), TC_ACT_SHOT, true, false},
      {"IPv6 link-local unicast", test::ipv6_udp("fe80::1"), TC_ACT_OK, false, true},
      {"IPv6 solicited-node multicast", test::ipv6_udp("ff02::1:ff00:2"), TC_ACT_OK, false, true},
      {"IPv6 global multicast", test::ipv6_udp("ff0e::1"), TC_ACT_SHOT, true, false},
      {"802.1Q IPv4 inside", test::ipv4_udp("198.18.1.2", {0x8100}), TC_ACT_OK, false, true},
      {"802.1Q IPv4 outside", test::ipv4_udp("198.18.2.2", {0x8100}), TC_ACT_SHOT, true, false},
      {"802.1Q IPv6 outside", test::ipv6_udp("2001:db8:2::2", {0x8100}), TC_ACT_SHOT, true, false},
      {"QinQ IPv4 inside", test::ipv4_udp("198.18.1.2", {0x88A8, 0x8100}), TC_ACT_OK, false, true},
      {"QinQ IPv6 outside", test::ipv6_udp("2001:db8:2::2", {0x88A8, 0x8100}), TC_ACT_SHOT, true, false},
      {"three tags", test::ipv4_udp("198.18.1.2", {0x88A8, 0x8100, 0x8100}), TC_ACT_SHOT, true, false},
      {"ARP", test::arp(), TC_ACT_OK, false, false},
      {"LLDP",
       [] {
         Frame f = test::ethernet(0x88CC);
         f.resize(60, 0);
         return f;
       }(),
       TC_ACT_OK, false, false},
      {"802.1Q ARP",
       [] {
         Frame f = test::ethernet(0x0806, {0x8100});
         f.resize(60, 0);
         return f;
       }(),
       TC_ACT_OK, false, false},
      // The kernel's test_run refuses an untagged IPv4/IPv6 frame shorter than its IP header (EINVAL), so
      // cut frames are fed behind a VLAN tag; the program reads both through the same bounded loads.
      {"802.1Q header only, type IPv4", test::ethernet(0x0800, {0x8100}), TC_ACT_SHOT, true, false},
      {"802.1Q IPv4 cut inside the destination",
       [] {
         Frame f = test::ipv4_udp("198.18.1.2", {0x8100});
         f.resize(18 + 18);
         return f;
       }(),
       TC_ACT_SHOT, true, false},
      {"IPv4 cut right after the destination",
       [] {
         Frame f = test::ipv4_udp("198.18.1.2");
         f.resize(14 + 20);
         return f;
       }(),
       TC_ACT_OK, false, true},
      {"802.1Q IPv6 cut inside the destination",
       [] {
         Frame f = test::ipv6_udp("2001:db8:1::2", {0x8100});
         f.resize(18 + 39);
         return f;
       }(),
       TC_ACT_SHOT, true, false},
      {"802.1Q IPv6 cut right after the destination",
       [] {
         Frame f = test::ipv6_udp("2001:db8:1::2", {0x8100});
         f.resize(18 + 40);
         return f;
       }(),
       TC_ACT_OK, false, true},
      {"VLAN tag cut",
       [] {
         Frame f = test::ethernet(0x8100);
         f.push_back(0);
         return f;
       }(),
       TC_ACT_SHOT, true, false},
  };
}

// kFixturePolicy plus `extra` prefixes per family that no fixture frame hits (203.0.113.0/24 hosts,
// 3fff::/16 networks): enough of them pushes a family out of the inline policy into its trie.
std::vector<IpPrefix> fixture_policy(int extra) {
  std::vector<IpPrefix> out;
  out.reserve(kFixturePolicy.size() + 2 * static_cast<std::size_t>(extra));
  for (const char* p : kFixturePolicy) out.push_back(prefix(p));
  for (int i = 0; i < extra; ++i) {
    out.push_back(prefix(("203.0.113." + std::to_string(i + 1) + "/32").c_str()));
    char v6[64];
    std::snprintf(v6, sizeof(v6), "3fff:%x::/32", i + 1);
    out.push_back(prefix(v6));
  }
  return out;
}

void IsolationFixture::check_fixtures(std::uint32_t ifindex) {
  for (const Fixture& fx : fixtures()) {
    SCOPED_TRACE(fx.description);
    const IsolationCounters before = maps_->counters(ifindex);
    EXPECT_EQ(run(fx.frame, ifindex), fx.verdict);
    const IsolationCounters after = maps_->counters(ifindex);
    EXPECT_EQ(after.dropped_packets - before.dropped_packets, fx.counted_drop ? 1u : 0u);
    EXPECT_EQ(after.dropped_bytes - before.dropped_bytes, fx.counted_drop ? fx.frame.size() : 0u);
    EXPECT_EQ(after.passed_packets - before.passed_packets, fx.counted_pass ? 1u : 0u);
  }
}

TEST_F(IsolationFixture, VerdictsAndCountersPerFrameInlinePolicy) {
  enforce(fixture_policy(0));
  const auto pol = maps_->fast_policy(kLoIfindex);
  ASSERT_TRUE(pol.has_value());
  EXPECT_EQ(pol->flags, 0u);
  EXPECT_EQ(pol->n4, 2u);
  EXPECT_EQ(pol->n6, 1u);
  check_fixtures(kLoIfindex);
}

TEST_F(IsolationFixture, VerdictsAndCountersPerFrameTriePolicy) {
  enforce(fixture_policy(HSNS_ISO_FAST_V4 + HSNS_ISO_FAST_V6));
  const auto pol = maps_->fast_policy(kLoIfindex);
  ASSERT_TRUE(pol.has_value());
  EXPECT_EQ(pol->flags, HSNS_ISO_V4_IN_TRIE | HSNS_ISO_V6_IN_TRIE);
  check_fixtures(kLoIfindex);
}

// A port whose ifindex is past the hot-path array: the port hash and the tries.
TEST_F(IsolationFixture, VerdictsAndCountersPerFrameLargeIfindex) {
  testing::run_in_fresh_netns([&] {
    ASSERT_EQ(testing::sh("ip link add isolarge index " + std::to_string(kLargeIfindex) +
                          " type veth peer name isolarge-p")
                  .status,
              0);
    enforce(fixture_policy(0), kLargeIfindex);
    EXPECT_FALSE(maps_->fast_policy(kLargeIfindex).has_value());
    check_fixtures(kLargeIfindex);
    ASSERT_TRUE(maps_->forget_port(kLargeIfindex).has_value());
    EXPECT_EQ(run(test::ipv4_udp("198.18.2.2"), kLargeIfindex), TC_ACT_OK);
  });
}

TEST_F(IsolationFixture, PortWithoutPolicyPassesEverythingUncounted) {
  for (const Frame& f :
       {test::ipv4_udp("198.18.2.2"), test::ipv6_udp("2001:db8:2::2"), test::ethernet(0x0800, {0x8100})}) {
    EXPECT_EQ(run(f), TC_ACT_OK);
  }
  EXPECT_EQ(maps_->counters(kLoIfindex), IsolationCounters{});
  // Prefixes alone do not enforce: the port entry does.
  ASSERT_TRUE(maps_->set_prefixes(kLoIfindex, {prefix("198.18.1.0/24")}).has_value());
  EXPECT_EQ(run(test::ipv4_udp("198.18.2.2")), TC_ACT_OK);
  EXPECT_EQ(maps_->counters(kLoIfindex), IsolationCounters{});
}

TEST_F(IsolationFixture, EmptyPolicyDropsAllRoutableIp) {
  enforce({});
  EXPECT_EQ(run(test::ipv4_udp("198.18.1.2")), TC_ACT_SHOT);
  EXPECT_EQ(run(test::ipv6_udp("2001:db8:1::2")), TC_ACT_SHOT);
  EXPECT_EQ(run(test::ipv6_udp("ff02::1")), TC_ACT_OK);
  EXPECT_EQ(run(test::arp()), TC_ACT_OK);
  const IsolationCounters c = maps_->counters(kLoIfindex);
  EXPECT_EQ(c.dropped_packets, 2u);
  EXPECT_EQ(c.passed_packets, 1u);
}

TEST_F(IsolationFixture, ZeroLengthPrefixAllowsTheWholeFamily) {
  enforce({prefix("0.0.0.0/0")});
  EXPECT_EQ(run(test::ipv4_udp("203.0.113.9")), TC_ACT_OK);
  EXPECT_EQ(run(test::ipv6_udp("2001:db8:2::2")), TC_ACT_SHOT);
}

TEST_F(IsolationFixture, PolicyOfAnotherPortNeverMatches) {
  enforce({prefix("198.18.1.0/24")});
  ASSERT_TRUE(maps_->set_prefixes(kLoIfindex + 1, {prefix("198.18.2.0/24"), prefix("::/0")}).has_value());
  EXPECT_EQ(run(test::ipv4_udp("198.18.2.2")), TC_ACT_SHOT);
  EXPECT_EQ(run(test::ipv6_udp("2001:db8:2::2")), TC_ACT_SHOT);
  EXPECT_EQ(run(test::ipv4_udp("198.18.1.2")), TC_ACT_OK);
}

TEST_F(IsolationFixture, PrefixChangeIsADiffOfMapEntries) {
  enforce({prefix("198.18.1.0/24"), prefix("2001:db8:1::/64")});
  ASSERT_TRUE(maps_->set_prefixes(kLoIfindex + 1, {prefix("198.18.3.0/24")}).has_value());
  EXPECT_EQ(run(test::ipv4_udp("198.18.2.2")), TC_ACT_SHOT);

  ASSERT_TRUE(
      maps_->set_prefixes(kLoIfindex, {prefix("198.18.1.0/24"), prefix("198.18.2.0/23")}).has_value());
  auto now = maps_->prefixes(kLoIfindex);
  ASSERT_TRUE(now.has_value());
  std::vector<std::string> texts;
  for (const IpPrefix& p : *now) texts.push_back(p.to_string());
  EXPECT_EQ(texts, (std::vector<std::string>{"198.18.1.0/24", "198.18.2.0/23"}));
  EXPECT_EQ(run(test::ipv4_udp("198.18.2.2")), TC_ACT_OK);
  EXPECT_EQ(run(test::ipv4_udp("198.18.3.2")), TC_ACT_OK);
  EXPECT_EQ(run(test::ipv6_udp("2001:db8:1::2")), TC_ACT_SHOT);

  // The other port's entries were not touched.
  auto other = maps_->prefixes(kLoIfindex + 1);
  ASSERT_TRUE(other.has_value());
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ((*other)[0].to_string(), "198.18.3.0/24");

  ASSERT_TRUE(maps_->forget_port(kLoIfindex).has_value());
  EXPECT_TRUE(maps_->prefixes(kLoIfindex)->empty());
  EXPECT_EQ(maps_->counters(kLoIfindex), IsolationCounters{});
  EXPECT_EQ(run(test::ipv4_udp("198.18.200.1")), TC_ACT_OK);
}

// --- Randomised cases against a reference implementation of the rule -------------------------------

struct RefPrefix {
  IpFamily family = IpFamily::v4;
  std::array<std::uint8_t, 16> net{};  // network byte order; IPv4 in the first 4 bytes
  int length = 0;
};

struct Expected {
  int verdict;
  bool counted_drop;
  bool counted_pass;
};

bool inside(const std::uint8_t* addr, const RefPrefix& p) {
  for (int bit = 0; bit < p.length; ++bit) {
    const int mask = 0x80 >> (bit % 8);
    if ((addr[bit / 8] & mask) != (p.net[static_cast<std::size_t>(bit / 8)] & mask)) return false;
  }
  return true;
}

// The rule as docs/hsnsd.md and bpf/isolation.bpf.c's header state it, for an enforced port.
Expected reference(const Frame& f, const std::vector<RefPrefix>& allowed) {
  const Expected pass{TC_ACT_OK, false, true};
  const Expected drop{TC_ACT_SHOT, true, false};
  const Expected untouched{TC_ACT_OK, false, false};
  if (f.size() < 14) return untouched;
  auto type_at = [&](std::size_t off) { return static_cast<unsigned>(f[off] << 8 | f[off + 1]); };
  unsigned type = type_at(12);
  std::size_t l3 = 14;
  for (int tags = 0; type == 0x8100 || type == 0x88A8; ++tags) {
    if (tags == 2 || f.size() < l3 + 4) return drop;  // a third tag, or a cut tag
    type = type_at(l3 + 2);
    l3 += 4;
  }
  const std::uint8_t* dst = nullptr;
  IpFamily family = IpFamily::v4;
  if (type == 0x0800) {
    if (f.size() < l3 + 20) return drop;
    dst = &f[l3 + 16];
  } else if (type == 0x86DD) {
    if (f.size() < l3 + 40) return drop;
    dst = &f[l3 + 24];
    family = IpFamily::v6;
    if ((dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) || (dst[0] == 0xff && (dst[1] & 0x0f) == 0x02))
      return pass;
  } else {
    return untouched;
  }
  for (const RefPrefix& p : allowed) {
    if (p.family == family && inside(dst, p)) return pass;
  }
  return drop;
}

std::string hex(const Frame& f) {
  std::string out;
  char b[4];
  for (std::uint8_t c : f) {
    std::snprintf(b, sizeof(b), "%02x", c);
    out += b;
  }
  return out;
}

class RandomCases {
 public:
  explicit RandomCases(std::uint32_t seed) : rng_(seed) {}

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(1, 100) <= percent; }

  // An address near the ranges the prefixes come from, so that destinations hit and miss them closely.
  std::array<std::uint8_t, 16> address(IpFamily family) {
    std::array<std::uint8_t, 16> a{};
    for (auto& b : a) b = static_cast<std::uint8_t>(uniform(0, 255));
    if (family == IpFamily::v4) {
      static const std::uint8_t kFirst[][2] = {{198, 18}, {198, 19}, {10, 1}};
      if (chance(80)) {
        const auto& first = kFirst[uniform(0, 2)];
        a[0] = first[0];
        a[1] = first[1];
      }
      std::fill(a.begin() + 4, a.end(), 0);
    } else if (chance(80)) {
      a[0] = 0x20;
      a[1] = 0x01;
      a[2] = 0x0d;
      a[3] = 0xb8;
      a[4] = 0;
      a[5] = static_cast<std::uint8_t>(uniform(0, 3));
    }
    return a;
  }

  RefPrefix prefix_of(IpFamily family) {
    RefPrefix p;
    p.family = family;
    const int bits = family == IpFamily::v4 ? 32 : 128;
    p.length = chance(3) ? uniform(0, 7) : uniform(family == IpFamily::v4 ? 8 : 16, bits);
    p.net = address(family);
    for (int bit = p.length; bit < bits; ++bit)
      p.net[static_cast<std::size_t>(bit / 8)] &= ~(0x80 >> (bit % 8));
    return p;
  }

  std::vector<RefPrefix> prefixes(int v4, int v6) {
    std::vector<RefPrefix> out;
    out.reserve(static_cast<std::size_t>(v4) + static_cast<std::size_t>(v6));
    for (int i = 0; i < v4; ++i) out.push_back(prefix_of(IpFamily::v4));
    for (int i = 0; i < v6; ++i) out.push_back(prefix_of(IpFamily::v6));
    return out;
  }

  // A destination inside one of the port's prefixes, one bit off such an address, or anywhere.
  std::array<std::uint8_t, 16> destination(IpFamily family, const std::vector<RefPrefix>& allowed) {
    std::vector<const RefPrefix*> same;
    for (const RefPrefix& p : allowed)
      if (p.family == family) same.push_back(&p);
    std::array<std::uint8_t, 16> a = address(family);
    if (same.empty() || chance(20)) return a;
    const RefPrefix& p = *same[static_cast<std::size_t>(uniform(0, static_cast<int>(same.size()) - 1))];
    for (int bit = 0; bit < p.length; ++bit) {
      const auto i = static_cast<std::size_t>(bit / 8);
      const int mask = 0x80 >> (bit % 8);
      a[i] = static_cast<std::uint8_t>((a[i] & ~mask) | (p.net[i] & mask));
    }
    if (chance(40)) {
      const int bits = family == IpFamily::v4 ? 32 : 128;
      const int bit = uniform(0, std::min(bits - 1, p.length + 2));
      a[static_cast<std::size_t>(bit / 8)] ^= static_cast<std::uint8_t>(0x80 >> (bit % 8));
    }
    return a;
  }

  Frame frame(const std::vector<RefPrefix>& allowed) {
    const int r = uniform(1, 100);
    const int ntags = r <= 60 ? 0 : r <= 85 ? 1 : r <= 95 ? 2 : 3;
    std::vector<std::uint16_t> tags;
    tags.reserve(static_cast<std::size_t>(ntags));
    for (int i = 0; i < ntags; ++i) tags.push_back(chance(70) ? 0x8100 : 0x88A8);
    const auto payload = static_cast<std::size_t>(uniform(0, 64));
    Frame f;
    const int kind = uniform(1, 100);
    char text[INET6_ADDRSTRLEN];
    if (kind <= 40) {
      const auto a = destination(IpFamily::v4, allowed);
      inet_ntop(AF_INET, a.data(), text, sizeof(text));
      f = test::ipv4_udp(text, tags, payload);
    } else if (kind <= 85) {
      auto a = destination(IpFamily::v6, allowed);
      if (chance(10)) {  // link-local scope, or a multicast scope next to it
        a[0] = chance(50) ? 0xfe : 0xff;
        a[1] = static_cast<std::uint8_t>(uniform(0, 255));
      }
      inet_ntop(AF_INET6, a.data(), text, sizeof(text));
      f = test::ipv6_udp(text, tags, payload);
    } else {
      static const std::uint16_t kOther[] = {0x0806, 0x88CC, 0x8847, 0x0842};
      f = test::ethernet(kOther[uniform(0, 3)], tags);
      f.resize(f.size() + 46, 0x5a);
    }
    // Cut somewhere after the first tag (test_run refuses an untagged IP frame shorter than its header).
    if (ntags > 0 && chance(15))
      f.resize(static_cast<std::size_t>(uniform(14 + 2, static_cast<int>(f.size()) - 1)));
    return f;
  }

 private:
  std::mt19937 rng_;
};

std::vector<IpPrefix> to_prefixes(const std::vector<RefPrefix>& ref) {
  std::vector<IpPrefix> out;
  for (const RefPrefix& p : ref) {
    uint128 v = 0;
    const int bytes = p.family == IpFamily::v4 ? 4 : 16;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | p.net[static_cast<std::size_t>(i)];
    out.emplace_back(IpAddress(p.family, v), p.length);
  }
  return out;
}

std::uint32_t seed_from_env() {
  if (const char* s = std::getenv("HSNS_ISOLATION_SEED"); s != nullptr && *s != '\0') {
    return static_cast<std::uint32_t>(std::strtoul(s, nullptr, 10));
  }
  return static_cast<std::uint32_t>(std::random_device{}());
}

// Ports with few prefixes (inline policy), with many (tries), with one family each way, past the hot-path
// array (hash and tries), and one never enforced; policies redrawn every round, so that ports move
// between the inline policy and the tries; every frame's verdict and counter effect checked.
TEST_F(IsolationFixture, RandomisedVerdictsMatchTheReference) {
  const std::uint32_t seed = seed_from_env();
  std::printf("isolation randomised cases: seed %u (HSNS_ISOLATION_SEED=%u replays it)\n", seed, seed);
  RecordProperty("seed", std::to_string(seed));
  RandomCases rnd(seed);
  testing::run_in_fresh_netns([&] {
    struct Port {
      std::uint32_t ifindex;
      enum { few, many, mixed, any } sizes;
      bool enforced;
      std::vector<RefPrefix> allowed;
    };
    for (const std::string& cmd :
         std::vector<std::string>{"ip link add isomany type veth peer name isomany-p",
                                  "ip link add isomixed index 300 type veth peer name isomixed-p",
                                  "ip link add isoplain index 400 type veth peer name isoplain-p",
                                  "ip link add isolarge index " + std::to_string(kLargeIfindex) +
                                      " type veth peer name isolarge-p"}) {
      const auto r = testing::sh(cmd);
      ASSERT_TRUE(r.ok()) << r;
    }
    const std::uint32_t many_index = if_nametoindex("isomany");
    ASSERT_NE(many_index, 0u);
    std::vector<Port> ports = {{kLoIfindex, Port::few, true, {}},
                               {many_index, Port::many, true, {}},
                               {300, Port::mixed, true, {}},
                               {kLargeIfindex, Port::any, true, {}},
                               {400, Port::any, false, {}}};
    constexpr int kRounds = 4;
    constexpr int kFramesPerRound = 1000;
    int failures = 0;
    int passed = 0;
    int dropped = 0;
    for (int round = 0; round < kRounds; ++round) {
      for (Port& port : ports) {
        const int few4 = rnd.uniform(0, HSNS_ISO_FAST_V4);
        const int few6 = rnd.uniform(0, HSNS_ISO_FAST_V6);
        const int many4 = rnd.uniform(HSNS_ISO_FAST_V4 + 1, 40);
        const int many6 = rnd.uniform(HSNS_ISO_FAST_V6 + 1, 40);
        switch (port.sizes) {
          case Port::few:
            port.allowed = rnd.prefixes(few4, few6);
            break;
          case Port::many:
            port.allowed = rnd.prefixes(many4, many6);
            break;
          case Port::mixed:
            port.allowed = round % 2 == 0 ? rnd.prefixes(many4, few6) : rnd.prefixes(few4, many6);
            break;
          case Port::any:
            port.allowed = rnd.prefixes(rnd.chance(50) ? few4 : many4, rnd.chance(50) ? few6 : many6);
            break;
        }
        ASSERT_TRUE(maps_->set_prefixes(port.ifindex, to_prefixes(port.allowed)).has_value());
        if (port.enforced) {
          ASSERT_TRUE(maps_->set_port(port.ifindex, hsns_iso_port{}).has_value());
        }
        // The hot-path policy mirrors the tries: inline counts or the trie flag, per family.
        const auto pol = maps_->fast_policy(port.ifindex);
        ASSERT_EQ(pol.has_value(), port.enforced && port.ifindex < HSNS_ISO_FAST_IFINDEX);
        if (pol) {
          const auto stored = maps_->prefixes(port.ifindex);
          ASSERT_TRUE(stored.has_value());
          std::uint32_t n4 = 0;
          std::uint32_t n6 = 0;
          for (const IpPrefix& p : *stored) (p.family() == IpFamily::v4 ? n4 : n6) += 1;
          EXPECT_EQ((pol->flags & HSNS_ISO_V4_IN_TRIE) != 0, n4 > HSNS_ISO_FAST_V4);
          EXPECT_EQ((pol->flags & HSNS_ISO_V6_IN_TRIE) != 0, n6 > HSNS_ISO_FAST_V6);
          if (n4 <= HSNS_ISO_FAST_V4) {
            EXPECT_EQ(pol->n4, n4);
          }
          if (n6 <= HSNS_ISO_FAST_V6) {
            EXPECT_EQ(pol->n6, n6);
          }
        }
      }
      for (int i = 0; i < kFramesPerRound && failures < 10; ++i) {
        const Port& port =
            ports[static_cast<std::size_t>(rnd.uniform(0, static_cast<int>(ports.size()) - 1))];
        const Frame frame = rnd.frame(port.allowed);
        const Expected want =
            port.enforced ? reference(frame, port.allowed) : Expected{TC_ACT_OK, false, false};
        const IsolationCounters before = maps_->counters(port.ifindex);
        const int got = run(frame, port.ifindex);
        const IsolationCounters after = maps_->counters(port.ifindex);
        const bool same =
            got == want.verdict &&
            after.dropped_packets - before.dropped_packets == (want.counted_drop ? 1u : 0u) &&
            after.dropped_bytes - before.dropped_bytes == (want.counted_drop ? frame.size() : 0u) &&
            after.passed_packets - before.passed_packets == (want.counted_pass ? 1u : 0u);
        if (!same) {
          ++failures;
          std::string policy;
          for (const IpPrefix& p : to_prefixes(port.allowed)) policy += p.to_string() + " ";
          ADD_FAILURE() << "seed " << seed << " round " << round << " port " << port.ifindex << " verdict "
                        << got << " (reference " << want.verdict << ", drop " << want.counted_drop
                        << ", pass " << want.counted_pass << ") frame " << hex(frame) << " policy " << policy;
        }
        passed += want.counted_pass ? 1 : 0;
        dropped += want.counted_drop ? 1 : 0;
      }
    }
    std::printf("isolation randomised cases: %d frames, %d passed, %d dropped\n", kRounds * kFramesPerRound,
                passed, dropped);
    // The draw exercises both verdicts substantially (a broken generator would not).
    EXPECT_GT(passed, kRounds * kFramesPerRound / 10);
    EXPECT_GT(dropped, kRounds * kFramesPerRound / 10);
    for (const Port& port : ports) ASSERT_TRUE(maps_->forget_port(port.ifindex).has_value());
  });
}

// Removes a test's pin directory at scope exit, also when the test failed.
struct RemovePins {
  std::string dir;
  ~RemovePins() { (void)IsolationManager::remove_pins(dir); }
};

TEST(IsolationPins, IncompatiblePinsAreReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF programs";
  const std::string dir = "/sys/fs/bpf/hsns-test-isolation-pins-" + std::to_string(getpid());
  const RemovePins cleanup{dir};
  {
    auto m = IsolationManager::create(IsolationOptions{dir});
    ASSERT_TRUE(m.has_value()) << m.error();
  }
  const std::string ports = dir + "/hsns_iso_ports";
  ASSERT_EQ(std::remove(ports.c_str()), 0);
  const int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "hsns_iso_ports", 4, 8, 4, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(bpf_obj_pin(fd, ports.c_str()), 0);
  close(fd);
  {
    auto m = IsolationManager::create(IsolationOptions{dir});
    EXPECT_TRUE(m.has_value()) << m.error();
  }
  auto removed = IsolationManager::remove_pins(dir);
  EXPECT_TRUE(removed.has_value()) << removed.error();
}

// Pins of a version without hsns_iso_fast (simulated by unpinning it): the next load derives every
// enforced port's policy from the pinned ports and tries, so the new program enforces at once.
TEST(IsolationPins, PoliciesAreRebuiltFromPinsWithoutThePolicyMap) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF programs";
  const std::string dir = "/sys/fs/bpf/hsns-test-isolation-rebuild-" + std::to_string(getpid());
  const RemovePins cleanup{dir};
  ASSERT_EQ(testing::sh("mkdir -p " + dir).status, 0);
  {
    auto maps = IsolationMaps::load(dir);
    ASSERT_TRUE(maps.has_value()) << maps.error();
    ASSERT_TRUE((*maps)->set_prefixes(kLoIfindex, {prefix("198.18.1.0/24"), prefix("2001:db8:1::/64")}));
    ASSERT_TRUE((*maps)->set_port(kLoIfindex, hsns_iso_port{}));
    ASSERT_TRUE((*maps)->fast_policy(kLoIfindex).has_value());
  }
  ASSERT_EQ(std::remove((dir + "/hsns_iso_fast").c_str()), 0);
  auto maps = IsolationMaps::load(dir);
  ASSERT_TRUE(maps.has_value()) << maps.error();
  const auto pol = (*maps)->fast_policy(kLoIfindex);
  ASSERT_TRUE(pol.has_value());
  EXPECT_EQ(pol->n4, 1u);
  EXPECT_EQ(pol->n6, 1u);
  auto run = [&](const Frame& frame) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(),
                .data_size_in = static_cast<__u32>(frame.size()), .repeat = 1);
    EXPECT_EQ(bpf_prog_test_run_opts((*maps)->program_fd(), &opts), 0);
    return static_cast<int>(opts.retval);
  };
  EXPECT_EQ(run(test::ipv4_udp("198.18.1.2")), TC_ACT_OK);
  EXPECT_EQ(run(test::ipv4_udp("198.18.2.2")), TC_ACT_SHOT);
  EXPECT_EQ(run(test::ipv6_udp("2001:db8:2::2")), TC_ACT_SHOT);
  EXPECT_EQ((*maps)->counters(kLoIfindex).dropped_packets, 2u);
  ASSERT_TRUE((*maps)->forget_port(kLoIfindex));
}

}  // namespace
}  // namespace hsns::daemon
