// libFuzzer target over the aggregator's route handlers with their request readers, in-process: the
// real AggregatorService and every route set over a temporary SQLite store (fuzz_aggregator.h), without
// the socket (fuzz_http_session drives the same service through the server). This is where the readers
// that live inside the handlers are fuzzed: topology LLDP observations, device PATCH, generate, import
// (JSON and YAML by media type), search and schedule bodies, the agent status report, host registration,
// subnets, ports, list filters and pagination, path parameters.
//
// Input layout: the first byte selects the route (modulo the table below, so the seeds can use the
// letters 'a'.. in table order); then "<line>\n<body>": for a route with a {parameter} the line is its
// value (percent-encoded into the target, so any byte reaches the handler decoded), for a route without
// one it is the query string (characters outside the query's allowed set percent-encoded); no newline
// leaves the body empty.
//
// Invariants (fuzz_aggregator.h, check_response): no 5xx but 503, problem documents are JSON with the
// response's status, 2xx JSON bodies parse. The sanitizers catch the rest. The store persists across
// inputs (as a server's does); a finding is reproduced by running its input on a fresh store, and when it
// depends on what came before, by running the corpus directory in order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_aggregator.h"

namespace {

namespace bhttp = boost::beast::http;

struct RouteCase {
  bhttp::verb method;
  std::string_view before;  // target up to the parameter (or the whole path)
  std::string_view after;   // target after the parameter
  bool has_param;
  std::string_view content_type;  // "" sends no body
};

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kYaml = "application/yaml";

// Letters 'a'.. in this order.
constexpr RouteCase kRoutes[] = {
    {bhttp::verb::post, "/api/v1/topology/search", "", false, kJson},    // a
    {bhttp::verb::post, "/api/v1/schedule", "", false, kJson},           // b
    {bhttp::verb::post, "/api/v1/topology/lldp", "", false, kJson},      // c
    {bhttp::verb::patch, "/api/v1/topology/devices/", "", true, kJson},  // d
    {bhttp::verb::post, "/api/v1/topology/generate", "", false, kJson},  // e
    {bhttp::verb::put, "/api/v1/topology", "", false, kJson},            // f
    {bhttp::verb::put, "/api/v1/topology", "", false, kYaml},            // g
    {bhttp::verb::put, "/api/v1/agents/", "/status", true, kJson},       // h
    {bhttp::verb::put, "/api/v1/hosts/", "", true, kJson},               // i
    {bhttp::verb::post, "/api/v1/subnets", "", false, kJson},            // j
    {bhttp::verb::patch, "/api/v1/subnets/", "", true, kJson},           // k
    {bhttp::verb::post, "/api/v1/ports", "", false, kJson},              // l
    {bhttp::verb::get, "/api/v1/ports", "", false, ""},                  // m (query)
    {bhttp::verb::get, "/api/v1/subnets", "", false, ""},                // n (query)
    {bhttp::verb::get, "/api/v1/reachability", "", false, ""},           // o (query)
    {bhttp::verb::get, "/api/v1/topology/export", "", false, ""},        // p (query)
    {bhttp::verb::get, "/api/v1/agents/", "/desired", true, ""},         // q
    {bhttp::verb::delete_, "/api/v1/jobs/", "", true, ""},               // r
    {bhttp::verb::delete_, "/api/v1/ports/", "", true, ""},              // s
    {bhttp::verb::get, "/api/v1/jobs", "", false, ""},                   // t (query)
    {bhttp::verb::get, "/api/v1/topology/lldp", "", false, ""},          // u
};
constexpr std::size_t kRouteCount = sizeof kRoutes / sizeof kRoutes[0];

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// Percent-encodes every byte outside the unreserved set and `keep`.
std::string encode(std::string_view text, std::string_view keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || keep.find(ch) != std::string_view::npos) {
      out.push_back(ch);
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const RouteCase& route = kRoutes[static_cast<std::uint8_t>(data[0] - 'a') % kRouteCount];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto newline = rest.find('\n');
  const std::string_view line = rest.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);

  std::string target(route.before);
  if (route.has_param) {
    target += encode(line, "");
    target += route.after;
  } else if (!line.empty()) {
    target += '?' + encode(line, "&=");
  }
  hsns::http::Request request{route.method, target, 11};
  request.set(bhttp::field::host, "fuzz");
  if (!route.content_type.empty()) {
    request.set(bhttp::field::content_type, route.content_type);
    request.body() = std::string(body);
    request.prepare_payload();
  }
  hsns::fuzz::check_response(hsns::fuzz::FuzzAggregator::instance().handle(std::move(request)));
  return 0;
}
