// AggregatorService: the request pipeline in front of the routes: target parsing, authentication,
// authorisation, routing, error mapping and request metrics. Also owns the built-in routes /healthz,
// /readyz, /metrics and /api/v1/openapi.json.
//
// Contract:
// - handle() is thread-safe and never throws: a handler exception becomes a 500 problem (logged).
// - With an authenticator, every route with permissions needs "Authorization: Bearer <token>"
//   (401 + WWW-Authenticate when missing or unknown, 403 when the role lacks the permission). Without
//   one (insecure demo mode) every caller is treated as allowed.
// - HEAD is answered like GET without a body; a path that exists under other methods answers 405 with
//   Allow; anything else 404.
// - set_ready() controls /readyz (also false while the store check fails).
#pragma once

#include <atomic>
#include <functional>
#include <optional>

#include "auth.h"
#include "http/router.h"
#include "metrics.h"

namespace hsns {

class AggregatorService {
 public:
  // store_check returns an error text when the store is not usable (used by /readyz).
  AggregatorService(Metrics& metrics, std::optional<TokenAuthenticator> auth,
                    std::function<std::optional<std::string>()> store_check);

  http::Router& router() { return router_; }
  http::Response handle(http::Request&& req);
  void set_ready(bool ready) { ready_.store(ready); }

 private:
  http::Response dispatch(http::Request& req, std::string& route_label);
  void add_builtin_routes();

  Metrics& metrics_;
  std::optional<TokenAuthenticator> auth_;
  std::function<std::optional<std::string>()> store_check_;
  http::Router router_;
  std::atomic<bool> ready_{false};
};

}  // namespace hsns
