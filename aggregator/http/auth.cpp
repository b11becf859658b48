#include "http/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "api/network/requests.h"

namespace hsns {
namespace {

constexpr std::size_t kMinTokenLength = 16;

// "<where>: <parts...>", appended into one string.
template <typename... Parts>
std::string finding(const std::string& where, const Parts&... parts) {
  std::string out = where;
  out += ": ";
  ((out += parts), ...);
  return out;
}

std::array<unsigned char, 32> sha256(std::string_view s) {
  std::array<unsigned char, 32> d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

}  // namespace

std::optional<Role> parse_role(std::string_view text) {
  if (text == "viewer") return Role::viewer;
  if (text == "operator") return Role::operator_role;
  if (text == "scheduler") return Role::scheduler;
  if (text == "agent") return Role::agent;
  return std::nullopt;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::viewer:
      return "viewer";
    case Role::operator_role:
      return "operator";
    case Role::scheduler:
      return "scheduler";
    case Role::agent:
      return "agent";
  }
  return "unknown";
}

http::PermissionSet permissions_of(Role role) {
  using http::Permission;
  switch (role) {
    case Role::viewer:
      return http::permits(Permission::read);
    case Role::operator_role:
      return Permission::read | Permission::manage_network;
    case Role::scheduler:
      return Permission::read | Permission::schedule;
    case Role::agent:
      return Permission::read | Permission::agent_report;
  }
  return 0;
}

tl::expected<TokenAuthenticator, std::string> TokenAuthenticator::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return tl::unexpected("cannot read tokens file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = load_yaml(ss.str());
  if (!r) return tl::unexpected("tokens file " + path + ": " + r.error());
  return r;
}

tl::expected<TokenAuthenticator, std::string> TokenAuthenticator::load_yaml(const std::string& text) {
  TokenAuthenticator auth;
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap() || !root["tokens"] || !root["tokens"].IsSequence()) {
      return tl::unexpected(std::string("expected a map with a 'tokens' list"));
    }
    std::size_t i = 0;
    for (const auto& node : root["tokens"]) {
      const std::string where = "tokens[" + std::to_string(i++) + "]";
      if (!node.IsMap()) return tl::unexpected(where + ": expected a map with name, role, token");
      for (const auto& kv : node) {
        const auto key = kv.first.as<std::string>();
        if (key != "name" && key != "role" && key != "token" && key != "host") {
          return tl::unexpected(finding(where, "unknown key '", key, "'"));
        }
      }
      if (!node["name"] || !node["role"] || !node["token"]) {
        return tl::unexpected(where + ": name, role and token are all required");
      }
      const auto name = node["name"].as<std::string>();
      const auto role = parse_role(node["role"].as<std::string>());
      const auto token = node["token"].as<std::string>();
      if (!role) return tl::unexpected(where + ": role must be viewer, operator, scheduler or agent");
      std::string host;
      if (node["host"]) {
        host = node["host"].as<std::string>();
        if (*role != Role::agent) return tl::unexpected(where + ": only agent tokens are bound to a host");
        if (auto why = network::check_host_name(host)) return tl::unexpected(where + ": host: " + *why);
      }
      if (token.size() < kMinTokenLength) {
        return tl::unexpected(where + ": token must be at least " + std::to_string(kMinTokenLength) +
                              " characters");
      }
      const auto digest = sha256(token);
      for (const auto& e : auth.entries_) {
        if (e.name == name) return tl::unexpected(finding(where, "duplicate name '", name, "'"));
        if (e.digest == digest)
          return tl::unexpected(finding(where, "token duplicates that of '", e.name, "'"));
      }
      auth.entries_.push_back({name, *role, std::move(host), digest});
    }
  } catch (const YAML::Exception& e) {
    return tl::unexpected(std::string("invalid YAML: ") + e.what());
  }
  if (auth.entries_.empty()) return tl::unexpected(std::string("no tokens defined"));
  return auth;
}

std::optional<Principal> TokenAuthenticator::authenticate(std::string_view authorization) const {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  // The scheme is case-insensitive (RFC 9110 section 11.1).
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return std::nullopt;
    }
  }
  const auto digest = sha256(authorization.substr(kScheme.size()));
  const Entry* found = nullptr;
  for (const auto& e : entries_) {
    const bool equal = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
    if (equal) found = &e;  // keep scanning: the time taken does not depend on which entry matched
  }
  if (!found) return std::nullopt;
  return Principal{found->name, found->role, found->host};
}

std::vector<std::string> TokenAuthenticator::unbound_agents() const {
  std::vector<std::string> names;
  for (const auto& e : entries_) {
    if (e.role == Role::agent && e.host.empty()) names.push_back(e.name);
  }
  return names;
}

std::optional<Problem> host_binding_refusal(
    const Principal& principal, const std::vector<std::pair<std::string, std::string>>& path_params) {
  if (principal.host.empty()) return std::nullopt;
  for (const auto& [name, value] : path_params) {
    if (name == "host" && value != principal.host) {
      return Problem::forbidden("token " + principal.name + " is bound to host " + principal.host +
                                " and may not act for host " + value);
    }
  }
  return std::nullopt;
}

void EntityBinding::check(std::string_view host, std::string_view list, std::size_t index,
                          std::string_view member) {
  if (bound_host_.empty() || host == bound_host_) return;
  // A body of thousands of foreign entities gets a bounded answer: the first ones named, all counted.
  if (refused_.size() < kMaxBindingFindings) {
    refused_.push_back(
        {std::string(list) + "[" + std::to_string(index) + "]." + std::string(member),
         "names host " + std::string(host.substr(0, 255)) + "; this token is bound to host " + bound_host_});
  }
  ++count_;
}

std::optional<Problem> EntityBinding::refusal() const {
  if (count_ == 0) return std::nullopt;
  auto p = Problem::forbidden("this token is bound to host " + bound_host_ + " and may not speak for " +
                              std::to_string(count_) + " of the entities in the body");
  p.invalid_params = refused_;
  return p;
}

}  // namespace hsns
