#include "daemon_harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "aggregator_process.h"

namespace hsns::testing {

Cmd sh(const std::vector<std::string>& argv) {
  auto r = run_command(argv);
  return {r.status, r.output};
}

std::string must(const std::vector<std::string>& argv) {
  auto r = run_command(argv);
  std::string joined;
  for (const auto& a : argv) joined += a + " ";
  EXPECT_EQ(r.status, 0) << joined << "\n" << r.output;
  return r.output;
}

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

namespace {
std::atomic<int> g_counter{0};
}

TestNetns::TestNetns() {
  const int pid = static_cast<int>(::getpid());
  const int n = g_counter++;
  name_ = "hsnsd-" + std::to_string(pid) + "-" + std::to_string(n);
  root_link_ = "hsm" + std::to_string(pid % 100000) + "x" + std::to_string(n);
  // 198.19.<a>.<b>/30 unique per pid and instance.
  const int slot = (pid * 8 + n) % (250 * 64);
  const std::string net = "198.19." + std::to_string(slot / 64) + ".";
  const int base = (slot % 64) * 4;
  root_addr_ = net + std::to_string(base + 1);
  const std::string ns_addr = net + std::to_string(base + 2);
  (void)sh({"ip", "netns", "del", name_});
  (void)sh({"ip", "link", "del", root_link_});
  must({"ip", "netns", "add", name_});
  must({"ip", "link", "add", root_link_, "type", "veth", "peer", "name", "mgmt0", "netns", name_});
  must({"ip", "addr", "add", root_addr_ + "/30", "dev", root_link_});
  must({"ip", "link", "set", root_link_, "up"});
  ip({"link", "set", "lo", "up"});
  ip({"addr", "add", ns_addr + "/30", "dev", "mgmt0"});
  ip({"link", "set", "mgmt0", "up"});
  // The root side answers once DAD-free IPv4 is up; make sure the link is usable before tests proceed.
  wait_for(
      [&] {
        return sh({"ip", "netns", "exec", name_, "ping", "-c1", "-W1", root_addr_}).status == 0;
      },
      std::chrono::seconds(10));
}

TestNetns::~TestNetns() {
  (void)sh({"ip", "netns", "del", name_});
  (void)sh({"ip", "link", "del", root_link_});  // normally gone with the namespace's peer
}

void TestNetns::add_port(const std::string& port) {
  ip({"link", "add", port, "type", "veth", "peer", "name", port + "p"});
  ip({"link", "set", port + "p", "up"});
  ip({"link", "set", port, "up"});
}

std::string TestNetns::ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip", "-n", name_};
  argv.insert(argv.end(), args.begin(), args.end());
  return must(argv);
}

std::string TestNetns::cat(const std::string& path) {
  auto r = sh({"ip", "netns", "exec", name_, "cat", path});
  return r.out;
}

Process::Process(std::vector<std::string> argv, std::filesystem::path log) : log_(std::move(log)) {
  pid_ = ::fork();
  if (pid_ == 0) {
    const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDERR_FILENO);
      ::dup2(fd, STDOUT_FILENO);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

Process::~Process() {
  kill9();
}

bool Process::exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  return false;
}

int Process::stop() {
  if (pid_ <= 0) return status_;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

void Process::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  status_ = 128 + SIGKILL;
}

std::string Process::log() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hsns::testing
