// The aggregator's HTTP/1.1 server on Boost.Beast: plain TCP or TLS, many connections, N threads.
//
// Contract:
// - One io_context run by any number of threads; each connection runs on its own strand, so a session's
//   handlers never run concurrently. The request handler is called on that strand and may block briefly
//   (store calls); it must be thread-safe across connections.
// - Limits per connection: header size (431), body size (413; per path prefix where ServerLimits says so,
//   known from the header before any body byte is read), idle timeout while waiting for the next
//   request (silent close), read timeout for the rest of a request once its first byte arrived (408, then
//   close), and a bounded number of pipelined requests whose responses are queued (reading pauses while
//   the queue is full). Every problem the transport answers closes the connection afterwards.
// - Memory: with a memory_budget, a request's body and what its handler decodes from it
//   (request_memory_cost, hsns/memory_budget.h) are reserved once the header is read (the announced
//   Content-Length, or the path's body limit for a chunked body) and held until its response is handed
//   over; a request that does not fit gets 503 with Retry-After: 1 before its body is read.
// - Framing (http/framing.h) is checked once a header is complete and before its body is read: an
//   ambiguous request (Transfer-Encoding not exactly a final chunked, Content-Length with it, duplicate
//   Host/Authorization/Content-Length/Content-Type, no Host in HTTP/1.1) gets 400/501 and the connection
//   closes without reading on, so a body can never be read as a second request.
// - The handler is asynchronous: it gets the request and a respond callback it calls exactly once, from
//   any thread (a long handler runs elsewhere and leaves the I/O threads free). One request per
//   connection is handled at a time; responses go out in request order.
// - Connections are capped at max_connections, lowered at listen() to what RLIMIT_NOFILE allows after a
//   reserve for the store and logs. A connection beyond the cap closes the oldest idle connection (one
//   waiting for its next request) in its favour, or, when none is idle, gets 503 and is closed. Accept
//   errors from descriptor exhaustion (EMFILE, ENFILE, ENOBUFS, ENOMEM) back off (10 ms doubling to 1 s)
//   instead of spinning.
// - shutdown(): stops accepting, lets every connection finish the request it is handling and write its
//   queued responses, then closes it; idle connections close at once. `on_drained` runs once the last
//   connection is gone. Safe to call from any thread, once.
// - Errors on a connection (reset, timeout, TLS failure) close that connection only and are counted.
// - WebSocket (http/websocket.h): a request that asks for an upgrade (GET, Connection: Upgrade, Upgrade:
//   websocket) is checked first against the Origin rule (403, no upgrade), then given to the upgrade
//   handler, which answers a refusal (sent like any response) or the endpoint to start. Once the
//   responses before it are written, the connection's stream (TCP or TLS) becomes a WebSocket session:
//   it counts against max_connections like an HTTP connection (it is never closed as idle for a
//   newcomer) and closes with 1001 on shutdown(). Without an upgrade handler upgrade requests are
//   ordinary requests.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hsns/memory_budget.h"
#include "http/router.h"
#include "http/websocket.h"

namespace hsns::http {

// The body limit of the requests whose path is `prefix` or lies below it ("/api/v1/topology" covers
// "/api/v1/topology/devices", not "/api/v1/topologyx"); a "*" segment matches any one segment
// ("/api/v1/agents/*/reports").
struct PathBodyLimit {
  std::string prefix;
  std::size_t limit = 0;
};

struct ServerLimits {
  std::size_t header_limit = std::size_t{16} * 1024;
  std::size_t body_limit = std::size_t{1024} * 1024;  // every path without its own limit
  std::vector<PathBodyLimit> path_body_limits;        // the longest matching prefix wins
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds read_timeout{30'000};
  std::size_t pipeline_limit = 8;
  std::size_t max_connections = 4096;
  WebSocketLimits websocket;
  // Request bodies and what is decoded from them draw on this budget (hsns/memory_budget.h): a request
  // whose cost does not fit gets 503 with Retry-After before its body is read. Null: no budget.
  std::shared_ptr<MemoryBudget> memory_budget;

  // The body limit of a request target (path and query).
  std::size_t body_limit_for(std::string_view target) const;
  // The largest limit of any path (the parser's limit until the path is known).
  std::size_t largest_body_limit() const;
};

// Who sent a request, as the transport saw it.
struct Peer {
  std::string address;  // the client's IP address ("127.0.0.1", "::1"); "" when it could not be read
};

// Called for every complete request, on the connection's strand; `respond` (router.h) must be called
// exactly once, from any thread.
using RequestHandler = std::function<void(Request&&, const Peer&, Respond respond)>;

// What the transport did on its own, for metrics. Every member may be empty; each is called from I/O
// threads and must be thread-safe. Arguments are fixed, low-cardinality words.
struct ServerObserver {
  std::function<void(int status)> rejected;  // refused before routing (400, 403 Origin, 408, 413, 431, 501)
  std::function<void(const char* action)>
      connection_shed;                                  // "closed_idle" or "refused" at the connection cap
  std::function<void(const char* error)> accept_error;  // "descriptors", "memory" or "other"
  std::function<void()> websocket_opened;               // a WebSocket handshake succeeded
  std::function<void(const char* reason)> websocket_closed;  // an opened session ended (close_reason::*)
  std::function<void()> websocket_message_sent;              // one message written to a session's socket
};

// Starts a WebSocket endpoint once the handshake succeeded: the upgrade request and the open session.
// Runs on the session's strand.
using WebSocketStart = std::function<void(const Request&, const std::shared_ptr<WebSocketChannel>&)>;
// Decides an upgrade request that passed the Origin check, on the connection's strand (briefly): the
// response refusing it (401, 403, 404, 400...) or the endpoint to start.
using UpgradeDecision = std::variant<Response, WebSocketStart>;
using UpgradeHandler = std::function<UpgradeDecision(const Request&, const Peer&)>;

class HttpServer {
 public:
  // ssl may be null for plain HTTP; when set it must outlive the server.
  HttpServer(boost::asio::io_context& ioc, boost::asio::ssl::context* ssl, ServerLimits limits,
             RequestHandler handler, ServerObserver observer = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; throws boost::system::system_error when the address can't be bound.
  void listen(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  // Before start(): enables WebSocket upgrades.
  void set_upgrade_handler(UpgradeHandler upgrade);
  void start();
  void shutdown(std::function<void()> on_drained);
  std::size_t open_connections() const;
  // The connection cap in force (after listen(): the configured one lowered to fit RLIMIT_NOFILE).
  std::size_t max_connections() const;

  // State shared by the server and its sessions; sessions may outlive the server object while the
  // io_context still holds their handlers, so they keep this alive rather than pointing at the server.
  struct Shared;

 private:
  void do_accept();
  void on_accept_error(const boost::system::error_code& ec);
  void admit(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  boost::asio::ssl::context* ssl_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_backoff_;
  std::chrono::milliseconds backoff_{0};
  std::shared_ptr<Shared> shared_;
};

}  // namespace hsns::http
