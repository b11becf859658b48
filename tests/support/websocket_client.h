// A blocking WebSocket client for tests of the aggregator's streams (Beast underneath, kept out of the
// tests' own translation units): the upgrade with a bearer token, then JSON messages read one at a time.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace hsns::testing {

class WebSocketTestClient {
 public:
  WebSocketTestClient();
  ~WebSocketTestClient();
  WebSocketTestClient(const WebSocketTestClient&) = delete;
  WebSocketTestClient& operator=(const WebSocketTestClient&) = delete;

  // Connects to 127.0.0.1:port and upgrades `target`; answers the handshake's HTTP status (101 when open).
  int open(int port, const std::string& target, const std::string& token);
  // The next message as JSON; null when none arrived within `timeout` (the connection is then closed) or
  // on an error.
  nlohmann::json next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next message whose "change" is `change` (up to 20 others skipped); null as for next().
  nlohmann::json next_change(const std::string& change);
  // The code and reason of the server's close frame (once next() answered null because of it); 0 and
  // empty without one.
  std::pair<int, std::string> close_reason() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hsns::testing
