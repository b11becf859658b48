// REST handlers for network management: hosts, subnets, ports, reachability, per-host desired state.
//
// Contract: register_network_routes() adds the routes documented in docs/rest-api.md and
// aggregator/openapi.json to a Router. Handlers validate every input (body, path and query parameters;
// unknown query parameters are rejected; http/json_io.h) before touching the store, answer a store's
// error through services::from_store and http::to_problem (not_found 404, conflict 409, invalid 400, an
// unregistered host or NPU 422, unavailable 503), and never change stored state on a rejected request.
// They run on the connection's strand and call the store synchronously; the store must outlive the
// router.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/router.h"
#include "store/network_store.h"

namespace hsns::network {

void register_network_routes(http::Router& router, store::NetworkStore& store);

// The desired state document for one host.
std::string render_desired_state(const HostView& view);
// Its strong ETag (quoted): the host's generation names the document (every change of it bumps the
// generation in the writing transaction), the store's instance (store/revision.h) the database.
std::string desired_etag(std::string_view instance, std::int64_t generation);

}  // namespace hsns::network
