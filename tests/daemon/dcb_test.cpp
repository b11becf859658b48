// DCB netlink QoS source: the pure parser of DCB_CMD_IEEE_GET replies on recorded and hand-assembled
// replies (tests/fixtures/daemon/dcb/, byte layout in its README.md), malformed input (truncated at
// every offset, flipped bytes), check_qos() merging sysfs and DCB with an injected DCB source, and the
// real socket path against a kernel: lo and a veth pair in a network namespace this test creates for
// one thread (gone when the thread ends), plus an unknown netdev. The socket tests need root (skipped
// otherwise).
#include "dcb.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "qos.h"
#include "support/aggregator_process.h"
#include "support/netns.h"

namespace hsns::daemon {
namespace {

using hsns::testing::TempDir;
using Bytes = std::vector<std::uint8_t>;
using Result = tl::expected<DcbQos, std::string>;

// ---- fixtures and a small reply builder ----

// Reads a fixture: hex bytes separated by blanks, "#" to the end of the line is a comment.
Bytes load_hex(const std::string& name) {
  std::ifstream in(hsns::testing::source_path("tests/fixtures/daemon/dcb/" + name));
  EXPECT_TRUE(in) << name;
  Bytes out;
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      EXPECT_EQ(w.size(), 2u) << name << ": " << w;
      out.push_back(static_cast<std::uint8_t>(std::stoul(w, nullptr, 16)));
    }
  }
  return out;
}

Result parse(const Bytes& b) {
  return parse_dcb_ieee_reply(std::span<const std::uint8_t>(b.data(), b.size()));
}

// Writes netlink structures in host byte order, the way the kernel does.
class Writer {
 public:
  void raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
  }
  void u8(std::uint8_t v) { raw(&v, 1); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void pad() {
    while (b_.size() % 4) b_.push_back(0);
  }
  std::size_t begin(std::uint16_t type) {  // attribute header; length patched by end()
    const std::size_t at = b_.size();
    u16(0);
    u16(type);
    return at;
  }
  void end(std::size_t at) {
    const auto len = static_cast<std::uint16_t>(b_.size() - at);
    std::memcpy(&b_[at], &len, 2);
    pad();
  }
  void attr(std::uint16_t type, const Bytes& payload) {
    const auto at = begin(type);
    raw(payload.data(), payload.size());
    end(at);
  }
  Bytes& bytes() { return b_; }

 private:
  Bytes b_;
};

struct App {
  std::uint8_t selector, priority;
  std::uint16_t protocol;
};

struct Reply {
  std::string ifname = "ens1f0np0";
  std::uint8_t cmd = 21;  // DCB_CMD_IEEE_GET
  std::optional<std::uint8_t> pfc_en = 0x08;
  std::uint8_t pfc_cap = 8;
  std::vector<App> apps;
  std::optional<std::vector<std::uint8_t>> trust;  // apptrust selectors
};

Reply with_apps(std::vector<App> apps, std::optional<std::vector<std::uint8_t>> trust = std::nullopt) {
  Reply r;
  r.apps = std::move(apps);
  r.trust = std::move(trust);
  return r;
}

Bytes build(const Reply& r) {
  Writer w;
  w.u32(0);   // nlmsg_len, patched below
  w.u16(78);  // RTM_GETDCB
  w.u16(1);
  w.u32(7);
  w.u32(0);
  w.u8(0);
  w.u8(r.cmd);
  w.u16(0);
  Bytes name(r.ifname.begin(), r.ifname.end());
  name.push_back(0);
  w.attr(1, name);  // DCB_ATTR_IFNAME
  const auto ieee = w.begin(13);
  if (r.pfc_en) {
    Bytes pfc(136, 0);
    pfc[0] = r.pfc_cap;
    pfc[1] = *r.pfc_en;
    w.attr(2, pfc);  // DCB_ATTR_IEEE_PFC
  }
  const auto table = w.begin(3);  // DCB_ATTR_IEEE_APP_TABLE
  for (const auto& a : r.apps) {
    const auto e = w.begin(a.selector == 255 ? 2 : 1);
    w.u8(a.selector);
    w.u8(a.priority);
    w.u16(a.protocol);
    w.end(e);
  }
  w.end(table);
  if (r.trust) {
    const auto t = w.begin(0x8000 | 11);  // NLA_F_NESTED | DCB_ATTR_DCB_APP_TRUST_TABLE
    for (auto sel : *r.trust) w.attr(sel == 255 ? 2 : 1, {sel});
    w.end(t);
  }
  w.end(ieee);
  auto& b = w.bytes();
  const auto len = static_cast<std::uint32_t>(b.size());
  std::memcpy(b.data(), &len, 4);
  return b;
}

// ---- the parser on the fixtures ----

TEST(DcbParse, Mlx5LikeReplyWithDscpTrust) {
  const auto r = parse(load_hex("ieee-get-mlx5-dscp.hex"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->exposed);
  EXPECT_EQ(r->ifname, "ens1f0np0");
  EXPECT_EQ(r->pfc_cap, std::optional<std::uint8_t>(8));
  EXPECT_EQ(r->pfc_enabled, std::optional<std::uint8_t>(0x08));
  EXPECT_EQ(r->pfc_priorities(), std::vector<int>{3});
  EXPECT_TRUE(r->app_table);
  const std::map<int, int> map = {{26, 3}, {48, 6}};
  EXPECT_EQ(r->dscp_prio, map);
  EXPECT_EQ(r->dscp_for_priority(3), std::vector<int>{26});
  EXPECT_EQ(r->dscp_for_priority(6), std::vector<int>{48});
  EXPECT_TRUE(r->dscp_for_priority(0).empty());
  EXPECT_TRUE(r->ambiguous_dscp.empty());
  EXPECT_TRUE(r->trust_table);
  EXPECT_EQ(r->trust_order, std::vector<std::string>{"dscp"});
  EXPECT_EQ(r->trust, std::optional<std::string>("dscp"));
  EXPECT_EQ(r->dcbx, std::optional<std::uint8_t>(0x0c));
}

TEST(DcbParse, PfcLostAfterReboot) {
  const auto r = parse(load_hex("ieee-get-pfc-lost.hex"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->exposed);
  EXPECT_EQ(r->pfc_cap, std::optional<std::uint8_t>(8));
  EXPECT_EQ(r->pfc_enabled, std::optional<std::uint8_t>(0));
  EXPECT_TRUE(r->pfc_priorities().empty());
  EXPECT_TRUE(r->app_table);
  EXPECT_TRUE(r->dscp_prio.empty());
  EXPECT_EQ(r->trust_order, std::vector<std::string>{"pcp"});
  EXPECT_EQ(r->trust, std::optional<std::string>("pcp"));
}

TEST(DcbParse, RecordedEopnotsuppMeansNotExposed) {
  const auto r = parse(load_hex("nlmsgerr-eopnotsupp-lo.hex"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->exposed);
  EXPECT_FALSE(r->pfc_enabled);
  EXPECT_FALSE(r->trust);
  EXPECT_TRUE(r->dscp_prio.empty());
}

TEST(DcbParse, RecordedEnodevIsAnError) {
  const auto r = parse(load_hex("nlmsgerr-enodev.hex"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "no such netdev");
}

TEST(DcbParse, TruncatedAndMalformedFixturesAreErrors) {
  const auto cut = parse(load_hex("ieee-get-truncated.hex"));
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error(), "truncated: nlmsg_len 400, only 200 bytes");
  const auto app = parse(load_hex("ieee-get-short-app.hex"));
  ASSERT_FALSE(app);
  EXPECT_EQ(app.error(), "DCB_ATTR_IEEE_APP_TABLE: entry of 2 bytes, expected struct dcb_app (4)");
}

TEST(DcbParse, BuilderAgreesWithTheHandAssembledFixture) {
  // The builder leaves out ETS, MAXRATE, BUFFER and DCBX; everything hsnsd reads must be the same.
  const auto built = parse(build(with_apps({{5, 3, 26}, {5, 6, 48}}, std::vector<std::uint8_t>{5})));
  const auto fixture = parse(load_hex("ieee-get-mlx5-dscp.hex"));
  ASSERT_TRUE(built) << built.error();
  ASSERT_TRUE(fixture) << fixture.error();
  EXPECT_EQ(built->ifname, fixture->ifname);
  EXPECT_EQ(built->pfc_enabled, fixture->pfc_enabled);
  EXPECT_EQ(built->pfc_cap, fixture->pfc_cap);
  EXPECT_EQ(built->dscp_prio, fixture->dscp_prio);
  EXPECT_EQ(built->trust, fixture->trust);
  EXPECT_EQ(built->trust_order, fixture->trust_order);
  EXPECT_FALSE(built->dcbx);
}

// ---- trust and the APP table ----

TEST(DcbParse, TrustFromTheTrustTableOrTheDscpEntries) {
  // Trust order [pcp, dscp]: PCP is trusted first.
  auto r = parse(build(with_apps({{5, 3, 26}}, std::vector<std::uint8_t>{255, 5})));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->trust, std::optional<std::string>("pcp"));
  EXPECT_EQ(r->trust_order, (std::vector<std::string>{"pcp", "dscp"}));
  // An empty trust table: nothing is trusted.
  r = parse(build(with_apps({{5, 3, 26}}, std::vector<std::uint8_t>{})));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->trust, std::optional<std::string>("none"));
  // No trust table (mlx5, kernels before apptrust): DSCP entries mean DSCP trust.
  r = parse(build(with_apps({{5, 3, 26}})));
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->trust_table);
  EXPECT_EQ(r->trust, std::optional<std::string>("dscp"));
  // ... and without any DSCP entry DCB does not say.
  r = parse(build(with_apps({{1, 3, 0x8915}})));  // ethertype RoCE v1 -> 3: not a DSCP entry
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->trust);
  EXPECT_TRUE(r->dscp_prio.empty());
  EXPECT_EQ(dcb_selector_name(1), "ethertype");
  EXPECT_EQ(dcb_selector_name(4), "port");
  EXPECT_EQ(dcb_selector_name(7), "selector 7");
}

TEST(DcbParse, AmbiguousDscpAndOutOfRangeValues) {
  auto r = parse(build(with_apps({{5, 3, 26}, {5, 5, 26}, {5, 3, 26}, {5, 6, 48}})));
  ASSERT_TRUE(r) << r.error();
  const std::map<int, std::vector<int>> ambiguous = {{26, {3, 5}}};
  EXPECT_EQ(r->ambiguous_dscp, ambiguous);
  EXPECT_EQ(r->dscp_prio.at(26), 3);  // the first entry
  EXPECT_EQ(r->dscp_for_priority(5), std::vector<int>{26});
  EXPECT_EQ(r->dscp_for_priority(6), std::vector<int>{48});
  r = parse(build(with_apps({{5, 3, 64}})));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "DCB_ATTR_IEEE_APP_TABLE: DSCP 64 > 63");
  r = parse(build(with_apps({{5, 8, 26}})));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "DCB_ATTR_IEEE_APP_TABLE: DSCP 26 to priority 8 > 7");
}

TEST(DcbParse, OtherCommandsTypesAndMissingPartsAreErrors) {
  Reply other_command;
  other_command.cmd = 1;  // DCB_CMD_GSTATE
  auto r = parse(build(other_command));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "reply to DCB command 1, expected DCB_CMD_IEEE_GET (21)");
  Bytes b = build({});
  b[4] = 16;  // RTM_NEWLINK
  r = parse(b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "unexpected netlink message type 16");
  // A reply without PFC (a driver without ieee_getpfc) is fine: PFC is absent.
  Reply no_pfc;
  no_pfc.pfc_en = std::nullopt;
  r = parse(build(no_pfc));
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->pfc_enabled);
  EXPECT_TRUE(r->pfc_priorities().empty());
  // An ACK is not an answer.
  const Bytes ack = {0x24, 0, 0,    0, 2, 0, 0,  0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                     0,    0, 0x10, 0, 0, 0, 78, 0, 1, 0, 7, 0, 0, 0, 0, 0, 0, 0};
  r = parse(ack);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "the kernel acknowledged without a DCB reply");
  // Bytes after the message (another message in the same read) are not part of it.
  b = load_hex("ieee-get-mlx5-dscp.hex");
  b.insert(b.end(), ack.begin(), ack.end());
  r = parse(b);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->pfc_priorities(), std::vector<int>{3});
}

// ---- malformed input: errors, never a crash or a read past the end (ASan/UBSan build) ----

TEST(DcbParse, TruncatedAtEveryOffsetIsAnError) {
  for (const char* name : {"ieee-get-mlx5-dscp.hex", "ieee-get-pfc-lost.hex", "nlmsgerr-eopnotsupp-lo.hex"}) {
    const Bytes full = load_hex(name);
    ASSERT_TRUE(parse(full)) << name;
    for (std::size_t k = 0; k < full.size(); ++k) {
      // A copy of exactly k bytes, so that ASan sees any read beyond them.
      const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(k));
      const auto r = parse(cut);
      ASSERT_FALSE(r) << name << " cut at " << k;
      EXPECT_FALSE(r.error().empty());
    }
  }
}

TEST(DcbParse, TruncatedWithAConsistentLengthFailsInsideTheAttributes) {
  // nlmsg_len rewritten to the cut, so that the attribute walkers see the truncation. The reply is
  // complete once DCB_ATTR_IEEE is (DCB_ATTR_DCBX, 8 bytes at the end, is optional; a last attribute
  // may lack its padding).
  const Bytes full = load_hex("ieee-get-mlx5-dscp.hex");
  const std::size_t ieee_end = full.size() - 8;
  for (std::size_t k = 16; k < full.size(); ++k) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(k));
    const auto len = static_cast<std::uint32_t>(k);
    std::memcpy(cut.data(), &len, 4);
    const auto r = parse(cut);
    const bool complete = k == ieee_end || k >= ieee_end + 5;
    EXPECT_EQ(static_cast<bool>(r), complete) << "cut at " << k << ": " << (r ? "ok" : r.error());
    if (r) {
      EXPECT_EQ(r->pfc_priorities(), std::vector<int>{3});
    }
  }
}

TEST(DcbParse, FlippedBytesAndRandomInputNeverCrash) {
  for (const char* name : {"ieee-get-mlx5-dscp.hex", "ieee-get-pfc-lost.hex", "ieee-get-short-app.hex"}) {
    const Bytes full = load_hex(name);
    for (std::size_t i = 0; i < full.size(); ++i) {
      for (std::uint8_t mask : {0xffu, 0x80u, 0x01u, 0x04u}) {
        Bytes b = full;
        b[i] ^= mask;
        const auto r = parse(b);
        if (!r) {
          EXPECT_FALSE(r.error().empty());
        }
      }
    }
  }
  std::mt19937 rng(7);
  const Bytes base = load_hex("ieee-get-mlx5-dscp.hex");
  for (int round = 0; round < 2000; ++round) {
    Bytes b = base;
    b.resize(std::uniform_int_distribution<std::size_t>(0, base.size())(rng));
    for (int j = 0; j < 4 && !b.empty(); ++j)
      b[std::uniform_int_distribution<std::size_t>(0, b.size() - 1)(rng)] =
          static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
    (void)parse(b);
  }
}

// ---- check_qos with an injected DCB source ----

std::string sysfs_root() {
  return hsns::testing::source_path("tests/fixtures/daemon/sysfs-roce").string();
}

DcbSource recorded(const std::string& fixture) {
  return [fixture](const std::string&) { return parse(load_hex(fixture)); };
}

const QosProfile kProfile{true, {3}, "dscp", {3}};

TEST(QosDcb, ConformantWithBothSources) {
  std::string asked;
  const auto r = check_qos(sysfs_root(), "ens1f0np0", kProfile, [&](const std::string& dev) {
    asked = dev;
    return parse(load_hex("ieee-get-mlx5-dscp.hex"));
  });
  EXPECT_EQ(asked, "ens1f0np0");
  EXPECT_EQ(r.state, "conformant");
  EXPECT_TRUE(r.findings.empty()) << r.findings.front();
  EXPECT_EQ(r.sources, (std::vector<std::string>{"sysfs", "dcb"}));
  const std::map<int, std::vector<int>> dscp = {{3, {26}}};
  EXPECT_EQ(r.roce_dscp, dscp);
}

TEST(QosDcb, PfcDriftSeenByBothSources) {
  // ens1f1np1's sysfs: PFC off, trust pcp, ECN off; DCB says the same.
  const auto r = check_qos(sysfs_root(), "ens1f1np1", kProfile, recorded("ieee-get-pfc-lost.hex"));
  EXPECT_EQ(r.state, "drift");
  const std::vector<std::string> want = {"pfc enabled on priorities {} (sysfs and dcb), expected {3}",
                                         "trust mode pcp (sysfs and dcb), expected dscp",
                                         "ecn roce_np priority 3 disabled, expected enabled",
                                         "ecn roce_rp priority 3 disabled, expected enabled"};
  EXPECT_EQ(r.findings, want);
  const std::map<int, std::vector<int>> dscp = {{3, {}}};
  EXPECT_EQ(r.roce_dscp, dscp);
}

TEST(QosDcb, DcbOnlyExposure) {
  // eth9 exposes nothing in sysfs: DCB alone decides.
  auto r = check_qos(sysfs_root(), "eth9", kProfile, recorded("ieee-get-mlx5-dscp.hex"));
  EXPECT_EQ(r.state, "conformant");
  EXPECT_EQ(r.sources, std::vector<std::string>{"dcb"});
  r = check_qos(sysfs_root(), "eth9", kProfile, recorded("ieee-get-pfc-lost.hex"));
  EXPECT_EQ(r.state, "drift");
  const std::vector<std::string> want = {"pfc enabled on priorities {} (dcb), expected {3}",
                                         "trust mode pcp (dcb), expected dscp"};
  EXPECT_EQ(r.findings, want);
  // A profile asking for PCP trust and PFC nowhere is met by the "lost" port.
  r = check_qos(sysfs_root(), "eth9", QosProfile{true, {}, "pcp", {}}, recorded("ieee-get-pfc-lost.hex"));
  EXPECT_EQ(r.state, "conformant");
}

TEST(QosDcb, SysfsAndDcbDisagree) {
  // sysfs still shows the configured state (PFC on 3, trust dscp); the DCB view lost it.
  const auto r = check_qos(sysfs_root(), "ens1f0np0", kProfile, recorded("ieee-get-pfc-lost.hex"));
  EXPECT_EQ(r.state, "drift");
  const std::vector<std::string> want = {"pfc sources disagree: sysfs {3}, dcb {} (expected {3})",
                                         "trust sources disagree: sysfs dscp, dcb pcp (expected dscp)"};
  EXPECT_EQ(r.findings, want);
}

TEST(QosDcb, DscpMapMustReachTheRocePriority) {
  // DSCP trust (DSCP entries present) but nothing maps to priority 3: RoCE would land elsewhere.
  auto r = check_qos(sysfs_root(), "eth9", kProfile, [](const std::string&) {
    return parse(build(with_apps({{5, 5, 46}, {5, 6, 48}})));
  });
  EXPECT_EQ(r.state, "drift");
  EXPECT_EQ(r.findings, std::vector<std::string>{"dcb: no DSCP maps to priority 3"});
  // No DSCP entry at all and no trust table: the DSCP map is gone.
  r = check_qos(sysfs_root(), "eth9", kProfile, [](const std::string&) { return parse(build({})); });
  EXPECT_EQ(r.state, "drift");
  EXPECT_EQ(r.findings,
            std::vector<std::string>{
                "dcb APP table has no DSCP entries, expected a DSCP to priority map (trust dscp)"});
  // Ambiguous entries and a PFC capability below the request.
  Reply odd = with_apps({{5, 3, 26}, {5, 4, 26}, {5, 4, 34}});
  odd.pfc_en = 0x18;
  odd.pfc_cap = 1;
  r = check_qos(sysfs_root(), "eth9", QosProfile{true, {3, 4}, "dscp", {}},
                [&](const std::string&) { return parse(build(odd)); });
  const std::vector<std::string> want = {"dcb pfc_cap 1 is below the 2 PFC priorities wanted",
                                         "dcb: DSCP 26 maps to several priorities {3,4}"};
  EXPECT_EQ(r.findings, want);
  const std::map<int, std::vector<int>> dscp = {{3, {26}}, {4, {26, 34}}};
  EXPECT_EQ(r.roce_dscp, dscp);
  // Conflicting entries are valid DCB; they matter only where they touch a RoCE priority.
  r = check_qos(sysfs_root(), "eth9", kProfile, [](const std::string&) {
    return parse(build(with_apps({{5, 3, 26}, {5, 1, 10}, {5, 2, 10}})));
  });
  EXPECT_EQ(r.state, "conformant");
}

TEST(QosDcb, NotExposedAndReadErrors) {
  // EOPNOTSUPP (veth, lo): sysfs alone, exactly as without a DCB source.
  auto r = check_qos(sysfs_root(), "ens1f0np0", kProfile, recorded("nlmsgerr-eopnotsupp-lo.hex"));
  EXPECT_EQ(r.state, "conformant");
  EXPECT_EQ(r.sources, std::vector<std::string>{"sysfs"});
  EXPECT_TRUE(r.roce_dscp.empty());
  EXPECT_EQ(check_qos(sysfs_root(), "eth9", kProfile, recorded("nlmsgerr-eopnotsupp-lo.hex")).state,
            "unknown");
  // A read error is a finding only when something else is exposed.
  const DcbSource broken = [](const std::string&) -> Result {
    return tl::unexpected(std::string("dcb ens1f0np0: receive: timeout"));
  };
  r = check_qos(sysfs_root(), "ens1f0np0", kProfile, broken);
  EXPECT_EQ(r.state, "drift");
  EXPECT_EQ(r.findings, std::vector<std::string>{"dcb ens1f0np0: receive: timeout"});
  r = check_qos(sysfs_root(), "eth9", kProfile, broken);
  EXPECT_EQ(r.state, "unknown");
  EXPECT_TRUE(r.findings.empty());
  // The sysfs-only overload and an empty source are the same thing.
  EXPECT_EQ(check_qos(sysfs_root(), "ens1f1np1", kProfile).findings,
            check_qos(sysfs_root(), "ens1f1np1", kProfile, DcbSource{}).findings);
  EXPECT_EQ(check_qos(sysfs_root(), "ens1f0np0", kProfile).sources, std::vector<std::string>{"sysfs"});
}

// ---- the real socket path ----

TEST(DcbSocket, LoAndVethAreNotExposedUnknownNetdevIsAnError) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespace)";
  hsns::testing::run_in_fresh_netns([] {
    const auto lo = read_dcb_qos("lo");
    ASSERT_TRUE(lo) << lo.error();
    EXPECT_FALSE(lo->exposed);

    const auto add = hsns::testing::sh("ip link add hsnsdcb0 type veth peer name hsnsdcb1");
    ASSERT_TRUE(add.ok()) << add;
    for (const char* dev : {"hsnsdcb0", "hsnsdcb1"}) {
      const auto v = read_dcb_qos(dev);
      ASSERT_TRUE(v) << v.error();
      EXPECT_FALSE(v->exposed) << dev;
    }
    // Through check_qos with the real reader: nothing exposed anywhere is "unknown", not an error.
    TempDir empty_sysfs;
    const auto q = check_qos(empty_sysfs.path().string(), "hsnsdcb0", kProfile, read_dcb_qos);
    EXPECT_EQ(q.state, "unknown");
    EXPECT_TRUE(q.findings.empty());
    EXPECT_TRUE(q.sources.empty());

    const auto missing = read_dcb_qos("nosuch0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), "dcb nosuch0: no such netdev");
    // Names the kernel could never have.
    const auto too_long = read_dcb_qos("abcdefghijklmnopq");
    ASSERT_FALSE(too_long);
    EXPECT_EQ(too_long.error(), "dcb abcdefghijklmnopq: invalid netdev name");
    EXPECT_FALSE(read_dcb_qos(""));

    hsns::testing::must("ip link del hsnsdcb0");
  });
}

}  // namespace
}  // namespace hsns::daemon
