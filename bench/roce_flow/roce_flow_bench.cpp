// Benchmark of the RoCEv2 flow probe (root):
// 1. ns per packet of bpf/roce_flow.bpf.c through bpf_prog_test_run_opts (repeat >= 10^6) for each packet
//    fixture, beside an empty tc program measured in the same run (the target is <= 40 ns above it);
// 2. harvest time (bpf_map_lookup_and_delete_batch + merge + PSN bookkeeping) for 100,000 live flows;
// 3. the process RSS with 100,000 flows harvested (what hsnsd would hold).
// Usage: hsns_bench_roce_flow [--repeat N] [--flows N] [--rounds N]
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "flow_probe.h"
#include "packet.h"
#include "roce_flow.skel.h"

namespace {

using hsns::roce_gen::Bytes;
using hsns::roce_gen::Encap;
using hsns::roce_gen::PacketSpec;

double run_ns(bpf_program* prog, const Bytes& pkt, std::uint32_t repeat) {
  // Best of 3 runs; opts.duration is the kernel's mean ns per repetition.
  double best = 1e18;
  for (int i = 0; i < 3; ++i) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt.data(),
                .data_size_in = static_cast<__u32>(pkt.size()), .repeat = static_cast<int>(repeat));
    if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) != 0) return -1;
    best = std::min(best, static_cast<double>(opts.duration));
  }
  return best;
}

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

PacketSpec spec(int family, std::uint8_t opcode) {
  PacketSpec s;
  s.family = family;
  hsns::roce_gen::parse_address(family == 4 ? "198.18.1.1" : "2001:db8::1", s.src);
  hsns::roce_gen::parse_address(family == 4 ? "198.18.1.2" : "2001:db8::2", s.dst);
  s.sport = 0xC123;
  s.opcode = opcode;
  s.dest_qp = 0x11;
  s.psn = 1;
  s.payload = 1024;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t repeat = 1000000;
  std::uint32_t flows = 100000;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--repeat") repeat = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
    if (a == "--flows") flows = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
    if (a == "--rounds") rounds = std::stoi(argv[i + 1]);
  }
  libbpf_set_print(nullptr);
  roce_flow* skel = roce_flow::open_and_load();
  if (skel == nullptr) return std::cerr << "cannot load roce_flow (root?)\n", 1;

  struct Case {
    const char* name;
    bpf_program* prog;
    Bytes pkt;
  };
  hsns::roce_gen::FrameSpec fs;
  auto frame = [&](const PacketSpec& s, Encap e) {
    fs.encap = e;
    return hsns::roce_gen::frame(s, fs);
  };
  PacketSpec nak = spec(4, 0x11);
  nak.syndrome = 0x60;
  Bytes udp53 = frame(spec(4, 0x04), Encap::none);
  udp53[14 + 22] = 0;
  udp53[14 + 23] = 53;
  Bytes tcp = frame(spec(4, 0x04), Encap::none);
  tcp[14 + 9] = 6;
  Bytes trunc = frame(spec(4, 0x04), Encap::none);
  trunc.resize(14 + 20 + 8 + 6);
  const std::vector<Case> cases = {
      {"empty tc program (baseline)", skel->progs.roce_tc_empty, frame(spec(4, 0x04), Encap::none)},
      {"ipv4 SEND", skel->progs.roce_tc_ingress, frame(spec(4, 0x04), Encap::none)},
      {"ipv4 WRITE CE", skel->progs.roce_tc_ingress,
       [&] {
         auto s = spec(4, 0x0A);
         s.ecn = 3;
         return frame(s, Encap::none);
       }()},
      {"ipv4 ACK NAK", skel->progs.roce_tc_ingress, frame(nak, Encap::none)},
      {"ipv4 CNP", skel->progs.roce_tc_ingress, frame(spec(4, 0x81), Encap::none)},
      {"ipv6 SEND", skel->progs.roce_tc_ingress, frame(spec(6, 0x04), Encap::none)},
      {"vlan ipv4 SEND", skel->progs.roce_tc_ingress, frame(spec(4, 0x04), Encap::vlan)},
      {"qinq ipv6 SEND", skel->progs.roce_tc_ingress, frame(spec(6, 0x04), Encap::qinq)},
      {"erspan2 ipv4 SEND (mirror)", skel->progs.roce_tc_ingress_mirror,
       frame(spec(4, 0x04), Encap::erspan2)},
      {"erspan3 ipv6 SEND (mirror)", skel->progs.roce_tc_ingress_mirror,
       frame(spec(6, 0x04), Encap::erspan3)},
      {"non-RoCE UDP", skel->progs.roce_tc_ingress, udp53},
      {"non-RoCE TCP", skel->progs.roce_tc_ingress, tcp},
      {"truncated BTH", skel->progs.roce_tc_ingress, trunc},
  };
  std::cout << "== ns per packet, bpf_prog_test_run_opts, repeat " << repeat << " (best of 3) ==\n";
  double base = 0;
  for (const auto& c : cases) {
    const double ns = run_ns(c.prog, c.pkt, repeat);
    if (c.prog == skel->progs.roce_tc_empty) base = ns;
    std::printf("%-30s %7.1f ns  (+%5.1f ns over empty)\n", c.name, ns, ns - base);
  }
  const double empty_again = run_ns(skel->progs.roce_tc_empty, cases[0].pkt, repeat);
  std::printf("%-30s %7.1f ns\n", "empty tc program (again)", empty_again);
  roce_flow::destroy(skel);

  // Harvest of `flows` live flows through the FlowProbe library (no interfaces attached).
  hsns::daemon::FlowProbeConfig config;
  config.table_size = flows + flows / 4;
  config.pin_dir = "/sys/fs/bpf/hsns-bench-roce-" + std::to_string(getpid());
  config.interval = std::chrono::milliseconds(1000);
  const long rss_before = rss_kib();
  auto probe = hsns::daemon::FlowProbe::start(config);
  if (!probe) return std::cerr << probe.error() << "\n", 1;
  const int fd_a = bpf_obj_get((config.pin_dir + "/roce_flows_a").c_str());
  const int fd_b = bpf_obj_get((config.pin_dir + "/roce_flows_b").c_str());
  const int fd_outer = bpf_obj_get((config.pin_dir + "/roce_tables").c_str());
  bpf_map_info info_a{};
  std::uint32_t info_len = sizeof(info_a);
  bpf_obj_get_info_by_fd(fd_a, &info_a, &info_len);
  // The table the program writes now (the harvester flips them).
  auto active_fd = [&] {
    std::uint32_t zero = 0;
    std::uint32_t id = 0;
    bpf_map_lookup_elem(fd_outer, &zero, &id);
    return id == info_a.id ? fd_a : fd_b;
  };
  std::vector<roce_flow_key> keys(flows);
  std::vector<roce_flow_stats> vals(flows);
  for (std::uint32_t i = 0; i < flows; ++i) {
    keys[i] = {};
    keys[i].ifindex = 2;
    keys[i].family = 4;
    keys[i].src[0] = 198;
    keys[i].src[1] = 18;
    keys[i].src[2] = static_cast<std::uint8_t>(i >> 8);
    keys[i].src[3] = static_cast<std::uint8_t>(i);
    keys[i].dst[0] = 198;
    keys[i].dst[1] = 19;
    keys[i].sport = static_cast<std::uint16_t>(0xC000 | (i & 0x3FFF));
    keys[i].dest_qp = i;
    vals[i] = {};
    vals[i].packets = 100 + i;
    vals[i].bytes = 1000 * (100 + i);
    vals[i].op[ROCE_OP_WRITE] = 100 + i;
    vals[i].has_psn = 1;
    vals[i].first_psn = i;
    vals[i].last_psn = i + 99;
    vals[i].max_psn = i + 99;
  }
  std::cout << "\n== harvest of " << flows
            << " live flows (lookup_and_delete_batch + ring merge + PSN state) ==\n";
  double best_ms = 1e18;
  double worst_ms = 0;
  std::size_t got = 0;
  for (int r = 0; r < rounds; ++r) {
    std::uint32_t n = flows;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    if (bpf_map_update_batch(active_fd(), keys.data(), vals.data(), &n, &opts) != 0 || n != flows)
      return std::cerr << "fill failed at " << n << ": " << std::strerror(errno) << "\n", 1;
    const auto t0 = std::chrono::steady_clock::now();
    auto recs = (*probe)->harvest();
    const auto t1 = std::chrono::steady_clock::now();
    if (!recs) return std::cerr << recs.error() << "\n", 1;
    got = recs->size();
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    best_ms = std::min(best_ms, ms);
    worst_ms = std::max(worst_ms, ms);
  }
  std::printf("records per harvest %zu, best %.1f ms, worst %.1f ms over %d rounds\n", got, best_ms, worst_ms,
              rounds);
  // RSS as hsnsd would hold it: fill once more, drop the benchmark's own fill buffers, harvest, and measure
  // while the 100,000 records are still alive.
  {
    std::uint32_t n = flows;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    bpf_map_update_batch(active_fd(), keys.data(), vals.data(), &n, &opts);
  }
  keys = {};
  vals = {};
  auto recs = (*probe)->harvest();
  const long rss_after = rss_kib();
  std::printf(
      "\n== RSS ==\nprocess RSS holding %zu harvested records: %.1f MiB (%.1f MiB before the probe "
      "started)\n",
      recs ? recs->size() : 0, static_cast<double>(rss_after) / 1024.0,
      static_cast<double>(rss_before) / 1024.0);
  close(fd_a);
  close(fd_b);
  close(fd_outer);
  (*probe)->stop(true);
  return 0;
}
