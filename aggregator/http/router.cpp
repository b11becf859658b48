#include "http/router.h"

#include <boost/url/parse.hpp>
#include <nlohmann/json.hpp>

namespace hsns::http {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t pos = 0;
  if (!path.empty() && path.front() == '/') pos = 1;
  while (pos <= path.size()) {
    const auto next = path.find('/', pos);
    const auto end = next == std::string_view::npos ? path.size() : next;
    segments.push_back(path.substr(pos, end - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return segments;
}

bool is_param(std::string_view seg) {
  return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

// Matches the encoded path against a pattern; fills decoded parameters.
bool match_pattern(std::string_view pattern, const std::vector<std::string_view>& segments,
                   std::vector<std::pair<std::string, std::string>>& params) {
  const auto pat = split_path(pattern);
  if (pat.size() != segments.size()) return false;
  params.clear();
  for (std::size_t i = 0; i < pat.size(); ++i) {
    if (is_param(pat[i])) {
      if (segments[i].empty()) return false;
      auto decoded = boost::urls::make_pct_string_view(segments[i]);
      if (!decoded) return false;
      params.emplace_back(std::string(pat[i].substr(1, pat[i].size() - 2)), decoded->decode());
    } else if (pat[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view RequestContext::path_param(std::string_view name) const {
  for (const auto& [k, v] : path_params) {
    if (k == name) return v;
  }
  return {};
}

std::optional<std::string> RequestContext::query(std::string_view name) const {
  const auto params = url.params();
  const auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return (*it).value;
}

void Router::add(bhttp::verb method, std::string pattern, PermissionSet permissions, Handler handler,
                 Cost cost) {
  routes_.push_back(Route{method, std::move(pattern), permissions, std::move(handler), cost, nullptr});
}

void Router::add_websocket(std::string pattern, PermissionSet permissions, WebSocketOpen on_open) {
  routes_.push_back(
      Route{bhttp::verb::get, std::move(pattern), permissions, nullptr, Cost::light, std::move(on_open)});
}

Router::Match Router::match(bhttp::verb method, std::string_view encoded_path) const {
  Match m;
  const auto segments = split_path(encoded_path);
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& r : routes_) {
    if (!match_pattern(r.pattern, segments, params)) continue;
    if (r.method == method || (method == bhttp::verb::head && r.method == bhttp::verb::get)) {
      m.route = &r;
      m.path_params = std::move(params);
      return m;
    }
    if (!m.allow.empty()) m.allow += ", ";
    m.allow += std::string(bhttp::to_string(r.method));
  }
  return m;
}

Response json_response(const Request& req, bhttp::status status, const std::string& body) {
  Response res{status, req.version()};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(req.keep_alive());
  res.body() = body;
  res.prepare_payload();
  return res;
}

Response problem_response(const Request& req, const Problem& problem) {
  Response res{static_cast<bhttp::status>(problem.status), req.version()};
  res.set(bhttp::field::content_type, "application/problem+json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(req.keep_alive());
  // A problem may quote client text (a query parameter's name, a path segment) that is not UTF-8: replaced
  // with U+FFFD rather than letting dump() throw (a 500; found by fuzz_api_routes).
  res.body() = problem.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  res.prepare_payload();
  return res;
}

Response empty_response(const Request& req, bhttp::status status) {
  Response res{status, req.version()};
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  return res;
}

void omit_body_for_head(bhttp::verb method, Response& res) {
  if (method != bhttp::verb::head) return;
  const auto length = res.body().size();
  res.body().clear();
  res.content_length(length);
}

}  // namespace hsns::http
