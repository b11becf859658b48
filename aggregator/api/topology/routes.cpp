#include "api/topology/routes.h"

#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hsns/json_fields.h"
#include "api/network/routes.h"
#include "api/network/requests.h"
#include "topology/export.h"
#include "topology/import.h"
#include "topology/lldp_merge.h"

namespace hsns::topology_api {
namespace topo = hsns::topology;
namespace {

using http::RequestContext;
using http::Response;
using nlohmann::json;
namespace bhttp = boost::beast::http;

// Input ranges of the generator's parameters; the derived counts (hosts x NPUs, switches, links with
// parallel fabric links, index work) are checked by topology::clos_size against topology::kModelLimits.
constexpr auto kMaxGenerateHosts = static_cast<std::uint32_t>(topo::kModelLimits.hosts);
constexpr std::uint32_t kMaxSwitchesPerPlane = 1024;
constexpr std::size_t kMaxObservations = 65536;
constexpr std::size_t kMaxNameLength = 253;

Response problem(const RequestContext& ctx, const Problem& p) {
  return http::problem_response(ctx.request, p);
}

Response text_response(const RequestContext& ctx, std::string_view media_type, std::string body) {
  Response res{bhttp::status::ok, ctx.request.version()};
  res.set(bhttp::field::content_type, media_type);
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(ctx.request.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

using Snapshot = TopologySnapshot;
using State = TopologyCache;

json summary_of(const Snapshot& s) {
  json j = {{"revision", s.revision}, {"source", s.source}, {"updated_at", s.updated_at}};
  j.update(topology_summary(*s.topology));
  return j;
}

Response summary_response(const RequestContext& ctx, const Snapshot& s) {
  return http::json_response(ctx.request, bhttp::status::ok, summary_of(s).dump());
}

bool is_yaml_media_type(std::string_view ct) {
  std::string media(ct.substr(0, ct.find(';')));
  for (auto& c : media) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!media.empty() && media.back() == ' ') media.pop_back();
  return media == "application/yaml" || media == "application/x-yaml" || media == "text/yaml";
}

Response put_topology(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
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
  auto imported = topo::import_topology(ctx.request.body(), format);
  if (!imported) return problem(ctx, imported.error());
  auto stored = state.write("import", false, {}, [&](const topo::Topology*) {
    return tl::expected<std::optional<topo::Topology>, Problem>(std::move(*imported));
  });
  if (!stored) return problem(ctx, stored.error());
  return summary_response(ctx, *stored);
}

Response generate_topology(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto body = network::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto params = parse_clos_params(*body);
  if (!params) return problem(ctx, params.error());
  auto generated = topo::generate_clos(*params);
  if (!generated) return problem(ctx, generated.error());
  auto stored = state.write("generate", false, {}, [&](const topo::Topology*) {
    return tl::expected<std::optional<topo::Topology>, Problem>(std::move(*generated));
  });
  if (!stored) return problem(ctx, stored.error());
  return summary_response(ctx, *stored);
}

Response get_topology(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto cur = state.current();
  if (!cur) return problem(ctx, cur.error());
  return summary_response(ctx, *cur);
}

Response export_topology(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {"format"})) return problem(ctx, *p);
  const std::string format = ctx.query("format").value_or("json");
  static const std::set<std::string> kFormats = {"json",  "slurm-tree",  "slurm-block", "volcano",
                                                 "kueue", "node-labels", "yaml"};
  if (!kFormats.contains(format)) {
    return problem(ctx, Problem::invalid("format",
                                         "must be one of json, slurm-tree, slurm-block, volcano, "
                                         "kueue, node-labels, yaml"));
  }
  auto cur = state.current();
  if (!cur) return problem(ctx, cur.error());
  const auto& t = *cur->topology;
  if (format == "json") {
    return http::json_response(ctx.request, bhttp::status::ok, topo::export_json_graph(t).dump());
  }
  if (format == "slurm-tree")
    return text_response(ctx, "text/plain; charset=utf-8", topo::export_slurm_tree(t));
  if (format == "slurm-block") {
    return text_response(ctx, "text/plain; charset=utf-8", topo::export_slurm_block(t));
  }
  if (format == "volcano") return text_response(ctx, "application/yaml", topo::export_volcano_hypernodes(t));
  if (format == "kueue") return text_response(ctx, "application/yaml", topo::export_kueue_topology(t));
  if (format == "node-labels") {
    return text_response(ctx, "application/yaml", topo::export_node_label_manifests(t));
  }
  return text_response(ctx, "application/yaml", topo::export_topology_yaml(t));
}

json issue_json(const topo::MergeIssue& i) {
  return {{"observation", i.observation},
          {"field", i.field},
          {"expected", i.expected},
          {"observed", i.observed},
          {"reason", i.reason}};
}

Response post_lldp(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto body = network::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  FieldReader r(*body);
  std::vector<topo::LldpObservation> observations;
  const auto* arr = r.array("observations", true, kMaxObservations);
  if (arr) {
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const std::string path = "observations[" + std::to_string(i) + "]";
      if (!(*arr)[i].is_object()) {
        r.fail(path, "must be an object");
        continue;
      }
      FieldReader o = r.child((*arr)[i], path);
      topo::LldpObservation obs;
      obs.host = o.string("host", true, kMaxNameLength).value_or("");
      obs.port = o.string("port", false, 15).value_or("");
      if (auto npu = o.integer("npu", false, 0, network::kMaxNpusPerHost - 1)) {
        obs.npu = static_cast<std::uint32_t>(*npu);
      }
      obs.neighbor_system = o.string("neighbor_system", true, 255).value_or("");
      obs.neighbor_port = o.string("neighbor_port", true, 255).value_or("");
      (void)o.finish();
      observations.push_back(std::move(obs));
    }
  }
  if (auto p = r.finish()) return problem(ctx, *p);
  std::vector<store::LldpRecord> records;
  for (const auto& o : observations) {
    records.push_back({o.host, o.port,
                       o.npu ? std::optional<std::int64_t>(*o.npu) : std::optional<std::int64_t>(),
                       o.neighbor_system, o.neighbor_port, ""});
  }
  topo::MergeReport report;
  auto stored =
      state.write("lldp", true, records,
                  [&](const topo::Topology* current) -> tl::expected<std::optional<topo::Topology>, Problem> {
                    auto merged = topo::merge_lldp(*current, observations);
                    if (!merged) return tl::unexpected(merged.error());
                    report = std::move(merged->report);
                    if (report.added == 0 && report.completed == 0) return std::optional<topo::Topology>();
                    return std::optional<topo::Topology>(std::move(merged->topology));
                  });
  if (!stored) return problem(ctx, stored.error());
  json out = {{"revision", stored->revision},  {"confirmed", report.confirmed},
              {"completed", report.completed}, {"added", report.added},
              {"conflicts", json::array()},    {"unresolved", json::array()}};
  for (const auto& c : report.conflicts) out["conflicts"].push_back(issue_json(c));
  for (const auto& u : report.unresolved) out["unresolved"].push_back(issue_json(u));
  return http::json_response(ctx.request, bhttp::status::ok, out.dump());
}

Response list_lldp(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  auto records = state.store().list_observations();
  if (!records) return problem(ctx, network::to_problem(records.error()));
  json items = json::array();
  for (const auto& o : *records) {
    json j = {{"host", o.host},
              {"neighbor_system", o.neighbor_system},
              {"neighbor_port", o.neighbor_port},
              {"observed_at", o.observed_at}};
    if (!o.port.empty()) j["port"] = o.port;
    if (o.npu) j["npu"] = *o.npu;
    items.push_back(std::move(j));
  }
  return http::json_response(ctx.request, bhttp::status::ok, json({{"items", items}}).dump());
}

Response patch_device(State& state, RequestContext& ctx) {
  if (auto p = network::check_query(ctx, {})) return problem(ctx, *p);
  const std::string name(ctx.path_param("name"));
  if (name.size() > kMaxNameLength) {
    return problem(ctx, Problem::invalid("name", "must be at most 253 characters"));
  }
  auto body = network::json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  FieldReader r(*body);
  std::optional<topo::DeviceState> device_state;
  if (auto s = r.string("state", true, 32)) {
    device_state = topo::parse_state(*s);
    if (!device_state) r.fail("state", "must be one of healthy, sub-health, isolated, allocated");
  }
  const auto npu = r.integer("npu", false, 0, std::numeric_limits<std::uint32_t>::max());
  if (auto p = r.finish()) return problem(ctx, *p);

  topo::Tier tier = topo::Tier::kHost;
  auto stored =
      state.write("state", true, {},
                  [&](const topo::Topology* current) -> tl::expected<std::optional<topo::Topology>, Problem> {
                    auto id = current->find(name);
                    if (!id)
                      return tl::unexpected(Problem::not_found("no host or switch named '" + name + "'"));
                    const auto& node = current->node(*id);
                    tier = node.tier;
                    if (npu) {
                      if (node.tier != topo::Tier::kHost) {
                        return tl::unexpected(Problem::invalid(
                            "npu", "'" + name + "' is a " + std::string(topo::to_string(node.tier)) +
                                       " switch; only hosts have NPUs"));
                      }
                      const topo::NpuRef ref{*id, static_cast<std::uint32_t>(*npu)};
                      const auto* existing = current->npu(ref);
                      if (!existing) {
                        return tl::unexpected(Problem::unprocessable(
                            "npu", "host '" + name + "' has no NPU " + std::to_string(*npu)));
                      }
                      if (existing->state == *device_state) return std::optional<topo::Topology>();
                      topo::Topology next = *current;
                      (void)next.set_npu_state(ref, *device_state);
                      return std::optional<topo::Topology>(std::move(next));
                    }
                    if (node.state == *device_state) return std::optional<topo::Topology>();
                    topo::Topology next = *current;
                    next.set_node_state(*id, *device_state);
                    return std::optional<topo::Topology>(std::move(next));
                  });
  if (!stored) return problem(ctx, stored.error());
  json out = {{"revision", stored->revision},
              {"device", name},
              {"tier", std::string(topo::to_string(tier))},
              {"state", std::string(topo::to_string(*device_state))}};
  if (npu) out["npu"] = *npu;
  return http::json_response(ctx.request, bhttp::status::ok, out.dump());
}

// Strict reading of ClosParams: integers must be JSON integers, numbers finite.
class ParamReader {
 public:
  explicit ParamReader(const json& body) : body_(body) {}

  void integer(const char* name, std::uint32_t& out, std::uint32_t min, std::uint32_t max) {
    seen_.insert(name);
    auto it = body_.find(name);
    if (it == body_.end()) return;
    if (!it->is_number_integer()) return fail(name, "must be an integer");
    const bool negative = !it->is_number_unsigned() && it->get<std::int64_t>() < 0;
    const std::uint64_t v = negative ? 0 : it->get<std::uint64_t>();
    if (negative || v < min || v > max) {
      return fail(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    }
    out = static_cast<std::uint32_t>(v);
  }
  void number(const char* name, double& out, double min, double max, bool min_exclusive) {
    seen_.insert(name);
    auto it = body_.find(name);
    if (it == body_.end()) return;
    if (!it->is_number()) return fail(name, "must be a number");
    const double v = it->get<double>();
    if (!std::isfinite(v) || (min_exclusive ? v <= min : v < min) || v > max) {
      std::ostringstream bounds;
      bounds << (min_exclusive ? "> " : ">= ") << min << " and <= " << max;
      return fail(name, "must be " + bounds.str());
    }
    out = v;
  }
  void string(const char* name, std::string& out, std::size_t max_len) {
    seen_.insert(name);
    auto it = body_.find(name);
    if (it == body_.end()) return;
    if (!it->is_string()) return fail(name, "must be a string");
    const auto& s = it->get_ref<const std::string&>();
    if (s.empty() || s.size() > max_len) {
      return fail(name, "must be 1 to " + std::to_string(max_len) + " characters");
    }
    out = s;
  }
  void fail(std::string name, std::string reason) { errors_.push_back({std::move(name), std::move(reason)}); }
  std::optional<Problem> finish() {
    for (const auto& item : body_.items()) {
      if (!seen_.contains(item.key())) fail(item.key(), "is not a known field");
    }
    if (errors_.empty()) return std::nullopt;
    return Problem::invalid(errors_);
  }

 private:
  const json& body_;
  std::set<std::string, std::less<>> seen_;
  std::vector<InvalidParam> errors_;
};

}  // namespace

tl::expected<TopologySnapshot, Problem> TopologyCache::current() {
  {
    std::lock_guard lock(mutex_);
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(network::to_problem(rev.error()));
    if (*rev == 0) return tl::unexpected(Problem::not_found("no topology has been imported or generated"));
    if (cache_.topology && cache_.revision == *rev) return cache_;
  }
  return load();
}

tl::expected<TopologySnapshot, Problem> TopologyCache::load() {
  // One loader at a time; a writer holds load_mutex_ from its commit until its model is cached, so a
  // reader that saw the new revision early waits for that model instead of parsing the document again.
  std::lock_guard loading(load_mutex_);
  {
    std::lock_guard lock(mutex_);
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(network::to_problem(rev.error()));
    if (*rev == 0) return tl::unexpected(Problem::not_found("no topology has been imported or generated"));
    if (cache_.topology && cache_.revision == *rev) return cache_;
  }
  auto record = store_.get_topology();
  if (!record) return tl::unexpected(network::to_problem(record.error()));
  auto parsed = topo::import_topology(record->document, topo::FileFormat::kAuto, topo::kStoredDocumentLimits);
  if (!parsed) {
    return tl::unexpected(Problem::internal("the stored topology (revision " +
                                            std::to_string(record->revision) +
                                            ") does not parse: " + parsed.error().detail));
  }
  TopologySnapshot loaded{std::make_shared<const topo::Topology>(std::move(*parsed)), record->revision,
                          record->source, record->updated_at};
  std::lock_guard lock(mutex_);
  if (!cache_.topology || cache_.revision < loaded.revision) cache_ = loaded;
  return loaded;
}

tl::expected<AllocatedSnapshot, Problem> TopologyCache::with_jobs(store::JobStore& jobs) {
  auto base = current();
  if (!base) return tl::unexpected(base.error());
  auto jobs_revision = jobs.jobs_revision();
  if (!jobs_revision) return tl::unexpected(network::to_problem(jobs_revision.error()));
  {
    std::lock_guard lock(mutex_);
    if (overlay_.topology && overlay_.base.revision == base->revision &&
        overlay_.jobs_revision == *jobs_revision) {
      return overlay_;
    }
  }
  // Built outside the lock (a copy of the whole model): readers of the cache never wait for it.
  auto allocations = jobs.allocations();
  if (!allocations) return tl::unexpected(network::to_problem(allocations.error()));
  auto held = std::make_shared<HeldNpus>();
  std::shared_ptr<const topo::Topology> overlay = base->topology;
  if (!allocations->npus.empty()) {
    auto copy = std::make_shared<topo::Topology>(*base->topology);
    for (const auto& n : allocations->npus) {
      held->emplace(std::make_pair(n.host, n.npu), n.job);
      // NPUs of a replaced topology that the current one lacks stay held but change nothing here.
      if (auto id = copy->find(n.host); id && copy->node(*id).tier == topo::Tier::kHost) {
        (void)copy->set_npu_state(topo::NpuRef{*id, n.npu}, topo::DeviceState::kAllocated);
      }
    }
    overlay = std::move(copy);
  }
  AllocatedSnapshot built{*base, std::move(overlay), allocations->revision, std::move(held)};
  std::lock_guard lock(mutex_);
  if (!overlay_.topology || overlay_.base.revision < built.base.revision ||
      (overlay_.base.revision == built.base.revision && overlay_.jobs_revision <= built.jobs_revision)) {
    overlay_ = built;
  }
  return built;
}

tl::expected<TopologySnapshot, Problem> TopologyCache::write(
    const std::string& source, bool need_current, const std::vector<store::LldpRecord>& observations,
    const Change& change) {
  // Writers queue here; readers never take write_mutex_, so the heavy part below (the change, the
  // document, its read-back) runs while GET /api/v1/topology keeps answering from the cached revision.
  std::lock_guard writing(write_mutex_);
  TopologySnapshot before;
  if (need_current) {
    auto cur = current();
    if (!cur) return tl::unexpected(cur.error());
    before = std::move(*cur);
  } else {
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(network::to_problem(rev.error()));
    before.revision = *rev;
  }
  auto next = change(before.topology.get());
  if (!next) return tl::unexpected(next.error());
  std::optional<std::string> document;
  std::shared_ptr<const topo::Topology> parsed;
  if (*next) {
    // Store the file schema as JSON (it reads back an order of magnitude faster than YAML) and cache
    // the model as it will read back from that document (as_imported: same ids), so the answers after
    // a restart are the answers now.
    auto model = topo::as_imported(**next);
    next->reset();
    if (!model) return tl::unexpected(std::move(model.error()));  // only the size limits can fail here
    document = topo::export_topology_document(*model).dump();
    parsed = std::make_shared<const topo::Topology>(std::move(*model));
  }
  if (!document && observations.empty()) return before;
  // The commit and the cache swap are the only steps that make loaders wait (see load()).
  std::lock_guard loading(load_mutex_);
  auto stored = store_.write_topology(before.revision, document, source, observations);
  if (!stored) return tl::unexpected(network::to_problem(stored.error()));
  if (!parsed) return before;
  TopologySnapshot snapshot{std::move(parsed), stored->revision, stored->source, stored->updated_at};
  std::lock_guard lock(mutex_);
  cache_ = snapshot;
  return snapshot;
}

tl::expected<topo::ClosParams, Problem> parse_clos_params(const json& body) {
  topo::ClosParams p;
  ParamReader r(body);
  r.integer("hosts", p.hosts, 1, kMaxGenerateHosts);
  r.integer("npus_per_host", p.npus_per_host, 1, network::kMaxNpusPerHost);
  r.integer("hosts_per_su", p.hosts_per_su, 1, kMaxGenerateHosts);
  r.integer("spines_per_plane", p.spines_per_plane, 0, kMaxSwitchesPerPlane);
  r.integer("superpods", p.superpods, 1, kMaxSwitchesPerPlane);
  r.integer("cores", p.cores, 0, kMaxSwitchesPerPlane);
  r.number("host_link_gbps", p.host_link_gbps, 0, 100'000, true);
  r.number("fabric_link_gbps", p.fabric_link_gbps, 0, 100'000, false);
  r.number("leaf_oversubscription", p.leaf_oversubscription, 0, 1000, true);
  r.number("spine_oversubscription", p.spine_oversubscription, 0, 1000, true);
  r.number("host_link_latency_us", p.host_link_latency_us, 0, 1e6, false);
  r.number("fabric_link_latency_us", p.fabric_link_latency_us, 0, 1e6, false);
  r.string("name", p.name, 128);
  if (auto bad = r.finish()) return tl::unexpected(*bad);
  if (p.fabric_link_gbps > 0 && p.fabric_link_gbps < 1) {
    return tl::unexpected(Problem::invalid("fabric_link_gbps", "must be 0 or >= 1"));
  }
  // Every derived count (hosts x NPUs, switches, links including parallel fabric links, index work) is
  // computed from the parameters and checked before anything is generated.
  if (auto size = topo::clos_size(p); !size) return tl::unexpected(std::move(size.error()));
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
  register_topology_routes(router, std::make_shared<TopologyCache>(store));
}

void register_topology_routes(http::Router& router, std::shared_ptr<TopologyCache> cache) {
  using V = bhttp::verb;
  using http::Permission;
  auto state = std::move(cache);
  auto bind = [state](Response (*fn)(State&, RequestContext&)) {
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
  router.add(V::get, "/api/v1/topology/lldp", read, bind(list_lldp));
  router.add(V::patch, "/api/v1/topology/devices/{name}", manage, bind(patch_device));
}

}  // namespace hsns::topology_api
