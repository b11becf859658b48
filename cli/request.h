// Requests to the aggregator as every hsnsctl command makes them, and small helpers the commands share.
//
// Contract:
// - send_request() performs one request with the context's client. A network failure throws a connection
//   error (exit 2). It returns every HTTP answer as it is; callers decide what a non-2xx answer means.
// - request_ok() additionally turns a non-2xx answer into a CliError (exit 1) carrying the server's problem
//   document formatted by format_http_error(), with a hint when a 401 came without a configured token.
// - call_json() is request_ok() for JSON answers: the parsed body, or null for an empty body (204).
// - read_text_file() reads a whole file; a file that cannot be read is a usage error (exit 64).
// Threads: as Context (one thread).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "commands.h"

namespace hsnsctl {

hsns::HttpResponse send_request(Context& ctx, std::string_view method, const std::string& target,
                                const std::string& body = "",
                                std::string_view content_type = "application/json");

CliError server_error(const Context& ctx, const hsns::HttpResponse& res);

hsns::HttpResponse request_ok(Context& ctx, std::string_view method, const std::string& target,
                              const std::string& body = "",
                              std::string_view content_type = "application/json");

// The JSON body of a 2xx answer; `what` names the request in the error when the body is not JSON.
nlohmann::json parse_json_answer(const hsns::HttpResponse& res, std::string_view what);

nlohmann::json call_json(Context& ctx, std::string_view method, const std::string& target,
                         const std::string& body = "");

std::string read_text_file(const std::string& path);

// A JSON number as text: integers as they are, other numbers with default stream precision; "" otherwise.
std::string number_text(const nlohmann::json& value);

}  // namespace hsnsctl
