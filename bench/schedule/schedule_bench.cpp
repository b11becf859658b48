// schedule_job latency for a 1,024-NPU job: 128 hosts x 8 NPUs (16 hosts per scalable unit, 8 spines),
// 400G links (16 uplinks per leaf at 1:1), tp 8, dp 16, pp 8, halving-doubling, 5 random-ECMP seeds. Prints
// p50 / max over the runs and the predicted times. Usage: hsns_bench_schedule [runs] [oversubscription]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scheduling/placement/schedule.h"
#include "scheduling/topology/generator.h"

int main(int argc, char** argv) {
  using namespace hsns;
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  topology::ClosParams p;
  p.hosts = 128;
  p.npus_per_host = 8;
  p.hosts_per_su = 16;
  p.spines_per_plane = 8;
  p.fabric_link_gbps = 400;  // 16 uplinks of 400G per leaf at 1:1
  p.leaf_oversubscription = argc > 2 ? std::atof(argv[2]) : 1.0;
  auto topo = topology::generate_clos(p);
  if (!topo) {
    std::fprintf(stderr, "generate_clos: %s\n", topo.error().detail.c_str());
    return 1;
  }
  placement::ScheduleRequest req;
  req.job_name = "bench";
  for (std::uint32_t h = 1; h <= p.hosts; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    req.hosts.emplace_back(name);
    for (std::uint32_t n = 0; n < p.npus_per_host; ++n) {
      const auto v = (10u << 24) | (h << 8) | n;
      req.npu_ips[{name, n}] = IpAddress(IpFamily::v4, v);
    }
  }
  req.model = cost::ModelSpec{7'000'000'000, 32, 4096, 32, 0, 4096, 1, 1024, 2, 0, 0};
  req.parallel.tp = 8;
  req.parallel.dp = 16;
  req.parallel.pp = 8;
  req.algorithm = cost::Algorithm::halving_doubling;
  req.ecmp_seeds = 5;
  std::vector<double> ms;
  placement::Schedule last;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = placement::schedule_job(*topo, req);
    const auto t1 = std::chrono::steady_clock::now();
    if (!s) {
      std::fprintf(stderr, "schedule_job: %s\n", s.error().message().c_str());
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    last = std::move(*s);
  }
  std::sort(ms.begin(), ms.end());
  const auto& c = last.route.comparison;
  std::printf("schedule_job 1024 NPUs (%d runs): p50 %.1f ms, max %.1f ms\n", runs, ms[ms.size() / 2],
              ms.back());
  std::printf("route plan: %zu pairs, max uplink load %u, max downlink load %u (bound %u)\n",
              c.plan.flows.size(), c.planned_max_uplink_load, c.plan.max_downlink_load, c.lower_bound);
  std::printf(
      "predicted DP all-reduce + PP exchange: planned %.2f ms, ECMP mean %.2f ms, non-blocking %.2f ms\n",
      c.planned_seconds * 1e3, c.ecmp_mean_seconds * 1e3, c.non_blocking_seconds * 1e3);
  return 0;
}
