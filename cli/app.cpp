#include "app.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "hsns/http_client.h"
#include "hsns/version.h"
#include "output.h"

namespace hsnsctl {

void add_flow_commands(CLI::App& app, std::function<void(Context&)>& action);        // cli/flows.cpp
void add_topology_commands(CLI::App& app, std::function<void(Context&)>& action);    // cli/topology.cpp
void add_scheduling_commands(CLI::App& app, std::function<void(Context&)>& action);  // cli/scheduling.cpp
void add_telemetry_commands(CLI::App& app, std::function<void(Context&)>& action);   // cli/telemetry.cpp
void add_diagnose_commands(CLI::App& app, std::function<void(Context&)>& action);    // cli/diagnose.cpp
void add_scenario_commands(CLI::App& app, std::function<void(Context&)>& action);    // cli/scenario.cpp

namespace {

using Action = std::function<void(Context&)>;

struct GlobalOptions {
  std::string server = "http://127.0.0.1:8080";
  std::string token_file;
  std::string cacert;
  std::string output = "table";
  double timeout_seconds = 30;
};

// Option values of every command; CLI11 writes into these, so they live as long as the App.
struct CommandOptions {
  std::string host;
  std::vector<std::string> npu_specs;
  std::string tenant;
  std::string name;
  std::string id;
  std::string src;
  std::string dst;
  SubnetCreateArgs subnet_create;
  SubnetUpdateArgs subnet_update;
  PortListArgs port_list;
  PortCreateArgs port_create;
  std::string opt_tenant;
  std::string opt_gateway;
  std::string opt_name;
  std::string opt_ip;
  std::int64_t opt_mtu = 0;
};

const CLI::Validator kNonNegative(
    [](std::string& value) {
      return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos
                 ? std::string()
                 : "'" + value + "' is not a non-negative integer";
    },
    "NON-NEGATIVE");

// Sets *action when the subcommand was chosen (CLI11 runs the callback after parsing).
void on_run(CLI::App* sub, Action& action, Action chosen) {
  sub->callback([&action, chosen = std::move(chosen)] { action = chosen; });
}

CLI::App* group(CLI::App& app, const char* name, const char* description) {
  auto* sub = app.add_subcommand(name, description);
  sub->require_subcommand(1);
  return sub;
}

void add_host_commands(CLI::App& app, CommandOptions& o, Action& action) {
  auto* hosts = group(app, "hosts", "Registered hosts and their NPU interfaces");
  on_run(hosts->add_subcommand("list", "List hosts (GET /api/v1/hosts)"), action,
         [](Context& c) { hosts_list(c); });

  auto* get = hosts->add_subcommand("get", "Show one host (GET /api/v1/hosts/{host})");
  get->add_option("HOST", o.host, "Host name")->required();
  on_run(get, action, [&o](Context& c) { hosts_get(c, o.host); });

  auto* reg = hosts->add_subcommand("register", "Register or replace a host (PUT /api/v1/hosts/{host})");
  reg->add_option("HOST", o.host, "Host name")->required();
  reg->add_option("--npu", o.npu_specs, "NPU interface INDEX:NETDEV:MAC[:RDMA_DEV[:SPEED_MBPS]] (repeatable)")
      ->allow_extra_args(false);
  on_run(reg, action, [&o](Context& c) { hosts_register(c, o.host, o.npu_specs); });
}

void add_subnet_commands(CLI::App& app, CommandOptions& o, Action& action) {
  auto* subnets = group(app, "subnets", "Tenant subnets");

  auto* list = subnets->add_subcommand("list", "List subnets (GET /api/v1/subnets)");
  list->add_option("--tenant", o.tenant, "Only subnets of this tenant");
  list->add_option("--name", o.name, "Only subnets with this name");
  on_run(list, action, [&o](Context& c) { subnets_list(c, o.tenant, o.name); });

  auto* get = subnets->add_subcommand("get", "Show one subnet (GET /api/v1/subnets/{id})");
  get->add_option("ID_OR_NAME", o.id, "Subnet id, or a name (resolved with GET /api/v1/subnets?name=)")
      ->required();
  get->add_option("--tenant", o.tenant, "Tenant of the subnet name");
  on_run(get, action, [&o](Context& c) { subnets_get(c, o.id, o.tenant); });

  auto* create = subnets->add_subcommand("create", "Create a subnet (POST /api/v1/subnets)");
  auto& ca = o.subnet_create;
  create->add_option("--name", ca.name, "Subnet name, unique in the tenant")->required();
  create->add_option("--cidr", ca.cidr, "Network, e.g. 198.18.0.0/24 or fd00:1::/64")->required();
  auto* tenant = create->add_option("--tenant", o.opt_tenant, "Tenant (server default: default)");
  auto* gateway = create->add_option("--gateway", o.opt_gateway, "Gateway address inside the CIDR");
  create->add_option("--pool", ca.pools, "Allocation pool START-END (repeatable)")->allow_extra_args(false);
  auto* mtu = create->add_option("--mtu", o.opt_mtu, "MTU (server default: 9000)");
  on_run(create, action, [&o, tenant, gateway, mtu](Context& c) {
    auto args = o.subnet_create;
    if (tenant->count() > 0) args.tenant = o.opt_tenant;
    if (gateway->count() > 0) args.gateway_ip = o.opt_gateway;
    if (mtu->count() > 0) args.mtu = o.opt_mtu;
    subnets_create(c, args);
  });

  auto* update = subnets->add_subcommand("update", "Rename a subnet or replace its pools (PATCH)");
  auto& ua = o.subnet_update;
  update->add_option("ID_OR_NAME", ua.id_or_name, "Subnet id or name")->required();
  update->add_option("--tenant", ua.tenant, "Tenant of the subnet name");
  auto* new_name = update->add_option("--name", o.opt_name, "New name");
  update->add_option("--pool", ua.pools, "Allocation pool START-END (repeatable; replaces all pools)")
      ->allow_extra_args(false);
  on_run(update, action, [&o, new_name](Context& c) {
    auto args = o.subnet_update;
    if (new_name->count() > 0) args.name = o.opt_name;
    subnets_update(c, args);
  });

  auto* del = subnets->add_subcommand("delete", "Delete a subnet without ports (DELETE)");
  del->add_option("ID_OR_NAME", o.id, "Subnet id or name")->required();
  del->add_option("--tenant", o.tenant, "Tenant of the subnet name");
  on_run(del, action, [&o](Context& c) { subnets_delete(c, o.id, o.tenant); });
}

void add_port_commands(CLI::App& app, CommandOptions& o, Action& action) {
  auto* ports = group(app, "ports", "Ports: an address of a subnet on one NPU of a host");

  auto* list = ports->add_subcommand("list", "List ports (GET /api/v1/ports)");
  list->add_option("--host", o.port_list.host, "Only ports on this host");
  list->add_option("--subnet", o.port_list.subnet, "Only ports in this subnet (id or name)");
  list->add_option("--tenant", o.port_list.tenant, "Only ports of this tenant (also narrows --subnet)");
  on_run(list, action, [&o](Context& c) { ports_list(c, o.port_list); });

  auto* get = ports->add_subcommand("get", "Show one port (GET /api/v1/ports/{id})");
  get->add_option("ID", o.id, "Port id")->required();
  on_run(get, action, [&o](Context& c) { ports_get(c, o.id); });

  auto* create = ports->add_subcommand("create", "Create a port (POST /api/v1/ports)");
  auto& ca = o.port_create;
  create->add_option("--subnet", ca.subnet, "Subnet id or name")->required();
  create->add_option("--tenant", ca.tenant, "Tenant of the subnet name");
  create->add_option("--host", ca.host, "Registered host")->required();
  create->add_option("--npu", ca.npu, "NPU index on the host")->required()->check(kNonNegative);
  auto* ip = create->add_option("--ip", o.opt_ip, "Fixed IP address (default: next free in the pools)");
  auto* name = create->add_option("--name", o.opt_name, "Port name");
  on_run(create, action, [&o, ip, name](Context& c) {
    auto args = o.port_create;
    if (ip->count() > 0) args.ip_address = o.opt_ip;
    if (name->count() > 0) args.name = o.opt_name;
    ports_create(c, args);
  });

  auto* del = ports->add_subcommand("delete", "Delete a port (DELETE /api/v1/ports/{id})");
  del->add_option("ID", o.id, "Port id")->required();
  on_run(del, action, [&o](Context& c) { ports_delete(c, o.id); });
}

void add_other_commands(CLI::App& app, CommandOptions& o, Action& action) {
  auto* reach = app.add_subcommand("reachability", "May one port reach another (GET /api/v1/reachability)");
  reach->add_option("SRC_PORT_ID", o.src, "Source port id")->required();
  reach->add_option("DST_PORT_ID", o.dst, "Destination port id")->required();
  on_run(reach, action, [&o](Context& c) { reachability(c, o.src, o.dst); });

  auto* want =
      app.add_subcommand("desired", "Desired state of a host's agent (GET /api/v1/agents/{host}/desired)");
  want->add_option("HOST", o.host, "Host name")->required();
  on_run(want, action, [&o](Context& c) { desired(c, o.host); });

  on_run(app.add_subcommand("health", "Liveness and readiness (GET /healthz, /readyz)"), action,
         [](Context& c) { health(c); });
  on_run(app.add_subcommand("metrics", "Prometheus metrics (GET /metrics)"), action,
         [](Context& c) { metrics(c); });
  on_run(app.add_subcommand("openapi", "The OpenAPI document (GET /api/v1/openapi.json)"), action,
         [](Context& c) { openapi(c); });
}

std::string trim(const char* text) {
  std::string value = text == nullptr ? "" : text;
  auto first = value.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  auto last = value.find_last_not_of(" \t\r\n");
  return value.substr(first, last - first + 1);
}

void run_action(const GlobalOptions& global, const Action& action, std::ostream& out) {
  hsns::HttpClient::Options options;
  if (!global.token_file.empty()) {
    auto token = read_token_file(global.token_file);
    if (!token) throw usage_error(token.error());
    options.bearer_token = std::move(*token);
  } else {
    options.bearer_token = trim(std::getenv("HSNS_TOKEN"));
  }
  options.ca_file = global.cacert;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(global.timeout_seconds * 1000));
  options.user_agent = std::string("hsnsctl/") + hsns::kVersion;
  bool token_configured = !options.bearer_token.empty();
  auto client = hsns::HttpClient::make(global.server, std::move(options));
  if (!client) throw usage_error(client.error());
  Context ctx{*client, global.output == "json" ? OutputFormat::json : OutputFormat::table, out,
              token_configured};
  action(ctx);
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"hsnsctl: operator CLI of the hsns aggregator (REST API v1)", "hsnsctl"};
  app.set_version_flag("--version",
                       std::string("hsnsctl ") + hsns::kVersion + " (" + hsns::kGitRevision + ")");
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the command too

  GlobalOptions global;
  if (const char* env = std::getenv("HSNS_SERVER"); env != nullptr && *env != '\0') global.server = env;
  app.add_option("--server", global.server, "Aggregator base URL (env HSNS_SERVER)")->capture_default_str();
  app.add_option("--token-file", global.token_file, "File holding the bearer token (else env HSNS_TOKEN)");
  app.add_option("--cacert", global.cacert, "PEM CA bundle to verify an https server (else system store)");
  app.add_option("-o,--output", global.output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app.add_option("--timeout", global.timeout_seconds, "Request timeout in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  CommandOptions options;
  Action action;
  add_host_commands(app, options, action);
  add_subnet_commands(app, options, action);
  add_port_commands(app, options, action);
  add_other_commands(app, options, action);
  add_flow_commands(app, action);
  add_topology_commands(app, action);
  add_scheduling_commands(app, action);
  add_telemetry_commands(app, action);
  add_diagnose_commands(app, action);
  add_scenario_commands(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!action) {
    err << "error: no command given (see --help)\n";
    return kExitUsage;
  }
  try {
    run_action(global, action, out);
    out.flush();
    return kExitOk;
  } catch (const CliError& e) {
    out.flush();
    err << e.what() << '\n';
    return e.exit_code();
  } catch (const std::exception& e) {
    out.flush();
    err << "error: " << e.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace hsnsctl
