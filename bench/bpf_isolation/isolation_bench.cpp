// ns per packet of the isolation program (bpf/isolation.bpf.c) through bpf_prog_test_run_opts with
// repeat, against a same-run baseline: an empty tc program (r0 = TC_ACT_OK; exit). The port has
// --prefixes IPv4 prefixes and as many IPv6 prefixes in its tries (default 64). Needs root.
//
// Usage: hsns_bench_bpf_isolation [--repeat N] [--prefixes N]
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../tests/bpf/isolation/packets.h"
#include "isolation/isolation_maps.h"

namespace {

using hsns::test::Frame;

int load_empty_tc_program() {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, TC_ACT_OK},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "hsns_empty_tc", "GPL", insns, 2, nullptr);
}

// Average ns per run as the kernel measures it (opts.duration), best of 3 runs.
double ns_per_packet(int prog_fd, const Frame& frame, unsigned repeat, int expected) {
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    Frame out(frame.size() + 256);
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out.data(),
                .data_size_in = static_cast<__u32>(frame.size()),
                .data_size_out = static_cast<__u32>(out.size()), .repeat = static_cast<int>(repeat));
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) {
      std::fprintf(stderr, "bpf_prog_test_run_opts: %s\n", std::strerror(errno));
      std::exit(1);
    }
    if (static_cast<int>(opts.retval) != expected) {
      std::fprintf(stderr, "unexpected verdict %u\n", opts.retval);
      std::exit(1);
    }
    if (i == 0 || opts.duration < best) best = opts.duration;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned repeat = 1000000;
  int prefixes = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--repeat") repeat = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--prefixes") prefixes = std::atoi(argv[i + 1]);
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
  // The port (loopback, ifindex 1, as test_run uses it) may reach 198.18.0.0/24 .. and 2001:db8:0..::/64 ..
  std::vector<hsns::IpPrefix> allowed;
  for (int i = 0; i < prefixes; ++i) {
    char v4[64];
    char v6[64];
    std::snprintf(v4, sizeof(v4), "198.18.%d.0/24", i % 256);
    std::snprintf(v6, sizeof(v6), "2001:db8:%x::/64", i);
    allowed.push_back(*hsns::IpPrefix::parse(v4));
    allowed.push_back(*hsns::IpPrefix::parse(v6));
  }
  if (auto r = (*maps)->set_prefixes(1, allowed); !r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 1;
  }
  if (auto r = (*maps)->set_port(1, hsns_iso_port{}); !r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 1;
  }
  const int empty = load_empty_tc_program();
  if (empty < 0) {
    std::fprintf(stderr, "loading the empty program: %s\n", std::strerror(errno));
    return 1;
  }
  const int iso = (*maps)->program_fd();
  struct Case {
    const char* name;
    Frame frame;
    int verdict;
  };
  const Case cases[] = {
      {"ipv4 allowed", hsns::test::ipv4_udp("198.18.1.2"), TC_ACT_OK},
      {"ipv4 dropped", hsns::test::ipv4_udp("203.0.113.1"), TC_ACT_SHOT},
      {"ipv6 allowed", hsns::test::ipv6_udp("2001:db8:1::2"), TC_ACT_OK},
      {"ipv6 dropped", hsns::test::ipv6_udp("2001:db9::1"), TC_ACT_SHOT},
      {"802.1Q ipv4 allowed", hsns::test::ipv4_udp("198.18.1.2", {0x8100}), TC_ACT_OK},
      {"arp", hsns::test::arp(), TC_ACT_OK},
  };
  std::printf("isolation tc program, %d+%d prefixes, repeat %u, best of 3 (ns/packet)\n", prefixes, prefixes,
              repeat);
  std::printf("%-22s %10s %10s %10s\n", "frame", "empty", "isolation", "added");
  for (const Case& c : cases) {
    const double base = ns_per_packet(empty, c.frame, repeat, TC_ACT_OK);
    const double cost = ns_per_packet(iso, c.frame, repeat, c.verdict);
    std::printf("%-22s %10.1f %10.1f %10.1f\n", c.name, base, cost, cost - base);
  }
  close(empty);
  return 0;
}
