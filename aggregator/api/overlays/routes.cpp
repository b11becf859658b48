#include "api/overlays/routes.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "http/json_io.h"

namespace hsns::overlays {

void register_overlay_routes(http::Router& router, const OverlaySettings& overlays) {
  auto answer = std::make_shared<const nlohmann::json>(overlays_json(overlays));
  router.add(http::bhttp::verb::get, "/api/v1/overlays", http::permits(http::Permission::read),
             [answer](http::RequestContext& ctx) {
               if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
               return http::json_ok(ctx, *answer);
             });
}

}  // namespace hsns::overlays
