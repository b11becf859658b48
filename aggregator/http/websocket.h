// WebSocket sessions of the aggregator's HTTP server: what an endpoint sees of a session, the limits a
// session runs under, the Origin rule of the upgrade, and the hub that fans topic messages out.
//
// Contract:
// - An endpoint (Router::add_websocket) gets a WebSocketChannel once the handshake succeeded. send() may
//   be called from any thread; it queues the message on the session's own bounded queue (at most
//   queue_messages messages and queue_bytes bytes, the one being written included) and returns at once.
// - A storm (an update that does not fit) never drops a reader who keeps reading: the updates queued
//   behind the message being written are dropped and one summary frame takes their place,
//   {"type":"overflow","missed":N}, N counting every update missed up to the moment the frame is written
//   (updates arriving while it waits are missed too). After it the stream goes on; the client re-reads
//   the state it follows over REST, as after a reconnect. send() answers false for a missed update.
// - A consumer that has stopped reading (the summary frame still unwritten stall_timeout after it was
//   queued, when another update arrives) is closed with 1013 "Try Again Later" and reason "slow consumer:
//   outgoing queue full": 1013 says the condition is temporary and reconnecting (and re-reading state
//   over REST) is the way back. 1008 (policy violation) is for messages the endpoint *received* (RFC 6455
//   §7.4.1). Queued messages not yet handed to the socket are dropped at close; the close frame follows
//   the message being written, and a peer that does not take it within close_timeout has its connection
//   closed without it.
// - A message sent as a starting state (MessageKind::state: the full set a stream opens with, or sends
//   again when the shape of what it follows changed) is queued whatever its size, within the message
//   bound: it is state the server holds anyway and a client cannot start without it, and it can be larger
//   than queue_bytes on a big fabric. The updates after it must fit behind it (its bytes count).
// - on_message() and on_closed() handlers run on the session's strand (never concurrently for one
//   session). Set on_message in the endpoint's on_open: reading starts after on_open returns. Messages
//   larger than max_message_bytes close the session with 1009.
// - Idle sessions: Beast's suggested server timeouts (handshake 30 s, ping after half the idle timeout,
//   close when nothing, not even a pong, arrived for idle_timeout).
// - WebSocketHub::publish(topic, text) is thread-safe and queues the text on every session subscribed to
//   the topic; every subscriber sees a topic's messages in the same order (fan-out happens under the
//   hub's lock; queuing never blocks on a socket). A session leaves every topic when it closes.
// - origin_allowed(): an upgrade request without Origin is allowed (non-browser clients send none); with
//   one, its scheme://host[:port] must equal one of the allowed origins, or its host[:port] the request's
//   Host (same host). Comparison is case-insensitive and ignores a default port (80 http, 443 https).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hsns::http {

struct WebSocketLimits {
  // Outgoing messages queued per session: with about 800 bytes an alarm change, queue_bytes is the bound
  // reached first (about a second of a 1,000 changes/s storm for a page busy redrawing).
  std::size_t queue_messages = 2048;
  std::size_t queue_bytes = std::size_t{1024} * 1024;      // outgoing bytes queued per session
  std::size_t max_message_bytes = std::size_t{64} * 1024;  // largest message a client may send
  std::chrono::milliseconds idle_timeout{300'000};         // Beast's suggested server idle timeout
  std::chrono::milliseconds close_timeout{5'000};          // for the peer to take the close frame
  std::chrono::milliseconds stall_timeout{30'000};         // an overflow frame unwritten this long: 1013
  std::vector<std::string> allowed_origins;  // normalised ("https://host:port"); same host always allowed
};

// Why a session ended; fixed words, used as a metric label.
namespace close_reason {
inline constexpr const char* kSlowConsumer = "slow_consumer";  // it stopped reading in a storm (1013)
inline constexpr const char* kIdle = "idle";                   // no data or pong within the idle timeout
inline constexpr const char* kClient = "client";               // the client closed or dropped the connection
inline constexpr const char* kShutdown = "shutdown";           // server shutdown (1001)
inline constexpr const char* kMessageTooBig = "message_too_big";  // the client sent too much (1009)
inline constexpr const char* kEndpoint = "endpoint";              // the endpoint closed it
inline constexpr const char* kError = "error";                    // transport or protocol error
}  // namespace close_reason

// What a queued message is to the session's byte bound (see the contract above).
enum class MessageKind { update, state };

class WebSocketChannel {
 public:
  virtual ~WebSocketChannel() = default;

  // Queues one message; false when the session is closing or the message did not fit (the session is
  // then closed with 1013). Any thread.
  virtual bool send(std::shared_ptr<const std::string> message, bool binary, MessageKind kind) = 0;
  bool send_text(std::string text) {
    return send(std::make_shared<const std::string>(std::move(text)), false, MessageKind::update);
  }
  // A starting state: not refused for the byte bound.
  bool send_state(std::string text) {
    return send(std::make_shared<const std::string>(std::move(text)), false, MessageKind::state);
  }

  // Incoming messages (text or binary), on the session's strand; set it in on_open.
  using MessageHandler = std::function<void(std::string message, bool binary)>;
  virtual void on_message(MessageHandler handler) = 0;
  // Runs once when the session has ended, on its strand (at once when it has ended already).
  virtual void on_closed(std::function<void()> handler) = 0;
  // Closes the session with the given code (RFC 6455 §7.4) and reason; any thread (also in on_open: the
  // close then follows the completed handshake).
  virtual void close(std::uint16_t code, std::string reason) = 0;
  // Unique per process, for bookkeeping.
  virtual std::uint64_t id() const = 0;
};

class WebSocketHub {
 public:
  WebSocketHub();
  void subscribe(const std::string& topic, const std::shared_ptr<WebSocketChannel>& channel);
  // Queues text on every subscriber of topic; answers how many took it (a full queue closes its session).
  std::size_t publish(const std::string& topic, std::string text, MessageKind kind = MessageKind::update);
  std::size_t subscribers(const std::string& topic) const;

 private:
  struct State {
    mutable std::mutex mu;
    std::unordered_map<std::string, std::unordered_map<std::uint64_t, std::weak_ptr<WebSocketChannel>>>
        topics;
  };
  // Shared with the close hooks of the sessions, which may run after the hub is gone.
  std::shared_ptr<State> state_;
};

// "scheme://host[:port]" lower-cased without a default port, or nullopt when text is not an http(s)
// origin (a path, query, user info or any other scheme is not an origin).
std::optional<std::string> normalize_origin(std::string_view text);
bool origin_allowed(std::string_view origin, std::string_view host, const std::vector<std::string>& allowed);
// RFC 6455 section 4.2.1: Sec-WebSocket-Key is the base64 of 16 bytes: 22 characters of the RFC 4648
// alphabet, the last of which carries only 2 bits (A, Q, g or w), then "==".
bool valid_websocket_key(std::string_view key);

}  // namespace hsns::http
