// Test helpers for the flow probe's end-to-end tests: the flow sink's batches read independently of the
// library and per-flow totals (the lab-specific part), and this directory's names for the shared harness
// in tests/support (commands, processes, namespaces with veth pairs in 198.18.0.0/15 and 2001:db8::/32,
// no route out).
//
// Contract: Lab removes every namespace it created in its destructor (also when a test fails); processes
// started with spawn are killed (SIGKILL) by their Proc destructor unless waited for. Commands run
// through /bin/sh; inside a namespace with `nsenter --net` so the mount namespace (and /sys/fs/bpf pins)
// stays the host's. Root only.
#pragma once

#include <gtest/gtest.h>
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

#include "support/netns.h"
#include "support/process.h"
#include "support/shell.h"

namespace hsns::test {

// The flow probe tests' names for the shared harness (tests/support): commands through /bin/sh, polling,
// background processes (support/process.h) and namespaces with veth pairs (support/netns.h).
struct CmdResult {
  int status = -1;
  std::string out;
};

// Runs cmd through /bin/sh; out holds stdout (and stderr unless with_stderr is false).
inline CmdResult sh(const std::string& cmd, bool with_stderr = true) {
  auto r = ::hsns::testing::sh(
      cmd, with_stderr ? ::hsns::testing::Stderr::capture : ::hsns::testing::Stderr::discard);
  return {r.status, std::move(r.output)};
}

using ::hsns::testing::read_file;
using ::hsns::testing::wait_for;

// True while pid runs (not yet exited; a zombie counts as exited). Does not reap.
inline bool running(pid_t pid) {
  return ::hsns::testing::pid_running(pid);
}

// A background process, SIGKILLed (with its process group) on destruction unless waited for.
class Proc {
 public:
  Proc() = default;
  explicit Proc(::hsns::testing::Process process) : process_(std::move(process)) {}
  pid_t pid() const { return process_.pid(); }
  void signal(int sig) const { process_.signal(sig); }
  bool alive() const { return process_.alive(); }
  // Waits up to `timeout` for exit; returns the exit status, or -1 (still running / killed by a signal).
  int wait(std::chrono::milliseconds timeout) {
    const auto s = process_.wait(timeout);
    return s && s->signal == 0 ? s->code : -1;
  }
  // Waits up to `timeout` for the process to end by a signal (e.g. a test crash hook's SIGKILL); returns the
  // signal, or 0 if it exited or still runs (then it is left as it is).
  int wait_signal(std::chrono::milliseconds timeout) {
    const auto s = process_.wait(timeout);
    return s ? s->signal : 0;
  }
  void kill9() { process_.kill(); }

 private:
  ::hsns::testing::Process process_;
};

// Runs argv in the background with stdout/stderr written to files (truncated first). env: variables set
// for this process only.
inline Proc spawn(const std::vector<std::string>& argv, const std::string& out_path,
                  const std::string& err_path, std::map<std::string, std::string> env = {}) {
  ::hsns::testing::ProcessOptions options;
  options.env = std::move(env);
  options.stdout_path = out_path;
  options.stderr_path = err_path;
  options.append = false;
  return Proc(::hsns::testing::Process(argv, options));
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

// Namespaces "<prefix>-<pid>-<name>" with veth pairs; all removed on destruction (support/netns.h).
class Lab {
 public:
  explicit Lab(std::string prefix) : namespaces_(std::move(prefix)) {}

  // Creates (or returns) namespace `name`, with lo up and nothing else.
  std::string ns(const std::string& name) { return namespaces_.add(name); }

  // veth pair a@ns_a <-> b@ns_b, up, optional addresses ("198.18.40.1/24"), IPv6 without DAD. A failure
  // is reported (naming the command) and returns false.
  bool veth(const std::string& ns_a, const std::string& a, const std::string& ns_b, const std::string& b,
            const std::vector<std::string>& addr_a = {}, const std::vector<std::string>& addr_b = {}) {
    try {
      namespaces_.veth({ns_a, a, addr_a}, {ns_b, b, addr_b});
      return true;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      return false;
    }
  }

  static std::string in(const std::string& ns, const std::string& cmd) {
    return ::hsns::testing::Namespaces::in(ns, cmd);
  }
  static std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv) {
    return ::hsns::testing::Namespaces::in(ns, std::move(argv));
  }

 private:
  ::hsns::testing::Namespaces namespaces_;
};

}  // namespace hsns::test
