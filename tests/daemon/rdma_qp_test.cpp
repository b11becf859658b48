// The RDMA queue-pair inventory (daemon/rdma_qp): the length-checked netlink reader and the nldev dump
// parser on the composed replies of tests/fixtures/daemon/rdma-netlink/ (README.md there: this machine has
// no RDMA core to record from) and on every truncation of them; the RoCE v2 source port on values worked
// out by hand; the wire records the component builds; the component itself against this kernel (RDMA
// netlink absent here: it must start, be ready, log once and count) and against injected snapshots
// (metrics, kept inventory on failure, promtool-clean exposition); the qp-inventory wire section.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "hsns/proto/qp.h"
#include "netlink_reader.h"
#include "qp_dump.h"
#include "rdma_qp_component.h"
#include "roce_sport.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::daemon {
namespace {

using rdma::Bytes;
using Buffer = std::vector<std::uint8_t>;

// A fixture: hex bytes separated by blanks, "#" to the end of the line is a comment.
Buffer load_fixture(const std::string& name) {
  std::ifstream in(hsns::testing::source_path("tests/fixtures/daemon/rdma-netlink/" + name + ".hex"));
  EXPECT_TRUE(in) << name;
  Buffer out;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(std::min(line.find('#'), line.size()));
    std::istringstream words(line);
    std::string w;
    while (words >> w) out.push_back(static_cast<std::uint8_t>(std::stoul(w, nullptr, 16)));
  }
  return out;
}

Bytes bytes(const Buffer& b) {
  return {b.data(), b.size()};
}

const std::vector<std::string> kFixtures = {"devices",         "qp-mlx5_0",      "cm-id-mlx5_0",
                                            "qp-rxe0",         "qp-truncated",   "qp-attr-overrun",
                                            "qp-wrong-length", "nlmsgerr-eperm", "done-einval"};

// ---- the RoCE v2 UDP source port ----

// Worked by hand from fl = lqpn*rqpn; fl ^= fl>>20; fl ^= fl>>40; fl &= 0xFFFFF and
// sport = ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000:
// - 0x1a2 * 0x3b4 = 418 * 948 = 396264 = 0x60BE8 (< 2^20, the shifts add nothing): low 14 bits 0x0BE8,
//   bits 14..19 = 0x18; 0x0BE8 ^ 0x18 = 0x0BF0; | 0xC000 = 0xCBF0 (52208). Symmetric: 0x3b4 * 0x1a2 too.
// - 1 * 1 = 1: 0x0001 ^ 0 = 1 -> 0xC001.
// - 0x11 * 0x1a2 = 17 * 418 = 7106 = 0x1BC2 (< 2^14, no high bits) -> 0xDBC2 (56258).
// - 0xFFFFFF * 0xFFFFFF = 0xFFFFFE000001; >> 20 = 0xFFFFFE0, xor = 0xFFFFF1FFFFE1; >> 40 = 0xFF,
//   xor = 0xFFFFF1FFFF1E; & 0xFFFFF = 0xFFF1E: low 0x3F1E, high 0x3F; 0x3F1E ^ 0x3F = 0x3F21 -> 0xFF21.
// - a QPN of 0: fl 0 -> 0xC000.
// - a nonzero flow label 0x12345 (the QPNs do not matter): low 0x2345, high 0x10000 >> 14 = 4;
//   0x2345 ^ 4 = 0x2341 -> 0xE341 (58177).
TEST(RoceSourcePort, KnownValues) {
  EXPECT_EQ(rdma::rocev2_flow_label(0x1a2, 0x3b4), 0x60BE8u);
  EXPECT_EQ(rdma::rocev2_source_port(0x1a2, 0x3b4), 0xCBF0);
  EXPECT_EQ(rdma::rocev2_source_port(0x3b4, 0x1a2), 0xCBF0);
  EXPECT_EQ(rdma::rocev2_source_port(1, 1), 0xC001);
  EXPECT_EQ(rdma::rocev2_source_port(0x11, 0x1a2), 0xDBC2);
  EXPECT_EQ(rdma::rocev2_source_port(0x1a2, 0x11), 0xDBC2);
  EXPECT_EQ(rdma::rocev2_flow_label(0xFFFFFF, 0xFFFFFF), 0xFFF1Eu);
  EXPECT_EQ(rdma::rocev2_source_port(0xFFFFFF, 0xFFFFFF), 0xFF21);
  EXPECT_EQ(rdma::rocev2_source_port(0, 0x1a2), 0xC000);
  EXPECT_EQ(rdma::rocev2_source_port(0x1a2, 0x3b4, 0x12345), 0xE341);
  EXPECT_EQ(rdma::rocev2_source_port(7, 9, 0x12345), 0xE341);
  static_assert(rdma::rocev2_source_port(1, 1) == 0xC001, "usable in constant expressions");
}

TEST(RoceSourcePort, SymmetricAndInRange) {
  for (std::uint32_t a = 1; a < 0xFFFFFF; a = a * 7 + 3)
    for (std::uint32_t b = 1; b < 0xFFFFFF; b = b * 5 + 1) {
      const auto port = rdma::rocev2_source_port(a, b);
      EXPECT_EQ(port, rdma::rocev2_source_port(b, a));
      EXPECT_GE(port, 0xC000);
    }
}

// ---- the netlink reader ----

TEST(NetlinkReader, RefusesImpossibleLengths) {
  const Buffer short_header = {0x10, 0, 0, 0, 3, 0};
  EXPECT_EQ(rdma::split_messages(bytes(short_header)).error().reason, "truncated");
  Buffer tiny(16, 0);
  tiny[0] = 8;  // nlmsg_len 8 < 16
  EXPECT_EQ(rdma::split_messages(bytes(tiny)).error().reason, "bad_length");
  const Buffer attr_len_2 = {2, 0, 1, 0};
  EXPECT_EQ(rdma::split_attributes(bytes(attr_len_2), "x").error().reason, "bad_length");
  const Buffer stray = {8, 0, 1, 0, 1, 0, 0, 0, 9, 9};
  EXPECT_EQ(rdma::split_attributes(bytes(stray), "x").error().reason, "truncated");
  // The last attribute may lack its padding; NLA_F_NESTED is not part of the type.
  const Buffer unpadded = {5, 0, 0x1a, 0x80, 7};
  auto attrs = rdma::split_attributes(bytes(unpadded), "x");
  ASSERT_TRUE(attrs) << attrs.error().detail;
  ASSERT_EQ(attrs->size(), 1u);
  EXPECT_EQ((*attrs)[0].type, 0x1a);
  EXPECT_EQ(*rdma::attr_u8((*attrs)[0], "t"), 7);
  EXPECT_EQ(rdma::attr_u32((*attrs)[0], "t").error().reason, "bad_length");
  const Buffer no_nul = {7, 0, 2, 0, 'a', 'b', 'c'};
  EXPECT_EQ(rdma::attr_string((*rdma::split_attributes(bytes(no_nul), "x"))[0], "s", 64).error().reason,
            "malformed");
}

// ---- the dump parser on the fixtures ----

TEST(QpDump, DevicesSkipUnknownAttributes) {
  auto devices = rdma::parse_device_dump(bytes(load_fixture("devices")));
  ASSERT_TRUE(devices) << devices.error().detail;
  EXPECT_EQ(*devices, (std::vector<rdma::RdmaDevice>{{1, "mlx5_0"}, {2, "rxe0"}}));
}

TEST(QpDump, MultiPartDumpOfTwoPorts) {
  auto qps = rdma::parse_qp_dump(bytes(load_fixture("qp-mlx5_0")));
  ASSERT_TRUE(qps) << qps.error().detail;
  ASSERT_EQ(qps->size(), 6u);
  const auto& gsi = (*qps)[0];
  EXPECT_EQ(gsi.device, "mlx5_0");
  EXPECT_EQ(gsi.dev_index, 1u);
  EXPECT_EQ(gsi.port, 1u);
  EXPECT_EQ(gsi.lqpn, 1u);
  EXPECT_EQ(rdma::qp_type_name(gsi.type), "GSI");
  EXPECT_EQ(gsi.kern_name, "ib_core");
  EXPECT_FALSE(gsi.pid);
  EXPECT_FALSE(gsi.rqpn);
  const auto& rc = (*qps)[1];
  EXPECT_EQ(rc.lqpn, 0x1a2u);
  EXPECT_EQ(rc.rqpn, 0x3b4u);
  EXPECT_EQ(rdma::qp_type_name(rc.type), "RC");
  EXPECT_EQ(rdma::qp_state_name(rc.state), "RTS");
  EXPECT_EQ(rc.pid, 4242u);
  EXPECT_EQ(rc.sq_psn, 0x10u);
  EXPECT_EQ(rc.rq_psn, 0x20u);
  EXPECT_TRUE(rc.kern_name.empty());
  EXPECT_EQ(rdma::qp_type_name((*qps)[2].type), "UD");
  EXPECT_FALSE((*qps)[2].rqpn);
  EXPECT_EQ((*qps)[3].port, 2u);  // the second message
  EXPECT_EQ((*qps)[4].rqpn, 0x11u);
  EXPECT_EQ((*qps)[5].port, 0u);  // not bound to a port yet
  EXPECT_EQ(rdma::qp_state_name((*qps)[5].state), "INIT");
}

TEST(QpDump, MessageByMessageWithSequenceCheck) {
  const auto all = load_fixture("qp-mlx5_0");
  auto messages = rdma::split_messages(bytes(all));
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 3u);
  std::vector<rdma::QpEntry> out;
  std::size_t off = 0;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const std::size_t len = 16 + (*messages)[i].body.size();
    auto done = rdma::parse_qp_messages(bytes(all).subspan(off, len), 1000, out);
    ASSERT_TRUE(done) << done.error().detail;
    EXPECT_EQ(*done, i + 1 == messages->size());
    off += len;
  }
  EXPECT_EQ(out.size(), 6u);
  auto other = rdma::parse_qp_messages(bytes(all), 1001, out);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().reason, "unexpected");
}

TEST(QpDump, CmIdAddressesJoinTheirQps) {
  auto qps = rdma::parse_qp_dump(bytes(load_fixture("qp-mlx5_0")));
  auto cm = rdma::parse_cm_id_dump(bytes(load_fixture("cm-id-mlx5_0")));
  ASSERT_TRUE(qps);
  ASSERT_TRUE(cm) << cm.error().detail;
  ASSERT_EQ(cm->size(), 3u);
  EXPECT_FALSE((*cm)[0].lqpn);  // the listener
  EXPECT_EQ((*cm)[0].src, (rdma::SockAddr{4, "0.0.0.0", 7174}));
  rdma::join_cm_addresses(*qps, *cm);
  EXPECT_EQ((*qps)[1].src, (rdma::SockAddr{4, "192.168.10.1", 7174}));
  EXPECT_EQ((*qps)[1].dst, (rdma::SockAddr{4, "192.168.10.2", 40000}));
  EXPECT_EQ((*qps)[4].src, (rdma::SockAddr{6, "fd00:10::1", 7174}));
  EXPECT_EQ((*qps)[4].dst, (rdma::SockAddr{6, "fd00:10::2", 40001}));
  EXPECT_FALSE((*qps)[0].src);  // no CM ID for the GSI QP
  EXPECT_FALSE((*qps)[2].dst);
}

TEST(QpDump, RefusalsNameTheirReason) {
  auto reason = [](const std::string& fixture) {
    auto r = rdma::parse_qp_dump(bytes(load_fixture(fixture)));
    return r ? std::string("accepted") : r.error().reason + ": " + r.error().detail;
  };
  EXPECT_EQ(reason("qp-truncated").rfind("truncated: message 0: nlmsg_len 240, only 150", 0), 0u)
      << reason("qp-truncated");
  EXPECT_EQ(reason("qp-attr-overrun").rfind("truncated: message 0 table: attribute 20 of length 64", 0), 0u)
      << reason("qp-attr-overrun");
  EXPECT_EQ(reason("qp-wrong-length").rfind("bad_length: RES_LQPN (attribute 21): 2 bytes", 0), 0u)
      << reason("qp-wrong-length");
  auto eperm = rdma::parse_qp_dump(bytes(load_fixture("nlmsgerr-eperm")));
  ASSERT_FALSE(eperm);
  EXPECT_EQ(eperm.error().reason, "kernel");
  EXPECT_EQ(eperm.error().errno_value, EPERM);
  auto einval = rdma::parse_qp_dump(bytes(load_fixture("done-einval")));
  ASSERT_FALSE(einval);
  EXPECT_EQ(einval.error().reason, "kernel");
  EXPECT_EQ(einval.error().errno_value, EINVAL);
  // An error code that is no errno (INT32_MIN, which negating would overflow; found by the fuzzer).
  Buffer int_min = load_fixture("nlmsgerr-eperm");
  const std::int32_t min = INT32_MIN;
  std::memcpy(int_min.data() + 16, &min, sizeof min);
  auto no_errno = rdma::parse_qp_dump(bytes(int_min));
  ASSERT_FALSE(no_errno);
  EXPECT_EQ(no_errno.error().reason, "malformed") << no_errno.error().detail;
  // Another command's answer, a dump without its NLMSG_DONE, a message after it.
  EXPECT_EQ(reason("cm-id-mlx5_0").rfind("unexpected: message 0: type 5131, expected 5130", 0), 0u);
  auto all = load_fixture("qp-rxe0");
  const Buffer without_done(all.begin(), all.end() - 20);
  EXPECT_EQ(rdma::parse_qp_dump(bytes(without_done)).error().reason, "incomplete");
  Buffer after_done = all;
  after_done.insert(after_done.end(), all.begin(), all.end());
  EXPECT_EQ(rdma::parse_qp_dump(bytes(after_done)).error().reason, "unexpected");
}

// Every prefix and every single-byte corruption of every fixture: an answer or a reason, never a read
// outside the buffer (AddressSanitizer watches), never a reason outside the vocabulary.
TEST(QpDump, EveryTruncationAndFlippedByte) {
  auto check = [](const Buffer& b) {
    std::vector<rdma::NlError> errors;
    if (auto r = rdma::parse_qp_dump(bytes(b)); !r) errors.push_back(r.error());
    if (auto r = rdma::parse_cm_id_dump(bytes(b)); !r) errors.push_back(r.error());
    if (auto r = rdma::parse_device_dump(bytes(b)); !r) errors.push_back(r.error());
    for (const auto& e : errors)
      ASSERT_NE(std::find(rdma::kNlErrorReasons.begin(), rdma::kNlErrorReasons.end(), e.reason),
                rdma::kNlErrorReasons.end())
          << e.reason;
  };
  std::size_t cases = 0;
  for (const auto& name : kFixtures) {
    const auto all = load_fixture(name);
    ASSERT_FALSE(all.empty()) << name;
    for (std::size_t n = 0; n < all.size(); ++n, ++cases) check(Buffer(all.data(), all.data() + n));
    for (std::size_t i = 0; i < all.size(); ++i, ++cases) {
      Buffer flipped = all;
      flipped[i] ^= 0xA5;
      check(flipped);
    }
  }
  EXPECT_GT(cases, 2000u);
}

// ---- the wire records ----

rdma::QpSnapshot fixture_snapshot() {
  rdma::QpSnapshot s;
  s.devices = *rdma::parse_device_dump(bytes(load_fixture("devices")));
  s.qps = *rdma::parse_qp_dump(bytes(load_fixture("qp-mlx5_0")));
  auto rxe = *rdma::parse_qp_dump(bytes(load_fixture("qp-rxe0")));
  s.qps.insert(s.qps.end(), rxe.begin(), rxe.end());
  rdma::join_cm_addresses(s.qps, *rdma::parse_cm_id_dump(bytes(load_fixture("cm-id-mlx5_0"))));
  return s;
}

TEST(QpInventory, RecordsWithCommAddressesAndSourcePort) {
  hsns::testing::TempDir proc;
  std::filesystem::create_directories(proc / "4242");
  std::ofstream(proc / "4242" / "comm") << "ib_write_bw\n";
  const RoceV2Ports ports = {{"mlx5_0", 1}, {"mlx5_0", 2}};  // rxe0 not RoCE v2 here: no sport
  const auto inv = to_inventory(fixture_snapshot(), "node-a", 1700000000000, proc.string(), ports);
  EXPECT_EQ(inv.host, "node-a");
  ASSERT_EQ(inv.qps.size(), 8u);
  const auto& gsi = inv.qps[0];
  EXPECT_TRUE(gsi.kernel);
  EXPECT_EQ(gsi.comm, "ib_core");
  EXPECT_FALSE(gsi.sport);
  const auto& rc = inv.qps[1];
  EXPECT_EQ(rc.type, "RC");
  EXPECT_EQ(rc.state, "RTS");
  EXPECT_EQ(rc.pid, 4242u);
  EXPECT_EQ(rc.comm, "ib_write_bw");
  EXPECT_FALSE(rc.kernel);
  EXPECT_EQ(rc.sport, 0xCBF0);
  EXPECT_EQ(rc.addresses, (proto::QpAddresses{4, "192.168.10.1", "192.168.10.2"}));
  EXPECT_FALSE(inv.qps[2].sport);  // UD
  EXPECT_EQ(inv.qps[4].sport, rdma::rocev2_source_port(0x2c0, 0x11));
  EXPECT_EQ(inv.qps[4].addresses, (proto::QpAddresses{6, "fd00:10::1", "fd00:10::2"}));
  EXPECT_EQ(inv.qps[4].comm, "");  // pid 5151 has no comm under this procfs root
  EXPECT_FALSE(inv.qps[5].sport);  // no remote QP yet
  EXPECT_EQ(inv.qps[7].device, "rxe0");
  EXPECT_FALSE(inv.qps[7].sport);
  // The records are valid wire records.
  auto back = proto::decode<proto::QpInventory>(proto::encode(inv));
  ASSERT_TRUE(back) << back.error().detail;
  EXPECT_EQ(*back, inv);
}

TEST(QpInventory, RoceV2PortsFromSysfs) {
  DaemonConfig config;
  config.sysfs_root = hsns::testing::source_path("tests/fixtures/daemon/sysfs-roce").string();
  const auto ports = discover_roce_v2_ports(config);
  EXPECT_TRUE(ports.contains({"mlx5_0", 1})) << ports.size();
}

// ---- the component ----

// Captures what hsns::log writes to stderr (fd 2) while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_("hsns-rdma-qp-log") {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open((file_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  std::string text() {
    restore();
    std::ifstream in(file_ / "stderr");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  hsns::testing::TempDir file_;
  int saved_ = -1;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string scrape(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

void expect_promtool_clean(const std::string& text) {
  const auto lint = hsns::testing::run_command({"promtool", "check", "metrics"}, text);
  EXPECT_EQ(lint.status, 0) << lint.output;
  EXPECT_EQ(lint.output, "") << "promtool reported lint problems";
}

bool kernel_has_rdma_netlink() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// The real socket path against this kernel. Without the RDMA core (this machine) the component must
// start, be ready, say once that RDMA netlink is absent, and count every attempt; with it, read.
TEST(RdmaQpComponent, AgainstThisKernel) {
  DaemonConfig config;
  prometheus::Registry registry;
  RdmaQpComponent component(config, "node-a", registry);
  EXPECT_EQ(component.name(), "rdma_qp");
  std::string log;
  {
    StderrCapture capture;
    ASSERT_TRUE(component.start());
    for (int i = 0; i < 2; ++i) {
      component.trigger();
      component.tick(Component::Clock::now());
    }
    log = capture.text();
  }
  EXPECT_TRUE(component.ready());
  const auto text = scrape(registry);
  if (kernel_has_rdma_netlink()) {
    EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_netlink_available"), 1.0) << text;
    EXPECT_EQ(count_of(log, "RDMA netlink is absent"), 0u) << log;
  } else {
    EXPECT_EQ(count_of(log, "RDMA netlink is absent"), 1u) << log;
    EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_netlink_available"), 0.0) << text;
    EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_read_errors_total{reason=\"absent\"}"), 3.0)
        << text;
    EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_reads_total"), 0.0) << text;
    EXPECT_TRUE(component.inventory().qps.empty());
    EXPECT_EQ(component.inventory().host, "node-a");
  }
  expect_promtool_clean(text);
}

TEST(RdmaQpComponent, InjectedSnapshotsMetricsAndKeptInventory) {
  DaemonConfig config;
  config.sysfs_root = hsns::testing::source_path("tests/fixtures/daemon/sysfs-roce").string();
  config.interval = std::chrono::milliseconds(1000);
  std::vector<tl::expected<rdma::QpSnapshot, rdma::NlError>> answers;
  answers.emplace_back(fixture_snapshot());
  answers.emplace_back(tl::unexpected(rdma::NlError{"truncated", "message 0: cut", 0}));
  rdma::QpSnapshot smaller;
  smaller.qps = *rdma::parse_qp_dump(bytes(load_fixture("qp-rxe0")));
  smaller.warnings.push_back(rdma::NlError{"kernel", "rxe0 CM IDs: NLMSG_DONE: Invalid argument", EINVAL});
  answers.emplace_back(smaller);
  std::size_t calls = 0;
  prometheus::Registry registry;
  RdmaQpComponent component(config, "node-a", registry, [&]() { return answers.at(calls++); });

  ASSERT_TRUE(component.start());
  EXPECT_TRUE(component.ready());
  ASSERT_EQ(component.inventory().qps.size(), 8u);
  // mlx5_0 port 1 has RoCE v2 GIDs in the sysfs fixture: its RC QP gets its source port.
  EXPECT_EQ(component.inventory().qps[1].sport, 0xCBF0);
  auto text = scrape(registry);
  const std::string rc_port1 = R"(hsns_rdma_qps{device="mlx5_0",port="1",state="RTS",type="RC"})";
  EXPECT_EQ(hsns::testing::metric_value(text, rc_port1), 1.0) << text;
  EXPECT_EQ(
      hsns::testing::metric_value(text, R"(hsns_rdma_qps{device="mlx5_0",port="0",state="INIT",type="RC"})"),
      1.0);
  EXPECT_EQ(
      hsns::testing::metric_value(text, R"(hsns_rdma_qps{device="rxe0",port="1",state="RTS",type="GSI"})"),
      1.0);
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_reads_total"), 1.0);
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_netlink_available"), 1.0);
  expect_promtool_clean(text);

  // Not due yet: no read.
  const auto now = Component::Clock::now();
  const auto next = component.tick(now);
  EXPECT_EQ(calls, 1u);
  EXPECT_GT(next, now);

  // A failed read keeps the inventory and is counted.
  component.trigger();
  const auto due = component.tick(Component::Clock::now());
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(component.inventory().qps.size(), 8u);
  text = scrape(registry);
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_read_errors_total{reason=\"truncated\"}"), 1.0);
  EXPECT_EQ(hsns::testing::metric_value(text, rc_port1), 1.0);

  // At its interval, a smaller inventory: the mlx5_0 series vanish, the CM ID warning is counted.
  component.tick(due);
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(component.inventory().qps.size(), 2u);
  text = scrape(registry);
  EXPECT_FALSE(hsns::testing::metric_value(text, rc_port1)) << text;
  EXPECT_EQ(
      hsns::testing::metric_value(text, R"(hsns_rdma_qps{device="rxe0",port="1",state="RTS",type="RC"})"),
      1.0);
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_read_errors_total{reason=\"kernel\"}"), 1.0);
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_rdma_qp_reads_total"), 2.0);
  expect_promtool_clean(text);
}

// ---- the qp-inventory wire section ----

proto::QpInventory sample_inventory() {
  proto::QpInventory inv;
  inv.host = "node-a";
  inv.ts_ms = 1700000000123;
  proto::QpRecord rc;
  rc.device = "mlx5_0";
  rc.port = 1;
  rc.lqpn = 0x1a2;
  rc.rqpn = 0x3b4;
  rc.type = "RC";
  rc.state = "RTS";
  rc.pid = 4242;
  rc.comm = "ib_write_bw";
  rc.addresses = proto::QpAddresses{6, "fd00:10::1", "fd00:10::2"};
  rc.sport = 0xCBF0;
  proto::QpRecord gsi;
  gsi.device = "mlx5_0";
  gsi.port = 1;
  gsi.lqpn = 1;
  gsi.type = "GSI";
  gsi.state = "RTS";
  gsi.comm = "ib_core";
  gsi.kernel = true;
  inv.qps = {rc, gsi};
  return inv;
}

TEST(QpInventoryProto, RoundTripsInJsonAndCbor) {
  const auto inv = sample_inventory();
  for (auto encoding : {proto::Encoding::json, proto::Encoding::cbor}) {
    auto back = proto::decode<proto::QpInventory>(proto::encode(inv, encoding), encoding);
    ASSERT_TRUE(back) << back.error().detail;
    EXPECT_EQ(*back, inv);
  }
  EXPECT_EQ(proto::media_type(proto::Kind<proto::QpInventory>::kName, proto::Encoding::cbor),
            "application/vnd.hsns.qp-inventory.v1+cbor");
  const auto doc = proto::to_json(inv);
  EXPECT_EQ(doc["qps"][0]["sport"], 0xCBF0);
  EXPECT_FALSE(doc["qps"][1].contains("rqpn"));
  EXPECT_FALSE(doc["qps"][1].contains("family"));
}

TEST(QpInventoryProto, RefusesAndNamesTheField) {
  auto refusal = [](const std::function<void(nlohmann::json&)>& edit) {
    auto doc = proto::to_json(sample_inventory());
    edit(doc);
    auto r = proto::read_qp_inventory(doc);
    if (r) return std::string("accepted");
    std::string out = r.error().detail;
    for (const auto& f : r.error().fields) out += " " + f.field + ": " + f.reason;
    return out;
  };
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["extra"] = 1; }).find("qps[0].extra"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["type"] = "rc"; }).find("qps[0].type"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["state"] = "UP"; }).find("qps[0].state"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["sport"] = 4791; }).find("qps[0].sport"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["lqpn"] = 0x1000000; }).find("qps[0].lqpn"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0].erase("family"); }).find("qps[0].family"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][0]["src"] = "10.0.0.1"; }).find("qps[0].src"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d["qps"][1]["device"] = ""; }).find("qps[1].device"), std::string::npos);
  EXPECT_NE(refusal([](auto& d) { d.erase("host"); }).find("host"), std::string::npos);
  EXPECT_EQ(refusal([](auto&) {}), "accepted");
}

}  // namespace
}  // namespace hsns::daemon
