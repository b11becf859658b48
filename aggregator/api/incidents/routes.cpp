#include "api/incidents/routes.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <string>

#include "hsns/error.h"
#include "http/json_io.h"

namespace hsns::incidents_api {
namespace {

// A decimal integer from min to max, or nullopt.
std::optional<std::size_t> read_count(const std::string& text, std::size_t min, std::size_t max) {
  std::size_t n = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || ptr != end || n < min || n > max) return std::nullopt;
  return n;
}

Result<store::IncidentQuery> read_query(const http::RequestContext& ctx) {
  store::IncidentQuery q;
  std::vector<FieldError> errors;
  if (auto state = ctx.query("state")) {
    if (*state == "open" || *state == "resolved") {
      q.state = *state;
    } else if (*state != "all") {
      errors.push_back({"state", "must be open, resolved or all"});
    }
  }
  if (auto limit = ctx.query("limit")) {
    if (auto n = read_count(*limit, 1, kMaxIncidentLimit)) {
      q.limit = *n;
    } else {
      errors.push_back({"limit", "must be an integer from 1 to " + std::to_string(kMaxIncidentLimit)});
    }
  }
  if (auto offset = ctx.query("offset")) {
    if (auto n = read_count(*offset, 0, kMaxIncidentOffset)) {
      q.offset = *n;
    } else {
      errors.push_back({"offset", "must be an integer from 0 to " + std::to_string(kMaxIncidentOffset)});
    }
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  return q;
}

nlohmann::json document(const store::IncidentRecord& r) {
  auto doc = nlohmann::json::parse(r.document, nullptr, false);
  if (doc.is_discarded()) return {{"id", r.id}, {"state", r.state}};  // never written so; kept answerable
  return doc;
}

}  // namespace

void register_incident_routes(http::Router& router, brain_service::IncidentService& service,
                              http::WebSocketHub& hub) {
  router.add(http::bhttp::verb::get, "/api/v1/incidents", http::permits(http::Permission::read),
             [&service](http::RequestContext& ctx) {
               if (auto p = http::check_query(ctx, {"state", "limit", "offset"}))
                 return http::problem(ctx, *p);
               auto q = read_query(ctx);
               if (!q) return http::problem(ctx, q.error());
               auto page = service.list(*q);
               if (!page) return http::problem(ctx, page.error());
               nlohmann::json items = nlohmann::json::array();
               for (const auto& r : page->items) items.push_back(document(r));
               return http::json_ok(ctx, {{"items", std::move(items)}, {"total", page->total}});
             });
  // Before /{id}: the first matching pattern wins, and "stream" is never an incident id ("inc-<n>").
  router.add_websocket(
      "/api/v1/incidents/stream", http::permits(http::Permission::read),
      [&hub](const http::RequestContext&, const std::shared_ptr<http::WebSocketChannel>& channel) {
        hub.subscribe(brain_service::kIncidentsTopic, channel);
      });
  router.add(http::bhttp::verb::get, "/api/v1/incidents/{id}", http::permits(http::Permission::read),
             [&service](http::RequestContext& ctx) {
               if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
               const std::string id(ctx.path_param("id"));
               if (id.size() > 64) {
                 return http::problem(
                     ctx, Error::invalid("id", "must be an incident id of at most 64 characters"));
               }
               auto r = service.get(id);
               if (!r) return http::problem(ctx, r.error());
               return http::json_ok(ctx, document(*r));
             });
}

}  // namespace hsns::incidents_api
