#include "http/service.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/url/parse.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "hsns/log.h"
#include "hsns/time.h"

namespace hsns::embedded {
std::string_view openapi_document();
}

namespace hsns {

namespace bhttp = boost::beast::http;

namespace {

// Linux keeps a niceness per thread: the first heavy request a worker thread runs lowers that thread
// alone (the I/O threads stay at the process's priority). The step is relative, so that an aggregator
// started under `nice` keeps its workers below its I/O threads. Lowering needs no privilege; failure is
// harmless.
void lower_worker_priority(int step) {
  thread_local bool lowered = false;
  if (lowered || step <= 0) return;
  lowered = true;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, tid);  // -1 is a valid niceness: errno tells
  if (errno != 0 || ::setpriority(PRIO_PROCESS, tid, std::min(19, current + step)) != 0) {
    HSNS_LOG(warning) << "cannot lower the priority of a worker thread: " << std::strerror(errno);
  }
}
constexpr const char* kChangesTopic = "changes";
}  // namespace

AggregatorService::AggregatorService(Metrics& metrics, std::optional<TokenAuthenticator> auth,
                                     std::function<std::optional<std::string>()> store_check,
                                     WorkerLimits workers)
    : metrics_(metrics),
      auth_(std::move(auth)),
      store_check_(std::move(store_check)),
      worker_limits_(workers),
      workers_(static_cast<std::size_t>(std::max(1, workers.threads))) {
  add_builtin_routes();
  add_session_routes();
}

void AggregatorService::configure_sessions(http::SessionLimits limits, bool secure_cookie) {
  auth_throttle_ = std::make_unique<http::AuthThrottle>(limits.auth_failures);
  sessions_ = std::make_unique<http::SessionTable>(limits);
  secure_cookie_ = secure_cookie;
}

std::optional<http::SessionInfo> AggregatorService::session_of(const http::Request& req) {
  const auto cookie = http::cookie_value(req[bhttp::field::cookie], http::kSessionCookie);
  if (!cookie || cookie->empty()) return std::nullopt;
  return sessions_->find(*cookie);
}

void AggregatorService::add_builtin_routes() {
  using V = bhttp::verb;
  router_.add(V::get, "/healthz", http::kPublic, [](http::RequestContext& ctx) {
    return http::json_response(ctx.request, bhttp::status::ok, R"({"status":"ok"})");
  });
  router_.add(V::get, "/readyz", http::kPublic, [this](http::RequestContext& ctx) {
    if (!ready_.load()) {
      return http::problem_response(ctx.request,
                                    Problem::unavailable("the aggregator is starting or stopping"));
    }
    if (auto err = store_check_ ? store_check_() : std::nullopt) {
      return http::problem_response(ctx.request, Problem::unavailable("store check failed: " + *err));
    }
    return http::json_response(ctx.request, bhttp::status::ok, R"({"status":"ready"})");
  });
  router_.add(V::get, "/metrics", http::kPublic, [this](http::RequestContext& ctx) {
    http::Response res{bhttp::status::ok, ctx.request.version()};
    res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.keep_alive(ctx.request.keep_alive());
    res.body() = metrics_.serialize();
    res.prepare_payload();
    return res;
  });
  router_.add_websocket(
      "/api/v1/events", http::permits(http::Permission::read),
      [this](const http::RequestContext&, const std::shared_ptr<http::WebSocketChannel>& channel) {
        hub_.subscribe(kChangesTopic, channel);
      });
  router_.add(V::get, "/api/v1/openapi.json", http::kPublic, [](http::RequestContext& ctx) {
    return http::json_response(ctx.request, bhttp::status::ok, std::string(embedded::openapi_document()));
  });
}

namespace {

// The method label: a fixed vocabulary, so a client inventing methods cannot add series to /metrics.
std::string_view method_label(bhttp::verb method) {
  switch (method) {
    case bhttp::verb::get:
    case bhttp::verb::head:
    case bhttp::verb::post:
    case bhttp::verb::put:
    case bhttp::verb::patch:
    case bhttp::verb::delete_:
    case bhttp::verb::options:
      return bhttp::to_string(method);
    default:
      return "other";
  }
}

// Request text echoed into a problem detail or the log, cut so a 4 KB method or target stays readable.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 64;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

// RFC 9110 §15.5.22: 426 names the protocol to upgrade to, in Upgrade and as a Connection option.
http::Response upgrade_required(const http::Request& req, std::string_view pattern) {
  auto res = http::problem_response(
      req, Problem{426,
                   "upgrade-required",
                   "Upgrade required",
                   std::string(pattern) + " is a WebSocket endpoint: send GET with Connection: Upgrade and "
                                          "Upgrade: websocket (RFC 6455)",
                   {}});
  res.set(bhttp::field::upgrade, "websocket");
  res.set(bhttp::field::connection, res.keep_alive() ? "Upgrade" : "close, Upgrade");
  return res;
}

bool is_write(bhttp::verb method) {
  return method == bhttp::verb::post || method == bhttp::verb::put || method == bhttp::verb::patch ||
         method == bhttp::verb::delete_;
}

}  // namespace

AggregatorService::~AggregatorService() {
  stop_workers();
}

void AggregatorService::stop_workers() {
  workers_.join();
}

void AggregatorService::handle(http::Request&& req, const http::Peer& peer, http::Respond respond) {
  const auto start = std::chrono::steady_clock::now();
  auto decision = admit(req, peer);
  if (auto* refused = std::get_if<http::Response>(&decision)) {
    finish(req, *refused, "unmatched", start);
    return respond(std::move(*refused));
  }
  auto admitted = std::get<Admitted>(std::move(decision));
  const std::string_view label = admitted.route->pattern;
  if (admitted.route->on_open) {
    auto res = upgrade_required(req, admitted.route->pattern);
    finish(req, res, label, start);
    return respond(std::move(res));
  }
  if (admitted.route->cost == http::Cost::light) {
    auto res = run_handler(req, admitted);
    finish(req, res, label, start);
    publish_change(req, res, label);
    return respond(std::move(res));
  }
  const auto capacity = static_cast<std::size_t>(worker_limits_.threads) + worker_limits_.queue_limit;
  if (heavy_admitted_.fetch_add(1) >= capacity) {
    heavy_admitted_.fetch_sub(1);
    auto res = http::problem_response(
        req, Problem::unavailable("the aggregator is busy with " + std::to_string(capacity) +
                                  " long requests (topology import or generation, search, schedule, "
                                  "exports); retry shortly"));
    res.set(bhttp::field::retry_after, "1");
    finish(req, res, label, start);
    return respond(std::move(res));
  }
  boost::asio::post(workers_, [this, req = std::move(req), admitted = std::move(admitted), label, start,
                               respond = std::move(respond)]() mutable {
    lower_worker_priority(worker_limits_.nice);
    auto res = run_handler(req, admitted);
    heavy_admitted_.fetch_sub(1);
    finish(req, res, label, start);
    publish_change(req, res, label);
    respond(std::move(res));
  });
}

void AggregatorService::finish(const http::Request& req, http::Response& res, std::string_view route_label,
                               std::chrono::steady_clock::time_point start) {
  http::omit_body_for_head(req.method(), res);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  metrics_.observe_request(route_label, method_label(req.method()), static_cast<int>(res.result_int()),
                           elapsed.count());
}

http::Response AggregatorService::run_handler(const http::Request& req, Admitted& admitted) {
  try {
    // The target parsed in admit(); parsing again is cheap and keeps the view tied to this request.
    const auto target = boost::urls::parse_origin_form(req.target());
    http::RequestContext ctx{req,
                             *target,
                             std::move(admitted.path_params),
                             std::move(admitted.principal),
                             std::move(admitted.bound_host),
                             std::move(admitted.peer)};
    return admitted.route->handler(ctx);
  } catch (const std::exception& e) {
    HSNS_LOG(error) << "handler for " << method_label(req.method()) << " " << admitted.route->pattern
                    << " failed: " << e.what();
    return http::problem_response(
        req, Problem::internal("the request failed unexpectedly; see the aggregator log"));
  }
}

void AggregatorService::publish_change(const http::Request& req, const http::Response& res,
                                       std::string_view route_label) {
  const auto status = res.result_int();
  if (!is_write(req.method()) || status < 200 || status > 299) return;
  const nlohmann::json event{{"type", "changed"},
                             {"route", route_label},
                             {"method", method_label(req.method())},
                             {"status", status},
                             {"at", format_rfc3339_utc(std::chrono::system_clock::now())}};
  hub_.publish(kChangesTopic, event.dump());
}

http::UpgradeDecision AggregatorService::upgrade(const http::Request& req, const http::Peer& peer) {
  const auto start = std::chrono::steady_clock::now();
  auto decision = admit(req, peer);
  if (auto* refused = std::get_if<http::Response>(&decision)) {
    finish(req, *refused, "unmatched", start);
    return std::move(*refused);
  }
  auto admitted = std::get<Admitted>(std::move(decision));
  const auto* route = admitted.route;
  if (!route->on_open) {
    auto res = http::problem_response(
        req, Problem{400,
                     "not-a-websocket-endpoint",
                     "Not a WebSocket endpoint",
                     route->pattern + " does not accept a WebSocket upgrade; send the request without "
                                      "Upgrade: websocket",
                     {}});
    finish(req, res, route->pattern, start);
    return res;
  }
  auto slot = take_stream_slot(admitted.principal);
  if (!slot) {
    auto res = http::problem_response(
        req, Problem{429,
                     "too-many-streams",
                     "Too many streams",
                     "token " + admitted.principal + " holds " +
                         std::to_string(sessions_->limits().streams_per_user) +
                         " WebSocket streams or the aggregator holds " +
                         std::to_string(sessions_->limits().max_streams) +
                         " (http.websocket_streams_per_user, http.websocket_max_streams); close one first",
                     {}});
    res.set(bhttp::field::retry_after, "5");
    finish(req, res, route->pattern, start);
    return res;
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  metrics_.observe_request(route->pattern, method_label(req.method()), 101, elapsed.count());
  return http::WebSocketStart(
      [route, params = std::move(admitted.path_params), principal = std::move(admitted.principal),
       bound_host = std::move(admitted.bound_host), peer_address = std::move(admitted.peer),
       slot = std::move(slot)](const http::Request& upgrade_request,
                               const std::shared_ptr<http::WebSocketChannel>& channel) {
        // The slot is held until the stream ends.
        channel->on_closed([slot] {});
        const auto target = boost::urls::parse_origin_form(upgrade_request.target());
        const http::RequestContext ctx{upgrade_request, *target, params, principal, bound_host, peer_address};
        route->on_open(ctx, channel);
      });
}

std::shared_ptr<void> AggregatorService::take_stream_slot(const std::string& principal) {
  const auto& limits = sessions_->limits();
  {
    const std::lock_guard lock(streams_->mu);
    auto& held = streams_->per_user[principal];
    if (held >= limits.streams_per_user || streams_->total >= limits.max_streams) {
      if (held == 0) streams_->per_user.erase(principal);
      return nullptr;
    }
    ++held;
    ++streams_->total;
  }
  struct Slot {
    Slot(std::shared_ptr<StreamShares> s, std::string p) : shares(std::move(s)), principal(std::move(p)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    std::shared_ptr<StreamShares> shares;
    std::string principal;
    ~Slot() {
      const std::lock_guard lock(shares->mu);
      --shares->total;
      const auto it = shares->per_user.find(principal);
      if (--it->second == 0) shares->per_user.erase(it);
    }
  };
  return std::make_shared<Slot>(streams_, principal);
}

std::optional<http::Response> AggregatorService::throttled(const http::Request& req,
                                                           const std::string& peer) {
  const auto wait = auth_throttle_->wait(peer, std::chrono::steady_clock::now());
  if (wait.count() == 0) return std::nullopt;
  metrics_.observe_auth_failure("throttled");
  auto res = http::problem_response(
      req, Problem{429,
                   "too-many-failed-authentications",
                   "Too many failed authentications",
                   "too many requests from " + peer + " carried an unknown token or session; retry later",
                   {}});
  res.set(bhttp::field::retry_after, std::to_string((wait.count() + 999) / 1000));
  return res;
}

void AggregatorService::authentication_failed(const std::string& peer, std::string_view reason) {
  metrics_.observe_auth_failure(reason);
  auth_throttle_->failed(peer, std::chrono::steady_clock::now());
}

std::variant<http::Response, AggregatorService::Admitted> AggregatorService::admit(const http::Request& req,
                                                                                   const http::Peer& peer) {
  auto target = boost::urls::parse_origin_form(req.target());
  if (!target) {
    return http::problem_response(req, Problem{400,
                                               "malformed-target",
                                               "Malformed request target",
                                               "the request target is not a valid origin-form URL (an "
                                               "absolute path with an optional query)",
                                               {}});
  }
  auto match = router_.match(req.method(), target->encoded_path());
  if (!match.route) {
    if (!match.allow.empty()) {
      auto res = http::problem_response(
          req, Problem::method_not_allowed(excerpt(req.method_string()) +
                                           " is not allowed here; allowed: " + match.allow));
      res.set(bhttp::field::allow, match.allow);
      return res;
    }
    return http::problem_response(req, Problem::not_found("no route for " + excerpt(target->path())));
  }
  const auto& route = *match.route;

  std::string principal;
  std::string bound_host;
  if (route.permissions != http::kPublic && auth_) {
    if (auto refused = throttled(req, peer.address)) return std::move(*refused);
    const auto header = req[bhttp::field::authorization];
    std::optional<Principal> who;
    const bool has_cookie =
        header.empty() && http::cookie_value(req[bhttp::field::cookie], http::kSessionCookie).has_value();
    if (!header.empty()) {
      who = auth_->authenticate(header);
    } else if (has_cookie) {
      if (auto session = session_of(req)) {
        // The CSRF rule: a cookie is sent by the browser whoever made the page; the token only by our page.
        if (is_write(req.method()) && !http::SessionTable::csrf_matches(*session, req[http::kCsrfHeader])) {
          metrics_.observe_auth_failure("csrf");
          return http::problem_response(
              req, Problem::forbidden("a write authenticated by the session cookie must carry the session's "
                                      "CSRF token in the X-CSRF-Token header (GET /api/v1/session)"));
        }
        who = std::move(session->principal);
      }
    }
    if (!who) {
      // A missing token is no guess: only unknown tokens and sessions spend the address's attempts.
      if (header.empty() && !has_cookie) {
        metrics_.observe_auth_failure("missing_token");
      } else {
        authentication_failed(peer.address, header.empty() ? "unknown_session" : "unknown_token");
      }
      auto res = http::problem_response(
          req, Problem::unauthorized(!header.empty() ? "the bearer token is not valid"
                                     : has_cookie    ? "the session has expired or is unknown: log in again"
                                                     : "an Authorization: Bearer token is required"));
      res.set(bhttp::field::www_authenticate, "Bearer realm=\"hsns\"");
      return res;
    }
    if ((permissions_of(who->role) & route.permissions) == 0) {
      metrics_.observe_auth_failure("forbidden");
      return http::problem_response(
          req, Problem::forbidden("role " + std::string(role_name(who->role)) + " (token " + who->name +
                                  ") may not " + std::string(req.method_string()) + " " + route.pattern));
    }
    if (auto refused = host_binding_refusal(*who, match.path_params)) {
      metrics_.observe_auth_failure("wrong_host");
      return http::problem_response(req, *refused);
    }
    principal = who->name;
    bound_host = who->host;
  }
  return Admitted{&route, std::move(match.path_params), std::move(principal), std::move(bound_host),
                  peer.address};
}

}  // namespace hsns
