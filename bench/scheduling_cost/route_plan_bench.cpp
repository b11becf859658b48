// Route planning and simulation latency for a rail-optimised 1,024-NPU job.
//
// 128 hosts x 8 NPUs; hosts in groups of 16 under one leaf per rail (8 leaves per rail); each rail is its
// own 2-tier Clos (1:1 and 2:1). The DP all-reduce of each rail is a 128-rank halving-doubling of 1 GiB.
// Prints, per oversubscription: plan_routes time for all 8 rails, max uplink load vs lower bound, and the
// simulated all-reduce of one rail planned vs the mean of 5 random-ECMP draws vs non-blocking.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "bench_timing.h"
#include "scheduling/cost/collective_flows.h"

using namespace hsns::cost;

namespace {

using hsns::bench::ms_since;
using hsns::bench::thread_cpu_ms;

int run(double oversub) {
  constexpr std::uint32_t kLeaves = 8, kPorts = 16, kRails = 8;
  const auto uplinks = static_cast<std::uint32_t>(kPorts / oversub);
  auto phases = halving_doubling_all_reduce_phases(kLeaves * kPorts, 1024.0 * 1024 * 1024);
  if (!phases) return 1;
  double plan_ms = 0, plan_cpu_ms = 0;
  std::uint32_t worst = 0, bound = 0;
  for (std::uint32_t rail = 0; rail < kRails; ++rail) {
    EcmpHashModel hash;
    hash.seed = rail;
    auto fabric = make_clos(kLeaves, uplinks, kPorts, 400, oversub, hash);
    if (!fabric) return std::fprintf(stderr, "%s\n", fabric.error().c_str()), 1;
    std::vector<Endpoint> eps;
    for (std::uint32_t l = 0; l < kLeaves; ++l) {
      for (std::uint32_t h = 0; h < kPorts; ++h) {
        const std::string ip = "198." + std::to_string(18 + rail / 4) + "." +
                               std::to_string((rail % 4) * 64 + l) + "." + std::to_string(h + 1);
        eps.push_back({*hsns::IpAddress::parse(ip), l});
      }
    }
    auto demands = demands_of(eps, *phases, 1);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    auto plan = plan_routes(*fabric, *demands);
    plan_ms += ms_since(t0);
    plan_cpu_ms += thread_cpu_ms() - c0;
    if (!plan) return std::fprintf(stderr, "%s\n", plan.error().c_str()), 1;
    worst = std::max(worst, plan->max_uplink_load);
    bound = std::max(bound, plan->lower_bound);
    if (rail == 0) {
      const auto t1 = std::chrono::steady_clock::now();
      auto cmp = compare_plan(*fabric, eps, *phases, 1, 5);
      const double sim_ms = ms_since(t1);
      if (!cmp) return std::fprintf(stderr, "%s\n", cmp.error().c_str()), 1;
      std::printf(
          "oversub %.0f:1  rail 0: planned %.1f ms, ECMP mean %.1f ms, non-blocking %.1f ms "
          "(compare_plan with 5 seeds took %.0f ms)\n",
          oversub, cmp->planned_seconds * 1e3, cmp->ecmp_mean_seconds * 1e3, cmp->non_blocking_seconds * 1e3,
          sim_ms);
    }
  }
  std::printf(
      "oversub %.0f:1  plan_routes for 8 rails x 128 ranks: %.1f ms total (CPU %.1f ms); max uplink load %u "
      "(lower bound %u)\n",
      oversub, plan_ms, plan_cpu_ms, worst, bound);
  return 0;
}

}  // namespace

int main() {
  return run(1.0) + run(2.0);
}
