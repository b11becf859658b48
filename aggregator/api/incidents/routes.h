// REST handlers for the network brain's incidents (aggregator/brain/incident_service.h).
//
// Routes (docs/brain.md, "Root cause and incidents"; openapi.json):
//   GET /api/v1/incidents?state=open|resolved|all&limit=&offset=   {"items":[Incident], "total":N}, newest
//                                                                  first; state default all, limit 1..1000
//                                                                  (default 100), offset 0..1000000000
//   GET /api/v1/incidents/{id}                                     one Incident; 404 for an unknown id
//   GET /api/v1/incidents/stream (WebSocket)                       every incident change, topic "incidents"
// Contract: role read. Unknown query parameters and bad values answer 400 naming the parameter; a store
// failure 503. The items are the stored documents as the service wrote them. Thread-safe; the service must
// outlive the router.
#pragma once

#include "brain/incident_service.h"
#include "http/router.h"

namespace hsns::incidents_api {

inline constexpr std::size_t kMaxIncidentLimit = 1000;
inline constexpr std::size_t kMaxIncidentOffset = 1'000'000'000;

// hub: where the stream's sessions subscribe (the service's WebSocketHub).
void register_incident_routes(http::Router& router, brain_service::IncidentService& service,
                              http::WebSocketHub& hub);

}  // namespace hsns::incidents_api
