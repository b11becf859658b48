#include "api/scheduling/routes.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/scheduling/requests.h"
#include "http/json_io.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"
#include "services/scheduling_service.h"

namespace hsns::scheduling_api {
namespace {

using http::RequestContext;
using http::Response;
using nlohmann::json;
namespace bhttp = boost::beast::http;
namespace topo = hsns::topology;

using http::problem;
using services::SchedulingService;

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
            {"stranded_free_npus", c.fragmentation.stranded_free_npus},
            {"free_npus_left_on_hosts", c.fragmentation.free_npus_left_on_hosts}}},
          {"explanation", c.explanation}};
}

// Why hosts were left out (request "explain"): counts per reason and the first examples by host name.
json left_out_json(const search::LeftOutReport& report) {
  json counts = json::object();
  for (std::size_t i = 0; i < search::kLeftOutReasons; ++i) {
    counts[std::string(search::to_string(static_cast<search::LeftOut>(i)))] = report.counts[i];
  }
  json examples = json::array();
  for (const auto& e : report.examples) {
    examples.push_back(
        {{"host", e.host}, {"kind", std::string(search::to_string(e.kind))}, {"reason", e.reason}});
  }
  return {{"counts", std::move(counts)}, {"examples", std::move(examples)}};
}

Response post_search(SchedulingService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto req = parse_search_request(*body);
  if (!req) return problem(ctx, req.error());
  auto found = s.search(*req);
  if (!found) return problem(ctx, found.error());
  const auto& result = found->result;
  json candidates = json::array();
  for (std::size_t i = 0; i < result.candidates.size(); ++i) {
    candidates.push_back(candidate_json(i + 1, result.candidates[i]));
  }
  json answer = {
      {"topology_revision", found->topology_revision}, {"jobs_revision", found->jobs_revision},
      {"hosts_needed", result.hosts_needed},           {"npus_per_host_used", result.npus_per_host_used},
      {"usable_hosts", result.usable_hosts},           {"candidates_evaluated", result.candidates_evaluated},
      {"algorithm_notes", result.algorithm_notes},     {"candidates", std::move(candidates)}};
  if (result.left_out) answer["left_out"] = left_out_json(*result.left_out);
  return http::json_ok(ctx, answer);
}

// ---------------------------------------------------------------------------------------------------
// Schedule

json ranks_json(const std::vector<std::uint32_t>& ranks) {
  return json(ranks);
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

Response post_schedule(SchedulingService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto req = parse_schedule_request(*body);
  if (!req) return problem(ctx, req.error());
  const bool allow_unreachable = req->allow_unreachable;
  auto job = s.schedule(std::move(*req), allow_unreachable, body->dump());
  if (!job) return problem(ctx, job.error());
  const placement::Schedule& schedule = job->schedule;
  json torchrun = json::array();
  for (const auto& t : schedule.torchrun) {
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
  const json out = {{"job_name", schedule.job_name},
                    {"topology_revision", job->record.topology_revision},
                    {"created_at", job->record.created_at},
                    {"framework", std::string(placement::to_string(schedule.framework))},
                    {"algorithm", std::string(cost::to_string(schedule.algorithm))},
                    {"world_size", schedule.placement.ranks.size()},
                    {"npus_per_host", job->npus_per_host},
                    {"placement", placement_json(schedule.placement)},
                    {"rank_table_version", schedule.rank_table_version},
                    {"hccl_json", json::parse(schedule.hccl_json)},
                    {"hostfile", schedule.hostfile},
                    {"torchrun", std::move(torchrun)},
                    {"route_plan", route_plan_json(schedule.route, job->unreachable_pairs)}};
  return http::json_created(ctx, out, "/api/v1/jobs/" + schedule.job_name);
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

Response list_jobs(SchedulingService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto jobs = s.list_jobs();
  if (!jobs) return problem(ctx, jobs.error());
  json items = json::array();
  for (const auto& r : *jobs) items.push_back(job_summary_json(r, parse_stored(r.summary)));
  return http::json_ok(ctx, {{"items", std::move(items)}});
}

std::optional<Problem> check_name_param(const std::string& name) {
  if (valid_job_name(name)) return std::nullopt;
  return Problem::invalid("name",
                          "must be 1 to 63 characters of [A-Za-z0-9._-], starting with a letter or digit");
}

Response get_job(SchedulingService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (auto p = check_name_param(name)) return problem(ctx, *p);
  auto job = s.get_job(name);
  if (!job) return problem(ctx, job.error());
  const json summary = parse_stored(job->summary);
  json out = job_summary_json(*job, summary);
  json ranks = json::array();
  for (const auto& r : job->ranks)
    ranks.push_back({{"rank", r.rank}, {"host", r.host}, {"npu", r.npu}, {"ip", r.ip}});
  out["ranks"] = std::move(ranks);
  out["request"] = parse_stored(job->request);
  out["schedule"] = summary;
  return http::json_ok(ctx, out);
}

Response delete_job(SchedulingService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (auto p = check_name_param(name)) return problem(ctx, *p);
  auto deleted = s.delete_job(name);
  if (!deleted) return problem(ctx, deleted.error());
  return http::empty_response(ctx.request, bhttp::status::no_content);
}

}  // namespace

void register_scheduling_routes(http::Router& router, std::shared_ptr<services::TopologyCache> topology,
                                store::JobStore& jobs, store::NetworkStore& network) {
  using V = bhttp::verb;
  using http::Permission;
  auto state = std::make_shared<SchedulingService>(std::move(topology), jobs, network);
  auto bind = [state](Response (*fn)(SchedulingService&, RequestContext&)) {
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
