// Bearer-token authentication and role-based authorisation for the REST API.
//
// Contract:
// - The tokens file is YAML: `tokens: [{name: ops, role: operator, token: "<at least 16 chars>"}]`.
//   Roles: viewer (read), operator (read + network management), scheduler (read + scheduling),
//   agent (read + daemon reports). Names and tokens must be unique. A bad file is a start-up error
//   naming the entry at fault.
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
#include <vector>

#include "http/router.h"

namespace hsns {

enum class Role { viewer, operator_role, scheduler, agent };

std::optional<Role> parse_role(std::string_view text);
std::string_view role_name(Role role);
http::PermissionSet permissions_of(Role role);

struct Principal {
  std::string name;
  Role role;
};

class TokenAuthenticator {
 public:
  static tl::expected<TokenAuthenticator, std::string> load_file(const std::string& path);
  static tl::expected<TokenAuthenticator, std::string> load_yaml(const std::string& text);

  // `authorization` is the raw Authorization header value ("Bearer <token>").
  std::optional<Principal> authenticate(std::string_view authorization) const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string name;
    Role role;
    std::array<unsigned char, 32> digest;
  };
  std::vector<Entry> entries_;
};

}  // namespace hsns
