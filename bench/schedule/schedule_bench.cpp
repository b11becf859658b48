// schedule_job latency for a 1,024-NPU job (TP 8, PP 8, DP 16 = 128 hosts x 8 NPUs, halving-doubling DP
// all-reduce + PP exchange, 1 QP per pair, 5 random-ECMP seeds), at 1:1 and 2:1 leaf oversubscription:
//
//   A. on a generated 1,000-host cluster (32 hosts per SU, 4 super-pods of 8 spines, 8 cores, 400G links),
//      30% of the hosts allocated in runs of 1..8 plus ~3% isolated and ~3% sub-health (the topology-search
//      benchmark's generator); the 128 hosts are the best answer of search_topology for the job;
//   B. on a dedicated 128-host cluster (16 hosts per SU, 8 spines), every host used.
//
// Per case, over `runs` runs on one thread: p50 / p99 of schedule_job (wall clock and thread CPU time, the
// latter being what one idle core would take on a shared machine), and, measured in the same run as
// baselines, the parts of it: cost::compare_plan alone (route plan + 2 + seeds flow simulations, the same
// call schedule_job makes), cost::plan_routes alone, and placement + exports = schedule_job minus
// compare_plan (what scheduling costs without a route plan). search_topology for the same job is shown for
// reference (case A). Usage: hsns_bench_schedule [runs (default 30)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "random_instance.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"
#include "topology/generator.h"

using namespace hsns;

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::percentile;
using hsns::bench::thread_cpu_ms;

cost::ModelSpec model() {
  return cost::ModelSpec{7'000'000'000, 32, 4096, 32, 0, 4096, 1, 1024, 2, 0, 0};
}

cost::ParallelSpec parallel() {
  cost::ParallelSpec p;
  p.tp = 8;
  p.dp = 16;
  p.pp = 8;
  return p;
}

// NPU n of the i-th host (0-based, in the topology's host order) gets 10.(i / 256).(i % 256).n+1.
placement::NpuIpMap npu_ips(const topology::Topology& t) {
  placement::NpuIpMap m;
  std::uint32_t i = 0;
  for (auto h : t.hosts()) {
    const auto& node = t.node(h);
    for (std::uint32_t n = 0; n < node.npus.size(); ++n) {
      m[{node.name, n}] =
          IpAddress(IpFamily::v4, (10u << 24) | ((i / 256) << 16) | ((i % 256) << 8) | (n + 1));
    }
    ++i;
  }
  return m;
}

struct Samples {
  std::vector<double> schedule, compare, plan, placement, search;                      // wall clock
  std::vector<double> schedule_cpu, compare_cpu, plan_cpu, placement_cpu, search_cpu;  // thread CPU time
};

void print_row(const char* label, const std::vector<double>& wall, const std::vector<double>& cpu) {
  if (wall.empty()) return;
  std::printf("  %-44s p50 %8.2f ms  p99 %8.2f ms | cpu p50 %8.2f ms  p99 %8.2f ms\n", label,
              percentile(wall, 0.5), percentile(wall, 0.99), percentile(cpu, 0.5), percentile(cpu, 0.99));
}

int run_case(const char* title, const topology::Topology& topo, std::vector<std::string> hosts, int runs,
             const search::SearchRequest* search_req) {
  placement::ScheduleRequest req;
  req.job_name = "bench";
  req.hosts = std::move(hosts);
  req.model = model();
  req.parallel = parallel();
  req.algorithm = cost::Algorithm::halving_doubling;
  req.ecmp_seeds = 5;
  req.npu_ips = npu_ips(topo);
  Samples s;
  placement::Schedule last;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    double c0 = thread_cpu_ms();
    auto sched = placement::schedule_job(topo, req);
    const double total = ms_since(t0), total_cpu = thread_cpu_ms() - c0;
    if (!sched) return std::fprintf(stderr, "schedule_job: %s\n", sched.error().message().c_str()), 1;
    const auto& r = sched->route;
    t0 = Clock::now();
    c0 = thread_cpu_ms();
    auto cmp = cost::compare_plan(r.fabric, r.endpoints, r.phases, req.qps_per_pair, req.ecmp_seeds,
                                  req.source_ports);
    const double compare = ms_since(t0), compare_cpu = thread_cpu_ms() - c0;
    if (!cmp) return std::fprintf(stderr, "compare_plan: %s\n", cmp.error().c_str()), 1;
    auto demands = cost::demands_of(r.endpoints, r.phases, req.qps_per_pair);
    if (!demands) return 1;
    t0 = Clock::now();
    c0 = thread_cpu_ms();
    auto plan = cost::plan_routes(r.fabric, *demands, req.source_ports);
    s.plan.push_back(ms_since(t0));
    s.plan_cpu.push_back(thread_cpu_ms() - c0);
    if (!plan) return 1;
    s.schedule.push_back(total);
    s.schedule_cpu.push_back(total_cpu);
    s.compare.push_back(compare);
    s.compare_cpu.push_back(compare_cpu);
    s.placement.push_back(std::max(0.0, total - compare));
    s.placement_cpu.push_back(std::max(0.0, total_cpu - compare_cpu));
    if (search_req != nullptr) {
      t0 = Clock::now();
      c0 = thread_cpu_ms();
      auto found = search::search_topology(topo, *search_req);
      s.search.push_back(ms_since(t0));
      s.search_cpu.push_back(thread_cpu_ms() - c0);
      if (!found) return 1;
    }
    last = std::move(*sched);
  }
  const auto& c = last.route.comparison;
  std::printf("%s\n", title);
  print_row("schedule_job (1,024 NPUs)", s.schedule, s.schedule_cpu);
  print_row("  of which compare_plan (plan + simulations)", s.compare, s.compare_cpu);
  print_row("  of which plan_routes", s.plan, s.plan_cpu);
  print_row("baseline: placement + exports, no route plan", s.placement, s.placement_cpu);
  print_row("reference: search_topology for the same job", s.search, s.search_cpu);
  std::printf(
      "  fabric: %u leaves x %u uplinks (%u spines), oversubscription %.1f:1; %zu pairs, max uplink load %u, "
      "max downlink load %u (bound %u)\n",
      last.route.fabric.leaves, last.route.fabric.uplinks_per_leaf, last.route.fabric.spines,
      last.route.fabric.oversubscription(), c.plan.flows.size(), c.planned_max_uplink_load,
      c.plan.max_downlink_load, c.lower_bound);
  std::printf(
      "  predicted DP all-reduce + PP exchange: planned %.2f ms, ECMP mean %.2f ms, non-blocking %.2f ms\n",
      c.planned_seconds * 1e3, c.ecmp_mean_seconds * 1e3, c.non_blocking_seconds * 1e3);
  return 0;
}

int fragmented(double oversub, int runs) {
  topology::ClosParams p;
  p.hosts = 1000;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  p.superpods = 4;
  p.cores = 8;
  p.fabric_link_gbps = 400;
  p.leaf_oversubscription = oversub;
  auto topo = topology::generate_clos(p);
  if (!topo) return std::fprintf(stderr, "generate_clos: %s\n", topo.error().detail.c_str()), 1;
  std::mt19937_64 rng(p.hosts);
  search::testing::fragment_runs(*topo, rng, 0.3, 8);
  search::SearchRequest sr;
  sr.model = model();
  sr.parallel = parallel();
  sr.answers = 1;
  auto found = search::search_topology(*topo, sr);
  if (!found)
    return std::fprintf(stderr, "search: %s: %s\n", found.error().field().c_str(),
                        found.error().detail.c_str()),
           1;
  char title[400];
  std::snprintf(
      title, sizeof title,
      "A. 1,000 hosts x 8 NPUs, 30%% allocated in fragments, %.0f:1; hosts from search_topology: %s", oversub,
      found->candidates.front().explanation.c_str());
  return run_case(title, *topo, found->candidates.front().hosts, runs, &sr);
}

int dedicated(double oversub, int runs) {
  topology::ClosParams p;
  p.hosts = 128;
  p.npus_per_host = 8;
  p.hosts_per_su = 16;
  p.spines_per_plane = 8;
  p.fabric_link_gbps = 400;
  p.leaf_oversubscription = oversub;
  auto topo = topology::generate_clos(p);
  if (!topo) return std::fprintf(stderr, "generate_clos: %s\n", topo.error().detail.c_str()), 1;
  std::vector<std::string> hosts;
  for (auto h : topo->hosts()) hosts.push_back(topo->node(h).name);
  char title[120];
  std::snprintf(title, sizeof title, "B. dedicated 128 hosts x 8 NPUs (16 per SU), %.0f:1", oversub);
  return run_case(title, *topo, std::move(hosts), runs, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 30;
  std::printf("schedule_job latency, one thread, %d runs per case\n", runs);
  for (double oversub : {1.0, 2.0}) {
    if (int rc = fragmented(oversub, runs); rc != 0) return rc;
    if (int rc = dedicated(oversub, runs); rc != 0) return rc;
  }
  return 0;
}
