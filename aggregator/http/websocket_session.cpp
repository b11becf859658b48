#include "http/websocket_session.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "hsns/log.h"

namespace hsns::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

std::atomic<std::uint64_t> next_session_id{1};
constexpr std::size_t kReadPiece = std::size_t{16} * 1024;

struct Outgoing {
  std::shared_ptr<const std::string> data;
  bool binary = false;
  MessageKind kind = MessageKind::update;
  bool summary = false;  // the overflow frame: its text is written when it goes out (the count so far)
};

std::shared_ptr<const std::string> overflow_frame(std::uint64_t missed) {
  return std::make_shared<const std::string>(R"({"type":"overflow","missed":)" + std::to_string(missed) +
                                             "}");
}

bool is_peer_gone(const beast::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::ssl::error::stream_truncated;
}

template <typename Stream>
class WebSocketSession final : public WebSocketChannel,
                               public WebSocketSessionHandle,
                               public std::enable_shared_from_this<WebSocketSession<Stream>> {
 public:
  WebSocketSession(Stream&& stream, WebSocketLimits limits, ServerObserver observer,
                   std::shared_ptr<void> registration)
      : ws_(std::move(stream)),
        limits_(std::move(limits)),
        observer_(std::move(observer)),
        registration_(std::move(registration)),
        close_timer_(ws_.get_executor()) {}

  // --- WebSocketSessionHandle (the server) ---

  void run(Request upgrade, WebSocketStart start) override {
    upgrade_ = std::move(upgrade);
    start_ = std::move(start);
    net::dispatch(ws_.get_executor(), [self = this->shared_from_this()] { self->handshake(); });
  }

  void go_away() override {
    net::post(ws_.get_executor(), [self = this->shared_from_this()] {
      if (!self->opened_) {
        self->go_away_requested_ = true;  // the handshake completes first, then the session closes
        return;
      }
      self->begin_close(websocket::close_code::going_away, close_reason::kShutdown, "server shutting down");
    });
  }

  // --- WebSocketChannel (the endpoint, publishers on any thread) ---

  bool send(std::shared_ptr<const std::string> message, bool binary, MessageKind kind) override {
    std::unique_lock lock(mu_);
    if (!accepting_) return false;
    const auto size = message->size();
    if (summary_queued_ && kind == MessageKind::update) {
      // Behind a summary not yet written: the client re-reads its state after it anyway.
      ++missed_;
      if (std::chrono::steady_clock::now() - summary_since_ <= limits_.stall_timeout) return false;
      // Nothing was written for the whole stall timeout: the consumer has stopped reading.
      accepting_ = false;
      lock.unlock();
      net::post(ws_.get_executor(), [self = this->shared_from_this()] {
        self->begin_close(websocket::close_code::try_again_later, close_reason::kSlowConsumer,
                          "slow consumer: outgoing queue full");
      });
      return false;
    }
    const bool over_bytes = kind == MessageKind::update && queued_bytes_ + size > limits_.queue_bytes;
    if (queue_.size() + 1 > limits_.queue_messages || over_bytes) {
      // A storm: the updates queued behind the message being written give way to one summary frame, so a
      // reader who keeps reading stays (it re-reads its state over REST when the frame arrives) and the
      // queue stays bounded. Starting states stay queued.
      missed_ += 1 + drop_queued_updates();
      queue_.push_back(Outgoing{nullptr, false, MessageKind::update, true});
      summary_queued_ = true;
      summary_since_ = std::chrono::steady_clock::now();
      if (write_scheduled_) return false;
      write_scheduled_ = true;
      lock.unlock();
      net::post(ws_.get_executor(), [self = this->shared_from_this()] { self->do_write(); });
      return false;
    }
    queue_.push_back(Outgoing{std::move(message), binary, kind});
    queued_bytes_ += size;
    if (write_scheduled_) return true;
    write_scheduled_ = true;
    lock.unlock();
    net::post(ws_.get_executor(), [self = this->shared_from_this()] { self->do_write(); });
    return true;
  }

  void on_message(MessageHandler handler) override { on_message_ = std::move(handler); }

  void on_closed(std::function<void()> handler) override {
    {
      std::lock_guard lock(mu_);
      if (!ended_) {
        closed_hooks_.push_back(std::move(handler));
        return;
      }
    }
    handler();
  }

  void close(std::uint16_t code, std::string reason) override {
    net::post(ws_.get_executor(),
              [self = this->shared_from_this(), code, reason = std::move(reason)]() mutable {
                // An endpoint may close in its on_open, before the accept completed: no close may run beside
                // the accept, so it waits for the handshake (as go_away does).
                if (!self->opened_) {
                  self->pending_close_.emplace(code, std::move(reason));
                  return;
                }
                self->begin_close(code, close_reason::kEndpoint, reason);
              });
  }

  std::uint64_t id() const override { return id_; }

 private:
  void handshake() {
    if (go_away_requested_) return;  // shutdown before the handshake began: just drop the connection
    auto timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
    timeouts.idle_timeout = limits_.idle_timeout;
    ws_.set_option(timeouts);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(bhttp::field::server, "hsns-aggregator"); }));
    // The message size limit is ours (on_read), not Beast's read_message_max: Beast fails the connection
    // and drops it with the rest of the message unread, so the peer gets a reset instead of the 1009.
    ws_.read_message_max(0);
    // The endpoint runs (and subscribes) before the 101 goes out, so that a client that has its answer
    // receives every message published from then on; those wait in the queue, writes held until the
    // handshake is done.
    {
      std::lock_guard lock(mu_);
      accepting_ = true;
      write_scheduled_ = true;
    }
    try {
      start_(upgrade_, this->shared_from_this());
    } catch (const std::exception& e) {
      HSNS_LOG(error) << "WebSocket endpoint " << upgrade_.target() << " failed to start: " << e.what();
      start_failed_ = true;
    }
    start_ = nullptr;
    ws_.async_accept(upgrade_,
                     [self = this->shared_from_this()](beast::error_code ec) { self->on_handshake(ec); });
  }

  void on_handshake(beast::error_code ec) {
    if (ec) {  // Beast answered the bad handshake itself; the session was never open: unsubscribe
      end();
      return;
    }
    opened_ = true;
    if (observer_.websocket_opened) observer_.websocket_opened();
    if (start_failed_)
      begin_close(websocket::close_code::internal_error, close_reason::kError, "endpoint failed");
    if (go_away_requested_) {
      begin_close(websocket::close_code::going_away, close_reason::kShutdown, "server shutting down");
    }
    if (pending_close_) begin_close(pending_close_->first, close_reason::kEndpoint, pending_close_->second);
    bool write = false;
    {
      std::lock_guard lock(mu_);
      if (closing_) {
        queue_.clear();
        queued_bytes_ = 0;
      }
      write = !queue_.empty();
      write_scheduled_ = write;
    }
    if (write) do_write();
    do_read();
  }

  // Reads a message in pieces, so that one over the limit is never held whole.
  void do_read() {
    ws_.async_read_some(
        read_buffer_, kReadPiece,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return on_read_end(ec);
    if (!closing_ && read_buffer_.size() > limits_.max_message_bytes) {
      // A close handshake, not a dropped connection: the rest of the message is read and discarded until
      // the peer answers the close frame.
      read_buffer_.consume(read_buffer_.size());
      begin_close(websocket::close_code::too_big, close_reason::kMessageTooBig, "message too big");
      return do_read();
    }
    if (!closing_ && !ws_.is_message_done()) return do_read();
    if (on_message_ && !closing_) {
      auto message = beast::buffers_to_string(read_buffer_.data());
      read_buffer_.consume(read_buffer_.size());
      try {
        on_message_(std::move(message), ws_.got_binary());
      } catch (const std::exception& e) {
        HSNS_LOG(error) << "WebSocket endpoint " << upgrade_.target() << " failed on a message: " << e.what();
        begin_close(websocket::close_code::internal_error, close_reason::kError, "endpoint failed");
      }
    } else {
      read_buffer_.consume(read_buffer_.size());
    }
    do_read();
  }

  void on_read_end(beast::error_code ec) {
    if (!reason_) {
      if (ec == websocket::error::closed || is_peer_gone(ec)) {
        reason_ = close_reason::kClient;
      } else if (ec == beast::error::timeout) {
        reason_ = close_reason::kIdle;
      } else if (ec == websocket::error::message_too_big) {
        reason_ = close_reason::kMessageTooBig;
      } else {
        reason_ = close_reason::kError;
      }
    }
    // After a close handshake Beast tears the connection down itself; otherwise make sure it is closed.
    if (ec != websocket::error::closed) {
      beast::get_lowest_layer(ws_).close();
    }
    end();
  }

  // Starts the closing handshake; queued messages not yet being written are dropped. A peer that does
  // not take the close frame (a consumer that stopped reading) loses the connection after close_timeout.
  void begin_close(std::uint16_t code, const char* reason, const std::string& text) {
    if (ended_ || closing_) return;
    closing_ = true;
    if (!reason_) reason_ = reason;
    {
      std::lock_guard lock(mu_);
      accepting_ = false;
      drop_queued();
    }
    close_timer_.expires_after(limits_.close_timeout);
    close_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec) return;
      beast::get_lowest_layer(self->ws_).close();
    });
    // A close frame's reason holds at most 123 bytes (RFC 6455 §5.5).
    const auto reason_text = std::string_view(text).substr(0, websocket::reason_string::static_capacity);
    ws_.async_close(websocket::close_reason(static_cast<websocket::close_code>(code), reason_text),
                    [self = this->shared_from_this()](beast::error_code) {});
  }

  static std::size_t bytes_of(const Outgoing& o) { return o.data ? o.data->size() : 0; }

  // Keeps only the message being written, if any. Called with mu_ held.
  void drop_queued() {
    const bool in_flight = write_scheduled_ && !queue_.empty();
    while (queue_.size() > (in_flight ? 1u : 0u)) {
      queued_bytes_ -= bytes_of(queue_.back());
      queue_.pop_back();
    }
    summary_queued_ = false;
  }

  // Drops the queued updates behind the message being written (states stay); answers how many went.
  // Called with mu_ held.
  std::size_t drop_queued_updates() {
    const bool in_flight = write_scheduled_ && !queue_.empty();
    const auto first = queue_.begin() + (in_flight ? 1 : 0);
    std::size_t dropped = 0;
    for (auto it = first; it != queue_.end(); ++it) {
      if (it->kind == MessageKind::update && !it->summary) {
        queued_bytes_ -= bytes_of(*it);
        ++dropped;
      }
    }
    queue_.erase(
        std::remove_if(first, queue_.end(),
                       [](const Outgoing& o) { return o.kind == MessageKind::update && !o.summary; }),
        queue_.end());
    return dropped;
  }

  void do_write() {
    Outgoing next;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) {
        write_scheduled_ = false;
        return;
      }
      if (queue_.front().summary) {
        // The summary counts every update missed up to now; what comes after it is queued again.
        queue_.front().data = overflow_frame(missed_);
        queued_bytes_ += queue_.front().data->size();
        missed_ = 0;
        summary_queued_ = false;
      }
      next = queue_.front();
    }
    ws_.binary(next.binary);
    ws_.async_write(net::buffer(*next.data), [self = this->shared_from_this(), data = next.data](
                                                 beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    bool more = false;
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        queued_bytes_ -= bytes_of(queue_.front());
        queue_.pop_front();
      }
      if (ec) {
        accepting_ = false;
        queue_.clear();
        queued_bytes_ = 0;
      }
      more = !ec && !queue_.empty();
      if (!more) write_scheduled_ = false;
    }
    if (ec) {
      if (ec == net::error::operation_aborted) return;  // closed by us; the read loop ends the session
      if (!reason_) reason_ = is_peer_gone(ec) ? close_reason::kClient : close_reason::kError;
      beast::get_lowest_layer(ws_).close();  // ends the read loop, which ends the session
      return;
    }
    if (observer_.websocket_message_sent) observer_.websocket_message_sent();
    if (more) do_write();
  }

  void end() {
    if (ended_) return;
    close_timer_.cancel();
    std::vector<std::function<void()>> hooks;
    {
      std::lock_guard lock(mu_);
      ended_ = true;
      accepting_ = false;
      queue_.clear();
      queued_bytes_ = 0;
      hooks.swap(closed_hooks_);
    }
    if (opened_ && observer_.websocket_closed)
      observer_.websocket_closed(reason_ ? reason_ : close_reason::kError);
    on_message_ = nullptr;  // handlers may hold the channel; release them with the session
    for (auto& hook : hooks) hook();
    upgrade_ = {};
  }

  websocket::stream<Stream> ws_;
  const WebSocketLimits limits_;
  const ServerObserver observer_;
  const std::shared_ptr<void> registration_;
  const std::uint64_t id_ = next_session_id.fetch_add(1);
  net::steady_timer close_timer_;
  Request upgrade_;
  WebSocketStart start_;
  beast::flat_buffer read_buffer_;
  MessageHandler on_message_;
  // Strand-only state.
  bool opened_ = false;
  bool start_failed_ = false;
  bool go_away_requested_ = false;
  std::optional<std::pair<std::uint16_t, std::string>> pending_close_;  // close() before the handshake
  bool closing_ = false;
  const char* reason_ = nullptr;
  // Shared with publishers (send() on any thread) and on_closed().
  std::mutex mu_;
  std::deque<Outgoing> queue_;  // front is being written while write_scheduled_
  std::size_t queued_bytes_ = 0;
  bool accepting_ = false;
  bool write_scheduled_ = false;
  bool ended_ = false;
  bool summary_queued_ = false;  // an overflow frame waits in the queue (not yet being written)
  std::chrono::steady_clock::time_point summary_since_;
  std::uint64_t missed_ = 0;  // updates dropped since the last overflow frame went out
  std::vector<std::function<void()>> closed_hooks_;
};

template <typename Stream>
std::shared_ptr<WebSocketSessionHandle> make_session(Stream&& stream, const WebSocketLimits& limits,
                                                     const ServerObserver& observer,
                                                     std::shared_ptr<void> registration) {
  // Beast's websocket stream keeps its own timeouts; the HTTP deadline of the stream must not fire.
  beast::get_lowest_layer(stream).expires_never();
  return std::make_shared<WebSocketSession<std::decay_t<Stream>>>(std::forward<Stream>(stream), limits,
                                                                  observer, std::move(registration));
}

}  // namespace

std::shared_ptr<WebSocketSessionHandle> make_websocket_session(beast::tcp_stream&& stream,
                                                               const WebSocketLimits& limits,
                                                               const ServerObserver& observer,
                                                               std::shared_ptr<void> registration) {
  return make_session(std::move(stream), limits, observer, std::move(registration));
}

std::shared_ptr<WebSocketSessionHandle> make_websocket_session(beast::ssl_stream<beast::tcp_stream>&& stream,
                                                               const WebSocketLimits& limits,
                                                               const ServerObserver& observer,
                                                               std::shared_ptr<void> registration) {
  return make_session(std::move(stream), limits, observer, std::move(registration));
}

}  // namespace hsns::http
