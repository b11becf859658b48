// The real hsns-aggregator binary for a test: a free port, a database, tokens file and log in a working
// directory, and HTTP clients for each role.
//
// Contract: one AggregatorProcess per test; start() returns once the server listens (it polls the
// --ready-file the aggregator writes after binding, up to 20 s, and fails the test otherwise, with the
// log); stop() sends SIGTERM and returns the exit status; kill9() simulates a crash; start() may be
// called again after either (same database). The destructor kills a still running process. By default it
// listens on 127.0.0.1 with a port of the kernel's choosing, in the test's own network namespace;
// set_listen() and set_netns() change that before start(). The tokens file holds the five tokens below.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hsns/http_client.h"
#include "support/process.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::testing {

inline constexpr const char* kOperatorToken = "operator-token-0123456789abcdef";
inline constexpr const char* kViewerToken = "viewer-token-0123456789abcdef";
inline constexpr const char* kAgentToken = "agent-token-0123456789abcdef";
inline constexpr const char* kSchedulerToken = "scheduler-token-0123456789abcdef";
// An agent token bound to host kBoundAgentHost (http/auth.h: it may act for that host only).
inline constexpr const char* kBoundAgentToken = "agent-node-1-token-0123456789abcdef";
inline constexpr const char* kBoundAgentHost = "node-1";

// Path of a build artefact (from HSNS_BUILD_DIR) or a source file (from HSNS_SOURCE_DIR).
std::filesystem::path build_path(const std::string& relative);
std::filesystem::path source_path(const std::string& relative);

class AggregatorProcess {
 public:
  // workdir holds the database, tokens file, ready file and log; it must outlive the process.
  explicit AggregatorProcess(std::filesystem::path workdir, std::vector<std::string> extra_args = {});
  ~AggregatorProcess();
  AggregatorProcess(const AggregatorProcess&) = delete;
  AggregatorProcess& operator=(const AggregatorProcess&) = delete;

  // Before start(): the aggregator's YAML configuration file (default "{}") and its RLIMIT_NOFILE.
  void set_config(std::string yaml) { config_yaml_ = std::move(yaml); }
  void set_descriptor_limit(unsigned long limit) { descriptor_limit_ = limit; }
  // Before start(): the listen address (an IPv4 address; port 0: the kernel's choice), e.g. to listen
  // again on the port of the previous run.
  void set_listen(std::string host, int port = 0) {
    host_ = std::move(host);
    listen_port_ = port;
  }
  // Before start(): run inside this network namespace (see support/netns.h).
  void set_netns(std::string netns) { netns_ = std::move(netns); }

  void start();
  int stop();  // SIGTERM; returns the exit code (or 128 + signal)
  void kill9();
  bool running() const { return process_.pid() > 0; }
  pid_t pid() const { return process_.pid(); }

  std::string url() const;  // "http://<host>:<port>"
  int port() const { return port_; }
  HttpClient client(const std::string& token = kOperatorToken) const;
  std::string log() const;
  std::filesystem::path database() const { return workdir_ / "aggregator.db"; }

 private:
  std::filesystem::path workdir_;
  std::vector<std::string> extra_args_;
  Process process_;
  int port_ = 0;
  std::string scheme_ = "http";
  std::string host_ = "127.0.0.1";
  int listen_port_ = 0;
  std::string netns_;
  std::string config_yaml_ = "{}\n";
  unsigned long descriptor_limit_ = 0;  // 0: inherit
};

// Generates a small fabric (4 hosts x 2 NPUs, 2 per SU) on `aggregator` with the operator token and
// answers the name of one of its leaf switches; "" (with a test failure) when it could not.
std::string generate_small_fabric_leaf(const AggregatorProcess& aggregator);

}  // namespace hsns::testing
