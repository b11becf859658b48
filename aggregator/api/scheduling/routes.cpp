#include "api/scheduling/routes.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/network/routes.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"
#include "api/scheduling/requests.h"

namespace hsns::scheduling_api {
namespace {

using http::RequestContext;
using http::Response;
using nlohmann::json;
namespace bhttp = boost::beast::http;
namespace topo = hsns::topology;

struct Context {
  std::shared_ptr<topology_api::TopologyCache> topology;
  store::JobStore& jobs;
  store::NetworkStore& network;
};

Response problem(const RequestContext& ctx, const Problem& p) {
  return http::problem_response(ctx.request, p);
}

std::string tier_name(topo::Tier t) {
  return std::string(topo::to_string(t));
}

// ---------------------------------------------------------------------------------------------------
// Search

json candidate_json(std::size_t rank, const search::Candidate& c) {
  json hosts = json::array();
  for (std::size_t i = 0; i < c.hosts.size(); ++i) {
    hosts.push_back(
        {{"name", c.hosts[i]}, {"npus", i < c.npus.size() ? c.npus[i] : std::vector<std::uint32_t>{}}});
  }
  json seconds = json::object();
  json span = json::object();
  for (auto d : {cost::Dimension::tp, cost::Dimension::pp, cost::Dimension::dp, cost::Dimension::ep,
                 cost::Dimension::cp}) {
    const auto i = static_cast<std::size_t>(d);
    const std::string key(dimension_name(d));
    seconds[key] = c.dimension_seconds[i];
    span[key] = tier_name(c.span[i]);
  }
  return {{"rank", rank},
          {"hosts", std::move(hosts)},
          {"total_seconds", c.total_seconds},
          {"dimension_seconds", std::move(seconds)},
          {"span", std::move(span)},
          {"job_span", tier_name(c.job_span)},
          {"fragmentation",
           {{"leaf_domains_touched", c.fragmentation.leaf_domains_touched},
            {"leaf_domains_left_partial", c.fragmentation.leaf_domains_left_partial},
            {"spine_domains_touched", c.fragmentation.spine_domains_touched},
            {"stranded_free_npus", c.fragmentation.stranded_free_npus}}},
          {"explanation", c.explanation}};
}

Response post_search(Context& s, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto body = network::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto req = parse_search_request(*body);
  if (!req) return problem(ctx, req.error());
  auto snap = s.topology->with_jobs(s.jobs);
  if (!snap) return problem(ctx, snap.error());
  auto result = search::search_topology(*snap->topology, *req);
  if (!result) return problem(ctx, Problem::unprocessable(result.error().field, result.error().detail));
  json candidates = json::array();
  for (std::size_t i = 0; i < result->candidates.size(); ++i) {
    candidates.push_back(candidate_json(i + 1, result->candidates[i]));
  }
  const json out = {
      {"topology_revision", snap->base.revision}, {"jobs_revision", snap->jobs_revision},
      {"hosts_needed", result->hosts_needed},     {"npus_per_host_used", result->npus_per_host_used},
      {"usable_hosts", result->usable_hosts},     {"candidates_evaluated", result->candidates_evaluated},
      {"candidates", std::move(candidates)}};
  return http::json_response(ctx.request, bhttp::status::ok, out.dump());
}

// ---------------------------------------------------------------------------------------------------
// Schedule

// 409 when registered jobs hold NPUs the request needs on one of its hosts.
std::optional<Problem> check_held(const topology_api::AllocatedSnapshot& snap,
                                  const placement::ScheduleRequest& req) {
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
    return Problem::conflict(
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
tl::expected<std::map<NpuKey, std::vector<NpuPort>>, Problem> npu_ports(
    store::NetworkStore& network, const std::vector<std::string>& hosts) {
  std::map<NpuKey, std::vector<NpuPort>> out;
  for (const auto& host : hosts) {
    auto view = network.host_view(host);
    if (!view) {
      // A host the network store does not know has no ports: its NPUs are named by the library.
      if (view.error().kind == store::StoreError::Kind::not_found) continue;
      return tl::unexpected(network::to_problem(view.error()));
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

json ranks_json(const std::vector<std::uint32_t>& ranks) {
  return json(ranks);
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

// 422 on "hosts" naming the first kMaxListedPairs rank pairs.
Problem unreachable_problem(const placement::Schedule& s, const std::map<NpuKey, NpuPort>& addresses,
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
  Problem p = Problem::unprocessable(
      "hosts",
      what +
          ", which hsns isolates from each other: the job would hang at communicator setup. Give the "
          "NPUs ports in a subnet the pairs share, choose other hosts, or set allow_unreachable to "
          "register the job anyway (invalid_params lists " +
          listed_text + ")");
  p.invalid_params.front().reason = what;
  auto describe = [&](std::uint32_t rank) {
    const auto& r = s.placement.ranks.at(rank);
    auto it = addresses.find({r.host, r.npu});
    return "rank " + std::to_string(rank) + " (" + r.host + " NPU " + std::to_string(r.npu) + ", " +
           r.ip.to_string() + ", subnet " +
           (it == addresses.end() ? std::string("?") : it->second.subnet_name) + ")";
  };
  for (const auto& [pair, kind] : u.rank_pairs) {
    if (p.invalid_params.size() > kMaxListedPairs) break;
    p.invalid_params.push_back(
        {"ranks[" + std::to_string(pair.first) + "," + std::to_string(pair.second) + "]",
         describe(pair.first) + " and " + describe(pair.second) + " exchange " + kind +
             " traffic but their addresses are in different subnets"});
  }
  return p;
}

json route_plan_json(const placement::RoutePlanResult& r, std::size_t unreachable) {
  const auto& c = r.comparison;
  json pairs = json::array();
  for (const auto& f : c.plan.flows) {
    pairs.push_back({{"src_ip", f.demand.src_ip.to_string()},
                     {"dst_ip", f.demand.dst_ip.to_string()},
                     {"src_ports", f.src_ports}});
  }
  return {{"modelled", r.modelled},
          {"dp_bytes", r.dp_bytes},
          {"pp_bytes", r.pp_bytes},
          {"fabric",
           {{"leaves", r.fabric.leaves},
            {"spines", r.fabric.spines},
            {"uplinks_per_leaf", r.fabric.uplinks_per_leaf},
            {"uplink_gbps", r.fabric.uplink_gbps},
            {"port_gbps", r.fabric.port_gbps}}},
          {"predicted_seconds",
           {{"planned", c.planned_seconds},
            {"ecmp_mean", c.ecmp_mean_seconds},
            {"ecmp_min", c.ecmp_min_seconds},
            {"ecmp_max", c.ecmp_max_seconds},
            {"non_blocking", c.non_blocking_seconds}}},
          {"max_uplink_load",
           {{"planned", c.planned_max_uplink_load},
            {"ecmp_mean", c.ecmp_mean_max_uplink_load},
            {"lower_bound", c.lower_bound}}},
          {"multiqp_cfg", r.multiqp_cfg},
          {"pairs", std::move(pairs)},
          {"unreachable_pairs", unreachable}};
}

json placement_json(const placement::Placement& p) {
  json hosts = json::array();
  for (const auto& h : p.hosts) {
    hosts.push_back({{"name", h.name},
                     {"node_rank", h.node_rank},
                     {"npus", h.npus},
                     {"superpod", h.superpod},
                     {"scalable_unit", h.scalable_unit}});
  }
  json ranks = json::array();
  for (const auto& r : p.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"npu", r.npu},
                     {"local_rank", r.local_rank},
                     {"node_rank", r.node_rank},
                     {"ip", r.ip.to_string()},
                     {"tp", r.tp},
                     {"cp", r.cp},
                     {"dp", r.dp},
                     {"pp", r.pp}});
  }
  json groups = json::object();
  for (const auto& [dim, list] : p.groups) {
    json arr = json::array();
    for (const auto& g : list) arr.push_back({{"ranks", ranks_json(g.ranks)}, {"tier", tier_name(g.tier)}});
    groups[std::string(placement::to_string(dim))] = std::move(arr);
  }
  json widest = json::object();
  for (const auto& [dim, tier] : p.widest_span)
    widest[std::string(placement::to_string(dim))] = tier_name(tier);
  return {{"hosts", std::move(hosts)},
          {"ranks", std::move(ranks)},
          {"groups", std::move(groups)},
          {"widest_span", std::move(widest)}};
}

// What the job record keeps of the schedule (GET /api/v1/jobs/{name} "schedule").
json summary_json(const placement::Schedule& s, std::uint32_t npus_per_host) {
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

// A store conflict on "npus[<host>:<npu>]" names the request's host index instead.
Problem conflict_problem(const store::StoreError& e, const placement::ScheduleRequest& req) {
  if (e.kind == store::StoreError::Kind::conflict && e.field().rfind("npus[", 0) == 0) {
    const auto colon = e.field().rfind(':');
    const std::string host = e.field().substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
    for (std::size_t i = 0; i < req.hosts.size(); ++i) {
      if (req.hosts[i] == host) return Problem::conflict("hosts[" + std::to_string(i) + "]", e.detail);
    }
  }
  return network::to_problem(e);
}

Response post_schedule(Context& s, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto body = network::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto req = parse_schedule_request(*body);
  if (!req) return problem(ctx, req.error());
  auto snap = s.topology->with_jobs(s.jobs);
  if (!snap) return problem(ctx, snap.error());
  // A taken name is answered before the placement work (create_job checks it again, atomically).
  if (auto existing = s.jobs.get_job(req->job_name); existing) {
    return problem(ctx, Problem::conflict("job_name", "a job named '" + req->job_name + "' exists"));
  } else if (existing.error().kind != store::StoreError::Kind::not_found) {
    return problem(ctx, network::to_problem(existing.error()));
  }
  if (auto held = check_held(*snap, *req)) return problem(ctx, *held);
  auto ports = npu_ports(s.network, req->hosts);
  if (!ports) return problem(ctx, ports.error());
  // Without the used NPUs (the library refuses the hosts below) every NPU takes its first port.
  const auto used = placement::used_npus(*snap->topology, *req)
                        .value_or(std::map<std::string, std::vector<std::uint32_t>>{});
  const auto addresses = choose_addresses(*ports, used);
  for (const auto& [key, port] : addresses) req->npu_ips.emplace(key, port.ip);
  auto schedule = placement::schedule_job(*snap->topology, *req);
  if (!schedule) return problem(ctx, Problem::unprocessable(schedule.error().field, schedule.error().reason));
  const Unreachable unreachable = unreachable_pairs(*schedule, addresses);
  if (unreachable.pairs > 0 && !req->allow_unreachable) {
    return problem(ctx, unreachable_problem(*schedule, addresses, unreachable));
  }

  const std::uint32_t npus_per_host =
      schedule->placement.hosts.empty()
          ? 0
          : static_cast<std::uint32_t>(schedule->placement.hosts[0].npus.size());
  store::JobRecord record;
  record.name = req->job_name;
  record.topology_revision = snap->base.revision;
  for (const auto& r : schedule->placement.ranks)
    record.ranks.push_back({r.rank, r.host, r.npu, r.ip.to_string()});
  record.request = body->dump();
  record.summary = summary_json(*schedule, npus_per_host).dump();
  auto stored = s.jobs.create_job(record);
  if (!stored) return problem(ctx, conflict_problem(stored.error(), *req));

  json torchrun = json::array();
  for (const auto& t : schedule->torchrun) {
    torchrun.push_back({{"host", t.host},
                        {"master_addr", t.master_addr},
                        {"master_port", t.master_port},
                        {"world_size", t.world_size},
                        {"nnodes", t.nnodes},
                        {"node_rank", t.node_rank},
                        {"nproc_per_node", t.nproc_per_node},
                        {"first_rank", t.first_rank},
                        {"last_rank", t.last_rank},
                        {"env", t.to_env()}});
  }
  const json out = {{"job_name", schedule->job_name},
                    {"topology_revision", stored->topology_revision},
                    {"created_at", stored->created_at},
                    {"framework", std::string(placement::to_string(schedule->framework))},
                    {"algorithm", std::string(cost::to_string(schedule->algorithm))},
                    {"world_size", schedule->placement.ranks.size()},
                    {"npus_per_host", npus_per_host},
                    {"placement", placement_json(schedule->placement)},
                    {"rank_table_version", schedule->rank_table_version},
                    {"hccl_json", json::parse(schedule->hccl_json)},
                    {"hostfile", schedule->hostfile},
                    {"torchrun", std::move(torchrun)},
                    {"route_plan", route_plan_json(schedule->route, unreachable.pairs)}};
  auto res = http::json_response(ctx.request, bhttp::status::created, out.dump());
  res.set(bhttp::field::location, "/api/v1/jobs/" + schedule->job_name);
  return res;
}

// ---------------------------------------------------------------------------------------------------
// Jobs

json parse_stored(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

json job_summary_json(const store::JobRecord& r, const json& summary) {
  return {{"name", r.name},
          {"created_at", r.created_at},
          {"topology_revision", r.topology_revision},
          {"hosts", r.hosts()},
          {"npus", r.ranks.size()},
          {"framework", summary.value("framework", "")},
          {"algorithm", summary.value("algorithm", "")}};
}

Response list_jobs(Context& s, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto jobs = s.jobs.list_jobs();
  if (!jobs) return problem(ctx, network::to_problem(jobs.error()));
  json items = json::array();
  for (const auto& r : *jobs) items.push_back(job_summary_json(r, parse_stored(r.summary)));
  return http::json_response(ctx.request, bhttp::status::ok, json({{"items", std::move(items)}}).dump());
}

std::optional<Problem> check_name_param(const std::string& name) {
  if (valid_job_name(name)) return std::nullopt;
  return Problem::invalid("name",
                          "must be 1 to 63 characters of [A-Za-z0-9._-], starting with a letter or digit");
}

Response get_job(Context& s, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (auto p = check_name_param(name)) return problem(ctx, *p);
  auto job = s.jobs.get_job(name);
  if (!job) return problem(ctx, network::to_problem(job.error()));
  const json summary = parse_stored(job->summary);
  json out = job_summary_json(*job, summary);
  json ranks = json::array();
  for (const auto& r : job->ranks)
    ranks.push_back({{"rank", r.rank}, {"host", r.host}, {"npu", r.npu}, {"ip", r.ip}});
  out["ranks"] = std::move(ranks);
  out["request"] = parse_stored(job->request);
  out["schedule"] = summary;
  return http::json_response(ctx.request, bhttp::status::ok, out.dump());
}

Response delete_job(Context& s, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (auto p = check_name_param(name)) return problem(ctx, *p);
  auto deleted = s.jobs.delete_job(name);
  if (!deleted) return problem(ctx, network::to_problem(deleted.error()));
  return http::empty_response(ctx.request, bhttp::status::no_content);
}

}  // namespace

void register_scheduling_routes(http::Router& router, std::shared_ptr<topology_api::TopologyCache> topology,
                                store::JobStore& jobs, store::NetworkStore& network) {
  using V = bhttp::verb;
  using http::Permission;
  auto state = std::make_shared<Context>(Context{std::move(topology), jobs, network});
  auto bind = [state](Response (*fn)(Context&, RequestContext&)) {
    return [state, fn](RequestContext& ctx) { return fn(*state, ctx); };
  };
  const auto read = http::permits(Permission::read);
  const auto schedule = Permission::schedule | Permission::manage_network;
  router.add(V::post, "/api/v1/topology/search", schedule, bind(post_search), http::Cost::heavy);
  router.add(V::post, "/api/v1/schedule", schedule, bind(post_schedule), http::Cost::heavy);
  router.add(V::get, "/api/v1/jobs", read, bind(list_jobs));
  router.add(V::get, "/api/v1/jobs/{name}", read, bind(get_job));
  router.add(V::delete_, "/api/v1/jobs/{name}", schedule, bind(delete_job));
}

}  // namespace hsns::scheduling_api
