// Test helpers for the flow probe's end-to-end tests: shell commands, network namespaces with veth pairs
// (198.18.0.0/15 and 2001:db8::/32 only, no route out), background processes, polling with timeouts.
//
// Contract: Lab removes every namespace it created in its destructor (also when a test fails); processes
// started with Lab::spawn are killed (SIGKILL) by their Proc destructor unless waited for. Commands run
// through /bin/sh; inside a namespace with `nsenter --net` so the mount namespace (and /sys/fs/bpf pins)
// stays the host's. Root only.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hsns::test {

struct CmdResult {
  int status = -1;
  std::string out;
};

// Runs cmd through /bin/sh; out holds stdout (and stderr unless with_stderr is false).
inline CmdResult sh(const std::string& cmd, bool with_stderr = true) {
  CmdResult r;
  FILE* p = popen((with_stderr ? cmd + " 2>&1" : cmd).c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls `cond` every 20 ms until it holds or `timeout` passes.
inline bool wait_for(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// True while pid runs (not yet exited; a zombie counts as exited). Does not reap.
inline bool running(pid_t pid) {
  const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

class Proc {
 public:
  Proc() = default;
  explicit Proc(pid_t pid) : pid_(pid) {}
  Proc(Proc&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  Proc& operator=(Proc&& o) noexcept {
    std::swap(pid_, o.pid_);
    return *this;
  }
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;
  ~Proc() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void signal(int sig) const {
    if (pid_ > 0) kill(pid_, sig);
  }
  // Waits up to `timeout` for exit; returns the exit status, or -1 (still running / killed by a signal).
  int wait(std::chrono::milliseconds timeout) {
    int st = 0;
    const bool done = wait_for([&] { return waitpid(pid_, &st, WNOHANG) == pid_; }, timeout);
    if (!done) return -1;
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // Waits up to `timeout` for the process to end by a signal (e.g. a test crash hook's SIGKILL); returns the
  // signal, or 0 if it exited or still runs (then it is left as it is).
  int wait_signal(std::chrono::milliseconds timeout) {
    int st = 0;
    if (!wait_for([&] { return waitpid(pid_, &st, WNOHANG) == pid_; }, timeout)) return 0;
    pid_ = -1;
    return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  }
  void kill9() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// Runs argv in the background with stdout/stderr redirected to files.
inline Proc spawn(const std::vector<std::string>& argv, const std::string& out_path,
                  const std::string& err_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* o = freopen(out_path.c_str(), "w", stdout);
    FILE* e = freopen(err_path.c_str(), "w", stderr);
    (void)o;
    (void)e;
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return Proc(pid);
}

// The flow sink's complete harvest batches (daemon/flows/flow_sink.h), read independently of the library:
// an opening `batch` marker with epoch E, flow lines of epoch E, the `counters` closing marker of E with
// the same record count. Lines of other batches (torn by a crash, not yet truncated) are counted in
// `ignored`; `epochs` lists the complete batches' epochs in file order.
struct SinkRead {
  std::vector<nlohmann::json> flows;
  std::vector<std::uint64_t> epochs;
  nlohmann::json counters;  // the last complete batch's counters
  std::size_t ignored = 0;
};
inline SinkRead read_sink_batches(const std::string& text) {
  SinkRead r;
  std::vector<nlohmann::json> open;
  bool is_open = false;
  std::uint64_t epoch = 0;
  std::uint64_t records = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) {  // no newline: torn
      ++r.ignored;
      break;
    }
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) {
      ++r.ignored;
      continue;
    }
    const std::string type = j.value("type", "");
    if (type == "batch") {
      if (is_open) r.ignored += open.size() + 1;
      open.clear();
      is_open = true;
      epoch = j.at("epoch").get<std::uint64_t>();
      records = j.at("records").get<std::uint64_t>();
    } else if (type == "flow" && is_open && j.value("epoch", std::uint64_t{0}) == epoch) {
      open.push_back(j);
    } else if (type == "counters" && is_open && j.value("epoch", std::uint64_t{0}) == epoch &&
               j.value("records", std::uint64_t{0}) == records && open.size() == records) {
      for (auto& f : open) r.flows.push_back(std::move(f));
      open.clear();
      is_open = false;
      r.epochs.push_back(epoch);
      r.counters = j.at("counters");
    } else {
      ++r.ignored;
    }
  }
  if (is_open) r.ignored += open.size() + 1;
  return r;
}

// Totals of one flow, from sink records or the generator's report: packets, bytes, ect, ce, cnp,
// psn_regressions, op.<class>, nak.<syndrome>.
using FlowTotals = std::map<std::string, std::uint64_t>;

// "ifname|src|dst|sport|dest_qp": the key both sides are compared under.
inline std::string flow_id(const std::string& ifname, const nlohmann::json& f) {
  return ifname + "|" + f.at("src").get<std::string>() + "|" + f.at("dst").get<std::string>() + "|" +
         std::to_string(f.at("sport").get<int>()) + "|" +
         std::to_string(f.at("dest_qp").get<std::uint32_t>());
}

inline void add_flow(FlowTotals& t, const nlohmann::json& f) {
  for (const char* k : {"packets", "bytes", "ect", "ce", "cnp", "psn_regressions"})
    t[k] += f.at(k).get<std::uint64_t>();
  for (const auto& [k, v] : f.at("op").items()) t["op." + k] += v.get<std::uint64_t>();
  for (const auto& [k, v] : f.at("nak").items()) t["nak." + k] += v.get<std::uint64_t>();
}

// Per-flow totals of the flow lines of a sink file's complete batches; *counters = the last batch's
// counters. Expects every complete batch to have an epoch of its own (a batch written twice would count
// twice) and no line outside complete batches; check_flow (when given) sees every flow line.
inline std::map<std::string, FlowTotals> read_sink_totals(
    const std::string& path, nlohmann::json* counters,
    const std::function<void(const nlohmann::json&)>& check_flow = {}) {
  std::map<std::string, FlowTotals> out;
  const auto r = read_sink_batches(read_file(path));
  EXPECT_EQ(std::set<std::uint64_t>(r.epochs.begin(), r.epochs.end()).size(), r.epochs.size())
      << "an epoch written twice";
  EXPECT_EQ(r.ignored, 0u) << "lines outside complete batches (a torn batch was not truncated)";
  for (const auto& j : r.flows) {
    if (check_flow) check_flow(j);
    add_flow(out[flow_id(j.at("ifname"), j)], j);
  }
  if (counters != nullptr) *counters = r.counters;
  return out;
}

class Lab {
 public:
  explicit Lab(std::string prefix) : prefix_(std::move(prefix) + std::to_string(getpid())) {}
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;
  ~Lab() {
    for (const auto& ns : namespaces_) sh("ip netns del " + ns);
  }

  // Creates (or returns) namespace `name`, with lo up and nothing else.
  std::string ns(const std::string& name) {
    const std::string full = prefix_ + name;
    for (const auto& n : namespaces_)
      if (n == full) return full;
    sh("ip netns add " + full);
    namespaces_.push_back(full);
    sh("ip -n " + full + " link set lo up");
    return full;
  }

  // veth pair a@ns_a <-> b@ns_b, up, optional addresses ("198.18.40.1/24"), IPv6 without DAD.
  bool veth(const std::string& ns_a, const std::string& a, const std::string& ns_b, const std::string& b,
            const std::vector<std::string>& addr_a = {}, const std::vector<std::string>& addr_b = {}) {
    if (sh("ip link add " + a + " netns " + ns_a + " type veth peer name " + b + " netns " + ns_b).status !=
        0)
      return false;
    for (const auto& [n, dev, addrs] : {std::tuple{ns_a, a, addr_a}, std::tuple{ns_b, b, addr_b}}) {
      sh("ip netns exec " + n + " sysctl -qw net.ipv6.conf." + dev + ".accept_dad=0");
      for (const auto& ad : addrs) sh("ip -n " + n + " addr add " + ad + " dev " + dev + " nodad");
      if (sh("ip -n " + n + " link set " + dev + " up").status != 0) return false;
    }
    return true;
  }

  static std::string in(const std::string& ns, const std::string& cmd) {
    return "nsenter --net=/run/netns/" + ns + " " + cmd;
  }
  static std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"nsenter", "--net=/run/netns/" + ns});
    return argv;
  }

 private:
  std::string prefix_;
  std::vector<std::string> namespaces_;
};

}  // namespace hsns::test
