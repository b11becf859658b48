#include "service.h"

#include <boost/url/parse.hpp>
#include <chrono>
#include <iostream>

namespace hsns::embedded {
std::string_view openapi_document();
}

namespace hsns {

namespace bhttp = boost::beast::http;

AggregatorService::AggregatorService(Metrics& metrics, std::optional<TokenAuthenticator> auth,
                                     std::function<std::optional<std::string>()> store_check)
    : metrics_(metrics), auth_(std::move(auth)), store_check_(std::move(store_check)) {
  add_builtin_routes();
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
  router_.add(V::get, "/api/v1/openapi.json", http::kPublic, [](http::RequestContext& ctx) {
    return http::json_response(ctx.request, bhttp::status::ok, std::string(embedded::openapi_document()));
  });
}

http::Response AggregatorService::handle(http::Request&& req) {
  const auto start = std::chrono::steady_clock::now();
  std::string route_label = "unmatched";
  http::Response res;
  try {
    res = dispatch(req, route_label);
  } catch (const std::exception& e) {
    std::cerr << "<3>hsns-aggregator: handler for " << req.method_string() << " " << req.target()
              << " failed: " << e.what() << "\n";
    res = http::problem_response(
        req, Problem::internal("the request failed unexpectedly; see the aggregator log"));
  }
  if (req.method() == bhttp::verb::head) {
    const auto length = res.body().size();
    res.body().clear();
    res.content_length(length);
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  metrics_.observe_request(route_label, req.method_string(), static_cast<int>(res.result_int()),
                           elapsed.count());
  return res;
}

http::Response AggregatorService::dispatch(http::Request& req, std::string& route_label) {
  auto target = boost::urls::parse_origin_form(req.target());
  if (!target) {
    return http::problem_response(req, Problem::malformed("request target is not a valid origin-form URL"));
  }
  auto match = router_.match(req.method(), target->encoded_path());
  if (!match.route) {
    if (!match.allow.empty()) {
      auto res = http::problem_response(
          req, Problem::method_not_allowed(std::string(req.method_string()) +
                                           " is not allowed here; allowed: " + match.allow));
      res.set(bhttp::field::allow, match.allow);
      return res;
    }
    return http::problem_response(req, Problem::not_found("no route for " + std::string(target->path())));
  }
  const auto& route = *match.route;
  route_label = route.pattern;

  std::string principal;
  if (route.permissions != http::kPublic && auth_) {
    const auto header = req[bhttp::field::authorization];
    auto who = header.empty() ? std::nullopt : auth_->authenticate(header);
    if (!who) {
      metrics_.observe_auth_failure(header.empty() ? "missing_token" : "unknown_token");
      auto res = http::problem_response(
          req, Problem::unauthorized(header.empty() ? "an Authorization: Bearer token is required"
                                                    : "the bearer token is not valid"));
      res.set(bhttp::field::www_authenticate, "Bearer realm=\"hsns\"");
      return res;
    }
    if ((permissions_of(who->role) & route.permissions) == 0) {
      metrics_.observe_auth_failure("forbidden");
      return http::problem_response(
          req, Problem::forbidden("role " + std::string(role_name(who->role)) + " (token " + who->name +
                                  ") may not " + std::string(req.method_string()) + " " + route.pattern));
    }
    principal = who->name;
  }
  http::RequestContext ctx{req, *target, std::move(match.path_params), std::move(principal)};
  return route.handler(ctx);
}

}  // namespace hsns
