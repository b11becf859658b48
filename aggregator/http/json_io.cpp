#include "http/json_io.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "hsns/json_fields.h"
#include "http/errors.h"

namespace hsns::http {

std::optional<Problem> check_query(const RequestContext& ctx, std::initializer_list<std::string_view> known) {
  for (const auto& p : ctx.url.params()) {
    if (std::find(known.begin(), known.end(), p.key) == known.end()) {
      return Problem::invalid(p.key, "is not a known query parameter");
    }
  }
  return std::nullopt;
}

tl::expected<nlohmann::json, Problem> json_request_body(const RequestContext& ctx) {
  const auto ct = ctx.request[bhttp::field::content_type];
  const auto semi = ct.find(';');
  std::string media(ct.substr(0, semi));
  std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
  while (!media.empty() && media.back() == ' ') media.pop_back();
  if (media != "application/json") {
    return tl::unexpected(Problem::unsupported_media_type("Content-Type must be application/json, not '" +
                                                          std::string(ct) + "'"));
  }
  return parse_json_object(ctx.request.body());
}

Response json_ok(const RequestContext& ctx, const nlohmann::json& body, bhttp::status status) {
  return json_response(ctx.request, status, body.dump());
}

Response json_created(const RequestContext& ctx, const nlohmann::json& body, const std::string& location) {
  auto res = json_ok(ctx, body, bhttp::status::created);
  res.set(bhttp::field::location, location);
  return res;
}

Response text_ok(const RequestContext& ctx, std::string_view media_type, std::string body) {
  Response res{bhttp::status::ok, ctx.request.version()};
  res.set(bhttp::field::content_type, media_type);
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(ctx.request.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response problem(const RequestContext& ctx, const Problem& p) {
  return problem_response(ctx.request, p);
}

Response problem(const RequestContext& ctx, const Error& e) {
  return problem_response(ctx.request, to_problem(e));
}

}  // namespace hsns::http
