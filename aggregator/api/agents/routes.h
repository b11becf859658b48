// REST handlers for node-daemon status: what each hsnsd reports it has applied, and where it failed.
//
// Routes (see docs/rest-api.md):
//   PUT /api/v1/agents/{host}/status   the daemon's report (role agent or operator); 200 with the summary
//   GET /api/v1/agents/{host}/status   the last report with its summary; 404 before the first report
//   GET /api/v1/agents                 one summary row per registered host, reported or not
// Contract: the report body is validated strictly against the wire contract's status report
// (hsns/proto/agent.h: unknown fields, wrong types, bad enum values are 400 naming the field) before it is
// stored; the report is stored and answered back as the daemon sent it; the summary compares the applied
// generation with the host's current desired generation ("in_sync"). Stores must outlive the router.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include "http/router.h"
#include "store/agent_store.h"
#include "store/network_store.h"

namespace hsns::network {

void register_agent_routes(http::Router& router, store::NetworkStore& network, store::AgentStore& agents);

// Validates a status report body with proto::read_status_report; returns the body or a 400 Problem.
tl::expected<nlohmann::json, Problem> parse_agent_report(const nlohmann::json& body);

}  // namespace hsns::network
