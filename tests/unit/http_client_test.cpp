#include "hsns/http_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <thread>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

class TestServer {
 public:
  TestServer() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { loop(); });
  }
  ~TestServer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket s(ioc_);
    s.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_; }

 private:
  void loop() {
    while (!stop_) {
      tcp::socket sock(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(sock, ec);
      if (ec || stop_) return;
      ++accepted_;
      boost::beast::flat_buffer buf;
      while (true) {
        // Bodies up to 8 MiB (Beast's parser allows 1 MiB by default): the body-source test sends 3 MiB.
        http::request_parser<http::string_body> parser;
        parser.body_limit(8 * 1024 * 1024);
        http::read(sock, buf, parser, ec);
        if (ec) break;
        const auto req = parser.release();
        http::response<http::string_body> res{http::status::ok, 11};
        std::string target(req.target());
        bool close_after = false;
        if (target == "/slow") std::this_thread::sleep_for(std::chrono::milliseconds(800));
        if (target == "/close-after") close_after = true;
        if (target == "/conn-close") res.keep_alive(false);
        nlohmann::json j = {{"method", std::string(req.method_string())},
                            {"target", target},
                            {"auth", std::string(req[http::field::authorization])},
                            {"ct", std::string(req[http::field::content_type])},
                            {"x", std::string(req["X-Test"])},
                            {"host", std::string(req[http::field::host])},
                            {"body", req.body()}};
        res.set(http::field::content_type, "application/json; charset=utf-8");
        res.set(http::field::etag, "\"g1\"");
        res.body() = j.dump();
        res.prepare_payload();
        http::write(sock, res, ec);
        if (ec || close_after || !res.keep_alive()) break;
      }
      sock.close(ec);
    }
  }
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST(HttpClient, KeepAliveAndHeaders) {
  TestServer server;
  hsns::HttpClient client(server.url() + "/", std::string("tok"));
  for (int i = 0; i < 5; ++i) {
    auto r = client.post("/echo?a=1", R"({"k":1})");
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->status, 200);
    auto j = nlohmann::json::parse(r->body);
    EXPECT_EQ(j["method"], "POST");
    EXPECT_EQ(j["target"], "/echo?a=1");
    EXPECT_EQ(j["auth"], "Bearer tok");
    EXPECT_EQ(j["ct"], "application/json");
    EXPECT_EQ(j["body"], R"({"k":1})");
    EXPECT_EQ(r->etag, "\"g1\"");
    EXPECT_TRUE(r->is_json());
    EXPECT_FALSE(r->is_problem());
    EXPECT_EQ(r->header("ETAG"), "\"g1\"");
  }
  EXPECT_EQ(client.connections_opened(), 1u);
  auto r = client.request("GET", "echo", "", "", {{"Authorization", "Bearer other"}, {"X-Test", "v"}});
  ASSERT_TRUE(r) << r.error();
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["auth"], "Bearer other");
  EXPECT_EQ(j["x"], "v");
  EXPECT_EQ(j["ct"], "");
  EXPECT_EQ(j["target"], "/echo");
  client.set_bearer_token("");
  j = nlohmann::json::parse(client.get("/echo")->body);
  EXPECT_EQ(j["auth"], "");
}

TEST(HttpClient, PrefixAndCustomMethod) {
  TestServer server;
  hsns::HttpClient client(server.url() + "/base/");
  auto r = client.request("PURGE", "/x");
  ASSERT_TRUE(r) << r.error();
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["target"], "/base/x");
  EXPECT_EQ(j["method"], "PURGE");
}

TEST(HttpClient, ReconnectsOnceWhenServerClosedIdleConnection) {
  TestServer server;
  hsns::HttpClient client(server.url());
  ASSERT_TRUE(client.get("/close-after"));
  auto r = client.get("/echo");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(client.connections_opened(), 2u);
  ASSERT_TRUE(client.get("/conn-close"));
  ASSERT_TRUE(client.get("/echo"));
  EXPECT_EQ(client.connections_opened(), 3u);
  EXPECT_EQ(server.accepted(), 3);
}

// A body read piece by piece; records the largest read and the offsets asked for.
class CountingSource final : public hsns::HttpBodySource {
 public:
  CountingSource(std::size_t size, std::uint64_t fail_at = UINT64_MAX) : size_(size), fail_at_(fail_at) {}
  std::uint64_t size() const override { return size_; }
  tl::expected<std::size_t, std::string> read(std::uint64_t offset, char* buf, std::size_t n) const override {
    if (offset >= fail_at_) return tl::unexpected(std::string("disk went away"));
    if (offset == 0) ++starts;
    const std::size_t k = std::min<std::size_t>(n, size_ - offset);
    for (std::size_t i = 0; i < k; ++i) buf[i] = byte_at(offset + i);
    largest = std::max(largest, k);
    read_total += k;
    return k;
  }
  static char byte_at(std::uint64_t i) { return static_cast<char>('a' + (i * 31 + i / 7) % 26); }
  std::string expected() const {
    std::string out(size_, '\0');
    for (std::size_t i = 0; i < size_; ++i) out[i] = byte_at(i);
    return out;
  }
  mutable std::size_t largest = 0;
  mutable std::uint64_t read_total = 0;
  mutable int starts = 0;

 private:
  std::size_t size_;
  std::uint64_t fail_at_;
};

TEST(HttpClient, ABodySourceIsSentInBoundedPiecesWithItsLength) {
  TestServer server;
  hsns::HttpClient client(server.url());
  const CountingSource source(3 * 1024 * 1024 + 17);
  auto r = client.request("POST", "/echo", source, "application/octet-stream");
  ASSERT_TRUE(r) << r.error();
  const auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["body"].get<std::string>(), source.expected());
  EXPECT_EQ(j["ct"], "application/octet-stream");
  EXPECT_LE(source.largest, 64U * 1024) << "never more than one 64 KiB piece in memory";
  EXPECT_EQ(source.read_total, source.size()) << "each byte read once";
  // The server closed the kept-alive connection: the resent request reads the source from its start.
  ASSERT_TRUE(client.get("/close-after"));
  const CountingSource again(200'000);
  r = client.request("PUT", "/echo", again, "application/octet-stream");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(nlohmann::json::parse(r->body)["body"].get<std::string>(), again.expected());
}

TEST(HttpClient, ABodySourceThatFailsAbortsTheRequestAndTheClientRecovers) {
  TestServer server;
  hsns::HttpClient client(server.url());
  const CountingSource broken(1024 * 1024, 256 * 1024);
  auto r = client.request("POST", "/echo", broken, "application/octet-stream");
  ASSERT_FALSE(r) << "a body cut short is never a whole request";
  auto ok = client.post("/echo", R"({"k":2})");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(nlohmann::json::parse(ok->body)["body"], R"({"k":2})");
}

TEST(HttpClient, TimeoutIsAnErrorAndClientRecovers) {
  TestServer server;
  hsns::HttpClient::Options o;
  o.timeout = std::chrono::milliseconds(200);
  hsns::HttpClient client(server.url(), o);
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.get("/slow");
  ASSERT_FALSE(r);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(700));
  EXPECT_NE(r.error().find("GET http://127.0.0.1:"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("/slow"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("timed out"), std::string::npos) << r.error();
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  auto ok = client.get("/echo");
  ASSERT_TRUE(ok) << ok.error();
}

TEST(HttpClient, ConnectionRefused) {
  hsns::HttpClient client("http://127.0.0.1:1");
  auto r = client.get("/x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "GET http://127.0.0.1:1/x: connect: Connection refused");
}

TEST(HttpClient, BadUrls) {
  EXPECT_FALSE(hsns::HttpClient::make("127.0.0.1:8080"));
  EXPECT_FALSE(hsns::HttpClient::make("ftp://x"));
  EXPECT_FALSE(hsns::HttpClient::make("http://"));
  EXPECT_FALSE(hsns::HttpClient::make("http://h:8080/?q=1"));
  EXPECT_TRUE(hsns::HttpClient::make("http://[::1]:8080"));
  EXPECT_THROW(hsns::HttpClient("https://x", hsns::HttpClient::Options{"", "/nonexistent", {}, ""}),
               std::invalid_argument);
}

TEST(HttpClient, Encoding) {
  EXPECT_EQ(hsns::encode_path_segment("a/b c"), "a%2Fb%20c");
  EXPECT_EQ(hsns::encode_query_value("a&b=c+d"), "a%26b%3Dc%2Bd");
  EXPECT_EQ(hsns::encode_query_value("node-1_x.y~"), "node-1_x.y~");
}

TEST(HttpClient, Moves) {
  TestServer server;
  hsns::HttpClient a(server.url());
  ASSERT_TRUE(a.get("/echo"));
  hsns::HttpClient b(std::move(a));
  ASSERT_TRUE(b.get("/echo"));
  EXPECT_EQ(b.connections_opened(), 1u);
}

TEST(HttpClient, ManyRequestsFast) {
  TestServer server;
  hsns::HttpClient client(server.url());
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(client.get("/echo"));
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  std::printf("2000 requests in %ld ms\n", static_cast<long>(ms));
}
