// The counters of daemon/counters: deltas with resets and wraps (hand-computed values), the sysfs readers on
// the recorded mlx5 and rxe layouts (tests/fixtures/daemon/sysfs-counters), the mlx5 PFC name mapping on
// recorded `ethtool -S` listings, the real ETHTOOL_GSTATS ioctl on a veth pair in a namespace of the test's
// own, and the "counters" component: snapshot, metrics (promtool clean), bad input counted, never fatal.
#include "hsns/proto/counters.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "counter_delta.h"
#include "counters_component.h"
#include "ethtool_stats.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/shell.h"
#include "support/temp_dir.h"
#include "sysfs_counters.h"

namespace hsns::daemon::counters {
namespace {

namespace fs = std::filesystem;
using hsns::testing::TempDir;

std::string fixture(const std::string& relative) {
  return hsns::testing::source_path("tests/fixtures/daemon/" + relative).string();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// ---- deltas ----

TEST(CounterDelta, IncreaseResetAndWrapOf32And64BitCounters) {
  EXPECT_EQ(counter_delta(100, 150, 64), (Delta{50, Change::increase}));
  EXPECT_EQ(counter_delta(7, 7, 32), (Delta{0, Change::increase}));
  // 32 bits: 2^32 - 4294967000 + 200 = 296 + 200 = 496.
  EXPECT_EQ(counter_delta(4294967000ULL, 200, 32), (Delta{496, Change::wrap}));
  // The same fall of a 64-bit counter is a reset: the count since the reset.
  EXPECT_EQ(counter_delta(4294967000ULL, 200, 64), (Delta{200, Change::reset}));
  // The edges of the quarters: previous 3 * 2^30 is the top quarter's first value, current 2^30 - 1 the
  // bottom quarter's last: 2^32 - 3221225472 + 1073741823 = 1073741824 + 1073741823.
  EXPECT_EQ(counter_delta(3221225472ULL, 1073741823ULL, 32), (Delta{2147483647ULL, Change::wrap}));
  EXPECT_EQ(counter_delta(3221225471ULL, 5, 32), (Delta{5, Change::reset}));
  EXPECT_EQ(counter_delta(3221225472ULL, 1073741824ULL, 32), (Delta{1073741824ULL, Change::reset}));
  EXPECT_EQ(counter_delta(1000, 10, 32), (Delta{10, Change::reset}));
  // 64 bits: 2^64 - (2^64 - 10) + 5 = 15.
  EXPECT_EQ(counter_delta(18446744073709551606ULL, 5, 64), (Delta{15, Change::wrap}));
  EXPECT_EQ(counter_delta(18446744073709551606ULL, 1ULL << 62, 64), (Delta{1ULL << 62, Change::reset}));
}

TEST(CounterDelta, DeclaredWidths) {
  EXPECT_EQ(counter_width("port_xmit_data"), 32U);
  EXPECT_EQ(counter_width("port_rcv_packets"), 32U);
  EXPECT_EQ(counter_width("port_xmit_wait"), 32U);
  EXPECT_EQ(counter_width("unicast_xmit_packets"), 64U);
  EXPECT_EQ(counter_width("symbol_error"), 64U);  // saturates: a fall is always a reset
}

TEST(DeltaTracker, ScaledDeltasRatesAndDiscontinuities) {
  DeltaTracker t;
  // First reading: value only.
  auto s = t.update("x", 1000, 32, 4, 0);
  EXPECT_TRUE(t.last_was_first());
  EXPECT_EQ(s, (proto::CounterSample{4000, 0, 0}));
  // 2 s later 1100 words: 400 bytes, 200 bytes/s.
  s = t.update("x", 1100, 32, 4, 2.0);
  EXPECT_FALSE(t.last_was_first());
  EXPECT_EQ(s, (proto::CounterSample{4400, 400, 200}));
  // A 32-bit wrap: 2^32 - 4294967200 + 104 = 200 words = 800 bytes over 4 s.
  t.update("y", 4294967200ULL, 32, 4, 0);
  s = t.update("y", 104, 32, 4, 4.0);
  EXPECT_EQ(s, (proto::CounterSample{416, 800, 200}));
  EXPECT_EQ(t.wraps(), 1U);
  // A declared 32-bit counter seen above 2^32 - 1 is 64 bits: the same kind of fall is then a reset.
  t.update("z", 5000000000ULL, 32, 1, 0);
  s = t.update("z", 10, 32, 1, 10.0);
  EXPECT_EQ(s, (proto::CounterSample{10, 10, 1}));
  EXPECT_EQ(t.resets(), 1U);
  EXPECT_EQ(t.wraps(), 1U);
  // forget_unseen(): x is read again, y and z not: they start afresh.
  t.forget_unseen();
  t.update("x", 1200, 32, 4, 1.0);
  t.forget_unseen();
  s = t.update("y", 300, 32, 4, 1.0);
  EXPECT_TRUE(t.last_was_first());
  EXPECT_EQ(s.delta, 0U);
  s = t.update("x", 1300, 32, 4, 1.0);
  EXPECT_EQ(s.delta, 400U);
}

// ---- sysfs ----

std::map<std::string, CounterReading> by_name(const std::vector<CounterReading>& readings) {
  std::map<std::string, CounterReading> out;
  for (const auto& r : readings) out.emplace(r.name, r);
  return out;
}

TEST(SysfsCounters, Mlx5PortCountersAndHwCounters) {
  std::vector<ReadError> errors;
  const auto r = read_rdma_port(fixture("sysfs-counters"), "mlx5_0", 1, errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(r.counters.size(), 21U);
  EXPECT_EQ(r.hw_counters.size(), 29U);  // 30 files, lifespan left out
  const auto c = by_name(r.counters);
  const auto hw = by_name(r.hw_counters);
  EXPECT_EQ(c.at("port_xmit_data"), (CounterReading{"port_xmit_data", 11906312064ULL, 32, 4}));
  EXPECT_EQ(c.at("port_rcv_data").scale, 4U);
  EXPECT_EQ(c.at("port_xmit_packets"), (CounterReading{"port_xmit_packets", 1923349151ULL, 32, 1}));
  EXPECT_EQ(c.at("link_downed"), (CounterReading{"link_downed", 1, 64, 1}));
  EXPECT_EQ(hw.at("np_cnp_sent").raw, 48213U);
  EXPECT_EQ(hw.at("rp_cnp_handled").raw, 39870U);
  EXPECT_EQ(hw.count("lifespan"), 0U);
  // Every counter hsns interprets is in the mlx5 layout, in counters/ or hw_counters/.
  for (const auto& k : kRecognisedRdmaCounters)
    EXPECT_TRUE(c.count(std::string(k.name)) + hw.count(std::string(k.name)) == 1) << k.name;
  EXPECT_EQ(recognised_rdma_counter("np_ecn_marked_roce_packets")->group, "congestion");
  EXPECT_EQ(recognised_rdma_counter("out_of_buffer")->group, "starvation");
  EXPECT_EQ(recognised_rdma_counter("rx_write_requests"), nullptr);
  // Sorted by name.
  EXPECT_EQ(r.counters.front().name, "VL15_dropped");
  EXPECT_EQ(r.hw_counters.front().name, "duplicate_request");
}

TEST(SysfsCounters, RxeHasHwCountersOnlyAndNetdevStatistics) {
  std::vector<ReadError> errors;
  const auto r = read_rdma_port(fixture("sysfs-counters"), "rxe0", 1, errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(r.counters.empty());
  EXPECT_EQ(r.hw_counters.size(), 15U);
  EXPECT_EQ(by_name(r.hw_counters).at("sent_pkts").raw, 4219U);
  const auto stats = read_netdev_statistics(fixture("sysfs-counters"), "ens1f0np0", errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(stats.size(), 24U);
  EXPECT_EQ(by_name(stats).at("rx_bytes"), (CounterReading{"rx_bytes", 30104512340ULL, 64, 1}));
}

TEST(SysfsCounters, MissingAndUnreadableFilesAreReportedNeverFatal) {
  TempDir dir;
  fs::copy(fixture("sysfs-counters"), dir.path(), fs::copy_options::recursive);
  const auto port = dir.path() / "class/infiniband/mlx5_0/ports/1";
  write(port / "counters/symbol_error", "N/A (no PMA)\n");
  write(port / "hw_counters/np_cnp_sent", "");
  write(port / "hw_counters/rp_cnp_handled", "18446744073709551616\n");  // 2^64: out of range
  std::vector<ReadError> errors;
  const auto r = read_rdma_port(dir.string(), "mlx5_0", 1, errors);
  EXPECT_EQ(r.counters.size(), 20U);
  EXPECT_EQ(r.hw_counters.size(), 27U);
  ASSERT_EQ(errors.size(), 3U);
  EXPECT_EQ(errors[0].source, "rdma_counters");
  EXPECT_EQ(errors[0].path, (port / "counters/symbol_error").string());
  EXPECT_EQ(errors[0].reason, "not an unsigned number: 'N/A (no PMA)'");
  EXPECT_EQ(errors[1].source, "rdma_hw_counters");
  EXPECT_EQ(errors[2].source, "rdma_hw_counters");

  errors.clear();
  EXPECT_TRUE(read_rdma_port(dir.string(), "mlx5_0", 2, errors).counters.empty());
  EXPECT_TRUE(read_netdev_statistics(dir.string(), "nosuch0", errors).empty());
  ASSERT_EQ(errors.size(), 2U);
  EXPECT_EQ(errors[0].reason, "no such port");
  EXPECT_EQ(errors[1].source, "netdev_statistics");
  EXPECT_EQ(errors[1].reason, "no such directory");
  EXPECT_FALSE(read_counter_file((dir.path() / "nosuch").string()));
}

// The counters component keeps the counter directories open: the same readings and errors as the path
// readers, reading after reading; a directory removed is an error again and one made anew at the same
// path (a netdev deleted and made again) is read afresh.
TEST(SysfsCounters, DirectoriesHeldOpenReadExactlyWhatThePathReadersRead) {
  TempDir dir;
  fs::copy(fixture("sysfs-counters"), dir.path(), fs::copy_options::recursive);
  const auto port = dir.path() / "class/infiniband/mlx5_0/ports/1";
  write(port / "counters/symbol_error", "N/A (no PMA)\n");
  fs::create_directory(port / "hw_counters/not_a_counter");
  fs::create_symlink(port / "counters/link_downed", port / "hw_counters/linked");
  CounterDirectories dirs;
  const auto same = [&](const std::string& what) {
    std::vector<ReadError> want_errors, got_errors;
    const auto want = read_rdma_port(dir.string(), "mlx5_0", 1, want_errors);
    const auto got = read_rdma_port(dir.string(), "mlx5_0", 1, got_errors, dirs);
    EXPECT_EQ(got.counters, want.counters) << what;
    EXPECT_EQ(got.hw_counters, want.hw_counters) << what;
    const auto want_stats = read_netdev_statistics(dir.string(), "ens1f0np0", want_errors);
    auto got_stats = read_netdev_statistics(dir.string(), "ens1f0np0", got_errors, dirs);
    EXPECT_EQ(got_stats, want_stats) << what;
    EXPECT_EQ(got_errors.size(), want_errors.size()) << what;
    for (std::size_t i = 0; i < got_errors.size() && i < want_errors.size(); ++i) {
      EXPECT_EQ(got_errors[i].source, want_errors[i].source) << what;
      EXPECT_EQ(got_errors[i].path, want_errors[i].path) << what;
      EXPECT_EQ(got_errors[i].reason, want_errors[i].reason) << what;
    }
    return got_stats;
  };
  const auto first = same("first reading");
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(dirs.open_directories(), 3U) << "counters/, hw_counters/, statistics/";
  write(port / "counters/port_rcv_data", "123456\n");
  write(dir.path() / "class/net/ens1f0np0/statistics/rx_bytes", "42\n");
  const auto second = same("files changed");
  ASSERT_FALSE(second.empty());

  // The netdev deleted: an error naming the directory, as without held directories.
  const auto stats = dir.path() / "class/net/ens1f0np0/statistics";
  const auto saved = dir.path() / "saved-statistics";
  fs::rename(stats, saved);
  same("netdev gone");
  EXPECT_EQ(dirs.open_directories(), 2U);
  // Made again, with other files and values: read afresh.
  fs::copy(saved, stats, fs::copy_options::recursive);
  fs::remove(stats / "tx_bytes");
  write(stats / "rx_bytes", "7\n");
  write(stats / "new_counter", "9\n");
  const auto again = same("netdev made again");
  EXPECT_EQ(again.size(), first.size());
  // Replaced while held open (the held directory is not the one at the path any more).
  fs::rename(stats, dir.path() / "old-statistics");
  fs::copy(saved, stats, fs::copy_options::recursive);
  same("directory replaced");

  // A reading that no longer uses a directory lets it go.
  dirs.drop_unused();
  EXPECT_EQ(dirs.open_directories(), 3U);
  std::vector<ReadError> errors;
  read_netdev_statistics(dir.string(), "ens1f0np0", errors, dirs);
  dirs.drop_unused();
  EXPECT_EQ(dirs.open_directories(), 1U);
}

// ---- ethtool ----

EthtoolStats listing(const std::string& name) {
  auto parsed = parse_ethtool_listing(file_text(fixture("ethtool/" + name)));
  EXPECT_TRUE(parsed) << parsed.error();
  return parsed ? *parsed : EthtoolStats{};
}

TEST(EthtoolStats, Mlx5PauseNamesMapToPriorities) {
  const auto t0 = listing("mlx5-ens1f0np0-t0.txt");
  EXPECT_EQ(t0.front(), (std::pair<std::string, std::uint64_t>{"rx_packets", 1189231112ULL}));
  const auto pause = priority_pause(t0);
  ASSERT_EQ(pause.size(), 8U);  // mlx5 lists all eight priorities
  EXPECT_EQ(pause[3], (PriorityPauseRaw{3, 1520, 2210, 48311, 70422}));
  EXPECT_EQ(pause[0], (PriorityPauseRaw{0, 0, 0, 0, 0}));
  EXPECT_EQ(priority_pause(listing("mlx5-ens1f0np0-t1.txt"))[0], (PriorityPauseRaw{0, 5, 0, 160, 0}));
  // A priority needs all four names; transitions and global pause counters are not PFC frames.
  const EthtoolStats partial = {{"rx_prio5_pause", 1},          {"tx_prio5_pause", 2},
                                {"rx_prio5_pause_duration", 3}, {"rx_prio5_pause_transition", 9},
                                {"rx_prio8_pause", 1},          {"rx_pause_ctrl_phy", 4},
                                {"rx_prio6_pause", 1},          {"tx_prio6_pause", 2},
                                {"rx_prio6_pause_duration", 3}, {"tx_prio6_pause_duration", 4}};
  EXPECT_EQ(priority_pause(partial), (std::vector<PriorityPauseRaw>{{6, 1, 2, 3, 4}}));
}

TEST(EthtoolStats, ListingErrorsNameTheLine) {
  const auto bad = parse_ethtool_listing("NIC statistics:\n     rx_packets: 12\n     rx_bytes 13\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "line 3: expected 'name: value', got 'rx_bytes 13'");
  EXPECT_FALSE(parse_ethtool_listing("rx: -1\n"));
}

TEST(EthtoolStats, RealIoctlOnAVethPair) {
  ASSERT_EQ(geteuid(), 0U) << "the veth pair needs a network namespace: run as root";
  hsns::testing::run_in_fresh_netns([] {
    hsns::testing::must("ip link add hsnsct0 type veth peer name hsnsct1");
    hsns::testing::must("ip link set hsnsct0 up && ip link set hsnsct1 up");
    const auto stats = read_ethtool_stats("hsnsct0");
    ASSERT_TRUE(stats) << stats.error();
    std::map<std::string, std::uint64_t> m(stats->begin(), stats->end());
    ASSERT_EQ(m.count("peer_ifindex"), 1U) << "veth reports its peer's ifindex";
    const auto peer = hsns::testing::must("ip -o link show hsnsct1");
    EXPECT_EQ(std::to_string(m.at("peer_ifindex")), peer.substr(0, peer.find(':')));
    // The same names as ethtool(8) prints, in the same order.
    const auto printed = parse_ethtool_listing(hsns::testing::must("ethtool -S hsnsct0"));
    ASSERT_TRUE(printed) << printed.error();
    ASSERT_EQ(printed->size(), stats->size());
    for (std::size_t i = 0; i < stats->size(); ++i) EXPECT_EQ((*printed)[i].first, (*stats)[i].first);

    const auto lo = read_ethtool_stats("lo");
    ASSERT_TRUE(lo) << lo.error();
    EXPECT_TRUE(lo->empty());
    const auto missing = read_ethtool_stats("nosuch0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), "ethtool nosuch0: no such netdev");
    EXPECT_EQ(read_ethtool_stats("abcdefghijklmnopq").error(),
              "ethtool abcdefghijklmnopq: invalid netdev name");
    hsns::testing::must("ip link del hsnsct0");
  });
}

// ---- the component ----

std::string scrape(prometheus::Registry& registry) {
  const prometheus::TextSerializer serializer;
  return serializer.Serialize(registry.Collect());
}

TEST(CountersComponent, TargetsAreTheNpuNetdevsAndTheirRdmaPorts) {
  DaemonConfig config;
  config.sysfs_root = fixture("sysfs-counters");
  config.npus = {{0, "ens1f0np0"}, {1, "eth1"}, {2, "absent0"}};
  const auto t = counter_targets(discover(config));
  EXPECT_EQ(t.netdevs, (std::vector<std::string>{"ens1f0np0", "eth1", "absent0"}));
  EXPECT_EQ(t.rdma_ports, (std::vector<std::pair<std::string, int>>{{"mlx5_0", 1}, {"rxe0", 1}}));
  config.npus = {{0, "eth1"}};
  EXPECT_EQ(counter_targets(discover(config)).rdma_ports,
            (std::vector<std::pair<std::string, int>>{{"rxe0", 1}}));
}

TEST(CountersComponent, SnapshotDeltasRatesMetricsAndErrors) {
  TempDir dir;
  fs::copy(fixture("sysfs-counters"), dir.path(), fs::copy_options::recursive);
  DaemonConfig config;
  config.sysfs_root = dir.string();
  config.npus = {{0, "ens1f0np0"}, {1, "eth1"}};
  config.interval = std::chrono::milliseconds(10000);
  std::string recording = "mlx5-ens1f0np0-t0.txt";
  const EthtoolSource source =
      [&recording](const std::string& netdev) -> tl::expected<EthtoolStats, std::string> {
    if (netdev != "ens1f0np0") return tl::unexpected("ethtool " + netdev + ": no such netdev");
    return parse_ethtool_listing(file_text(fixture("ethtool/" + recording)));
  };
  prometheus::Registry registry;
  CountersComponent component(config, registry, source);
  EXPECT_EQ(component.name(), "counters");
  EXPECT_FALSE(component.ready());
  const auto t0 = Component::Clock::now();
  component.read(t0);

  const auto& first = component.snapshot();
  EXPECT_EQ(first.interval_ms, 0U);
  ASSERT_EQ(first.rdma.size(), 2U);
  ASSERT_EQ(first.netdevs.size(), 2U);
  EXPECT_EQ(first.read_errors, (std::map<std::string, std::uint64_t>{{"ethtool", 1}}));
  EXPECT_EQ(first.rdma[0].counters.at("port_xmit_data"), (proto::CounterSample{47625248256ULL, 0, 0}));
  EXPECT_EQ(first.netdevs[0].pause.size(), 8U);
  EXPECT_TRUE(first.netdevs[1].ethtool.empty());

  // Ten seconds later: 250 more words sent (1000 bytes), 100 more CNPs, rxe's sent_pkts reset to 5,
  // a counter file that stopped being readable, and the ethtool listing of t1.
  const auto mlx = dir.path() / "class/infiniband/mlx5_0/ports/1";
  write(mlx / "counters/port_xmit_data", "11906312314\n");
  write(mlx / "hw_counters/np_cnp_sent", "48313\n");
  write(mlx / "counters/symbol_error", "N/A (no PMA)\n");
  write(dir.path() / "class/infiniband/rxe0/ports/1/hw_counters/sent_pkts", "5\n");
  recording = "mlx5-ens1f0np0-t1.txt";
  EXPECT_EQ(component.tick(t0 + std::chrono::seconds(5)), t0 + std::chrono::seconds(10));  // not due yet
  EXPECT_EQ(component.snapshot().interval_ms, 0U);
  component.tick(t0 + std::chrono::seconds(10));

  const auto& s = component.snapshot();
  EXPECT_EQ(s.interval_ms, 10000U);
  EXPECT_EQ(s.resets, 1U);
  EXPECT_EQ(s.wraps, 0U);
  EXPECT_EQ(s.read_errors, (std::map<std::string, std::uint64_t>{{"ethtool", 1}, {"rdma_counters", 1}}));
  const auto& mlx5 = s.rdma[0];
  EXPECT_EQ(mlx5.device, "mlx5_0");
  EXPECT_EQ(mlx5.counters.at("port_xmit_data"), (proto::CounterSample{47625249256ULL, 1000, 100}));
  EXPECT_EQ(mlx5.counters.count("symbol_error"), 0U);
  EXPECT_EQ(mlx5.hw_counters.at("np_cnp_sent"), (proto::CounterSample{48313, 100, 10}));
  EXPECT_EQ(mlx5.hw_counters.at("rp_cnp_handled"), (proto::CounterSample{39870, 0, 0}));
  EXPECT_EQ(s.rdma[1].hw_counters.at("sent_pkts"), (proto::CounterSample{5, 5, 0.5}));
  const auto& pause3 = s.netdevs[0].pause[3];
  EXPECT_EQ(pause3.priority, 3);
  EXPECT_EQ(pause3.rx_frames, (proto::CounterSample{1830, 310, 31}));
  EXPECT_EQ(pause3.rx_duration_us, (proto::CounterSample{58311, 10000, 1000}));
  EXPECT_EQ(pause3.tx_frames, (proto::CounterSample{2210, 0, 0}));
  EXPECT_EQ(s.netdevs[0].pause[0].rx_frames, (proto::CounterSample{5, 5, 0.5}));
  EXPECT_EQ(s.netdevs[0].ethtool.at("rx_prio3_packets"), (proto::CounterSample{2000, 1000, 100}));

  // The snapshot travels: both encodings give it back.
  for (const auto enc : {proto::Encoding::json, proto::Encoding::cbor}) {
    const auto back = proto::decode<proto::CountersSnapshot>(proto::encode(s, enc), enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, s);
  }

  const auto text = scrape(registry);
  const auto m = hsns::testing::Exposition::parse(text);
  const auto value = [&m](const std::string& selector) { return m.find(selector).value_or(-1); };
  EXPECT_EQ(value(R"(hsns_rdma_port_bytes_total{device="mlx5_0",port="1",direction="tx"})"), 47625249256.0);
  EXPECT_EQ(value(R"(hsns_rdma_port_packets_total{device="mlx5_0",port="1",direction="rx"})"), 1189225930.0);
  EXPECT_EQ(value(R"(hsns_rdma_hw_events_total{device="mlx5_0",port="1",counter="np_cnp_sent"})"), 48313.0);
  // A reset adds the count since the reset: 4219 + 5, never down.
  EXPECT_EQ(value(R"(hsns_rdma_hw_events_total{device="rxe0",port="1",counter="sent_pkts"})"), 4224.0);
  EXPECT_EQ(value(R"(hsns_rdma_port_events_total{device="mlx5_0",port="1",counter="link_downed"})"), 1.0);
  EXPECT_EQ(value(R"(hsns_netdev_bytes_total{netdev="ens1f0np0",direction="rx"})"), 30104512340.0);
  EXPECT_EQ(value(R"(hsns_netdev_statistic_total{netdev="ens1f0np0",counter="rx_dropped"})"), 17.0);
  EXPECT_EQ(value(R"(hsns_port_pause_frames_total{netdev="ens1f0np0",priority="3",direction="rx"})"), 1830.0);
  EXPECT_DOUBLE_EQ(
      value(R"(hsns_port_pause_duration_seconds_total{netdev="ens1f0np0",priority="3",direction="rx"})"),
      0.058311);
  EXPECT_EQ(value(R"(hsns_counters_read_errors_total{source="ethtool"})"), 2.0);
  EXPECT_EQ(value(R"(hsns_counters_read_errors_total{source="rdma_counters"})"), 1.0);
  EXPECT_EQ(value(R"(hsns_counters_read_errors_total{source="netdev_statistics"})"), 0.0);
  EXPECT_EQ(value(R"(hsns_counters_discontinuities_total{kind="reset"})"), 1.0);
  EXPECT_EQ(value("hsns_counters_readings_total"), 2.0);
  EXPECT_TRUE(m.all("hsns_rdma_hw_events_total").size() == 29U + 15U) << "every hw counter but lifespan";

  // promtool is installed by scripts/install-deps.sh; a missing one fails here rather than skip the lint.
  const auto promtool = hsns::testing::run_command({"promtool", "check", "metrics"}, text);
  EXPECT_EQ(promtool.status, 0) << promtool;
  EXPECT_EQ(promtool.output, "") << "promtool reported lint problems";
}

TEST(CountersComponent, StartTriggerAndAHostWithNothingToRead) {
  TempDir dir;  // an empty sysfs root: every NPU netdev is missing
  DaemonConfig config;
  config.sysfs_root = dir.string();
  config.npus = {{0, "ens9"}};
  prometheus::Registry registry;
  CountersComponent component(config, registry, EthtoolSource{});
  ASSERT_TRUE(component.start());
  EXPECT_TRUE(component.ready());
  EXPECT_EQ(component.snapshot().read_errors,
            (std::map<std::string, std::uint64_t>{{"netdev_statistics", 1}}));
  ASSERT_EQ(component.snapshot().netdevs.size(), 1U);
  EXPECT_TRUE(component.snapshot().rdma.empty());
  const auto now = Component::Clock::now();
  component.trigger();
  EXPECT_EQ(component.tick(now), now + config.interval);
  EXPECT_EQ(component.snapshot().read_errors.at("netdev_statistics"), 1U);  // per reading
  EXPECT_EQ(hsns::testing::metric_value(scrape(registry),
                                        R"(hsns_counters_read_errors_total{source="netdev_statistics"})"),
            2.0);
}

TEST(CountersComponent, RealEthtoolStatisticsOfAVethAndReload) {
  ASSERT_EQ(geteuid(), 0U) << "the veth pair needs a network namespace: run as root";
  hsns::testing::run_in_fresh_netns([] {
    // The fixture's eth1 (under rxe0) exists here as a veth end: sysfs from the fixture, ethtool real.
    hsns::testing::must("ip link add eth1 type veth peer name hsnsct9");
    DaemonConfig config;
    config.sysfs_root = fixture("sysfs-counters");
    config.npus = {{1, "eth1"}};
    prometheus::Registry registry;
    CountersComponent component(config, registry);
    ASSERT_TRUE(component.start());
    const auto& s = component.snapshot();
    EXPECT_TRUE(s.read_errors.empty()) << s.read_errors.begin()->first;
    ASSERT_EQ(s.netdevs.size(), 1U);
    EXPECT_EQ(s.netdevs[0].ethtool.count("peer_ifindex"), 1U);
    EXPECT_TRUE(s.netdevs[0].pause.empty());  // veth has no PFC
    ASSERT_EQ(s.rdma.size(), 1U);
    EXPECT_EQ(s.rdma[0].device, "rxe0");

    // reload(): the new NPUs from the next reading on; the netdev that does not exist here is counted.
    config.npus = {{0, "ens1f0np0"}, {1, "eth1"}};
    component.reload(config);
    component.trigger();
    component.tick(Component::Clock::now());
    EXPECT_EQ(component.snapshot().rdma.size(), 2U);
    EXPECT_EQ(component.snapshot().read_errors, (std::map<std::string, std::uint64_t>{{"ethtool", 1}}));
    EXPECT_EQ(component.snapshot().netdevs[1].ethtool.at("peer_ifindex").delta, 0U);
    hsns::testing::must("ip link del eth1");
  });
}

}  // namespace
}  // namespace hsns::daemon::counters
