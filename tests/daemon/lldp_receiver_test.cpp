// The LLDP receiver on real packet sockets: a veth pair between two network namespaces the test makes
// ("sw" the switch side, "h" the host side with the parameter-plane port npu0), the lldp component
// listening on npu0 inside "h".
// - Hand-built frames sent from the switch side: good ones become neighbours, malformed ones are counted
//   by reason and never a neighbour, frames to another address are filtered out, TTL 0 removes a
//   neighbour at once and a short TTL expires; /metrics passes `promtool check metrics`.
// - Real LLDP from lldpd (Debian's lldpd) running in "sw" with its own socket, pid file and configuration
//   in the test's temporary directory: the neighbour's chassis MAC is the switch port's MAC, with the
//   configured system name, port ID and description, management address and TTL; stopping lldpd sends
//   its shutdown LLDPDU and the neighbour goes away.
// Needs root (namespaces, packet sockets), lldpd and promtool: a missing one is a failure, not a skip.
// The namespaces go away with the test's Namespaces object, also when it fails.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "lldp_component.h"
#include "lldp_frames.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/process.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace {

using namespace std::chrono_literals;
using namespace hsns::testing;
using namespace hsns::testing::lldp_frames;
using hsns::daemon::LldpComponent;

class LldpReceiver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0) << "needs root: network namespaces and packet sockets";
    sw_ = nets_.add("sw");
    host_ = nets_.add("h");
    nets_.veth({sw_, "swp1", {"198.18.70.1/24"}}, {host_, "npu0", {"198.18.70.2/24"}});
    wait_link_up();
    config_.npus = {{0, "npu0"}};
    component_ = std::make_unique<LldpComponent>(config_, "h1", registry_);
    NetnsScope in(host_);
    ASSERT_TRUE(component_->start());
  }

  // The kernel brings a new veth's carrier up asynchronously (linkwatch), and drops what is sent before:
  // wait until both ends say so.
  void wait_link_up() {
    const auto up = [](const std::string& ns, const std::string& ifname) {
      return Namespaces::ip(ns, {"link", "show", ifname}).find("state UP") != std::string::npos;
    };
    ASSERT_TRUE(wait_for([&] { return up(sw_, "swp1") && up(host_, "npu0"); }, 10s))
        << Namespaces::ip(sw_, {"link", "show", "swp1"});
  }

  // One tick of the component inside the host namespace (its sockets were opened there).
  void tick() {
    NetnsScope in(host_);
    component_->tick(hsns::daemon::Component::Clock::now());
  }
  // Ticks until the condition holds (or the timeout passes).
  bool tick_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    return wait_for(
        [&] {
          tick();
          return condition();
        },
        timeout, 50ms);
  }

  // Sends frames on the switch side of the link, as a switch would.
  void send(const std::vector<Bytes>& frames) {
    NetnsScope in(sw_);
    const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(if_nametoindex("swp1"));
    to.sll_halen = 6;
    for (const auto& f : frames)
      EXPECT_EQ(::sendto(fd, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
                static_cast<ssize_t>(f.size()));
    ::close(fd);
  }

  std::string scrape() { return prometheus::TextSerializer().Serialize(registry_.Collect()); }
  double metric(const std::string& selector) { return metric_value(scrape(), selector).value_or(-1); }
  std::size_t neighbours() const { return component_->table().size("npu0"); }

  Namespaces nets_{"hslldp"};
  std::string sw_, host_;
  hsns::daemon::DaemonConfig config_;
  prometheus::Registry registry_;
  std::unique_ptr<LldpComponent> component_;
};

TEST_F(LldpReceiver, CountsMalformedFramesExpiresAndLintsItsMetrics) {
  EXPECT_EQ(metric("hsns_lldp_ports_listening"), 1);
  const Bytes good = cat({chassis_mac(), port_ifname("swp1"), ttl(120), tlv(5, text("leaf-9")), end()});
  Bytes elsewhere = frame(good);
  elsewhere[5] = 0x03;  // 01:80:c2:00:00:03, not the nearest-bridge address: filtered by the socket
  send({frame(good), frame(cat({chassis_mac(), port_ifname("swp1")})), frame({0x03, 0xff, 4, 1}), elsewhere,
        frame(cat({tlv(1, text(7, "other")), port_ifname("x"), ttl(0)})),
        frame(cat({chassis_mac(), port_ifname("swp1"), ttl(1), tlv(127, {0, 0x12, 0x0f, 1, 3})}),
              {2, 0, 0, 0, 0, 9})});
  ASSERT_TRUE(
      tick_until([&] { return metric(R"(hsns_lldp_frames_total{netdev="npu0",result="ok"})") == 3; }, 5s))
      << scrape();
  EXPECT_EQ(metric(R"(hsns_lldp_frames_total{netdev="npu0",result="missing_ttl"})"), 1);
  EXPECT_EQ(metric(R"(hsns_lldp_frames_total{netdev="npu0",result="tlv_beyond_frame"})"), 1);
  EXPECT_EQ(metric(R"(hsns_lldp_skipped_tlvs_total{netdev="npu0",kind="org_specific"})"), 1);
  // The TTL-1 advertisement replaced leaf-9's (same chassis and port ID) and expires a second later.
  ASSERT_TRUE(tick_until([&] { return neighbours() == 0; }, 5s)) << scrape();
  EXPECT_EQ(metric("hsns_lldp_expired_total"), 1);
  EXPECT_EQ(metric(R"(hsns_lldp_neighbors{netdev="npu0"})"), 0);

  // A neighbour, then its shutdown LLDPDU.
  send({frame(good)});
  ASSERT_TRUE(tick_until([&] { return neighbours() == 1; }, 5s)) << scrape();
  EXPECT_EQ(
      metric(
          R"(hsns_lldp_neighbor_info{netdev="npu0",chassis_id="02:00:5e:10:20:30",port_id="swp1",system_name="leaf-9"})"),
      1)
      << scrape();
  const auto section = component_->neighbors();
  ASSERT_EQ(section.neighbors.size(), 1U);
  EXPECT_EQ(section.host, "h1");
  EXPECT_EQ(section.neighbors[0].npu, 0);
  EXPECT_EQ(section.neighbors[0].system_name, "leaf-9");

  const std::string text = scrape();
  const auto lint = run_command({"promtool", "check", "metrics"}, text);
  EXPECT_EQ(lint.status, 0) << lint;
  EXPECT_EQ(lint.output, "") << "promtool reported lint problems\n" << text;

  send({frame(cat({chassis_mac(), port_ifname("swp1"), ttl(0)}))});
  ASSERT_TRUE(tick_until([&] { return neighbours() == 0; }, 5s)) << scrape();
  EXPECT_EQ(metric("hsns_lldp_shutdowns_total"), 1);
  EXPECT_EQ(metric("hsns_lldp_expired_total"), 1);
  EXPECT_FALSE(scrape().find("hsns_lldp_neighbor_info{") != std::string::npos) << scrape();
}

TEST_F(LldpReceiver, FollowsThePortThroughReloadAndRecreation) {
  const Bytes good = cat({chassis_mac(), port_ifname("swp1"), ttl(120), tlv(5, text("leaf-9")), end()});
  send({frame(good)});
  ASSERT_TRUE(tick_until([&] { return neighbours() == 1; }, 5s)) << scrape();

  // npu0 leaves the configuration: closed, its neighbours and its gauge series gone.
  hsns::daemon::DaemonConfig none;
  {
    NetnsScope in(host_);
    component_->reload(none);
  }
  EXPECT_EQ(neighbours(), 0U);
  EXPECT_EQ(metric("hsns_lldp_ports_listening"), 0);
  EXPECT_EQ(metric(R"(hsns_lldp_neighbors{netdev="npu0"})"), -1) << scrape();
  EXPECT_EQ(scrape().find("hsns_lldp_neighbor_info{"), std::string::npos) << scrape();
  {
    NetnsScope in(host_);
    component_->reload(config_);
  }
  EXPECT_EQ(metric("hsns_lldp_ports_listening"), 1);

  // The netdev deleted: the socket is closed and the port retried until a netdev of that name is back.
  Namespaces::ip(host_, {"link", "del", "npu0"});
  ASSERT_TRUE(tick_until([&] { return metric("hsns_lldp_ports_listening") == 0; }, 5s)) << scrape();
  EXPECT_GE(metric(R"(hsns_lldp_socket_errors_total{netdev="npu0"})"), 1);
  nets_.veth({sw_, "swp1", {}}, {host_, "npu0", {}});
  wait_link_up();
  ASSERT_TRUE(tick_until([&] { return metric("hsns_lldp_ports_listening") == 1; }, 5s)) << scrape();
  send({frame(good)});
  ASSERT_TRUE(tick_until([&] { return neighbours() == 1; }, 5s)) << scrape();
}

TEST_F(LldpReceiver, ReceivesRealLldpFromLldpd) {
  ASSERT_EQ(run_command({"sh", "-c", "command -v lldpd"}).status, 0) << "lldpd is not installed";
  TempDir dir("hsns-lldp");
  // lldpd runs lldpcli as its unprivileged user (_lldpd) to apply the file: it must reach the socket.
  namespace fs = std::filesystem;
  fs::permissions(
      dir.path(),
      fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec,
      fs::perm_options::add);
  std::ofstream(dir / "lldpd.conf") << "configure system hostname leaf-7\n"
                                       "configure lldp tx-interval 1\n"
                                       "configure lldp tx-hold 4\n"
                                       "configure ports swp1 lldp portidsubtype local swp12 description "
                                       "to-h1-npu0\n";
  const auto link = nlohmann::json::parse(Namespaces::ip(sw_, {"-j", "link", "show", "swp1"}));
  const std::string switch_mac = link.at(0).at("address");

  // Foreground (-d -d: stderr only, no syslog), its own control socket and pid file, only swp1, the
  // switch side's address as management address; lldpcli applies the file before the first LLDPDU.
  Process lldpd(Namespaces::in(sw_, {"lldpd", "-d", "-d", "-u", (dir / "lldpd.socket").string(), "-p",
                                     (dir / "lldpd.pid").string(), "-I", "swp1", "-m", "198.18.70.1", "-O",
                                     (dir / "lldpd.conf").string()}),
                log_to(dir / "lldpd.log"));
  ASSERT_TRUE(tick_until([&] { return neighbours() == 1; }, 20s)) << read_file(dir / "lldpd.log") << scrape();

  const auto section = component_->neighbors();
  ASSERT_EQ(section.neighbors.size(), 1U);
  const auto& n = section.neighbors[0];
  EXPECT_EQ(n.netdev, "npu0");
  EXPECT_EQ(n.npu, 0);
  EXPECT_EQ(n.source_mac, switch_mac);
  EXPECT_EQ(n.chassis_id_subtype, "mac_address");
  EXPECT_EQ(n.chassis_id, switch_mac);
  EXPECT_EQ(n.port_id_subtype, "locally_assigned");
  EXPECT_EQ(n.port_id, "swp12");
  EXPECT_EQ(n.port_description, "to-h1-npu0");
  EXPECT_EQ(n.system_name, "leaf-7");
  EXPECT_EQ(n.ttl_s, 4);
  ASSERT_FALSE(n.management_addresses.empty());
  EXPECT_EQ(n.management_addresses[0].family, 1);
  EXPECT_EQ(n.management_addresses[0].address, "198.18.70.1");
  EXPECT_GT(n.last_seen_ms, 0);
  // The section the report will carry reads back strictly.
  auto back = hsns::proto::decode<hsns::proto::LldpNeighbors>(hsns::proto::encode(section));
  ASSERT_TRUE(back) << back.error().detail;
  EXPECT_EQ(*back, section);
  EXPECT_EQ(metric(R"(hsns_lldp_neighbors{netdev="npu0"})"), 1);

  // lldpd stops: its shutdown LLDPDU (TTL 0) removes the neighbour before its TTL (4 s) could run out.
  const auto stopped_at = std::chrono::steady_clock::now();
  EXPECT_EQ(lldpd.stop(5s).shell(), 0) << read_file(dir / "lldpd.log");
  ASSERT_TRUE(tick_until([&] { return neighbours() == 0; }, 10s)) << scrape();
  EXPECT_EQ(metric("hsns_lldp_shutdowns_total"), 1) << scrape();
  EXPECT_EQ(metric("hsns_lldp_expired_total"), 0) << scrape();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 4s);
  EXPECT_EQ(metric(R"(hsns_lldp_frames_total{netdev="npu0",result="missing_ttl"})"), -1)
      << "no malformed frame";
}

}  // namespace
