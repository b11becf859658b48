// Bearer-token authentication and role-based authorisation for the REST API.
//
// Contract:
// - The tokens file is YAML: `tokens: [{name: ops, role: operator, token: "<at least 16 chars>"}]`.
//   Roles: viewer (read), operator (read + network management), scheduler (read + scheduling),
//   agent (read + daemon reports). Names and tokens must be unique. A bad file is a start-up error
//   naming the entry at fault.
// - Host binding: an agent token may carry `host: <host name>` (a valid host name; only agent tokens may
//   have one). A token bound to host A acts only for A: every request whose route has a {host} path
//   parameter naming another host (PUT/GET /api/v1/agents/{host}/status, GET .../desired, POST
//   .../reports, PUT/GET /api/v1/hosts/{host}) is refused with 403 (host_binding_refusal, checked by the
//   service after the role check). An agent token without a binding keeps what agent tokens could always
//   do, act for every host (existing deployments keep working); unbound_agents() names them so the
//   aggregator warns about each at start.
// - The binding holds on the bodies too: a route an agent token reaches whose body names entities
//   (POST /api/v1/kpis samples[i].entity, POST /api/v1/events events[i].entity, POST
//   /api/v1/topology/lldp observations[i].host) refuses the whole request with 403 naming every field
//   whose host is not the bound one (EntityBinding; the caller names each entity's host: for a KPI entity
//   the part before its first '/', kpis_api::entity_device).
// - Only SHA-256 digests of the tokens are kept in memory. authenticate() hashes the presented token and
//   compares it with every stored digest in constant time (CRYPTO_memcmp, no early exit), so timing
//   reveals neither which token nor how much of it matched.
// - Immutable after load; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

#include "hsns/problem.h"
#include "http/router.h"

namespace hsns {

enum class Role { viewer, operator_role, scheduler, agent };

std::optional<Role> parse_role(std::string_view text);
std::string_view role_name(Role role);
http::PermissionSet permissions_of(Role role);

struct Principal {
  std::string name;
  Role role;
  std::string host;  // the host an agent token is bound to; "" when unbound
};

// The 403 Problem when `principal` is bound to a host and a {host} path parameter names another; nothing
// otherwise.
std::optional<Problem> host_binding_refusal(
    const Principal& principal, const std::vector<std::pair<std::string, std::string>>& path_params);

// Collects the body's entities that a host-bound caller may not speak for; unbound callers pass all.
class EntityBinding {
 public:
  explicit EntityBinding(std::string bound_host) : bound_host_(std::move(bound_host)) {}
  // `host` is the host an entity of the body belongs to, found at list[index].member ("samples[3].entity").
  void check(std::string_view host, std::string_view list, std::size_t index, std::string_view member);
  // The 403 naming every refused field, or nothing.
  std::optional<Problem> refusal() const;

 private:
  static constexpr std::size_t kMaxBindingFindings = 16;
  std::string bound_host_;
  std::vector<InvalidParam> refused_;  // the first kMaxBindingFindings
  std::size_t count_ = 0;
};

class TokenAuthenticator {
 public:
  static tl::expected<TokenAuthenticator, std::string> load_file(const std::string& path);
  static tl::expected<TokenAuthenticator, std::string> load_yaml(const std::string& text);

  // `authorization` is the raw Authorization header value ("Bearer <token>").
  std::optional<Principal> authenticate(std::string_view authorization) const;
  std::size_t size() const { return entries_.size(); }
  // The names of the agent tokens without a host binding.
  std::vector<std::string> unbound_agents() const;

 private:
  struct Entry {
    std::string name;
    Role role;
    std::string host;
    std::array<unsigned char, 32> digest;
  };
  std::vector<Entry> entries_;
};

}  // namespace hsns
