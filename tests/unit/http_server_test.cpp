// HttpServer in-process over loopback, where the test controls the process's descriptor limit and the
// server's limits:
// - accept errors from descriptor exhaustion back off instead of spinning, and accepting resumes once
//   descriptors are free;
// - the request limits (issue 10): 431 for an oversized header, 408 for a slow client while other clients
//   are answered promptly, the pipeline bound while a client does not read, a Content-Length that does not
//   match the body (shorter: 408 and close; longer: the rest is the next request, or a 400), bad chunk
//   sizes (400; a well-formed size over the body limit 413).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/parser.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http/server.h"

namespace hsns::http {
namespace {

using namespace std::chrono_literals;

bool connect_socket(int fd, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

int new_socket() {
  return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

// The highest descriptor in use + 1: a limit at this value leaves no descriptor free.
rlim_t descriptors_in_use() {
  rlim_t highest = 0;
  for (int fd = 0; fd < 65536; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) highest = static_cast<rlim_t>(fd) + 1;
  }
  return highest;
}

TEST(HttpServer, AcceptBacksOffWhileDescriptorsAreExhaustedAndResumesAfter) {
  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
  boost::asio::io_context ioc;
  std::atomic<int> descriptor_errors{0};
  ServerObserver observer;
  observer.accept_error = [&](const char* kind) {
    if (std::string_view(kind) == "descriptors") ++descriptor_errors;
  };
  HttpServer server(
      ioc, nullptr, ServerLimits{},
      [](Request&& req, const Peer&, const Respond& respond) {
        Response res{bhttp::status::ok, req.version()};
        res.prepare_payload();
        respond(std::move(res));
      },
      observer);
  server.listen({boost::asio::ip::make_address("127.0.0.1"), 0});
  const int port = server.local_endpoint().port();

  // The I/O thread starts first: creating a thread (and sanitizer bookkeeping) needs descriptors too.
  auto work = boost::asio::make_work_guard(ioc);
  std::thread io([&] { ioc.run(); });
  server.start();
  // One connection served before the exhaustion warms UBSan's dynamic-type cache: a cache miss makes
  // it open a pipe, which without a free descriptor it reports as an invalid object.
  {
    const int fd = new_socket();
    ASSERT_TRUE(connect_socket(fd, port));
    const std::string request = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    char buf[256];
    ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
    ::close(fd);
    while (server.open_connections() > 0) std::this_thread::sleep_for(5ms);
  }

  // The clients' sockets exist before the exhaustion; they connect after it and wait in the kernel's
  // backlog until accepted.
  std::vector<int> clients;
  clients.reserve(8);
  for (int i = 0; i < 8; ++i) clients.push_back(new_socket());
  // No descriptor left: every accept fails with EMFILE. (The cap was fixed at listen(), so this is the
  // path a process reaches when something else took its descriptors.)
  {
    const rlimit none{descriptors_in_use(), original.rlim_max};
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none), 0);
    // Fill every free number below the limit, so accept has nothing.
    std::vector<int> fillers;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
    for (const int fd : clients) ASSERT_TRUE(connect_socket(fd, port));
    std::this_thread::sleep_for(1500ms);
    // Back-off doubling from 10 ms to 1 s makes at most about ten attempts in 1.5 s; a spinning loop
    // makes hundreds of thousands.
    EXPECT_GE(descriptor_errors.load(), 1) << "accept never hit the descriptor limit";
    EXPECT_LE(descriptor_errors.load(), 20) << "accept spins on EMFILE";
    EXPECT_EQ(server.open_connections(), 0u);
    for (const int fd : fillers) ::close(fd);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
  }
  // Descriptors are free again: the waiting connections are taken within the longest back-off.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server.open_connections() < clients.size() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(server.open_connections(), clients.size());
  for (const int fd : clients) ::close(fd);
  server.shutdown([&] { ioc.stop(); });
  work.reset();
  io.join();
}

// ---- the request limits ----

// A server on 127.0.0.1 with one I/O thread whose handler answers 200 with "<method> <target> <body
// bytes>" and, when `filler` is set, that many more bytes (to fill a client's socket buffers).
class LimitsServer {
 public:
  explicit LimitsServer(ServerLimits limits, std::size_t filler = 0)
      : server_(ioc_, nullptr, std::move(limits),
                [this, filler](Request&& req, const Peer&, const Respond& respond) {
                  ++handled;
                  Response res{bhttp::status::ok, req.version()};
                  res.keep_alive(req.keep_alive());
                  res.body() = std::string(req.method_string()) + " " + std::string(req.target()) + " " +
                               std::to_string(req.body().size()) + "\n" + std::string(filler, '.');
                  res.prepare_payload();
                  respond(std::move(res));
                }) {
    server_.listen({boost::asio::ip::make_address("127.0.0.1"), 0});
    server_.start();
    io_ = std::thread([this] { ioc_.run(); });
  }
  ~LimitsServer() {
    server_.shutdown([this] { ioc_.stop(); });
    work_.reset();
    io_.join();
  }
  LimitsServer(const LimitsServer&) = delete;
  LimitsServer& operator=(const LimitsServer&) = delete;

  int port() const { return server_.local_endpoint().port(); }
  std::atomic<int> handled{0};

 private:
  boost::asio::io_context ioc_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{ioc_.get_executor()};
  HttpServer server_;
  std::thread io_;
};

struct RawResponse {
  int status = 0;
  std::string body;
  bool keep_alive = true;
};

// A client socket that sends raw bytes and reads responses with deadlines.
class RawClient {
 public:
  // receive_buffer > 0 shrinks SO_RCVBUF before connecting (so that a client that does not read stalls
  // the server's writes early).
  explicit RawClient(int port, int receive_buffer = 0) : fd_(new_socket()) {
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    connected_ = connect_socket(fd_, port);
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool send(std::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  // The next response, or nullopt when the connection closes or nothing complete comes within `timeout`.
  std::optional<RawResponse> read_response(std::chrono::milliseconds timeout) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.body_limit(std::uint64_t{1} << 30);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!pending_.empty()) {
        boost::system::error_code ec;
        const auto used = parser.put(boost::asio::buffer(pending_), ec);
        pending_.erase(0, used);
        if (ec && ec != bhttp::error::need_more) return std::nullopt;
        if (parser.is_done()) {
          const auto& res = parser.get();
          return RawResponse{static_cast<int>(res.result_int()), res.body(), res.keep_alive()};
        }
        if (used > 0 && !ec) continue;
      }
      if (!receive(deadline)) return std::nullopt;
    }
  }

  // Every byte the server sends until it closes the connection or the timeout passes.
  std::string read_until_closed(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (receive(deadline)) {
    }
    return std::exchange(pending_, {});
  }
  bool closed() const { return closed_; }

  // True when the server closes the connection within `timeout` (bytes before the close are dropped).
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (receive(deadline)) pending_.clear();
    return closed_;
  }

 private:
  // Appends what arrives before the deadline; false at the deadline or when the peer closed.
  bool receive(std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[65536];
    const auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  bool connected_ = false;
  bool closed_ = false;
  std::string pending_;
};

ServerLimits quick_limits() {
  ServerLimits limits;
  limits.idle_timeout = 1500ms;
  limits.read_timeout = 1500ms;
  return limits;
}

std::string get(std::string_view target, std::string_view extra = "") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: a\r\n" + std::string(extra) + "\r\n";
}

TEST(HttpServerLimits, OversizedHeaderGets431AndTheConnectionCloses) {
  ServerLimits limits = quick_limits();
  limits.header_limit = 1024;
  LimitsServer server(limits);

  RawClient fits(server.port());
  ASSERT_TRUE(fits.send(get("/fits", "X-Pad: " + std::string(900, 'a') + "\r\n")));
  auto ok = fits.read_response(5s);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;

  for (const std::string& field : {"X-Pad: " + std::string(2000, 'a') + "\r\n",
                                   std::string(40, 'X') + ": " + std::string(40, 'v') + "\r\n"}) {
    // One long field, or many short ones adding up over the limit.
    std::string fields = field;
    while (fields.size() <= 2 * limits.header_limit) fields += field;
    RawClient c(server.port());
    ASSERT_TRUE(c.send(get("/big", fields)));
    auto r = c.read_response(5s);
    ASSERT_TRUE(r) << "no answer to an oversized header";
    EXPECT_EQ(r->status, 431) << r->body;
    EXPECT_NE(r->body.find("exceeds 1024 bytes"), std::string::npos) << r->body;
    EXPECT_FALSE(r->keep_alive);
    EXPECT_TRUE(c.closed_within(5s));
  }
  EXPECT_EQ(server.handled.load(), 1);
}

TEST(HttpServerLimits, SlowClientsGet408WhileOthersAreAnsweredPromptly) {
  const ServerLimits limits = quick_limits();
  LimitsServer server(limits);
  // Slow-loris clients: a header trickling in one byte every 100 ms, and a complete header whose body
  // trickles in the same way. Each holds its connection until the server's deadline.
  constexpr int kSlowHeaders = 16;
  constexpr int kSlowBodies = 8;
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < kSlowHeaders + kSlowBodies; ++i) {
    slow.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send(i < kSlowHeaders ? "GET /slow HTTP/1.1\r\nHost: a\r\nX-Trickle: "
                                                   : "POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: "
                                                     "1000\r\n\r\n"));
  }
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      for (auto& c : slow) (void)c->send("a");
      std::this_thread::sleep_for(100ms);
    }
  });

  // Meanwhile another client's requests are answered at once, one after the other.
  RawClient prompt(server.port());
  std::chrono::steady_clock::duration slowest{};
  int answered = 0;
  while (std::chrono::steady_clock::now() - start < limits.read_timeout) {
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(prompt.send(get("/prompt")));
    auto r = prompt.read_response(5s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    slowest = std::max(slowest, std::chrono::steady_clock::now() - sent);
    ++answered;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(answered, 10);
  EXPECT_LT(slowest, 500ms) << "a request waited behind the slow clients (their deadline is 1.5 s)";

  // Every slow client gets its 408 once its deadline passes (with some slack for a loaded machine), and
  // its connection closes; none of them reached the handler.
  for (auto& c : slow) {
    auto r = c->read_response(limits.read_timeout + 5s);
    ASSERT_TRUE(r) << "a slow client got no answer";
    EXPECT_EQ(r->status, 408) << r->body;
    EXPECT_TRUE(c->closed_within(5s));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, limits.read_timeout + 6s);
  stop = true;
  trickle.join();
  EXPECT_EQ(server.handled.load(), answered);
}

TEST(HttpServerLimits, PipelinedRequestsAreBoundedWhileTheClientDoesNotRead) {
  ServerLimits limits;
  limits.pipeline_limit = 2;
  // Responses far larger than the socket buffers: the first write stalls while the client reads nothing.
  constexpr std::size_t kFiller = std::size_t{8} << 20;
  LimitsServer server(limits, kFiller);
  RawClient c(server.port(), 16 * 1024);
  std::string requests;
  constexpr int kRequests = 6;
  for (int i = 0; i < kRequests; ++i) requests += get("/r" + std::to_string(i));
  ASSERT_TRUE(c.send(requests));
  std::this_thread::sleep_for(500ms);
  // The response being written and the one queued behind it; no request beyond the bound is read.
  EXPECT_EQ(server.handled.load(), static_cast<int>(limits.pipeline_limit));

  // Once the client reads, every request is answered, in order.
  for (int i = 0; i < kRequests; ++i) {
    auto r = c.read_response(20s);
    ASSERT_TRUE(r) << "response " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body.substr(0, r->body.find('\n')), "GET /r" + std::to_string(i) + " 0");
    EXPECT_EQ(r->body.size(), r->body.find('\n') + 1 + kFiller);
  }
  EXPECT_EQ(server.handled.load(), kRequests);
}

TEST(HttpServerLimits, BodyShorterThanContentLengthGets408AndNothingIsHandled) {
  ServerLimits limits = quick_limits();
  limits.read_timeout = 500ms;
  LimitsServer server(limits);
  RawClient c(server.port());
  ASSERT_TRUE(c.send("POST /short HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"));
  const auto start = std::chrono::steady_clock::now();
  auto r = c.read_response(5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408) << r->body;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 400ms);
  EXPECT_TRUE(c.closed_within(5s));
  EXPECT_EQ(server.handled.load(), 0);
}

TEST(HttpServerLimits, BytesBeyondContentLengthAreTheNextRequest) {
  LimitsServer server(quick_limits());
  {
    // The extra bytes are a request of their own: two answers, in order.
    RawClient c(server.port());
    ASSERT_TRUE(c.send("POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" + get("/second")));
    auto first = c.read_response(5s);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->status, 200);
    EXPECT_EQ(first->body, "POST /first 3\n");
    auto second = c.read_response(5s);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->status, 200);
    EXPECT_EQ(second->body, "GET /second 0\n");
  }
  {
    // The extra bytes are no request: the first is answered, the rest gets 400 and the connection closes.
    RawClient c(server.port());
    ASSERT_TRUE(c.send("POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcdef ghi\r\n\r\n"));
    auto first = c.read_response(5s);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->body, "POST /first 3\n");
    auto rest = c.read_response(5s);
    ASSERT_TRUE(rest);
    EXPECT_EQ(rest->status, 400) << rest->body;
    EXPECT_TRUE(c.closed_within(5s));
  }
  EXPECT_EQ(server.handled.load(), 3);
}

// A refusal made before any handler runs still answers HEAD without a body: the client reads no body after
// a HEAD response, so a body would be read as the next response (found by fuzz_http_session).
TEST(HttpServerLimits, RefusalsOfHeadRequestsCarryNoBody) {
  ServerLimits limits = quick_limits();
  limits.body_limit = 1024;
  LimitsServer server(limits);
  const std::pair<std::string, std::string> cases[] = {
      {"HEAD /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "HTTP/1.1 400 "},
      {"HEAD /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n", "HTTP/1.1 413 "},
      {"HEAD /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 400 "},
  };
  for (const auto& [request, status_line] : cases) {
    RawClient c(server.port());
    ASSERT_TRUE(c.send(request));
    const std::string bytes = c.read_until_closed(5s);
    EXPECT_TRUE(c.closed()) << request;
    EXPECT_EQ(bytes.rfind(status_line, 0), 0u) << bytes;
    // The header announces the problem document's length; nothing follows the header.
    EXPECT_NE(bytes.find("Content-Length: "), std::string::npos) << bytes;
    EXPECT_EQ(bytes.find("Content-Length: 0\r\n"), std::string::npos) << bytes;
    EXPECT_EQ(bytes.find("\r\n\r\n") + 4, bytes.size()) << bytes;
  }
  EXPECT_EQ(server.handled.load(), 0);
}

TEST(HttpServerLimits, BadChunkSizesGet400AndNothingIsHandled) {
  ServerLimits limits = quick_limits();
  limits.body_limit = 4096;
  LimitsServer server(limits);
  const std::string head = "POST /chunked HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  struct Case {
    const char* what;
    std::string chunks;
    int status;
  };
  const Case cases[] = {
      {"not hex", "zz\r\nabc\r\n0\r\n\r\n", 400},
      {"negative", "-1\r\na\r\n0\r\n\r\n", 400},
      {"0x prefix", "0x3\r\nabc\r\n0\r\n\r\n", 400},
      {"empty size line", "\r\nabc\r\n0\r\n\r\n", 400},
      {"space inside", "1 2\r\nabc\r\n0\r\n\r\n", 400},
      {"over 64 bits", "1" + std::string(16, '0') + "\r\nabc\r\n0\r\n\r\n", 400},
      {"data longer than its size", "3\r\nabcdef\r\n0\r\n\r\n", 400},
      {"bare LF after the size", "3\nabc\r\n0\r\n\r\n", 400},
      {"well-formed but over the body limit", "100000\r\nabc", 413},
  };
  for (const auto& tc : cases) {
    RawClient c(server.port());
    ASSERT_TRUE(c.send(head + tc.chunks));
    auto r = c.read_response(5s);
    ASSERT_TRUE(r) << tc.what << ": no answer";
    EXPECT_EQ(r->status, tc.status) << tc.what << ": " << r->body;
    EXPECT_TRUE(c.closed_within(5s)) << tc.what;
  }
  EXPECT_EQ(server.handled.load(), 0);
  // A well-formed chunked body is read.
  RawClient c(server.port());
  ASSERT_TRUE(c.send(head + "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n"));
  auto r = c.read_response(5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "POST /chunked 5\n");
}

}  // namespace
}  // namespace hsns::http
