#include "hsns/problem.h"

#include <nlohmann/json.hpp>

namespace hsns {

nlohmann::json Problem::to_json() const {
  nlohmann::json j = {{"type", type()}, {"title", title}, {"status", status}};
  if (!detail.empty()) j["detail"] = detail;
  if (!invalid_params.empty()) {
    auto& arr = j["invalid_params"] = nlohmann::json::array();
    for (const auto& p : invalid_params) arr.push_back({{"name", p.name}, {"reason", p.reason}});
  }
  return j;
}

Problem Problem::invalid(std::vector<InvalidParam> params) {
  Problem p{400, "invalid-request", "Invalid request", "", std::move(params)};
  if (!p.invalid_params.empty()) {
    p.detail = "field '" + p.invalid_params.front().name + "': " + p.invalid_params.front().reason;
    if (p.invalid_params.size() > 1) {
      p.detail += " (and " + std::to_string(p.invalid_params.size() - 1) + " more in invalid_params)";
    }
  }
  return p;
}

Problem Problem::invalid(std::string field, std::string reason) {
  return invalid(std::vector<InvalidParam>{{std::move(field), std::move(reason)}});
}

Problem Problem::malformed(std::string detail) {
  return {400, "malformed-body", "Malformed request body", std::move(detail), {}};
}

Problem Problem::not_found(std::string detail) {
  return {404, "not-found", "Not found", std::move(detail), {}};
}

namespace {

// Names the field at fault in the detail too, so a reader of the detail alone knows what to fix.
Problem with_field(Problem p, std::string field) {
  if (field.empty()) return p;
  p.invalid_params.push_back({field, p.detail});
  p.detail = "field '" + field + "': " + p.detail;
  return p;
}

}  // namespace

Problem Problem::conflict(std::string field, std::string detail) {
  return with_field({409, "conflict", "Conflict with stored state", std::move(detail), {}}, std::move(field));
}

Problem Problem::unauthorized(std::string detail) {
  return {401, "unauthorized", "Authentication required", std::move(detail), {}};
}

Problem Problem::forbidden(std::string detail) {
  return {403, "forbidden", "Not permitted for this role", std::move(detail), {}};
}

Problem Problem::payload_too_large(std::string detail) {
  return {413, "payload-too-large", "Request body too large", std::move(detail), {}};
}

Problem Problem::unsupported_media_type(std::string detail) {
  return {415, "unsupported-media-type", "Unsupported media type", std::move(detail), {}};
}

Problem Problem::method_not_allowed(std::string detail) {
  return {405, "method-not-allowed", "Method not allowed", std::move(detail), {}};
}

Problem Problem::unprocessable(std::string field, std::string detail) {
  return with_field({422, "unprocessable", "Request cannot be satisfied", std::move(detail), {}},
                    std::move(field));
}

Problem Problem::unavailable(std::string detail) {
  return {503, "unavailable", "Service unavailable", std::move(detail), {}};
}

Problem Problem::internal(std::string detail) {
  return {500, "internal", "Internal error", std::move(detail), {}};
}

}  // namespace hsns
