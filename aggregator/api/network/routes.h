// REST handlers for network management: hosts, subnets, ports, reachability, per-host desired state.
//
// Contract: register_network_routes() adds the routes documented in docs/rest-api.md and
// aggregator/openapi.json to a Router. Handlers validate every input (body, path and query parameters;
// unknown query parameters are rejected) before touching the store, translate StoreError into problem
// documents, and never change stored state on a rejected request. They run on the connection's strand
// and call the store synchronously; the store must outlive the router.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "http/router.h"
#include "store/network_store.h"

namespace hsns::network {

void register_network_routes(http::Router& router, store::NetworkStore& store);

// The desired state document for one host, and its strong ETag (quoted), computed from the document.
struct DesiredDocument {
  std::string body;
  std::string etag;
};
DesiredDocument render_desired_state(const HostView& view);

// A 400 Problem naming the first query parameter not in `known`, or nothing.
std::optional<Problem> check_query(const http::RequestContext& ctx,
                                   std::initializer_list<std::string_view> known);

// The request body as a JSON object, after checking that Content-Type is application/json (415
// otherwise) and that the body parses strictly (parse_json_object: 400 for malformed JSON, nesting
// beyond kMaxJsonDepth, or a key repeated in one object, named by its path). Every JSON request body of
// the API is read through here.
tl::expected<nlohmann::json, Problem> json_request_body(const http::RequestContext& ctx);

// Problem for a store error: not_found 404, conflict 409, invalid 400 (422 when the field is "host" or
// "npu": the request is well-formed but names something the host inventory lacks), unavailable 503.
Problem to_problem(const store::StoreError& e);

}  // namespace hsns::network
