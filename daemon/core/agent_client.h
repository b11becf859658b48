// hsnsd's side of the aggregator API: registration, desired state with ETag, status reports.
//
// Contract:
// - Every call is one synchronous HTTP request bounded by the configured timeout and never throws. A
//   failure comes back as an AgentError whose kind says what went wrong and, for an unexpected answer, the
//   HTTP status; callers branch on kind and status, the message is for the log only:
//     transport    no answer: connect, TLS or the connection failed before a response (status 0)
//     timeout      no answer within the request timeout (status 0)
//     http_status  the aggregator answered with a status the call does not accept (status set; the
//                  message quotes the start of the body)
//     malformed    a 200 whose desired-state document does not parse (status 200)
//   A timeout is told from other transport failures by the time the request took (the HTTP client
//   bounds the request as a whole), not by its error text.
// - fetch_desired() sends If-None-Match with the last ETag; 304 yields `unchanged`. A host the aggregator
//   does not know answers http_status 404 (the daemon registers again).
// - post_report() sends one telemetry report batch (CBOR, application/vnd.hsns.report.v1+cbor) and returns
//   the seq the aggregator acknowledged ({"acked_seq": N}); any status but 200 is http_status, a 200
//   without a readable acked_seq is malformed. The body is a view or an HttpBodySource (a spool record
//   read from its segment file while it is sent): never copied.
// - The bearer token is read from token_file at construction and on reload (make() again).
// - Thread-compatible; owned by the agent link.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "config.h"
#include "desired_state.h"
#include "hsns/http_client.h"

namespace hsns::daemon {

struct AgentError {
  enum class Kind { transport, timeout, http_status, malformed };
  Kind kind = Kind::transport;
  int status = 0;  // the HTTP status for http_status and malformed, else 0
  std::string message;

  bool is_status(int s) const { return kind == Kind::http_status && status == s; }
};

std::string_view kind_name(AgentError::Kind kind);
// "<kind>[ <status>]: <message>" for the log.
std::string describe(const AgentError& error);

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
  tl::expected<void, AgentError> register_host(const std::string& body);
  tl::expected<Fetched, AgentError> fetch_desired(const std::string& etag);
  tl::expected<void, AgentError> put_status(const std::string& body);
  tl::expected<std::uint64_t, AgentError> post_report(std::string_view cbor_body);
  tl::expected<std::uint64_t, AgentError> post_report(const HttpBodySource& cbor_body);

 private:
  AgentClient(HttpClient client, std::string host, std::chrono::milliseconds timeout)
      : client_(std::move(client)), host_(std::move(host)), timeout_(timeout) {}
  // One request; a failure without a response becomes transport or timeout.
  tl::expected<HttpResponse, AgentError> send(std::string_view method, const std::string& target,
                                              std::string_view body, const HttpHeaders& headers = {},
                                              std::string_view content_type = "application/json");
  tl::expected<HttpResponse, AgentError> send(std::string_view method, const std::string& target,
                                              const HttpBodySource& body, std::string_view content_type);
  tl::expected<std::uint64_t, AgentError> acked_seq(tl::expected<HttpResponse, AgentError> r);

  HttpClient client_;
  std::string host_;
  std::chrono::milliseconds timeout_;
};

tl::expected<std::string, std::string> read_token_file(const std::string& path);

}  // namespace hsns::daemon
