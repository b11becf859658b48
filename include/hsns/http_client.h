// A small synchronous HTTP/1.1 client (Boost.Beast) for hsnsctl, the integration tests and the benchmarks.
//
// Contract:
// - An HttpClient talks to one server, named by a base URL "http://host[:port][/prefix]" or
//   "https://host[:port][/prefix]". Request targets ("/api/v1/hosts?x=y") are appended to the prefix.
// - It keeps one connection alive between requests (HTTP/1.1 keep-alive). When a reused connection turns
//   out to have been closed by the server before any byte of the response arrived (the idle-timeout
//   race), it reconnects and sends the request once more; every other failure is reported, never retried.
//   A response with "Connection: close" makes the next request open a new connection. When sending fails
//   the client still reads: a server that answers early and closes (413 for an oversized body) is seen
//   as that answer, not as a send error.
// - TLS ("https"): the peer certificate is verified against the CA file given in the options (or the
//   system trust store when none is given), SNI is sent, and the certificate must match the host name
//   or IP address of the URL (RFC 6125). The SSL context is built once per client.
// - Timeouts: Options::timeout bounds each request as a whole (resolve, connect, handshake, write and
//   read together); zero means no limit. A timed-out connection is closed and not retried.
// - Errors: construction with an unusable base URL or CA file throws std::invalid_argument (make()
//   returns it as a value instead). request() never throws for network failures: it returns an error
//   string "<METHOD> <url>: <what failed>: <reason>". HTTP error statuses (4xx/5xx) are not errors; they
//   come back as a Response.
// - Request bodies are never copied: a string_view body is sent from the caller's buffer, and a
//   HttpBodySource body (a file range, say) is read and sent piece by piece through one 64 KiB buffer, so a
//   25 MB report costs the client 64 KiB. A source is read from offset 0 again when the request is resent
//   (the reconnect above); a read error (or a source shorter than its size()) aborts the request and closes
//   the connection: the server never sees a whole body, so it never takes a partial one.
// - Threads: thread-compatible. One client must not be used by two threads at once; use one client per
//   thread. Distinct clients are independent. Movable, not copyable.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace hsns {

// Header fields in the order they arrived (requests: the order they are sent).
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;  // every response header field
  std::string body;

  // Convenience copies of the fields callers look at most ("" when absent).
  std::string content_type;
  std::string etag;
  std::string location;
  std::string www_authenticate;

  // The value of the first header field with this name (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const;
  // True for "application/problem+json" (parameters such as "; charset=utf-8" are ignored).
  bool is_problem() const;
  // True for any JSON media type ("application/json", "application/problem+json", "*/*+json").
  bool is_json() const;
};

struct HttpClientOptions {
  std::string bearer_token;  // sent as "Authorization: Bearer <token>" when not empty
  std::string ca_file;       // PEM bundle to verify the server against (https only); "" = system store
  std::chrono::milliseconds timeout{30000};
  std::string user_agent;  // "" = "hsns-http-client/<version>"
};

// A request body produced piece by piece (HttpClient::request): size() bytes, read on demand.
class HttpBodySource {
 public:
  virtual ~HttpBodySource() = default;
  virtual std::uint64_t size() const = 0;
  // Copies up to n bytes from `offset` into buf (offset < size()); returns how many (> 0), or an error.
  virtual tl::expected<std::size_t, std::string> read(std::uint64_t offset, char* buf,
                                                      std::size_t n) const = 0;
};

class HttpClient {
 public:
  using Options = HttpClientOptions;
  using Response = HttpResponse;

  // Throws std::invalid_argument when the URL is not an absolute http(s) URL with a host, or the CA
  // file cannot be loaded.
  explicit HttpClient(std::string_view base_url, Options options = {});
  HttpClient(std::string_view base_url, std::string bearer_token);
  static tl::expected<HttpClient, std::string> make(std::string_view base_url, Options options = {});

  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  ~HttpClient();

  // Sends one request and reads the whole response.
  // method: an HTTP method name ("GET", "PUT", ...). target: origin-form path plus optional query; it
  //   is sent as given (callers percent-encode; see encode_path_segment/encode_query_value).
  // body/content_type: Content-Type is sent only when content_type is not empty and either the body is
  //   not empty or the method is POST, PUT or PATCH.
  // headers: extra fields; they replace the client's defaults of the same name (Authorization,
  //   Content-Type, User-Agent, Host), so tests can send a wrong token or a wrong media type.
  tl::expected<Response, std::string> request(std::string_view method, std::string_view target,
                                              std::string_view body = "",
                                              std::string_view content_type = "application/json",
                                              const HttpHeaders& headers = {});
  // The same with a body read from `body` while it is sent (the source must outlive the call).
  tl::expected<Response, std::string> request(std::string_view method, std::string_view target,
                                              const HttpBodySource& body, std::string_view content_type,
                                              const HttpHeaders& headers = {});

  tl::expected<Response, std::string> get(std::string_view target, const HttpHeaders& headers = {}) {
    return request("GET", target, "", "", headers);
  }
  tl::expected<Response, std::string> post(std::string_view target, std::string_view json_body) {
    return request("POST", target, json_body);
  }
  tl::expected<Response, std::string> put(std::string_view target, std::string_view json_body) {
    return request("PUT", target, json_body);
  }
  tl::expected<Response, std::string> patch(std::string_view target, std::string_view json_body) {
    return request("PATCH", target, json_body);
  }
  tl::expected<Response, std::string> del(std::string_view target) {
    return request("DELETE", target, "", "");
  }

  // Replaces the bearer token for later requests ("" = send none).
  void set_bearer_token(std::string token);
  // Closes the kept-alive connection (the next request opens a new one).
  void close();
  // The base URL as given.
  const std::string& base_url() const;
  // Number of TCP connections opened so far (for tests of keep-alive and reconnect).
  std::size_t connections_opened() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes one path segment ("a/b" -> "a%2Fb") or one query value ("a&b=c" -> "a%26b%3Dc").
std::string encode_path_segment(std::string_view segment);
std::string encode_query_value(std::string_view value);

}  // namespace hsns
