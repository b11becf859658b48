// Seeded random fragmented clusters and jobs for the topology-search tests and benchmark.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "scheduling/search/search.h"
#include "topology/generator.h"

namespace hsns::search::testing {

// Marks hosts allocated / isolated / sub-health, and single NPUs allocated, at the given rates.
inline void fragment(topology::Topology& t, std::mt19937_64& rng, double allocated, double isolated = 0.05,
                     double sub_health = 0.05, double npu_allocated = 0.05) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<topology::NodeId> hosts(t.hosts().begin(), t.hosts().end());
  for (topology::NodeId h : hosts) {
    const double x = unit(rng);
    if (x < allocated) {
      t.set_node_state(h, topology::DeviceState::kAllocated);
    } else if (x < allocated + isolated) {
      t.set_node_state(h, topology::DeviceState::kIsolated);
    } else if (x < allocated + isolated + sub_health) {
      t.set_node_state(h, topology::DeviceState::kSubHealth);
    } else if (x < allocated + isolated + sub_health + npu_allocated) {
      const auto n = static_cast<std::uint32_t>(t.node(h).npus.size());
      t.set_npu_state({h, static_cast<std::uint32_t>(rng() % n)}, topology::DeviceState::kAllocated);
    }
  }
}

// Allocates runs of 1..max_run consecutive hosts (in id order: the departed and running jobs of a busy
// cluster) until about `allocated` of the hosts are taken; a few hosts are isolated or sub-health.
inline void fragment_runs(topology::Topology& t, std::mt19937_64& rng, double allocated,
                          std::uint32_t max_run = 4) {
  std::vector<topology::NodeId> hosts(t.hosts().begin(), t.hosts().end());
  const auto target = static_cast<std::size_t>(allocated * static_cast<double>(hosts.size()) + 0.5);
  std::size_t taken = 0;
  for (int guard = 0; taken < target && guard < 100000; ++guard) {
    const std::size_t start = rng() % hosts.size();
    const std::size_t run = 1 + rng() % max_run;
    for (std::size_t i = start; i < std::min(hosts.size(), start + run) && taken < target; ++i) {
      if (t.node(hosts[i]).state == topology::DeviceState::kHealthy) {
        t.set_node_state(hosts[i], topology::DeviceState::kAllocated);
        ++taken;
      }
    }
  }
  for (topology::NodeId h : hosts) {
    if (t.node(h).state != topology::DeviceState::kHealthy) continue;
    const auto x = rng() % 100;
    if (x < 3) t.set_node_state(h, topology::DeviceState::kIsolated);
    if (x >= 3 && x < 6) t.set_node_state(h, topology::DeviceState::kSubHealth);
  }
}

// A GPT-style job of `hosts` hosts x npus_per_host NPUs with random TP/PP/DP/CP (and sometimes MoE/EP).
inline SearchRequest random_job(std::mt19937_64& rng, std::uint32_t hosts, std::uint32_t npus_per_host) {
  for (;;) {
    SearchRequest r;
    r.model.parameters = 7'000'000'000ull;
    r.model.layers = 240;
    r.model.hidden = 4096;
    r.model.heads = 32;
    r.model.kv_heads = 8;
    r.model.seq_len = 4096;
    r.model.micro_batch = 1;
    auto& p = r.parallel;
    std::uint32_t tp = 1;
    while (tp * 2 <= npus_per_host && rng() % 3 != 0) tp *= 2;
    p.tp = tp;
    std::uint32_t rest = hosts * npus_per_host / tp;
    p.pp = p.dp = p.cp = 1;
    for (std::uint32_t f = 2; rest > 1;) {
      if (rest % f != 0) {
        ++f;
        continue;
      }
      rest /= f;
      const auto which = rng() % (f == 2 ? 4 : 2);
      if (which == 0) {
        p.pp *= f;
      } else if (which == 3) {
        p.cp *= f;
      } else {
        p.dp *= f;
      }
    }
    r.model.global_batch = p.dp * 8;
    p.zero_stage = static_cast<int>(rng() % 4);
    p.sequence_parallel = rng() % 2 == 0;
    if (rng() % 4 == 0) {
      r.model.moe_experts = 8;
      r.model.moe_top_k = 2;
      r.model.parameters = 300'000'000'000ull;
      std::uint32_t ep = 1;
      while (ep * 2 <= 8 && (p.dp * p.cp) % (ep * 2) == 0 && rng() % 2 == 0) ep *= 2;
      p.ep = ep;
    }
    if (cost::validate(r.model, r.parallel)) return r;
  }
}

}  // namespace hsns::search::testing
