// The aggregator's HTTP/1.1 server on Boost.Beast: plain TCP or TLS, many connections, N threads.
//
// Contract:
// - One io_context run by any number of threads; each connection runs on its own strand, so a session's
//   handlers never run concurrently. The request handler is called on that strand and may block briefly
//   (store calls); it must be thread-safe across connections.
// - Limits per connection: header size, body size (413 problem, then close), idle timeout while waiting
//   for the next request's header, read timeout for a body once the header arrived, and a bounded
//   number of pipelined requests whose responses are queued (reading pauses while the queue is full).
// - shutdown(): stops accepting, lets every connection finish the request it is handling and write its
//   queued responses, then closes it; idle connections close at once. `on_drained` runs once the last
//   connection is gone. Safe to call from any thread, once.
// - Errors on a connection (reset, timeout, TLS failure) close that connection only and are counted.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "http/router.h"

namespace hsns::http {

struct ServerLimits {
  std::size_t header_limit = 16 * 1024;
  std::size_t body_limit = 1024 * 1024;
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds read_timeout{30'000};
  std::size_t pipeline_limit = 8;
};

// Called for every complete request; returns the response to send.
using RequestHandler = std::function<Response(Request&&)>;
// Called for a request rejected by the transport (413, 431, 408); for metrics.
using RejectObserver = std::function<void(int status)>;

class HttpServer {
 public:
  // ssl may be null for plain HTTP; when set it must outlive the server.
  HttpServer(boost::asio::io_context& ioc, boost::asio::ssl::context* ssl, ServerLimits limits,
             RequestHandler handler, RejectObserver on_reject = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; throws boost::system::system_error when the address can't be bound.
  void listen(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void start();
  void shutdown(std::function<void()> on_drained);
  std::size_t open_connections() const;

  // State shared by the server and its sessions; sessions may outlive the server object while the
  // io_context still holds their handlers, so they keep this alive rather than pointing at the server.
  struct Shared;

 private:
  void do_accept();

  boost::asio::io_context& ioc_;
  boost::asio::ssl::context* ssl_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace hsns::http
