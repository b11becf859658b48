#include "scheduling/placement/schedule.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "hsns/checked_math.h"

namespace hsns::placement {

using topology::NodeId;
using topology::Tier;

std::string_view to_string(Framework f) {
  switch (f) {
    case Framework::pytorch:
      return "pytorch";
    case Framework::megatron:
      return "megatron";
    case Framework::deepspeed:
      return "deepspeed";
    case Framework::mindspore:
      return "mindspore";
  }
  return "unknown";
}

tl::expected<Framework, std::string> parse_framework(std::string_view text) {
  for (auto f : {Framework::pytorch, Framework::megatron, Framework::deepspeed, Framework::mindspore}) {
    if (text == to_string(f)) return f;
  }
  return tl::unexpected("unknown framework \"" + std::string(text) +
                        "\" (expected pytorch, megatron, deepspeed or mindspore)");
}

std::string_view to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::tp:
      return "tp";
    case ParallelDim::cp:
      return "cp";
    case ParallelDim::dp:
      return "dp";
    case ParallelDim::pp:
      return "pp";
    case ParallelDim::ep:
      return "ep";
  }
  return "unknown";
}

namespace {

tl::unexpected<Error> fail(std::string field, std::string reason) {
  return tl::unexpected(Error::unprocessable(std::move(field), std::move(reason)));
}

bool power_of_two(std::uint32_t n) {
  return n >= 1 && (n & (n - 1)) == 0;
}

// The rank order of a framework, fastest-varying dimension first (see the header's table). All four
// conventions put tensor parallel fastest and pipeline slowest; they are kept apart so that a framework
// whose convention differs can be changed in one place.
std::array<ParallelDim, 4> rank_order(Framework f) {
  switch (f) {
    case Framework::megatron:   // RankGenerator order "tp-cp-ep-dp-pp"
    case Framework::pytorch:    // DeviceMesh ["pp", "dp", "cp", "tp"]
    case Framework::deepspeed:  // ProcessTopology ["pipe", "data", "model"], Ulysses inside data
    case Framework::mindspore:  // stage-major, device matrix (dp, cp, tp)
      break;
  }
  return {ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp};
}

std::uint32_t size_of(const cost::ParallelSpec& p, ParallelDim d) {
  switch (d) {
    case ParallelDim::tp:
      return p.tp;
    case ParallelDim::cp:
      return p.cp;
    case ParallelDim::dp:
      return p.dp;
    case ParallelDim::pp:
      return p.pp;
    case ParallelDim::ep:
      return p.ep;
  }
  return 1;
}

std::uint32_t& coord_of(RankSlot& s, ParallelDim d) {
  switch (d) {
    case ParallelDim::tp:
      return s.tp;
    case ParallelDim::cp:
      return s.cp;
    case ParallelDim::dp:
      return s.dp;
    case ParallelDim::pp:
    case ParallelDim::ep:
      break;
  }
  return s.pp;
}

// Validation that needs no topology.
Result<void> check_request(const ScheduleRequest& req) {
  if (req.job_name.empty()) return fail("job_name", "must not be empty");
  if (req.hosts.empty()) return fail("hosts", "at least one host is required");
  if (req.qps_per_pair == 0) return fail("qps_per_pair", "must be >= 1");
  if (req.ecmp_seeds == 0) return fail("ecmp_seeds", "must be >= 1");
  if (req.master_port == 0) return fail("master_port", "must be in 1..65535");
  if (req.source_ports.first > req.source_ports.last) return fail("source_ports", "first > last");
  if (static_cast<std::uint32_t>(req.source_ports.last) - req.source_ports.first + 1 < req.qps_per_pair) {
    return fail("source_ports", "the range holds fewer ports than qps_per_pair");
  }
  if (auto ok = cost::validate(req.ecmp_hash); !ok) return fail("ecmp_hash", ok.error());
  // Bounds the parallel sizes and their products (world size <= 2^24, ...) used below.
  if (auto ok = cost::check(req.model, req.parallel); !ok) return fail(ok.error().field(), ok.error().detail);
  return {};
}

// Resolves, checks and sorts the hosts by (core domain, super-pod, scalable unit, id).
Result<std::vector<HostEntry>> resolve_hosts(const topology::Topology& topo, const ScheduleRequest& req) {
  std::vector<HostEntry> hosts;
  std::set<NodeId> seen;
  std::optional<std::uint32_t> common;
  for (std::size_t i = 0; i < req.hosts.size(); ++i) {
    const std::string field = "hosts[" + std::to_string(i) + "]";
    const auto& name = req.hosts[i];
    auto id = topo.find(name);
    if (!id) return fail(field, "unknown host \"" + name + "\"");
    const auto& node = topo.node(*id);
    if (node.tier != Tier::kHost) return fail(field, "\"" + name + "\" is a switch, not a host");
    if (!seen.insert(*id).second) return fail(field, "host \"" + name + "\" is listed twice");
    if (node.state != topology::DeviceState::kHealthy) {
      return fail(field, "host \"" + name + "\" is " + std::string(topology::to_string(node.state)));
    }
    auto free = topo.free_npu_indices(*id);
    const auto have = static_cast<std::uint32_t>(free.size());
    if (req.npus_per_host > 0) {
      if (have < req.npus_per_host) {
        return fail(field, "host \"" + name + "\" has " + std::to_string(have) + " free NPUs, " +
                               std::to_string(req.npus_per_host) + " are needed");
      }
      free.resize(req.npus_per_host);
    } else if (common && *common != have) {
      return fail(field, "host \"" + name + "\" has " + std::to_string(have) +
                             " free NPUs, the hosts before it " + std::to_string(*common) +
                             " (set npus_per_host)");
    }
    if (free.empty()) return fail(field, "host \"" + name + "\" has no free NPU");
    common = have;
    HostEntry h;
    h.name = name;
    h.id = *id;
    h.npus = std::move(free);
    h.superpod = topo.domain(*id, Tier::kSpine);
    h.scalable_unit = topo.domain(*id, Tier::kLeaf);
    hosts.push_back(std::move(h));
  }
  std::sort(hosts.begin(), hosts.end(), [&](const HostEntry& a, const HostEntry& b) {
    return std::make_tuple(topo.domain(a.id, Tier::kCore), a.superpod, a.scalable_unit, a.id) <
           std::make_tuple(topo.domain(b.id, Tier::kCore), b.superpod, b.scalable_unit, b.id);
  });
  return hosts;
}

// Block alignment: `block` consecutive hosts form one pipeline stage (its DP/CP groups). Inside each
// super-pod, every scalable unit contributes its whole blocks in order; the hosts left over (fewer than a
// block per SU) follow at the end of the super-pod, so that only leftover blocks straddle SUs.
void align_blocks(std::vector<HostEntry>& hosts, std::size_t block) {
  if (block <= 1) return;
  std::vector<HostEntry> out;
  std::vector<HostEntry> leftover;
  std::size_t i = 0;
  while (i < hosts.size()) {
    const std::uint32_t pod = hosts[i].superpod;
    std::size_t j = i;
    while (j < hosts.size() && hosts[j].superpod == pod) {
      std::size_t k = j;
      while (k < hosts.size() && hosts[k].superpod == pod && hosts[k].scalable_unit == hosts[j].scalable_unit)
        ++k;
      const std::size_t whole = (k - j) / block * block;
      for (std::size_t m = j; m < k; ++m) (m < j + whole ? out : leftover).push_back(std::move(hosts[m]));
      j = k;
    }
    for (auto& h : leftover) out.push_back(std::move(h));
    leftover.clear();
    i = j;
  }
  hosts = std::move(out);
}

std::string npu_field(const std::string& host, std::uint32_t npu) {
  return "npu_ips[" + host + ":" + std::to_string(npu) + "]";
}

// Ranks, coordinates and leaves. Leaves are numbered by ascending node id among the job's leaves.
Result<void> assign_ranks(const topology::Topology& topo, const ScheduleRequest& req, Placement& pl,
                          std::vector<NodeId>& leaves) {
  const auto order = rank_order(req.framework);
  std::set<IpAddress> ips;
  std::optional<IpFamily> family;
  std::uint32_t rank = 0;
  std::vector<NodeId> leaf_of_rank;
  for (const auto& h : pl.hosts) {
    for (std::uint32_t local = 0; local < h.npus.size(); ++local, ++rank) {
      RankSlot s;
      s.rank = rank;
      s.host = h.name;
      s.host_id = h.id;
      s.npu = h.npus[local];
      s.local_rank = local;
      s.node_rank = h.node_rank;
      auto it = req.npu_ips.find({h.name, s.npu});
      if (it == req.npu_ips.end()) return fail(npu_field(h.name, s.npu), "no IP address for this NPU");
      if (family && *family != it->second.family()) {
        return fail(npu_field(h.name, s.npu), "address family differs from the other NPUs");
      }
      family = it->second.family();
      if (!ips.insert(it->second).second) {
        return fail(npu_field(h.name, s.npu), it->second.to_string() + " is used by another NPU");
      }
      s.ip = it->second;
      const auto* npu = topo.npu({h.id, s.npu});
      if (npu == nullptr || npu->link == topology::kNoLink) {
        return fail("hosts", "NPU " + std::to_string(s.npu) + " of \"" + h.name + "\" has no link to a leaf");
      }
      leaf_of_rank.push_back(topo.link(npu->link).upper);
      std::uint32_t rest = rank;
      for (ParallelDim d : order) {
        const std::uint32_t n = size_of(req.parallel, d);
        coord_of(s, d) = rest % n;
        rest /= n;
      }
      pl.ranks.push_back(std::move(s));
    }
  }
  leaves = leaf_of_rank;
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  for (std::size_t r = 0; r < pl.ranks.size(); ++r) {
    pl.ranks[r].leaf = static_cast<std::uint32_t>(
        std::lower_bound(leaves.begin(), leaves.end(), leaf_of_rank[r]) - leaves.begin());
  }
  return {};
}

void build_groups(const topology::Topology& topo, const cost::ParallelSpec& par, Placement& pl) {
  // key: the coordinates that stay fixed inside a group of the dimension.
  auto key_of = [&](const RankSlot& s, ParallelDim d) -> std::array<std::uint32_t, 4> {
    switch (d) {
      case ParallelDim::tp:
        return {s.cp, s.dp, s.pp, 0};
      case ParallelDim::cp:
        return {s.tp, s.dp, s.pp, 0};
      case ParallelDim::dp:
        return {s.tp, s.cp, s.pp, 0};
      case ParallelDim::pp:
        return {s.tp, s.cp, s.dp, 0};
      case ParallelDim::ep:
        // ep consecutive members of the combined (cp fastest, then dp) index.
        return {s.tp, s.pp, (s.cp + par.cp * s.dp) / par.ep, 1};
    }
    return {};
  };
  for (ParallelDim d :
       {ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp, ParallelDim::ep}) {
    std::map<std::array<std::uint32_t, 4>, std::size_t> index;
    std::vector<Group> groups;
    for (const auto& s : pl.ranks) {
      auto [it, added] = index.emplace(key_of(s, d), groups.size());
      if (added) groups.emplace_back();
      groups[it->second].ranks.push_back(s.rank);
    }
    Tier widest = Tier::kHost;
    for (auto& g : groups) {
      std::vector<NodeId> hosts;
      for (std::uint32_t r : g.ranks) hosts.push_back(pl.ranks[r].host_id);
      std::sort(hosts.begin(), hosts.end());
      hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
      g.tier = topo.lowest_common_tier(hosts).value_or(topo.top_tier());
      widest = std::max(widest, g.tier);
    }
    pl.widest_span[d] = widest;
    pl.groups[d] = std::move(groups);
  }
}

// Maps a group-local phase list onto global ranks and merges it into `into` phase by phase.
void merge_phases(std::vector<cost::TransferPhase>& into, const std::vector<cost::TransferPhase>& local,
                  const std::vector<std::uint32_t>& members, std::size_t offset) {
  if (into.size() < offset + local.size()) into.resize(offset + local.size());
  for (std::size_t p = 0; p < local.size(); ++p) {
    for (const auto& t : local[p]) into[offset + p].push_back({members[t.src], members[t.dst], t.bytes});
  }
}

// The transfers of the route plan's phases, counted before each batch is built: a request whose plan would
// exceed what the simulator accepts is refused before the memory is allocated (a ring over a DP group of
// n ranks is 2(n-1) x n transfers).
class TransferBudget {
 public:
  // False (and nothing taken) when n more transfers would pass cost::kMaxCollectiveTransfers.
  bool take(std::uint64_t n) {
    const auto total = checked_add(used_, n);
    if (!total || *total > cost::kMaxCollectiveTransfers) return false;
    used_ = *total;
    return true;
  }
  std::string exceeded(const char* what) const {
    return std::string(what) + " needs more than the " + std::to_string(cost::kMaxCollectiveTransfers) +
           " transfers the route planner accepts";
  }

 private:
  std::uint64_t used_ = 0;
};

Result<std::vector<cost::TransferPhase>> dp_phases(const Placement& pl, cost::Algorithm algorithm,
                                                   double bytes, TransferBudget& budget) {
  const auto too_large = [&] {
    return fail("parallel.dp", budget.exceeded("the route plan of the DP all-reduce") +
                                   " (use algorithm halving-doubling or hierarchical, or a smaller dp)");
  };
  std::vector<cost::TransferPhase> phases;
  for (const auto& g : pl.groups.at(ParallelDim::dp)) {
    const auto n = static_cast<std::uint32_t>(g.ranks.size());
    if (n < 2) continue;
    if (algorithm == cost::Algorithm::hierarchical) {
      // One ring per local position over the group's hosts.
      std::map<std::uint32_t, std::vector<std::uint32_t>> by_host;
      for (std::uint32_t r : g.ranks) by_host[pl.ranks[r].node_rank].push_back(r);
      const std::size_t per_host = by_host.begin()->second.size();
      if (by_host.size() < 2) continue;
      const auto rail_transfers = cost::ring_all_reduce_transfers(static_cast<std::uint32_t>(by_host.size()));
      if (!budget.take(saturating_mul(rail_transfers, per_host))) return too_large();
      for (std::size_t k = 0; k < per_host; ++k) {
        std::vector<std::uint32_t> rail;
        for (const auto& [node, ranks] : by_host) rail.push_back(ranks.at(k));
        auto local = cost::ring_all_reduce_phases(static_cast<std::uint32_t>(rail.size()),
                                                  bytes / static_cast<double>(per_host));
        if (!local) return fail("algorithm", local.error());
        merge_phases(phases, *local, rail, 0);
      }
      continue;
    }
    const bool hd = algorithm == cost::Algorithm::halving_doubling;
    if (!budget.take(hd ? cost::halving_doubling_all_reduce_transfers(n)
                        : cost::ring_all_reduce_transfers(n))) {
      return too_large();
    }
    auto local =
        hd ? cost::halving_doubling_all_reduce_phases(n, bytes) : cost::ring_all_reduce_phases(n, bytes);
    if (!local) return fail("algorithm", local.error());
    merge_phases(phases, *local, g.ranks, 0);
  }
  return phases;
}

Result<std::vector<cost::TransferPhase>> pp_phases(const Placement& pl, double bytes,
                                                   TransferBudget& budget) {
  std::uint64_t sends = 0;  // one per stage boundary of every group, forward and backward
  for (const auto& g : pl.groups.at(ParallelDim::pp)) sends += g.ranks.empty() ? 0 : 2 * (g.ranks.size() - 1);
  if (!budget.take(sends)) return fail("parallel.pp", budget.exceeded("the route plan of the PP exchange"));
  cost::TransferPhase forward;
  cost::TransferPhase backward;
  forward.reserve(sends / 2);
  backward.reserve(sends / 2);
  for (const auto& g : pl.groups.at(ParallelDim::pp)) {
    for (std::size_t s = 0; s + 1 < g.ranks.size(); ++s) {
      forward.push_back({g.ranks[s], g.ranks[s + 1], bytes});
      backward.push_back({g.ranks[s + 1], g.ranks[s], bytes});
    }
  }
  std::vector<cost::TransferPhase> out;
  if (!forward.empty()) {
    out.push_back(std::move(forward));
    out.push_back(std::move(backward));
  }
  return out;
}

// The job's leaves as a ClosFabric; nullopt without a spine layer.
Result<std::optional<cost::ClosFabric>> fabric_of(const topology::Topology& topo,
                                                  const std::vector<NodeId>& leaves, const Placement& pl,
                                                  const cost::EcmpHashModel& hash) {
  cost::ClosFabric f;
  f.leaves = static_cast<std::uint32_t>(leaves.size());
  f.leaf_hash = hash;
  f.spine_hash = hash;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const auto& leaf = topo.node(leaves[i]);
    std::uint32_t up = 0;
    std::set<NodeId> spines;
    double gbps = 0;
    for (auto l : leaf.uplinks) {
      const auto& link = topo.link(l);
      if (link.state == topology::DeviceState::kIsolated) continue;
      ++up;
      spines.insert(link.upper);
      gbps = link.bandwidth_gbps;
    }
    if (up == 0) return std::optional<cost::ClosFabric>{};
    const auto ports = static_cast<std::uint32_t>(leaf.downlinks.size());
    if (i == 0) {
      f.uplinks_per_leaf = up;
      f.spines = static_cast<std::uint32_t>(spines.size());
      f.uplink_gbps = gbps;
    } else if (up != f.uplinks_per_leaf || spines.size() != f.spines) {
      return fail("hosts", "leaf \"" + leaf.name + "\" has " + std::to_string(up) + " usable uplinks to " +
                               std::to_string(spines.size()) + " spines, leaf \"" +
                               topo.node(leaves[0]).name + "\" " + std::to_string(f.uplinks_per_leaf) +
                               " to " + std::to_string(f.spines) +
                               ": the route planner needs a uniform fabric");
    }
    f.ports_per_leaf = std::max(f.ports_per_leaf, ports);
  }
  const auto* npu = topo.npu({pl.ranks.front().host_id, pl.ranks.front().npu});
  f.port_gbps = topo.link(npu->link).bandwidth_gbps;
  if (f.uplinks_per_leaf % f.spines != 0) {
    return fail("hosts", "leaf uplinks are not spread evenly over the spines");
  }
  if (auto ok = cost::validate(f); !ok) return fail("hosts", "fabric: " + ok.error());
  return std::optional<cost::ClosFabric>{f};
}

Result<RoutePlanResult> plan(const topology::Topology& topo, const ScheduleRequest& req, const Placement& pl,
                             const std::vector<NodeId>& leaves, cost::Algorithm algorithm) {
  RoutePlanResult out;
  auto volume = cost::communication_volume(req.model, req.parallel);
  if (!volume) return fail("model", volume.error());
  for (const auto& op : volume->ops) {
    if (op.dim == cost::Dimension::dp && out.dp_bytes == 0) out.dp_bytes = op.bytes;
    if (op.dim == cost::Dimension::pp && out.pp_bytes == 0) out.pp_bytes = op.bytes;
  }
  TransferBudget budget;
  auto dp = dp_phases(pl, algorithm, static_cast<double>(out.dp_bytes), budget);
  if (!dp) return tl::unexpected(dp.error());
  std::vector<cost::TransferPhase> all = std::move(*dp);
  auto pp = pp_phases(pl, static_cast<double>(out.pp_bytes), budget);
  if (!pp) return tl::unexpected(pp.error());
  for (auto& p : *pp) all.push_back(std::move(p));
  // Only inter-host transfers use the fabric.
  for (auto& phase : all) {
    cost::TransferPhase kept;
    for (const auto& t : phase) {
      if (pl.ranks[t.src].host_id != pl.ranks[t.dst].host_id) kept.push_back(t);
    }
    if (!kept.empty()) out.phases.push_back(std::move(kept));
  }
  for (const auto& s : pl.ranks) out.endpoints.push_back({s.ip, s.leaf});
  if (out.phases.empty()) return out;
  // The rank pairs times their QPs bound every sub-flow list the planner and the simulator build.
  auto demands = cost::demands_of(out.endpoints, out.phases, req.qps_per_pair);
  if (!demands) return fail("qps_per_pair", demands.error());

  auto fabric = fabric_of(topo, leaves, pl, req.ecmp_hash);
  if (!fabric) return tl::unexpected(fabric.error());
  if (*fabric) {
    out.modelled = true;
    out.fabric = **fabric;
    auto c = cost::compare_plan(out.fabric, out.endpoints, out.phases, req.qps_per_pair, req.ecmp_seeds,
                                req.source_ports);
    if (!c) return fail("route_plan", c.error());
    out.comparison = std::move(*c);
  } else {
    for (auto& d : *demands) {
      cost::PlannedFlow pf;
      pf.demand = std::move(d);
      for (std::uint32_t q = 0; q < pf.demand.qps; ++q) {
        pf.src_ports.push_back(static_cast<std::uint16_t>(req.source_ports.first + q));
      }
      out.comparison.plan.flows.push_back(std::move(pf));
    }
  }
  out.multiqp_cfg = cost::export_multiqp_cfg(out.comparison.plan);
  return out;
}

}  // namespace

Result<std::map<std::string, std::vector<std::uint32_t>>> used_npus(const topology::Topology& topo,
                                                                    const ScheduleRequest& req) {
  auto hosts = resolve_hosts(topo, req);
  if (!hosts) return tl::unexpected(hosts.error());
  std::map<std::string, std::vector<std::uint32_t>> out;
  for (auto& h : *hosts) out.emplace(std::move(h.name), std::move(h.npus));
  return out;
}

Result<Schedule> schedule_job(const topology::Topology& topo, const ScheduleRequest& req) {
  if (auto ok = check_request(req); !ok) return tl::unexpected(ok.error());
  auto hosts = resolve_hosts(topo, req);
  if (!hosts) return tl::unexpected(hosts.error());
  const auto nproc = static_cast<std::uint32_t>(hosts->front().npus.size());
  const auto& par = req.parallel;
  // check_request() bounded tp * cp * dp * pp by cost::kMaxWorldSize, so none of these products wraps.
  const std::uint64_t stage_ranks = static_cast<std::uint64_t>(par.tp) * par.cp * par.dp;
  if (stage_ranks % nproc == 0) align_blocks(*hosts, stage_ranks / nproc);
  for (std::size_t i = 0; i < hosts->size(); ++i) (*hosts)[i].node_rank = static_cast<std::uint32_t>(i);
  const auto world = checked_mul(hosts->size(), nproc);  // at most hosts x 2^32
  const std::uint64_t product = stage_ranks * par.pp;
  if (!world || product != *world) {
    return fail("parallel", "tp x cp x dp x pp = " + std::to_string(product) + " but the hosts have " +
                                std::to_string(hosts->size()) + " x " + std::to_string(nproc) + " = " +
                                std::to_string(world.value_or(0)) + " NPUs");
  }
  if (par.tp > nproc || nproc % par.tp != 0) {
    return fail("parallel.tp", std::to_string(par.tp) + " must divide the " + std::to_string(nproc) +
                                   " NPUs per host (TP groups stay inside a host)");
  }
  cost::Algorithm algorithm = req.algorithm;
  if (algorithm == cost::Algorithm::automatic) {
    algorithm = power_of_two(par.dp) ? cost::Algorithm::halving_doubling : cost::Algorithm::ring;
  } else if (algorithm == cost::Algorithm::halving_doubling && !power_of_two(par.dp)) {
    return fail("algorithm", "halving-doubling needs a power-of-two DP size, dp = " + std::to_string(par.dp));
  }

  Schedule out;
  out.job_name = req.job_name;
  out.framework = req.framework;
  out.algorithm = algorithm;
  out.placement.hosts = std::move(*hosts);
  std::vector<NodeId> leaves;
  if (auto ok = assign_ranks(topo, req, out.placement, leaves); !ok) return tl::unexpected(ok.error());
  build_groups(topo, par, out.placement);

  auto route = plan(topo, req, out.placement, leaves, algorithm);
  if (!route) return tl::unexpected(route.error());
  out.route = std::move(*route);

  switch (req.rank_table_version) {
    case RankTableVersion::v1_0:
      out.rank_table_version = "1.0";
      break;
    case RankTableVersion::v1_2:
      out.rank_table_version = "1.2";
      break;
    case RankTableVersion::automatic:
      out.rank_table_version =
          !topo.switches(Tier::kSpine).empty() && topo.domain_count(Tier::kSpine) > 1 ? "1.2" : "1.0";
      break;
  }
  out.hccl_json = export_hccl_rank_table(out.placement, req.host_ips, out.rank_table_version);
  out.hostfile = export_hostfile(out.placement);
  out.torchrun = torchrun_envs(out.placement, req.host_ips, req.master_port);
  return out;
}

}  // namespace hsns::placement
