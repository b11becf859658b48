// Request routing for the aggregator's REST API.
//
// Contract:
// - Routes are registered at start-up (not thread-safe then); match() is const and thread-safe after.
// - A pattern is a path of literal segments and "{name}" parameters, e.g. "/api/v1/ports/{port_id}".
//   A parameter matches exactly one non-empty segment; percent-decoding is applied to parameters.
// - Each route names the permissions that may call it (any one suffices; none = public) and carries its
//   pattern as the low-cardinality "route" label for metrics.
// - match() tells apart "no such path" (404) from "path exists, method not allowed" (405 + Allow).
// - A route's cost class says where it runs: light handlers (store reads and writes, bounded and brief)
//   run on the connection's I/O strand; heavy ones (topology import and generation, search, schedule,
//   exports: up to seconds of CPU) run on a bounded worker pool so they cannot starve other clients.
// - A WebSocket endpoint (add_websocket) is a GET route whose on_open starts a session once the upgrade
//   succeeded (http/websocket.h); it is authorised like any route. A plain GET to it answers 426.
#pragma once

#include <boost/beast/http.hpp>
#include <boost/url/url_view.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hsns/problem.h"
#include "http/response_body.h"

namespace hsns::http {

namespace bhttp = boost::beast::http;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<ResponseBody>;  // owned text or shared bytes: http/response_body.h

// What a caller may do; roles map to sets of these (see auth.h).
enum class Permission : std::uint8_t {
  read = 1 << 0,
  manage_network = 1 << 1,
  schedule = 1 << 2,
  agent_report = 1 << 3,
};
using PermissionSet = std::uint8_t;
constexpr PermissionSet kPublic = 0;
constexpr PermissionSet operator|(Permission a, Permission b) {
  return static_cast<PermissionSet>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr PermissionSet permits(Permission p) {
  return static_cast<PermissionSet>(p);
}

// The request as a handler sees it.
struct RequestContext {
  const Request& request;
  boost::urls::url_view url;                                     // the parsed request target
  std::vector<std::pair<std::string, std::string>> path_params;  // decoded
  std::string principal;                                         // token name; "" when auth is off
  std::string bound_host;  // the host the caller's agent token is bound to (auth.h); "" when unbound
  std::string peer;        // the client's IP address as the transport saw it; "" when unknown

  std::string_view path_param(std::string_view name) const;
  // Decoded query parameter, nullopt when absent.
  std::optional<std::string> query(std::string_view name) const;
};

using Handler = std::function<Response(RequestContext&)>;
// Delivers a request's response to its connection; callable from any thread, exactly once.
using Respond = std::function<void(Response)>;

enum class Cost : std::uint8_t { light, heavy };

class WebSocketChannel;
// Starts a WebSocket endpoint on a freshly opened session (subscribe it to topics, set its message
// handler); runs on the session's strand. The context's request is the upgrade request.
using WebSocketOpen = std::function<void(const RequestContext&, const std::shared_ptr<WebSocketChannel>&)>;

struct Route {
  bhttp::verb method;
  std::string pattern;
  PermissionSet permissions;
  Handler handler;
  Cost cost = Cost::light;
  WebSocketOpen on_open;  // set for WebSocket endpoints (then handler is empty)
};

class Router {
 public:
  void add(bhttp::verb method, std::string pattern, PermissionSet permissions, Handler handler,
           Cost cost = Cost::light);
  // A WebSocket endpoint at GET pattern.
  void add_websocket(std::string pattern, PermissionSet permissions, WebSocketOpen on_open);

  struct Match {
    const Route* route = nullptr;                                  // set when path and method match
    std::vector<std::pair<std::string, std::string>> path_params;  // for route
    std::string allow;  // when the path matched under other methods only: "GET, DELETE"
  };
  Match match(bhttp::verb method, std::string_view encoded_path) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

// Response builders shared by every handler. keep_alive and version follow the request.
Response json_response(const Request& req, bhttp::status status, const std::string& body);
Response problem_response(const Request& req, const Problem& problem);
Response empty_response(const Request& req, bhttp::status status);
// A response to HEAD keeps the headers of the answer, Content-Length included, and loses its body (RFC 9110
// section 9.3.2); a client reads no body after it, so a body sent anyway would be read as the next response.
// Every response path of the server and the service ends here.
void omit_body_for_head(bhttp::verb method, Response& res);

}  // namespace hsns::http
