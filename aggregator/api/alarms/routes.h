// REST and WebSocket handlers of the alarms (brain/alarm_service.h; docs/brain.md "Alarms", openapi.json).
//
// Routes:
//   GET    /api/v1/alarms?state=&severity=&entity=&type=&suppressed=&since=&until=&limit=&offset=
//            {"items":[Alarm], "total": N}, newest last_seen first; limit 1..1000 (default 100),
//            offset 0..1,000,000; since/until: RFC 3339 or Unix ms, over last_seen, [since, until)
//   GET    /api/v1/alarms/stream    WebSocket: every alarm change that is not of a suppressed alarm (and
//            the change that suppresses one), as {"kind":"alarm","change":"<kind>","at":..,"actor":..,
//            "item":Alarm}
//   GET    /api/v1/alarms/{id}      Alarm + "history": [{"change","at","at_ms","actor","state","suppressed",
//            "detail","comment"}]
//   POST   /api/v1/alarms/{id}/ack  {"comment"?}            -> the acknowledged Alarm
//   POST   /api/v1/alarms/ack       {"ids":[..], "comment"?} -> {"items":[Alarm]} (all or none)
//   GET    /api/v1/silences         {"items":[Silence]}
//   POST   /api/v1/silences         {"entity"?,"type"?,"regex"?,"reason","expires"?} -> 201 Silence
//   GET    /api/v1/silences/{id}    Silence
//   DELETE /api/v1/silences/{id}    204
// Contract: reads need role read; acknowledgements and silences are writes of an operator (permission
// manage_network, as every other operator write). The acknowledging user and a silence's creator are the
// token's name ("anonymous" with authentication off). Unknown query parameters and body fields, bad values
// and an expiry in the past answer 400 naming the field; an unknown alarm or silence 404; a cleared alarm
// 409. Thread-safe; the service and hub must outlive the router.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "brain/alarm_service.h"
#include "http/router.h"
#include "http/websocket.h"

namespace hsns::alarms_api {

inline constexpr std::size_t kMaxAlarmLimit = 1000;
inline constexpr std::size_t kMaxAlarmOffset = 1'000'000;
inline constexpr std::size_t kMaxCommentLength = 4096;
inline constexpr const char* kAlarmTopic = "alarms";

nlohmann::json alarm_json(const brain::Alarm& alarm);
nlohmann::json silence_json(const brain::Silence& silence);
// The WebSocket message of one change.
std::string change_message(const brain::AlarmChange& change);

// Also subscribes the hub publisher to the service (add_listener).
void register_alarm_routes(http::Router& router, alarms::AlarmService& service, http::WebSocketHub& hub);

}  // namespace hsns::alarms_api
