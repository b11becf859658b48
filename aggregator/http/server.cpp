#include "http/server.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "http/framing.h"
#include "http/websocket_session.h"

namespace hsns::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void begin_shutdown() = 0;
  // Closes the connection if it is still waiting for the first byte of its next request.
  virtual void evict_if_idle() = 0;

  // When the session last started waiting for a new request; 0 while a request is in progress. Written
  // on the session's strand, read by the acceptor to choose whom to evict at the connection cap.
  std::atomic<std::int64_t> idle_since{0};
};

struct HttpServer::Shared {
  ServerLimits limits;
  RequestHandler handler;
  UpgradeHandler upgrade;
  ServerObserver observer;

  std::mutex mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  bool stopping = false;
  std::function<void()> on_drained;

  void rejected(int status) const {
    if (observer.rejected) observer.rejected(status);
  }

  // At the cap: the longest-idle session, marked so that it is not chosen twice, or null when none is
  // idle. Called with mu held; the caller asks it to close and drops it after releasing mu (dropping the
  // last reference runs remove(), which takes mu).
  std::shared_ptr<SessionBase> take_oldest_idle() {
    SessionBase* oldest = nullptr;
    std::int64_t oldest_since = 0;
    for (const auto& [ptr, weak] : sessions) {
      const auto since = ptr->idle_since.load(std::memory_order_relaxed);
      if (since == 0 || (oldest && since >= oldest_since)) continue;
      oldest = ptr;
      oldest_since = since;
    }
    if (!oldest) return nullptr;
    auto chosen = sessions.at(oldest).lock();
    if (chosen) chosen->idle_since.store(0, std::memory_order_relaxed);
    return chosen;
  }

  void remove(SessionBase* s) {
    std::function<void()> drained;
    {
      std::lock_guard lock(mu);
      sessions.erase(s);
      if (stopping && sessions.empty() && on_drained) drained = std::exchange(on_drained, nullptr);
    }
    if (drained) drained();
  }

  // Registers a connection; false when the server is stopping (the caller then drops it).
  bool add(const std::shared_ptr<SessionBase>& s) {
    std::lock_guard lock(mu);
    sessions.emplace(s.get(), s);
    return !stopping;
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

// The first read of a request: whatever has arrived, up to this much.
constexpr std::size_t kFirstRead = 4096;

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
      if (self->upgraded_) return;  // the WebSocket session in its place closes itself
      self->closing_ = true;
      // Idle (waiting for the first byte of a request): close now. Mid-request: let it finish.
      if (self->waiting_for_request()) {
        beast::get_lowest_layer(self->stream_).cancel();
      } else if (!self->reading_ && !self->writing_ && !self->handling_) {
        self->close();
      }
    });
  }

  void evict_if_idle() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (!self->upgraded_ && self->waiting_for_request() && self->queue_.empty()) {
        self->read_closed_ = true;
        beast::get_lowest_layer(self->stream_).cancel();
      }
    });
  }

 private:
  bool waiting_for_request() const { return reading_ && awaiting_first_byte_; }

  // Read deadlines use our own timer rather than tcp_stream's: its expiry closes the socket, which
  // would make the promised 408 impossible to send.
  void arm_read_deadline(std::chrono::milliseconds after) {
    timed_out_ = false;
    beast::get_lowest_layer(stream_).expires_never();
    deadline_.expires_after(after);
    deadline_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->upgraded_) return;  // cancelled or re-armed, or the stream belongs to a WebSocket
      self->timed_out_ = true;
      beast::get_lowest_layer(self->stream_).socket().cancel();
    });
  }

  void start() {
    beast::error_code remote_ec;
    const auto remote = beast::get_lowest_layer(stream_).socket().remote_endpoint(remote_ec);
    if (!remote_ec) peer_.address = remote.address().to_string();
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
    // Content-Length is checked against the parser's limit while the header is parsed, before the path
    // is known: the largest limit here, the path's own in on_header.
    body_limit_ = shared_->limits.largest_body_limit();
    parser_->body_limit(body_limit_);
    reading_ = true;
    arm_read_deadline(shared_->limits.idle_timeout);
    if (buffer_.size() > 0) return read_header();  // a pipelined request has begun already
    // Wait for the first byte on its own, so that "idle" (nothing of the next request received: the
    // connection the cap may close) is known exactly.
    awaiting_first_byte_ = true;
    idle_since.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->awaiting_first_byte_ = false;
                              self->idle_since.store(0, std::memory_order_relaxed);
                              self->buffer_.commit(n);
                              if (ec) return self->on_read_error(ec);
                              self->read_header();
                            });
  }

  void read_header() {
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    if (auto problem = check_request_framing(parser_->get().base())) {
      reading_ = false;
      return reject(*problem);
    }
    // Refuse an announced oversized body before reading it; a chunked one stops at the path's limit.
    body_limit_ = shared_->limits.body_limit_for(parser_->get().target());
    if (const auto len = parser_->content_length(); len && *len > body_limit_) {
      return reject(Problem::payload_too_large("request body of " + std::to_string(*len) +
                                               " bytes exceeds the limit of " + std::to_string(body_limit_) +
                                               " bytes"));
    }
    parser_->body_limit(body_limit_);
    if (!reserve_body_memory()) return;
    arm_read_deadline(shared_->limits.read_timeout);
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code e, std::size_t) { self->on_read(e); });
  }

  // The body's memory (and what will be decoded from it) from the budget; false when refused (answered).
  bool reserve_body_memory() {
    const auto& budget = shared_->limits.memory_budget;
    if (!budget) return true;
    const auto length = parser_->content_length();
    const std::size_t body =
        length ? static_cast<std::size_t>(*length) : (parser_->chunked() ? body_limit_ : 0);
    auto held = budget->try_reserve(request_memory_cost(body));
    if (!held) {
      reject(Problem::unavailable("the aggregator's memory budget for request bodies is spent; retry later"),
             /*retry_later=*/true);
      return false;
    }
    body_memory_ = std::move(*held);
    return true;
  }

  void on_read(beast::error_code ec) {
    deadline_.cancel();
    reading_ = false;
    if (ec) return on_read_error(ec);
    handling_ = true;
    auto request = parser_->release();
    parser_.reset();
    // Held until the handler has answered (the respond callback is dropped then).
    auto memory = std::make_shared<MemoryBudget::Reservation>(std::move(body_memory_));
    if (shared_->upgrade && boost::beast::websocket::is_upgrade(request)) {
      return on_upgrade_request(std::move(request));
    }
    shared_->handler(std::move(request), peer_, [self = this->shared_from_this(), memory](Response res) {
      memory->release();
      auto executor = self->stream_.get_executor();
      net::dispatch(executor, [self = std::move(self), res = std::move(res)]() mutable {
        self->on_response(std::move(res));
      });
    });
  }

  // An upgrade request, on the strand: the Origin rule, then the upgrade handler (auth and routing).
  void on_upgrade_request(Request request) {
    if (!valid_websocket_key(request[bhttp::field::sec_websocket_key])) {
      shared_->rejected(400);
      return on_response(problem_response(
          request,
          Problem::invalid("Sec-WebSocket-Key", "must be the base64 of 16 bytes (RFC 6455 section 4.2.1)")));
    }
    const auto origin = request[bhttp::field::origin];
    if (!origin.empty() &&
        !origin_allowed(origin, request[bhttp::field::host], shared_->limits.websocket.allowed_origins)) {
      shared_->rejected(403);
      return on_response(problem_response(
          request,
          Problem::forbidden("Origin " + std::string(origin.substr(0, 128)) +
                             " may not open WebSocket sessions here (http.websocket_allowed_origins)")));
    }
    auto decision = shared_->upgrade(request, peer_);
    if (auto* refusal = std::get_if<Response>(&decision)) return on_response(std::move(*refusal));
    pending_upgrade_.emplace(std::move(request), std::get<WebSocketStart>(std::move(decision)));
    // Responses to earlier pipelined requests go out first; on_write upgrades once they are written.
    if (!writing_ && queue_.empty()) upgrade();
  }

  // Hands the stream to a WebSocket session registered in this session's place.
  void upgrade() {
    auto [request, start] = std::move(*pending_upgrade_);
    pending_upgrade_.reset();
    if (closing_) {
      return on_response(problem_response(request, Problem::unavailable("the aggregator is shutting down")));
    }
    handling_ = false;
    upgraded_ = true;
    deadline_.cancel();
    struct Entry : SessionBase {
      explicit Entry(std::shared_ptr<HttpServer::Shared> s) : shared(std::move(s)) {}
      ~Entry() override { shared->remove(this); }
      void begin_shutdown() override {
        if (auto s = session.lock()) s->go_away();
      }
      void evict_if_idle() override {}  // a WebSocket session is never idle in the cap's sense
      std::shared_ptr<HttpServer::Shared> shared;
      std::weak_ptr<WebSocketSessionHandle> session;
    };
    auto entry = std::make_shared<Entry>(shared_);
    auto session =
        make_websocket_session(std::move(stream_), shared_->limits.websocket, shared_->observer, entry);
    entry->session = session;
    const bool running = shared_->add(entry);
    shared_->remove(this);  // the entry takes this connection's place under the cap at once
    session->run(std::move(request), std::move(start));
    if (!running) session->go_away();  // shutdown began after this connection was told to close
  }

  void on_response(Response res) {
    handling_ = false;
    if (closing_) res.keep_alive(false);
    if (!res.keep_alive()) read_closed_ = true;
    queue_.push_back(std::move(res));
    if (!writing_) do_write();
    if (!read_closed_ && !closing_ && queue_.size() < shared_->limits.pipeline_limit) do_read();
    if ((read_closed_ || closing_) && !writing_) close();
  }

  void on_read_error(beast::error_code ec) {
    deadline_.cancel();
    reading_ = false;
    body_memory_.release();
    const bool partial = (parser_ && parser_->got_some()) || buffer_.size() > 0;
    if (timed_out_) {
      if (partial) {
        return reject(
            Problem{408,
                    "request-timeout",
                    "Request timeout",
                    "the request was not received completely within " +
                        std::to_string(parser_->is_header_done() ? shared_->limits.read_timeout.count()
                                                                 : shared_->limits.idle_timeout.count()) +
                        " ms",
                    {}});
      }
      ec = beast::error::timeout;
    }
    if (ec == bhttp::error::body_limit) {
      return reject(Problem::payload_too_large("request body exceeds the limit of " +
                                               std::to_string(body_limit_) + " bytes"));
    }
    if (ec == bhttp::error::header_limit) {
      Problem p{431,
                "header-too-large",
                "Request header fields too large",
                "request header exceeds " + std::to_string(shared_->limits.header_limit) + " bytes",
                {}};
      return reject(p);
    }
    if (&ec.category() == &bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return reject(parse_error_problem(ec));
    }
    // End of stream, reset, idle timeout, shutdown cancel: close once queued responses are written.
    read_closed_ = true;
    if (!writing_) close();
  }

  void reject(const Problem& p, bool retry_later = false) {
    deadline_.cancel();
    shared_->rejected(p.status);
    read_closed_ = true;
    auto res = transport_problem(p);
    if (retry_later) res.set(bhttp::field::retry_after, "1");
    // Refused once its request line was read (framing, Content-Length over the limit, a bad or timed-out
    // body): the parser holds the method from then on (verb::unknown before), and a HEAD gets no body.
    if (parser_) omit_body_for_head(parser_->get().method(), res);
    queue_.push_back(std::move(res));
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
    if (pending_upgrade_) return upgrade();
    if (handling_) return;  // its response continues the connection
    if (read_closed_ || closing_) {
      if (!reading_) close();
      return;
    }
    if (!reading_) do_read();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    deadline_.cancel();
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
    deadline_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  std::shared_ptr<HttpServer::Shared> shared_;
  Stream stream_;
  net::steady_timer deadline_{stream_.get_executor()};
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::size_t body_limit_ = 0;             // of the request being read
  MemoryBudget::Reservation body_memory_;  // of the request being read
  Peer peer_;                              // read once the connection starts
  std::deque<Response> queue_;             // responses in request order; front is being written
  std::optional<std::pair<Request, WebSocketStart>> pending_upgrade_;  // waits for queue_ to drain
  bool upgraded_ = false;  // stream_ now belongs to a WebSocket session
  bool reading_ = false;
  bool handling_ = false;             // the handler has the current request; its response is not queued yet
  bool timed_out_ = false;            // the read deadline fired
  bool awaiting_first_byte_ = false;  // reading, and nothing of the next request has arrived
  bool writing_ = false;
  bool read_closed_ = false;  // no more requests will be read on this connection
  bool closing_ = false;      // server shutdown requested
  bool closed_ = false;
};

}  // namespace

namespace {

// Descriptors kept free for what the process opens besides connections: the SQLite database, its WAL
// and shared memory, journal files, the log, worker pools.
constexpr rlim_t kReservedDescriptors = 64;
// Evictions are asynchronous, so admission runs slightly over the cap while evicted sessions finish
// closing; beyond this slack every newcomer is refused.
constexpr std::size_t kEvictionSlack = 16;

// The cap is what the configuration says, lowered to what the descriptor limit can hold.
std::size_t effective_max_connections(std::size_t configured) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return configured;
  const rlim_t usable =
      rl.rlim_cur > 2 * kReservedDescriptors ? rl.rlim_cur - kReservedDescriptors : rl.rlim_cur / 2;
  return std::max<std::size_t>(1, std::min<std::size_t>(configured, usable));
}

const char* classify_accept_error(const beast::error_code& ec) {
  if (ec == net::error::no_descriptors || ec.value() == ENFILE) return "descriptors";
  if (ec == net::error::no_buffer_space || ec == net::error::no_memory) return "memory";
  return "other";
}

// A connection beyond the cap with nothing idle to close for it: 503 (nothing from the client is read),
// then close. TLS connections are closed without an answer, since a plain-text response would be
// garbage to them.
void refuse_connection(tcp::socket socket, bool tls) {
  if (tls) {
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  // The same problem response every transport refusal sends, written without a session.
  struct Refusal {
    tcp::socket socket;
    Response response;
  };
  auto refusal = std::make_shared<Refusal>(Refusal{
      std::move(socket),
      transport_problem(Problem::unavailable("the aggregator is at its connection limit; retry shortly"))});
  refusal->response.set(bhttp::field::retry_after, "1");
  bhttp::async_write(refusal->socket, refusal->response, [refusal](beast::error_code, std::size_t) {
    beast::error_code ignored;
    refusal->socket.shutdown(tcp::socket::shutdown_send, ignored);
    refusal->socket.close(ignored);
  });
}

}  // namespace

namespace {

// Is `path` the prefix or below it? A "*" segment of the prefix matches any one non-empty segment.
bool path_under(std::string_view path, std::string_view prefix) {
  while (!prefix.empty()) {
    const auto star = prefix.find('*');
    const auto literal = prefix.substr(0, star);
    if (!path.starts_with(literal)) return false;
    path.remove_prefix(literal.size());
    if (star == std::string_view::npos) return path.empty() || path.front() == '/';
    const auto segment_end = std::min(path.find('/'), path.size());
    if (segment_end == 0) return false;
    path.remove_prefix(segment_end);
    prefix.remove_prefix(star + 1);
  }
  return true;
}

}  // namespace

std::size_t ServerLimits::body_limit_for(std::string_view target) const {
  const std::string_view path = target.substr(0, target.find('?'));
  std::size_t limit = body_limit;
  std::size_t matched = 0;
  for (const auto& p : path_body_limits) {
    const bool under = path_under(path, p.prefix);
    if (under && (matched == 0 || p.prefix.size() > matched)) {
      limit = p.limit;
      matched = p.prefix.size();
    }
  }
  return limit;
}

std::size_t ServerLimits::largest_body_limit() const {
  std::size_t largest = body_limit;
  for (const auto& p : path_body_limits) largest = std::max(largest, p.limit);
  return largest;
}

HttpServer::HttpServer(net::io_context& ioc, net::ssl::context* ssl, ServerLimits limits,
                       RequestHandler handler, ServerObserver observer)
    : ioc_(ioc),
      ssl_(ssl),
      acceptor_(net::make_strand(ioc)),
      accept_backoff_(acceptor_.get_executor()),
      shared_(std::make_shared<Shared>()) {
  shared_->limits = std::move(limits);
  shared_->handler = std::move(handler);
  shared_->observer = std::move(observer);
}

HttpServer::~HttpServer() = default;

void HttpServer::listen(const tcp::endpoint& endpoint) {
  shared_->limits.max_connections = effective_max_connections(shared_->limits.max_connections);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  if (endpoint.address().is_v6()) acceptor_.set_option(net::ip::v6_only(false));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
}

tcp::endpoint HttpServer::local_endpoint() const {
  return acceptor_.local_endpoint();
}

void HttpServer::set_upgrade_handler(UpgradeHandler upgrade) {
  shared_->upgrade = std::move(upgrade);
}

void HttpServer::start() {
  net::dispatch(acceptor_.get_executor(), [this] { do_accept(); });
}

void HttpServer::do_accept() {
  acceptor_.async_accept(net::make_strand(ioc_),
                         [this, shared = shared_](beast::error_code ec, tcp::socket socket) {
                           {
                             std::lock_guard lock(shared->mu);
                             if (shared->stopping) return;
                           }
                           if (ec) return on_accept_error(ec);
                           backoff_ = std::chrono::milliseconds(0);
                           admit(std::move(socket));
                           do_accept();
                         });
}

void HttpServer::on_accept_error(const beast::error_code& ec) {
  if (ec == net::error::operation_aborted) return;  // acceptor closed
  const char* kind = classify_accept_error(ec);
  if (shared_->observer.accept_error) shared_->observer.accept_error(kind);
  if (std::string_view(kind) == "other") return do_accept();  // e.g. the peer reset before accept
  // Out of descriptors or memory: the pending connection stays in the backlog and accepting again at
  // once fails again at once. Wait, so that closing connections can free what accept needs.
  backoff_ = std::clamp(backoff_ * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  accept_backoff_.expires_after(backoff_);
  accept_backoff_.async_wait([this, shared = shared_](beast::error_code e) {
    if (e) return;
    {
      std::lock_guard lock(shared->mu);
      if (shared->stopping) return;
    }
    do_accept();
  });
}

void HttpServer::admit(tcp::socket socket) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::shared_ptr<SessionBase> session;
  std::shared_ptr<SessionBase> evicted;
  bool refused = false;
  {
    std::lock_guard lock(shared_->mu);
    const auto cap = shared_->limits.max_connections;
    if (shared_->sessions.size() >= cap) {
      if (shared_->sessions.size() < cap + kEvictionSlack) evicted = shared_->take_oldest_idle();
      refused = !evicted;
    }
  }
  if (evicted) evicted->evict_if_idle();
  if (shared_->observer.connection_shed && (evicted || refused)) {
    shared_->observer.connection_shed(refused ? "refused" : "closed_idle");
  }
  if (refused) return refuse_connection(std::move(socket), ssl_ != nullptr);
  {
    std::lock_guard lock(shared_->mu);
    if (ssl_) {
      session =
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(shared_, std::move(socket), *ssl_);
    } else {
      session = std::make_shared<Session<beast::tcp_stream>>(shared_, std::move(socket));
    }
    shared_->sessions.emplace(session.get(), session);
  }
  if (ssl_) {
    static_cast<Session<beast::ssl_stream<beast::tcp_stream>>&>(*session).run();
  } else {
    static_cast<Session<beast::tcp_stream>&>(*session).run();
  }
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

std::size_t HttpServer::max_connections() const {
  return shared_->limits.max_connections;
}

}  // namespace hsns::http
