// AggregatorService: the request pipeline in front of the routes: target parsing, authentication,
// authorisation, routing, error mapping and request metrics. Also owns the built-in routes /healthz,
// /readyz, /metrics and /api/v1/openapi.json.
//
// Contract:
// - handle() is thread-safe and never throws: a handler exception becomes a 500 problem (logged). It
//   answers through `respond`, exactly once: inline for light routes and for everything refused before a
//   handler runs, from a worker thread for heavy routes (http::Cost::heavy). At most
//   workers.threads heavy requests run at once and at most workers.queue_limit more wait; beyond that a
//   heavy request is answered 503 with Retry-After at once, so small requests can't pile up unbounded
//   work. Workers run at a lower CPU priority (workers.nice), so that on a busy machine a search or a
//   schedule takes the CPU the I/O threads leave and light routes keep their throughput. stop_workers() waits
//   for the running heavy requests (call it once the I/O threads are gone).
// - Metric labels never come from the client: the route label is the matched pattern or "unmatched", the
//   method label one of the methods the API knows or "other".
// - With an authenticator, every route with permissions needs "Authorization: Bearer <token>"
//   (401 + WWW-Authenticate when missing or unknown, 403 when the role lacks the permission). Without
//   one (insecure demo mode) every caller is treated as allowed.
// - Browser sessions (docs/dashboard.md): POST /api/v1/session {token} checks the token like a bearer
//   token (an agent token is refused, 403: daemons never need a browser session) and answers a session
//   cookie (hsns_session: HttpOnly, SameSite=Strict, Path=/, Max-Age the
//   session's lifetime, Secure when TLS is on) and the session's CSRF token; GET answers the session (and
//   its CSRF token) the cookie names (public: without a live session it answers authenticated false),
//   DELETE ends it. A request without Authorization whose cookie names a
//   live session is authenticated as the session's principal; a write (POST, PUT, PATCH, DELETE) so
//   authenticated must carry the session's CSRF token in X-CSRF-Token, else 403 (so another site can never
//   make a browser write, even where SameSite is not honoured). An Authorization header always wins over a
//   cookie: bearer-token clients are unchanged. An unknown or expired cookie answers 401.
// - Failed authentications (an unknown token or session cookie, on any route or at login) are throttled
//   per client address (http/auth_throttle.h): once its attempts are spent, every authenticated request
//   and login from that address answers 429 with Retry-After, without checking the credential, until
//   the bucket refills. Other addresses are not affected.
// - WebSocket streams are shared fairly: at most sessions.streams_per_user open streams per token name
//   and sessions.max_streams in all; an upgrade beyond either answers 429 with Retry-After.
// - HEAD is answered like GET without a body; a path that exists under other methods answers 405 with
//   Allow; anything else 404.
// - set_ready() controls /readyz (also false while the store check fails).
// - WebSocket: upgrade() decides an upgrade request exactly as handle() would a request (target, route,
//   token, role), answering the refusal, 400 when the route is not a WebSocket endpoint, or the endpoint
//   to start (counted in the request metrics with status 101). handle() answers a plain request to a
//   WebSocket endpoint with 426 and "Upgrade: websocket".
// - Change feed: every write request (POST, PUT, PATCH, DELETE) answered 2xx by a route publishes
//   {"type":"changed","route":<pattern>,"method":<method>,"status":<n>,"at":<RFC 3339 UTC>} to the hub
//   topic "changes" before its response goes out; GET /api/v1/events (read permission) subscribes to it.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "http/auth.h"
#include "http/auth_throttle.h"
#include "http/router.h"
#include "http/server.h"
#include "http/sessions.h"
#include "http/websocket.h"
#include "metrics.h"

namespace hsns {

struct WorkerLimits {
  int threads = 2;               // heavy requests running at once
  std::size_t queue_limit = 16;  // heavy requests waiting for a worker
  int nice = 10;                 // the workers' CPU niceness (0..19): the I/O threads win a busy CPU
};

class AggregatorService {
 public:
  // store_check returns an error text when the store is not usable (used by /readyz).
  AggregatorService(Metrics& metrics, std::optional<TokenAuthenticator> auth,
                    std::function<std::optional<std::string>()> store_check, WorkerLimits workers = {});
  ~AggregatorService();

  http::Router& router() { return router_; }
  void handle(http::Request&& req, const http::Peer& peer, http::Respond respond);
  http::UpgradeDecision upgrade(const http::Request& req, const http::Peer& peer);
  // For in-process callers (tests): a request from no known address.
  void handle(http::Request&& req, http::Respond respond) {
    handle(std::move(req), http::Peer{}, std::move(respond));
  }
  http::UpgradeDecision upgrade(const http::Request& req) { return upgrade(req, http::Peer{}); }
  // Topics: "changes" (the change feed); later API areas add their own.
  http::WebSocketHub& hub() { return hub_; }
  void set_ready(bool ready) { ready_.store(ready); }
  // Browser sessions (http/sessions.h): their bounds, and whether the cookie is marked Secure (TLS on).
  // Called before serving; the default is SessionLimits{} without Secure.
  void configure_sessions(http::SessionLimits limits, bool secure_cookie);
  void stop_workers();

 private:
  // A request that passed routing and authorisation, ready for its handler.
  struct Admitted {
    const http::Route* route = nullptr;
    std::vector<std::pair<std::string, std::string>> path_params;
    std::string principal;
    std::string bound_host;
    std::string peer;
  };
  // Either the response that refuses the request (404, 405, 401, 403, 429, bad target) or the admitted
  // route.
  std::variant<http::Response, Admitted> admit(const http::Request& req, const http::Peer& peer);
  // 429 with Retry-After while `peer` has failed too many authentications (http/auth_throttle.h).
  std::optional<http::Response> throttled(const http::Request& req, const std::string& peer);
  void authentication_failed(const std::string& peer, std::string_view reason);
  // A WebSocket stream slot of `principal` (released when the holder is destroyed), or null when the
  // user or everyone holds the most allowed.
  std::shared_ptr<void> take_stream_slot(const std::string& principal);
  http::Response run_handler(const http::Request& req, Admitted& admitted);
  void finish(const http::Request& req, http::Response& res, std::string_view route_label,
              std::chrono::steady_clock::time_point start);
  void add_builtin_routes();
  void add_session_routes();
  // The session a request's cookie names, if it is valid.
  std::optional<http::SessionInfo> session_of(const http::Request& req);
  void publish_change(const http::Request& req, const http::Response& res, std::string_view route_label);

  Metrics& metrics_;
  std::optional<TokenAuthenticator> auth_;
  std::function<std::optional<std::string>()> store_check_;
  http::Router router_;
  http::WebSocketHub hub_;
  std::atomic<bool> ready_{false};
  WorkerLimits worker_limits_;
  boost::asio::thread_pool workers_;
  std::atomic<std::size_t> heavy_admitted_{0};  // running + waiting
  std::unique_ptr<http::SessionTable> sessions_ = std::make_unique<http::SessionTable>();
  bool secure_cookie_ = false;
  std::unique_ptr<http::AuthThrottle> auth_throttle_ = std::make_unique<http::AuthThrottle>();
  // WebSocket streams held per token name; shared with the slots, which may outlive a stopped service.
  struct StreamShares {
    std::mutex mu;
    std::map<std::string, std::size_t, std::less<>> per_user;
    std::size_t total = 0;
  };
  std::shared_ptr<StreamShares> streams_ = std::make_shared<StreamShares>();
};

}  // namespace hsns
