#include "api/topology/routes.h"

#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "api/network/requests.h"
#include "hsns/json_fields.h"
#include "http/auth.h"
#include "http/conditional.h"
#include "http/errors.h"
#include "http/json_io.h"
#include "http/json_stream.h"
#include "services/topology_service.h"
#include "topology/export.h"

namespace hsns::topology_api {
namespace topo = hsns::topology;
namespace {

using http::RequestContext;
using http::Response;
using nlohmann::json;
namespace bhttp = boost::beast::http;

// Input ranges of the generator's parameters; the derived counts (hosts x NPUs, switches, links with
// parallel fabric links, index work) are checked by topology::clos_size against topology::kGenerateLimits.
constexpr auto kMaxGenerateHosts = static_cast<std::uint32_t>(topo::kGenerateLimits.hosts);
constexpr std::uint32_t kMaxSwitchesPerPlane = 1024;
constexpr std::size_t kMaxObservations = 65536;
constexpr std::size_t kMaxNameLength = 253;
constexpr std::size_t kMaxGeneratedName = 128;
// Entries of one bulk state change (docs/rest-api.md): a whole 10,000-host cluster's hosts at once.
constexpr std::size_t kMaxBulkDevices = 10'000;

using http::problem;
using services::TopologyService;
using Snapshot = services::TopologySnapshot;

json summary_of(const Snapshot& s) {
  json j = {{"revision", s.revision}, {"source", s.source}, {"updated_at", s.updated_at}};
  j.update(topology_summary(*s.topology));
  return j;
}

Response summary_response(const RequestContext& ctx, const Snapshot& s) {
  return http::json_ok(ctx, summary_of(s));
}

bool is_yaml_media_type(std::string_view ct) {
  std::string media(ct.substr(0, ct.find(';')));
  for (auto& c : media) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!media.empty() && media.back() == ' ') media.pop_back();
  return media == "application/yaml" || media == "application/x-yaml" || media == "text/yaml";
}

Response put_topology(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  const auto ct = ctx.request[bhttp::field::content_type];
  topo::FileFormat format = topo::FileFormat::kYaml;
  if (!is_yaml_media_type(ct)) {
    if (ct.substr(0, ct.find(';')).find("json") == std::string_view::npos) {
      return problem(ctx, Problem::unsupported_media_type(
                              "Content-Type must be application/json or application/yaml, not '" +
                              std::string(ct) + "'"));
    }
    format = topo::FileFormat::kJson;
  }
  // One bounded reader for both formats (sizes, values, depth, aliases; import.h), before any model exists.
  auto stored = topology.import_document(ctx.request.body(), format);
  if (!stored) return problem(ctx, stored.error());
  return summary_response(ctx, *stored);
}

Response generate_topology(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto params = parse_clos_params(*body);
  if (!params) return problem(ctx, params.error());
  auto stored = topology.generate(*params);
  if (!stored) return problem(ctx, stored.error());
  return summary_response(ctx, *stored);
}

Response get_topology(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto cur = topology.current();
  if (!cur) return problem(ctx, cur.error());
  return summary_response(ctx, *cur);
}

Response export_topology(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"format"})) return problem(ctx, *p);
  const std::string format = ctx.query("format").value_or("json");
  static const std::set<std::string> kFormats = {"json",  "slurm-tree",  "slurm-block", "volcano",
                                                 "kueue", "node-labels", "yaml"};
  if (!kFormats.contains(format)) {
    return problem(ctx, Problem::invalid("format",
                                         "must be one of json, slurm-tree, slurm-block, volcano, "
                                         "kueue, node-labels, yaml"));
  }
  auto cur = topology.current();
  if (!cur) return problem(ctx, cur.error());
  const auto& t = *cur->topology;
  if (format == "json") {
    return http::json_ok(ctx, topo::export_json_graph(t));
  }
  if (format == "slurm-tree")
    return http::text_ok(ctx, "text/plain; charset=utf-8", topo::export_slurm_tree(t));
  if (format == "slurm-block") {
    return http::text_ok(ctx, "text/plain; charset=utf-8", topo::export_slurm_block(t));
  }
  if (format == "volcano") return http::text_ok(ctx, "application/yaml", topo::export_volcano_hypernodes(t));
  if (format == "kueue") return http::text_ok(ctx, "application/yaml", topo::export_kueue_topology(t));
  if (format == "node-labels") {
    return http::text_ok(ctx, "application/yaml", topo::export_node_label_manifests(t));
  }
  return http::text_ok(ctx, "application/yaml", topo::export_topology_yaml(t));
}

json issue_json(const topo::MergeIssue& i) {
  return {{"observation", i.observation},
          {"field", i.field},
          {"expected", i.expected},
          {"observed", i.observed},
          {"reason", i.reason}};
}

Response post_lldp(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  FieldReader r(*body);
  std::vector<topo::LldpObservation> observations;
  r.objects("observations", true, kMaxObservations, [&observations](FieldReader& o, std::size_t) {
    topo::LldpObservation obs;
    obs.host = o.string("host", true, kMaxNameLength).value_or("");
    obs.port = o.string("port", false, 15).value_or("");
    if (auto npu = o.integer("npu", false, 0, network::kMaxNpusPerHost - 1)) {
      obs.npu = static_cast<std::uint32_t>(*npu);
    }
    obs.neighbor_system = o.string("neighbor_system", true, 255).value_or("");
    obs.neighbor_port = o.string("neighbor_port", true, 255).value_or("");
    observations.push_back(std::move(obs));
  });
  if (auto p = r.finish()) return problem(ctx, *p);
  EntityBinding binding(ctx.bound_host);
  for (std::size_t i = 0; i < observations.size(); ++i)
    binding.check(observations[i].host, "observations", i, "host");
  if (auto refused = binding.refusal()) return problem(ctx, *refused);
  auto merged = topology.merge_lldp(observations);
  if (!merged) return problem(ctx, merged.error());
  const auto& report = merged->report;
  json out = {{"revision", merged->revision},  {"confirmed", report.confirmed},
              {"completed", report.completed}, {"added", report.added},
              {"conflicts", json::array()},    {"unresolved", json::array()}};
  for (const auto& c : report.conflicts) out["conflicts"].push_back(issue_json(c));
  for (const auto& u : report.unresolved) out["unresolved"].push_back(issue_json(u));
  return http::json_ok(ctx, out);
}

// GET /api/v1/topology/lldp: one observation serialised at a time, the body cached per lldp revision
// (http/conditional.h).
Response list_lldp(TopologyService& topology, const store::RevisionSource* revisions,
                   http::ResponseCache& cache, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  const auto version =
      http::document_version(revisions, "/api/v1/topology/lldp", {store::RevisionDomain::lldp});
  return http::conditional_get(ctx, cache, version, [&]() -> tl::expected<std::string, Response> {
    auto records = topology.observations();
    if (!records) return tl::unexpected(problem(ctx, records.error()));
    std::string out;
    http::JsonWriter w(out);
    w.begin_object().key("items").begin_array();
    for (const auto& o : *records) {
      json j = {{"host", o.host},
                {"neighbor_system", o.neighbor_system},
                {"neighbor_port", o.neighbor_port},
                {"observed_at", o.observed_at}};
      if (!o.port.empty()) j["port"] = o.port;
      if (o.npu) j["npu"] = *o.npu;
      w.raw(j.dump());
    }
    w.end_array().end_object();
    return out;
  });
}

// The fields of one device state change ("state", optional "npu") from a request object.
struct StateFields {
  std::optional<topo::DeviceState> state;
  std::optional<std::uint32_t> npu;
};

StateFields read_state_fields(FieldReader& r) {
  StateFields f;
  if (auto s = r.string("state", true, 32)) {
    f.state = topo::parse_state(*s);
    if (!f.state) r.fail("state", "must be one of healthy, sub-health, isolated, allocated");
  }
  if (auto npu = r.integer("npu", false, 0, std::numeric_limits<std::uint32_t>::max())) {
    f.npu = static_cast<std::uint32_t>(*npu);
  }
  return f;
}

json device_json(const std::string& name, topo::Tier tier, const StateFields& f) {
  json out = {{"device", name},
              {"tier", std::string(topo::to_string(tier))},
              {"state", std::string(topo::to_string(*f.state))}};
  if (f.npu) out["npu"] = *f.npu;
  return out;
}

Response patch_device(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (name.size() > kMaxNameLength) {
    return problem(ctx, Problem::invalid("name", "must be at most 253 characters"));
  }
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  FieldReader r(*body);
  const auto fields = read_state_fields(r);
  if (auto p = r.finish()) return problem(ctx, *p);

  auto changed = topology.set_device_state(name, fields.npu, *fields.state);
  if (!changed) return problem(ctx, changed.error());
  json out = {{"revision", changed->revision}};
  out.update(device_json(name, changed->tier, fields));
  return http::json_ok(ctx, out);
}

// PATCH /api/v1/topology/devices: many state changes, all or nothing, in one transaction.
Response patch_devices(TopologyService& topology, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  FieldReader r(*body);
  std::vector<StateFields> fields;
  std::vector<services::DeviceStateRequest> requests;
  r.objects("devices", true, kMaxBulkDevices, [&](FieldReader& d, std::size_t) {
    auto name = d.sized_string("name", true, 1, kMaxNameLength);
    fields.push_back(read_state_fields(d));
    requests.push_back(
        {name.value_or(""), fields.back().npu, fields.back().state.value_or(topo::DeviceState::kHealthy)});
  });
  if (auto p = r.finish()) return problem(ctx, *p);

  auto changed = topology.set_device_states(requests);
  if (!changed) return problem(ctx, changed.error());
  json devices = json::array();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    devices.push_back(device_json(requests[i].name, changed->tiers[i], fields[i]));
  }
  return http::json_ok(ctx, json{{"revision", changed->revision}, {"devices", std::move(devices)}});
}

}  // namespace

tl::expected<topo::ClosParams, Problem> parse_clos_params(const json& body) {
  topo::ClosParams p;
  // Every parameter is optional (absent: the generator's default). The wording of the findings predates
  // the shared reader and is kept: bare type names, and null is a value of the wrong type, not absent.
  FieldReader r(body, FieldStyle{.null_is_a_value = true, .name_the_found_type = false});
  auto count = [&r](std::string_view name, std::uint32_t& out, std::uint32_t min, std::uint32_t max) {
    if (auto v = r.integer(name, false, min, max)) out = static_cast<std::uint32_t>(*v);
  };
  auto number = [&r](std::string_view name, double& out, double min, double max, bool min_exclusive) {
    if (auto v = r.number(name, false, min, max, min_exclusive)) out = *v;
  };
  count("hosts", p.hosts, 1, kMaxGenerateHosts);
  count("npus_per_host", p.npus_per_host, 1, network::kMaxNpusPerHost);
  count("hosts_per_su", p.hosts_per_su, 1, kMaxGenerateHosts);
  count("spines_per_plane", p.spines_per_plane, 0, kMaxSwitchesPerPlane);
  count("superpods", p.superpods, 1, kMaxSwitchesPerPlane);
  count("cores", p.cores, 0, kMaxSwitchesPerPlane);
  number("host_link_gbps", p.host_link_gbps, 0, 100'000, true);
  number("fabric_link_gbps", p.fabric_link_gbps, 0, 100'000, false);
  number("leaf_oversubscription", p.leaf_oversubscription, 0, 1000, true);
  number("spine_oversubscription", p.spine_oversubscription, 0, 1000, true);
  number("host_link_latency_us", p.host_link_latency_us, 0, 1e6, false);
  number("fabric_link_latency_us", p.fabric_link_latency_us, 0, 1e6, false);
  if (auto name = r.sized_string("name", false, 1, kMaxGeneratedName)) p.name = std::move(*name);
  if (auto bad = r.finish()) return tl::unexpected(*bad);
  if (p.fabric_link_gbps > 0 && p.fabric_link_gbps < 1) {
    return tl::unexpected(Problem::invalid("fabric_link_gbps", "must be 0 or >= 1"));
  }
  // Every derived count (hosts x NPUs, switches, links including parallel fabric links, index work) is
  // computed from the parameters and checked before anything is generated.
  if (auto size = topo::clos_size(p, topo::kGenerateLimits); !size) {
    return tl::unexpected(http::to_problem(size.error()));
  }
  return p;
}

json topology_summary(const topo::Topology& t) {
  auto state_counts = []() {
    return json{{"healthy", 0}, {"sub-health", 0}, {"isolated", 0}, {"allocated", 0}};
  };
  json states = {{"hosts", state_counts()},
                 {"npus", state_counts()},
                 {"switches", state_counts()},
                 {"links", state_counts()}};
  auto bump = [](json& counts, topo::DeviceState s) {
    auto& v = counts[std::string(topo::to_string(s))];
    v = v.get<std::int64_t>() + 1;
  };
  std::size_t npus = 0;
  for (const auto& n : t.nodes()) {
    if (n.tier == topo::Tier::kHost) {
      bump(states["hosts"], n.state);
      for (const auto& npu : n.npus) bump(states["npus"], npu.state);
      npus += n.npus.size();
    } else {
      bump(states["switches"], n.state);
    }
  }
  for (const auto& l : t.links()) bump(states["links"], l.state);

  json switches = json::object();
  json oversubscription = json::object();
  json domains = json::object();
  domains["scalable_units"] = t.switches(topo::Tier::kLeaf).empty() ? 0 : t.domain_count(topo::Tier::kLeaf);
  domains["superpods"] = t.switches(topo::Tier::kSpine).empty() ? 0 : t.domain_count(topo::Tier::kSpine);
  domains["fabrics"] = t.switches(topo::Tier::kCore).empty() ? 0 : t.domain_count(topo::Tier::kCore);
  for (auto tier : {topo::Tier::kLeaf, topo::Tier::kSpine, topo::Tier::kCore}) {
    const std::string key(topo::to_string(tier));
    switches[key] = t.switches(tier).size();
    if (tier != topo::Tier::kCore) oversubscription[key] = t.tier_oversubscription(tier);
  }
  return {{"name", t.name()},
          {"hosts", t.hosts().size()},
          {"npus", npus},
          {"switches", switches},
          {"links", t.links().size()},
          {"top_tier", std::string(topo::to_string(t.top_tier()))},
          {"domains", domains},
          {"oversubscription", oversubscription},
          {"states", states}};
}

void register_topology_routes(http::Router& router, store::TopologyStore& store) {
  register_topology_routes(router, std::make_shared<services::TopologyCache>(store));
}

void register_topology_routes(http::Router& router, std::shared_ptr<services::TopologyCache> cache) {
  using V = bhttp::verb;
  using http::Permission;
  const auto* revisions = cache->store().revisions();
  auto state = std::make_shared<TopologyService>(std::move(cache));
  auto bind = [state](Response (*fn)(TopologyService&, RequestContext&)) {
    return [state, fn](RequestContext& ctx) { return fn(*state, ctx); };
  };
  const auto read = http::permits(Permission::read);
  const auto manage = http::permits(Permission::manage_network);
  router.add(V::get, "/api/v1/topology", read, bind(get_topology));
  router.add(V::put, "/api/v1/topology", manage, bind(put_topology), http::Cost::heavy);
  router.add(V::post, "/api/v1/topology/generate", manage, bind(generate_topology), http::Cost::heavy);
  router.add(V::get, "/api/v1/topology/export", read, bind(export_topology), http::Cost::heavy);
  router.add(V::post, "/api/v1/topology/lldp", Permission::agent_report | Permission::manage_network,
             bind(post_lldp), http::Cost::heavy);
  auto lists = std::make_shared<http::ResponseCache>();
  router.add(V::get, "/api/v1/topology/lldp", read, [state, revisions, lists](RequestContext& ctx) {
    return list_lldp(*state, revisions, *lists, ctx);
  });
  router.add(V::patch, "/api/v1/topology/devices", manage, bind(patch_devices));
  router.add(V::patch, "/api/v1/topology/devices/{name}", manage, bind(patch_device));
}

}  // namespace hsns::topology_api
