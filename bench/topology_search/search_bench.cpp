// Topology search latency on synthetic rail-optimised Clos clusters of 1,000, 10,000 and 100,000 hosts x 8
// NPUs, 30% of the hosts allocated in fragments (runs of 1..8 consecutive hosts), plus 3% isolated and 3%
// sub-health. For each cluster and job size (TP 8, PP and DP as below, a 7B-70B-class dense model), runs
// search_topology `--repeat` times (default 50) and prints p50/p99 wall time on one thread and thread CPU
// time (what one idle core would take on a shared machine), beside two baselines measured in the same run:
// first_fit() (validation + pool scan in name order, no topology logic) and one cost-model evaluation
// (communication_volume + iteration_comm_time).
//
// Usage: hsns_bench_topology_search [--repeat N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "random_instance.h"
#include "scheduling/search/search.h"
#include "topology/generator.h"

using namespace hsns;

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::percentile;
using hsns::bench::thread_cpu_ms;

search::SearchRequest job(std::uint32_t pp, std::uint32_t dp) {
  search::SearchRequest r;
  r.model = {70'000'000'000ull, 80, 8192, 64, 8, 4096, 1, 0, 2, 0, 0};
  r.model.global_batch = dp * 16;
  r.parallel.tp = 8;
  r.parallel.pp = pp;
  r.parallel.dp = dp;
  r.parallel.zero_stage = 1;
  r.parallel.sequence_parallel = true;
  return r;
}

int run(std::uint32_t hosts, std::uint32_t superpods, int repeat) {
  topology::ClosParams p;
  p.hosts = hosts;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  p.superpods = superpods;
  p.cores = superpods > 1 ? 8 : 0;
  auto t0 = Clock::now();
  // 100,000 hosts are beyond the server's model limits (topology/limits.h): the library is measured here.
  topology::ModelLimits limits;
  limits.hosts = std::max<std::uint64_t>(limits.hosts, hosts);
  limits.npus = std::max<std::uint64_t>(limits.npus, std::uint64_t{hosts} * 8);
  limits.switches = std::max<std::uint64_t>(limits.switches, hosts);
  limits.links = std::max<std::uint64_t>(limits.links, std::uint64_t{hosts} * 16);
  limits.index_work = std::max<std::uint64_t>(limits.index_work, std::uint64_t{hosts} * 1024);
  auto topo = topology::generate_clos(p, limits);
  if (!topo) return std::fprintf(stderr, "generate: %s\n", topo.error().detail.c_str()), 1;
  std::mt19937_64 rng(hosts);
  search::testing::fragment_runs(*topo, rng, 0.3, 8);  // 30% allocated in runs of 1..8 hosts
  std::printf(
      "\n%u hosts x 8 NPUs, %u SUs of 32, %u super-pods, 30%% allocated in fragments "
      "(generated in %.0f ms)\n",
      hosts, topo->domain_count(topology::Tier::kLeaf), superpods, ms_since(t0));
  std::printf("%-26s %9s %9s %9s %9s %9s %9s %11s %12s  %s\n", "job", "p50 ms", "p99 ms", "cpu p50",
              "cpu p99", "ff p50", "ff p99", "1 eval us", "candidates", "best answer");
  struct Size {
    std::uint32_t pp, dp;
  };
  const std::vector<Size> sizes = {{1, 4}, {2, 8}, {4, 16}, {8, 16}, {4, 64}, {8, 128}};
  for (const Size& s : sizes) {
    search::SearchRequest r = job(s.pp, s.dp);
    r.answers = 3;
    const std::uint32_t need = s.pp * s.dp;
    if (need > hosts / 2) continue;
    std::vector<double> search_ms, search_cpu_ms, ff_ms, eval_us;
    std::string best;
    std::uint32_t evaluated = 0;
    for (int i = 0; i < repeat; ++i) {
      auto a = Clock::now();
      const double c0 = thread_cpu_ms();
      auto res = search::search_topology(*topo, r);
      search_ms.push_back(ms_since(a));
      search_cpu_ms.push_back(thread_cpu_ms() - c0);
      if (!res)
        return std::fprintf(stderr, "search: %s: %s\n", res.error().field().c_str(),
                            res.error().detail.c_str()),
               1;
      if (i == 0) {
        best = res->candidates.front().explanation;
        evaluated = res->candidates_evaluated;
      }
      a = Clock::now();
      auto ff = search::first_fit(*topo, r);
      ff_ms.push_back(ms_since(a));
      if (!ff) return 1;
      a = Clock::now();
      auto vol = cost::communication_volume(r.model, r.parallel);
      cost::DimensionSpans spans{};
      spans[static_cast<std::size_t>(cost::Dimension::dp)] = {1, 1};
      spans[static_cast<std::size_t>(cost::Dimension::pp)] = {2, 1};
      auto est = cost::iteration_comm_time(*vol, spans, r.calibration, r.algorithm);
      eval_us.push_back(ms_since(a) * 1e3);
      if (!est) return 1;
    }
    char label[64];
    std::snprintf(label, sizeof label, "%u hosts (TP8 PP%u DP%u)", need, s.pp, s.dp);
    std::printf("%-26s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %11.1f %12u  %s\n", label,
                percentile(search_ms, 0.5), percentile(search_ms, 0.99), percentile(search_cpu_ms, 0.5),
                percentile(search_cpu_ms, 0.99), percentile(ff_ms, 0.5), percentile(ff_ms, 0.99),
                percentile(eval_us, 0.5), evaluated, best.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 50;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf("topology search latency, one thread, %d runs per job (ff = first-fit baseline)\n", repeat);
  if (int rc = run(1000, 4, repeat); rc != 0) return rc;
  if (int rc = run(10000, 16, repeat); rc != 0) return rc;
  return run(100000, 64, repeat);
}
