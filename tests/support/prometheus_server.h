// A real Prometheus server (Debian `prometheus`) for a test, on loopback, and a small exposition server for
// it to scrape.
//
// Contract:
// - PrometheusServer: start(targets) writes a configuration scraping each (job, "host:port") every second
//   (scrape and evaluation interval 1 s), starts `prometheus` with its TSDB and log in the working
//   directory, listening on 127.0.0.1 at a free port, and returns once its API answers (up to 20 s; a
//   test failure otherwise, with the log). target_up(job) and query(promql) read its HTTP API. The
//   destructor kills the process. Needs `prometheus` on PATH: missing is a test failure, not a skip.
// - ExpositionServer: an HTTP server on 127.0.0.1 (a port of the kernel's choice) on a thread of its own
//   that answers every request with the text the body function returns at that moment, as
//   "text/plain; version=0.0.4", one request per connection. Stopped by the destructor.
// - free_loopback_port(): a TCP port nothing listened on a moment ago (bound to port 0, then closed).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/process.h"

namespace hsns::testing {

int free_loopback_port();

class PrometheusServer {
 public:
  explicit PrometheusServer(std::filesystem::path workdir) : workdir_(std::move(workdir)) {}
  void start(const std::vector<std::pair<std::string, std::string>>& targets);
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool target_up(const std::string& job) const;
  // The API's answer ("data") to an instant query; nullopt when the request or the query failed.
  std::optional<nlohmann::json> query(const std::string& promql) const;
  std::string log() const;

 private:
  std::filesystem::path workdir_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

class ExpositionServer {
 public:
  explicit ExpositionServer(std::function<std::string()> body);
  ~ExpositionServer();
  ExpositionServer(const ExpositionServer&) = delete;
  ExpositionServer& operator=(const ExpositionServer&) = delete;
  int port() const { return port_; }
  std::size_t requests() const { return requests_.load(); }

 private:
  void serve();

  std::function<std::string()> body_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> requests_{0};
  std::thread thread_;
};

}  // namespace hsns::testing
