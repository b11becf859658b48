#include "api/diagnose/routes.h"

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/scheduling/requests.h"
#include "http/json_io.h"

namespace hsns::diagnose_api {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

// max_paths of the query into `out` (1..kMaxPathsLimit), a finding otherwise.
void read_max_paths(const RequestContext& ctx, std::size_t& out, std::vector<InvalidParam>& errors) {
  const auto text = ctx.query("max_paths");
  if (!text) return;
  std::size_t n = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > diagnose::kMaxPathsLimit) {
    errors.push_back(
        {"max_paths", "must be an integer from 1 to " + std::to_string(diagnose::kMaxPathsLimit)});
  } else {
    out = n;
  }
}

// The job's stored request (as POST /api/v1/schedule accepted it) as the library's request.
std::optional<placement::ScheduleRequest> parse_stored_request(const store::JobRecord& job,
                                                               std::string& why) {
  const auto body = nlohmann::json::parse(job.request, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    why = "the job's stored request is not a JSON object";
    return std::nullopt;
  }
  auto parsed = scheduling_api::parse_schedule_request(body);
  if (!parsed) {
    why = "the job's stored request no longer parses: " + parsed.error().detail;
    return std::nullopt;
  }
  return placement::ScheduleRequest(std::move(*parsed));
}

Response get_path(services::DiagnosisService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"src", "dst", "max_paths"})) return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  const auto src = ctx.query("src");
  const auto dst = ctx.query("dst");
  if (!src || src->empty()) errors.push_back({"src", "is required: <host>/<npu>"});
  if (!dst || dst->empty()) errors.push_back({"dst", "is required: <host>/<npu>"});
  std::size_t max_paths = diagnose::kDefaultMaxPaths;
  read_max_paths(ctx, max_paths, errors);
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  auto out = s.diagnose_path(*src, *dst, max_paths, parse_stored_request);
  if (!out) return http::problem(ctx, out.error());
  return http::json_ok(ctx, *out);
}

// traffic_window_s of the query into `out` (1..kMaxTrafficWindowS), a finding otherwise.
void read_traffic_window(const RequestContext& ctx, std::chrono::seconds& out,
                         std::vector<InvalidParam>& errors) {
  const auto text = ctx.query("traffic_window_s");
  if (!text) return;
  long long n = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > kMaxTrafficWindowS) {
    errors.push_back(
        {"traffic_window_s", "must be an integer from 1 to " + std::to_string(kMaxTrafficWindowS)});
  } else {
    out = std::chrono::seconds(n);
  }
}

Response get_job(services::DiagnosisService& s, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"max_paths", "traffic_window_s"})) return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  const std::string id(ctx.path_param("id"));
  if (!scheduling_api::valid_job_name(id))
    errors.push_back({"id", "must be 1 to 63 characters of [A-Za-z0-9._-], starting with a letter or digit"});
  std::size_t max_paths = kDefaultJobMaxPaths;
  read_max_paths(ctx, max_paths, errors);
  std::chrono::seconds window{kDefaultTrafficWindowS};
  read_traffic_window(ctx, window, errors);
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  auto out = s.diagnose_job(id, max_paths, parse_stored_request, window);
  if (!out) return http::problem(ctx, out.error());
  return http::json_ok(ctx, *out);
}

}  // namespace

void register_diagnose_routes(http::Router& router,
                              const std::shared_ptr<services::DiagnosisService>& service) {
  using http::Permission;
  using V = bhttp::verb;
  router.add(
      V::get, "/api/v1/diagnose/path", http::permits(Permission::read),
      [service](RequestContext& ctx) { return get_path(*service, ctx); }, http::Cost::heavy);
  router.add(
      V::get, "/api/v1/diagnose/job/{id}", http::permits(Permission::read),
      [service](RequestContext& ctx) { return get_job(*service, ctx); }, http::Cost::heavy);
}

}  // namespace hsns::diagnose_api
