// Request reading and response writing shared by the handlers of every API area (api/<area>/routes.cpp).
//
// Contract:
// - check_query: a 400 Problem naming the first query parameter not in `known`, or nothing; every handler
//   calls it first, so an unknown query parameter is never ignored silently.
// - json_request_body: the request body as a JSON object, after checking that Content-Type is
//   application/json (415 otherwise) and that the body parses strictly (parse_json_object: 400 for
//   malformed JSON, nesting beyond kMaxJsonDepth, or a key repeated in one object, named by its path).
//   Every JSON request body of the API is read through here.
// - The response builders follow the request's HTTP version and keep-alive (http/router.h): json_ok and
//   json_created serialise with nlohmann's compact dump(); text_ok sets Cache-Control: no-store (exports
//   are snapshots of changing state); problem() answers a Problem, or an hsns::Error converted by
//   to_problem (http/errors.h), the only conversion of an Error.
// - Stateless; thread-safe.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "hsns/error.h"
#include "hsns/problem.h"
#include "http/router.h"

namespace hsns::http {

std::optional<Problem> check_query(const RequestContext& ctx, std::initializer_list<std::string_view> known);
tl::expected<nlohmann::json, Problem> json_request_body(const RequestContext& ctx);

Response json_ok(const RequestContext& ctx, const nlohmann::json& body,
                 bhttp::status status = bhttp::status::ok);
// 201 with a Location header.
Response json_created(const RequestContext& ctx, const nlohmann::json& body, const std::string& location);
Response text_ok(const RequestContext& ctx, std::string_view media_type, std::string body);
Response problem(const RequestContext& ctx, const Problem& p);
Response problem(const RequestContext& ctx, const Error& e);

}  // namespace hsns::http
