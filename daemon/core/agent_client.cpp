#include "agent_client.h"

#include <fstream>
#include <sstream>

namespace hsns::daemon {
namespace {

std::string describe(const HttpResponse& r) {
  std::string body = r.body.substr(0, 300);
  return std::to_string(r.status) + ": " + body;
}

}  // namespace

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
  return std::unique_ptr<AgentClient>(new AgentClient(std::move(*client), host));
}

tl::expected<void, std::string> AgentClient::register_host(const std::string& body) {
  auto r = client_.put("/api/v1/hosts/" + encode_path_segment(host_), body);
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200 && r->status != 201) return tl::unexpected("registration answered " + describe(*r));
  return {};
}

tl::expected<Fetched, std::string> AgentClient::fetch_desired(const std::string& etag) {
  HttpHeaders headers;
  if (!etag.empty()) headers.emplace_back("If-None-Match", etag);
  auto r = client_.get("/api/v1/agents/" + encode_path_segment(host_) + "/desired", headers);
  if (!r) return tl::unexpected(r.error());
  Fetched f;
  if (r->status == 304) {
    f.unchanged = true;
    f.etag = etag;
    return f;
  }
  if (r->status != 200) return tl::unexpected(describe(*r));
  auto parsed = parse_desired_state(r->body);
  if (!parsed) return tl::unexpected(parsed.error());
  f.etag = r->etag;
  f.body = r->body;
  f.state = std::move(*parsed);
  return f;
}

tl::expected<void, std::string> AgentClient::put_status(const std::string& body) {
  auto r = client_.put("/api/v1/agents/" + encode_path_segment(host_) + "/status", body);
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200 && r->status != 204) return tl::unexpected("status report answered " + describe(*r));
  return {};
}

}  // namespace hsns::daemon
