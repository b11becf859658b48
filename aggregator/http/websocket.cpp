#include "http/websocket.h"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <cctype>

namespace hsns::http {

WebSocketHub::WebSocketHub() : state_(std::make_shared<State>()) {}

void WebSocketHub::subscribe(const std::string& topic, const std::shared_ptr<WebSocketChannel>& channel) {
  const auto id = channel->id();
  {
    std::lock_guard lock(state_->mu);
    state_->topics[topic][id] = channel;
  }
  channel->on_closed([weak_state = std::weak_ptr<State>(state_), topic, id] {
    const auto state = weak_state.lock();
    if (!state) return;
    std::lock_guard lock(state->mu);
    const auto it = state->topics.find(topic);
    if (it == state->topics.end()) return;
    it->second.erase(id);
    if (it->second.empty()) state->topics.erase(it);
  });
}

std::size_t WebSocketHub::publish(const std::string& topic, std::string text, MessageKind kind) {
  const auto message = std::make_shared<const std::string>(std::move(text));
  std::size_t delivered = 0;
  // Holding the lock while queuing keeps one order per topic for every subscriber; send() only queues
  // (and never calls back into the hub), so this is brief.
  std::lock_guard lock(state_->mu);
  const auto it = state_->topics.find(topic);
  if (it == state_->topics.end()) return 0;
  for (const auto& [id, weak] : it->second) {
    if (const auto channel = weak.lock(); channel && channel->send(message, false, kind)) ++delivered;
  }
  return delivered;
}

std::size_t WebSocketHub::subscribers(const std::string& topic) const {
  std::lock_guard lock(state_->mu);
  const auto it = state_->topics.find(topic);
  return it == state_->topics.end() ? 0 : it->second.size();
}

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view default_port(std::string_view scheme) {
  return scheme == "https" ? "443" : "80";
}

}  // namespace

std::optional<std::string> normalize_origin(std::string_view text) {
  const auto url = boost::urls::parse_absolute_uri(text);
  if (!url) return std::nullopt;
  const auto scheme = lower(url->scheme());
  if (scheme != "http" && scheme != "https") return std::nullopt;
  if (!url->has_authority() || url->host().empty() || url->has_userinfo() || url->has_query() ||
      url->has_fragment() || !(url->encoded_path().empty() || url->encoded_path() == "/")) {
    return std::nullopt;
  }
  std::string origin = scheme + "://" + lower(url->encoded_host());
  if (url->has_port() && !url->port().empty() && url->port() != default_port(scheme)) {
    origin += ":" + std::string(url->port());
  }
  return origin;
}

bool valid_websocket_key(std::string_view key) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  constexpr std::string_view kTwoBits = "AQgw";  // the last 6-bit group of 16 bytes holds 2 bits, 4 zero bits
  if (key.size() != 24 || !key.ends_with("==")) return false;
  const auto digits = key.substr(0, 22);
  return digits.find_first_not_of(kAlphabet) == std::string_view::npos &&
         kTwoBits.find(digits.back()) != std::string_view::npos;
}

bool origin_allowed(std::string_view origin, std::string_view host, const std::vector<std::string>& allowed) {
  const auto normalized = normalize_origin(origin);
  if (!normalized) return false;  // "null" or garbage: matches nothing
  if (std::find(allowed.begin(), allowed.end(), *normalized) != allowed.end()) return true;
  // Same host: the origin's authority (scheme stripped) against Host, both without a default port.
  const auto scheme_end = normalized->find("://");
  const auto scheme = std::string_view(*normalized).substr(0, scheme_end);
  const auto authority = std::string_view(*normalized).substr(scheme_end + 3);
  std::string host_authority = lower(host);
  const auto suffix = ":" + std::string(default_port(scheme));
  if (host_authority.size() > suffix.size() &&
      host_authority.compare(host_authority.size() - suffix.size(), suffix.size(), suffix) == 0) {
    host_authority.resize(host_authority.size() - suffix.size());
  }
  return !host_authority.empty() && authority == host_authority;
}

}  // namespace hsns::http
