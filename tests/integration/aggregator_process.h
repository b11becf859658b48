// Test harness: runs the real hsns-aggregator binary on a free loopback port with a temporary
// database and tokens file, and hands out HTTP clients for each role.
//
// Contract: one AggregatorProcess per test; start() returns once the server listens (it polls the
// --ready-file the aggregator writes after binding, up to 20 s, and fails the test otherwise); stop()
// sends SIGTERM and returns the exit status; kill9() simulates a crash. The destructor kills a still
// running process and removes the working directory unless HSNS_KEEP_TEST_DIRS is set.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hsns/http_client.h"

namespace hsns::testing {

inline constexpr const char* kOperatorToken = "operator-token-0123456789abcdef";
inline constexpr const char* kViewerToken = "viewer-token-0123456789abcdef";
inline constexpr const char* kAgentToken = "agent-token-0123456789abcdef";
inline constexpr const char* kSchedulerToken = "scheduler-token-0123456789abcdef";

// Path of a build artefact (from HSNS_BUILD_DIR) or a source file (from HSNS_SOURCE_DIR).
std::filesystem::path build_path(const std::string& relative);
std::filesystem::path source_path(const std::string& relative);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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

  void start();
  int stop();  // SIGTERM; returns the exit code (or 128 + signal)
  void kill9();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  std::string url() const;  // "http://127.0.0.1:<port>"
  int port() const { return port_; }
  HttpClient client(const std::string& token = kOperatorToken) const;
  std::string log() const;
  std::filesystem::path database() const { return workdir_ / "aggregator.db"; }

 private:
  int wait_exit();

  std::filesystem::path workdir_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string scheme_ = "http";
  std::string config_yaml_ = "{}\n";
  unsigned long descriptor_limit_ = 0;  // 0: inherit
};

// Runs a command with the given stdin text; returns exit status and combined stdout+stderr.
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text = "");

}  // namespace hsns::testing
