// Path expansion of the full-path diagnosis (lib/brain/diagnose/path_expansion.h) on generated Clos
// topologies: every ECMP candidate (checked against a brute force over all choice vectors), the bound on
// the fan-out, isolated links, hops and their entity ids, and a job's planned paths (checked against the
// ECMP hash of the plan's source ports) with the fallback when the plan no longer fits the topology.
#include "brain/diagnose/path_expansion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "../scheduling/fixtures.h"
#include "scheduling/cost/clos_fabric.h"
#include "topology/generator.h"

namespace hsns::diagnose {
namespace {

using topology::NpuRef;
using topology::Topology;

Topology clos(const topology::ClosParams& p) {
  auto t = topology::generate_clos(p);
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message());
  return std::move(*t);
}

NpuRef npu(const Topology& t, const std::string& host, std::uint32_t index) {
  return {*t.find(host), index};
}

// Every distinct path Topology::path gives for any choice vector with entries below `width`: the
// exhaustive answer ecmp_paths must equal.
std::set<LinkPath> brute_force(const Topology& t, NpuRef a, NpuRef b, std::uint32_t width) {
  const auto first = t.path(a, b);
  EXPECT_TRUE(first.has_value());
  const std::size_t k = first->stages.size();
  std::set<LinkPath> out;
  std::vector<std::uint32_t> choice(k, 0);
  while (true) {
    auto p = t.path(a, b, choice);
    EXPECT_TRUE(p.has_value());
    out.insert(p->links);
    std::size_t i = 0;
    while (i < k && ++choice[i] == width) choice[i++] = 0;
    if (i == k) break;
  }
  return out;
}

// Consecutive links share a node, the path starts and ends at the NPUs' links.
void expect_connected(const Topology& t, const LinkPath& p, NpuRef a, NpuRef b) {
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.front(), t.npu(a)->link);
  EXPECT_EQ(p.back(), t.npu(b)->link);
  for (std::size_t i = 1; i < p.size(); ++i) {
    const auto& x = t.link(p[i - 1]);
    const auto& y = t.link(p[i]);
    EXPECT_TRUE(x.lower == y.lower || x.lower == y.upper || x.upper == y.lower || x.upper == y.upper)
        << "links " << p[i - 1] << " and " << p[i] << " do not meet";
  }
}

TEST(EcmpPaths, LeafSpineLeafHasOnePathPerSpineAndSevenHops) {
  const Topology t = clos(hsns::testing::small_cluster_params());  // 2 spines, one link per leaf-spine pair
  const auto a = npu(t, "host001", 0);
  const auto b = npu(t, "host003", 0);
  auto set = ecmp_paths(t, a, b);
  ASSERT_TRUE(set.has_value()) << set.error().message();
  EXPECT_FALSE(set->truncated);
  EXPECT_FALSE(set->planned);
  ASSERT_EQ(set->paths.size(), 2U);
  std::set<std::string> spines;
  for (const auto& p : set->paths) {
    ASSERT_EQ(p.size(), 4U);
    expect_connected(t, p, a, b);
    spines.insert(t.node(t.link(p[1]).upper).name);
  }
  EXPECT_EQ(spines, (std::set<std::string>{"spine00", "spine01"}));

  const auto hops = path_hops(t, set->paths[0]);
  ASSERT_EQ(hops.size(), 7U);
  const std::vector<HopKind> kinds = {HopKind::link, HopKind::device, HopKind::link, HopKind::device,
                                      HopKind::link, HopKind::device, HopKind::link};
  for (std::size_t i = 0; i < hops.size(); ++i) EXPECT_EQ(hops[i].kind, kinds[i]) << i;
  // host001's NPU 0 is cabled to leaf000's first host port; host003's NPU 0 to the second SU's leaf004.
  EXPECT_EQ(hops[0].entities, (std::vector<std::string>{"host001/eth0", "leaf000/Eth1/1"}));
  EXPECT_EQ(hops[0].key, "link:host001/eth0|leaf000/Eth1/1");
  EXPECT_EQ(hops[1].entities, std::vector<std::string>{"leaf000"});
  EXPECT_EQ(hops[1].key, "device:leaf000");
  EXPECT_EQ(hops[2].entities[0].rfind("leaf000/Eth2/", 0), 0U) << hops[2].entities[0];
  EXPECT_EQ(hops[3].entities[0].rfind("spine", 0), 0U);
  EXPECT_EQ(hops[5].entities, std::vector<std::string>{"leaf004"});
  EXPECT_EQ(hops[6].entities, (std::vector<std::string>{"host003/eth0", "leaf004/Eth1/1"}));
}

TEST(EcmpPaths, SameLeafAndSameHost) {
  const Topology t = clos(hsns::testing::small_cluster_params());
  auto leaf = ecmp_paths(t, npu(t, "host001", 1), npu(t, "host002", 1));
  ASSERT_TRUE(leaf.has_value());
  ASSERT_EQ(leaf->paths.size(), 1U);
  EXPECT_EQ(leaf->paths[0].size(), 2U);
  EXPECT_EQ(path_hops(t, leaf->paths[0]).size(), 3U);

  auto host = ecmp_paths(t, npu(t, "host001", 0), npu(t, "host001", 3));
  ASSERT_TRUE(host.has_value());
  ASSERT_EQ(host->paths.size(), 1U);
  EXPECT_TRUE(host->paths[0].empty());
  EXPECT_TRUE(path_hops(t, host->paths[0]).empty());
}

TEST(EcmpPaths, ParallelLinksMultiplyAndTheBoundTruncates) {
  auto p = hsns::testing::small_cluster_params();
  p.fabric_link_gbps = 200;  // two parallel links per leaf-spine pair
  const Topology t = clos(p);
  const auto a = npu(t, "host001", 2);
  const auto b = npu(t, "host004", 2);
  auto all = ecmp_paths(t, a, b);
  ASSERT_TRUE(all.has_value());
  // 2 spines x 2 links up x 2 links down.
  EXPECT_EQ(all->paths.size(), 8U);
  EXPECT_FALSE(all->truncated);
  const std::set<LinkPath> distinct(all->paths.begin(), all->paths.end());
  EXPECT_EQ(distinct.size(), 8U);
  EXPECT_EQ(distinct, brute_force(t, a, b, 8));

  auto three = ecmp_paths(t, a, b, 3);
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->paths.size(), 3U);
  EXPECT_TRUE(three->truncated);
  EXPECT_TRUE(std::equal(three->paths.begin(), three->paths.end(), all->paths.begin()));
  auto eight = ecmp_paths(t, a, b, 8);
  ASSERT_TRUE(eight.has_value());
  EXPECT_FALSE(eight->truncated);
}

TEST(EcmpPaths, ThreeTiersMatchTheBruteForce) {
  auto p = hsns::testing::clos_params(8, 2, 2, 2);
  p.superpods = 2;
  p.cores = 2;
  const Topology t = clos(p);
  for (const auto& [x, y] : std::vector<std::pair<std::string, std::string>>{
           {"host001", "host008"}, {"host001", "host004"}, {"host002", "host007"}}) {
    const auto a = npu(t, x, 1);
    const auto b = npu(t, y, 1);
    auto set = ecmp_paths(t, a, b, kMaxPathsLimit);
    ASSERT_TRUE(set.has_value()) << set.error().message();
    const std::set<LinkPath> got(set->paths.begin(), set->paths.end());
    EXPECT_EQ(got.size(), set->paths.size()) << "duplicates";
    EXPECT_EQ(got, brute_force(t, a, b, 8)) << x << " -> " << y;
    for (const auto& path : set->paths) expect_connected(t, path, a, b);
  }
}

TEST(EcmpPaths, IsolatedLinksAreNoCandidatesAndUnknownNpusAreErrors) {
  Topology t = clos(hsns::testing::small_cluster_params());
  const auto a = npu(t, "host001", 0);
  const auto b = npu(t, "host003", 0);
  const auto leaf = t.link(t.npu(a)->link).upper;
  t.set_link_state(t.node(leaf).uplinks.front(), topology::DeviceState::kIsolated);
  auto set = ecmp_paths(t, a, b);
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->paths.size(), 1U);
  EXPECT_NE(set->paths[0][1], t.node(leaf).uplinks.front());

  auto missing = ecmp_paths(t, a, {a.host, 99});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, Error::Kind::not_found);
  for (auto l : t.node(leaf).uplinks) t.set_link_state(l, topology::DeviceState::kIsolated);
  auto cut = ecmp_paths(t, a, b);
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().kind, Error::Kind::unprocessable);
}

placement::ScheduleRequest job_request(std::vector<std::string> hosts, std::uint32_t qps) {
  placement::ScheduleRequest r;
  r.job_name = "job-d";
  r.hosts = std::move(hosts);
  r.model = hsns::testing::small_model();
  r.parallel.tp = 4;
  r.parallel.dp = static_cast<std::uint32_t>(r.hosts.size());
  r.algorithm = cost::Algorithm::ring;
  r.qps_per_pair = qps;
  r.ecmp_seeds = 1;
  for (std::uint32_t h = 1; h <= 4; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    for (std::uint32_t n = 0; n < 4; ++n)
      r.npu_ips[{name, n}] = *IpAddress::parse("10.0." + std::to_string(h) + "." + std::to_string(n + 1));
  }
  return r;
}

TEST(PlannedPaths, FollowTheEcmpHashOfThePlannedSourcePorts) {
  auto p = hsns::testing::small_cluster_params();
  p.fabric_link_gbps = 200;  // parallel links: the plan chooses among 4 uplinks and 2 downlinks
  const Topology t = clos(p);
  auto schedule = placement::schedule_job(t, job_request({"host001", "host003"}, 2));
  ASSERT_TRUE(schedule.has_value()) << schedule.error().message();
  ASSERT_TRUE(schedule->route.modelled);
  const auto& fabric = schedule->route.fabric;
  auto pairs = job_pair_paths(t, *schedule, 1000);
  ASSERT_TRUE(pairs.has_value()) << pairs.error().message();
  EXPECT_FALSE(pairs->truncated);
  // DP ring over two hosts: each of the 4 local ranks sends to its peer on the other host, both ways.
  ASSERT_EQ(pairs->pairs.size(), 8U);
  const auto& ranks = schedule->placement.ranks;
  for (const auto& pair : pairs->pairs) {
    const NpuRef a{ranks[pair.src].host_id, ranks[pair.src].npu};
    const NpuRef b{ranks[pair.dst].host_id, ranks[pair.dst].npu};
    EXPECT_TRUE(pair.paths.planned) << pair.paths.note;
    ASSERT_GE(pair.paths.paths.size(), 1U);
    EXPECT_LE(pair.paths.paths.size(), 2U);  // one per QP, equal ones once
    auto ecmp = ecmp_paths(t, a, b);
    ASSERT_TRUE(ecmp.has_value());
    for (const auto& path : pair.paths.paths) {
      EXPECT_NE(std::find(ecmp->paths.begin(), ecmp->paths.end(), path), ecmp->paths.end())
          << "a planned path is an ECMP candidate";
    }
    // Each QP's planned spine is the one the leaf's hash of its source port picks (u % spines, spines in
    // ascending id), independently of the plan's own bookkeeping.
    const cost::PlannedFlow* flow = nullptr;
    for (const auto& f : schedule->route.comparison.plan.flows)
      if (f.demand.src_ip == ranks[pair.src].ip && f.demand.dst_ip == ranks[pair.dst].ip) flow = &f;
    ASSERT_NE(flow, nullptr);
    std::set<std::string> hashed_spines;
    for (auto port : flow->src_ports) {
      const auto hop = cost::route_inter_leaf(fabric, {ranks[pair.src].ip, ranks[pair.dst].ip, port});
      char spine[16];
      std::snprintf(spine, sizeof spine, "spine%02u", hop.spine);
      hashed_spines.insert(spine);
    }
    std::set<std::string> path_spines;
    for (const auto& path : pair.paths.paths) path_spines.insert(t.node(t.link(path[1]).upper).name);
    EXPECT_EQ(path_spines, hashed_spines);
  }
}

TEST(PlannedPaths, APlanThatNoLongerFitsFallsBackToEcmpWithTheReason) {
  Topology t = clos(hsns::testing::small_cluster_params());
  auto schedule = placement::schedule_job(t, job_request({"host001", "host003"}, 1));
  ASSERT_TRUE(schedule.has_value()) << schedule.error().message();
  // A leaf uplink isolated after scheduling: leaf000 reaches one spine, the plan counted two.
  const auto leaf0 = *t.find("leaf000");
  t.set_link_state(t.node(leaf0).uplinks.front(), topology::DeviceState::kIsolated);
  auto pairs = job_pair_paths(t, *schedule, 1000);
  ASSERT_TRUE(pairs.has_value()) << pairs.error().message();
  std::size_t fell_back = 0;
  for (const auto& pair : pairs->pairs) {
    if (schedule->placement.ranks[pair.src].host != "host001" || schedule->placement.ranks[pair.src].npu != 0)
      continue;
    ++fell_back;
    EXPECT_FALSE(pair.paths.planned);
    EXPECT_NE(pair.paths.note.find("leaf leaf000 reaches 1 spines now"), std::string::npos)
        << pair.paths.note;
    EXPECT_EQ(pair.paths.paths.size(), 1U);  // the one spine left
  }
  EXPECT_EQ(fell_back, 1U);
  // Back from leaf004 to leaf000: spine00 no longer reaches leaf000, a dead end for ECMP; spine01 is left.
  auto back = ecmp_paths(t, npu(t, "host003", 0), npu(t, "host001", 0));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->paths.size(), 1U);
  EXPECT_EQ(t.node(t.link(back->paths[0][1]).upper).name, "spine01");

  // The bound on pairs.
  auto two = job_pair_paths(t, *schedule, 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->pairs.size(), 2U);
  EXPECT_TRUE(two->truncated);

  // A pair that does not talk in the plan (ranks 0 and 1 share a host; 0 and 5 are no ring neighbours).
  auto other = rank_pair_paths(t, *schedule, 0, 5);
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(other->planned);
  EXPECT_EQ(other->note, "the pair does not communicate in the job's route plan");
  EXPECT_FALSE(rank_pair_paths(t, *schedule, 0, 99).has_value());
}

}  // namespace
}  // namespace hsns::diagnose
