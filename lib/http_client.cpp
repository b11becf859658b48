#include "hsns/http_client.h"

#include <openssl/ssl.h>
#include <strings.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/pchars.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "hsns/version.h"

namespace hsns {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr std::uint64_t kMaxResponseBody = 256ull * 1024 * 1024;
constexpr std::size_t kBodyChunk = 64 * 1024;

// A string_view body as a source (read straight from the caller's buffer).
class ViewSource final : public HttpBodySource {
 public:
  explicit ViewSource(std::string_view body) : body_(body) {}
  std::uint64_t size() const override { return body_.size(); }
  tl::expected<std::size_t, std::string> read(std::uint64_t offset, char* buf, std::size_t n) const override {
    const std::size_t k = std::min<std::size_t>(n, body_.size() - static_cast<std::size_t>(offset));
    std::memcpy(buf, body_.data() + offset, k);
    return k;
  }
  // The whole view as one buffer: nothing to copy.
  std::string_view view() const { return body_; }

 private:
  std::string_view body_;
};

// Beast body type whose writer reads an HttpBodySource chunk by chunk (a whole in-memory view goes out as
// one buffer, without a copy). Content-Length comes from size().
struct SourceBody {
  struct value_type {
    const HttpBodySource* source = nullptr;
    const ViewSource* view = nullptr;  // set when the source is an in-memory view
    std::string* error = nullptr;      // set to why the source failed
  };
  static std::uint64_t size(const value_type& v) { return v.source == nullptr ? 0 : v.source->size(); }

  class writer {
   public:
    using const_buffers_type = asio::const_buffer;
    template <bool isRequest, class Fields>
    writer(const http::header<isRequest, Fields>&, const value_type& v) : v_(v) {}
    void init(error_code& ec) {
      ec = {};
      pos_ = 0;
    }
    boost::optional<std::pair<const_buffers_type, bool>> get(error_code& ec) {
      ec = {};
      const std::uint64_t total = size(v_);
      if (pos_ >= total) return boost::none;
      if (v_.view != nullptr) {
        pos_ = total;
        return {{asio::const_buffer(v_.view->view().data(), v_.view->view().size()), false}};
      }
      if (chunk_.empty()) chunk_.resize(kBodyChunk);
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_.size(), total - pos_));
      auto n = v_.source->read(pos_, chunk_.data(), want);
      if (!n || *n == 0 || *n > want) {
        if (v_.error != nullptr)
          *v_.error = n ? "the body source gave " + std::to_string(*n) + " bytes" : n.error();
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        return boost::none;
      }
      pos_ += *n;
      return {{asio::const_buffer(chunk_.data(), *n), pos_ < total}};
    }

   private:
    const value_type& v_;
    std::uint64_t pos_ = 0;
    std::vector<char> chunk_;
  };
};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// The media type without parameters, trimmed.
std::string_view media_type(std::string_view content_type) {
  auto end = content_type.find(';');
  std::string_view type = content_type.substr(0, end);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  return type;
}

bool ends_with_icase(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return {};
}

bool HttpResponse::is_problem() const {
  return iequals(media_type(content_type), "application/problem+json");
}

bool HttpResponse::is_json() const {
  auto type = media_type(content_type);
  return iequals(type, "application/json") || ends_with_icase(type, "+json");
}

std::string encode_path_segment(std::string_view segment) {
  return boost::urls::encode(segment, boost::urls::unreserved_chars);
}

std::string encode_query_value(std::string_view value) {
  return boost::urls::encode(value, boost::urls::unreserved_chars);
}

struct HttpClient::Impl {
  Impl(std::string_view url, Options opts) : base_url(url), options(std::move(opts)) {
    auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed) {
      throw std::invalid_argument("invalid server URL '" + base_url + "': " + parsed.error().message());
    }
    const auto& u = *parsed;
    if (u.scheme_id() == boost::urls::scheme::https) {
      tls = true;
    } else if (u.scheme_id() != boost::urls::scheme::http) {
      throw std::invalid_argument("invalid server URL '" + base_url + "': scheme must be http or https");
    }
    if (u.has_userinfo() || u.has_query() || u.has_fragment()) {
      throw std::invalid_argument("invalid server URL '" + base_url +
                                  "': user info, query and fragment are not allowed");
    }
    host = u.host_address();
    if (host.empty()) throw std::invalid_argument("invalid server URL '" + base_url + "': no host");
    port = u.has_port() ? std::string(u.port()) : std::string(tls ? "443" : "80");
    if (port.empty()) throw std::invalid_argument("invalid server URL '" + base_url + "': empty port");
    host_header = u.encoded_host_and_port();
    origin = std::string(u.scheme()) + "://" + host_header;
    prefix = u.encoded_path();
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (options.user_agent.empty()) options.user_agent = std::string("hsns-http-client/") + kVersion;

    if (tls) {
      ssl_ctx.emplace(ssl::context::tls_client);
      ssl_ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      error_code ec;
      if (options.ca_file.empty()) {
        ssl_ctx->set_default_verify_paths(ec);
      } else {
        ssl_ctx->load_verify_file(options.ca_file, ec);
      }
      if (ec) {
        throw std::invalid_argument(
            "cannot load CA certificates" +
            (options.ca_file.empty() ? std::string() : " from '" + options.ca_file + "'") + ": " +
            ec.message());
      }
      ssl_ctx->set_verify_mode(ssl::verify_peer);
    }
  }

  // --- running one asynchronous operation against the request deadline ---

  // Runs the io_context until the started operation completed or the deadline passed. On timeout the
  // connection is torn down (which completes the operation with operation_aborted) and timed_out is
  // returned.
  error_code wait(const std::optional<error_code>& result) {
    ioc.restart();
    while (!result && ioc.run_one_until(deadline) > 0) {
    }
    if (result) return *result;
    // Close first and let the aborted operations finish before the stream objects are destroyed: a
    // composed operation (TLS, HTTP read) still refers to its stream while it completes.
    resolver.cancel();
    error_code ignored;
    if (tls_stream) tls_stream->lowest_layer().close(ignored);
    if (socket) socket->close(ignored);
    ioc.restart();
    ioc.run();
    drop_connection();
    return asio::error::timed_out;
  }

  // The reason of a failed step; timeouts name the limit.
  std::string why(const error_code& ec) const {
    if (ec == asio::error::timed_out) {
      return "timed out after " + std::to_string(options.timeout.count()) + " ms";
    }
    return ec.message();
  }

  void drop_connection() {
    error_code ignored;
    if (tls_stream) {
      tls_stream->lowest_layer().close(ignored);
      tls_stream.reset();
    }
    if (socket) {
      socket->close(ignored);
      socket.reset();
    }
    buffer.clear();
    connected = false;
  }

  tcp::socket& lowest_layer() { return tls ? tls_stream->next_layer() : *socket; }

  // Opens a new connection (TCP, then TLS when configured). Returns "" or "<step>: <reason>".
  std::string connect() {
    drop_connection();
    std::optional<error_code> result;
    if (endpoints.empty()) {
      resolver.async_resolve(host, port, [this, &result](error_code ec, tcp::resolver::results_type r) {
        if (!ec) endpoints = std::move(r);
        result = ec;
      });
      if (auto ec = wait(result)) return "resolve " + host + ": " + why(ec);
    }
    if (tls) {
      tls_stream.emplace(ioc, *ssl_ctx);
    } else {
      socket.emplace(ioc);
    }
    result.reset();
    asio::async_connect(lowest_layer(), endpoints,
                        [&result](error_code ec, const tcp::endpoint&) { result = ec; });
    if (auto ec = wait(result)) {
      endpoints = {};  // resolve again next time: the address may have changed
      drop_connection();
      return "connect: " + why(ec);
    }
    error_code ignored;
    lowest_layer().set_option(tcp::no_delay(true), ignored);
    ++connections_opened;
    if (tls) {
      // SNI only for names, never for IP literals (RFC 6066 section 3).
      error_code addr_ec;
      asio::ip::make_address(host, addr_ec);
      if (addr_ec && !SSL_set_tlsext_host_name(tls_stream->native_handle(), host.c_str())) {
        drop_connection();
        return "TLS: cannot set SNI host name";
      }
      tls_stream->set_verify_mode(ssl::verify_peer);
      tls_stream->set_verify_callback(ssl::host_name_verification(host));
      result.reset();
      tls_stream->async_handshake(ssl::stream_base::client, [&result](error_code ec) { result = ec; });
      if (auto ec = wait(result)) {
        drop_connection();
        return "TLS handshake: " + why(ec);
      }
    }
    connected = true;
    return {};
  }

  template <class Stream>
  error_code write_request(Stream& stream, http::request<SourceBody>& req) {
    std::optional<error_code> result;
    http::async_write(stream, req, [&result](error_code ec, std::size_t) { result = ec; });
    return wait(result);
  }

  template <class Stream>
  error_code read_response(Stream& stream, http::response_parser<http::string_body>& parser) {
    std::optional<error_code> result;
    http::async_read(stream, buffer, parser, [&result](error_code ec, std::size_t) { result = ec; });
    return wait(result);
  }

  enum class Outcome { ok, retryable, failed };

  // One attempt on the current connection. On failure sets `error` to "<step>: <reason>".
  Outcome attempt(http::request<SourceBody>& req, Response& out, std::string& error) {
    if (req.body().error != nullptr) req.body().error->clear();
    error_code write_ec = tls ? write_request(*tls_stream, req) : write_request(*socket, req);
    if (req.body().error != nullptr && !req.body().error->empty()) {
      // The body is cut short: the server waits for the rest and never answers. Close, do not retry.
      error = "read the request body: " + *req.body().error;
      drop_connection();
      return Outcome::failed;
    }
    if (write_ec == asio::error::timed_out) {
      error = "send request: " + why(write_ec);
      return Outcome::failed;  // wait() already closed the connection
    }
    // Read even when sending failed: a server may answer early (413 for a body over its limit) and close
    // the connection before it has read the whole request.
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBody);
    if (req.method() == http::verb::head) parser.skip(true);
    error_code ec = tls ? read_response(*tls_stream, parser) : read_response(*socket, parser);
    if (ec) {
      error = write_ec ? "send request: " + why(write_ec) : "read response: " + why(ec);
      bool nothing_received = !parser.got_some() && buffer.size() == 0;
      drop_connection();
      return nothing_received && ec != asio::error::timed_out ? Outcome::retryable : Outcome::failed;
    }
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    out.headers.clear();
    for (const auto& field : res) {
      out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    out.content_type = std::string(res[http::field::content_type]);
    out.etag = std::string(res[http::field::etag]);
    out.location = std::string(res[http::field::location]);
    out.www_authenticate = std::string(res[http::field::www_authenticate]);
    out.body = std::move(res.body());
    if (write_ec || !res.keep_alive()) drop_connection();
    return Outcome::ok;
  }

  tl::expected<Response, std::string> perform(std::string_view method, std::string_view target,
                                              const HttpBodySource& body, std::string_view content_type,
                                              const HttpHeaders& headers) {
    deadline =
        std::chrono::steady_clock::now() +
        (options.timeout.count() > 0 ? std::chrono::steady_clock::duration(options.timeout)
                                     : std::chrono::steady_clock::duration(std::chrono::hours(24 * 365)));
    std::string full_target = prefix;
    if (target.empty() || target.front() != '/') full_target += '/';
    full_target += target;
    auto fail = [&](std::string_view what) {
      return tl::unexpected(std::string(method) + " " + origin + full_target + ": " + std::string(what));
    };
    if (method.empty()) return fail("empty method");

    http::request<SourceBody> req;
    http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) {
      req.method_string(method);
    } else {
      req.method(verb);
    }
    req.target(full_target);
    req.version(11);
    req.set(http::field::host, host_header);
    req.set(http::field::user_agent, options.user_agent);
    if (!options.bearer_token.empty()) req.set(http::field::authorization, "Bearer " + options.bearer_token);
    bool sends_body =
        body.size() > 0 || verb == http::verb::post || verb == http::verb::put || verb == http::verb::patch;
    if (!content_type.empty() && sends_body) req.set(http::field::content_type, content_type);
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body().source = &body;
    req.body().view = dynamic_cast<const ViewSource*>(&body);
    std::string source_error;
    req.body().error = &source_error;
    req.prepare_payload();

    Response out;
    std::string error;
    for (int round = 0; round < 2; ++round) {
      bool reused = connected;
      if (!connected) {
        if (auto err = connect(); !err.empty()) return fail(err);
      }
      switch (attempt(req, out, error)) {
        case Outcome::ok:
          return out;
        case Outcome::failed:
          return fail(error);
        case Outcome::retryable:
          if (!reused) return fail(error);
          break;  // the server closed an idle connection: reconnect once
      }
    }
    return fail(error);
  }

  std::string base_url;
  Options options;
  bool tls = false;
  std::string host;         // name or IP address without brackets, for resolving, SNI and verification
  std::string port;         // service for the resolver
  std::string host_header;  // "host[:port]" as written in the URL
  std::string origin;       // "scheme://host[:port]", for messages
  std::string prefix;       // path of the base URL without trailing '/'

  asio::io_context ioc{1};
  std::optional<ssl::context> ssl_ctx;
  tcp::resolver resolver{ioc};
  tcp::resolver::results_type endpoints;
  std::optional<tcp::socket> socket;
  std::optional<ssl::stream<tcp::socket>> tls_stream;
  boost::beast::flat_buffer buffer;
  bool connected = false;
  std::size_t connections_opened = 0;
  std::chrono::steady_clock::time_point deadline;
};

HttpClient::HttpClient(std::string_view base_url, Options options)
    : impl_(std::make_unique<Impl>(base_url, std::move(options))) {}

HttpClient::HttpClient(std::string_view base_url, std::string bearer_token)
    : HttpClient(base_url, Options{std::move(bearer_token), "", std::chrono::milliseconds(30000), ""}) {}

tl::expected<HttpClient, std::string> HttpClient::make(std::string_view base_url, Options options) {
  try {
    return HttpClient(base_url, std::move(options));
  } catch (const std::exception& e) {
    return tl::unexpected(std::string(e.what()));
  }
}

HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;
HttpClient::~HttpClient() = default;

tl::expected<HttpClient::Response, std::string> HttpClient::request(std::string_view method,
                                                                    std::string_view target,
                                                                    std::string_view body,
                                                                    std::string_view content_type,
                                                                    const HttpHeaders& headers) {
  const ViewSource view(body);
  return impl_->perform(method, target, view, content_type, headers);
}

tl::expected<HttpClient::Response, std::string> HttpClient::request(std::string_view method,
                                                                    std::string_view target,
                                                                    const HttpBodySource& body,
                                                                    std::string_view content_type,
                                                                    const HttpHeaders& headers) {
  return impl_->perform(method, target, body, content_type, headers);
}

void HttpClient::set_bearer_token(std::string token) {
  impl_->options.bearer_token = std::move(token);
}

void HttpClient::close() {
  impl_->drop_connection();
}

const std::string& HttpClient::base_url() const {
  return impl_->base_url;
}

std::size_t HttpClient::connections_opened() const {
  return impl_->connections_opened;
}

}  // namespace hsns
