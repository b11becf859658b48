#include "api/network/routes.h"

#include <algorithm>
#include <condition_variable>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "api/network/requests.h"
#include "hsns/json_fields.h"
#include "hsns/proto/agent.h"
#include "http/conditional.h"
#include "http/json_io.h"
#include "http/json_stream.h"
#include "services/store_errors.h"

namespace hsns::network {
namespace {

using http::Permission;
using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

constexpr std::string_view kApi = "/api/v1";

using http::check_query;
using http::json_request_body;
using http::problem;

// A store's refusal, as every area answers it (services/store_errors.h).
Response store_problem(const RequestContext& ctx, store::StoreError e) {
  return problem(ctx, services::from_store(std::move(e)));
}

using store::RevisionDomain;

// ---- list bodies, streamed (http/json_stream.h) ----
// Each writer emits what to_json (model/network.h) gives dumped, keys in nlohmann's (sorted) order; the
// list tests compare the two byte for byte.

void write_npu(http::JsonWriter& w, const NpuInterface& n) {
  w.begin_object();
  w.key("index").integer(n.index);
  w.key("link_speed_mbps").integer(n.link_speed_mbps);
  w.key("mac").string(n.mac);
  w.key("netdev").string(n.netdev);
  w.key("rdma_device").string(n.rdma_device);
  w.end_object();
}

void write_host(http::JsonWriter& w, const Host& h) {
  w.begin_object();
  w.key("created_at").string(h.created_at);
  w.key("generation").integer(h.generation);
  w.key("name").string(h.name);
  w.key("npus").begin_array();
  for (const auto& n : h.npus) write_npu(w, n);
  w.end_array();
  w.key("updated_at").string(h.updated_at);
  w.end_object();
}

void write_subnet(http::JsonWriter& w, const Subnet& s) {
  w.begin_object();
  w.key("allocation_pools").begin_array();
  for (const auto& p : s.allocation_pools) {
    w.begin_object()
        .key("end")
        .string(p.last.to_string())
        .key("start")
        .string(p.first.to_string())
        .end_object();
  }
  w.end_array();
  w.key("cidr").string(s.cidr.to_string());
  w.key("created_at").string(s.created_at);
  w.key("gateway_ip");
  if (s.gateway) {
    w.string(s.gateway->to_string());
  } else {
    w.null();
  }
  w.key("id").string(s.id);
  w.key("ip_version").integer(s.cidr.family() == IpFamily::v4 ? 4 : 6);
  w.key("mtu").integer(s.mtu);
  w.key("name").string(s.name);
  w.key("port_count").integer(s.port_count);
  w.key("tenant").string(s.tenant);
  w.key("updated_at").string(s.updated_at);
  w.end_object();
}

void write_port(http::JsonWriter& w, const Port& p) {
  w.begin_object();
  w.key("created_at").string(p.created_at);
  w.key("fixed_ip").boolean(p.fixed_ip);
  w.key("host").string(p.host);
  w.key("id").string(p.id);
  w.key("ip_address").string(p.ip_address.to_string());
  w.key("name").string(p.name);
  w.key("npu").integer(p.npu);
  w.key("subnet_id").string(p.subnet_id);
  w.key("tenant").string(p.tenant);
  w.end_object();
}

// {"items":[...]} of a store list, or the store's problem.
template <typename T, typename Write>
tl::expected<std::string, Response> items_body(const RequestContext& ctx,
                                               const store::StoreResult<std::vector<T>>& list, Write write) {
  if (!list) return tl::unexpected(store_problem(ctx, list.error()));
  std::string out;
  constexpr std::size_t kBytesPerItemGuess = 256;
  out.reserve(16 + list->size() * kBytesPerItemGuess);
  http::JsonWriter w(out);
  w.begin_object().key("items").begin_array();
  for (const auto& x : *list) write(w, x);
  w.end_array().end_object();
  return out;
}

// ---- desired documents per network revision ----
// Every host's desired document (its body and tag) as of one network revision, rendered from one read of
// the network data (store host_views) instead of one read per polling host: after a change that touches
// every host, each host's next poll is served from memory as the 304s are.
//
// - Freshness: a request observes the network revision mirror (store/revision.h) and is answered from a
//   snapshot read after the mirror showed at least that revision, never from an older one: a poll never
//   gets a document older than the revision it observed.
// - Built once per revision: the first request that needs a newer snapshot builds it on its own thread;
//   every request arriving meanwhile waits for that build (or, if it observed a still newer revision,
//   for the next one), so N polls after a change cost one read and one render per changed host.
// - A host whose generation did not move since the previous snapshot keeps its rendered document (the
//   generation names the document, network_store.h), so a change to one host renders one document.
// - Memory: one snapshot is kept (plus those still held by requests being answered): per registered host
//   its name, tag and rendered body, about 0.6 KB for a host with one port; 10,000 hosts about 6 MB.
// - A failed read is answered to the requests that waited for that build; the next request tries again.

struct DesiredDocument {
  std::int64_t generation = 0;
  std::string etag;
  std::string body;
};

struct DesiredSnapshot {
  std::int64_t revision = 0;  // the mirror read before the data: the data is at least this new
  std::unordered_map<std::string, std::shared_ptr<const DesiredDocument>> hosts;
};
using SnapshotPtr = std::shared_ptr<const DesiredSnapshot>;

class DesiredDocuments {
 public:
  DesiredDocuments(store::NetworkStore& store, const store::RevisionSource& revisions)
      : store_(store), revisions_(revisions) {}

  // A snapshot of at least the given network revision.
  store::StoreResult<SnapshotPtr> at_least(std::int64_t revision) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (current_ && current_->revision >= revision) return current_;
      if (building_) {
        const auto build = building_;
        built_.wait(lock, [&] { return build->done; });
        if (!build->result && build->revision >= revision) return tl::unexpected(build->result.error());
        continue;
      }
      // This request builds, at the revision the mirror shows now (at least the one asked for).
      const auto build = std::make_shared<Build>();
      build->revision = revisions_.revision(RevisionDomain::network);
      building_ = build;
      const auto previous = current_;
      lock.unlock();
      store::StoreResult<SnapshotPtr> result = tl::unexpected(Error::internal("desired state: build failed"));
      try {
        result = read_and_render(build->revision, previous.get());
      } catch (...) {
        publish(lock, *build, std::move(result));  // the waiters must not wait for ever
        throw;
      }
      publish(lock, *build, std::move(result));
      if (!build->result) return tl::unexpected(build->result.error());
    }
  }

 private:
  struct Build {
    std::int64_t revision = 0;
    bool done = false;
    store::StoreResult<SnapshotPtr> result;
  };

  void publish(std::unique_lock<std::mutex>& lock, Build& build, store::StoreResult<SnapshotPtr> result) {
    lock.lock();
    build.result = std::move(result);
    build.done = true;
    if (build.result && (!current_ || (*build.result)->revision > current_->revision))
      current_ = *build.result;
    building_.reset();
    built_.notify_all();
  }

  store::StoreResult<SnapshotPtr> read_and_render(std::int64_t revision, const DesiredSnapshot* previous) {
    auto views = store_.host_views();
    if (!views) return tl::unexpected(views.error());
    const auto& instance = revisions_.instance();
    auto snapshot = std::make_shared<DesiredSnapshot>();
    snapshot->revision = revision;
    snapshot->hosts.reserve(views->size());
    for (const auto& view : *views) {
      const auto& name = view.host.name;
      if (previous != nullptr) {
        const auto kept = previous->hosts.find(name);
        if (kept != previous->hosts.end() && kept->second->generation == view.host.generation) {
          snapshot->hosts.emplace(name, kept->second);
          continue;
        }
      }
      snapshot->hosts.emplace(name, std::make_shared<const DesiredDocument>(DesiredDocument{
                                        view.host.generation, desired_etag(instance, view.host.generation),
                                        render_desired_state(view)}));
    }
    return SnapshotPtr(std::move(snapshot));
  }

  store::NetworkStore& store_;
  const store::RevisionSource& revisions_;
  std::mutex mutex_;
  std::condition_variable built_;
  SnapshotPtr current_;
  std::shared_ptr<Build> building_;  // the build in progress, if any
};

// What the network routes keep between requests: rendered lists per store revision, and the desired
// documents of every host per network revision (none when the store keeps no revisions: then every
// desired-state request reads its host's view).
struct RouteState {
  explicit RouteState(store::NetworkStore& s)
      : store(s),
        desired(s.revisions() != nullptr ? std::make_unique<DesiredDocuments>(s, *s.revisions()) : nullptr) {}

  store::NetworkStore& store;
  http::ResponseCache lists;
  std::unique_ptr<DesiredDocuments> desired;
};

nlohmann::json port_summary(const Port& p, const Subnet& s) {
  return {{"port_id", p.id},
          {"host", p.host},
          {"npu", p.npu},
          {"ip_address", p.ip_address.to_string()},
          {"subnet_id", s.id},
          {"subnet_name", s.name},
          {"cidr", s.cidr.to_string()},
          {"tenant", s.tenant}};
}

// ---- hosts ----

Response list_hosts(RouteState& state, RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  const auto version = http::document_version(state.store.revisions(), std::string(kApi) + "/hosts",
                                              {RevisionDomain::network});
  return http::conditional_get(ctx, state.lists, version,
                               [&] { return items_body(ctx, state.store.list_hosts(), write_host); });
}

Response get_host(store::NetworkStore& store, RequestContext& ctx) {
  auto host = store.get_host(std::string(ctx.path_param("host")));
  if (!host) return store_problem(ctx, host.error());
  return http::json_ok(ctx, to_json(*host));
}

Response put_host(store::NetworkStore& store, RequestContext& ctx) {
  auto body = json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto reg = parse_host_registration(ctx.path_param("host"), *body);
  if (!reg) return problem(ctx, reg.error());
  // 201 or 200 is the store's answer from inside its write transaction: a lookup before the call would
  // let concurrent first registrations all see "absent" and all answer 201.
  auto put = store.put_host(*reg);
  if (!put) return store_problem(ctx, put.error());
  if (!put->created) return http::json_ok(ctx, to_json(put->host));
  return http::json_created(ctx, to_json(put->host), std::string(kApi) + "/hosts/" + put->host.name);
}

// ---- subnets ----

Response create_subnet(store::NetworkStore& store, RequestContext& ctx) {
  auto body = json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto spec = parse_subnet_create(*body);
  if (!spec) return problem(ctx, spec.error());
  auto subnet = store.create_subnet(*spec);
  if (!subnet) return store_problem(ctx, subnet.error());
  return http::json_created(ctx, to_json(*subnet), std::string(kApi) + "/subnets/" + subnet->id);
}

Response list_subnets(RouteState& state, RequestContext& ctx) {
  if (auto p = check_query(ctx, {"tenant", "name"})) return problem(ctx, *p);
  const auto version = http::document_version(
      state.store.revisions(), http::normalised_key(ctx, std::string(kApi) + "/subnets", {"tenant", "name"}),
      {RevisionDomain::network});
  return http::conditional_get(ctx, state.lists, version, [&] {
    const SubnetFilter f{ctx.query("tenant"), ctx.query("name")};
    return items_body(ctx, state.store.list_subnets(f), write_subnet);
  });
}

Response get_subnet(store::NetworkStore& store, RequestContext& ctx) {
  auto subnet = store.get_subnet(std::string(ctx.path_param("subnet_id")));
  if (!subnet) return store_problem(ctx, subnet.error());
  return http::json_ok(ctx, to_json(*subnet));
}

Response update_subnet(store::NetworkStore& store, RequestContext& ctx) {
  auto body = json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto update = parse_subnet_update(*body);
  if (!update) return problem(ctx, update.error());
  auto subnet = store.update_subnet(std::string(ctx.path_param("subnet_id")), *update);
  if (!subnet) return store_problem(ctx, subnet.error());
  return http::json_ok(ctx, to_json(*subnet));
}

Response delete_subnet(store::NetworkStore& store, RequestContext& ctx) {
  auto r = store.delete_subnet(std::string(ctx.path_param("subnet_id")));
  if (!r) return store_problem(ctx, r.error());
  return http::empty_response(ctx.request, bhttp::status::no_content);
}

// ---- ports ----

Response create_port(store::NetworkStore& store, RequestContext& ctx) {
  auto body = json_request_body(ctx);
  if (!body) return problem(ctx, body.error());
  auto spec = parse_port_create(*body);
  if (!spec) return problem(ctx, spec.error());
  auto port = store.create_port(*spec);
  if (!port) return store_problem(ctx, port.error());
  return http::json_created(ctx, to_json(*port), std::string(kApi) + "/ports/" + port->id);
}

Response list_ports(RouteState& state, RequestContext& ctx) {
  if (auto p = check_query(ctx, {"host", "subnet_id", "tenant"})) return problem(ctx, *p);
  const auto version = http::document_version(
      state.store.revisions(),
      http::normalised_key(ctx, std::string(kApi) + "/ports", {"host", "subnet_id", "tenant"}),
      {RevisionDomain::network});
  return http::conditional_get(ctx, state.lists, version, [&] {
    const PortFilter f{ctx.query("host"), ctx.query("subnet_id"), ctx.query("tenant")};
    return items_body(ctx, state.store.list_ports(f), write_port);
  });
}

Response get_port(store::NetworkStore& store, RequestContext& ctx) {
  auto port = store.get_port(std::string(ctx.path_param("port_id")));
  if (!port) return store_problem(ctx, port.error());
  return http::json_ok(ctx, to_json(*port));
}

Response delete_port(store::NetworkStore& store, RequestContext& ctx) {
  auto r = store.delete_port(std::string(ctx.path_param("port_id")));
  if (!r) return store_problem(ctx, r.error());
  return http::empty_response(ctx.request, bhttp::status::no_content);
}

// ---- reachability ----

Response reachability(store::NetworkStore& store, RequestContext& ctx) {
  if (auto p = check_query(ctx, {"src_port", "dst_port"})) return problem(ctx, *p);
  const auto src_id = ctx.query("src_port");
  const auto dst_id = ctx.query("dst_port");
  std::vector<InvalidParam> missing;
  if (!src_id || src_id->empty()) missing.push_back({"src_port", "is required (a port id)"});
  if (!dst_id || dst_id->empty()) missing.push_back({"dst_port", "is required (a port id)"});
  if (!missing.empty()) return problem(ctx, Problem::invalid(std::move(missing)));

  // Both ports and their subnets from one snapshot, so the answer describes one moment.
  auto placements = store.port_placements({*src_id, *dst_id});
  if (!placements) return store_problem(ctx, placements.error());
  if (placements->size() != 2)
    return problem(ctx, Problem::internal("store answered the wrong number of ports"));
  if (!(*placements)[0]) return problem(ctx, Problem::not_found("src_port " + *src_id + " does not exist"));
  if (!(*placements)[1]) return problem(ctx, Problem::not_found("dst_port " + *dst_id + " does not exist"));
  const Port* src = &(*placements)[0]->port;
  const Port* dst = &(*placements)[1]->port;
  const Subnet* src_subnet = &(*placements)[0]->subnet;
  const Subnet* dst_subnet = &(*placements)[1]->subnet;

  bool reachable = false;
  std::string reason;
  if (src->id == dst->id) {
    reachable = true;
    reason = "source and destination are the same port";
  } else if (src->subnet_id == dst->subnet_id) {
    reachable = true;
    reason = "both ports are in subnet " + src_subnet->name + " (" + src_subnet->cidr.to_string() + ")";
  } else {
    reason = "the ports are in different subnets, which hsns isolates from each other: " + src_subnet->name +
             " (" + src_subnet->cidr.to_string() + ", tenant " + src_subnet->tenant + ") and " +
             dst_subnet->name + " (" + dst_subnet->cidr.to_string() + ", tenant " + dst_subnet->tenant + ")";
  }
  return http::json_ok(ctx, {{"src_port", src->id},
                             {"dst_port", dst->id},
                             {"reachable", reachable},
                             {"reason", reason},
                             {"src", port_summary(*src, *src_subnet)},
                             {"dst", port_summary(*dst, *dst_subnet)}});
}

// ---- desired state ----

Response desired_state(RouteState& state, RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  const std::string host(ctx.path_param("host"));
  const auto inm = ctx.request[bhttp::field::if_none_match];
  // The generation check: the host's generation names its document (every change of the document bumps
  // it in the writing transaction), so a poll that holds the current tag gets a 304.
  if (!state.desired) {
    auto view = state.store.host_view(host);
    if (!view) return store_problem(ctx, view.error());
    const auto etag = desired_etag(std::string(), view->host.generation);
    if (!inm.empty() && http::if_none_match_matches(inm, etag)) return http::not_modified(ctx, etag);
    return http::tagged_json(ctx, render_desired_state(*view), etag);
  }
  const auto snapshot = state.desired->at_least(state.store.revisions()->revision(RevisionDomain::network));
  if (!snapshot) return store_problem(ctx, snapshot.error());
  const auto it = (*snapshot)->hosts.find(host);
  if (it == (*snapshot)->hosts.end())
    return store_problem(ctx, store::StoreError::not_found("host " + host + " not found"));
  const auto& document = *it->second;
  if (!inm.empty() && http::if_none_match_matches(inm, document.etag))
    return http::not_modified(ctx, document.etag);
  return http::tagged_json(ctx, document.body, document.etag);
}

}  // namespace

std::string desired_etag(std::string_view instance, std::int64_t generation) {
  std::string tag = "\"d" + std::to_string(generation);
  if (!instance.empty()) {
    tag += '-';
    tag += instance;
  }
  tag += '"';
  return tag;
}

std::string render_desired_state(const HostView& view) {
  proto::DesiredState doc{view.host.name, view.host.generation, {}};
  for (const auto& p : view.ports) {
    const auto subnet = std::find_if(view.subnets.begin(), view.subnets.end(),
                                     [&](const Subnet& s) { return s.id == p.subnet_id; });
    if (subnet == view.subnets.end()) continue;  // impossible in a consistent snapshot
    const auto npu = std::find_if(view.host.npus.begin(), view.host.npus.end(),
                                  [&](const NpuInterface& n) { return n.index == p.npu; });
    proto::DesiredPort port;
    port.port_id = p.id;
    port.name = p.name;
    port.npu = p.npu;
    if (npu != view.host.npus.end()) {
      port.netdev = npu->netdev;
      port.mac = npu->mac;
    }
    port.subnet_id = subnet->id;
    port.subnet_name = subnet->name;
    port.tenant = subnet->tenant;
    port.address = p.ip_address;
    port.cidr = subnet->cidr;
    port.mtu = subnet->mtu;
    port.gateway = subnet->gateway;
    port.allowed_prefixes = {subnet->cidr};
    doc.ports.push_back(std::move(port));
  }
  return proto::encode(doc);
}

void register_network_routes(http::Router& router, store::NetworkStore& store) {
  using V = bhttp::verb;
  const auto read = http::permits(Permission::read);
  const auto manage = http::permits(Permission::manage_network);
  const auto host_write = Permission::manage_network | Permission::agent_report;
  auto bind = [&store](Response (*fn)(store::NetworkStore&, RequestContext&)) {
    return [&store, fn](RequestContext& ctx) { return fn(store, ctx); };
  };
  auto state = std::make_shared<RouteState>(store);
  auto bind_state = [state](Response (*fn)(RouteState&, RequestContext&)) {
    return [state, fn](RequestContext& ctx) { return fn(*state, ctx); };
  };
  const std::string api(kApi);
  router.add(V::get, api + "/hosts", read, bind_state(list_hosts));
  router.add(V::get, api + "/hosts/{host}", read, bind(get_host));
  router.add(V::put, api + "/hosts/{host}", host_write, bind(put_host));
  router.add(V::post, api + "/subnets", manage, bind(create_subnet));
  router.add(V::get, api + "/subnets", read, bind_state(list_subnets));
  router.add(V::get, api + "/subnets/{subnet_id}", read, bind(get_subnet));
  router.add(V::patch, api + "/subnets/{subnet_id}", manage, bind(update_subnet));
  router.add(V::delete_, api + "/subnets/{subnet_id}", manage, bind(delete_subnet));
  router.add(V::post, api + "/ports", manage, bind(create_port));
  router.add(V::get, api + "/ports", read, bind_state(list_ports));
  router.add(V::get, api + "/ports/{port_id}", read, bind(get_port));
  router.add(V::delete_, api + "/ports/{port_id}", manage, bind(delete_port));
  router.add(V::get, api + "/reachability", read, bind(reachability));
  router.add(V::get, api + "/agents/{host}/desired", read, bind_state(desired_state));
}

}  // namespace hsns::network
