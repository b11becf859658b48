// hsnsd's side of the aggregator API: registration, desired state with ETag, status reports.
//
// Contract:
// - Every call is one synchronous HTTP request bounded by the configured timeout; failures (network,
//   unexpected status, malformed body) come back as error strings and never throw.
// - fetch_desired() sends If-None-Match with the last ETag; 304 yields `unchanged`.
// - The bearer token is read from token_file at construction and on reload (make() again).
// - Thread-compatible; owned by the main loop.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "config.h"
#include "desired_state.h"
#include "hsns/http_client.h"

namespace hsns::daemon {

struct Fetched {
  bool unchanged = false;
  std::string etag;
  std::string body;
  DesiredState state;
};

class AgentClient {
 public:
  static tl::expected<std::unique_ptr<AgentClient>, std::string> make(const DaemonConfig& config,
                                                                      const std::string& host);
  tl::expected<void, std::string> register_host(const std::string& body);
  // not_registered is reported as an error starting with "404".
  tl::expected<Fetched, std::string> fetch_desired(const std::string& etag);
  tl::expected<void, std::string> put_status(const std::string& body);

 private:
  AgentClient(HttpClient client, std::string host) : client_(std::move(client)), host_(std::move(host)) {}
  HttpClient client_;
  std::string host_;
};

tl::expected<std::string, std::string> read_token_file(const std::string& path);

}  // namespace hsns::daemon
