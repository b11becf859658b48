// End to end: subnet isolation and the RoCE flow probe attached to the same netdev, as hsnsd runs them on
// every NPU port, over veths in network namespaces the test creates (and removes).
//
//   A (sender)                    B (router)                    C
//   a0 198.18.1.1/24 ──────────── b0 198.18.1.2/24
//                                 b1 198.18.2.254/24 ────────── c0 198.18.2.2/24
//
// a0 carries isolation (egress: only 198.18.1.0/24 allowed) and the flow probe (ingress and egress, before
// isolation). RoCEv2 datagrams (UDP 4791, a real BTH) from A to B pass and are counted by the probe; to C
// they are dropped by isolation and still seen by the probe. Stopping either one leaves the other working;
// stopping both leaves nothing of ours behind. Needs root.
#include <gtest/gtest.h>
#include <net/if.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "../isolation/netns.h"
#include "bpf/bpffs.h"
#include "bpf/tc_attach.h"
#include "flow_probe.h"
#include "isolation/isolation.h"
#include "packet.h"

namespace hsns::daemon {
namespace {

using test::sh;
using namespace std::chrono_literals;

constexpr std::uint16_t kRocePort = 4791;
constexpr const char* kPinPrefix = "hsns-test-attach-";  // under /sys/fs/bpf
constexpr const char* kToB = "198.18.1.2";
constexpr const char* kToC = "198.18.2.2";

class SharedNetdev : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root (network namespaces, eBPF)";
    netns_ = std::make_unique<test::Namespaces>("hsshr");
    a_ = netns_->add("a");
    b_ = netns_->add("b");
    c_ = netns_->add("c");
    test::remove_stale_pin_dirs(kPinPrefix, [](const std::string& dir) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    const std::string pins = std::string("/sys/fs/bpf/") + kPinPrefix + std::to_string(getpid());
    iso_pin_ = pins + "-isolation";
    probe_pin_ = pins + "-roce";
    for (const std::string& cmd : {
             "ip -n " + a_ + " link add a0 type veth peer name b0 netns " + b_,
             "ip -n " + b_ + " link add b1 type veth peer name c0 netns " + c_,
             "ip -n " + a_ + " addr add 198.18.1.1/24 dev a0",
             "ip -n " + b_ + " addr add 198.18.1.2/24 dev b0",
             "ip -n " + b_ + " addr add 198.18.2.254/24 dev b1",
             "ip -n " + c_ + " addr add 198.18.2.2/24 dev c0",
             "ip -n " + a_ + " link set a0 up",
             "ip -n " + b_ + " link set b0 up",
             "ip -n " + b_ + " link set b1 up",
             "ip -n " + c_ + " link set c0 up",
             "ip netns exec " + b_ + " sysctl -qw net.ipv4.ip_forward=1",
             "ip -n " + a_ + " route add 198.18.2.0/24 via 198.18.1.2 dev a0",
             "ip -n " + c_ + " route add 198.18.1.0/24 via 198.18.2.254 dev c0",
         }) {
      const auto r = sh(cmd);
      ASSERT_EQ(r.status, 0) << cmd << ": " << r.output;
    }
    rx_b_ = std::make_unique<test::UdpReceiver>(b_, kToB, kRocePort);
    rx_c_ = std::make_unique<test::UdpReceiver>(c_, kToC, kRocePort);
    ASSERT_TRUE(delivered(rx_c_.get(), kToC, 1));  // routing works before anything is attached
    sent_.clear();                                 // sent before the probe ran
    test::NetnsScope in(a_);
    a0_ = static_cast<int>(if_nametoindex("a0"));
    ASSERT_GT(a0_, 0);
  }

  void TearDown() override {
    {
      test::NetnsScope in(a_);
      if (isolation_) isolation_->detach_all();
      if (probe_) probe_->stop(true);
    }
    isolation_.reset();
    probe_.reset();
    rx_b_.reset();
    rx_c_.reset();
    netns_.reset();
    (void)IsolationManager::remove_pins(iso_pin_);
    std::error_code ec;
    std::filesystem::remove_all(probe_pin_, ec);
  }

  // A RoCEv2 SEND from A to `dst` (UDP payload: BTH + ICRC), unique to one step of the test.
  std::string roce_payload(const char* dst) {
    roce_gen::PacketSpec spec;
    roce_gen::parse_address("198.18.1.1", spec.src);
    roce_gen::parse_address(dst, spec.dst);
    spec.dest_qp = 0x100 + static_cast<std::uint32_t>(++step_);
    spec.psn = static_cast<std::uint32_t>(step_);
    const roce_gen::Bytes bytes = roce_gen::roce_udp_payload(spec);
    return std::string(bytes.begin(), bytes.end());
  }

  // Sends n datagrams from A; true when n arrive (while links settle, one more every 20 ms).
  bool delivered(test::UdpReceiver* rx, const char* ip, int n) {
    int got = 0;
    const int sent = test::send_until_delivered(a_, *rx, ip, kRocePort, n, roce_payload(ip), &got);
    sent_[ip] += static_cast<std::uint64_t>(sent);
    return got >= n;
  }

  // Sends n datagrams from A and checks that none arrives.
  void dropped(test::UdpReceiver* rx, const char* ip, int n) {
    const std::string tag = roce_payload(ip);
    EXPECT_EQ(test::send_udp(a_, ip, kRocePort, n, tag), n);
    sent_[ip] += static_cast<std::uint64_t>(n);
    EXPECT_EQ(rx->drain(200ms, tag), 0) << "datagrams to " << ip << " got through";
  }

  void start_isolation() {
    test::NetnsScope in(a_);
    auto m = IsolationManager::create(IsolationOptions{iso_pin_});
    ASSERT_TRUE(m.has_value()) << m.error();
    isolation_ = std::move(*m);
    auto r = isolation_->apply("a0", {*IpPrefix::parse("198.18.1.0/24")});
    ASSERT_TRUE(r.has_value()) << r.error();
  }

  void stop_isolation() {
    test::NetnsScope in(a_);
    isolation_->detach_all();
    isolation_.reset();
    auto r = IsolationManager::remove_pins(iso_pin_);
    EXPECT_TRUE(r.has_value()) << r.error();
  }

  void start_probe() {
    FlowProbeConfig config;
    config.table_size = 4096;
    config.pin_dir = probe_pin_;
    config.sink = "";
    config.interfaces = {FlowProbeInterface{"a0", AttachMode::tc, true, true, false}};
    test::NetnsScope in(a_);
    auto p = FlowProbe::start(config);
    ASSERT_TRUE(p.has_value()) << p.error();
    probe_ = std::move(*p);
  }

  void stop_probe() {
    test::NetnsScope in(a_);
    probe_->stop(true);
    probe_.reset();
  }

  // Harvests and commits one batch; adds its RoCE packets A sent on a0's egress to seen_ (by destination).
  void harvest() {
    test::NetnsScope in(a_);
    auto batch = probe_->harvest();
    ASSERT_TRUE(batch.has_value()) << batch.error();
    for (const auto& r : batch->records) {
      if (r.ifname != "a0" || r.key.direction != ROCE_DIR_EGRESS) continue;
      for (const char* dst : {kToB, kToC}) {
        std::array<std::uint8_t, 16> want{};
        roce_gen::parse_address(dst, want);
        if (std::memcmp(r.key.dst, want.data(), 16) == 0) seen_[dst] += r.stats.packets;
      }
    }
    auto c = probe_->commit(*batch);
    ASSERT_TRUE(c.has_value()) << c.error();
  }

  std::uint64_t isolation_drops() {
    for (const auto& c : isolation_->counters())
      if (c.netdev == "a0") return c.dropped_packets;
    return 0;
  }

  std::uint32_t filter(bpf::TcUser user, bpf::TcHook hook) {
    test::NetnsScope in(a_);
    auto tc = bpf::TcAttach::open(bpf::kBpffsMount);
    EXPECT_TRUE(tc.has_value());
    return tc ? tc->filter_prog_id(a0_, user, hook) : 0;
  }

  std::optional<bpf::QdiscRecord> record() {
    test::NetnsScope in(a_);
    auto tc = bpf::TcAttach::open(bpf::kBpffsMount);
    EXPECT_TRUE(tc.has_value());
    if (!tc) return std::nullopt;
    auto r = tc->record(a0_);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r ? *r : std::nullopt;
  }

  std::string tc(const std::string& args) { return sh("ip netns exec " + a_ + " tc " + args).output; }
  bool has_clsact() { return tc("qdisc show dev a0").find("clsact") != std::string::npos; }

  // Both running: isolation passes A->B and drops A->C (counted), the probe records both exactly.
  void expect_both_work() {
    EXPECT_NE(filter(bpf::TcUser::isolation, bpf::TcHook::egress), 0u);
    EXPECT_NE(filter(bpf::TcUser::flow_probe, bpf::TcHook::ingress), 0u);
    EXPECT_NE(filter(bpf::TcUser::flow_probe, bpf::TcHook::egress), 0u);
    const std::uint64_t drops = isolation_drops();
    EXPECT_TRUE(delivered(rx_b_.get(), kToB, 5));
    dropped(rx_c_.get(), kToC, 4);
    EXPECT_TRUE(test::eventually([&] { return isolation_drops() == drops + 4; }));
    harvest();
    EXPECT_EQ(seen_[kToB], sent_[kToB]);
    EXPECT_EQ(seen_[kToC], sent_[kToC]) << "the probe runs before isolation and sees what it drops";
  }

  // No filter, qdisc we made, registry record or pin of ours is left.
  void expect_nothing_left(bool foreign_clsact) {
    EXPECT_EQ(has_clsact(), foreign_clsact) << tc("qdisc show dev a0");
    EXPECT_EQ(tc("filter show dev a0 ingress"), "");
    EXPECT_EQ(tc("filter show dev a0 egress"), "");
    EXPECT_EQ(record(), std::nullopt);
    EXPECT_FALSE(std::filesystem::exists(iso_pin_));
    EXPECT_FALSE(std::filesystem::exists(probe_pin_));
  }

  std::unique_ptr<test::Namespaces> netns_;
  std::string a_, b_, c_, iso_pin_, probe_pin_;
  int a0_ = 0;
  std::unique_ptr<test::UdpReceiver> rx_b_, rx_c_;
  std::unique_ptr<IsolationManager> isolation_;
  std::unique_ptr<FlowProbe> probe_;
  std::map<std::string, std::uint64_t> sent_, seen_;
  int step_ = 0;
};

TEST_F(SharedNetdev, IsolationCreatesTheQdiscAndLeavesFirst) {
  start_isolation();
  start_probe();
  ASSERT_EQ(record(), (bpf::QdiscRecord{bit(bpf::TcUser::isolation) | bit(bpf::TcUser::flow_probe),
                                        bpf::kQdiscCreatedByHsns}));
  expect_both_work();

  stop_isolation();
  EXPECT_TRUE(has_clsact()) << "the probe's qdisc went with isolation";
  EXPECT_EQ(filter(bpf::TcUser::isolation, bpf::TcHook::egress), 0u);
  EXPECT_NE(filter(bpf::TcUser::flow_probe, bpf::TcHook::ingress), 0u);
  EXPECT_NE(filter(bpf::TcUser::flow_probe, bpf::TcHook::egress), 0u);
  // Nothing isolates any more, and the probe keeps recording.
  EXPECT_TRUE(delivered(rx_c_.get(), kToC, 3));
  EXPECT_TRUE(delivered(rx_b_.get(), kToB, 2));
  harvest();
  EXPECT_EQ(seen_[kToB], sent_[kToB]);
  EXPECT_EQ(seen_[kToC], sent_[kToC]);

  stop_probe();
  expect_nothing_left(false);
}

TEST_F(SharedNetdev, ProbeCreatesTheQdiscAndLeavesFirst) {
  start_probe();
  start_isolation();
  ASSERT_EQ(record(), (bpf::QdiscRecord{bit(bpf::TcUser::isolation) | bit(bpf::TcUser::flow_probe),
                                        bpf::kQdiscCreatedByHsns}));
  expect_both_work();

  stop_probe();
  EXPECT_TRUE(has_clsact()) << "isolation's qdisc went with the probe";
  EXPECT_EQ(filter(bpf::TcUser::flow_probe, bpf::TcHook::ingress), 0u);
  EXPECT_EQ(filter(bpf::TcUser::flow_probe, bpf::TcHook::egress), 0u);
  EXPECT_NE(filter(bpf::TcUser::isolation, bpf::TcHook::egress), 0u);
  // Verdicts go on.
  const std::uint64_t drops = isolation_drops();
  EXPECT_TRUE(delivered(rx_b_.get(), kToB, 2));
  dropped(rx_c_.get(), kToC, 3);
  EXPECT_TRUE(test::eventually([&] { return isolation_drops() == drops + 3; }));

  stop_isolation();
  expect_nothing_left(false);
}

TEST_F(SharedNetdev, ClsactSomeoneElseCreatedSurvivesBoth) {
  ASSERT_EQ(sh("ip netns exec " + a_ + " tc qdisc add dev a0 clsact").status, 0);
  start_isolation();
  start_probe();
  ASSERT_EQ(record(), (bpf::QdiscRecord{bit(bpf::TcUser::isolation) | bit(bpf::TcUser::flow_probe), 0}));
  expect_both_work();
  stop_isolation();
  stop_probe();
  expect_nothing_left(true);
}

}  // namespace
}  // namespace hsns::daemon
