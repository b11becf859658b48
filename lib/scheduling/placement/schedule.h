// Topology-aware scheduling of one training job on chosen hosts: rank placement, the launcher exports
// (HCCL rank table, hostfile, torchrun environment), the UDP source-port route plan of the job's inter-host
// collectives and its predicted communication time. The library core of POST /api/v1/schedule.
//
// Contract:
// - schedule_job() is pure and deterministic: the same topology and request give the same Schedule, byte
//   for byte in every export. Thread-safe (const topology only).
// - NPUs per host: `npus_per_host` (0 = every free NPU of each host; then all hosts must have the same
//   count). The lowest free NPU indices are used. World size N = hosts x NPUs per host and must equal
//   tp x cp x dp x pp (ep lies inside dp x cp and must divide it).
// - Host order (node rank): hosts sorted by (core domain, super-pod, scalable unit, host id), so consecutive
//   node ranks fill one scalable unit, then one super-pod, before the next. When a pipeline stage (the
//   tp x cp x dp ranks that hold every TP, CP and DP group of the stage) covers a whole number B > 1 of
//   hosts, each super-pod lists first every SU's whole blocks of B hosts, then the SUs' leftover hosts, so
//   that only leftover stages straddle scalable units. Ranks are consecutive per host:
//   rank r runs on host r / npus_per_host, NPU (r mod npus_per_host)-th of the host's used NPUs (the
//   torchrun / HCCL convention: local rank = position on the host).
// - Group membership follows the framework's rank order, fastest-varying dimension first:
//     megatron  tp, cp, dp, pp (Megatron-LM RankGenerator order "tp-cp-ep-dp-pp"; expert groups take ep
//               consecutive members of the combined cp x dp index, as Megatron's expert generator does)
//     pytorch   tp, cp, dp, pp (torch DeviceMesh ["pp", "dp", "cp", "tp"], row-major, as torchtitan)
//     deepspeed tp, cp, dp, pp (ProcessTopology axes ["pipe", "data", "model"], row-major; Ulysses
//               sequence-parallel groups are consecutive inside the data axis, here cp)
//     mindspore tp, cp, dp, pp (pipeline stage s = ranks [s N/pp, (s+1) N/pp); inside a stage the device
//               matrix (dp, cp, tp) row-major, tensor parallel fastest)
//   so TP groups are consecutive ranks (inside a host: tp must divide NPUs per host) and DP/PP groups
//   span as few domains as the host order allows. Every group lists global ranks in ascending order;
//   GroupSpan::tier is the lowest tier containing the group's hosts.
// - Route plan: the inter-host transfers of one DP all-reduce per DP group (all groups concurrently) and
//   one PP exchange (every stage s to s+1 forward, then s+1 to s backward), as phases; transfers between
//   NPUs of one host are dropped (they use the host's own interconnect). DP pairs by algorithm: ring and
//   tree: the group's ring in rank order (the tree is planned on its ring pairs); halving-doubling:
//   partner r xor n/2^k (DP size must be a power of two); hierarchical: one ring per local NPU position
//   (rail) over the group's hosts; auto: halving-doubling for a power-of-two DP size, else ring.
//   The fabric is the topology's leaf/spine layer as a hsns_cost ClosFabric: the job's leaves (the rail
//   leaf of each used NPU), numbered by ascending node id; uplinks per leaf, spines and speeds from the
//   topology (every used leaf must have the same healthy uplink count); the request's ECMP hash model at
//   leaves and spines. Core-tier hops are not modelled. Without a spine layer (no leaf uplinks) every
//   pair still gets its ports (the lowest of the range) and RoutePlanResult::modelled is false (times 0).
// - Bytes: one DP gradient collective (the first DP operation of cost::communication_volume, its buffer)
//   and one PP message (the PP send/recv buffer); predicted times are cost::compare_plan's simulated
//   seconds for those phases: planned ports vs the mean over `ecmp_seeds` random kernel ports vs a
//   non-blocking fabric.
// - Errors: an hsns::Error of kind unprocessable (the REST layer answers 422) names the request field
//   (field()) and says why (detail): "job_name"; "hosts" (empty, an NPU without a
//   leaf link, leaves with different uplink counts); "hosts[i]" (unknown, a switch, listed twice, not
//   healthy, too few or a different number of free NPUs); "parallel" (tp x cp x dp x pp != NPUs);
//   "parallel.tp" (does not divide the NPUs per host); "model.<field>" / "parallel.<size>" / "parallel"
//   (from cost::check, before anything else is computed from the sizes); "npu_ips[<host>:<npu>]"
//   (missing, duplicate, other address family); "algorithm"; "source_ports"; "ecmp_hash"; "qps_per_pair"
//   (also: rank pairs x QPs above cost::kMaxCollectiveTransfers); "parallel.dp" / "parallel.pp" (the DP
//   all-reduce's or the PP exchange's phases would pass cost::kMaxCollectiveTransfers transfers, counted
//   before they are built); "ecmp_seeds"; "master_port"; "route_plan" (hsns_cost).
// - Cost: dominated by cost::compare_plan (plan_routes plus 2 + ecmp_seeds simulations).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

#include "hsns/error.h"
#include "hsns/ip.h"
#include "scheduling/cost/collective_flows.h"
#include "scheduling/cost/collective_time.h"
#include "scheduling/cost/comm_volume.h"
#include "scheduling/cost/ecmp_hash.h"
#include "scheduling/cost/route_planner.h"
#include "topology/topology.h"

namespace hsns::placement {

enum class Framework { pytorch, megatron, deepspeed, mindspore };
std::string_view to_string(Framework f);
tl::expected<Framework, std::string> parse_framework(std::string_view text);

// Parallel dimensions of a placement.
enum class ParallelDim { tp, cp, dp, pp, ep };
std::string_view to_string(ParallelDim d);

// Which HCCL rank-table template to write: automatic = "1.2" when the topology has more than one
// super-pod (spine domain), else "1.0".
enum class RankTableVersion { automatic, v1_0, v1_2 };

// (host name, NPU index) -> the NPU port's IP address.
using NpuIpMap = std::map<std::pair<std::string, std::uint32_t>, IpAddress>;

struct ScheduleRequest {
  std::string job_name;
  std::vector<std::string> hosts;   // chosen hosts (any order; see the host-order rule)
  std::uint32_t npus_per_host = 0;  // 0 = every free NPU
  cost::ModelSpec model;
  cost::ParallelSpec parallel;
  cost::Algorithm algorithm = cost::Algorithm::automatic;
  Framework framework = Framework::megatron;
  NpuIpMap npu_ips;                           // every used NPU needs one
  std::map<std::string, IpAddress> host_ips;  // optional: host_nic_ip / host_ip, MASTER_ADDR
  cost::EcmpHashModel ecmp_hash;              // the switches' hash (leaf and spine)
  cost::PortRange source_ports;               // candidate UDP source ports
  std::uint32_t qps_per_pair = 1;
  std::uint32_t ecmp_seeds = 10;  // random-ECMP baseline draws
  std::uint16_t master_port = 29500;
  RankTableVersion rank_table_version = RankTableVersion::automatic;
};

struct RankSlot {
  std::uint32_t rank = 0;
  std::string host;
  topology::NodeId host_id = topology::kNoNode;
  std::uint32_t npu = 0;         // NPU index on the host (HCCL device_id)
  std::uint32_t local_rank = 0;  // position among the host's used NPUs
  std::uint32_t node_rank = 0;
  IpAddress ip;
  std::uint32_t leaf = 0;                        // job leaf index (see route plan contract)
  std::uint32_t tp = 0, cp = 0, dp = 0, pp = 0;  // coordinates in each dimension
};

struct Group {
  std::vector<std::uint32_t> ranks;  // ascending
  topology::Tier tier = topology::Tier::kHost;
};

struct HostEntry {
  std::string name;
  topology::NodeId id = topology::kNoNode;
  std::uint32_t node_rank = 0;
  std::vector<std::uint32_t> npus;  // used NPU indices, ascending
  std::uint32_t superpod = 0;       // spine-domain id
  std::uint32_t scalable_unit = 0;  // leaf-domain id
};

struct Placement {
  std::vector<HostEntry> hosts;                       // in node-rank order
  std::vector<RankSlot> ranks;                        // indexed by rank
  std::map<ParallelDim, std::vector<Group>> groups;   // every dimension, groups in order of first rank
  std::map<ParallelDim, topology::Tier> widest_span;  // highest tier any group of the dimension spans
};

struct TorchrunEnv {
  std::string host;
  std::string master_addr;
  std::uint16_t master_port = 0;
  std::uint32_t world_size = 0;
  std::uint32_t nnodes = 0;
  std::uint32_t node_rank = 0;
  std::uint32_t nproc_per_node = 0;
  std::uint32_t first_rank = 0;  // global ranks first_rank..last_rank run on this host
  std::uint32_t last_rank = 0;
  // "MASTER_ADDR=...\nMASTER_PORT=...\nWORLD_SIZE=...\nNNODES=...\nNODE_RANK=...\nNPROC_PER_NODE=...\n"
  // "RANK_RANGE=first-last\n" (shell-sourceable).
  std::string to_env() const;
};

struct RoutePlanResult {
  bool modelled = false;  // a spine layer existed and was planned over
  cost::ClosFabric fabric;
  std::vector<cost::Endpoint> endpoints;  // indexed by rank
  std::vector<cost::TransferPhase> phases;
  std::uint64_t dp_bytes = 0;
  std::uint64_t pp_bytes = 0;
  cost::PlanComparison comparison;  // comparison.plan is the plan; times 0 when not modelled
  std::string multiqp_cfg;          // MultiQpSrcPort.cfg
};

struct Schedule {
  std::string job_name;
  Framework framework = Framework::megatron;
  cost::Algorithm algorithm = cost::Algorithm::ring;  // resolved (never automatic)
  Placement placement;
  std::string rank_table_version;     // "1.0" or "1.2"
  std::string hccl_json;              // the rank table, pretty-printed JSON
  std::string hostfile;               // "host slots=N" lines
  std::vector<TorchrunEnv> torchrun;  // per host, node-rank order
  RoutePlanResult route;
};

Result<Schedule> schedule_job(const topology::Topology& topo, const ScheduleRequest& req);

// The NPUs schedule_job() would use on each requested host, by host name, in local-rank order (index k
// of a host's list is local rank k, the NPU's rail position), without needing npu_ips: lets a caller
// choose the NPUs' addresses before scheduling. Same host checks as schedule_job() (when they fail,
// schedule_job() fails too); nothing else of the request is checked.
Result<std::map<std::string, std::vector<std::uint32_t>>> used_npus(const topology::Topology& topo,
                                                                    const ScheduleRequest& req);

// Exports, usable on their own (exports.cpp).
std::string export_hccl_rank_table(const Placement& placement,
                                   const std::map<std::string, IpAddress>& host_ips,
                                   const std::string& version);
std::string export_hostfile(const Placement& placement);
std::vector<TorchrunEnv> torchrun_envs(const Placement& placement,
                                       const std::map<std::string, IpAddress>& host_ips,
                                       std::uint16_t master_port);

}  // namespace hsns::placement
