#include "support/prometheus_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "hsns/http_client.h"
#include "support/shell.h"

namespace hsns::testing {

using namespace std::chrono_literals;

namespace {

HttpClient::Options with_timeout(std::chrono::milliseconds timeout) {
  HttpClient::Options o;
  o.timeout = timeout;
  return o;
}

}  // namespace

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

void PrometheusServer::start(const std::vector<std::pair<std::string, std::string>>& targets) {
  ASSERT_EQ(sh("command -v prometheus").status, 0)
      << "prometheus is missing: scripts/install-deps.sh installs it";
  port_ = free_loopback_port();
  ASSERT_GT(port_, 0);
  {
    std::ofstream config(workdir_ / "prometheus.yml");
    config << "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\nscrape_configs:\n";
    for (const auto& [job, target] : targets)
      config << "  - job_name: " << job << "\n    static_configs:\n      - targets: [\"" << target << "\"]\n";
  }
  process_ = std::make_unique<Process>(
      std::vector<std::string>{"prometheus", "--config.file=" + (workdir_ / "prometheus.yml").string(),
                               "--storage.tsdb.path=" + (workdir_ / "tsdb").string(),
                               "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
      log_to(workdir_ / "prometheus.log"));
  ASSERT_TRUE(wait_for(
      [&] {
        HttpClient c(url(), with_timeout(1s));
        auto r = c.get("/-/ready");
        return r && r->status == 200;
      },
      20s))
      << log();
}

bool PrometheusServer::target_up(const std::string& job) const {
  HttpClient c(url(), with_timeout(2s));
  auto r = c.get("/api/v1/targets");
  if (!r || r->status != 200) return false;
  const auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object()) return false;
  for (const auto& t : j["data"]["activeTargets"])
    if (t.value("scrapePool", "") == job && t.value("health", "") == "up") return true;
  return false;
}

std::optional<nlohmann::json> PrometheusServer::query(const std::string& promql) const {
  HttpClient c(url(), with_timeout(2s));
  auto r = c.get("/api/v1/query?query=" + encode_query_value(promql));
  if (!r || r->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || j.value("status", "") != "success") return std::nullopt;
  return j["data"];
}

std::string PrometheusServer::log() const {
  return "--- prometheus.log\n" + read_file(workdir_ / "prometheus.log");
}

ExpositionServer::ExpositionServer(std::function<std::string()> body) : body_(std::move(body)) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd_, 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "the exposition server cannot listen on loopback";
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

ExpositionServer::~ExpositionServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void ExpositionServer::serve() {
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    // The request head only (a scrape has no body); a client that sends nothing is dropped after 1 s.
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
      pollfd q{c, POLLIN, 0};
      if (::poll(&q, 1, 1000) <= 0) break;
      const auto n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
    }
    const std::string body = body_();
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    std::size_t sent = 0;
    while (sent < response.size()) {
      const auto n = ::write(c, response.data() + sent, response.size() - sent);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    ::close(c);
    ++requests_;
  }
}

}  // namespace hsns::testing
