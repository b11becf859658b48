// Katran-style fixtures: the real isolation program run on crafted frames with bpf_prog_test_run_opts,
// checking the exact verdict and the exact counter effect of every frame. Needs root (CAP_BPF).
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>
#include <unistd.h>

#include <cstdio>

#include "isolation/isolation.h"
#include "isolation/isolation_maps.h"
#include "packets.h"

namespace hsns::daemon {
namespace {

using test::Frame;

// bpf_prog_test_run_opts runs a tc program on an skb of the loopback device of the current namespace.
constexpr std::uint32_t kLoIfindex = 1;

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

  void enforce(const std::vector<IpPrefix>& allowed) {
    ASSERT_TRUE(maps_->set_prefixes(kLoIfindex, allowed).has_value());
    ASSERT_TRUE(maps_->set_port(kLoIfindex, hsns_iso_port{}).has_value());
  }

  int run(const Frame& frame) {
    Frame out(frame.size() + 256);
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out.data(),
                .data_size_in = static_cast<__u32>(frame.size()),
                .data_size_out = static_cast<__u32>(out.size()), .repeat = 1);
    const int err = bpf_prog_test_run_opts(maps_->program_fd(), &opts);
    EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts failed";
    return static_cast<int>(opts.retval);
  }

  std::unique_ptr<IsolationMaps> maps_;
};

struct Fixture {
  const char* description;
  Frame frame;
  int verdict;
  bool counted_drop;
  bool counted_pass;
};

TEST_F(IsolationFixture, VerdictsAndCountersPerFrame) {
  enforce({prefix("198.18.1.0/24"), prefix("198.18.9.7/32"), prefix("2001:db8:1::/64")});
  const std::vector<Fixture> fixtures = {
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
  for (const Fixture& fx : fixtures) {
    SCOPED_TRACE(fx.description);
    const IsolationCounters before = maps_->counters(kLoIfindex);
    EXPECT_EQ(run(fx.frame), fx.verdict);
    const IsolationCounters after = maps_->counters(kLoIfindex);
    EXPECT_EQ(after.dropped_packets - before.dropped_packets, fx.counted_drop ? 1u : 0u);
    EXPECT_EQ(after.dropped_bytes - before.dropped_bytes, fx.counted_drop ? fx.frame.size() : 0u);
    EXPECT_EQ(after.passed_packets - before.passed_packets, fx.counted_pass ? 1u : 0u);
  }
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

TEST(IsolationPins, IncompatiblePinsAreReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF programs";
  const std::string dir = "/sys/fs/bpf/hsns-test-isolation-pins-" + std::to_string(getpid());
  struct RemovePins {
    std::string dir;
    ~RemovePins() { (void)IsolationManager::remove_pins(dir); }
  } cleanup{dir};
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

}  // namespace
}  // namespace hsns::daemon
