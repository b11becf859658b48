// hsnsd's aggregator client (agent_client.h) and agent link (agent_link.h): every kind of AgentError
// and the daemon's branches on them, against the real hsns-aggregator and against a real HTTP server on
// loopback that this test runs (for answers the aggregator never gives: a hang, a malformed document, a
// 404 for a host it registered a moment ago).
#include "agent_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent_link.h"
#include "hsns/http_client.h"
#include "inventory.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"

namespace hsns::daemon {
namespace {

using namespace std::chrono_literals;
using hsns::testing::AggregatorProcess;
using hsns::testing::TempDir;

// A real HTTP/1.1 server on 127.0.0.1 (an ephemeral port): one request per connection, answered by
// `answer` with a whole raw response; kHang holds the connection open without a byte, kClose closes it.
class LoopbackServer {
 public:
  static constexpr const char* kHang = "hang";
  static constexpr const char* kClose = "close";
  using Answer = std::function<std::string(const std::string& method, const std::string& target)>;

  explicit LoopbackServer(Answer answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // "METHOD target" of every request so far.
  std::vector<std::string> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  std::size_t count(const std::string& request) const {
    std::size_t n = 0;
    for (const auto& r : requests()) n += r == request;
    return n;
  }

  static std::string response(int status, const std::string& body, const std::string& headers = "") {
    return "HTTP/1.1 " + std::to_string(status) +
           " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n" + headers + "\r\n" + body;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string in;
      char buf[4096];
      std::size_t header_end = std::string::npos;
      while (header_end == std::string::npos) {
        const auto n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
        header_end = in.find("\r\n\r\n");
      }
      if (header_end == std::string::npos) {
        ::close(c);
        continue;
      }
      // The body (status documents, registrations) is read and dropped.
      std::size_t length = 0;
      if (const auto at = in.find("Content-Length: "); at != std::string::npos && at < header_end)
        length = std::stoul(in.substr(at + 16));
      while (in.size() < header_end + 4 + length) {
        const auto n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
      }
      const auto sp1 = in.find(' ');
      const auto sp2 = in.find(' ', sp1 + 1);
      const std::string method = in.substr(0, sp1), target = in.substr(sp1 + 1, sp2 - sp1 - 1);
      {
        const std::lock_guard lock(mutex_);
        requests_.push_back(method);
        requests_.back().append(" ").append(target);
      }
      const std::string out = answer_(method, target);
      if (out == kHang) {
        held_.push_back(c);
        continue;
      }
      if (out != kClose) (void)::send(c, out.data(), out.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  Answer answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::vector<int> held_;  // serve() thread only, then the destructor
};

const std::string kHost = "node-t";
const std::string kDesiredDoc = R"({"host":"node-t","generation":3,"ports":[]})";

DaemonConfig config_for(const std::string& url, std::chrono::milliseconds timeout = 2000ms) {
  DaemonConfig c;
  c.aggregator_url = url;
  c.request_timeout = timeout;
  c.sysfs_root = "/nonexistent-sysfs";  // an inventory of configured NPUs only
  c.npus[0] = "npu0";
  c.interval = 1000ms;
  c.backoff_initial = 1000ms;
  c.backoff_max = 2000ms;
  return c;
}

std::unique_ptr<AgentClient> client_for(const DaemonConfig& c) {
  auto client = AgentClient::make(c, kHost);
  EXPECT_TRUE(client) << client.error();
  return client ? std::move(*client) : nullptr;
}

std::string registration() {
  return registration_body(discover(config_for("http://127.0.0.1:1")));
}

// ---- AgentClient: the kinds of error ----

TEST(AgentClient, AgainstTheRealAggregator404UntilRegisteredThenTheDocumentAndItsETag) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  const auto token_file = work.path() / "agent.token";
  std::ofstream(token_file) << hsns::testing::kAgentToken << "\n";
  auto c = config_for(aggregator.url());
  c.token_file = token_file.string();
  auto client = client_for(c);
  ASSERT_TRUE(client);

  auto before = client->fetch_desired("");
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().kind, AgentError::Kind::http_status);
  EXPECT_EQ(before.error().status, 404);
  EXPECT_TRUE(before.error().is_status(404));

  ASSERT_TRUE(client->register_host(registration())) << "registration";
  auto fetched = client->fetch_desired("");
  ASSERT_TRUE(fetched) << describe(fetched.error());
  EXPECT_FALSE(fetched->unchanged);
  EXPECT_EQ(fetched->state.host, kHost);
  ASSERT_FALSE(fetched->etag.empty());
  auto again = client->fetch_desired(fetched->etag);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_TRUE(again->unchanged);

  auto status = client->put_status(R"({"applied_generation":)" + std::to_string(fetched->state.generation) +
                                   R"(,"ports":[],"qos":[],"daemon":{"version":"t","started_at":"x"}})");
  EXPECT_TRUE(status) << describe(status.error());

  // Without the agent token the aggregator refuses: an http_status 401, never a transport error.
  auto anonymous = client_for(config_for(aggregator.url()));
  auto refused = anonymous->register_host(registration());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, AgentError::Kind::http_status);
  EXPECT_EQ(refused.error().status, 401);
}

TEST(AgentClient, AnUnexpectedStatusCarriesTheStatusAndTheStartOfTheBody) {
  LoopbackServer server([](const std::string&, const std::string&) {
    return LoopbackServer::response(503, R"({"title":"store unavailable"})");
  });
  auto client = client_for(config_for(server.url()));
  for (auto r : {client->register_host("{}"), client->put_status("{}")}) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, AgentError::Kind::http_status);
    EXPECT_EQ(r.error().status, 503);
    EXPECT_NE(r.error().message.find("store unavailable"), std::string::npos) << r.error().message;
  }
  auto f = client->fetch_desired("");
  ASSERT_FALSE(f);
  EXPECT_TRUE(f.error().is_status(503));
  EXPECT_FALSE(f.error().is_status(404));
}

TEST(AgentClient, ADocumentThatDoesNotParseIsMalformedNotAStatus) {
  LoopbackServer server([](const std::string&, const std::string&) {
    return LoopbackServer::response(200, R"({"host":"node-t","generation":"three","ports":[]})");
  });
  auto f = client_for(config_for(server.url()))->fetch_desired("");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().kind, AgentError::Kind::malformed);
  EXPECT_EQ(f.error().status, 200);
  EXPECT_NE(f.error().message.find("generation"), std::string::npos) << f.error().message;
  EXPECT_EQ(describe(f.error()).rfind("malformed answer: ", 0), 0u) << describe(f.error());
}

TEST(AgentClient, NoAnswerWithinTheTimeoutIsATimeout) {
  LoopbackServer server([](const std::string&, const std::string&) { return LoopbackServer::kHang; });
  auto client = client_for(config_for(server.url(), 300ms));
  const auto t0 = std::chrono::steady_clock::now();
  auto f = client->fetch_desired("");
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().kind, AgentError::Kind::timeout) << describe(f.error());
  EXPECT_EQ(f.error().status, 0);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
}

TEST(AgentClient, NoServerOrAConnectionClosedWithoutAnswerIsATransportError) {
  // A port nobody listens on: bound, then closed again.
  int port = 0;
  {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    ::close(s);
  }
  auto refused = client_for(config_for("http://127.0.0.1:" + std::to_string(port)))->register_host("{}");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, AgentError::Kind::transport) << describe(refused.error());
  EXPECT_EQ(refused.error().status, 0);

  LoopbackServer server([](const std::string&, const std::string&) { return LoopbackServer::kClose; });
  auto closed = client_for(config_for(server.url()))->fetch_desired("");
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error().kind, AgentError::Kind::transport) << describe(closed.error());
}

// ---- AgentLink: the daemon's branches on the error ----

TEST(AgentLink, ADesiredState404RegistersTheHostAgain) {
  std::atomic<int> desired_answers{0};
  LoopbackServer server([&](const std::string& method, const std::string& target) {
    if (method == "PUT" && target == "/api/v1/hosts/node-t") return LoopbackServer::response(200, "{}");
    // The second fetch finds the host gone (the aggregator's database was replaced).
    if (target == "/api/v1/agents/node-t/desired" && ++desired_answers == 2)
      return LoopbackServer::response(404, R"({"title":"host not registered"})");
    return LoopbackServer::response(200, kDesiredDoc, "ETag: \"g3\"\r\n");
  });
  prometheus::Registry registry;
  NodeState node;
  node.host = kHost;
  AgentLink link(config_for(server.url()), node, registry);
  ASSERT_TRUE(link.start());
  EXPECT_TRUE(link.ready());

  link.tick(std::chrono::steady_clock::now());
  ASSERT_TRUE(link.up());
  ASSERT_TRUE(node.desired);
  EXPECT_EQ(node.desired->generation, 3);
  EXPECT_EQ(node.persistent.etag, "\"g3\"");
  EXPECT_TRUE(node.pass_wanted) << "the aggregator came up: apply at once";
  EXPECT_EQ(server.count("PUT /api/v1/hosts/node-t"), 1u);

  link.trigger();
  link.tick(std::chrono::steady_clock::now());
  EXPECT_FALSE(link.up());
  ASSERT_TRUE(node.desired) << "a failed fetch never removes the desired state";

  link.trigger();
  link.tick(std::chrono::steady_clock::now());
  EXPECT_TRUE(link.up());
  EXPECT_EQ(server.count("PUT /api/v1/hosts/node-t"), 2u) << "registered again after the 404";
}

TEST(AgentLink, OtherFailuresBackOffAndKeepTheRegistration) {
  std::atomic<int> desired_answers{0};
  LoopbackServer server([&](const std::string& method, const std::string& target) {
    if (method == "PUT") return LoopbackServer::response(201, "{}");
    if (target == "/api/v1/agents/node-t/desired" && ++desired_answers == 2)
      return LoopbackServer::response(503, R"({"title":"busy"})");
    return LoopbackServer::response(200, kDesiredDoc, "ETag: \"g3\"\r\n");
  });
  prometheus::Registry registry;
  NodeState node;
  node.host = kHost;
  const auto config = config_for(server.url());
  AgentLink link(config, node, registry);
  ASSERT_TRUE(link.start());
  link.tick(std::chrono::steady_clock::now());
  ASSERT_TRUE(link.up());

  link.trigger();
  const auto now = std::chrono::steady_clock::now();
  const auto next = link.tick(now);
  EXPECT_FALSE(link.up());
  // Backoff: a delay drawn from [0, initial] (full jitter), not the polling interval.
  EXPECT_GE(next - now, std::chrono::steady_clock::duration::zero());
  EXPECT_LE(next - now, config.backoff_initial);
  EXPECT_EQ(link.tick(now), next) << "nothing is due before the backoff ends";

  link.trigger();
  link.tick(std::chrono::steady_clock::now());
  EXPECT_TRUE(link.up());
  EXPECT_EQ(server.count("PUT /api/v1/hosts/node-t"), 1u) << "a 503 is no reason to register again";
  EXPECT_EQ(server.count("GET /api/v1/agents/node-t/desired"), 3u);
}

TEST(AgentLink, ADocumentForAnotherHostIsIgnored) {
  LoopbackServer server([&](const std::string& method, const std::string&) {
    if (method == "PUT") return LoopbackServer::response(200, "{}");
    return LoopbackServer::response(200, R"({"host":"node-z","generation":9,"ports":[]})");
  });
  prometheus::Registry registry;
  NodeState node;
  node.host = kHost;
  AgentLink link(config_for(server.url()), node, registry);
  ASSERT_TRUE(link.start());
  link.tick(std::chrono::steady_clock::now());
  EXPECT_FALSE(link.up());
  EXPECT_FALSE(node.desired);
  EXPECT_FALSE(node.pass_wanted);
  const auto text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_daemon_desired_fetch_errors_total"), 1.0) << text;
  EXPECT_EQ(hsns::testing::metric_value(text, "hsns_daemon_last_successful_desired_poll_timestamp_seconds"),
            0.0);
}

}  // namespace
}  // namespace hsns::daemon
