#include "agent_client.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hsns/proto/codec.h"

namespace hsns::daemon {
namespace {

AgentError unexpected_status(const std::string& what, const HttpResponse& r) {
  return {AgentError::Kind::http_status, r.status,
          what + std::to_string(r.status) + ": " + r.body.substr(0, 300)};
}

}  // namespace

std::string_view kind_name(AgentError::Kind kind) {
  switch (kind) {
    case AgentError::Kind::transport:
      return "transport";
    case AgentError::Kind::timeout:
      return "timeout";
    case AgentError::Kind::http_status:
      return "http status";
    case AgentError::Kind::malformed:
      return "malformed answer";
  }
  return "transport";
}

std::string describe(const AgentError& error) {
  // http_status messages already quote the status ("registration answered 503: ...").
  if (error.kind == AgentError::Kind::http_status) return error.message;
  return std::string(kind_name(error.kind)) + ": " + error.message;
}

tl::expected<std::string, std::string> read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return tl::unexpected("cannot read token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return tl::unexpected("token file " + path + " is empty");
  return t;
}

tl::expected<std::unique_ptr<AgentClient>, std::string> AgentClient::make(const DaemonConfig& config,
                                                                          const std::string& host) {
  HttpClientOptions options;
  options.timeout = config.request_timeout;
  options.ca_file = config.ca_file;
  options.user_agent = "hsnsd";
  if (!config.token_file.empty()) {
    auto token = read_token_file(config.token_file);
    if (!token) return tl::unexpected(token.error());
    options.bearer_token = *token;
  }
  auto client = HttpClient::make(config.aggregator_url, options);
  if (!client) return tl::unexpected(client.error());
  return std::unique_ptr<AgentClient>(new AgentClient(std::move(*client), host, config.request_timeout));
}

tl::expected<HttpResponse, AgentError> AgentClient::send(std::string_view method, const std::string& target,
                                                         std::string_view body, const HttpHeaders& headers,
                                                         std::string_view content_type) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client_.request(method, target, body, body.empty() ? "" : content_type, headers);
  if (r) return std::move(*r);
  // The client's deadline covers the whole request, so a failure at (or past) it is the timeout.
  const bool timed_out = timeout_.count() > 0 && std::chrono::steady_clock::now() - t0 >= timeout_;
  return tl::unexpected(
      AgentError{timed_out ? AgentError::Kind::timeout : AgentError::Kind::transport, 0, r.error()});
}

tl::expected<HttpResponse, AgentError> AgentClient::send(std::string_view method, const std::string& target,
                                                         const HttpBodySource& body,
                                                         std::string_view content_type) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client_.request(method, target, body, content_type);
  if (r) return std::move(*r);
  // The client's deadline covers the whole request, so a failure at (or past) it is the timeout.
  const bool timed_out = timeout_.count() > 0 && std::chrono::steady_clock::now() - t0 >= timeout_;
  return tl::unexpected(
      AgentError{timed_out ? AgentError::Kind::timeout : AgentError::Kind::transport, 0, r.error()});
}

tl::expected<void, AgentError> AgentClient::register_host(const std::string& body) {
  auto r = send("PUT", "/api/v1/hosts/" + encode_path_segment(host_), body);
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200 && r->status != 201)
    return tl::unexpected(unexpected_status("registration answered ", *r));
  return {};
}

tl::expected<Fetched, AgentError> AgentClient::fetch_desired(const std::string& etag) {
  HttpHeaders headers;
  if (!etag.empty()) headers.emplace_back("If-None-Match", etag);
  auto r = send("GET", "/api/v1/agents/" + encode_path_segment(host_) + "/desired", "", headers);
  if (!r) return tl::unexpected(r.error());
  Fetched f;
  if (r->status == 304) {
    f.unchanged = true;
    f.etag = etag;
    return f;
  }
  if (r->status != 200) return tl::unexpected(unexpected_status("answered ", *r));
  auto parsed = parse_desired_state(r->body);
  if (!parsed) return tl::unexpected(AgentError{AgentError::Kind::malformed, r->status, parsed.error()});
  f.etag = r->etag;
  f.body = r->body;
  f.state = std::move(*parsed);
  return f;
}

tl::expected<void, AgentError> AgentClient::put_status(const std::string& body) {
  auto r = send("PUT", "/api/v1/agents/" + encode_path_segment(host_) + "/status", body);
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200 && r->status != 204)
    return tl::unexpected(unexpected_status("status report answered ", *r));
  return {};
}

tl::expected<std::uint64_t, AgentError> AgentClient::post_report(std::string_view cbor_body) {
  static const std::string kMediaType = proto::media_type("report", proto::Encoding::cbor);
  return acked_seq(
      send("POST", "/api/v1/agents/" + encode_path_segment(host_) + "/reports", cbor_body, {}, kMediaType));
}

tl::expected<std::uint64_t, AgentError> AgentClient::post_report(const HttpBodySource& cbor_body) {
  static const std::string kMediaType = proto::media_type("report", proto::Encoding::cbor);
  return acked_seq(
      send("POST", "/api/v1/agents/" + encode_path_segment(host_) + "/reports", cbor_body, kMediaType));
}

tl::expected<std::uint64_t, AgentError> AgentClient::acked_seq(tl::expected<HttpResponse, AgentError> r) {
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200) return tl::unexpected(unexpected_status("report answered ", *r));
  const auto doc = nlohmann::json::parse(r->body, nullptr, false);
  if (doc.is_object() && doc.contains("acked_seq") && doc["acked_seq"].is_number_unsigned())
    return doc["acked_seq"].get<std::uint64_t>();
  return tl::unexpected(AgentError{AgentError::Kind::malformed, r->status,
                                   "report answered 200 without acked_seq: " + r->body.substr(0, 300)});
}

}  // namespace hsns::daemon
