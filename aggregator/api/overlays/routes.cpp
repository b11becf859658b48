#include "api/overlays/routes.h"

#include <charconv>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/kpis/routes.h"
#include "api/overlays/grades.h"
#include "api/topology/links.h"
#include "http/json_io.h"
#include "services/store_errors.h"

namespace hsns::overlays {
namespace {

http::Response get_grades(const OverlaySettings& overlays, store::KpiStore& kpis,
                          services::TopologyCache& cache, http::RequestContext& ctx) {
  const auto id = ctx.path_param("id");
  const Overlay* o = find_metric_overlay(overlays, id);
  if (o == nullptr) {
    return http::problem(ctx,
                         Problem::not_found("no metric overlay is called \"" + std::string(id.substr(0, 32)) +
                                            "\" (GET /api/v1/overlays lists them)"));
  }
  if (auto p = http::check_query(ctx, {"at", "max_age_s", "upper"})) return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  std::optional<std::int64_t> at_ms;
  if (auto text = ctx.query("at")) {
    at_ms = kpis_api::parse_api_time_text(*text);
    if (!at_ms)
      errors.push_back({"at", "must be an RFC 3339 time with an offset or an integer of Unix milliseconds"});
  }
  const auto max_age = parse_grade_max_age(ctx);
  if (!max_age) errors.push_back(max_age.error());
  const std::int64_t max_age_s = max_age.value_or(kDefaultGradeMaxAgeS);
  const auto upper = topology_api::parse_upper_filter(ctx);
  if (!upper) {
    for (const auto& e : upper.error().invalid_params) errors.push_back(e);
  }
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  auto snapshot = cache.current();
  if (!snapshot) return http::problem(ctx, snapshot.error());
  const std::int64_t reference = at_ms.value_or(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count());
  const std::int64_t since_ms = std::max<std::int64_t>(0, reference - max_age_s * 1000);
  auto values = read_entity_values(kpis, *o, at_ms, since_ms);
  if (!values) return http::problem(ctx, services::from_store(values.error()));
  const auto& t = *snapshot->topology;
  const auto grades = grade_topology(*o, t, snapshot->revision, *values);
  auto body = grades_json(*o, grades, link_positions(t, *upper), at_ms, since_ms);
  body.erase("kind");  // a message kind of the stream, not of the REST answer
  return http::json_ok(ctx, body);
}

}  // namespace

tl::expected<std::int64_t, InvalidParam> parse_grade_max_age(const http::RequestContext& ctx) {
  std::int64_t max_age_s = kDefaultGradeMaxAgeS;
  const auto text = ctx.query("max_age_s");
  if (!text) return max_age_s;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, max_age_s);
  if (ec != std::errc() || ptr != end || max_age_s < 1 || max_age_s > kpis_api::kMaxKpiLatestAgeS)
    return tl::unexpected(InvalidParam{
        "max_age_s", "must be an integer from 1 to " + std::to_string(kpis_api::kMaxKpiLatestAgeS)});
  return max_age_s;
}

void register_overlay_routes(http::Router& router, const OverlaySettings& overlays, store::KpiStore& kpis,
                             std::shared_ptr<services::TopologyCache> topology) {
  auto answer = std::make_shared<const nlohmann::json>(overlays_json(overlays));
  router.add(http::bhttp::verb::get, "/api/v1/overlays", http::permits(http::Permission::read),
             [answer](http::RequestContext& ctx) {
               if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
               return http::json_ok(ctx, *answer);
             });
  router.add(
      http::bhttp::verb::get, "/api/v1/overlays/{id}/grades", http::permits(http::Permission::read),
      [settings = std::make_shared<const OverlaySettings>(overlays), &kpis, cache = std::move(topology)](
          http::RequestContext& ctx) { return get_grades(*settings, kpis, *cache, ctx); },
      http::Cost::heavy);
}

}  // namespace hsns::overlays
