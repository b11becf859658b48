// End-to-end tests of the flow probe over veth pairs in namespaces the test creates: hsns-roce-gen sends
// a known mix (UDP over IPv4 and IPv6, raw VLAN / QinQ / ERSPAN II / ERSPAN III frames), hsns-flowprobe
// (tc ingress, tc with ERSPAN decapsulation, XDP with ERSPAN decapsulation) writes flow records, and a
// tshark capture of the same interfaces is an independent count. A second test kills the probe with
// SIGKILL again and again during one generator run -- inside the harvest window (the test-only hook
// HSNS_TEST_CRASH_AFTER_DRAIN: half-written batch, written but not committed, half-committed) and at
// random moments -- restarting it each time, and checks that the per-flow totals are still exact.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "lab.h"
#include "support/temp_dir.h"

namespace {

using hsns::test::add_flow;
using hsns::test::flow_id;
using hsns::test::Lab;
using hsns::test::read_sink_totals;
using hsns::test::sh;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kBuild = HSNS_TEST_BUILD_DIR;
const std::string kGen = kBuild + "/lab/roce_gen/hsns-roce-gen";
const std::string kProbe = kBuild + "/daemon/flows/hsns-flowprobe";

struct Feed {
  std::string ifname_tx;  // in namespace A
  std::string ifname_rx;  // in namespace B, where the probe sees it
  std::vector<std::string> args;
};

class RoceE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    dir_ = tmp_.string();
    pin_dir_ = "/sys/fs/bpf/hsns-test-roce-" + std::to_string(getpid());
    a_ = lab_.ns("a");
    b_ = lab_.ns("b");
    ASSERT_TRUE(lab_.veth(a_, "va", b_, "vb", {"198.18.40.1/24", "2001:db8:40::1/64"},
                          {"198.18.40.2/24", "2001:db8:40::2/64"}));
    ASSERT_TRUE(lab_.veth(a_, "ra", b_, "rb"));
    ASSERT_TRUE(lab_.veth(a_, "xa", b_, "xb"));
    // Resolve neighbours first, so no datagram waits (or is dropped) in an unresolved neighbour queue.
    ASSERT_TRUE(hsns::test::wait_for(
        [&] {
          return sh(Lab::in(a_, "ping -c1 -W1 198.18.40.2")).status == 0 &&
                 sh(Lab::in(a_, "ping -6 -c1 -W1 2001:db8:40::2")).status == 0;
        },
        10s));
  }

  void TearDown() override {
    probe_.kill9();
    if (!pin_dir_.empty()) sh("rm -rf " + pin_dir_);
  }

  void write_config(const std::string& interfaces, int interval_ms = 200) {
    std::ofstream(dir_ + "/hsnsd.yaml")
        << "flow_probe:\n  interval_ms: " << interval_ms << "\n  table_size: 4096\n  pin_dir: " << pin_dir_
        << "\n  sink: " << dir_ << "/flows.jsonl\n  interfaces:\n"
        << interfaces;
  }

  // crash_hook: HSNS_TEST_CRASH_AFTER_DRAIN for this run of the probe ("" = none).
  void start_probe(const std::string& crash_hook = "") {
    const std::string ready = dir_ + "/ready";
    std::remove(ready.c_str());
    ++starts_;
    std::map<std::string, std::string> env;
    if (!crash_hook.empty()) env["HSNS_TEST_CRASH_AFTER_DRAIN"] = crash_hook;
    probe_ = hsns::test::spawn(Lab::in(b_, std::vector<std::string>{kProbe, "--config", dir_ + "/hsnsd.yaml",
                                                                    "--ready-file", ready}),
                               dir_ + "/probe.out", probe_err(), env);
    ASSERT_TRUE(hsns::test::wait_for([&] { return !hsns::test::read_file(ready).empty(); }, 30s))
        << hsns::test::read_file(probe_err());
  }
  std::string probe_err() const { return dir_ + "/probe" + std::to_string(starts_) + ".err"; }

  void stop_probe(bool purge) {
    probe_.signal(SIGTERM);
    EXPECT_EQ(probe_.wait(20s), 0) << hsns::test::read_file(probe_err());
    if (purge) sh("rm -rf " + pin_dir_);
  }

  // Runs one generator feed in namespace A; records its per-flow counts under the receiving interface.
  json run_feed(const Feed& f) {
    std::string cmd = kGen;
    for (const auto& a : f.args) cmd += " " + a;
    const auto r = sh(Lab::in(a_, cmd));
    EXPECT_EQ(r.status, 0) << r.out;
    json j = json::parse(r.out.substr(0, r.out.find('\n')));
    EXPECT_TRUE(j.at("complete").get<bool>());
    for (const auto& fl : j.at("flows")) {
      add_flow(expected_[flow_id(f.ifname_rx, fl)], fl);
    }
    sent_ += j.at("sent").get<std::uint64_t>();
    return j;
  }

  void expect_sink_matches_generator(json* counters) {
    const auto got = read_sink_totals(dir_ + "/flows.jsonl", counters);
    EXPECT_EQ(got.size(), expected_.size());
    for (const auto& [id, want] : expected_) {
      SCOPED_TRACE(id);
      const auto it = got.find(id);
      ASSERT_NE(it, got.end()) << "flow missing from the sink";
      for (const auto& [k, v] : want) EXPECT_EQ(it->second.at(k), v) << k;
    }
    for (const auto& [id, t] : got) EXPECT_TRUE(expected_.count(id)) << "unexpected flow " << id;
  }

  hsns::testing::TempDir tmp_{"hsns-roce-e2e"};
  Lab lab_{"hrf"};
  std::string a_;
  std::string b_;
  std::string dir_;
  std::string pin_dir_;
  hsns::test::Proc probe_;
  int starts_ = 0;
  std::map<std::string, hsns::test::FlowTotals> expected_;
  std::uint64_t sent_ = 0;
};

TEST_F(RoceE2E, GeneratorProbeAndTsharkAgree) {
  if (sh("tshark -v").status != 0) GTEST_SKIP() << "tshark is not installed";
  write_config(
      "    - {name: vb, attach: tc, direction: both}\n"
      "    - {name: rb, attach: tc, direction: ingress, mirror: true}\n"
      "    - {name: xb, attach: xdp, mirror: true}\n");
  // Independent capture of the same interfaces.
  const std::string cap = dir_ + "/cap.pcapng";
  hsns::test::Proc tshark =
      hsns::test::spawn(Lab::in(b_, std::vector<std::string>{"tshark", "-n", "-B", "64", "-i", "vb", "-i",
                                                             "rb", "-i", "xb", "-w", cap}),
                        dir_ + "/tshark.out", dir_ + "/tshark.err");
  ASSERT_TRUE(hsns::test::wait_for(
      [&] {
        const auto e = hsns::test::read_file(dir_ + "/tshark.err");
        return e.find("Capturing on") != std::string::npos;
      },
      20s));
  start_probe();

  const std::vector<Feed> feeds = {
      {"va",
       "vb",
       {"--mode udp --src 198.18.40.1 --dst 198.18.40.2 --seed 11 --flows 8 --packets 60 --rate 5000"}},
      {"va",
       "vb",
       {"--mode udp --src 2001:db8:40::1 --dst 2001:db8:40::2 --seed 12 --flows 4 --packets 60 --rate "
        "20000"}},
      {"ra",
       "rb",
       {"--mode raw --iface ra --encap vlan --src 198.18.41.1 --dst 198.18.41.2 --seed 13 --flows 2 "
        "--packets 60 --rate 5000"}},
      {"ra",
       "rb",
       {"--mode raw --iface ra --encap qinq --src 2001:db8:41::1 --dst 2001:db8:41::2 --seed 14 --flows 2 "
        "--packets 60 --rate 5000"}},
      {"ra",
       "rb",
       {"--mode raw --iface ra --encap erspan3 --src 2001:db8:42::1 --dst 2001:db8:42::2 --seed 15 --flows 2 "
        "--packets 60 --rate 5000"}},
      {"xa",
       "xb",
       {"--mode raw --iface xa --encap erspan2 --src 198.18.42.1 --dst 198.18.42.2 --seed 16 --flows 2 "
        "--packets 60 --rate 5000"}},
  };
  for (const auto& f : feeds) run_feed(f);
  ASSERT_GE(expected_.size(), 16u);

  // Wait until the capture holds every RoCE frame, then stop it and the probe.
  // (ICMP errors quoting a RoCE datagram are decoded as infiniband too: not RoCE traffic.)
  const std::string filter = "'infiniband && !icmp && !icmpv6'";
  const std::string count_cmd =
      "tshark -n -r " + cap + " -Y " + filter + " -T fields -e frame.number 2>/dev/null | wc -l";
  const bool captured =
      hsns::test::wait_for([&] { return std::stoull("0" + sh(count_cmd, false).out) >= sent_; }, 30s);
  tshark.signal(SIGINT);
  tshark.wait(20s);
  stop_probe(true);
  EXPECT_TRUE(captured) << "tshark saw " << sh(count_cmd).out << " of " << sent_;

  json counters;
  expect_sink_matches_generator(&counters);
  EXPECT_EQ(counters.at("roce").get<std::uint64_t>(), sent_);
  for (const char* bad : {"table_full", "ringbuf_drop", "trunc_l2", "trunc_l3", "bad_ip", "trunc_udp",
                          "bad_udp_len", "trunc_bth", "trunc_aeth", "gre_not_erspan", "trunc_erspan"})
    EXPECT_EQ(counters.at(bad).get<std::uint64_t>(), 0u) << bad;
  EXPECT_EQ(counters.at("erspan").get<std::uint64_t>(), 4u * 60u);

  // tshark: per (interface, inner source, UDP source port, destination QP): packets, CNPs, CE marks.
  const auto fields =
      sh("tshark -n -r " + cap + " -Y " + filter +
             " -T fields -E occurrence=l -E separator=/t -e frame.interface_name "
             "-e ip.src -e ipv6.src -e ip.dst -e ipv6.dst -e udp.srcport -e infiniband.bth.destqp "
             "-e infiniband.bth.opcode -e ip.dsfield.ecn -e ipv6.tclass.ecn 2>/dev/null",
         false);
  std::map<std::string, std::array<std::uint64_t, 3>> ts;
  std::istringstream in(fields.out);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, '\t')) c.push_back(cell);
    if (c.size() < 8) continue;
    c.resize(10);
    // The innermost header wins: an IPv6 header is always the inner one here (ERSPAN outers are IPv4).
    const std::string src = c[2].empty() ? c[1] : c[2];
    const std::string dst = c[4].empty() ? c[3] : c[4];
    const std::string ecn = c[9].empty() ? c[8] : c[9];
    std::string id = c[0];
    id.append("|").append(src).append("|").append(dst).append("|").append(c[5]).append("|");
    id.append(std::to_string(std::stoul(c[6], nullptr, 0)));
    auto& t = ts[id];
    ++t[0];
    if (std::stoul(c[7], nullptr, 0) == 0x81) ++t[1];
    if (!ecn.empty() && std::stoul(ecn, nullptr, 0) == 3) ++t[2];
  }
  EXPECT_EQ(ts.size(), expected_.size());
  for (const auto& [id, want] : expected_) {
    SCOPED_TRACE("tshark " + id);
    const auto it = ts.find(id);
    ASSERT_NE(it, ts.end());
    EXPECT_EQ(it->second[0], want.at("packets"));
    EXPECT_EQ(it->second[1], want.at("cnp"));
    EXPECT_EQ(it->second[2], want.at("ce"));
  }
  // Detach left nothing behind.
  EXPECT_EQ(sh(Lab::in(b_, "tc qdisc show dev vb")).out.find("clsact"), std::string::npos);
  EXPECT_EQ(sh(Lab::in(b_, "ip link show dev xb")).out.find("xdp"), std::string::npos);
}

TEST_F(RoceE2E, KillNineAtAnyMomentKeepsTotalsExact) {
  write_config("    - {name: vb, attach: tc, direction: ingress}\n");
  // Traffic in the background for as long as the restarts take (up to 16 flows x 20000 packets at 2000
  // packets/s = 160 s, however loaded the machine); SIGTERM ends it after the last kill and its summary
  // counts what was sent.
  const std::string gen_out = dir_ + "/gen.json";
  hsns::test::Proc gen;
  start_probe();
  gen = hsns::test::spawn(
      Lab::in(a_, std::vector<std::string>{kGen, "--mode", "udp", "--src", "198.18.40.1", "--dst",
                                           "198.18.40.2", "--seed", "21", "--flows", "16", "--packets",
                                           "20000", "--rate", "2000"}),
      gen_out, dir_ + "/gen.err");
  ASSERT_TRUE(hsns::test::wait_for(
      [&] {
        return hsns::test::read_file(dir_ + "/flows.jsonl").find("\"type\":\"flow\"") != std::string::npos;
      },
      10s));
  probe_.kill9();
  // Inside the harvest window: the probe kills itself (SIGKILL) half-way through writing a batch, after
  // writing it but before its commit, and after advancing the PSN state but before releasing the table.
  // Each time the orphaned tc filter keeps counting into the pinned maps and the next run takes over.
  for (const std::string hook : {"partial-write", "before-commit", "mid-commit"}) {
    SCOPED_TRACE(hook);
    start_probe(hook);
    if (hook == "before-commit") {
      EXPECT_NE(hsns::test::read_file(probe_err()).find("removed a batch cut short"), std::string::npos);
    }
    EXPECT_EQ(probe_.wait_signal(20s), SIGKILL) << "the crash hook did not fire";
    probe_.kill9();
    const auto torn = hsns::test::read_file(dir_ + "/flows.jsonl");
    if (hook == "partial-write") {
      EXPECT_NE(torn.back(), '\n') << "no torn batch left";
    }
  }
  // At random moments (the harvest interval is 200 ms).
  const auto seed = static_cast<unsigned>(std::random_device{}());
  SCOPED_TRACE("random kill delays, seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 3; ++i) {
    start_probe();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 700)(rng)));
    probe_.kill9();
  }
  // Last, between the flip of the tables and the record of the epoch: the next run first harvests the
  // table left behind while counts keep landing in the active one. That run harvests only when it stops
  // (a long interval), so its last harvest must go on until it has caught up.
  start_probe("after-flip");
  EXPECT_EQ(probe_.wait_signal(20s), SIGKILL) << "the after-flip crash hook did not fire";
  probe_.kill9();
  EXPECT_TRUE(gen.alive()) << "the generator finished before the last kill: not mid-run";
  gen.signal(SIGTERM);
  write_config("    - {name: vb, attach: tc, direction: ingress}\n", 600000);
  start_probe();
  ASSERT_EQ(gen.wait(60s), 0) << hsns::test::read_file(dir_ + "/gen.err");
  stop_probe(true);
  const json j = json::parse(hsns::test::read_file(gen_out));
  for (const auto& fl : j.at("flows")) {
    add_flow(expected_[flow_id("vb", fl)], fl);
  }
  ASSERT_EQ(expected_.size(), 16u);
  json counters;
  expect_sink_matches_generator(&counters);
  EXPECT_EQ(counters.at("roce").get<std::uint64_t>(), j.at("sent").get<std::uint64_t>());
  EXPECT_EQ(sh(Lab::in(b_, "tc qdisc show dev vb")).out.find("clsact"), std::string::npos);
}

}  // namespace
