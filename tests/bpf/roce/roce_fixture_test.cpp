// Fixture tests of bpf/roce_flow.bpf.c through bpf_prog_test_run_opts: every opcode class, every
// encapsulation (plain, VLAN, QinQ, IPv6, ERSPAN II/III) at tc and XDP, truncation at every offset and the
// malformed cases. Each asserts the verdict, that the packet comes out unchanged, and the exact map effect
// (flow table content and every counter).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "packet.h"
#include "roce_flow.h"
#include "roce_flow.skel.h"
#include "roce_flow_loader.h"

namespace {

using hsns::roce_gen::Bytes;
using hsns::roce_gen::Encap;
using hsns::roce_gen::FrameSpec;
using hsns::roce_gen::PacketSpec;

enum class Prog { tc_in, tc_out, tc_mirror, xdp, xdp_mirror };

struct Result {
  std::vector<std::pair<roce_flow_key, roce_flow_stats>> flows;
  std::array<std::uint64_t, ROCE_CNT_MAX> counters{};
};

class RoceFixture : public ::testing::Test {
 protected:
  // The fixtures use a small table (2,048 slots) so that clearing it between runs is cheap.
  static void SetUpTestSuite() { skel_ = load(1024); }
  static void TearDownTestSuite() {
    roce_flow::destroy(skel_);
    skel_ = nullptr;
  }

  static roce_flow* load(std::uint32_t table_size) { return hsns::test::load_roce_flow(table_size); }

  void SetUp() override {
    ASSERT_NE(skel_, nullptr) << "cannot load roce_flow.bpf.o (needs root)";
    reset(skel_);
  }

  // The flow table the programs write (roce_flows_a: the fixtures never flip), mapped for the call of f.
  template <class F>
  static void with_table(roce_flow* s, F&& f) {
    const std::uint32_t slots = bpf_map__max_entries(s->maps.roce_flows_a);
    const std::size_t len = std::size_t{slots} * sizeof(roce_flow_slot);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(s->maps.roce_flows_a), 0);
    ASSERT_NE(p, MAP_FAILED) << strerror(errno);
    f(static_cast<roce_flow_slot*>(p), slots);
    munmap(p, len);
  }

  static void reset(roce_flow* s) {
    with_table(s, [](roce_flow_slot* t, std::uint32_t slots) {
      std::memset(static_cast<void*>(t), 0, std::size_t{slots} * sizeof(roce_flow_slot));
    });
    const int cfd = bpf_map__fd(s->maps.roce_counters);
    std::vector<std::uint64_t> zero(static_cast<std::size_t>(libbpf_num_possible_cpus()), 0);
    for (std::uint32_t i = 0; i < ROCE_CNT_MAX; ++i) bpf_map_update_elem(cfd, &i, zero.data(), BPF_ANY);
  }

  static bpf_program* prog_of(roce_flow* s, Prog p) {
    switch (p) {
      case Prog::tc_in:
        return s->progs.roce_tc_ingress;
      case Prog::tc_out:
        return s->progs.roce_tc_egress;
      case Prog::tc_mirror:
        return s->progs.roce_tc_ingress_mirror;
      case Prog::xdp:
        return s->progs.roce_xdp_plain;
      case Prog::xdp_mirror:
        return s->progs.roce_xdp_mirror;
    }
    return nullptr;
  }

  // Runs one packet; asserts the verdict and the unchanged packet.
  static void run(roce_flow* s, Prog p, const Bytes& pkt) { run_or_rejected(s, p, pkt, false); }

  // As run(); with may_reject, returns false when the kernel's test harness refuses the input (tc
  // test_run wants a complete IPv4/IPv6 header when the ethertype says IP).
  static bool run_or_rejected(roce_flow* s, Prog p, const Bytes& pkt, bool may_reject) {
    Bytes out(pkt.size() + 256, 0xAA);
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt.data(), .data_out = out.data(),
                .data_size_in = static_cast<__u32>(pkt.size()),
                .data_size_out = static_cast<__u32>(out.size()), .repeat = 1);
    const int rc = bpf_prog_test_run_opts(bpf_program__fd(prog_of(s, p)), &opts);
    if (may_reject && rc == -EINVAL) return false;
    check_output(p, pkt, out, opts, rc);
    return true;
  }

  static void check_output(Prog p, const Bytes& pkt, const Bytes& out, const bpf_test_run_opts& opts,
                           int rc) {
    ASSERT_EQ(rc, 0) << strerror(errno);
    const bool is_xdp = p == Prog::xdp || p == Prog::xdp_mirror;
    EXPECT_EQ(opts.retval, is_xdp ? static_cast<__u32>(XDP_PASS) : static_cast<__u32>(TC_ACT_UNSPEC));
    ASSERT_EQ(opts.data_size_out, pkt.size());
    EXPECT_EQ(0, std::memcmp(out.data(), pkt.data(), pkt.size())) << "packet modified";
  }

  static Result read(roce_flow* s) {
    Result r;
    with_table(s, [&](const roce_flow_slot* t, std::uint32_t slots) {
      for (std::uint32_t i = 0; i < slots; ++i) {
        if (t[i].tag == 0) continue;
        // A claimed slot is always complete after a run, and its tag is the key's digest | 1.
        EXPECT_EQ(t[i].ready, 1u);
        std::uint64_t w[6];
        std::memcpy(w, &t[i].key, sizeof(w));
        EXPECT_EQ(t[i].tag, roce_digest_words(w[0], w[1], w[2], w[3], w[4], w[5]) | 1);
        roce_flow_stats st{};
        roce_slot_stats(&t[i], &st);
        r.flows.emplace_back(t[i].key, st);
      }
    });
    const int cfd = bpf_map__fd(s->maps.roce_counters);
    std::vector<std::uint64_t> per_cpu(static_cast<std::size_t>(libbpf_num_possible_cpus()));
    for (std::uint32_t i = 0; i < ROCE_CNT_MAX; ++i) {
      if (bpf_map_lookup_elem(cfd, &i, per_cpu.data()) != 0) continue;
      for (auto v : per_cpu) r.counters[i] += v;
    }
    r.counters[ROCE_CNT_PACKETS] = 0;
    for (int i = 0; i < ROCE_CNT_MAX; ++i)
      if (roce_counter_is_outcome(i)) r.counters[ROCE_CNT_PACKETS] += r.counters[static_cast<std::size_t>(i)];
    return r;
  }

  static roce_flow* skel_;
};

roce_flow* RoceFixture::skel_ = nullptr;

PacketSpec spec4(std::uint8_t opcode) {
  PacketSpec s;
  s.family = 4;
  hsns::roce_gen::parse_address("198.18.1.1", s.src);
  hsns::roce_gen::parse_address("198.18.1.2", s.dst);
  s.sport = 0xC123;
  s.opcode = opcode;
  s.dest_qp = 0x00ABCD;
  s.psn = 0x123456;
  s.payload = 64;
  return s;
}

PacketSpec spec6(std::uint8_t opcode) {
  PacketSpec s = spec4(opcode);
  s.family = 6;
  hsns::roce_gen::parse_address("2001:db8::1", s.src);
  hsns::roce_gen::parse_address("2001:db8::2", s.dst);
  return s;
}

Bytes frame_of(const PacketSpec& s, Encap e = Encap::none) {
  FrameSpec fs;
  fs.encap = e;
  return hsns::roce_gen::frame(s, fs);
}

// Expected counters: ROCE_CNT_PACKETS = n plus the listed ones; everything else zero.
void expect_counters(const Result& r, std::uint64_t packets, std::map<int, std::uint64_t> others) {
  others[ROCE_CNT_PACKETS] = packets;
  for (int i = 0; i < ROCE_CNT_MAX; ++i) {
    const auto it = others.find(i);
    EXPECT_EQ(r.counters[static_cast<std::size_t>(i)], it == others.end() ? 0u : it->second)
        << "counter " << i;
  }
}

// Exactly one flow with the key of `s` holding exactly one packet of class `cls`.
void expect_single(const Result& r, const PacketSpec& s, int cls, std::uint8_t dir = ROCE_DIR_INGRESS) {
  ASSERT_EQ(r.flows.size(), 1u);
  const auto& [k, st] = r.flows[0];
  EXPECT_EQ(k.ifindex, 1u);
  EXPECT_EQ(k.direction, dir);
  EXPECT_EQ(k.family, s.family);
  EXPECT_EQ(k.sport, s.sport);
  EXPECT_EQ(k.dest_qp, s.dest_qp);
  EXPECT_EQ(0, std::memcmp(k.src, s.src.data(), 16));
  EXPECT_EQ(0, std::memcmp(k.dst, s.dst.data(), 16));
  EXPECT_EQ(k.pad, 0u);
  EXPECT_EQ(st.packets, 1u);
  EXPECT_EQ(st.bytes, hsns::roce_gen::ip_length(s));
  EXPECT_GT(st.first_ns, 0u);
  EXPECT_EQ(st.first_ns, st.last_ns);
  for (int c = 0; c < ROCE_OP_CLASSES; ++c) EXPECT_EQ(st.op[c], c == cls ? 1u : 0u) << "class " << c;
  EXPECT_EQ(st.ect, (s.ecn == 1 || s.ecn == 2) ? 1u : 0u);
  EXPECT_EQ(st.ce, s.ecn == 3 ? 1u : 0u);
  EXPECT_EQ(st.cnp, cls == ROCE_OP_CNP ? 1u : 0u);
  EXPECT_EQ(st.psn_regressions, 0u);
  const bool data = cls != ROCE_OP_ACK && cls != ROCE_OP_CNP;
  EXPECT_EQ(st.has_psn, data ? 1u : 0u);
  if (data) {
    EXPECT_EQ(st.first_psn, s.psn);
    EXPECT_EQ(st.last_psn, s.psn);
    EXPECT_EQ(st.max_psn, s.psn);
  }
}

struct OpcodeCase {
  std::uint8_t opcode;
  int cls;
};

TEST_F(RoceFixture, EveryOpcodeClassIPv4Tc) {
  const std::vector<OpcodeCase> cases = {
      {0x00, ROCE_OP_SEND},     {0x04, ROCE_OP_SEND},      {0x05, ROCE_OP_SEND},      {0x17, ROCE_OP_SEND},
      {0x64, ROCE_OP_SEND},     {0x06, ROCE_OP_WRITE},     {0x0A, ROCE_OP_WRITE},     {0x0B, ROCE_OP_WRITE},
      {0x0C, ROCE_OP_READ_REQ}, {0x0D, ROCE_OP_READ_RESP}, {0x10, ROCE_OP_READ_RESP}, {0x11, ROCE_OP_ACK},
      {0x12, ROCE_OP_ATOMIC},   {0x13, ROCE_OP_ATOMIC},    {0x14, ROCE_OP_ATOMIC},    {0x81, ROCE_OP_CNP},
      {0x2A, ROCE_OP_WRITE},    {0xA4, ROCE_OP_SEND},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.opcode);
    reset(skel_);
    const PacketSpec s = spec4(c.opcode);
    run(skel_, Prog::tc_in, frame_of(s));
    const Result r = read(skel_);
    expect_single(r, s, c.cls);
    expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}});
    if (c.cls == ROCE_OP_ACK) {
      for (int n = 0; n < ROCE_NAK_KINDS; ++n) EXPECT_EQ(r.flows[0].second.nak[n], 0u);
    }
  }
}

TEST_F(RoceFixture, UnknownOpcodesAreOtherAndCounted) {
  for (std::uint8_t op : {0x15, 0x18, 0x1F, 0x80, 0x82, 0xC0, 0xFF}) {
    SCOPED_TRACE(op);
    reset(skel_);
    const PacketSpec s = spec4(op);
    run(skel_, Prog::tc_in, frame_of(s));
    const Result r = read(skel_);
    expect_single(r, s, ROCE_OP_OTHER);
    expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}, {ROCE_CNT_UNKNOWN_OPCODE, 1}});
  }
}

TEST_F(RoceFixture, NakSyndromes) {
  const std::vector<std::pair<std::uint8_t, int>> cases = {
      {0x60, ROCE_NAK_PSN_SEQ},
      {0x61, ROCE_NAK_INV_REQ},
      {0x62, ROCE_NAK_REM_ACCESS},
      {0x63, ROCE_NAK_REM_OP},
      {0x20, ROCE_NAK_RNR},
      {0x3F, ROCE_NAK_RNR},
      {0x64, ROCE_NAK_OTHER},
      {0x00, -1},
      {0x1F, -1},
  };
  for (const auto& [syn, kind] : cases) {
    SCOPED_TRACE(syn);
    reset(skel_);
    PacketSpec s = spec4(0x11);
    s.syndrome = syn;
    s.payload = 0;
    run(skel_, Prog::tc_in, frame_of(s));
    const Result r = read(skel_);
    expect_single(r, s, ROCE_OP_ACK);
    for (int n = 0; n < ROCE_NAK_KINDS; ++n) EXPECT_EQ(r.flows[0].second.nak[n], n == kind ? 1u : 0u);
    expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}});
  }
}

TEST_F(RoceFixture, EcnMarksIPv4AndIPv6) {
  for (int family : {4, 6}) {
    for (std::uint8_t ecn = 0; ecn < 4; ++ecn) {
      SCOPED_TRACE(family * 10 + ecn);
      reset(skel_);
      PacketSpec s = family == 4 ? spec4(0x0A) : spec6(0x0A);
      s.ecn = ecn;
      run(skel_, Prog::tc_in, frame_of(s));
      const Result r = read(skel_);
      expect_single(r, s, ROCE_OP_WRITE);
      expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}});
    }
  }
}

TEST_F(RoceFixture, EveryEncapsulationEveryHook) {
  struct Case {
    Encap encap;
    Prog prog;
    bool decap;
  };
  const std::vector<Case> cases = {
      {Encap::none, Prog::tc_in, false},        {Encap::vlan, Prog::tc_in, false},
      {Encap::qinq, Prog::tc_in, false},        {Encap::none, Prog::tc_out, false},
      {Encap::none, Prog::xdp, false},          {Encap::vlan, Prog::xdp, false},
      {Encap::qinq, Prog::xdp, false},          {Encap::erspan2, Prog::tc_mirror, true},
      {Encap::erspan3, Prog::tc_mirror, true},  {Encap::erspan2, Prog::xdp_mirror, true},
      {Encap::erspan3, Prog::xdp_mirror, true}, {Encap::none, Prog::tc_mirror, false},
      {Encap::vlan, Prog::xdp_mirror, false},
  };
  for (int family : {4, 6}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::to_string(family) + "/" + std::to_string(static_cast<int>(c.encap)) + "/" +
                   std::to_string(static_cast<int>(c.prog)));
      reset(skel_);
      const PacketSpec s = family == 4 ? spec4(0x04) : spec6(0x04);
      run(skel_, c.prog, frame_of(s, c.encap));
      const Result r = read(skel_);
      const std::uint8_t dir = c.prog == Prog::tc_out                                ? ROCE_DIR_EGRESS
                               : (c.prog == Prog::xdp || c.prog == Prog::xdp_mirror) ? ROCE_DIR_XDP
                                                                                     : ROCE_DIR_INGRESS;
      expect_single(r, s, ROCE_OP_SEND, dir);
      if (c.decap)
        expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}, {ROCE_CNT_ERSPAN, 1}});
      else
        expect_counters(r, 1, {{ROCE_CNT_ROCE, 1}});
    }
  }
}

TEST_F(RoceFixture, ErspanWithoutDecapIsNonRoce) {
  for (Encap e : {Encap::erspan2, Encap::erspan3}) {
    reset(skel_);
    run(skel_, Prog::tc_in, frame_of(spec4(0x04), e));
    const Result r = read(skel_);
    EXPECT_TRUE(r.flows.empty());
    expect_counters(r, 1, {{ROCE_CNT_NON_ROCE, 1}});
  }
}

// Header bytes the parser needs for `s` in encapsulation `e`.
std::size_t needed(const PacketSpec& s, Encap e) {
  std::size_t l2 = 14;
  if (e == Encap::vlan) l2 += 4;
  if (e == Encap::qinq) l2 += 8;
  if (e == Encap::erspan2) l2 = 14 + 20 + 8 + 8 + 14;
  if (e == Encap::erspan3) l2 = 14 + 20 + 8 + 12 + 14;
  return l2 + (s.family == 4 ? 20 : 40) + 8 + 12 + (s.opcode == 0x11 ? 4 : 0);
}

TEST_F(RoceFixture, TruncationAtEveryOffset) {
  std::size_t runs = 0;
  std::size_t tc_rejected = 0;
  for (int family : {4, 6}) {
    for (std::uint8_t op : {0x04, 0x11}) {
      for (Encap e : {Encap::none, Encap::vlan, Encap::qinq, Encap::erspan2, Encap::erspan3}) {
        const PacketSpec s = family == 4 ? spec4(op) : spec6(op);
        const Bytes full = frame_of(s, e);
        const bool mirror = e == Encap::erspan2 || e == Encap::erspan3;
        const std::size_t need = needed(s, e);
        for (std::size_t cut = 14; cut < full.size(); ++cut) {
          SCOPED_TRACE(std::to_string(family) + "/" + std::to_string(op) + "/" +
                       std::to_string(static_cast<int>(e)) + " cut " + std::to_string(cut));
          for (Prog p : {mirror ? Prog::tc_mirror : Prog::tc_in, mirror ? Prog::xdp_mirror : Prog::xdp}) {
            reset(skel_);
            const bool is_tc = p == Prog::tc_in || p == Prog::tc_mirror;
            if (!run_or_rejected(skel_, p, Bytes(full.begin(), full.begin() + static_cast<long>(cut)),
                                 is_tc)) {
              ++tc_rejected;  // the same cut still runs through XDP
              continue;
            }
            const Result r = read(skel_);
            ++runs;
            EXPECT_EQ(r.counters[ROCE_CNT_PACKETS], 1u);
            if (cut >= need) {
              // Mirror truncation that keeps the headers: still accounted, with the IP header's length.
              ASSERT_EQ(r.flows.size(), 1u);
              EXPECT_EQ(r.flows[0].second.bytes, hsns::roce_gen::ip_length(s));
              EXPECT_EQ(r.counters[ROCE_CNT_ROCE], 1u);
              continue;
            }
            EXPECT_TRUE(r.flows.empty());
            std::uint64_t trunc = r.counters[ROCE_CNT_TRUNC_L2] + r.counters[ROCE_CNT_TRUNC_L3] +
                                  r.counters[ROCE_CNT_TRUNC_UDP] + r.counters[ROCE_CNT_TRUNC_BTH] +
                                  r.counters[ROCE_CNT_TRUNC_AETH] + r.counters[ROCE_CNT_TRUNC_ERSPAN];
            EXPECT_EQ(trunc, 1u);
            EXPECT_EQ(r.counters[ROCE_CNT_ROCE] + r.counters[ROCE_CNT_NON_ROCE], 0u);
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 1000u);
  RecordProperty("runs", static_cast<int>(runs));
  RecordProperty("tc_rejected_by_harness", static_cast<int>(tc_rejected));
}

Bytes with_ipv4_patch(std::size_t at, std::vector<std::uint8_t> bytes) {
  Bytes f = frame_of(spec4(0x04));
  for (std::size_t i = 0; i < bytes.size(); ++i) f[14 + at + i] = bytes[i];
  return f;
}

TEST_F(RoceFixture, MalformedCasesAreCountedNotAccounted) {
  struct Case {
    std::string name;
    Bytes pkt;
    Prog prog;
    int counter;
  };
  std::vector<Case> cases;
  cases.push_back({"ipv4 ihl 4", with_ipv4_patch(0, {0x44}), Prog::tc_in, ROCE_CNT_BAD_IP});
  cases.push_back({"ipv4 version 5", with_ipv4_patch(0, {0x55}), Prog::tc_in, ROCE_CNT_BAD_IP});
  cases.push_back({"ipv4 tot_len 10", with_ipv4_patch(2, {0x00, 0x0A}), Prog::tc_in, ROCE_CNT_BAD_IP});
  cases.push_back({"ipv4 MF fragment", with_ipv4_patch(6, {0x20, 0x00}), Prog::tc_in, ROCE_CNT_IP_FRAGMENT});
  cases.push_back(
      {"ipv4 later fragment", with_ipv4_patch(6, {0x00, 0x10}), Prog::tc_in, ROCE_CNT_IP_FRAGMENT});
  cases.push_back({"udp len 10", with_ipv4_patch(24, {0x00, 0x0A}), Prog::tc_in, ROCE_CNT_BAD_UDP_LEN});
  cases.push_back(
      {"udp len > ip payload", with_ipv4_patch(24, {0x7F, 0xFF}), Prog::tc_in, ROCE_CNT_BAD_UDP_LEN});
  cases.push_back({"bth tver 1", with_ipv4_patch(29, {0x01}), Prog::tc_in, ROCE_CNT_BAD_BTH_VERSION});
  cases.push_back({"udp other port", with_ipv4_patch(22, {0x00, 0x35}), Prog::tc_in, ROCE_CNT_NON_ROCE});
  cases.push_back({"tcp", with_ipv4_patch(9, {0x06}), Prog::tc_in, ROCE_CNT_NON_ROCE});
  {
    PacketSpec s = spec4(0x11);
    s.payload = 0;
    Bytes f = frame_of(s);
    // UDP length covering BTH only: the AETH is outside the datagram.
    f[14 + 24] = 0;
    f[14 + 25] = 20;
    cases.push_back({"ack without aeth", f, Prog::tc_in, ROCE_CNT_TRUNC_AETH});
  }
  {
    Bytes arp = hsns::roce_gen::ethernet({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, {2, 0, 0, 0, 0, 1}, 0x0806,
                                         Bytes(28, 0));
    cases.push_back({"arp", arp, Prog::tc_in, ROCE_CNT_NON_ROCE});
  }
  {
    // Three VLAN tags.
    Bytes f = frame_of(spec4(0x04), Encap::qinq);
    const Bytes tag = {0x81, 0x00, 0x00, 0x05};
    f.insert(f.begin() + 12, tag.begin(), tag.end());
    cases.push_back({"three vlan tags", f, Prog::tc_in, ROCE_CNT_VLAN_TOO_DEEP});
  }
  {
    // IPv6 with a hop-by-hop extension header before UDP.
    const PacketSpec s = spec6(0x04);
    Bytes f = frame_of(s);
    f[14 + 6] = 0;  // next header: hop-by-hop
    const Bytes hbh = {17, 0, 1, 4, 0, 0, 0, 0};
    f.insert(f.begin() + 14 + 40, hbh.begin(), hbh.end());
    const std::uint16_t plen = static_cast<std::uint16_t>(((f[18] << 8) | f[19]) + 8);
    f[18] = static_cast<std::uint8_t>(plen >> 8);
    f[19] = static_cast<std::uint8_t>(plen);
    cases.push_back({"ipv6 hop-by-hop", f, Prog::tc_in, ROCE_CNT_IPV6_EXT});
    cases.push_back({"ipv6 hop-by-hop xdp", f, Prog::xdp, ROCE_CNT_IPV6_EXT});
  }
  {
    Bytes f = frame_of(spec6(0x04));
    f[14] = 0x40;  // version 4 in an IPv6 ethertype
    cases.push_back({"ipv6 bad version", f, Prog::tc_in, ROCE_CNT_BAD_IP});
  }
  {
    // GRE carrying plain IPv4 (not ERSPAN) on a collector port.
    Bytes f = frame_of(spec4(0x04), Encap::erspan2);
    f[14 + 20 + 2] = 0x08;
    f[14 + 20 + 3] = 0x00;
    cases.push_back({"gre ipv4", f, Prog::tc_mirror, ROCE_CNT_GRE_NOT_ERSPAN});
    cases.push_back({"gre ipv4 xdp", f, Prog::xdp_mirror, ROCE_CNT_GRE_NOT_ERSPAN});
    Bytes g = frame_of(spec4(0x04), Encap::erspan2);
    g[14 + 20 + 1] = 0x01;  // GRE version 1
    cases.push_back({"gre version 1", g, Prog::tc_mirror, ROCE_CNT_GRE_NOT_ERSPAN});
    Bytes h = frame_of(spec4(0x04), Encap::erspan2);
    h[14 + 20 + 8] = 0x30;  // ERSPAN II header claiming version 3
    cases.push_back({"erspan ii bad version", h, Prog::tc_mirror, ROCE_CNT_TRUNC_ERSPAN});
    Bytes i = frame_of(spec4(0x04), Encap::erspan3);
    i[14 + 20 + 8] = 0x10;  // ERSPAN III header claiming version 1
    cases.push_back({"erspan iii bad version", i, Prog::tc_mirror, ROCE_CNT_TRUNC_ERSPAN});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    reset(skel_);
    run(skel_, c.prog, c.pkt);
    const Result r = read(skel_);
    EXPECT_TRUE(r.flows.empty());
    expect_counters(r, 1, {{c.counter, 1}});
  }
}

TEST_F(RoceFixture, PsnRegressionsAndHighestPsn) {
  // 10 11 12 | 11 12 13 (go-back-N to 11) | 13 (duplicate) | ACKs do not count.
  const std::vector<std::uint32_t> psns = {10, 11, 12, 11, 12, 13, 13};
  PacketSpec s = spec4(0x0A);
  for (auto psn : psns) {
    s.psn = psn;
    run(skel_, Prog::tc_in, frame_of(s));
  }
  PacketSpec ack = s;
  ack.opcode = 0x11;
  ack.psn = 5;
  ack.payload = 0;
  run(skel_, Prog::tc_in, frame_of(ack));
  const Result r = read(skel_);
  ASSERT_EQ(r.flows.size(), 1u);
  const auto& st = r.flows[0].second;
  EXPECT_EQ(st.packets, 8u);
  EXPECT_EQ(st.op[ROCE_OP_WRITE], 7u);
  EXPECT_EQ(st.op[ROCE_OP_ACK], 1u);
  EXPECT_EQ(st.psn_regressions, 2u);
  EXPECT_EQ(st.first_psn, 10u);
  EXPECT_EQ(st.last_psn, 13u);
  EXPECT_EQ(st.max_psn, 13u);
  EXPECT_EQ(st.bytes, 7u * hsns::roce_gen::ip_length(s) + hsns::roce_gen::ip_length(ack));
  expect_counters(r, 8, {{ROCE_CNT_ROCE, 8}});
}

TEST_F(RoceFixture, PsnWrapIsNotARegression) {
  PacketSpec s = spec4(0x0A);
  for (std::uint32_t psn : {0xFFFFFEu, 0xFFFFFFu, 0u, 1u}) {
    s.psn = psn;
    run(skel_, Prog::tc_in, frame_of(s));
  }
  const Result r = read(skel_);
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0].second.psn_regressions, 0u);
  EXPECT_EQ(r.flows[0].second.max_psn, 1u);
}

TEST_F(RoceFixture, DistinctKeysAreDistinctFlows) {
  // Same host pair: two QPs, two source ports, and both directions of the hook.
  PacketSpec s = spec4(0x04);
  run(skel_, Prog::tc_in, frame_of(s));
  s.dest_qp = 0x17;
  run(skel_, Prog::tc_in, frame_of(s));
  s.sport = 0xC999;
  run(skel_, Prog::tc_in, frame_of(s));
  run(skel_, Prog::tc_out, frame_of(s));
  run(skel_, Prog::tc_out, frame_of(s));
  const Result r = read(skel_);
  EXPECT_EQ(r.flows.size(), 4u);
  expect_counters(r, 5, {{ROCE_CNT_ROCE, 5}});
}

// The harvester's kernel side: roce_harvest copies every complete slot of the inactive table to the staging
// array exactly once, across runs when the staging array fills up, and leaves the table as it was (the
// records are not written yet), each copy naming its slot; a second copy gives the same records;
// roce_clear_listed clears the listed slots only, and roce_clear then empties the table.
TEST_F(RoceFixture, HarvestProgramCopiesEverySlotOnceThenClearsTheTable) {
  roce_flow* big = load(8192);  // 16,384 slots: more flows than the 4,096-slot staging array holds
  ASSERT_NE(big, nullptr);
  // Three flows through the program itself.
  PacketSpec s = spec4(0x0A);
  for (std::uint32_t qp = 1; qp <= 3; ++qp) {
    s.dest_qp = qp;
    run(big, Prog::tc_in, frame_of(s));
  }
  const Result programmed = read(big);
  ASSERT_EQ(programmed.flows.size(), 3u);
  // 5,000 more written directly (a slot's placement does not matter to the harvest), and one slot claimed
  // but never published, which must be cleared without a record.
  constexpr std::uint32_t kSynthetic = 5000;
  std::uint32_t placed = 0;
  with_table(big, [&](roce_flow_slot* t, std::uint32_t slots) {
    for (std::uint32_t i = 0; i < slots && placed <= kSynthetic; ++i) {
      if (t[i].tag != 0) continue;
      if (placed == kSynthetic) {
        t[i].tag = 7;  // claimed, not ready
        ++placed;
        break;
      }
      t[i].key.ifindex = 9;
      t[i].key.family = 4;
      t[i].key.dest_qp = 1000 + placed;
      t[i].bytes = 100ULL * (placed + 1);
      t[i].op[ROCE_OP_WRITE] = placed + 1;
      t[i].tag = 3;
      t[i].ready = 1;
      ++placed;
    }
  });
  ASSERT_EQ(placed, kSynthetic + 1);

  const int out_fd = bpf_map__fd(big->maps.roce_harvest_out);
  const std::size_t out_len = std::size_t{ROCE_HARVEST_OUT} * sizeof(roce_flow_slot);
  void* out = mmap(nullptr, out_len, PROT_READ, MAP_SHARED, out_fd, 0);
  ASSERT_NE(out, MAP_FAILED) << strerror(errno);
  const std::uint32_t slots = bpf_map__max_entries(big->maps.roce_flows_a);
  std::vector<roce_flow_slot> before(slots);
  with_table(
      big, [&](const roce_flow_slot* t, std::uint32_t n) { std::memcpy(before.data(), t, n * sizeof(*t)); });
  int unpublished = 0;
  std::vector<std::uint32_t> copied_slots;  // of the first copy
  const auto copy_all = [&](std::map<std::uint32_t, roce_flow_stats>& got, int& runs) {
    const bool first = copied_slots.empty();
    roce_harvest_ctx ctx{};
    while (ctx.start < slots && runs < 100) {
      LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
      ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(big->progs.roce_harvest), &opts), 0)
          << strerror(errno);
      ++runs;
      ASSERT_LE(ctx.records, static_cast<std::uint32_t>(ROCE_HARVEST_OUT));
      const auto* staged = static_cast<const roce_flow_slot*>(out);
      for (std::uint32_t i = 0; i < ctx.records; ++i) {
        // The copy names its slot: that slot holds exactly what was copied.
        ASSERT_LT(staged[i].slot, slots);
        roce_flow_slot expect = before[staged[i].slot];
        expect.slot = staged[i].slot;
        EXPECT_EQ(0, std::memcmp(&expect, &staged[i], sizeof(expect))) << staged[i].slot;
        if (first) copied_slots.push_back(static_cast<std::uint32_t>(staged[i].slot));
        if (staged[i].ready == 0) {  // the claimed, never published slot: copied, skipped by the harvester
          EXPECT_EQ(staged[i].tag, 7u);
          ++unpublished;
          continue;
        }
        roce_flow_stats st{};
        roce_slot_stats(&staged[i], &st);
        EXPECT_TRUE(got.emplace(staged[i].key.dest_qp, st).second)
            << "copied twice: " << staged[i].key.dest_qp;
      }
    }
  };
  std::map<std::uint32_t, roce_flow_stats> got;  // by dest_qp
  int runs = 0;
  copy_all(got, runs);
  EXPECT_EQ(unpublished, 1);
  EXPECT_GE(runs, 2);  // the staging array filled up at least once
  // Copying changed nothing in the table; a second copy (a batch re-emitted after a crash) is identical.
  with_table(big, [&](const roce_flow_slot* t, std::uint32_t n) {
    EXPECT_EQ(0, std::memcmp(before.data(), t, n * sizeof(*t))) << "roce_harvest modified the table";
  });
  std::map<std::uint32_t, roce_flow_stats> again;
  int runs_again = 0;
  copy_all(again, runs_again);
  ASSERT_EQ(again.size(), got.size());
  for (const auto& [qp, st] : got) EXPECT_EQ(0, std::memcmp(&again[qp], &st, sizeof(st))) << qp;
  munmap(out, out_len);
  ASSERT_EQ(got.size(), 3 + kSynthetic);
  for (const auto& [k, st] : programmed.flows) {
    ASSERT_TRUE(got.count(k.dest_qp));
    EXPECT_EQ(0, std::memcmp(&got[k.dest_qp], &st, sizeof(st)));
  }
  for (std::uint32_t n = 0; n < kSynthetic; ++n) {
    const auto it = got.find(1000 + n);
    ASSERT_NE(it, got.end()) << n;
    EXPECT_EQ(it->second.packets, n + 1u);
    EXPECT_EQ(it->second.op[ROCE_OP_WRITE], n + 1u);
    EXPECT_EQ(it->second.bytes, 100u * (n + 1));
  }
  ASSERT_EQ(copied_slots.size(), 3 + kSynthetic + 1);
  // roce_clear_listed: the listed slots only (all copies but the first ten), in one run; a listed slot that
  // is not claimed and an index past the table change nothing.
  {
    const int list_fd = bpf_map__fd(big->maps.roce_clear_list);
    const std::size_t list_len = std::size_t{slots} * sizeof(std::uint64_t);
    void* lp = mmap(nullptr, list_len, PROT_READ | PROT_WRITE, MAP_SHARED, list_fd, 0);
    ASSERT_NE(lp, MAP_FAILED) << strerror(errno);
    auto* list = static_cast<std::uint64_t*>(lp);
    std::uint32_t listed = 0;
    for (std::size_t i = 10; i < copied_slots.size(); ++i) list[listed++] = copied_slots[i];
    std::uint32_t free_slot = 0;
    while (before[free_slot].tag != 0) ++free_slot;
    list[listed++] = free_slot;
    list[listed++] = slots + 5;
    list[listed++] = 0x100000000ULL;
    munmap(lp, list_len);
    roce_harvest_ctx lctx{};
    lctx.listed = listed;
    LIBBPF_OPTS(bpf_test_run_opts, lopts, .ctx_in = &lctx, .ctx_size_in = sizeof(lctx));
    ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(big->progs.roce_clear_listed), &lopts), 0)
        << strerror(errno);
    EXPECT_EQ(lctx.start, slots);
    EXPECT_EQ(lctx.records, copied_slots.size() - 10);
    with_table(big, [&](const roce_flow_slot* t, std::uint32_t n) {
      std::uint32_t left = 0;
      for (std::uint32_t i = 0; i < n; ++i) left += t[i].tag != 0 ? 1 : 0;
      EXPECT_EQ(left, 10u);
      for (std::size_t i = 0; i < 10; ++i) EXPECT_NE(t[copied_slots[i]].tag, 0u) << "not listed: kept";
      for (std::size_t i = 10; i < copied_slots.size(); ++i) {
        EXPECT_EQ(t[copied_slots[i]].tag, 0u);
        EXPECT_EQ(t[copied_slots[i]].ready, 0u);
      }
    });
  }
  // roce_clear: one run empties the table (what the list left out).
  roce_harvest_ctx clear{};
  LIBBPF_OPTS(bpf_test_run_opts, copts, .ctx_in = &clear, .ctx_size_in = sizeof(clear));
  ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(big->progs.roce_clear), &copts), 0) << strerror(errno);
  EXPECT_EQ(clear.start, slots);
  EXPECT_EQ(clear.records, 10u);
  with_table(big, [](const roce_flow_slot* t, std::uint32_t n) {
    std::uint32_t left = 0;
    for (std::uint32_t i = 0; i < n; ++i) left += (t[i].tag != 0 || t[i].ready != 0) ? 1 : 0;
    EXPECT_EQ(left, 0u) << "slots left claimed after the harvest";
  });
  roce_flow::destroy(big);
}

// Runs roce_harvest over `table` until done; returns the slots of the copies (each copy checked against
// the table's slot) and adds up the runs' visited slots.
std::vector<std::uint32_t> harvest_slots(roce_flow* s, std::uint32_t table, std::uint32_t walk,
                                         std::uint64_t& visited, int& runs) {
  std::vector<std::uint32_t> got;
  const std::uint32_t slots = bpf_map__max_entries(s->maps.roce_flows_a);
  const std::size_t out_len = std::size_t{ROCE_HARVEST_OUT} * sizeof(roce_flow_slot);
  void* out = mmap(nullptr, out_len, PROT_READ, MAP_SHARED, bpf_map__fd(s->maps.roce_harvest_out), 0);
  EXPECT_NE(out, MAP_FAILED) << strerror(errno);
  if (out == MAP_FAILED) return got;
  roce_harvest_ctx ctx{};
  ctx.table = table;
  ctx.walk = walk;
  visited = 0;
  runs = 0;
  while (ctx.start < slots && runs < 100) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
    EXPECT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.roce_harvest), &opts), 0) << strerror(errno);
    ++runs;
    visited += ctx.visited;
    const auto* staged = static_cast<const roce_flow_slot*>(out);
    for (std::uint32_t i = 0; i < ctx.records; ++i) got.push_back(static_cast<std::uint32_t>(staged[i].slot));
  }
  munmap(out, out_len);
  return got;
}

// The occupancy bits: the packet path sets a slot's bit when it claims the slot, and roce_harvest's
// ROCE_WALK_OCCUPIED reads only those slots (the same copies as a walk of the whole table, across runs
// when the staging array fills up), and drops the bit of a slot that is free in the harvested table unless
// the other table holds that slot.
TEST_F(RoceFixture, OccupiedWalkReadsOnlyClaimedSlotsAndDropsStaleBits) {
  roce_flow* big = load(8192);  // 16,384 slots; 5,000 flows fill the 4,096-slot staging array
  ASSERT_NE(big, nullptr);
  const std::uint32_t slots = bpf_map__max_entries(big->maps.roce_flows_a);
  constexpr std::uint32_t kFlows = 5000;
  PacketSpec s = spec4(0x0A);
  for (std::uint32_t qp = 1; qp <= kFlows; ++qp) {
    s.dest_qp = qp;
    run(big, Prog::tc_in, frame_of(s));
  }
  std::uint64_t visited = 0;
  int runs = 0;
  const auto whole = harvest_slots(big, 0, ROCE_WALK_TABLE, visited, runs);
  EXPECT_EQ(visited, slots);
  auto occupied = harvest_slots(big, 0, ROCE_WALK_OCCUPIED, visited, runs);
  EXPECT_EQ(visited, kFlows) << "the occupied walk reads the flows' slots only";
  EXPECT_GE(runs, 2);  // resumed inside the bits after the staging array filled up
  ASSERT_EQ(whole.size(), kFlows);
  EXPECT_EQ(occupied, whole) << "the same copies in the same (slot) order";

  const auto bit_set = [&](std::uint32_t slot) {
    std::uint32_t word = slot / 64;
    std::uint64_t bits = 0;
    EXPECT_EQ(bpf_map_lookup_elem(bpf_map__fd(big->maps.roce_occupied), &word, &bits), 0);
    return (bits >> (slot % 64) & 1u) != 0;
  };
  for (const std::uint32_t slot : whole) ASSERT_TRUE(bit_set(slot)) << slot;
  // Free 40 slots of table a (as a commit does) while table b holds one of those slots.
  const std::uint32_t held_by_b = whole[7];
  with_table(big, [&](roce_flow_slot* t, std::uint32_t) {
    for (std::size_t i = 0; i < 40; ++i) t[whole[i]].tag = t[whole[i]].ready = 0;
  });
  const std::size_t len_b = std::size_t{slots} * sizeof(roce_flow_slot);
  void* pb = mmap(nullptr, len_b, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(big->maps.roce_flows_b), 0);
  ASSERT_NE(pb, MAP_FAILED) << strerror(errno);
  static_cast<roce_flow_slot*>(pb)[held_by_b].tag = 5;
  occupied = harvest_slots(big, 0, ROCE_WALK_OCCUPIED, visited, runs);
  EXPECT_EQ(visited, kFlows);  // the 40 stale bits are read once more ...
  ASSERT_EQ(occupied.size(), kFlows - 40);
  EXPECT_TRUE(std::equal(occupied.begin(), occupied.end(), whole.begin() + 40));
  for (std::size_t i = 0; i < 40; ++i)
    EXPECT_EQ(bit_set(whole[i]), whole[i] == held_by_b) << "... and dropped unless table b holds the slot";
  occupied = harvest_slots(big, 0, ROCE_WALK_OCCUPIED, visited, runs);
  EXPECT_EQ(visited, kFlows - 40 + 1);
  EXPECT_EQ(occupied.size(), kFlows - 40);
  // Harvesting table b reads its one held slot and the flows' bits (free in b, but a holds them: kept).
  occupied = harvest_slots(big, 1, ROCE_WALK_OCCUPIED, visited, runs);
  EXPECT_EQ(visited, kFlows - 40 + 1);
  EXPECT_EQ(occupied, std::vector<std::uint32_t>{held_by_b});
  for (std::size_t i = 40; i < whole.size(); ++i) ASSERT_TRUE(bit_set(whole[i])) << whole[i];
  munmap(pb, len_b);
  roce_flow::destroy(big);
}

int count_event(void* ctx, void* data, size_t size) {
  auto* events = static_cast<std::vector<roce_overflow_event>*>(ctx);
  if (size >= sizeof(roce_overflow_event)) events->push_back(*static_cast<roce_overflow_event*>(data));
  return 0;
}

TEST_F(RoceFixture, TableFullGoesToRingBufferThenDropCounter) {
  roce_flow* small = load(1);
  ASSERT_NE(small, nullptr);
  const int flows = 40;
  PacketSpec s = spec4(0x04);
  for (int i = 0; i < flows; ++i) {
    s.dest_qp = static_cast<std::uint32_t>(100 + i);
    run(small, Prog::tc_in, frame_of(s));
  }
  std::vector<roce_overflow_event> events;
  ring_buffer* rb = ring_buffer__new(bpf_map__fd(small->maps.roce_overflow), count_event, &events, nullptr);
  ASSERT_NE(rb, nullptr);
  ring_buffer__consume(rb);
  ring_buffer__free(rb);
  const Result r = read(small);
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0].first.dest_qp, 100u);
  const std::uint64_t ringed = events.size();
  EXPECT_GT(ringed, 0u);
  EXPECT_GT(r.counters[ROCE_CNT_RINGBUF_DROP], 0u);
  EXPECT_EQ(1 + ringed + r.counters[ROCE_CNT_RINGBUF_DROP], static_cast<std::uint64_t>(flows));
  expect_counters(r, flows,
                  {{ROCE_CNT_ROCE, 1 + ringed},
                   {ROCE_CNT_TABLE_FULL, flows - 1},
                   {ROCE_CNT_RINGBUF_DROP, flows - 1 - ringed}});
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].key.dest_qp, 101u + i);
    EXPECT_EQ(events[i].stats.packets, 1u);
    EXPECT_EQ(events[i].stats.op[ROCE_OP_SEND], 1u);
    EXPECT_EQ(events[i].stats.bytes, hsns::roce_gen::ip_length(s));
  }
  roce_flow::destroy(small);
}

}  // namespace
