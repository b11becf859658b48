// ns per packet of the isolation program (bpf/isolation.bpf.c) through bpf_prog_test_run_opts with repeat,
// each figure beside a same-run baseline: an empty tc program (r0 = TC_ACT_OK; exit) on the same frame,
// alternated with the measured program for --rounds rounds, best of each (the machine is shared).
// 1. a port with --few IPv4 and as many IPv6 prefixes (default 2: a port's own subnets; the inline policy of
//    hsns_iso_fast): allowed, dropped and non-IP frames, plain and 802.1Q; 2. a full inline policy (8 + 8),
//    destination in the last prefix; 3. --prefixes of each (default 64: both families in the LPM tries);
// 4. beside the RoCEv2 flow probe (bpf/roce_flow.bpf.c, measured as bench/roce_flow does) on the same
//    RoCEv2 frames, and the ratio of the two added costs; 5. the time of a prefix change (policy swap).
// Needs root. Usage: hsns_bench_bpf_isolation [--repeat N] [--rounds N] [--few N] [--prefixes N]
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../tests/bpf/isolation/packets.h"
#include "isolation/isolation_maps.h"
#include "packet.h"
#include "roce_flow.h"  // the structs the skeleton names
#include "roce_flow.skel.h"
#include "roce_flow_skeleton.h"

namespace {

using hsns::test::Frame;

struct Settings {
  unsigned repeat = 1000000;
  int rounds = 7;
  int few = 2;
  int prefixes = 64;
};

int load_empty_tc_program() {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, TC_ACT_OK},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "hsns_empty_tc", "GPL", insns, 2, nullptr);
}

// The kernel's mean ns per repetition (opts.duration) of one test run; exits on an error or a verdict
// other than `expected` (a negative `expected` accepts any).
double run_once(int prog_fd, const Frame& frame, unsigned repeat, int expected) {
  Frame out(frame.size() + 256);
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out.data(),
              .data_size_in = static_cast<__u32>(frame.size()),
              .data_size_out = static_cast<__u32>(out.size()), .repeat = static_cast<int>(repeat));
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) {
    std::fprintf(stderr, "bpf_prog_test_run_opts: %s\n", std::strerror(errno));
    std::exit(1);
  }
  if (expected >= 0 && static_cast<int>(opts.retval) != expected) {
    std::fprintf(stderr, "unexpected verdict %u (wanted %d)\n", opts.retval, expected);
    std::exit(1);
  }
  return static_cast<double>(opts.duration);
}

struct Paired {
  double empty;
  double prog;
  double added() const { return prog - empty; }
};

// Alternates the empty program and the measured one, best of each over the rounds.
Paired paired(int empty_fd, int prog_fd, const Frame& frame, const Settings& s, int expected) {
  Paired p{1e18, 1e18};
  for (int i = 0; i < s.rounds; ++i) {
    p.empty = std::min(p.empty, run_once(empty_fd, frame, s.repeat, TC_ACT_OK));
    p.prog = std::min(p.prog, run_once(prog_fd, frame, s.repeat, expected));
  }
  return p;
}

// n IPv4 prefixes 198.18.<i>.0/24 and n IPv6 prefixes 2001:db8:<i>::/64 (i from 1).
std::vector<hsns::IpPrefix> port_prefixes(int n) {
  std::vector<hsns::IpPrefix> out;
  for (int i = 1; i <= n; ++i) {
    char v4[64];
    char v6[64];
    std::snprintf(v4, sizeof(v4), "198.18.%d.0/24", i % 256);
    std::snprintf(v6, sizeof(v6), "2001:db8:%x::/64", i);
    out.push_back(*hsns::IpPrefix::parse(v4));
    out.push_back(*hsns::IpPrefix::parse(v6));
  }
  return out;
}

struct Case {
  const char* name;
  Frame frame;
  int verdict;
};

// The port's policy: n prefixes per family on loopback (ifindex 1, the netdev test_run uses). Returns
// which path the program takes for it.
const char* enforce(hsns::daemon::IsolationMaps& maps, int n) {
  if (auto r = maps.set_prefixes(1, port_prefixes(n)); !r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    std::exit(1);
  }
  if (auto r = maps.set_port(1, hsns_iso_port{}); !r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    std::exit(1);
  }
  const auto pol = maps.fast_policy(1);
  return pol && pol->flags == 0 ? "inline policy" : "LPM tries";
}

void table(int empty, int iso, const std::vector<Case>& cases, const Settings& s) {
  std::printf("%-26s %8s %10s %8s\n", "frame", "empty", "isolation", "added");
  for (const Case& c : cases) {
    const Paired p = paired(empty, iso, c.frame, s, c.verdict);
    std::printf("%-26s %8.1f %10.1f %+8.1f\n", c.name, p.empty, p.prog, p.added());
  }
}

hsns::roce_gen::PacketSpec roce_send(int family) {
  hsns::roce_gen::PacketSpec s;
  s.family = family;
  hsns::roce_gen::parse_address(family == 4 ? "198.18.1.1" : "2001:db8:1::1", s.src);
  hsns::roce_gen::parse_address(family == 4 ? "198.18.1.2" : "2001:db8:1::2", s.dst);
  s.sport = 0xC123;
  s.opcode = 0x04;  // SEND only
  s.dest_qp = 0x11;
  s.psn = 1;
  s.payload = 1024;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--repeat") s.repeat = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (a == "--rounds") s.rounds = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--few") s.few = std::atoi(argv[i + 1]);
    if (a == "--prefixes") s.prefixes = std::atoi(argv[i + 1]);
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "needs root\n");
    return 1;
  }
  auto maps = hsns::daemon::IsolationMaps::load("");
  if (!maps) {
    std::fprintf(stderr, "%s\n", maps.error().c_str());
    return 1;
  }
  const int empty = load_empty_tc_program();
  if (empty < 0) {
    std::fprintf(stderr, "loading the empty program: %s\n", std::strerror(errno));
    return 1;
  }
  const int iso = (*maps)->program_fd();
  std::printf(
      "isolation tc program: ns/packet via bpf_prog_test_run_opts, repeat %u, best of %d rounds each\n"
      "beside the empty tc program on the same frame\n",
      s.repeat, s.rounds);

  const std::vector<Case> cases = {
      {"ipv4 allowed", hsns::test::ipv4_udp("198.18.1.2"), TC_ACT_OK},
      {"ipv6 allowed", hsns::test::ipv6_udp("2001:db8:1::2"), TC_ACT_OK},
      {"802.1Q ipv4 allowed", hsns::test::ipv4_udp("198.18.1.2", {0x8100}), TC_ACT_OK},
      {"802.1Q ipv6 allowed", hsns::test::ipv6_udp("2001:db8:1::2", {0x8100}), TC_ACT_OK},
      {"ipv4 dropped", hsns::test::ipv4_udp("203.0.113.1"), TC_ACT_SHOT},
      {"ipv6 dropped", hsns::test::ipv6_udp("2001:db9::1"), TC_ACT_SHOT},
      {"ipv6 link-local", hsns::test::ipv6_udp("ff02::1:ff00:2"), TC_ACT_OK},
      {"arp (not IP)", hsns::test::arp(), TC_ACT_OK},
  };
  std::printf("\n== isolation, port with %d IPv4 + %d IPv6 prefixes (%s) ==\n", s.few, s.few,
              enforce(**maps, s.few));
  table(empty, iso, cases, s);
  // The longest inline loop: a full policy, destination in its last prefix.
  const std::vector<Case> last = {
      {"ipv4 allowed (8th)", hsns::test::ipv4_udp("198.18.8.2"), TC_ACT_OK},
      {"ipv6 allowed (8th)", hsns::test::ipv6_udp("2001:db8:8::2"), TC_ACT_OK},
      {"802.1Q ipv4 allowed (8th)", hsns::test::ipv4_udp("198.18.8.2", {0x8100}), TC_ACT_OK},
      {"802.1Q ipv6 allowed (8th)", hsns::test::ipv6_udp("2001:db8:8::2", {0x8100}), TC_ACT_OK},
  };
  std::printf("\n== isolation, port with %d IPv4 + %d IPv6 prefixes (%s) ==\n", HSNS_ISO_FAST_V4,
              HSNS_ISO_FAST_V6, enforce(**maps, HSNS_ISO_FAST_V4));
  table(empty, iso, last, s);
  std::printf("\n== isolation, port with %d IPv4 + %d IPv6 prefixes (%s) ==\n", s.prefixes, s.prefixes,
              enforce(**maps, s.prefixes));
  table(empty, iso, std::vector<Case>(cases.begin(), cases.begin() + 4), s);

  // Beside the flow probe: the same RoCEv2 frames through both programs, each paired with the empty one.
  (void)enforce(**maps, s.few);
  libbpf_set_print(nullptr);
  roce_flow* probe = open_and_load_roce_flow();
  if (probe == nullptr) {
    std::fprintf(stderr, "cannot load the RoCE flow probe\n");
    return 1;
  }
  const int probe_fd = bpf_program__fd(probe->progs.roce_tc_ingress);
  hsns::roce_gen::FrameSpec fs;
  auto roce = [&](int family, hsns::roce_gen::Encap encap) {
    fs.encap = encap;
    return hsns::roce_gen::frame(roce_send(family), fs);
  };
  struct Beside {
    const char* name;
    Frame frame;
  };
  const std::vector<Beside> beside = {
      {"ipv4 RoCEv2 SEND", roce(4, hsns::roce_gen::Encap::none)},
      {"ipv6 RoCEv2 SEND", roce(6, hsns::roce_gen::Encap::none)},
      {"802.1Q ipv4 RoCEv2 SEND", roce(4, hsns::roce_gen::Encap::vlan)},
  };
  std::printf("\n== beside the RoCEv2 flow probe, same frames (isolation: allowed, inline policy) ==\n");
  std::printf("%-24s %8s %12s %12s %14s\n", "frame", "empty", "flow probe", "isolation", "isolation/probe");
  for (const Beside& b : beside) {
    const Paired pr = paired(empty, probe_fd, b.frame, s, -1);
    const Paired is = paired(empty, iso, b.frame, s, TC_ACT_OK);
    const double base = std::min(pr.empty, is.empty);
    std::printf("%-24s %8.1f %+12.1f %+12.1f %14.2f\n", b.name, base, pr.prog - base, is.prog - base,
                pr.prog - base > 0 ? (is.prog - base) / (pr.prog - base) : 0.0);
  }
  std::printf(
      "target: isolation <= +20 ns above the empty program per allowed packet (IPv4, IPv6, 802.1Q)\n");
  roce_flow::destroy(probe);

  // What a prefix change costs the writer: trie diff plus the policy swap (an outer-map update, which
  // returns after an RCU grace period). Alternates two policies of the port.
  constexpr int kChanges = 20;
  double best_ms = 1e18;
  double worst_ms = 0;
  double total_ms = 0;
  for (int i = 0; i < kChanges; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto r = (*maps)->set_prefixes(1, port_prefixes(i % 2 == 0 ? s.few + 1 : s.few)); !r) {
      std::fprintf(stderr, "%s\n", r.error().c_str());
      return 1;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best_ms = std::min(best_ms, ms);
    worst_ms = std::max(worst_ms, ms);
    total_ms += ms;
  }
  std::printf("\n== prefix change of an enforced port (set_prefixes, %d changes) ==\n", kChanges);
  std::printf("best %.1f ms, mean %.1f ms, worst %.1f ms\n", best_ms, total_ms / kChanges, worst_ms);
  close(empty);
  return 0;
}
