// The browser session routes of AggregatorService (GET, POST, DELETE /api/v1/session); the rules are in
// http/service.h and http/sessions.h.
#include <nlohmann/json.hpp>

#include "hsns/json_fields.h"
#include "hsns/time.h"
#include "http/json_io.h"
#include "http/service.h"

namespace hsns {

namespace bhttp = boost::beast::http;

namespace {

constexpr std::size_t kMaxTokenLength = 4096;

nlohmann::json session_body(const Principal& who, const std::string& csrf,
                            std::chrono::system_clock::time_point expires, bool authentication) {
  return {{"authentication", authentication},
          {"authenticated", true},
          {"name", who.name},
          {"role", std::string(role_name(who.role))},
          {"csrf_token", csrf},
          {"expires_at", format_rfc3339_utc(expires)}};
}

// No session: what the login page needs to know (authentication is on, nobody is logged in).
nlohmann::json no_session_body() {
  return {{"authentication", true}, {"authenticated", false}, {"name", nullptr},
          {"role", nullptr},        {"csrf_token", nullptr},  {"expires_at", nullptr}};
}

// A session answer is a credential's companion: never stored by a cache.
http::Response no_store(http::Response res) {
  res.set(bhttp::field::cache_control, "no-store");
  return res;
}

}  // namespace

void AggregatorService::add_session_routes() {
  using V = bhttp::verb;
  const auto any_role = http::permits(http::Permission::read);
  router_.add(V::post, "/api/v1/session", http::kPublic, [this](http::RequestContext& ctx) {
    if (auto bad = http::check_query(ctx, {})) return http::problem(ctx, *bad);
    auto body = http::json_request_body(ctx);
    if (!body) return http::problem(ctx, body.error());
    FieldReader fields(*body);
    auto token = fields.sized_string("token", true, 1, kMaxTokenLength);
    if (auto bad = fields.finish()) return http::problem(ctx, *bad);
    if (!auth_) {
      // Authentication is off (a loopback demo): every caller may do everything; no cookie is needed.
      const Principal anonymous{"anonymous", Role::operator_role, ""};
      return no_store(http::json_ok(
          ctx, session_body(anonymous, "", std::chrono::system_clock::now() + sessions_->limits().ttl, false),
          bhttp::status::created));
    }
    if (auto refused = throttled(ctx.request, ctx.peer)) return std::move(*refused);
    auto who = auth_->authenticate("Bearer " + *token);
    if (!who) {
      authentication_failed(ctx.peer, "unknown_token");
      auto res = http::problem(ctx, Problem::unauthorized("the token is not valid"));
      res.set(bhttp::field::www_authenticate, "Bearer realm=\"hsns\"");
      return res;
    }
    if (who->role == Role::agent) {
      metrics_.observe_auth_failure("forbidden");
      return http::problem(ctx,
                           Problem::forbidden("token " + who->name +
                                              " has the agent role: daemons call the API with their token, "
                                              "they do not open browser sessions"));
    }
    const auto made = sessions_->create(*who);
    auto res = no_store(
        http::json_ok(ctx, session_body(who.value(), made.info.csrf_token, made.info.expires_at, true),
                      bhttp::status::created));
    std::string cookie =
        std::string(http::kSessionCookie) + "=" + made.id +
        "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(sessions_->limits().ttl.count());
    if (secure_cookie_) cookie += "; Secure";
    res.set(bhttp::field::set_cookie, cookie);
    res.set(bhttp::field::location, "/api/v1/session");
    return res;
  });
  // Public, so the page can ask whether it is logged in without a failed request (a 401 is also a console
  // error in the browser): it answers authenticated false when the cookie names no live session.
  router_.add(V::get, "/api/v1/session", http::kPublic, [this](http::RequestContext& ctx) {
    if (auto bad = http::check_query(ctx, {})) return http::problem(ctx, *bad);
    if (!auth_) {
      const Principal anonymous{"anonymous", Role::operator_role, ""};
      return no_store(http::json_ok(
          ctx,
          session_body(anonymous, "", std::chrono::system_clock::now() + sessions_->limits().ttl, false)));
    }
    auto session = session_of(ctx.request);
    if (!session) return no_store(http::json_ok(ctx, no_session_body()));
    return no_store(
        http::json_ok(ctx, session_body(session->principal, session->csrf_token, session->expires_at, true)));
  });
  router_.add(V::delete_, "/api/v1/session", any_role, [this](http::RequestContext& ctx) {
    if (auto bad = http::check_query(ctx, {})) return http::problem(ctx, *bad);
    const auto cookie = http::cookie_value(ctx.request[bhttp::field::cookie], http::kSessionCookie);
    if (!auth_ || !cookie || !ctx.request[bhttp::field::authorization].empty() ||
        !sessions_->remove(*cookie)) {
      return http::problem(ctx, Problem::not_found("this request carries no session cookie to end"));
    }
    auto res = http::empty_response(ctx.request, bhttp::status::no_content);
    std::string clear = std::string(http::kSessionCookie) + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0";
    if (secure_cookie_) clear += "; Secure";
    res.set(bhttp::field::set_cookie, clear);
    return res;
  });
}

}  // namespace hsns
