#include "services/scheduling_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "services/store_errors.h"

namespace hsns::services {
namespace {

using nlohmann::json;
namespace topo = hsns::topology;

std::string tier_name(topo::Tier t) {
  return std::string(topo::to_string(t));
}

// A conflict when registered jobs hold NPUs the request needs on one of its hosts.
std::optional<Error> check_held(const AllocatedSnapshot& snap, const placement::ScheduleRequest& req) {
  const auto& base = *snap.base.topology;
  const auto& overlay = *snap.topology;
  for (std::size_t i = 0; i < req.hosts.size(); ++i) {
    const auto& host = req.hosts[i];
    auto it = snap.held->lower_bound({host, 0});
    if (it == snap.held->end() || it->first.first != host) continue;
    auto id = base.find(host);
    if (!id || base.node(*id).tier != topo::Tier::kHost) continue;  // the library names it
    const std::uint32_t free_now = overlay.free_npus(*id);
    const std::uint32_t needed = req.npus_per_host > 0 ? req.npus_per_host : base.free_npus(*id);
    if (free_now >= needed) continue;
    std::string npus;
    std::set<std::string> owners;
    for (; it != snap.held->end() && it->first.first == host; ++it) {
      npus += (npus.empty() ? "" : ",") + std::to_string(it->first.second);
      owners.insert("'" + it->second + "'");
    }
    std::string jobs;
    for (const auto& o : owners) jobs += (jobs.empty() ? "" : ", ") + o;
    return Error::conflict(
        "hosts[" + std::to_string(i) + "]",
        "NPUs " + npus + " of host " + host + " are held by job" + (owners.size() > 1 ? "s " : " ") + jobs +
            "; " + std::to_string(free_now) + " free, " + std::to_string(needed) + " needed" +
            (req.npus_per_host == 0 ? " (npus_per_host 0 takes every free NPU of the host)" : ""));
  }
  return std::nullopt;
}

// One NPU port the schedule may take the NPU's address from.
struct NpuPort {
  IpAddress ip;
  std::string subnet_id;
  std::string subnet_name;
};

using NpuKey = std::pair<std::string, std::uint32_t>;  // (host, NPU index)

// Ports of every NPU of the requested hosts, each NPU's in store order (subnet name, port id).
Result<std::map<NpuKey, std::vector<NpuPort>>> npu_ports(store::NetworkStore& network,
                                                         const std::vector<std::string>& hosts) {
  std::map<NpuKey, std::vector<NpuPort>> out;
  for (const auto& host : hosts) {
    auto view = network.host_view(host);
    if (!view) {
      // A host the network store does not know has no ports: its NPUs are named by the library.
      if (view.error().kind == Error::Kind::not_found) continue;
      return tl::unexpected(from_store(std::move(view.error())));
    }
    std::map<std::string, std::string> names;  // subnet id -> name
    for (const auto& sn : view->subnets) names.emplace(sn.id, sn.name);
    for (const auto& p : view->ports) {
      if (p.npu < 0) continue;
      auto name = names.find(p.subnet_id);
      out[{host, static_cast<std::uint32_t>(p.npu)}].push_back(
          {p.ip_address, p.subnet_id, name == names.end() ? p.subnet_id : name->second});
    }
  }
  return out;
}

// The address of each NPU (see the header): for the NPUs the job uses, one subnet holding a port of every
// used NPU; else, per rail (local rank), one subnet holding a port of every used NPU of the rail; else,
// and for every other NPU, the NPU's port whose subnet name sorts first. Where several subnets qualify the
// one whose (name, id) sorts first wins.
std::map<NpuKey, NpuPort> choose_addresses(const std::map<NpuKey, std::vector<NpuPort>>& ports,
                                           const std::map<std::string, std::vector<std::uint32_t>>& used) {
  std::map<NpuKey, NpuPort> out;
  for (const auto& [key, list] : ports) {
    if (!list.empty()) out.emplace(key, list.front());
  }
  // The subnet, as (name, id), shared by every NPU of `npus`; nullopt when there is none.
  auto common_subnet =
      [&](const std::vector<NpuKey>& npus) -> std::optional<std::pair<std::string, std::string>> {
    std::set<std::pair<std::string, std::string>> common;
    for (std::size_t i = 0; i < npus.size(); ++i) {
      auto it = ports.find(npus[i]);
      if (it == ports.end()) return std::nullopt;
      std::set<std::pair<std::string, std::string>> mine;
      for (const auto& p : it->second) {
        if (i == 0 || common.contains({p.subnet_name, p.subnet_id}))
          mine.insert({p.subnet_name, p.subnet_id});
      }
      common = std::move(mine);
      if (common.empty()) return std::nullopt;
    }
    if (common.empty()) return std::nullopt;
    return *common.begin();
  };
  auto take = [&](const std::vector<NpuKey>& npus, const std::string& subnet_id) {
    for (const auto& key : npus) {
      for (const auto& p : ports.at(key)) {
        if (p.subnet_id == subnet_id) {
          out[key] = p;
          break;
        }
      }
    }
  };
  std::vector<NpuKey> all;
  std::map<std::size_t, std::vector<NpuKey>> rails;
  for (const auto& [host, npus] : used) {
    for (std::size_t k = 0; k < npus.size(); ++k) {
      all.emplace_back(host, npus[k]);
      rails[k].emplace_back(host, npus[k]);
    }
  }
  if (all.empty()) return out;
  if (auto spanning = common_subnet(all)) {
    take(all, spanning->second);
    return out;
  }
  for (const auto& [k, npus] : rails) {
    if (auto shared = common_subnet(npus)) take(npus, shared->second);
  }
  return out;
}

// Inter-host pairs of the route plan whose addresses are in different subnets (which hsns isolates).
struct Unreachable {
  std::size_t pairs = 0;  // ordered (source, destination) pairs, as the route plan's pairs
  // Unordered rank pairs (lower rank first) with the traffic they carry ("DP" or "PP"), ascending.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> rank_pairs;
};

Unreachable unreachable_pairs(const placement::Schedule& s, const std::map<NpuKey, NpuPort>& addresses) {
  Unreachable out;
  const auto& ranks = s.placement.ranks;
  auto subnet_of = [&](const placement::RankSlot& r) -> const std::string* {
    auto it = addresses.find({r.host, r.npu});
    return it == addresses.end() ? nullptr : &it->second.subnet_id;
  };
  std::set<std::pair<std::uint32_t, std::uint32_t>> ordered;
  for (const auto& phase : s.route.phases) {
    for (const auto& t : phase) {
      const auto& a = ranks.at(t.src);
      const auto& b = ranks.at(t.dst);
      if (a.host_id == b.host_id) continue;  // the host's own interconnect
      const std::string* sa = subnet_of(a);
      const std::string* sb = subnet_of(b);
      if (sa != nullptr && sb != nullptr && *sa == *sb) continue;
      if (!ordered.insert({t.src, t.dst}).second) continue;
      // PP transfers join consecutive stages; every other planned transfer is DP.
      out.rank_pairs.emplace(std::minmax(t.src, t.dst), a.pp != b.pp ? "PP" : "DP");
    }
  }
  out.pairs = ordered.size();
  return out;
}

// Unprocessable on "hosts" naming the first kMaxListedPairs rank pairs.
Error unreachable_error(const placement::Schedule& s, const std::map<NpuKey, NpuPort>& addresses,
                        const Unreachable& u) {
  constexpr std::size_t kMaxListedPairs = 8;
  const std::size_t listed = std::min(kMaxListedPairs, u.rank_pairs.size());
  const std::string listed_text =
      u.rank_pairs.size() == 1 ? std::string("the rank pair")
      : listed == u.rank_pairs.size()
          ? "the " + std::to_string(listed) + " rank pairs"
          : std::to_string(listed) + " of the " + std::to_string(u.rank_pairs.size()) + " rank pairs";
  const std::string what = std::to_string(u.pairs) + " of the route plan's " +
                           std::to_string(s.route.comparison.plan.flows.size()) +
                           " inter-host NPU pairs have addresses in different subnets";
  Error e = Error::unprocessable(
      "hosts",
      what +
          ", which hsns isolates from each other: the job would hang at communicator setup. Give the "
          "NPUs ports in a subnet the pairs share, choose other hosts, or set allow_unreachable to "
          "register the job anyway (invalid_params lists " +
          listed_text + ")");
  e.fields.front().reason = what;
  auto describe = [&](std::uint32_t rank) {
    const auto& r = s.placement.ranks.at(rank);
    auto it = addresses.find({r.host, r.npu});
    return "rank " + std::to_string(rank) + " (" + r.host + " NPU " + std::to_string(r.npu) + ", " +
           r.ip.to_string() + ", subnet " +
           (it == addresses.end() ? std::string("?") : it->second.subnet_name) + ")";
  };
  for (const auto& [pair, kind] : u.rank_pairs) {
    if (e.fields.size() > kMaxListedPairs) break;
    e.fields.push_back({"ranks[" + std::to_string(pair.first) + "," + std::to_string(pair.second) + "]",
                        describe(pair.first) + " and " + describe(pair.second) + " exchange " + kind +
                            " traffic but their addresses are in different subnets"});
  }
  return e;
}

// A store conflict on "npus[<host>:<npu>]" names the request's host index instead.
Error registration_error(Error e, const placement::ScheduleRequest& req) {
  if (e.kind == Error::Kind::conflict && e.field().rfind("npus[", 0) == 0) {
    const auto colon = e.field().rfind(':');
    const std::string host = e.field().substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
    for (std::size_t i = 0; i < req.hosts.size(); ++i) {
      if (req.hosts[i] == host) return Error::conflict("hosts[" + std::to_string(i) + "]", e.detail);
    }
  }
  return from_store(std::move(e));
}

}  // namespace

// What the job record keeps of the schedule (GET /api/v1/jobs/{name} "schedule").
json schedule_summary(const placement::Schedule& s, std::uint32_t npus_per_host) {
  json widest = json::object();
  for (const auto& [dim, tier] : s.placement.widest_span) {
    widest[std::string(placement::to_string(dim))] = tier_name(tier);
  }
  const auto& c = s.route.comparison;
  return {{"framework", std::string(placement::to_string(s.framework))},
          {"algorithm", std::string(cost::to_string(s.algorithm))},
          {"world_size", s.placement.ranks.size()},
          {"npus_per_host", npus_per_host},
          {"rank_table_version", s.rank_table_version},
          {"widest_span", std::move(widest)},
          {"modelled", s.route.modelled},
          {"predicted_seconds",
           {{"planned", c.planned_seconds},
            {"ecmp_mean", c.ecmp_mean_seconds},
            {"ecmp_min", c.ecmp_min_seconds},
            {"ecmp_max", c.ecmp_max_seconds},
            {"non_blocking", c.non_blocking_seconds}}}};
}

Result<SearchOutcome> SchedulingService::search(const search::SearchRequest& request) {
  auto snap = topology_->with_jobs(jobs_);
  if (!snap) return tl::unexpected(std::move(snap.error()));
  auto result = search::search_topology(*snap->topology, request);
  if (!result) return tl::unexpected(std::move(result.error()));
  return SearchOutcome{std::move(*result), snap->base.revision, snap->jobs_revision};
}

Result<ScheduledJob> SchedulingService::schedule(placement::ScheduleRequest req, bool allow_unreachable,
                                                 std::string request_document) {
  auto snap = topology_->with_jobs(jobs_);
  if (!snap) return tl::unexpected(std::move(snap.error()));
  // A taken name is answered before the placement work (create_job checks it again, atomically).
  if (auto existing = jobs_.get_job(req.job_name); existing) {
    return tl::unexpected(Error::conflict("job_name", "a job named '" + req.job_name + "' exists"));
  } else if (existing.error().kind != Error::Kind::not_found) {
    return tl::unexpected(from_store(std::move(existing.error())));
  }
  if (auto held = check_held(*snap, req)) return tl::unexpected(std::move(*held));
  auto ports = npu_ports(network_, req.hosts);
  if (!ports) return tl::unexpected(std::move(ports.error()));
  // Without the used NPUs (the library refuses the hosts below) every NPU takes its first port.
  const auto used = placement::used_npus(*snap->topology, req)
                        .value_or(std::map<std::string, std::vector<std::uint32_t>>{});
  const auto addresses = choose_addresses(*ports, used);
  for (const auto& [key, port] : addresses) req.npu_ips.emplace(key, port.ip);
  auto schedule = placement::schedule_job(*snap->topology, req);
  if (!schedule) return tl::unexpected(std::move(schedule.error()));
  const Unreachable unreachable = unreachable_pairs(*schedule, addresses);
  if (unreachable.pairs > 0 && !allow_unreachable) {
    return tl::unexpected(unreachable_error(*schedule, addresses, unreachable));
  }

  const std::uint32_t npus_per_host =
      schedule->placement.hosts.empty()
          ? 0
          : static_cast<std::uint32_t>(schedule->placement.hosts[0].npus.size());
  store::JobRecord record;
  record.name = req.job_name;
  record.topology_revision = snap->base.revision;
  for (const auto& r : schedule->placement.ranks)
    record.ranks.push_back({r.rank, r.host, r.npu, r.ip.to_string()});
  record.request = std::move(request_document);
  record.summary = schedule_summary(*schedule, npus_per_host).dump();
  auto stored = jobs_.create_job(record);
  if (!stored) return tl::unexpected(registration_error(std::move(stored.error()), req));
  return ScheduledJob{std::move(*schedule), std::move(*stored), npus_per_host, unreachable.pairs};
}

Result<std::vector<store::JobRecord>> SchedulingService::list_jobs() {
  auto jobs = jobs_.list_jobs();
  if (!jobs) return tl::unexpected(from_store(std::move(jobs.error())));
  return jobs;
}

Result<store::JobRecord> SchedulingService::get_job(const std::string& name) {
  auto job = jobs_.get_job(name);
  if (!job) return tl::unexpected(from_store(std::move(job.error())));
  return job;
}

Result<void> SchedulingService::delete_job(const std::string& name) {
  auto deleted = jobs_.delete_job(name);
  if (!deleted) return tl::unexpected(from_store(std::move(deleted.error())));
  return {};
}

}  // namespace hsns::services
