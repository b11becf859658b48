#include "api/agents/routes.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/network/requests.h"
#include "hsns/json_fields.h"
#include "hsns/proto/agent.h"
#include "http/conditional.h"
#include "http/errors.h"
#include "http/json_io.h"
#include "http/json_stream.h"
#include "services/store_errors.h"

namespace hsns::network {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

struct Counts {
  int converged = 0, failed = 0, pending = 0, qos_drift = 0;
};

Counts count(const nlohmann::json& report) {
  Counts c;
  for (const auto& p : report.value("ports", nlohmann::json::array())) {
    const auto state = p.value("state", "");
    if (state == "converged") ++c.converged;
    if (state == "failed") ++c.failed;
    if (state == "pending") ++c.pending;
  }
  for (const auto& q : report.value("qos", nlohmann::json::array())) {
    if (q.value("state", "") == "drift") ++c.qos_drift;
  }
  return c;
}

nlohmann::json summary(const std::string& host, std::int64_t desired_generation, const store::AgentStatus* s,
                       bool with_report) {
  nlohmann::json j = {{"host", host}, {"desired_generation", desired_generation}};
  if (!s) {
    j.update({{"applied_generation", nullptr},
              {"in_sync", false},
              {"received_at", nullptr},
              {"ports_converged", 0},
              {"ports_failed", 0},
              {"ports_pending", 0},
              {"qos_drift", 0}});
    return j;
  }
  const auto report = nlohmann::json::parse(s->report_json, nullptr, false);
  const auto c = count(report);
  j.update({{"applied_generation", s->applied_generation},
            {"in_sync", s->applied_generation == desired_generation && c.failed == 0 && c.pending == 0},
            {"received_at", s->received_at},
            {"ports_converged", c.converged},
            {"ports_failed", c.failed},
            {"ports_pending", c.pending},
            {"qos_drift", c.qos_drift}});
  if (with_report) j["report"] = report;
  return j;
}

using http::check_query;
using http::json_request_body;
using http::problem;

Response put_status(store::NetworkStore& network, store::AgentStore& agents, RequestContext& ctx) {
  const std::string host(ctx.path_param("host"));
  if (auto why = check_host_name(host)) return problem(ctx, Problem::invalid("host", *why));
  auto body = json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto report = parse_agent_report(*body);
  if (!report) return problem(ctx, report.error());
  // The store checks that the host is registered inside the transaction that stores the report (404
  // otherwise); a lookup before it would be a second, unsynchronised check. The desired generation
  // is read after the report is stored: the summary compares against the newest desired state.
  auto stored = agents.put_status(host, (*report)["applied_generation"].get<std::int64_t>(), report->dump());
  if (!stored) return problem(ctx, services::from_store(stored.error()));
  auto h = network.get_host(host);
  if (!h) return problem(ctx, services::from_store(h.error()));
  return http::json_response(ctx.request, bhttp::status::ok,
                             summary(host, h->generation, &*stored, false).dump());
}

Response get_status(store::NetworkStore& network, store::AgentStore& agents, RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  const std::string host(ctx.path_param("host"));
  auto h = network.get_host(host);
  if (!h) return problem(ctx, services::from_store(h.error()));
  auto s = agents.get_status(host);
  if (!s) return problem(ctx, services::from_store(s.error()));
  return http::json_response(ctx.request, bhttp::status::ok, summary(host, h->generation, &*s, true).dump());
}

// {"items":[summary...]}, one summary (a small object) serialised at a time.
tl::expected<std::string, Response> agents_body(store::NetworkStore& network, store::AgentStore& agents,
                                                const RequestContext& ctx) {
  auto hosts = network.list_hosts();
  if (!hosts) return tl::unexpected(problem(ctx, services::from_store(hosts.error())));
  auto statuses = agents.list_status();
  if (!statuses) return tl::unexpected(problem(ctx, services::from_store(statuses.error())));
  std::map<std::string, const store::AgentStatus*> by_host;
  for (const auto& s : *statuses) by_host[s.host] = &s;
  std::string out;
  http::JsonWriter w(out);
  w.begin_object().key("items").begin_array();
  for (const auto& h : *hosts) {
    const auto it = by_host.find(h.name);
    w.raw(summary(h.name, h.generation, it == by_host.end() ? nullptr : it->second, false).dump());
  }
  w.end_array().end_object();
  return out;
}

// The list depends on the hosts (their generations) and on the reports: both revisions version it.
Response list_agents(store::NetworkStore& network, store::AgentStore& agents, http::ResponseCache& cache,
                     RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  const auto version = http::document_version(
      network.revisions(), "/api/v1/agents", {store::RevisionDomain::network, store::RevisionDomain::agents});
  return http::conditional_get(ctx, cache, version, [&] { return agents_body(network, agents, ctx); });
}

}  // namespace

tl::expected<nlohmann::json, Problem> parse_agent_report(const nlohmann::json& body) {
  if (auto report = proto::read_status_report(body); !report)
    return tl::unexpected(http::to_problem(report.error()));
  return body;
}

void register_agent_routes(http::Router& router, store::NetworkStore& network, store::AgentStore& agents) {
  using V = bhttp::verb;
  using http::Permission;
  auto bind = [&network, &agents](Response (*fn)(store::NetworkStore&, store::AgentStore&, RequestContext&)) {
    return [&network, &agents, fn](RequestContext& ctx) { return fn(network, agents, ctx); };
  };
  auto lists = std::make_shared<http::ResponseCache>();
  router.add(
      V::get, "/api/v1/agents", http::permits(Permission::read),
      [&network, &agents, lists](RequestContext& ctx) { return list_agents(network, agents, *lists, ctx); });
  router.add(V::put, "/api/v1/agents/{host}/status", Permission::agent_report | Permission::manage_network,
             bind(put_status));
  router.add(V::get, "/api/v1/agents/{host}/status", http::permits(Permission::read), bind(get_status));
}

}  // namespace hsns::network
