// The hsnsctl commands: one function per command, each mapping its arguments onto a route of
// docs/rest-api.md and printing the answer (a table, or the server's JSON with -o json).
//
// Contract:
// - Results go to Context::out. Failures are thrown as CliError (see output.h for the exit codes): a
//   non-2xx answer carries the server's problem document formatted for stderr, a network failure is a
//   connection error, a bad argument value is a usage error.
// - Subnet arguments accept an id or a name: a UUID-shaped value is used as the id; anything else is
//   looked up with GET /api/v1/subnets?name=...[&tenant=...] and must match exactly one subnet (the
//   tenant, when given, narrows the search).
// - Threads: a Context and its client belong to one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hsns/http_client.h"
#include "output.h"

namespace hsnsctl {

struct Context {
  hsns::HttpClient& client;
  OutputFormat format = OutputFormat::table;
  std::ostream& out;
  bool token_configured = false;  // adds a hint to 401 answers when no token was given
};

void hosts_list(Context& ctx);
void hosts_get(Context& ctx, const std::string& host);
// npu_specs: INDEX:NETDEV:MAC[:RDMA_DEV[:SPEED_MBPS]] each (see args.h).
void hosts_register(Context& ctx, const std::string& host, const std::vector<std::string>& npu_specs);

void subnets_list(Context& ctx, const std::string& tenant, const std::string& name);
void subnets_get(Context& ctx, const std::string& id_or_name, const std::string& tenant);

struct SubnetCreateArgs {
  std::string name;
  std::string cidr;
  std::optional<std::string> tenant;
  std::optional<std::string> gateway_ip;
  std::vector<std::string> pools;  // START-END each
  std::optional<std::int64_t> mtu;
};
void subnets_create(Context& ctx, const SubnetCreateArgs& args);

struct SubnetUpdateArgs {
  std::string id_or_name;
  std::string tenant;  // narrows the name lookup
  std::optional<std::string> name;
  std::vector<std::string> pools;  // replaces the pools when not empty
};
void subnets_update(Context& ctx, const SubnetUpdateArgs& args);
void subnets_delete(Context& ctx, const std::string& id_or_name, const std::string& tenant);

struct PortListArgs {
  std::string host;
  std::string subnet;  // id or name
  std::string tenant;
};
void ports_list(Context& ctx, const PortListArgs& args);
void ports_get(Context& ctx, const std::string& id);

struct PortCreateArgs {
  std::string subnet;  // id or name
  std::string tenant;  // narrows the subnet name lookup
  std::string host;
  std::int64_t npu = 0;
  std::optional<std::string> ip_address;
  std::optional<std::string> name;
};
void ports_create(Context& ctx, const PortCreateArgs& args);
void ports_delete(Context& ctx, const std::string& id);

void reachability(Context& ctx, const std::string& src_port, const std::string& dst_port);
void desired(Context& ctx, const std::string& host);
// GET /healthz and /readyz; fails (exit 1) unless both answer 200.
void health(Context& ctx);
// GET /metrics, printed as it is.
void metrics(Context& ctx);
// GET /api/v1/openapi.json, pretty-printed.
void openapi(Context& ctx);

// Resolves a subnet id-or-name (see the contract above) to its id; a UUID is returned without a request.
std::string resolve_subnet_id(Context& ctx, const std::string& id_or_name, const std::string& tenant);

}  // namespace hsnsctl
