// Randomly named, unevenly built Clos clusters for the topology-search optimum test: names carry no
// topology (random tokens, hosts and switches added in shuffled order), SUs of 2..6 hosts, 1..4 super-pods,
// two rail leaves per SU, and a share of hosts, NPUs, links and switches made unusable. Also the test's own
// reading of what is usable (written from the documented rules, not from the search code).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace hsns::search::testing {

using topology::DeviceState;
using topology::Link;
using topology::NodeId;
using topology::Npu;
using topology::Tier;
using topology::Topology;
using topology::TopologyBuilder;

// Unique random names ("n" + 6 hex digits), in draw order.
class RandomNames {
 public:
  explicit RandomNames(std::mt19937_64& rng) : rng_(&rng) {}
  std::string next() {
    for (;;) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "n%06llx", static_cast<unsigned long long>((*rng_)() & 0xFFFFFFu));
      if (used_.insert(buf).second) return buf;
    }
  }

 private:
  std::mt19937_64* rng_;
  std::set<std::string> used_;
};

struct NamedCluster {
  Topology topology;
  std::uint32_t npus_per_host = 0;
};

// Builds the cluster (healthy). sus_per_pod: 1..3 per super-pod; hosts per SU 2..6.
inline NamedCluster named_cluster(std::mt19937_64& rng) {
  RandomNames names(rng);
  const std::uint32_t nph = rng() % 2 == 0 ? 8 : 4;
  const std::uint32_t pods = 1 + static_cast<std::uint32_t>(rng() % 4);
  struct Su {
    std::uint32_t pod, hosts;
  };
  std::vector<Su> sus;
  for (std::uint32_t p = 0; p < pods; ++p) {
    const auto n = 1 + rng() % 3;
    for (std::uint64_t i = 0; i < n; ++i) sus.push_back({p, 2 + static_cast<std::uint32_t>(rng() % 5)});
  }
  TopologyBuilder b;
  // Switch names first (drawn in cabling order, but random tokens), hosts in shuffled order later.
  std::vector<NodeId> cores;
  if (pods > 1) {
    for (int c = 0; c < 2; ++c) cores.push_back(b.add_switch(names.next(), Tier::kCore));
  }
  std::vector<std::vector<NodeId>> spines(pods);
  for (std::uint32_t p = 0; p < pods; ++p) {
    for (int s = 0; s < 2; ++s) spines[p].push_back(b.add_switch(names.next(), Tier::kSpine));
  }
  auto link = [&](NodeId lower, NodeId upper, std::string lower_port, std::string upper_port) {
    Link l;
    l.lower = lower;
    l.upper = upper;
    l.lower_port = std::move(lower_port);
    l.upper_port = std::move(upper_port);
    l.bandwidth_gbps = 400;
    l.latency_us = 1;
    return l;
  };
  struct PendingHost {
    std::vector<NodeId> leaves;
    std::uint32_t port;
  };
  std::vector<PendingHost> pending;
  std::uint32_t port = 0;
  for (const Su& su : sus) {
    std::vector<NodeId> leaves;
    for (int rail = 0; rail < 2; ++rail) {
      const NodeId leaf = b.add_switch(names.next(), Tier::kLeaf);
      leaves.push_back(leaf);
      for (std::size_t s = 0; s < spines[su.pod].size(); ++s) {
        b.add_link(link(leaf, spines[su.pod][s], "up" + std::to_string(s), "down" + std::to_string(++port)));
      }
    }
    for (std::uint32_t h = 0; h < su.hosts; ++h) pending.push_back({leaves, h});
  }
  for (std::size_t p = 0; p < spines.size(); ++p) {
    for (NodeId spine : spines[p]) {
      for (std::size_t c = 0; c < cores.size(); ++c) {
        b.add_link(link(spine, cores[c], "up" + std::to_string(c), "down" + std::to_string(++port)));
      }
    }
  }
  std::shuffle(pending.begin(), pending.end(), rng);
  for (const PendingHost& ph : pending) {
    const NodeId host = b.add_host(names.next());
    for (std::uint32_t n = 0; n < nph; ++n) {
      b.add_npu(host, Npu{n, "eth" + std::to_string(n), DeviceState::kHealthy, topology::kNoLink});
      Link l = link(host, ph.leaves[n % 2], "eth" + std::to_string(n), "p" + std::to_string(++port));
      l.npu = n;
      b.add_link(std::move(l));
    }
  }
  auto t = std::move(b).build();
  if (!t) throw std::runtime_error("named_cluster: " + t.error().detail);
  return {std::move(*t), nph};
}

inline DeviceState random_bad_state(std::mt19937_64& rng) {
  static constexpr DeviceState kBad[] = {DeviceState::kAllocated, DeviceState::kSubHealth,
                                         DeviceState::kIsolated};
  return kBad[rng() % 3];
}

// Makes about `share` of the devices unusable: hosts, single NPUs, NPU links, leaves, a leaf's every
// uplink, spines.
inline void spoil(Topology& t, std::mt19937_64& rng, double share) {
  std::uniform_real_distribution<double> unit(0, 1);
  for (NodeId h : t.hosts()) {
    const double x = unit(rng);
    if (x < share * 0.6) {
      t.set_node_state(h, random_bad_state(rng));
    } else if (x < share * 0.8) {
      const auto n = static_cast<std::uint32_t>(t.node(h).npus.size());
      (void)t.set_npu_state({h, static_cast<std::uint32_t>(rng() % n)}, random_bad_state(rng));
    } else if (x < share * 0.9) {
      const auto& npu = t.node(h).npus[rng() % t.node(h).npus.size()];
      t.set_link_state(npu.link, DeviceState::kIsolated);
    }
  }
  for (NodeId leaf : t.switches(Tier::kLeaf)) {
    const double x = unit(rng);
    if (x < share * 0.25) {
      t.set_node_state(leaf, random_bad_state(rng));
    } else if (x < share * 0.4) {
      for (auto l : t.node(leaf).uplinks) t.set_link_state(l, DeviceState::kIsolated);
    }
  }
  for (NodeId spine : t.switches(Tier::kSpine)) {
    if (unit(rng) < share * 0.3) t.set_node_state(spine, random_bad_state(rng));
  }
}

// The documented rules, read independently of the search code: a leaf is usable when healthy and, if it
// has uplinks, one healthy uplink reaches a healthy switch; an NPU when it, its host and its link allow
// (Topology::free_npu_indices) and its leaf is usable.
inline bool leaf_usable(const Topology& t, NodeId leaf) {
  const auto& n = t.node(leaf);
  if (n.state != DeviceState::kHealthy) return false;
  if (n.uplinks.empty()) return true;
  for (auto l : n.uplinks) {
    if (t.link(l).state == DeviceState::kHealthy && t.node(t.link(l).upper).state == DeviceState::kHealthy)
      return true;
  }
  return false;
}

inline std::vector<std::uint32_t> usable_npus(const Topology& t, NodeId host) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i : t.free_npu_indices(host)) {
    const auto* npu = t.npu({host, i});
    if (npu->link == topology::kNoLink || leaf_usable(t, t.link(npu->link).upper)) out.push_back(i);
  }
  return out;
}

}  // namespace hsns::search::testing
