// End to end: IsolationManager on a real veth port, with UDP between network namespaces the test creates.
//
//   A (sender)                    B (router)                    C
//   a0 198.18.1.1/24 ──────────── b0 198.18.1.2/24
//      2001:db8:1::1/64              2001:db8:1::2/64
//                                 b1 198.18.2.254/24 ────────── c0 198.18.2.2/24
//                                    2001:db8:2::fe/64             2001:db8:2::2/64
//   m0 198.19.0.1/24 ──────────── m1 198.19.0.2/24   (the "management" network: never isolated)
//
// A routes 198.18.2.0/24 and 2001:db8:2::/64 through B over a0, so traffic to C leaves through the
// managed port a0. Namespaces have no link to the host and no default route. Needs root.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <net/if.h>

#include <filesystem>

#include "isolation/isolation.h"
#include "netns.h"

namespace hsns::daemon {
namespace {

using test::sh;
using namespace std::chrono_literals;

constexpr std::uint16_t kPort = 47910;
constexpr std::size_t kPayloadSize = 20;
constexpr const char* kPinPrefix = "hsns-test-isolation-";  // under /sys/fs/bpf

IpPrefix prefix(const char* text) {
  return *IpPrefix::parse(text);
}

class IsolationE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, eBPF)";
    netns_ = std::make_unique<test::Namespaces>("hsiso");
    a_ = netns_->add("a");
    b_ = netns_->add("b");
    c_ = netns_->add("c");
    pin_dir_ = std::string("/sys/fs/bpf/") + kPinPrefix + std::to_string(getpid());
    test::remove_stale_pin_dirs(kPinPrefix,
                                [](const std::string& dir) { (void)IsolationManager::remove_pins(dir); });
    for (const std::string& cmd : {
             "ip -n " + a_ + " link add a0 type veth peer name b0 netns " + b_,
             "ip -n " + b_ + " link add b1 type veth peer name c0 netns " + c_,
             "ip -n " + a_ + " link add m0 type veth peer name m1 netns " + b_,
             "ip -n " + a_ + " addr add 198.18.1.1/24 dev a0",
             "ip -n " + a_ + " addr add 2001:db8:1::1/64 dev a0 nodad",
             "ip -n " + a_ + " addr add 198.19.0.1/24 dev m0",
             "ip -n " + b_ + " addr add 198.18.1.2/24 dev b0",
             "ip -n " + b_ + " addr add 2001:db8:1::2/64 dev b0 nodad",
             "ip -n " + b_ + " addr add 198.18.2.254/24 dev b1",
             "ip -n " + b_ + " addr add 2001:db8:2::fe/64 dev b1 nodad",
             "ip -n " + b_ + " addr add 198.19.0.2/24 dev m1",
             "ip -n " + c_ + " addr add 198.18.2.2/24 dev c0",
             "ip -n " + c_ + " addr add 2001:db8:2::2/64 dev c0 nodad",
             "ip -n " + a_ + " link set a0 up",
             "ip -n " + a_ + " link set m0 up",
             "ip -n " + b_ + " link set b0 up",
             "ip -n " + b_ + " link set b1 up",
             "ip -n " + b_ + " link set m1 up",
             "ip -n " + c_ + " link set c0 up",
             "ip netns exec " + b_ + " sysctl -qw net.ipv4.ip_forward=1",
             "ip netns exec " + b_ + " sysctl -qw net.ipv6.conf.all.forwarding=1",
             "ip -n " + a_ + " route add 198.18.2.0/24 via 198.18.1.2 dev a0",
             "ip -n " + a_ + " -6 route add 2001:db8:2::/64 via 2001:db8:1::2 dev a0",
             "ip -n " + c_ + " route add 198.18.1.0/24 via 198.18.2.254 dev c0",
             "ip -n " + c_ + " -6 route add 2001:db8:1::/64 via 2001:db8:2::fe dev c0",
         }) {
      const auto r = sh(cmd);
      ASSERT_EQ(r.status, 0) << cmd << ": " << r.output;
    }
    rx_b_ = std::make_unique<test::UdpReceiver>(b_, "198.18.1.2", kPort);
    rx_c_ = std::make_unique<test::UdpReceiver>(c_, "198.18.2.2", kPort);
    rx_c6_ = std::make_unique<test::UdpReceiver>(c_, "2001:db8:2::2", kPort);
    rx_m_ = std::make_unique<test::UdpReceiver>(b_, "198.19.0.2", kPort);
    // Routing works before any isolation (links come up asynchronously: poll).
    ASSERT_TRUE(delivered(rx_c_.get(), "198.18.2.2", 1));
    ASSERT_TRUE(delivered(rx_c6_.get(), "2001:db8:2::2", 1));
  }

  void TearDown() override {
    if (manager_) {
      test::NetnsScope in(a_);
      manager_->detach_all();
      manager_.reset();
    }
    rx_b_.reset();
    rx_c_.reset();
    rx_c6_.reset();
    rx_m_.reset();
    netns_.reset();
    if (!pin_dir_.empty()) {
      auto r = IsolationManager::remove_pins(pin_dir_);
      EXPECT_TRUE(r.has_value()) << r.error();
    }
  }

  // A payload of kPayloadSize bytes unique to one step of the test.
  std::string next_tag() {
    std::string tag = "hsns-isolation-" + std::to_string(++step_);
    tag.resize(kPayloadSize, '.');
    return tag;
  }

  // Sends n datagrams from A; true when n arrive at rx within the timeout. While links settle the first
  // datagrams may be lost: every 20 ms without all n, one more is sent.
  bool delivered(test::UdpReceiver* rx, const std::string& ip, int n) {
    int got = 0;
    test::send_until_delivered(a_, *rx, ip, kPort, n, next_tag(), &got);
    return got >= n;
  }

  // Sends n datagrams from A, then checks that none arrives; returns the number sent.
  int sent_but_not_delivered(test::UdpReceiver* rx, const std::string& ip, int n) {
    const std::string tag = next_tag();
    const int sent = test::send_udp(a_, ip, kPort, n, tag);
    EXPECT_EQ(rx->drain(200ms, tag), 0) << "datagrams to " << ip << " got through";
    return sent;
  }

  void create_manager() {
    test::NetnsScope in(a_);
    auto m = IsolationManager::create(IsolationOptions{pin_dir_});
    ASSERT_TRUE(m.has_value()) << m.error();
    manager_ = std::move(*m);
  }

  void apply(const std::string& dev, const std::vector<IpPrefix>& allowed) {
    test::NetnsScope in(a_);
    auto r = manager_->apply(dev, allowed);
    ASSERT_TRUE(r.has_value()) << r.error();
  }

  PortDropCounters counters_of(const std::string& dev) {
    for (const auto& c : manager_->counters()) {
      if (c.netdev == dev) return c;
    }
    return PortDropCounters{};
  }

  bool dropped_reaches(const std::string& dev, std::uint64_t n) {
    return test::eventually([&] { return counters_of(dev).dropped_packets >= n; }) &&
           counters_of(dev).dropped_packets == n;
  }

  // The id of the program in our filter on dev's egress hook, 0 when there is none.
  std::uint32_t filter_prog_id(const std::string& dev) {
    test::NetnsScope in(a_);
    bpf_tc_hook hook{};
    hook.sz = sizeof(hook);
    hook.ifindex = static_cast<int>(if_nametoindex(dev.c_str()));
    hook.attach_point = BPF_TC_EGRESS;
    bpf_tc_opts opts{};
    opts.sz = sizeof(opts);
    opts.handle = kIsolationTcHandle;
    opts.priority = kIsolationTcPriority;
    return bpf_tc_query(&hook, &opts) == 0 ? opts.prog_id : 0;
  }

  std::string tc(const std::string& args) { return sh("ip netns exec " + a_ + " tc " + args).output; }

  std::unique_ptr<test::Namespaces> netns_;
  std::string a_, b_, c_, pin_dir_;
  std::unique_ptr<test::UdpReceiver> rx_b_, rx_c_, rx_c6_, rx_m_;
  std::unique_ptr<IsolationManager> manager_;
  int step_ = 0;
};

const std::vector<IpPrefix> kSubnet1 = {prefix("198.18.1.0/24"), prefix("2001:db8:1::/64")};

TEST_F(IsolationE2E, DropsOtherSubnetCountsExactlyAndLeavesManagementAlone) {
  create_manager();
  apply("a0", kSubnet1);
  EXPECT_EQ(manager_->attached(), std::vector<std::string>{"a0"});
  EXPECT_NE(filter_prog_id("a0"), 0u);

  EXPECT_TRUE(delivered(rx_b_.get(), "198.18.1.2", 5));
  EXPECT_GE(counters_of("a0").passed_packets, 5u);
  EXPECT_EQ(counters_of("a0").dropped_packets, 0u);

  const int sent4 = sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 7);
  EXPECT_EQ(sent4, 7);
  EXPECT_TRUE(dropped_reaches("a0", 7));
  const int sent6 = sent_but_not_delivered(rx_c6_.get(), "2001:db8:2::2", 3);
  EXPECT_EQ(sent6, 3);
  EXPECT_TRUE(dropped_reaches("a0", 10));
  // Payload + UDP 8 + IPv4 20 / IPv6 40 + Ethernet 14.
  EXPECT_EQ(counters_of("a0").dropped_bytes,
            7u * (kPayloadSize + 8 + 20 + 14) + 3u * (kPayloadSize + 8 + 40 + 14));

  // The management port has no filter and its traffic flows; a0's counters do not move.
  EXPECT_TRUE(delivered(rx_m_.get(), "198.19.0.2", 4));
  EXPECT_EQ(tc("filter show dev m0 egress"), "");
  EXPECT_EQ(tc("qdisc show dev m0").find("clsact"), std::string::npos);
  EXPECT_EQ(counters_of("a0").dropped_packets, 10u);
  EXPECT_EQ(manager_->counters().size(), 1u);
}

TEST_F(IsolationE2E, PrefixChangeIsAMapUpdateWithoutReattach) {
  create_manager();
  apply("a0", kSubnet1);
  const std::uint32_t id = filter_prog_id("a0");
  ASSERT_NE(id, 0u);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 2);
  EXPECT_TRUE(dropped_reaches("a0", 2));

  apply("a0", {prefix("198.18.1.0/24"), prefix("198.18.2.0/24"), prefix("2001:db8:1::/64")});
  EXPECT_EQ(filter_prog_id("a0"), id);
  EXPECT_NE(tc("filter show dev a0 egress").find("id " + std::to_string(id)), std::string::npos);
  EXPECT_TRUE(delivered(rx_c_.get(), "198.18.2.2", 3));
  sent_but_not_delivered(rx_c6_.get(), "2001:db8:2::2", 1);  // IPv6 still limited to subnet 1
  EXPECT_TRUE(dropped_reaches("a0", 3));

  // Narrow again: subnet 2 is dropped again, still the same program.
  apply("a0", kSubnet1);
  EXPECT_EQ(filter_prog_id("a0"), id);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 4);
  EXPECT_TRUE(dropped_reaches("a0", 7));

  // An empty list drops all routable IP of the port, even the same subnet.
  apply("a0", {});
  sent_but_not_delivered(rx_b_.get(), "198.18.1.2", 2);
  EXPECT_TRUE(dropped_reaches("a0", 9));
}

TEST_F(IsolationE2E, RemoveDeletesOnlyTheQdiscsItCreated) {
  ASSERT_EQ(sh("ip netns exec " + a_ + " tc qdisc add dev m0 clsact").status, 0);
  create_manager();
  apply("a0", kSubnet1);
  apply("m0", {prefix("198.19.0.0/24")});
  EXPECT_EQ(manager_->attached(), (std::vector<std::string>{"a0", "m0"}));
  EXPECT_NE(tc("qdisc show dev a0").find("clsact"), std::string::npos);

  {
    test::NetnsScope in(a_);
    ASSERT_TRUE(manager_->remove("a0").has_value());
    ASSERT_TRUE(manager_->remove("a0").has_value());          // idempotent
    ASSERT_TRUE(manager_->remove("never-seen").has_value());  // never applied: untouched
  }
  EXPECT_EQ(tc("qdisc show dev a0").find("clsact"), std::string::npos);
  EXPECT_EQ(tc("filter show dev a0 egress"), "");
  EXPECT_TRUE(delivered(rx_c_.get(), "198.18.2.2", 2));

  {
    test::NetnsScope in(a_);
    manager_->detach_all();
  }
  EXPECT_TRUE(manager_->attached().empty());
  EXPECT_EQ(tc("filter show dev m0 egress"), "");
  EXPECT_NE(tc("qdisc show dev m0").find("clsact"), std::string::npos)
      << "a qdisc hsnsd did not create was deleted";
}

TEST_F(IsolationE2E, RestartKeepsPolicyAndCounters) {
  create_manager();
  apply("a0", kSubnet1);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 3);
  ASSERT_TRUE(dropped_reaches("a0", 3));
  const std::uint32_t old_id = filter_prog_id("a0");

  manager_.reset();  // a daemon that exits (or crashes) without detach_all
  EXPECT_EQ(filter_prog_id("a0"), old_id);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 2);  // still enforced, still counted in the pins
  for (const char* map : {"hsns_iso_v4", "hsns_iso_v6", "hsns_iso_ports", "hsns_iso_counters"}) {
    EXPECT_TRUE(std::filesystem::exists(pin_dir_ + "/" + map)) << map;
  }

  create_manager();
  EXPECT_EQ(manager_->attached(), std::vector<std::string>{"a0"});
  EXPECT_TRUE(dropped_reaches("a0", 5));
  apply("a0", kSubnet1);
  const std::uint32_t new_id = filter_prog_id("a0");
  EXPECT_NE(new_id, 0u);
  EXPECT_EQ(tc("filter show dev a0 egress").find("id " + std::to_string(old_id) + " "), std::string::npos);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 1);
  EXPECT_TRUE(dropped_reaches("a0", 6));

  // The qdisc ownership survived the restart: detach_all removes the clsact the first instance made.
  {
    test::NetnsScope in(a_);
    manager_->detach_all();
  }
  EXPECT_EQ(tc("qdisc show dev a0").find("clsact"), std::string::npos);
  EXPECT_TRUE(delivered(rx_c_.get(), "198.18.2.2", 1));
}

TEST_F(IsolationE2E, HandDeletedQdiscIsRestoredByTheNextApply) {
  create_manager();
  apply("a0", kSubnet1);
  const std::uint32_t id = filter_prog_id("a0");
  ASSERT_NE(id, 0u);
  ASSERT_EQ(sh("ip netns exec " + a_ + " tc qdisc del dev a0 clsact").status, 0);
  EXPECT_TRUE(delivered(rx_c_.get(), "198.18.2.2", 1));  // drift: nothing enforces now

  apply("a0", kSubnet1);
  EXPECT_EQ(filter_prog_id("a0"), id);
  sent_but_not_delivered(rx_c_.get(), "198.18.2.2", 2);
  EXPECT_TRUE(dropped_reaches("a0", 2));
  {
    test::NetnsScope in(a_);
    manager_->detach_all();
  }
  EXPECT_EQ(tc("qdisc show dev a0").find("clsact"), std::string::npos);
}

TEST_F(IsolationE2E, RecoveryForgetsNetdevsThatDisappeared) {
  create_manager();
  apply("a0", kSubnet1);
  apply("m0", {prefix("198.19.0.0/24")});
  manager_.reset();
  ASSERT_EQ(sh("ip -n " + a_ + " link del m0").status, 0);
  create_manager();
  EXPECT_EQ(manager_->attached(), std::vector<std::string>{"a0"});
}

TEST_F(IsolationE2E, ApplyToMissingNetdevFails) {
  create_manager();
  test::NetnsScope in(a_);
  auto r = manager_->apply("hsns-nope0", kSubnet1);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("hsns-nope0"), std::string::npos);
  EXPECT_TRUE(manager_->attached().empty());
}

}  // namespace
}  // namespace hsns::daemon
