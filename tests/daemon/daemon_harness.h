// Test harness for hsnsd integration tests: a network namespace with a management veth to the root
// namespace, NPU veth ports inside it, the real aggregator bound to the management address, and the
// real hsnsd running inside the namespace.
//
// Contract:
// - TestNetns creates "hsnsd-<pid>-<n>" with a management /30 from 198.19.0.0/16 derived from the pid
//   (root side .1, namespace side .2), no default route and no other link out; the destructor deletes the
//   namespace (and with it every veth created inside) even when the test failed. Leftovers of a crashed
//   earlier run with the same pid are removed first.
// - Process runs one child (argv) with stdout+stderr to a log file; stop() sends SIGTERM and returns the
//   exit code; the destructor SIGKILLs a child still running.
// - Everything is polled with deadlines (wait_for), never fixed sleeps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace hsns::testing {

// Runs argv; returns exit status and output (stdout+stderr).
struct Cmd {
  int status = -1;
  std::string out;
};
Cmd sh(const std::vector<std::string>& argv);
// Like sh() but fails the current test when the command fails.
std::string must(const std::vector<std::string>& argv);

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

class TestNetns {
 public:
  TestNetns();
  ~TestNetns();
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;

  const std::string& name() const { return name_; }
  const std::string& root_address() const { return root_addr_; }  // aggregator side
  // Creates a veth pair <name>/<name>p inside the namespace, both up, MTU 1500.
  void add_port(const std::string& name);
  // Runs `ip -n <ns> <args...>` and returns its output (fails the test on error).
  std::string ip(const std::vector<std::string>& args);
  // Reads a file as seen from inside the namespace (procfs paths differ per namespace).
  std::string cat(const std::string& path);

 private:
  std::string name_;
  std::string root_link_;
  std::string root_addr_;
};

class Process {
 public:
  Process(std::vector<std::string> argv, std::filesystem::path log);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  int stop();  // SIGTERM, wait, exit code (128 + signal when killed)
  void kill9();
  bool running() const { return pid_ > 0; }
  // True once the child has exited (reaps it).
  bool exited();
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::filesystem::path log_;
};

}  // namespace hsns::testing
