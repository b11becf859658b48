// REST handler for the switch logs kept in memory by the syslog receivers (ingest/syslog_receiver.h).
//
// Route (see docs/rest-api.md, "Logs"):
//   GET /api/v1/logs?device=&since=&limit=   the last parsed messages, oldest first: of one device (a
//                                            topology device name or "unknown:<host>") or of all;
//                                            since: RFC 3339 time, messages timestamped at or after it;
//                                            limit: 1..1000 (default 100)
// Contract: role read. Unknown query parameters and bad values answer 400 naming the parameter. The
// answer is {"items": [...]} (possibly empty: the receivers are off, or nothing arrived). Thread-safe;
// the buffer must outlive the router.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "http/router.h"
#include "ingest/log_buffer.h"

namespace hsns::logs_api {

inline constexpr std::size_t kMaxLogLimit = 1000;

void register_log_routes(http::Router& router, const ingest::LogBuffer& buffer);

// One stored message as the API answers it.
nlohmann::json log_json(const ingest::IngestedLog& log);

}  // namespace hsns::logs_api
