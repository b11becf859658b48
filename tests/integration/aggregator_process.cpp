#include "aggregator_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace hsns::testing {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::filesystem::path build_path(const std::string& relative) {
  return std::filesystem::path(env_or("HSNS_BUILD_DIR", HSNS_TEST_BUILD_DIR)) / relative;
}

std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(env_or("HSNS_SOURCE_DIR", HSNS_TEST_SOURCE_DIR)) / relative;
}

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int i = 0; i < 100; ++i) {
    auto candidate = base / ("hsns-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  if (std::getenv("HSNS_KEEP_TEST_DIRS")) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

AggregatorProcess::AggregatorProcess(std::filesystem::path workdir, std::vector<std::string> extra_args)
    : workdir_(std::move(workdir)), extra_args_(std::move(extra_args)) {
  std::ofstream tokens(workdir_ / "tokens.yaml");
  tokens << "tokens:\n"
         << "  - {name: ops, role: operator, token: " << kOperatorToken << "}\n"
         << "  - {name: dashboard, role: viewer, token: " << kViewerToken << "}\n"
         << "  - {name: hsnsd, role: agent, token: " << kAgentToken << "}\n"
         << "  - {name: slurm, role: scheduler, token: " << kSchedulerToken << "}\n";
  for (const auto& a : extra_args_) {
    if (a == "--tls-cert") scheme_ = "https";
  }
}

AggregatorProcess::~AggregatorProcess() {
  if (pid_ > 0) kill9();
}

void AggregatorProcess::start() {
  const auto ready = workdir_ / "ready";
  std::filesystem::remove(ready);
  std::vector<std::string> args = {build_path("aggregator/hsns-aggregator").string(),
                                   "run",
                                   "--config",
                                   (workdir_ / "no-such-config.yaml").string(),
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--database",
                                   database().string(),
                                   "--tokens-file",
                                   (workdir_ / "tokens.yaml").string(),
                                   "--ready-file",
                                   ready.string(),
                                   "--threads",
                                   "2"};
  std::ofstream(workdir_ / "no-such-config.yaml") << config_yaml_;
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  const auto log_path = workdir_ / "aggregator.log";
  pid_ = ::fork();
  if (pid_ == 0) {
    if (descriptor_limit_ > 0) {
      const rlimit rl{descriptor_limit_, descriptor_limit_};
      if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) ::_exit(126);
    }
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDERR_FILENO);
      ::dup2(fd, STDOUT_FILENO);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid_, 0) << "fork failed";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(ready)) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL() << "hsns-aggregator exited during start-up:\n" << log();
    }
    if (std::chrono::steady_clock::now() > deadline)
      FAIL() << "hsns-aggregator not ready in 20 s:\n" << log();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::istringstream in(read_file(ready));
  std::string address;
  in >> address >> port_;
  ASSERT_GT(port_, 0);
}

int AggregatorProcess::wait_exit() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int AggregatorProcess::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  return wait_exit();
}

void AggregatorProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  (void)wait_exit();
}

std::string AggregatorProcess::url() const {
  return scheme_ + "://127.0.0.1:" + std::to_string(port_);
}

HttpClient AggregatorProcess::client(const std::string& token) const {
  HttpClient::Options o;
  o.bearer_token = token;
  o.timeout = std::chrono::seconds(30);
  if (scheme_ == "https") o.ca_file = (workdir_ / "ca.pem").string();
  return HttpClient(url(), o);
}

std::string AggregatorProcess::log() const {
  return read_file(workdir_ / "aggregator.log");
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text) {
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe(in_pipe) != 0 || ::pipe(out_pipe) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(out_pipe[1], STDERR_FILENO);
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  std::thread writer([&] {
    std::size_t off = 0;
    while (off < stdin_text.size()) {
      const auto n = ::write(in_pipe[1], stdin_text.data() + off, stdin_text.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::close(in_pipe[1]);
  });
  CommandResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out_pipe[0], buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
  ::close(out_pipe[0]);
  writer.join();
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace hsns::testing
