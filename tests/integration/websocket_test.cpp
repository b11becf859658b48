// WebSocket sessions of the aggregator, with a real Beast WebSocket client over loopback:
// - in-process (HttpServer + AggregatorService with test endpoints): echo of text and binary, a message
//   over the size limit closed with 1009, plain TCP and TLS, the upgrade refusals (Origin 403, 400, 404,
//   426), broadcast to many subscribers in one order, a consumer behind in a storm kept with an overflow
//   frame and a stalled one closed with 1013 while a fast one
//   keeps receiving, idle sessions closed, sessions counted against the connection cap, 1001 on shutdown;
// - the real hsns-aggregator binary: GET /api/v1/events delivers the change event of a REST write; a
//   wrong Origin is refused with 403 and a missing token with 401, neither upgraded.
#include "http/websocket.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "http/service.h"
#include "support/aggregator_process.h"

namespace hsns::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using Headers = std::vector<std::pair<bhttp::field, std::string>>;

// Runs one asynchronous client operation to completion on the client's own io_context, bounded by a
// deadline on the TCP layer: a test never hangs on a server that does not answer.
template <typename Stream, typename Op>
beast::error_code run_op(net::io_context& ioc, Stream& ws, Op start, std::chrono::seconds limit = 20s) {
  beast::error_code result = net::error::would_block;
  beast::get_lowest_layer(ws).expires_after(limit);
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

// A WebSocket client on plain TCP.
class WsClient {
 public:
  // Connects and asks for the upgrade; answers the handshake response status (101 when upgraded).
  int open(int port, const std::string& target, const Headers& headers = {}, int receive_buffer = 0) {
    auto& socket = beast::get_lowest_layer(ws_).socket();
    socket.open(tcp::v4());
    if (receive_buffer > 0) socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
    socket.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)});
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [field, value] : headers) req.set(field, value);
    }));
    const auto host = "127.0.0.1:" + std::to_string(port);
    handshake_error_ =
        run_op(ioc_, ws_, [&](auto handler) { ws_.async_handshake(response_, host, target, handler); });
    return static_cast<int>(response_.result_int());
  }

  beast::error_code write(const std::string& data, bool binary = false) {
    ws_.binary(binary);
    return run_op(ioc_, ws_, [&](auto handler) { ws_.async_write(net::buffer(data), handler); });
  }

  struct Message {
    beast::error_code ec;
    std::string data;
    bool binary = false;
  };
  Message read(std::chrono::seconds limit = 20s) {
    beast::flat_buffer buffer;
    Message m;
    m.ec = run_op(
        ioc_, ws_, [&](auto handler) { ws_.async_read(buffer, handler); }, limit);
    m.data = beast::buffers_to_string(buffer.data());
    m.binary = ws_.got_binary();
    return m;
  }

  // Writes while a read is pending, as a client that keeps reading does; answers the read.
  Message write_while_reading(const std::string& data) {
    beast::flat_buffer buffer;
    Message m;
    beast::get_lowest_layer(ws_).expires_after(20s);
    ws_.binary(false);
    ws_.async_write(net::buffer(data), [](beast::error_code, std::size_t) {});
    ws_.async_read(buffer, [&m](beast::error_code ec, std::size_t) { m.ec = ec; });
    ioc_.restart();
    ioc_.run();
    m.data = beast::buffers_to_string(buffer.data());
    return m;
  }

  // The close code the server sent (after a read answered websocket::error::closed).
  int close_code() const { return static_cast<int>(ws_.reason().code); }
  std::string close_reason() const { return std::string(ws_.reason().reason.c_str()); }
  const websocket::response_type& response() const { return response_; }
  beast::error_code handshake_error() const { return handshake_error_; }

 private:
  net::io_context ioc_;
  websocket::stream<beast::tcp_stream> ws_{ioc_};
  websocket::response_type response_;
  beast::error_code handshake_error_;
};

// What the server reported through its observer.
struct Events {
  std::atomic<int> opened{0};
  std::atomic<int> sent{0};
  std::mutex mu;
  std::map<std::string, int> closed;

  int closed_for(const std::string& reason) {
    std::lock_guard lock(mu);
    return closed.count(reason) ? closed[reason] : 0;
  }
};

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

// HttpServer and AggregatorService in this process, with test endpoints:
//   /test/echo (WebSocket): sends every message back as it came (text or binary);
//   /test/feed (WebSocket): subscribes to hub topic "feed".
class InProcessServer {
 public:
  explicit InProcessServer(const ServerLimits& limits, net::ssl::context* tls = nullptr)
      : service_(metrics_, std::nullopt, nullptr) {
    service_.router().add_websocket(
        "/test/echo", kPublic, [](const RequestContext&, const std::shared_ptr<WebSocketChannel>& channel) {
          channel->on_message(
              [weak = std::weak_ptr<WebSocketChannel>(channel)](std::string message, bool binary) {
                if (auto c = weak.lock())
                  c->send(std::make_shared<const std::string>(std::move(message)), binary,
                          http::MessageKind::update);
              });
        });
    service_.router().add_websocket(
        "/test/feed", kPublic,
        [this](const RequestContext&, const std::shared_ptr<WebSocketChannel>& channel) {
          service_.hub().subscribe("feed", channel);
        });
    ServerObserver observer;
    observer.websocket_opened = [this] { ++events_.opened; };
    observer.websocket_message_sent = [this] { ++events_.sent; };
    observer.websocket_closed = [this](const char* reason) {
      std::lock_guard lock(events_.mu);
      ++events_.closed[reason];
    };
    server_ = std::make_unique<HttpServer>(
        ioc_, tls, limits,
        [this](Request&& req, const Peer& peer, Respond respond) {
          service_.handle(std::move(req), peer, std::move(respond));
        },
        observer);
    server_->set_upgrade_handler(
        [this](const Request& req, const Peer& peer) { return service_.upgrade(req, peer); });
    server_->listen({net::ip::make_address("127.0.0.1"), 0});
    server_->start();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  ~InProcessServer() {
    shutdown();
    work_.reset();
    ioc_.stop();  // whatever did not drain in time
    for (auto& t : threads_) t.join();
  }

  // Stops the server; answers whether every connection was gone within the limit.
  bool shutdown(std::chrono::seconds limit = 15s) {
    if (!drained_.valid()) {
      auto done = std::make_shared<std::promise<void>>();
      drained_ = done->get_future();
      server_->shutdown([done] { done->set_value(); });
    }
    return drained_.wait_for(limit) == std::future_status::ready;
  }

  int port() const { return server_->local_endpoint().port(); }
  HttpServer& server() { return *server_; }
  WebSocketHub& hub() { return service_.hub(); }
  Metrics& metrics() { return metrics_; }
  Events& events() { return events_; }

 private:
  Metrics metrics_;
  AggregatorService service_;
  Events events_;
  net::io_context ioc_;
  net::executor_work_guard<net::io_context::executor_type> work_ = net::make_work_guard(ioc_);
  std::unique_ptr<HttpServer> server_;
  std::vector<std::thread> threads_;
  std::shared_future<void> drained_;
};

ServerLimits small_limits() {
  ServerLimits limits;
  limits.websocket.max_message_bytes = std::size_t{64} * 1024;
  return limits;
}

// ---- origins ----------------------------------------------------------------------------------------------

TEST(WebSocketOrigin, NormalisesOriginsAndRefusesWhatIsNotOne) {
  EXPECT_EQ(normalize_origin("HTTPS://Dash.Example.COM:443"), "https://dash.example.com");
  EXPECT_EQ(normalize_origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(normalize_origin("http://[::1]:80"), "http://[::1]");
  EXPECT_EQ(normalize_origin("null"), std::nullopt);
  EXPECT_EQ(normalize_origin("ftp://example.com"), std::nullopt);
  EXPECT_EQ(normalize_origin("https://example.com/path"), std::nullopt);
  EXPECT_EQ(normalize_origin("https://user@example.com"), std::nullopt);
}

TEST(WebSocketOrigin, AllowsTheSameHostAndTheListOnly) {
  const std::vector<std::string> allowed{"https://dash.example.com"};
  EXPECT_TRUE(origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", {}));
  EXPECT_TRUE(origin_allowed("http://agg.example.com", "AGG.example.com:80", {}));
  EXPECT_FALSE(origin_allowed("http://127.0.0.1:9090", "127.0.0.1:8080", {}));
  EXPECT_FALSE(origin_allowed("https://evil.example.com", "agg.example.com", allowed));
  EXPECT_TRUE(origin_allowed("https://dash.example.com:443", "agg.example.com", allowed));
  EXPECT_FALSE(origin_allowed("null", "agg.example.com", allowed));
}

// ---- in-process: echo, limits, refusals
// --------------------------------------------------------------------

TEST(WebSocketKey, IsTheBase64OfSixteenBytes) {
  EXPECT_TRUE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ=="));  // RFC 6455's own example
  EXPECT_TRUE(valid_websocket_key("AAAAAAAAAAAAAAAAAAAAAA=="));
  EXPECT_FALSE(valid_websocket_key(""));
  EXPECT_FALSE(valid_websocket_key("x"));
  EXPECT_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ"));            // no padding
  EXPECT_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ=x"));          // not padding
  EXPECT_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZR=="));          // R leaves bits beyond 16 bytes
  EXPECT_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25j*Q=="));          // not the alphabet
  EXPECT_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZSBtb3JlIQ=="));  // 22 bytes
}

TEST(WebSocketServer, RefusesAKeyThatIsNotSixteenBytesWith400) {
  InProcessServer server(small_limits());
  for (const char* key : {"not base64 at all", "c2hvcnQ=", "dGhlIHNhbXBsZSBub25jZQ"}) {
    WsClient c;
    EXPECT_EQ(c.open(server.port(), "/test/echo", {{bhttp::field::sec_websocket_key, key}}), 400) << key;
    EXPECT_NE(c.response().body().find("Sec-WebSocket-Key"), std::string::npos) << c.response().body();
  }
  WsClient ok;
  EXPECT_EQ(ok.open(server.port(), "/test/echo"), 101) << ok.handshake_error().message();
  ASSERT_FALSE(ok.write("still here"));
  EXPECT_EQ(ok.read().data, "still here");  // the refusals left the server serving
}

TEST(WebSocketServer, EchoesTextAndBinaryAndClosesWith1009OnAnOversizedMessage) {
  InProcessServer server(small_limits());
  WsClient client;
  ASSERT_EQ(client.open(server.port(), "/test/echo"), 101) << client.handshake_error().message();

  ASSERT_FALSE(client.write("hello, hsns"));
  auto text = client.read();
  ASSERT_FALSE(text.ec) << text.ec.message();
  EXPECT_EQ(text.data, "hello, hsns");
  EXPECT_FALSE(text.binary);

  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>(i % 256));  // zeros and high bytes
  ASSERT_FALSE(client.write(bytes, true));
  auto binary = client.read();
  ASSERT_FALSE(binary.ec) << binary.ec.message();
  EXPECT_EQ(binary.data, bytes);
  EXPECT_TRUE(binary.binary);

  // 1 MiB against a 64 KiB limit: the server sends a close frame with 1009 once the limit is passed and
  // discards the rest of the message until the client answers the close (a clean close, no reset).
  auto refused = client.write_while_reading(std::string(std::size_t{1024} * 1024, 'x'));
  EXPECT_EQ(refused.ec, websocket::error::closed) << refused.ec.message();
  EXPECT_EQ(client.close_code(), 1009);
  EXPECT_EQ(client.close_reason(), "message too big");
  EXPECT_TRUE(eventually([&] { return server.events().closed_for("message_too_big") == 1; }));
  EXPECT_EQ(server.events().opened.load(), 1);
  EXPECT_GE(server.events().sent.load(), 2);
}

TEST(WebSocketServer, EchoesOverTlsAndClosesWith1001OnShutdown) {
  testing::TempDir dir;
  const auto cert = dir.path() / "cert.pem";
  const auto key = dir.path() / "key.pem";
  const auto gen =
      testing::run_command({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                            "subjectAltName=IP:127.0.0.1", "-keyout", key.string(), "-out", cert.string()});
  ASSERT_EQ(gen.status, 0) << gen.output;
  net::ssl::context server_tls(net::ssl::context::tls_server);
  server_tls.use_certificate_chain_file(cert.string());
  server_tls.use_private_key_file(key.string(), net::ssl::context::pem);
  InProcessServer server(small_limits(), &server_tls);

  net::ssl::context client_tls(net::ssl::context::tls_client);
  client_tls.load_verify_file(cert.string());
  client_tls.set_verify_mode(net::ssl::verify_peer);
  net::io_context ioc;
  websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws(ioc, client_tls);
  beast::get_lowest_layer(ws).socket().connect(
      {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(server.port())});
  ASSERT_FALSE(
      run_op(ioc, ws, [&](auto h) { ws.next_layer().async_handshake(net::ssl::stream_base::client, h); }));
  ASSERT_FALSE(run_op(ioc, ws, [&](auto h) { ws.async_handshake("127.0.0.1", "/test/echo", h); }));
  ASSERT_FALSE(run_op(ioc, ws, [&](auto h) { ws.async_write(net::buffer(std::string("over tls")), h); }));
  beast::flat_buffer buffer;
  ASSERT_FALSE(run_op(ioc, ws, [&](auto h) { ws.async_read(buffer, h); }));
  EXPECT_EQ(beast::buffers_to_string(buffer.data()), "over tls");

  // Shutdown: the session gets a close frame with 1001 and the server drains.
  std::thread stopper([&] { EXPECT_TRUE(server.shutdown()); });
  buffer.clear();
  const auto ec = run_op(ioc, ws, [&](auto h) { ws.async_read(buffer, h); });
  stopper.join();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(ws.reason().code, 1001);
  EXPECT_EQ(server.events().closed_for("shutdown"), 1);
}

TEST(WebSocketServer, RefusesUpgradesThatAreNotAllowedWithoutUpgrading) {
  ServerLimits limits = small_limits();
  limits.websocket.allowed_origins = {"https://dash.example.com"};
  InProcessServer server(limits);
  const auto same_host = "http://127.0.0.1:" + std::to_string(server.port());

  {
    WsClient c;
    EXPECT_EQ(c.open(server.port(), "/test/echo", {{bhttp::field::origin, "https://evil.example.com"}}), 403);
    EXPECT_NE(c.response().body().find("Origin"), std::string::npos) << c.response().body();
  }
  {
    WsClient c;
    EXPECT_EQ(c.open(server.port(), "/test/echo", {{bhttp::field::origin, same_host}}), 101);
  }
  {
    WsClient c;
    EXPECT_EQ(c.open(server.port(), "/test/echo", {{bhttp::field::origin, "https://dash.example.com"}}), 101);
  }
  {
    WsClient c;  // an HTTP route does not upgrade
    EXPECT_EQ(c.open(server.port(), "/healthz"), 400);
    EXPECT_NE(c.response().body().find("not-a-websocket-endpoint"), std::string::npos) << c.response().body();
  }
  {
    WsClient c;
    EXPECT_EQ(c.open(server.port(), "/test/nothing-here"), 404);
  }
  // A plain GET to a WebSocket endpoint: 426 naming the protocol.
  HttpClient plain("http://127.0.0.1:" + std::to_string(server.port()));
  auto r = plain.get("/test/echo");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->status, 426);
  EXPECT_EQ(r->header("Upgrade"), "websocket");
  EXPECT_TRUE(r->is_problem());
  EXPECT_EQ(server.events().opened.load(), 2);
}

// ---- in-process: the hub ---------------------------------------------------------------------------------

TEST(WebSocketHub, BroadcastsEveryMessageToEverySubscriberInOneOrder) {
  ServerLimits limits = small_limits();
  limits.websocket.queue_messages = 4096;  // two publishers burst 400 messages at once
  InProcessServer server(limits);
  constexpr std::size_t kSubscribers = 6;
  constexpr int kPerPublisher = 200;
  std::vector<std::unique_ptr<WsClient>> clients;
  for (std::size_t i = 0; i < kSubscribers; ++i) {
    clients.push_back(std::make_unique<WsClient>());
    ASSERT_EQ(clients.back()->open(server.port(), "/test/feed"), 101);
  }
  ASSERT_TRUE(eventually([&] { return server.hub().subscribers("feed") == kSubscribers; }));

  std::vector<std::vector<std::string>> received(kSubscribers);
  std::vector<std::thread> readers;
  for (std::size_t i = 0; i < kSubscribers; ++i) {
    readers.emplace_back([&, i] {
      for (int n = 0; n < 2 * kPerPublisher; ++n) {
        auto m = clients[i]->read();
        if (m.ec) {
          ADD_FAILURE() << "subscriber " << i << " after " << n << " messages: " << m.ec.message();
          return;
        }
        received[i].push_back(m.data);
      }
    });
  }
  std::vector<std::thread> publishers;
  for (const char* name : {"a", "b"}) {
    publishers.emplace_back([&, name] {
      for (int n = 0; n < kPerPublisher; ++n) {
        EXPECT_EQ(server.hub().publish("feed", std::string(name) + "-" + std::to_string(n)), kSubscribers);
      }
    });
  }
  for (auto& t : publishers) t.join();
  for (auto& t : readers) t.join();

  for (std::size_t i = 0; i < kSubscribers; ++i) {
    ASSERT_EQ(received[i].size(), 2u * kPerPublisher) << "subscriber " << i;
    EXPECT_EQ(received[i], received[0]) << "subscriber " << i << " saw another order";
    int next_a = 0, next_b = 0;  // each publisher's messages in its order
    for (const auto& m : received[i]) {
      const int n = std::stoi(m.substr(2));
      EXPECT_EQ(n, m[0] == 'a' ? next_a++ : next_b++) << m;
    }
  }
  EXPECT_EQ(server.events().closed_for("slow_consumer"), 0);
}

// The number of updates an overflow frame says were missed, or -1 when m is not one.
long long missed_in(const std::string& m) {
  const auto j = nlohmann::json::parse(m, nullptr, false);
  if (!j.is_object() || j.value("type", "") != "overflow") return -1;
  return j.value("missed", -1LL);
}

// A consumer that falls behind in a storm keeps its session: the updates it could not take become one
// overflow frame counting them, and the stream goes on after it; a fast one receives everything.
TEST(WebSocketHub, AConsumerBehindInAStormGetsAnOverflowFrameWhileAFastOneReceivesEverything) {
  ServerLimits limits = small_limits();
  limits.websocket.queue_messages = 16;
  limits.websocket.queue_bytes = std::size_t{256} * 1024;
  InProcessServer server(limits);
  WsClient slow;  // reads nothing until the storm is over
  ASSERT_EQ(slow.open(server.port(), "/test/feed", {}, 4096), 101);
  WsClient fast;
  ASSERT_EQ(fast.open(server.port(), "/test/feed"), 101);
  ASSERT_TRUE(eventually([&] { return server.hub().subscribers("feed") == 2; }));

  const std::string padding(std::size_t{8} * 1024, '.');
  auto message = [&](int n) { return std::to_string(n) + " " + padding; };
  std::atomic<int> fast_received{0};
  std::atomic<bool> fast_in_order{true};
  std::thread fast_reader([&] {
    for (int n = 0;; ++n) {
      auto m = fast.read();
      if (m.ec) {
        ADD_FAILURE() << "the fast subscriber lost its session after " << n
                      << " messages: " << m.ec.message();
        return;
      }
      if (m.data == "end") return;
      if (m.data != message(n)) fast_in_order = false;
      ++fast_received;
    }
  });

  // Publish in small steps, each waiting for the fast subscriber, until the slow one's queue is full,
  // then 50 more.
  constexpr int kLimit = 20'000;
  int published = 0;
  int overflow_at = -1;
  for (; published < kLimit && (overflow_at < 0 || published < overflow_at + 50); ++published) {
    const auto delivered = server.hub().publish("feed", message(published));
    if (delivered < 2 && overflow_at < 0) overflow_at = published;
    EXPECT_GE(delivered, 1u) << "message " << published << " reached no subscriber";
    if (published % 4 == 3 && !eventually([&] { return fast_received.load() > published; })) {
      ADD_FAILURE() << "the fast subscriber stalled at message " << published;
      break;
    }
  }
  EXPECT_EQ(server.hub().publish("feed", "end"), 1u);  // the slow one is still behind its summary
  fast_reader.join();
  ASSERT_GE(overflow_at, 0) << "the slow consumer's queue never filled in " << kLimit << " messages";
  EXPECT_EQ(fast_received.load(), published);
  EXPECT_TRUE(fast_in_order.load());

  // The slow consumer now reads: what was on the wire, in order from the first message, then the
  // overflow frame accounting for every other message (and the "end"), then the stream goes on.
  int n = 0;
  WsClient::Message m;
  for (;; ++n) {
    m = slow.read();
    ASSERT_FALSE(m.ec) << m.ec.message();
    if (missed_in(m.data) >= 0) break;
    ASSERT_EQ(m.data, message(n));
  }
  EXPECT_LE(n, overflow_at);
  EXPECT_EQ(n + missed_in(m.data), published + 1);
  EXPECT_EQ(server.hub().publish("feed", "after the storm"), 2u);
  EXPECT_EQ(slow.read().data, "after the storm");
  EXPECT_EQ(fast.read().data, "after the storm");
  EXPECT_EQ(server.events().closed_for("slow_consumer"), 0);
}

// Issue 31: 1,000 link-down changes of ~3.8 KB in one burst closed all three continuously reading
// subscribers. Each keeps its session and every change is either received or counted as missed.
TEST(WebSocketHub, ReadersWhoKeepReadingSurviveABurst) {
  ServerLimits limits = small_limits();  // queue_bytes 1 MiB by default: a burst of 3.8 MB overflows it
  InProcessServer server(limits);
  constexpr int kReaders = 3;
  constexpr int kBurst = 1000;
  std::vector<std::unique_ptr<WsClient>> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.push_back(std::make_unique<WsClient>());
    ASSERT_EQ(readers.back()->open(server.port(), "/test/feed"), 101);
  }
  ASSERT_TRUE(eventually([&] { return server.hub().subscribers("feed") == kReaders; }));
  std::vector<long long> accounted(kReaders, 0);
  std::vector<std::thread> threads;
  threads.reserve(kReaders);
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      while (true) {
        auto m = readers[i]->read();
        if (m.ec) {
          ADD_FAILURE() << "reader " << i << " lost its session: " << m.ec.message();
          return;
        }
        if (m.data == "end") return;
        const auto missed = missed_in(m.data);
        accounted[i] += missed >= 0 ? missed : 1;
      }
    });
  }
  const std::string change(3800, 'x');
  for (int n = 0; n < kBurst; ++n) server.hub().publish("feed", change);
  ASSERT_TRUE(eventually([&] { return server.hub().publish("feed", "end") == kReaders; }));
  for (auto& t : threads) t.join();
  // "end" itself may have been sent after a summary that counted some of the publishes of "end" above.
  for (int i = 0; i < kReaders; ++i) EXPECT_GE(accounted[i], kBurst) << "reader " << i;
  EXPECT_EQ(server.events().closed_for("slow_consumer"), 0);
}

// A consumer that has stopped reading is closed with 1013 once its overflow frame stayed unwritten for the
// stall timeout.
TEST(WebSocketHub, ClosesAStalledConsumerWith1013) {
  ServerLimits limits = small_limits();
  limits.websocket.queue_messages = 16;
  limits.websocket.queue_bytes = std::size_t{64} * 1024;
  limits.websocket.stall_timeout = 300ms;
  InProcessServer server(limits);
  WsClient stalled;
  ASSERT_EQ(stalled.open(server.port(), "/test/feed", {}, 4096), 101);
  ASSERT_TRUE(eventually([&] { return server.hub().subscribers("feed") == 1; }));
  const std::string padding(std::size_t{64} * 1024, '.');
  // Paced, so that the queue drains into the socket buffers until they are full (a consumer that still
  // takes bytes, however slowly, lets its overflow frames out and is not stalled); then nothing moves.
  for (int n = 0; n < 4000 && server.events().closed_for("slow_consumer") == 0; ++n) {
    server.hub().publish("feed", padding);
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_TRUE(eventually([&] { return server.events().closed_for("slow_consumer") == 1; }));
  EXPECT_TRUE(eventually([&] { return server.hub().subscribers("feed") == 0; }));
}

TEST(WebSocketServer, ClosesIdleSessionsAndCountsThemAsConnections) {
  ServerLimits limits = small_limits();
  limits.websocket.idle_timeout = 1000ms;
  limits.max_connections = 2;
  InProcessServer server(limits);
  WsClient a, b;  // neither reads, so neither answers the server's ping
  ASSERT_EQ(a.open(server.port(), "/test/echo"), 101);
  ASSERT_EQ(b.open(server.port(), "/test/echo"), 101);
  ASSERT_TRUE(eventually([&] { return server.server().open_connections() == 2; }));
  // At the cap with two open WebSocket sessions (never idle in the cap's sense): a newcomer is refused.
  HttpClient plain("http://127.0.0.1:" + std::to_string(server.port()));
  auto refused = plain.get("/healthz");
  EXPECT_TRUE(!refused || refused->status == 503) << refused->status;
  EXPECT_TRUE(eventually([&] { return server.events().closed_for("idle") == 2; }, 10s));
  EXPECT_TRUE(eventually([&] { return server.server().open_connections() == 0; }));
}

// ---- the real aggregator
// ------------------------------------------------------------------------------------

TEST(EventsStream, DeliversTheChangeEventOfARestWrite) {
  testing::TempDir dir;
  testing::AggregatorProcess agg(dir.path());
  agg.start();
  WsClient events;
  ASSERT_EQ(events.open(agg.port(), "/api/v1/events",
                        {{bhttp::field::authorization, std::string("Bearer ") + testing::kViewerToken}}),
            101)
      << events.response().body() << agg.log();

  // The subscription is in place once the handshake is answered (the endpoint runs before the 101).
  auto c = agg.client();
  auto created = c.post("/api/v1/subnets", R"({"name":"ws-feed","cidr":"198.18.0.0/24"})");
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : created.error());
  auto m = events.read();
  ASSERT_FALSE(m.ec) << m.ec.message() << agg.log();
  const auto event = nlohmann::json::parse(m.data);
  EXPECT_EQ(event["type"], "changed");
  EXPECT_EQ(event["route"], "/api/v1/subnets");
  EXPECT_EQ(event["method"], "POST");
  EXPECT_EQ(event["status"], 201);
  EXPECT_TRUE(event["at"].is_string() && event["at"].get<std::string>().size() == 20) << event.dump();

  // Reads publish nothing: the next event is that of the next write.
  ASSERT_TRUE(c.get("/api/v1/subnets"));
  auto del = c.request("DELETE", "/api/v1/subnets/does-not-exist");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 404);
  const std::string id = nlohmann::json::parse(created->body)["id"];
  auto renamed = c.request("PATCH", "/api/v1/subnets/" + id, R"({"name":"ws-feed-2"})");
  ASSERT_TRUE(renamed && renamed->status == 200) << (renamed ? renamed->body : renamed.error());
  auto next = events.read();
  ASSERT_FALSE(next.ec) << next.ec.message();
  const auto patched = nlohmann::json::parse(next.data);
  EXPECT_EQ(patched["route"], "/api/v1/subnets/{subnet_id}") << next.data;
  EXPECT_EQ(patched["method"], "PATCH");
  EXPECT_EQ(patched["status"], 200);

  const auto metrics = c.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hsns_websocket_sessions_open 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("hsns_websocket_messages_sent_total"), std::string::npos);
  // Shutdown: the session gets 1001 (read while the aggregator stops: it waits for the close handshake).
  auto last_read = std::async(std::launch::async, [&] { return events.read(); });
  EXPECT_EQ(agg.stop(), 0) << agg.log();
  auto last = last_read.get();
  EXPECT_EQ(last.ec, websocket::error::closed) << last.ec.message();
  EXPECT_EQ(events.close_code(), 1001);
}

TEST(EventsStream, RefusesAWrongOriginAndAMissingTokenWithoutUpgrading) {
  testing::TempDir dir;
  testing::AggregatorProcess agg(dir.path());
  agg.start();
  const std::string bearer = std::string("Bearer ") + testing::kViewerToken;
  {
    WsClient c;
    EXPECT_EQ(
        c.open(agg.port(), "/api/v1/events",
               {{bhttp::field::authorization, bearer}, {bhttp::field::origin, "https://evil.example.com"}}),
        403);
    EXPECT_NE(c.handshake_error(), beast::error_code{});
  }
  {
    WsClient c;
    EXPECT_EQ(c.open(agg.port(), "/api/v1/events"), 401);
    EXPECT_EQ(c.response()[bhttp::field::www_authenticate], "Bearer realm=\"hsns\"");
  }
  {
    WsClient c;  // same host is allowed without configuration
    EXPECT_EQ(c.open(agg.port(), "/api/v1/events",
                     {{bhttp::field::authorization, bearer},
                      {bhttp::field::origin, "http://127.0.0.1:" + std::to_string(agg.port())}}),
              101);
  }
  const auto metrics = agg.client().get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hsns_http_rejected_requests_total{code=\"403\"} 1"), std::string::npos);
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

}  // namespace
}  // namespace hsns::http
