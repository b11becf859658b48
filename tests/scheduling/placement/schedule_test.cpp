// Topology-aware scheduling: rank placement per framework on hand-checked topologies, group spans, the
// HCCL rank table (v1.0, v1.2), hostfile, torchrun environment, MultiQpSrcPort.cfg grammar, the route
// plan on a rail-aligned DP all-reduce, determinism and every validation error.
#include "scheduling/placement/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../fixtures.h"
#include "topology/generator.h"

namespace hsns::placement {
namespace {

using topology::Tier;

topology::Topology clos(const topology::ClosParams& p) {
  auto t = topology::generate_clos(p);
  EXPECT_TRUE(t) << (t ? "" : t.error().detail);
  return std::move(*t);
}

// The shared small cluster (fixtures.h): SU0 = host001, host002; SU1 = host003, host004.
topology::Topology small() {
  return clos(hsns::testing::small_cluster_params());
}

// NPU n of host h (1-based) gets 10.0.h.n+1; hosts get 192.168.0.h.
NpuIpMap ips_for(std::uint32_t hosts, std::uint32_t npus) {
  NpuIpMap m;
  for (std::uint32_t h = 1; h <= hosts; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    for (std::uint32_t n = 0; n < npus; ++n) {
      m[{name, n}] = *IpAddress::parse("10.0." + std::to_string(h) + "." + std::to_string(n + 1));
    }
  }
  return m;
}

ScheduleRequest request(std::vector<std::string> hosts, cost::ParallelSpec par, std::uint32_t n_hosts = 4,
                        std::uint32_t npus = 4) {
  ScheduleRequest r;
  r.job_name = "job-a";
  r.hosts = std::move(hosts);
  r.model = hsns::testing::small_model();
  r.parallel = par;
  r.npu_ips = ips_for(n_hosts, npus);
  r.ecmp_seeds = 3;
  return r;
}

cost::ParallelSpec par(std::uint32_t tp, std::uint32_t cp, std::uint32_t dp, std::uint32_t pp,
                       std::uint32_t ep = 1) {
  cost::ParallelSpec p;
  p.tp = tp;
  p.cp = cp;
  p.dp = dp;
  p.pp = pp;
  p.ep = ep;
  return p;
}

std::vector<std::vector<std::uint32_t>> ranks_of(const std::vector<Group>& groups) {
  std::vector<std::vector<std::uint32_t>> out;
  out.reserve(groups.size());
  for (const auto& g : groups) out.push_back(g.ranks);
  return out;
}

using Groups = std::vector<std::vector<std::uint32_t>>;

class PerFramework : public ::testing::TestWithParam<Framework> {};

// tp 2, dp 4, pp 2 on 16 NPUs; hosts given out of order. Rank r -> host001 + r/4, NPU r%4 (hand table).
// Rank order tp, cp, dp, pp: tp = r%2, dp = (r/2)%4, pp = r/8.
TEST_P(PerFramework, RankTableAndGroupsOnHandCheckedTopology) {
  const auto topo = small();
  auto req = request({"host004", "host002", "host001", "host003"}, par(2, 1, 4, 2));
  req.framework = GetParam();
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  const auto& pl = s->placement;
  ASSERT_EQ(pl.hosts.size(), 4u);
  EXPECT_EQ(pl.hosts[0].name, "host001");
  EXPECT_EQ(pl.hosts[3].name, "host004");
  const std::vector<std::pair<std::string, std::uint32_t>> table{
      {"host001", 0}, {"host001", 1}, {"host001", 2}, {"host001", 3}, {"host002", 0}, {"host002", 1},
      {"host002", 2}, {"host002", 3}, {"host003", 0}, {"host003", 1}, {"host003", 2}, {"host003", 3},
      {"host004", 0}, {"host004", 1}, {"host004", 2}, {"host004", 3}};
  ASSERT_EQ(pl.ranks.size(), table.size());
  for (std::uint32_t r = 0; r < table.size(); ++r) {
    EXPECT_EQ(pl.ranks[r].rank, r);
    EXPECT_EQ(pl.ranks[r].host, table[r].first) << r;
    EXPECT_EQ(pl.ranks[r].npu, table[r].second) << r;
    EXPECT_EQ(pl.ranks[r].local_rank, r % 4);
    EXPECT_EQ(pl.ranks[r].node_rank, r / 4);
    EXPECT_EQ(pl.ranks[r].tp, r % 2);
    EXPECT_EQ(pl.ranks[r].dp, (r / 2) % 4);
    EXPECT_EQ(pl.ranks[r].pp, r / 8);
  }
  EXPECT_EQ(ranks_of(pl.groups.at(ParallelDim::tp)),
            (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(ranks_of(pl.groups.at(ParallelDim::dp)),
            (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  EXPECT_EQ(ranks_of(pl.groups.at(ParallelDim::pp)),
            (Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  EXPECT_EQ(pl.groups.at(ParallelDim::cp).size(), 16u);  // cp = 1: one rank each
  // Spans: TP inside a host, DP inside one scalable unit (leaf), PP across the two (spine).
  for (const auto& g : pl.groups.at(ParallelDim::tp)) EXPECT_EQ(g.tier, Tier::kHost);
  for (const auto& g : pl.groups.at(ParallelDim::dp)) EXPECT_EQ(g.tier, Tier::kLeaf);
  for (const auto& g : pl.groups.at(ParallelDim::pp)) EXPECT_EQ(g.tier, Tier::kSpine);
  EXPECT_EQ(pl.widest_span.at(ParallelDim::tp), Tier::kHost);
  EXPECT_EQ(pl.widest_span.at(ParallelDim::dp), Tier::kLeaf);
  EXPECT_EQ(pl.widest_span.at(ParallelDim::pp), Tier::kSpine);
}

INSTANTIATE_TEST_SUITE_P(Frameworks, PerFramework,
                         ::testing::Values(Framework::megatron, Framework::pytorch, Framework::deepspeed,
                                           Framework::mindspore),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// tp 2, cp 2, dp 2, pp 2: cp = (r/2)%2, dp = (r/4)%2, pp = r/8.
TEST(Placement, ContextParallelSitsBetweenTpAndDp) {
  const auto topo = small();
  auto s = schedule_job(topo, request({"host001", "host002", "host003", "host004"}, par(2, 2, 2, 2)));
  ASSERT_TRUE(s) << s.error().message();
  const auto& g = s->placement.groups;
  EXPECT_EQ(ranks_of(g.at(ParallelDim::cp)),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(ranks_of(g.at(ParallelDim::dp)),
            (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  for (const auto& grp : g.at(ParallelDim::cp)) EXPECT_EQ(grp.tier, Tier::kHost);
  for (const auto& grp : g.at(ParallelDim::dp)) EXPECT_EQ(grp.tier, Tier::kLeaf);
}

// MoE: ep 2 inside dp 4: expert groups are consecutive pairs of the DP index.
TEST(Placement, ExpertGroupsAreConsecutiveInsideDataParallel) {
  const auto topo = small();
  auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2, 2));
  req.model.moe_experts = 4;
  req.model.moe_top_k = 2;
  req.model.parameters = 8'000'000'000;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(ranks_of(s->placement.groups.at(ParallelDim::ep)),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
}

// Hosts of two scalable units interleaved in the request: node ranks fill SU0 first.
TEST(Placement, ConsecutiveRanksFillOneDomainFirst) {
  const auto topo = clos(hsns::testing::clos_params(8, 2, 4, 2));
  auto req =
      request({"host008", "host001", "host006", "host003", "host005", "host002"}, par(2, 1, 3, 2), 8, 2);
  req.model.global_batch = 3;
  req.model.layers = 8;
  req.algorithm = cost::Algorithm::ring;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<std::string> order;
  for (const auto& h : s->placement.hosts) order.push_back(h.name);
  EXPECT_EQ(order,
            (std::vector<std::string>{"host001", "host002", "host003", "host005", "host006", "host008"}));
  // DP groups {0,2,4},{1,3,5} sit in SU0; {6,8,10},{7,9,11} in SU1.
  for (const auto& g : s->placement.groups.at(ParallelDim::dp)) EXPECT_EQ(g.tier, Tier::kLeaf);
}

// SUs of 3 hosts; the job has host001 (SU0), host004 + host005 (SU1), host007 (SU2). A stage (tp 2 x dp 2
// = 4 ranks) covers 2 hosts: plain sorting would give stages {001, 004} and {005, 007}, both straddling
// SUs; block alignment puts SU1's whole block first: {004, 005} (one SU), then the leftovers {001, 007}.
TEST(Placement, StagesAlignToScalableUnits) {
  topology::ClosParams p;
  p.hosts = 9;
  p.npus_per_host = 2;
  p.hosts_per_su = 3;
  p.spines_per_plane = 2;
  const auto topo = clos(p);
  auto req = request({"host001", "host004", "host005", "host007"}, par(2, 1, 2, 2), 9, 2);
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<std::string> order;
  for (const auto& h : s->placement.hosts) order.push_back(h.name);
  EXPECT_EQ(order, (std::vector<std::string>{"host004", "host005", "host001", "host007"}));
  const auto& dp = s->placement.groups.at(ParallelDim::dp);
  ASSERT_EQ(ranks_of(dp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(dp[0].tier, Tier::kLeaf);
  EXPECT_EQ(dp[1].tier, Tier::kLeaf);
  EXPECT_EQ(dp[2].tier, Tier::kSpine);
}

TEST(Placement, UsesTheLowestFreeNpusWhenAskedForFewer) {
  auto topo = small();
  topo.set_npu_state({*topo.find("host001"), 0}, topology::DeviceState::kIsolated);
  auto req = request({"host001", "host002"}, par(1, 1, 4, 1));
  req.npus_per_host = 2;
  req.model.global_batch = 4;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->placement.hosts[0].npus, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(s->placement.hosts[1].npus, (std::vector<std::uint32_t>{0, 1}));
}

// ---- exports

TEST(Exports, HcclRankTableV10EveryField) {
  const auto topo = small();
  auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2));
  req.host_ips["host001"] = *IpAddress::parse("192.168.0.1");
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->rank_table_version, "1.0");
  const auto j = nlohmann::json::parse(s->hccl_json);
  EXPECT_EQ(j.size(), 4u);  // status, version, server_count, server_list
  EXPECT_EQ(j.at("status"), "completed");
  EXPECT_EQ(j.at("version"), "1.0");
  EXPECT_EQ(j.at("server_count"), "4");
  EXPECT_FALSE(j.contains("super_pod_list"));
  const auto& servers = j.at("server_list");
  ASSERT_EQ(servers.size(), 4u);
  for (std::size_t h = 0; h < 4; ++h) {
    const auto& srv = servers[h];
    EXPECT_EQ(srv.at("server_id"), "host00" + std::to_string(h + 1));
    if (h == 0) {
      EXPECT_EQ(srv.at("host_nic_ip"), "192.168.0.1");
      EXPECT_EQ(srv.size(), 3u);
    } else {
      EXPECT_FALSE(srv.contains("host_nic_ip"));
      EXPECT_EQ(srv.size(), 2u);
    }
    const auto& dev = srv.at("device");
    ASSERT_EQ(dev.size(), 4u);
    for (std::size_t n = 0; n < 4; ++n) {
      EXPECT_EQ(dev[n].size(), 3u);
      EXPECT_EQ(dev[n].at("device_id"), std::to_string(n));
      EXPECT_EQ(dev[n].at("device_ip"), "10.0." + std::to_string(h + 1) + "." + std::to_string(n + 1));
      EXPECT_EQ(dev[n].at("rank_id"), std::to_string(h * 4 + n));
    }
  }
}

TEST(Exports, HcclRankTableV12WhenSuperPodsExist) {
  topology::ClosParams p;
  p.hosts = 4;
  p.npus_per_host = 2;
  p.hosts_per_su = 1;
  p.spines_per_plane = 2;
  p.superpods = 2;
  p.cores = 2;
  const auto topo = clos(p);
  auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 1), 4, 2);
  req.host_ips["host003"] = *IpAddress::parse("192.168.0.3");
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->rank_table_version, "1.2");
  const auto j = nlohmann::json::parse(s->hccl_json);
  EXPECT_EQ(j.size(), 5u);
  EXPECT_EQ(j.at("status"), "completed");
  EXPECT_EQ(j.at("version"), "1.2");
  EXPECT_EQ(j.at("server_count"), "4");
  ASSERT_EQ(j.at("server_list").size(), 4u);
  EXPECT_EQ(j.at("server_list")[2].at("host_ip"), "192.168.0.3");
  EXPECT_FALSE(j.at("server_list")[2].contains("host_nic_ip"));
  EXPECT_EQ(j.at("server_list")[3].at("device")[1].at("rank_id"), "7");
  EXPECT_EQ(j.at("server_list")[3].at("device")[1].at("device_ip"), "10.0.4.2");
  // Super-pods split the 4 SUs evenly: host001, host002 in pod 0; host003, host004 in pod 1 (the ids are the
  // spine-domain ids, numbered by their lowest host).
  const auto& pods = j.at("super_pod_list");
  ASSERT_EQ(pods.size(), 2u);
  std::vector<std::vector<std::string>> members;
  for (const auto& pod : pods) {
    EXPECT_EQ(pod.size(), 2u);
    EXPECT_TRUE(pod.at("super_pod_id").is_string());
    std::vector<std::string> m;
    for (const auto& srv : pod.at("server_list")) {
      EXPECT_EQ(srv.size(), 1u);
      m.push_back(srv.at("server_id"));
    }
    members.push_back(m);
  }
  EXPECT_EQ(pods[0].at("super_pod_id"), "0");
  EXPECT_EQ(pods[1].at("super_pod_id"), "1");
  EXPECT_EQ(members, (std::vector<std::vector<std::string>>{{"host001", "host002"}, {"host003", "host004"}}));
  // Forcing 1.0 drops the super-pod list.
  req.rank_table_version = RankTableVersion::v1_0;
  auto s10 = schedule_job(topo, req);
  ASSERT_TRUE(s10);
  EXPECT_FALSE(nlohmann::json::parse(s10->hccl_json).contains("super_pod_list"));
  EXPECT_EQ(nlohmann::json::parse(s10->hccl_json).at("server_list")[2].at("host_nic_ip"), "192.168.0.3");
}

TEST(Exports, HostfileAndTorchrunEnvironment) {
  const auto topo = small();
  auto req = request({"host003", "host001"}, par(2, 1, 4, 1));
  req.model.global_batch = 4;
  req.host_ips["host001"] = *IpAddress::parse("192.168.0.1");
  req.master_port = 29600;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->hostfile, "host001 slots=4\nhost003 slots=4\n");
  ASSERT_EQ(s->torchrun.size(), 2u);
  EXPECT_EQ(s->torchrun[0].to_env(),
            "MASTER_ADDR=192.168.0.1\nMASTER_PORT=29600\nWORLD_SIZE=8\nNNODES=2\nNODE_RANK=0\n"
            "NPROC_PER_NODE=4\nRANK_RANGE=0-3\n");
  EXPECT_EQ(s->torchrun[1].host, "host003");
  EXPECT_EQ(s->torchrun[1].node_rank, 1u);
  EXPECT_EQ(s->torchrun[1].first_rank, 4u);
  EXPECT_EQ(s->torchrun[1].last_rank, 7u);
  EXPECT_EQ(s->torchrun[1].master_addr, "192.168.0.1");
  // Without host IPs, MASTER_ADDR is the first host's name.
  req.host_ips.clear();
  auto s2 = schedule_job(topo, req);
  ASSERT_TRUE(s2);
  EXPECT_EQ(s2->torchrun[1].master_addr, "host001");
}

TEST(Exports, MultiQpSrcPortCfgGrammar) {
  const auto topo = small();
  auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2));
  req.qps_per_pair = 2;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  const std::regex line(R"(^(\d+\.\d+\.\d+\.\d+),(\d+\.\d+\.\d+\.\d+)=(\d+),(\d+)$)");
  std::istringstream in(s->route.multiqp_cfg);
  std::string text;
  std::set<std::pair<std::string, std::string>> pairs;
  std::size_t lines = 0;
  while (std::getline(in, text)) {
    ++lines;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << text;
    EXPECT_TRUE(pairs.insert({m[1], m[2]}).second) << "duplicate pair " << text;
    // Inter-host only: the third octet is the host.
    EXPECT_NE(m[1].str().substr(0, 7), m[2].str().substr(0, 7)) << text;
    const int p0 = std::stoi(m[3]);
    const int p1 = std::stoi(m[4]);
    EXPECT_GE(p0, 0xC000);
    EXPECT_LE(p1, 0xFFFF);
    EXPECT_NE(p0, p1);
  }
  EXPECT_EQ(s->route.multiqp_cfg.back(), '\n');
  // DP halving-doubling (dp 4) in {0,2,4,6}: distance 2 crosses hosts (0<->4, 2<->6: 4 ordered pairs),
  // distance 1 (0<->2, 4<->6) stays inside a host; 4 DP groups -> 16 pairs. PP: 8 forward + 8 backward.
  EXPECT_EQ(lines, 16u + 16u);
  EXPECT_EQ(s->algorithm, cost::Algorithm::halving_doubling);
  EXPECT_TRUE(s->route.modelled);
}

// Inter-host DP pairs per algorithm on tp 2, dp 4, pp 2 (DP group {0,2,4,6}: ranks 0,2 on host001, 4,6 on
// host002). ring/tree: ring 0->2->4->6->0 crosses hosts at 2->4 and 6->0 (2 pairs per group); hierarchical:
// rails {0,4} and {2,6}, rings of two: 4 pairs per group. Plus 16 PP pairs.
TEST(RoutePlan, DpPairsPerAlgorithm) {
  const auto topo = small();
  const std::vector<std::pair<cost::Algorithm, std::size_t>> cases{
      {cost::Algorithm::ring, 8 + 16},
      {cost::Algorithm::tree, 8 + 16},
      {cost::Algorithm::hierarchical, 16 + 16},
      {cost::Algorithm::halving_doubling, 16 + 16}};
  for (const auto& [algorithm, pairs] : cases) {
    auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2));
    req.algorithm = algorithm;
    auto s = schedule_job(topo, req);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->algorithm, algorithm);
    EXPECT_EQ(s->route.comparison.plan.flows.size(), pairs) << cost::to_string(algorithm);
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (const auto& phase : s->route.phases) {
      for (const auto& t : phase) {
        EXPECT_NE(s->placement.ranks[t.src].host, s->placement.ranks[t.dst].host);
        seen.insert({t.src, t.dst});
      }
    }
    EXPECT_EQ(seen.size(), pairs);
    if (algorithm == cost::Algorithm::ring) {
      EXPECT_TRUE(seen.count({2, 4}) && seen.count({6, 0}) && seen.count({0, 8}) && seen.count({8, 0}));
    }
    if (algorithm == cost::Algorithm::hierarchical) {
      EXPECT_TRUE(seen.count({0, 4}) && seen.count({4, 0}) && seen.count({2, 6}) && seen.count({6, 2}));
    }
  }
  // auto: dp 4 is a power of two -> halving-doubling; dp 3 -> ring.
  auto req = request({"host001", "host002", "host003"}, par(2, 1, 3, 2));
  req.model.global_batch = 3;
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->algorithm, cost::Algorithm::ring);
}

// ---- route plan

Schedule rail_aligned(double oversubscription, std::uint32_t spines) {
  auto p = hsns::testing::clos_params(32, 8, 16, spines);
  p.leaf_oversubscription = oversubscription;
  const auto topo = clos(p);
  std::vector<std::string> hosts;
  for (std::uint32_t h = 1; h <= 32; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    hosts.emplace_back(name);
  }
  auto req = request(hosts, par(8, 1, 32, 1), 32, 8);
  req.model.global_batch = 32;
  req.algorithm = cost::Algorithm::halving_doubling;
  auto s = schedule_job(topo, req);
  EXPECT_TRUE(s) << (s ? "" : s.error().message());
  return std::move(*s);
}

TEST(RoutePlan, RailAlignedDpAllReduceOneToOne) {
  const auto s = rail_aligned(1.0, 16);
  const auto& r = s.route;
  ASSERT_TRUE(r.modelled);
  EXPECT_EQ(r.fabric.leaves, 16u);  // 2 SUs x 8 rails
  EXPECT_EQ(r.fabric.uplinks_per_leaf, 16u);
  EXPECT_EQ(r.fabric.ports_per_leaf, 16u);
  for (const auto& g : s.placement.groups.at(ParallelDim::dp)) {
    for (std::uint32_t rank : g.ranks)
      EXPECT_EQ(s.placement.ranks[rank].npu, s.placement.ranks[g.ranks[0]].npu);
  }
  EXPECT_EQ(r.comparison.lower_bound, 1u);
  EXPECT_EQ(r.comparison.planned_max_uplink_load, 1u);
  EXPECT_NEAR(r.comparison.planned_seconds, r.comparison.non_blocking_seconds,
              1e-9 * r.comparison.non_blocking_seconds);
  EXPECT_LE(r.comparison.planned_seconds, 0.7 * r.comparison.ecmp_mean_seconds);
}

TEST(RoutePlan, RailAlignedDpAllReduceTwoToOneReachesTheBound) {
  const auto s = rail_aligned(2.0, 8);
  const auto& r = s.route;
  ASSERT_TRUE(r.modelled);
  EXPECT_EQ(r.fabric.uplinks_per_leaf, 8u);
  EXPECT_EQ(r.comparison.lower_bound, 2u);
  EXPECT_EQ(r.comparison.planned_max_uplink_load, 2u);
  EXPECT_LE(r.comparison.planned_seconds, 0.7 * r.comparison.ecmp_mean_seconds);
}

TEST(RoutePlan, WithoutSpinesEveryPairStillGetsPorts) {
  topology::ClosParams p;
  p.hosts = 2;
  p.npus_per_host = 2;
  p.hosts_per_su = 2;
  p.spines_per_plane = 0;
  auto t = topology::generate_clos(p);
  ASSERT_TRUE(t) << t.error().detail;
  auto req = request({"host001", "host002"}, par(1, 1, 4, 1), 2, 2);
  req.model.global_batch = 4;
  auto s = schedule_job(*t, req);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_FALSE(s->route.modelled);
  // dp 4 halving-doubling over ranks 0,1 (host001) and 2,3 (host002): distance 2 crosses hosts.
  EXPECT_EQ(s->route.multiqp_cfg,
            "10.0.1.1,10.0.2.1=49152\n10.0.1.2,10.0.2.2=49152\n10.0.2.1,10.0.1.1=49152\n"
            "10.0.2.2,10.0.1.2=49152\n");
}

TEST(Schedule, DeterministicWhateverTheHostOrder) {
  const auto topo = small();
  auto a = schedule_job(topo, request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2)));
  auto b = schedule_job(topo, request({"host004", "host003", "host002", "host001"}, par(2, 1, 4, 2)));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->hccl_json, b->hccl_json);
  EXPECT_EQ(a->hostfile, b->hostfile);
  EXPECT_EQ(a->route.multiqp_cfg, b->route.multiqp_cfg);
  EXPECT_EQ(a->route.comparison.planned_seconds, b->route.comparison.planned_seconds);
  EXPECT_EQ(a->route.comparison.ecmp_mean_seconds, b->route.comparison.ecmp_mean_seconds);
}

// ---- validation: every error names its field

struct BadCase {
  const char* name;
  std::function<void(topology::Topology&, ScheduleRequest&)> mutate;
  const char* field;
};

class Validation : public ::testing::TestWithParam<BadCase> {};

TEST_P(Validation, NamesTheField) {
  auto topo = small();
  auto req = request({"host001", "host002", "host003", "host004"}, par(2, 1, 4, 2));
  GetParam().mutate(topo, req);
  auto s = schedule_job(topo, req);
  ASSERT_FALSE(s) << GetParam().name;
  EXPECT_EQ(s.error().field(), GetParam().field) << s.error().message();
  EXPECT_FALSE(s.error().detail.empty());
}

const BadCase kBad[] = {
    {"empty_job_name", [](auto&, auto& r) { r.job_name.clear(); }, "job_name"},
    {"no_hosts", [](auto&, auto& r) { r.hosts.clear(); }, "hosts"},
    {"unknown_host", [](auto&, auto& r) { r.hosts[2] = "nohost"; }, "hosts[2]"},
    {"switch_as_host", [](auto&, auto& r) { r.hosts[1] = "leaf000"; }, "hosts[1]"},
    {"duplicate_host", [](auto&, auto& r) { r.hosts[3] = "host001"; }, "hosts[3]"},
    {"allocated_host",
     [](auto& t, auto& r) {
       t.set_node_state(*t.find("host003"), topology::DeviceState::kAllocated);
       (void)r;
     },
     "hosts[2]"},
    {"unequal_free_npus",
     [](auto& t, auto&) {
       t.set_npu_state({*t.find("host004"), 3}, topology::DeviceState::kIsolated);
     },
     "hosts[3]"},
    {"too_few_free_npus", [](auto&, auto& r) { r.npus_per_host = 5; }, "hosts[0]"},
    {"product_mismatch",
     [](auto&, auto& r) {
       r.parallel.dp = 2;
       r.model.global_batch = 64;
     },
     "parallel"},
    {"tp_larger_than_host",
     [](auto&, auto& r) {
       r.parallel = par(8, 1, 2, 1);
       r.model.global_batch = 2;
     },
     "parallel.tp"},
    {"model_invalid", [](auto&, auto& r) { r.model.heads = 15; }, "model.hidden"},
    {"global_batch", [](auto&, auto& r) { r.model.global_batch = 6; }, "model.global_batch"},
    {"missing_npu_ip",
     [](auto&, auto& r) {
       r.npu_ips.erase({"host002", 3});
     },
     "npu_ips[host002:3]"},
    {"duplicate_npu_ip",
     [](auto&, auto& r) {
       r.npu_ips[{"host003", 1}] = *IpAddress::parse("10.0.1.1");
     },
     "npu_ips[host003:1]"},
    {"mixed_family",
     [](auto&, auto& r) {
       r.npu_ips[{"host004", 0}] = *IpAddress::parse("fd00::1");
     },
     "npu_ips[host004:0]"},
    {"zero_qps", [](auto&, auto& r) { r.qps_per_pair = 0; }, "qps_per_pair"},
    {"zero_seeds", [](auto&, auto& r) { r.ecmp_seeds = 0; }, "ecmp_seeds"},
    {"zero_master_port", [](auto&, auto& r) { r.master_port = 0; }, "master_port"},
    {"port_range_inverted",
     [](auto&, auto& r) {
       r.source_ports = {0xD000, 0xC000};
     },
     "source_ports"},
    {"port_range_too_small",
     [](auto&, auto& r) {
       r.source_ports = {0xC000, 0xC000};
       r.qps_per_pair = 2;
     },
     "source_ports"},
    {"hash_without_fields",
     [](auto&, auto& r) {
       r.ecmp_hash.fields = {false, false, false, false, false};
     },
     "ecmp_hash"},
    {"halving_doubling_not_power_of_two",
     [](auto&, auto& r) {
       r.hosts.pop_back();
       r.parallel = par(2, 1, 3, 2);
       r.model.global_batch = 3;
       r.algorithm = cost::Algorithm::halving_doubling;
     },
     "algorithm"},
};

INSTANTIATE_TEST_SUITE_P(Errors, Validation, ::testing::ValuesIn(kBad),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// used_npus: what schedule_job would take, per host in local-rank order, without npu_ips.
TEST(UsedNpus, LowestFreeIndicesPerHostAsScheduleJobTakesThem) {
  auto topo = small();
  ASSERT_TRUE(topo.set_npu_state({*topo.find("host002"), 0}, topology::DeviceState::kAllocated));
  auto req = request({"host002", "host001"}, par(1, 1, 4, 1));
  req.npus_per_host = 2;
  req.npu_ips.clear();
  auto used = used_npus(topo, req);
  ASSERT_TRUE(used) << used.error().message();
  const std::map<std::string, std::vector<std::uint32_t>> want{{"host001", {0, 1}}, {"host002", {1, 2}}};
  EXPECT_EQ(*used, want);
  req.npu_ips = ips_for(4, 4);
  auto s = schedule_job(topo, req);
  ASSERT_TRUE(s) << s.error().message();
  for (const auto& h : s->placement.hosts) EXPECT_EQ(h.npus, want.at(h.name)) << h.name;

  req.hosts = {"host001", "spine-missing"};
  auto bad = used_npus(topo, req);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field(), "hosts[1]");
}

TEST(Framework, ParsesEveryName) {
  for (auto f : {Framework::pytorch, Framework::megatron, Framework::deepspeed, Framework::mindspore}) {
    EXPECT_EQ(parse_framework(to_string(f)), f);
  }
  EXPECT_FALSE(parse_framework("tensorflow"));
}

// ---- a 1,024-NPU job: TP 8, DP 16, PP 8 = 128 hosts x 8 NPUs, halving-doubling + PP exchange.
// Correctness only (the latency is bench/schedule's): the plan reaches the fabric's bound, the planned
// exchange is no slower than random ECMP, and the schedule is the same whatever the host order.

struct BigJob {
  topology::Topology topo;
  std::vector<std::string> hosts;
};

// `total` hosts, `per_su` per scalable unit, 8 spines, 400G links; the job takes every `stride`-th host
// skipped (stride 0: all hosts), 128 hosts in all.
BigJob big_cluster(std::uint32_t total, std::uint32_t per_su, double oversubscription, std::uint32_t stride) {
  auto p = hsns::testing::clos_params(total, 8, per_su, 8);
  p.leaf_oversubscription = oversubscription;
  BigJob out{clos(p), {}};
  for (std::uint32_t h = 1; h <= total && out.hosts.size() < 128; ++h) {
    if (stride != 0 && h % stride == 0) continue;
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    out.hosts.emplace_back(name);
  }
  EXPECT_EQ(out.hosts.size(), 128u);
  return out;
}

ScheduleRequest big_request(std::vector<std::string> hosts, std::uint32_t total) {
  auto req = request(std::move(hosts), par(8, 1, 16, 8), total, 8);
  req.model.global_batch = 256;
  req.algorithm = cost::Algorithm::halving_doubling;
  req.ecmp_seeds = 2;
  return req;
}

void expect_plan_at_bound(const Schedule& s, std::uint32_t bound) {
  const auto& c = s.route.comparison;
  ASSERT_TRUE(s.route.modelled);
  EXPECT_EQ(s.placement.ranks.size(), 1024u);
  EXPECT_EQ(c.lower_bound, bound);
  EXPECT_EQ(c.planned_max_uplink_load, bound);
  EXPECT_LE(c.planned_seconds, c.ecmp_mean_seconds);
  EXPECT_GE(c.planned_seconds, c.non_blocking_seconds * (1 - 1e-12));
  // One MultiQpSrcPort.cfg line per planned pair, each pair's port in the RoCE range.
  const std::string& cfg = s.route.multiqp_cfg;
  EXPECT_EQ(static_cast<std::size_t>(std::count(cfg.begin(), cfg.end(), '\n')), c.plan.flows.size());
  for (const auto& pf : c.plan.flows) {
    ASSERT_EQ(pf.src_ports.size(), 1u);
    EXPECT_GE(pf.src_ports[0], 0xC000);
  }
}

TEST(RoutePlan, ThousandNpuJobReachesTheBoundAndIsDeterministic) {
  const auto one = big_cluster(128, 16, 1.0, 0);
  auto a = schedule_job(one.topo, big_request(one.hosts, 128));
  ASSERT_TRUE(a) << a.error().message();
  expect_plan_at_bound(*a, 1);
  // 16 hosts per leaf, 16 uplinks: DP stays on its rail leaf; PP stage s -> s+1 crosses the spines.
  EXPECT_EQ(a->route.fabric.leaves, 64u);
  EXPECT_EQ(a->route.fabric.uplinks_per_leaf, 16u);
  std::vector<std::string> reversed(one.hosts.rbegin(), one.hosts.rend());
  auto b = schedule_job(one.topo, big_request(reversed, 128));
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(a->route.multiqp_cfg, b->route.multiqp_cfg);
  EXPECT_EQ(a->hccl_json, b->hccl_json);
  EXPECT_EQ(a->route.comparison.planned_seconds, b->route.comparison.planned_seconds);
  EXPECT_EQ(a->route.comparison.ecmp_mean_seconds, b->route.comparison.ecmp_mean_seconds);
}

TEST(RoutePlan, ThousandNpuJobAtTwoToOneReachesTheBound) {
  const auto two = big_cluster(128, 16, 2.0, 0);
  auto s = schedule_job(two.topo, big_request(two.hosts, 128));
  ASSERT_TRUE(s) << s.error().message();
  expect_plan_at_bound(*s, 2);  // 16 flows leave each leaf per phase over 8 uplinks
  EXPECT_EQ(s->route.fabric.uplinks_per_leaf, 8u);
}

TEST(RoutePlan, ThousandNpuJobOnAFragmentedClusterReachesTheBound) {
  // 192 hosts in SUs of 32, every third host taken by someone else: 21-22 job hosts per leaf, 32 uplinks.
  const auto sparse = big_cluster(192, 32, 1.0, 3);
  auto s = schedule_job(sparse.topo, big_request(sparse.hosts, 192));
  ASSERT_TRUE(s) << s.error().message();
  expect_plan_at_bound(*s, 1);
}

// A ring DP all-reduce over 1,456 ranks is 2 x 1,455 x 1,456 = 4.2 million transfers, more than the route
// planner accepts (2^22): refused naming parallel.dp before the phases are built, instead of allocating
// them (a 10,000-host cluster would have taken billions). The wrapped-product siblings of the reported
// pp x virtual_stages case are refused by cost::check first.
TEST(Schedule, DerivedCountsAreBoundedBeforeAllocating) {
  const topology::Topology t = clos(hsns::testing::clos_params(182, 8, 26, 2));
  std::vector<std::string> hosts;
  for (std::uint32_t h = 1; h <= 182; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "host%03u", h);
    hosts.push_back(name);
  }
  ScheduleRequest r = request(hosts, par(1, 1, 1456, 1), 182, 8);
  r.model.global_batch = 1456;
  r.algorithm = cost::Algorithm::ring;
  auto s = schedule_job(t, r);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().field(), "parallel.dp") << s.error().message();

  ScheduleRequest wrap = request({"host001"}, par(1, 1, 1, 65536));
  wrap.model.layers = 65536;
  wrap.parallel.virtual_stages = 65536;
  auto w = schedule_job(t, wrap);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().field(), "parallel.virtual_stages");
  wrap = request({"host001"}, par(1u << 20, 1u << 20, 1u << 20, 1u << 20));
  w = schedule_job(t, wrap);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().field(), "parallel");
}

}  // namespace
}  // namespace hsns::placement
