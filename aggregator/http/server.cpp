#include "http/server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

namespace hsns::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void begin_shutdown() = 0;
};

struct HttpServer::Shared {
  ServerLimits limits;
  RequestHandler handler;
  RejectObserver on_reject;

  std::mutex mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  bool stopping = false;
  std::function<void()> on_drained;

  void remove(SessionBase* s) {
    std::function<void()> drained;
    {
      std::lock_guard lock(mu);
      sessions.erase(s);
      if (stopping && sessions.empty() && on_drained) drained = std::exchange(on_drained, nullptr);
    }
    if (drained) drained();
  }
};

namespace {

Response transport_problem(const Problem& p) {
  Request dummy;
  dummy.version(11);
  dummy.keep_alive(false);
  auto res = problem_response(dummy, p);
  res.keep_alive(false);
  return res;
}

template <typename Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <typename... Args>
  Session(std::shared_ptr<HttpServer::Shared> shared, Args&&... args)
      : shared_(std::move(shared)), stream_(std::forward<Args>(args)...) {}

  ~Session() override { shared_->remove(this); }

  void run() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->start(); });
  }

  void begin_shutdown() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->closing_ = true;
      // Idle (waiting for the first byte of a request): close now. Mid-request: let it finish.
      if (self->reading_ && !(self->parser_ && self->parser_->got_some())) {
        beast::get_lowest_layer(self->stream_).cancel();
      } else if (!self->reading_ && !self->writing_) {
        self->close();
      }
    });
  }

 private:
  void start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(shared_->limits.read_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return;  // failed handshakes just close
                                self->do_read();
                              });
    } else {
      do_read();
    }
  }

  void do_read() {
    if (closing_ || read_closed_) {
      if (!writing_) close();
      return;
    }
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_->limits.header_limit));
    parser_->body_limit(shared_->limits.body_limit);
    reading_ = true;
    beast::get_lowest_layer(stream_).expires_after(shared_->limits.idle_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    // Refuse an announced oversized body before reading it.
    if (const auto len = parser_->content_length(); len && *len > shared_->limits.body_limit) {
      return reject(Problem::payload_too_large("request body of " + std::to_string(*len) +
                                               " bytes exceeds the limit of " +
                                               std::to_string(shared_->limits.body_limit) + " bytes"));
    }
    beast::get_lowest_layer(stream_).expires_after(shared_->limits.read_timeout);
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code e, std::size_t) { self->on_read(e); });
  }

  void on_read(beast::error_code ec) {
    reading_ = false;
    if (ec) return on_read_error(ec);
    Response res = shared_->handler(parser_->release());
    parser_.reset();
    if (closing_) res.keep_alive(false);
    if (!res.keep_alive()) read_closed_ = true;
    queue_.push_back(std::move(res));
    if (!writing_) do_write();
    if (!read_closed_ && !closing_ && queue_.size() < shared_->limits.pipeline_limit) do_read();
  }

  void on_read_error(beast::error_code ec) {
    reading_ = false;
    const bool partial = parser_ && parser_->got_some();
    if (ec == bhttp::error::body_limit) {
      return reject(Problem::payload_too_large("request body exceeds the limit of " +
                                               std::to_string(shared_->limits.body_limit) + " bytes"));
    }
    if (ec == bhttp::error::header_limit) {
      Problem p{431,
                "header-too-large",
                "Request header fields too large",
                "request header exceeds " + std::to_string(shared_->limits.header_limit) + " bytes",
                {}};
      return reject(p);
    }
    if (ec == beast::error::timeout && partial) {
      return reject(Problem{408, "request-timeout", "Request timeout", "request not received in time", {}});
    }
    if (&ec.category() == &bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return reject(Problem::malformed("malformed HTTP request: " + ec.message()));
    }
    // End of stream, reset, idle timeout, shutdown cancel: close once queued responses are written.
    read_closed_ = true;
    if (!writing_) close();
  }

  void reject(const Problem& p) {
    if (shared_->on_reject) shared_->on_reject(p.status);
    read_closed_ = true;
    queue_.push_back(transport_problem(p));
    if (!writing_) do_write();
  }

  void do_write() {
    writing_ = true;
    beast::get_lowest_layer(stream_).expires_after(shared_->limits.read_timeout);
    bhttp::async_write(
        stream_, queue_.front(),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    writing_ = false;
    if (ec) {
      hard_close();
      return;
    }
    const bool keep = queue_.front().keep_alive();
    queue_.pop_front();
    if (!keep) {
      read_closed_ = true;
      queue_.clear();
    }
    if (!queue_.empty()) return do_write();
    if (read_closed_ || closing_) {
      if (!reading_) close();
      return;
    }
    if (!reading_) do_read();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) { self->hard_close(); });
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  void hard_close() {
    closed_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  std::shared_ptr<HttpServer::Shared> shared_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::deque<Response> queue_;  // responses in request order; front is being written
  bool reading_ = false;
  bool writing_ = false;
  bool read_closed_ = false;  // no more requests will be read on this connection
  bool closing_ = false;      // server shutdown requested
  bool closed_ = false;
};

}  // namespace

HttpServer::HttpServer(net::io_context& ioc, net::ssl::context* ssl, ServerLimits limits,
                       RequestHandler handler, RejectObserver on_reject)
    : ioc_(ioc), ssl_(ssl), acceptor_(net::make_strand(ioc)), shared_(std::make_shared<Shared>()) {
  shared_->limits = limits;
  shared_->handler = std::move(handler);
  shared_->on_reject = std::move(on_reject);
}

HttpServer::~HttpServer() = default;

void HttpServer::listen(const tcp::endpoint& endpoint) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  if (endpoint.address().is_v6()) acceptor_.set_option(net::ip::v6_only(false));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
}

tcp::endpoint HttpServer::local_endpoint() const {
  return acceptor_.local_endpoint();
}

void HttpServer::start() {
  net::dispatch(acceptor_.get_executor(), [this] { do_accept(); });
}

void HttpServer::do_accept() {
  acceptor_.async_accept(
      net::make_strand(ioc_), [this, shared = shared_](beast::error_code ec, tcp::socket socket) {
        {
          std::lock_guard lock(shared->mu);
          if (shared->stopping) return;
        }
        if (!ec) {
          beast::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          std::shared_ptr<SessionBase> session;
          if (ssl_) {
            auto s = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
                shared, std::move(socket), *ssl_);
            session = s;
            {
              std::lock_guard lock(shared->mu);
              shared->sessions.emplace(session.get(), session);
            }
            s->run();
          } else {
            auto s = std::make_shared<Session<beast::tcp_stream>>(shared, std::move(socket));
            session = s;
            {
              std::lock_guard lock(shared->mu);
              shared->sessions.emplace(session.get(), session);
            }
            s->run();
          }
        }
        do_accept();
      });
}

void HttpServer::shutdown(std::function<void()> on_drained) {
  std::vector<std::shared_ptr<SessionBase>> live;
  bool drained_now = false;
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->stopping) return;
    shared_->stopping = true;
    shared_->on_drained = std::move(on_drained);
    for (auto& [ptr, weak] : shared_->sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
    drained_now = shared_->sessions.empty();
  }
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
  });
  for (auto& s : live) s->begin_shutdown();
  if (drained_now) {
    std::function<void()> cb;
    {
      std::lock_guard lock(shared_->mu);
      cb = std::exchange(shared_->on_drained, nullptr);
    }
    if (cb) cb();
  }
}

std::size_t HttpServer::open_connections() const {
  std::lock_guard lock(shared_->mu);
  return shared_->sessions.size();
}

}  // namespace hsns::http
