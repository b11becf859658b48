#include "api/network/routes.h"

#include <openssl/sha.h>

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "api/network/requests.h"
#include "hsns/json_fields.h"
#include "hsns/proto/agent.h"
#include "http/json_io.h"
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

template <typename T>
nlohmann::json items(const std::vector<T>& v) {
  auto arr = nlohmann::json::array();
  for (const auto& x : v) arr.push_back(to_json(x));
  return {{"items", std::move(arr)}};
}

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    s.push_back(kHex[p[i] >> 4]);
    s.push_back(kHex[p[i] & 0xF]);
  }
  return s;
}

// RFC 9110 If-None-Match: "*" or a list of (possibly weak) entity tags; weak comparison for GET.
bool etag_matches(std::string_view header, std::string_view etag) {
  if (header.find('*') != std::string_view::npos && header.find('"') == std::string_view::npos) return true;
  std::size_t pos = 0;
  while (pos < header.size()) {
    auto comma = header.find(',', pos);
    if (comma == std::string_view::npos) comma = header.size();
    auto tag = header.substr(pos, comma - pos);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == etag) return true;
    pos = comma + 1;
  }
  return false;
}

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

Response list_hosts(store::NetworkStore& store, RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  auto hosts = store.list_hosts();
  if (!hosts) return store_problem(ctx, hosts.error());
  return http::json_ok(ctx, items(*hosts));
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

Response list_subnets(store::NetworkStore& store, RequestContext& ctx) {
  if (auto p = check_query(ctx, {"tenant", "name"})) return problem(ctx, *p);
  SubnetFilter f{ctx.query("tenant"), ctx.query("name")};
  auto subnets = store.list_subnets(f);
  if (!subnets) return store_problem(ctx, subnets.error());
  return http::json_ok(ctx, items(*subnets));
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

Response list_ports(store::NetworkStore& store, RequestContext& ctx) {
  if (auto p = check_query(ctx, {"host", "subnet_id", "tenant"})) return problem(ctx, *p);
  PortFilter f{ctx.query("host"), ctx.query("subnet_id"), ctx.query("tenant")};
  auto ports = store.list_ports(f);
  if (!ports) return store_problem(ctx, ports.error());
  return http::json_ok(ctx, items(*ports));
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

Response desired_state(store::NetworkStore& store, RequestContext& ctx) {
  if (auto p = check_query(ctx, {})) return problem(ctx, *p);
  auto view = store.host_view(std::string(ctx.path_param("host")));
  if (!view) return store_problem(ctx, view.error());
  const auto doc = render_desired_state(*view);
  if (const auto inm = ctx.request[bhttp::field::if_none_match];
      !inm.empty() && etag_matches(inm, doc.etag)) {
    auto res = http::empty_response(ctx.request, bhttp::status::not_modified);
    res.set(bhttp::field::etag, doc.etag);
    return res;
  }
  auto res = http::json_response(ctx.request, bhttp::status::ok, doc.body);
  res.set(bhttp::field::etag, doc.etag);
  return res;
}

}  // namespace

DesiredDocument render_desired_state(const HostView& view) {
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
  DesiredDocument out;
  out.body = proto::encode(doc);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(out.body.data()), out.body.size(), digest);
  out.etag = "\"" + hex(digest, 16) + "\"";
  return out;
}

void register_network_routes(http::Router& router, store::NetworkStore& store) {
  using V = bhttp::verb;
  const auto read = http::permits(Permission::read);
  const auto manage = http::permits(Permission::manage_network);
  const auto host_write = Permission::manage_network | Permission::agent_report;
  auto bind = [&store](Response (*fn)(store::NetworkStore&, RequestContext&)) {
    return [&store, fn](RequestContext& ctx) { return fn(store, ctx); };
  };
  const std::string api(kApi);
  router.add(V::get, api + "/hosts", read, bind(list_hosts));
  router.add(V::get, api + "/hosts/{host}", read, bind(get_host));
  router.add(V::put, api + "/hosts/{host}", host_write, bind(put_host));
  router.add(V::post, api + "/subnets", manage, bind(create_subnet));
  router.add(V::get, api + "/subnets", read, bind(list_subnets));
  router.add(V::get, api + "/subnets/{subnet_id}", read, bind(get_subnet));
  router.add(V::patch, api + "/subnets/{subnet_id}", manage, bind(update_subnet));
  router.add(V::delete_, api + "/subnets/{subnet_id}", manage, bind(delete_subnet));
  router.add(V::post, api + "/ports", manage, bind(create_port));
  router.add(V::get, api + "/ports", read, bind(list_ports));
  router.add(V::get, api + "/ports/{port_id}", read, bind(get_port));
  router.add(V::delete_, api + "/ports/{port_id}", manage, bind(delete_port));
  router.add(V::get, api + "/reachability", read, bind(reachability));
  router.add(V::get, api + "/agents/{host}/desired", read, bind(desired_state));
}

}  // namespace hsns::network
