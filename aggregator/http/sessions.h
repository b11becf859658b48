// Browser sessions: the server-side table behind the dashboard's session cookie (docs/dashboard.md).
//
// Contract:
// - create(principal) makes a session for a principal that authenticated with its bearer token: a random
//   256-bit id (the cookie value, base64url) and a random 256-bit CSRF token, both from OpenSSL's RAND_bytes.
//   Only the SHA-256 digest of the id is kept, so the table (a core dump, a debugger) never holds a usable
//   cookie. The CSRF token is kept as is: it is not a credential on its own (it is useless without the
//   cookie) and is handed back by GET /api/v1/session.
// - Expiry is absolute: a session lives `ttl` from its creation, then find() no longer answers it (and the
//   entry is removed). Logging in again makes a new session; nothing extends an old one.
// - Bounded, with fair shares: at most `max_sessions` entries, and (when sessions_per_user is not 0) at
//   most that many of one token name (a user's newest login drops its own oldest session). Expired
//   entries go first; when the table is still full, the oldest session of the token holding the most goes
//   for the newcomer (its browser must log in again). So fifty logins with one viewer token never end an
//   operator's session, and a flood of logins costs memory proportional to the bound, never more.
// - find() compares the digest of the presented id through the hash map (the id is 256 random bits: a
//   guess has no useful timing signal); csrf_matches() compares in constant time (CRYPTO_memcmp).
// - remove() ends a session (logout). Thread-safe (one mutex; every operation is O(1) amortised apart from
//   the purge of expired entries when the table is full, O(n) and bounded by max_sessions).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "http/auth.h"
#include "http/auth_throttle.h"

namespace hsns::http {

inline constexpr std::string_view kSessionCookie = "hsns_session";
inline constexpr std::string_view kCsrfHeader = "X-CSRF-Token";

struct SessionLimits {
  std::chrono::seconds ttl{std::chrono::hours(12)};
  std::size_t max_sessions = 10'000;
  std::size_t sessions_per_user = 0;  // browser sessions of one token name; 0: no cap of its own
  std::size_t streams_per_user = 32;  // WebSocket streams of one token name (http/service.h)
  std::size_t max_streams = 1024;     // WebSocket streams of all users together
  AuthThrottleLimits auth_failures;   // failed authentications per client address (auth_throttle.h)
};

struct SessionInfo {
  Principal principal;
  std::string csrf_token;
  std::chrono::system_clock::time_point expires_at;
};

struct NewSession {
  std::string id;  // the cookie value; never stored
  SessionInfo info;
};

class SessionTable {
 public:
  explicit SessionTable(SessionLimits limits = {}) : limits_(limits) {}

  NewSession create(const Principal& principal);
  std::optional<SessionInfo> find(std::string_view id);
  bool remove(std::string_view id);
  static bool csrf_matches(const SessionInfo& session, std::string_view presented);
  std::size_t size() const;
  const SessionLimits& limits() const { return limits_; }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct DigestHash {
    std::size_t operator()(const Digest& d) const;
  };
  struct Entry {
    SessionInfo info;
    std::chrono::steady_clock::time_point expires;  // monotonic, so a clock step cannot revive a session
    std::list<Digest>::iterator age;                // position in order_ (oldest first)
  };
  void purge_expired(std::chrono::steady_clock::time_point now);
  void erase(std::unordered_map<Digest, Entry, DigestHash>::iterator it);
  void erase_oldest_of(const std::string& name);

  SessionLimits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<Digest, Entry, DigestHash> sessions_;
  std::list<Digest> order_;                                   // creation order, oldest first
  std::map<std::string, std::size_t, std::less<>> per_user_;  // sessions held per token name
};

// The value of cookie `name` in a Cookie header ("a=1; hsns_session=xyz"), nullopt when absent.
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name);

}  // namespace hsns::http
