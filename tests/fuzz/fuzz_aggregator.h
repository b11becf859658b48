// The real aggregator in-process, for the fuzzers that drive requests through it (fuzz_api_routes,
// fuzz_http_session): the SQLite stores on a fresh temporary database, the request pipeline
// (AggregatorService) with every route set main.cpp registers, and, on demand, the HTTP server on
// loopback in front of it.
//
// Contract:
// - One instance per process, made on first use and never destroyed (libFuzzer ends the process with
//   exit(); the temporary directory is removed by an atexit handler). The database lives in /dev/shm when
//   it is writable (a write's fsync is then cheap), /tmp otherwise.
// - Authentication is off (the aggregator's insecure mode), so every route's handler is reachable; two
//   heavy workers, as the aggregator's default.
// - handle() runs one request through AggregatorService::handle and waits for its response (heavy routes
//   answer from a worker thread); a response that does not come within 30 s is __builtin_trap().
// - server() starts the HttpServer on 127.0.0.1 (port of the kernel's choosing) with one I/O thread and
//   short timeouts (ServerLimits below), the same request handler as the aggregator's main.
// - The checks every fuzzer applies to a response: check_response() traps on a 5xx other than 503 (a
//   handler exception or a store failure: a bug), on a problem document that is not JSON or whose
//   "status" differs from the response's, and on a 2xx JSON body that does not parse (unless the response
//   answers a HEAD request, which has no body).
#pragma once

#include <cstdint>

#include "http/router.h"
#include "http/server.h"
#include "http/service.h"

namespace hsns::fuzz {

inline void require(bool ok) {
  if (!ok) __builtin_trap();
}

// The server's limits in the fuzzers: the aggregator's defaults, with timeouts short enough that a
// stalled request ends well within libFuzzer's -timeout.
http::ServerLimits fuzz_server_limits();

class FuzzAggregator {
 public:
  static FuzzAggregator& instance();

  AggregatorService& service();
  http::Response handle(http::Request request);
  // The server, listening and started on first call.
  http::HttpServer& server();
  std::uint16_t port();

  FuzzAggregator(const FuzzAggregator&) = delete;
  FuzzAggregator& operator=(const FuzzAggregator&) = delete;

 private:
  FuzzAggregator();
  struct State;
  State* state_;  // never freed: lives until exit
};

// A response the service built, and one a client parsed off the wire (fuzz_http_session).
void check_response(const http::Response& response, bool head = false);
void check_response(const http::bhttp::response<http::bhttp::string_body>& response, bool head = false);

}  // namespace hsns::fuzz
