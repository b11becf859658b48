#include "commands.h"

#include <nlohmann/json.hpp>

#include "args.h"
#include "request.h"
#include "views.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

// Builds "?a=1&b=2" from the non-empty values, percent-encoded.
class Query {
 public:
  Query& add(std::string_view name, const std::string& value) {
    if (value.empty()) return *this;
    text_ += text_.empty() ? '?' : '&';
    text_ += name;
    text_ += '=';
    text_ += hsns::encode_query_value(value);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

std::string segment(const std::string& value) {
  return hsns::encode_path_segment(value);
}

void show_list(Context& ctx, const json& answer, Table (*view)(const json&)) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
  } else {
    view(list_items(answer)).render(ctx.out);
  }
}

void show_one(Context& ctx, const json& object, Table (*view)(const json&)) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, object);
  } else {
    view(json::array({object})).render(ctx.out);
  }
}

void show_host(Context& ctx, const json& host) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, host);
    return;
  }
  hosts_table(json::array({host})).render(ctx.out);
  ctx.out << '\n';
  npus_table(host.is_object() && host.contains("npus") ? host["npus"] : json::array()).render(ctx.out);
}

void require_value(const std::string& value, const std::string& what) {
  if (value.empty()) throw usage_error(what + " must not be empty");
}

json find_subnet(Context& ctx, const std::string& id_or_name, const std::string& tenant) {
  require_value(id_or_name, "the subnet id or name");
  if (is_uuid(id_or_name)) return call_json(ctx, "GET", "/api/v1/subnets/" + segment(id_or_name));
  auto answer =
      call_json(ctx, "GET", "/api/v1/subnets" + Query().add("tenant", tenant).add("name", id_or_name).str());
  std::vector<const json*> matches;
  for (const auto& subnet : list_items(answer)) {
    // Filter again here: the answer must match exactly, whatever the server did with the query.
    if (cell_text(subnet, "name") != id_or_name) continue;
    if (!tenant.empty() && cell_text(subnet, "tenant") != tenant) continue;
    matches.push_back(&subnet);
  }
  std::string in_tenant = tenant.empty() ? "" : " in tenant '" + tenant + "'";
  if (matches.empty()) throw failure("no subnet named '" + id_or_name + "'" + in_tenant);
  if (matches.size() > 1) {
    std::string tenants;
    for (const auto* subnet : matches)
      tenants += (tenants.empty() ? "" : ", ") + cell_text(*subnet, "tenant");
    throw failure("subnet name '" + id_or_name + "' is ambiguous" + in_tenant + ": it exists in tenants " +
                  tenants + "; narrow it with --tenant or use the subnet id");
  }
  return *matches.front();
}

json pools_json(const std::vector<std::string>& specs) {
  json pools = json::array();
  for (const auto& spec : specs) {
    auto pool = parse_pool_spec(spec);
    if (!pool) throw usage_error(pool.error());
    pools.push_back(pool->to_json());
  }
  return pools;
}

}  // namespace

std::string resolve_subnet_id(Context& ctx, const std::string& id_or_name, const std::string& tenant) {
  if (is_uuid(id_or_name)) return id_or_name;
  auto id = cell_text(find_subnet(ctx, id_or_name, tenant), "id");
  if (id.empty()) throw failure("the server answered subnet '" + id_or_name + "' without an id");
  return id;
}

void hosts_list(Context& ctx) {
  show_list(ctx, call_json(ctx, "GET", "/api/v1/hosts"), hosts_table);
}

void hosts_get(Context& ctx, const std::string& host) {
  require_value(host, "HOST");
  show_host(ctx, call_json(ctx, "GET", "/api/v1/hosts/" + segment(host)));
}

void hosts_register(Context& ctx, const std::string& host, const std::vector<std::string>& npu_specs) {
  require_value(host, "HOST");
  json npus = json::array();
  for (const auto& spec : npu_specs) {
    auto npu = parse_npu_spec(spec);
    if (!npu) throw usage_error(npu.error());
    npus.push_back(npu->to_json());
  }
  json body = {{"npus", std::move(npus)}};
  show_host(ctx, call_json(ctx, "PUT", "/api/v1/hosts/" + segment(host), body.dump()));
}

void subnets_list(Context& ctx, const std::string& tenant, const std::string& name) {
  show_list(ctx,
            call_json(ctx, "GET", "/api/v1/subnets" + Query().add("tenant", tenant).add("name", name).str()),
            subnets_table);
}

void subnets_get(Context& ctx, const std::string& id_or_name, const std::string& tenant) {
  show_one(ctx, find_subnet(ctx, id_or_name, tenant), subnets_table);
}

void subnets_create(Context& ctx, const SubnetCreateArgs& args) {
  json body = {{"name", args.name}, {"cidr", args.cidr}};
  if (args.tenant) body["tenant"] = *args.tenant;
  if (args.gateway_ip) body["gateway_ip"] = *args.gateway_ip;
  if (!args.pools.empty()) body["allocation_pools"] = pools_json(args.pools);
  if (args.mtu) body["mtu"] = *args.mtu;
  show_one(ctx, call_json(ctx, "POST", "/api/v1/subnets", body.dump()), subnets_table);
}

void subnets_update(Context& ctx, const SubnetUpdateArgs& args) {
  if (!args.name && args.pools.empty()) throw usage_error("nothing to update: give --name and/or --pool");
  json body = json::object();
  if (args.name) body["name"] = *args.name;
  if (!args.pools.empty()) body["allocation_pools"] = pools_json(args.pools);
  auto id = resolve_subnet_id(ctx, args.id_or_name, args.tenant);
  show_one(ctx, call_json(ctx, "PATCH", "/api/v1/subnets/" + segment(id), body.dump()), subnets_table);
}

void subnets_delete(Context& ctx, const std::string& id_or_name, const std::string& tenant) {
  auto id = resolve_subnet_id(ctx, id_or_name, tenant);
  call_json(ctx, "DELETE", "/api/v1/subnets/" + segment(id));
  if (ctx.format == OutputFormat::table) ctx.out << "deleted subnet " << id << '\n';
}

void ports_list(Context& ctx, const PortListArgs& args) {
  std::string subnet_id = args.subnet.empty() ? "" : resolve_subnet_id(ctx, args.subnet, args.tenant);
  Query query;
  query.add("host", args.host).add("subnet_id", subnet_id).add("tenant", args.tenant);
  show_list(ctx, call_json(ctx, "GET", "/api/v1/ports" + query.str()), ports_table);
}

void ports_get(Context& ctx, const std::string& id) {
  require_value(id, "the port id");
  show_one(ctx, call_json(ctx, "GET", "/api/v1/ports/" + segment(id)), ports_table);
}

void ports_create(Context& ctx, const PortCreateArgs& args) {
  auto subnet_id = resolve_subnet_id(ctx, args.subnet, args.tenant);
  json body = {{"subnet_id", subnet_id}, {"host", args.host}, {"npu", args.npu}};
  if (args.ip_address) body["ip_address"] = *args.ip_address;
  if (args.name) body["name"] = *args.name;
  show_one(ctx, call_json(ctx, "POST", "/api/v1/ports", body.dump()), ports_table);
}

void ports_delete(Context& ctx, const std::string& id) {
  require_value(id, "the port id");
  call_json(ctx, "DELETE", "/api/v1/ports/" + segment(id));
  if (ctx.format == OutputFormat::table) ctx.out << "deleted port " << id << '\n';
}

void reachability(Context& ctx, const std::string& src_port, const std::string& dst_port) {
  require_value(src_port, "SRC_PORT_ID");
  require_value(dst_port, "DST_PORT_ID");
  auto answer = call_json(
      ctx, "GET", "/api/v1/reachability" + Query().add("src_port", src_port).add("dst_port", dst_port).str());
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
  } else {
    reachability_table(answer).render(ctx.out);
  }
}

void desired(Context& ctx, const std::string& host) {
  require_value(host, "HOST");
  auto answer = call_json(ctx, "GET", "/api/v1/agents/" + segment(host) + "/desired");
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
  } else {
    desired_table(answer).render(ctx.out);
  }
}

void health(Context& ctx) {
  struct Check {
    const char* name;
    const char* target;
  };
  const Check checks[] = {{"healthz", "/healthz"}, {"readyz", "/readyz"}};
  json answers = json::object();
  Table table({"CHECK", "HTTP", "STATUS", "DETAIL"});
  std::string failed;
  for (const auto& check : checks) {
    auto res = send_request(ctx, "GET", check.target);
    auto doc = json::parse(res.body, nullptr, false);
    if (doc.is_discarded()) doc = res.body;
    bool ok = res.status == 200;
    std::string status = ok ? cell_text(doc, "status") : cell_text(doc, "title");
    table.add_row({check.name, std::to_string(res.status), status.empty() ? (ok ? "ok" : "failed") : status,
                   ok ? "" : cell_text(doc, "detail")});
    answers[check.name] = std::move(doc);
    if (!ok) failed += (failed.empty() ? "" : ", ") + std::string(check.target);
  }
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answers);
  } else {
    table.render(ctx.out);
  }
  if (!failed.empty()) throw failure("not healthy: " + failed + " did not answer 200");
}

void metrics(Context& ctx) {
  auto res = send_request(ctx, "GET", "/metrics");
  if (res.status != 200) throw server_error(ctx, res);
  ctx.out << res.body;
  if (!res.body.empty() && res.body.back() != '\n') ctx.out << '\n';
}

void openapi(Context& ctx) {
  print_json(ctx.out, call_json(ctx, "GET", "/api/v1/openapi.json"));
}

}  // namespace hsnsctl
