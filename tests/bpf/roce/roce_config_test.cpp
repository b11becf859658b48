// The flow probe's pure parts: the `flow_probe:` configuration section, flow-record JSON round trip, and
// the generator's determinism and exact tallies (no root needed).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flow_probe_config.h"
#include "flow_record.h"
#include "generator.h"

namespace {

using hsns::daemon::AttachMode;
using hsns::daemon::parse_flow_probe_config;

TEST(FlowProbeConfig, FullSection) {
  const auto c = parse_flow_probe_config(R"(
flow_probe:
  interval_ms: 500
  table_size: 131072
  ring_buffer_bytes: 1048576
  pin_dir: /sys/fs/bpf/hsns/x
  sink: /tmp/f.jsonl
  interfaces:
    - {name: rxe0, attach: tc, direction: egress}
    - {name: mirror0, attach: xdp, mirror: true}
)");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->interval.count(), 500);
  EXPECT_EQ(c->table_size, 131072u);
  EXPECT_EQ(c->ring_buffer_bytes, 1048576u);
  EXPECT_EQ(c->pin_dir, "/sys/fs/bpf/hsns/x");
  ASSERT_EQ(c->interfaces.size(), 2u);
  EXPECT_EQ(c->interfaces[0].attach, AttachMode::tc);
  EXPECT_FALSE(c->interfaces[0].ingress);
  EXPECT_TRUE(c->interfaces[0].egress);
  EXPECT_EQ(c->interfaces[1].attach, AttachMode::xdp);
  EXPECT_TRUE(c->interfaces[1].ingress);
  EXPECT_FALSE(c->interfaces[1].egress);
  EXPECT_TRUE(c->interfaces[1].mirror);
}

TEST(FlowProbeConfig, DefaultsFromBareSection) {
  const auto c = parse_flow_probe_config("interfaces: []\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->interval.count(), 1000);
  EXPECT_EQ(c->table_size, 65536u);
}

TEST(FlowProbeConfig, ErrorsNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"flow_probe: {interval_ms: 5}", "flow_probe.interval_ms"},
      {"flow_probe: {interval_ms: fast}", "flow_probe.interval_ms"},
      {"flow_probe: {table_size: 10}", "flow_probe.table_size"},
      {"flow_probe: {ring_buffer_bytes: 5000}", "flow_probe.ring_buffer_bytes"},
      {"flow_probe: {pin_dir: /tmp/x}", "flow_probe.pin_dir"},
      {"flow_probe: {colour: red}", "flow_probe.colour"},
      {"flow_probe: {interfaces: [{name: a, attach: dpdk}]}", "flow_probe.interfaces[0].attach"},
      {"flow_probe: {interfaces: [{name: a, direction: sideways}]}", "flow_probe.interfaces[0].direction"},
      {"flow_probe: {interfaces: [{name: a, attach: xdp, direction: egress}]}",
       "flow_probe.interfaces[0].direction"},
      {"flow_probe: {interfaces: [{name: a}, {name: a}]}", "flow_probe.interfaces[1].name"},
      {"flow_probe: {interfaces: [{attach: tc}]}", "flow_probe.interfaces[0].name"},
      {"flow_probe: {interfaces: [{name: a, mirror: maybe}]}", "flow_probe.interfaces[0].mirror"},
      {"flow_probe: [1, 2]", "flow_probe"},
      {"flow_probe: {a: [}", "flow_probe"},
  };
  for (const auto& [yaml, key] : cases) {
    const auto c = parse_flow_probe_config(yaml);
    ASSERT_FALSE(c) << yaml;
    EXPECT_EQ(c.error().rfind(key, 0), 0u) << yaml << " -> " << c.error();
  }
}

TEST(FlowRecordJson, RoundTrip) {
  hsns::daemon::FlowRecord r;
  r.key.ifindex = 7;
  r.key.direction = ROCE_DIR_EGRESS;
  r.key.family = 6;
  r.key.src[0] = 0x20;
  r.key.src[1] = 0x01;
  r.key.src[2] = 0x0d;
  r.key.src[3] = 0xb8;
  r.key.src[15] = 1;
  r.key.dst[0] = 0x20;
  r.key.dst[1] = 0x01;
  r.key.dst[2] = 0x0d;
  r.key.dst[3] = 0xb8;
  r.key.dst[15] = 2;
  r.key.sport = 0xC001;
  r.key.dest_qp = 0x123456;
  r.stats.packets = 10;
  r.stats.bytes = 1000;
  r.stats.op[ROCE_OP_ACK] = 3;
  r.stats.nak[ROCE_NAK_RNR] = 1;
  r.stats.ce = 2;
  r.stats.cnp = 1;
  r.stats.psn_regressions = 4;
  r.stats.has_psn = 1;
  r.stats.max_psn = 99;
  r.ifname = "rxe0";
  const auto j = hsns::daemon::to_json(r, "host1");
  EXPECT_EQ(j.at("src"), "2001:db8::1");
  EXPECT_EQ(j.at("direction"), "egress");
  const auto back = hsns::daemon::flow_record_from_json(j);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(0, std::memcmp(&back->key, &r.key, sizeof(r.key)));
  EXPECT_EQ(back->stats.packets, 10u);
  EXPECT_EQ(back->stats.nak[ROCE_NAK_RNR], 1u);
  EXPECT_EQ(back->stats.max_psn, 99u);
  EXPECT_FALSE(hsns::daemon::flow_record_from_json(nlohmann::json::parse(R"({"type":"counters"})")));
  EXPECT_FALSE(
      hsns::daemon::flow_record_from_json(nlohmann::json::parse(R"({"type":"flow","ifindex":"x"})")));
}

TEST(FlowRecordJson, TheDirectWriterIsNlohmannsDumpOfTheContractDocument) {
  hsns::proto::FlowRecord f;
  f.host = "node \"q\" \\ \t\x01";  // every kind of escape
  f.ifindex = 4294967295u;
  f.ifname = "ens1f0np0";
  f.direction = hsns::proto::FlowDirection::xdp;
  f.family = 6;
  f.src = "2001:db8::1";
  f.dst = "fe80::1";
  f.sport = 65535;
  f.dest_qp = 0xffffff;
  f.packets = UINT64_MAX;
  f.bytes = 0;
  f.first_ns = -5;
  f.last_ns = 1'764'640'000'000'000'000;
  for (std::size_t i = 0; i < f.op.size(); ++i) f.op[i] = i * 1000;
  for (std::size_t i = 0; i < f.nak.size(); ++i) f.nak[i] = i;
  f.ect = 1;
  f.ce = 2;
  f.cnp = 3;
  f.psn_regressions = 4;
  for (int shape = 0; shape < 4; ++shape) {
    f.psn.reset();
    f.epoch.reset();
    if ((shape & 1) != 0) f.psn = hsns::proto::FlowPsn{1, 2, 3};
    if ((shape & 2) != 0) f.epoch = 77;
    std::string direct;
    hsns::daemon::append_flow_record_json(direct, f);
    EXPECT_EQ(direct, hsns::proto::to_json(f).dump()) << shape;
  }
}

// The harvester writes a record's addresses itself (no inet_ntop and no std::string per address): the text
// must be glibc's inet_ntop's, byte for byte, for every shape of address (zero runs at every place and of
// every length, ties, the embedded-IPv4 forms) and for random ones.
TEST(FlowRecordJson, AddressesAreWrittenAsInetNtopWritesThem) {
  std::vector<std::array<std::uint8_t, 16>> cases;
  // Every pattern of zero and non-zero 16-bit words, with small and large non-zero values.
  for (unsigned mask = 0; mask < 256; ++mask)
    for (const unsigned value : {0x1u, 0xffffu, 0xabcu, 0x10u}) {
      std::array<std::uint8_t, 16> a{};
      for (std::size_t w = 0; w < 8; ++w)
        if ((mask >> w) & 1u) {
          const unsigned v = value + static_cast<unsigned>(w);
          a[2 * w] = static_cast<std::uint8_t>(v >> 8);
          a[2 * w + 1] = static_cast<std::uint8_t>(v);
        }
      cases.push_back(a);
    }
  // The embedded-IPv4 forms and their neighbours.
  for (const std::uint8_t w5 : {0x00, 0xff})
    for (const std::uint8_t last : {0x00, 0x01, 0x09, 0x0a, 0x63, 0x64, 0xff}) {
      std::array<std::uint8_t, 16> a{};
      a[10] = w5;
      a[11] = w5;
      a[12] = last;
      a[15] = last;
      cases.push_back(a);
      a[13] = 1;
      cases.push_back(a);
    }
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::array<std::uint8_t, 16> a{};
    for (auto& b : a) b = static_cast<std::uint8_t>(rng());
    // Zero some words so that runs of zeros are common.
    for (std::size_t w = 0; w < 8; ++w)
      if (rng() % 3 == 0) a[2 * w] = a[2 * w + 1] = 0;
    cases.push_back(a);
  }
  for (const auto& a : cases) {
    char want[INET6_ADDRSTRLEN] = {};
    ASSERT_NE(inet_ntop(AF_INET6, a.data(), want, sizeof want), nullptr);
    char got[hsns::daemon::kFlowAddressMax];
    const std::size_t n = hsns::daemon::format_flow_address(6, a.data(), got);
    ASSERT_EQ(std::string(got, n), std::string(want));
    ASSERT_NE(inet_ntop(AF_INET, a.data(), want, sizeof want), nullptr);
    const std::size_t n4 = hsns::daemon::format_flow_address(4, a.data(), got);
    ASSERT_EQ(std::string(got, n4), std::string(want));
  }
  // A record's addresses through fill_contract.
  hsns::daemon::FlowRecord r;
  r.key.family = 4;
  const std::uint8_t v4[4] = {198, 18, 0, 10};
  std::memcpy(r.key.src, v4, 4);
  std::memcpy(r.key.dst, v4, 4);
  r.key.dst[3] = 255;
  const auto c = hsns::daemon::to_contract(r, "h");
  EXPECT_EQ(c.src, "198.18.0.10");
  EXPECT_EQ(c.dst, "198.18.0.255");
}

TEST(Generator, DeterministicAndTalliesEveryKind) {
  hsns::roce_gen::MixConfig c;
  c.seed = 7;
  c.src = "198.18.0.1";
  c.dst = "198.18.0.2";
  c.flows = 16;
  c.packets_per_flow = 400;
  ASSERT_EQ(hsns::roce_gen::validate(c), "");
  const auto a = hsns::roce_gen::plan(c);
  const auto b = hsns::roce_gen::plan(c);
  ASSERT_EQ(a.size(), 6400u);
  EXPECT_EQ(hsns::roce_gen::to_json(hsns::roce_gen::tally(a)),
            hsns::roce_gen::to_json(hsns::roce_gen::tally(b)));
  const auto t = hsns::roce_gen::tally(a);
  EXPECT_EQ(t.size(), 16u);
  hsns::roce_gen::FlowCounts sum;
  for (const auto& [k, f] : t) {
    sum.packets += f.packets;
    for (std::size_t i = 0; i < 8; ++i) sum.op[i] += f.op[i];
    for (std::size_t i = 0; i < 6; ++i) sum.nak[i] += f.nak[i];
    sum.ce += f.ce;
    sum.ect += f.ect;
    sum.cnp += f.cnp;
    sum.psn_regressions += f.psn_regressions;
  }
  EXPECT_EQ(sum.packets, 6400u);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_GT(sum.op[i], 0u) << "class " << i;  // all but "other"
  for (std::size_t i = 0; i < 5; ++i) EXPECT_GT(sum.nak[i], 0u) << "nak " << i;
  EXPECT_GT(sum.ce, 0u);
  EXPECT_GT(sum.ect, 0u);
  EXPECT_GT(sum.psn_regressions, 0u);
  c.dst = "2001:db8::1";
  EXPECT_NE(hsns::roce_gen::validate(c), "");
}

}  // namespace
