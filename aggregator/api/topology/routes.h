// REST handlers for the cluster topology model: the one current topology (import, generate, show,
// export), LLDP discovery merged into it and device state changes.
//
// Routes (see docs/rest-api.md, "Topology"):
//   PUT   /api/v1/topology                  import a topology document (JSON, or YAML with a YAML media
//                                           type), replacing the current one; 200 with the summary
//   POST  /api/v1/topology/generate         generate a rail-optimised Clos cluster (ClosParams as JSON)
//   GET   /api/v1/topology                  the summary; 404 while no topology exists
//   GET   /api/v1/topology/export?format=F  json | slurm-tree | slurm-block | volcano | kueue |
//                                           node-labels | yaml, each with its media type
//   POST  /api/v1/topology/lldp             merge LLDP observations (role agent or operator); the report
//   GET   /api/v1/topology/lldp             the stored observations
//   PATCH /api/v1/topology/devices/{name}   set the state of a host, switch or (with "npu") an NPU
//   PATCH /api/v1/topology/devices          set many states at once ({"devices":[...]}, up to 10,000),
//                                           all or nothing, every bad entry named ("devices[3].state")
// Contract: writes need manage_network (LLDP also agent_report), reads need read. Every input is validated
// (unknown fields and query parameters, types, ranges, the import schema) before anything is stored; a
// rejected request changes nothing. Each accepted write is one new revision: an import, generate or LLDP
// merge stores the model in the import file schema (a JSON import as received, the others as
// export_topology_document writes it); a state change stores one row per changed device, not the
// document (services/topology_cache.h); LLDP conflicts are reported, never applied. The request body
// limit of these routes is the server's topology limit (config.h), not the general one. Writes are serialised
// in-process and checked against the stored revision (409 if another process wrote meanwhile). The parsed
// model is cached per revision, so reads do not re-parse. The store must outlive the router; handlers are
// thread-safe.
//
// The handlers parse and validate the request, call services::TopologyService
// (services/topology_service.h; the cache behind it is services/topology_cache.h) and answer its result,
// or its hsns::Error through http::to_problem.
//
// Bounds: every model that gets here went through the size checks of topology/limits.h
// (import, generate, read-back, LLDP merge), so one write or load costs at most the cost of a model at
// the limits (docs/topology.md, "Limits").
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include "hsns/problem.h"
#include "http/router.h"
#include "services/topology_cache.h"
#include "store/topology_store.h"
#include "topology/generator.h"

namespace hsns::topology_api {

void register_topology_routes(http::Router& router, store::TopologyStore& store);
// The same routes over a cache shared with other route sets.
void register_topology_routes(http::Router& router, std::shared_ptr<services::TopologyCache> cache);

// Validates a generate request body (ClosParams fields, all optional, unknown fields rejected, server
// size limits applied); a 400 Problem naming every bad field otherwise.
tl::expected<topology::ClosParams, Problem> parse_clos_params(const nlohmann::json& body);

// The summary document of a topology (see docs/rest-api.md).
nlohmann::json topology_summary(const topology::Topology& topology);

}  // namespace hsns::topology_api
