// The server side of one WebSocket connection (internal to http/server.cpp). The HTTP connection that
// read the upgrade request hands over its stream (plain TCP or TLS); the session answers the handshake,
// starts the endpoint and then runs the read loop and its bounded outgoing queue as http/websocket.h
// describes.
//
// Contract:
// - run() once, on the stream's strand: handshake with Beast's suggested server timeouts (idle timeout
//   and the largest incoming message from the limits), then start(upgrade, channel), then reading.
// - go_away() (any thread, server shutdown): close 1001 once open; a handshake in progress finishes first.
// - `registration` is held as long as the session lives: the server's connection entry, whose release
//   tells the server the connection is gone.
// - The observer's websocket_* hooks are called for sessions whose handshake succeeded: opened once,
//   closed once with the reason, message_sent per message written.
#pragma once

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>

#include "http/server.h"

namespace hsns::http {

class WebSocketSessionHandle {
 public:
  virtual ~WebSocketSessionHandle() = default;
  virtual void run(Request upgrade, WebSocketStart start) = 0;
  virtual void go_away() = 0;
};

std::shared_ptr<WebSocketSessionHandle> make_websocket_session(boost::beast::tcp_stream&& stream,
                                                               const WebSocketLimits& limits,
                                                               const ServerObserver& observer,
                                                               std::shared_ptr<void> registration);
std::shared_ptr<WebSocketSessionHandle> make_websocket_session(
    boost::beast::ssl_stream<boost::beast::tcp_stream>&& stream, const WebSocketLimits& limits,
    const ServerObserver& observer, std::shared_ptr<void> registration);

}  // namespace hsns::http
