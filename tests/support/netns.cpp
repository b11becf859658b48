#include "support/netns.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace hsns::testing {
namespace {

std::atomic<int> g_root_links{0};

void run_or_throw(const std::vector<std::string>& argv) {
  const auto r = run_command(argv);
  if (!r.ok()) {
    std::ostringstream message;
    message << r;
    throw std::runtime_error(message.str());
  }
}

// `ip [-n ns] args...`
std::vector<std::string> ip_in(const std::string& ns, std::vector<std::string> args) {
  std::vector<std::string> argv = {"ip"};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void configure_end(const VethEnd& end) {
  // DAD off for the link-local address too, so neighbour discovery works as soon as the link is up.
  std::vector<std::string> dad = {"sysctl", "-qw", "net.ipv6.conf." + end.ifname + ".accept_dad=0"};
  (void)run_command(end.ns.empty() ? dad : Namespaces::in(end.ns, dad));
  for (const auto& address : end.addresses) {
    std::vector<std::string> add = {"addr", "add", address, "dev", end.ifname};
    if (address.find(':') != std::string::npos) add.push_back("nodad");
    run_or_throw(ip_in(end.ns, add));
  }
  run_or_throw(ip_in(end.ns, {"link", "set", end.ifname, "up"}));
}

}  // namespace

Namespaces::Namespaces(std::string prefix) : prefix_(std::move(prefix)) {
  std::istringstream list(run_command({"ip", "netns", "list"}).output);
  std::string line;
  while (std::getline(list, line)) {
    const std::string name = line.substr(0, line.find(' '));
    if (name.rfind(prefix_ + "-", 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + prefix_.size() + 1);
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) (void)run_command({"ip", "netns", "del", name});
  }
}

Namespaces::~Namespaces() {
  for (auto it = root_links_.rbegin(); it != root_links_.rend(); ++it)
    (void)run_command({"ip", "link", "del", *it});
  for (auto it = created_.rbegin(); it != created_.rend(); ++it)
    (void)run_command({"ip", "netns", "del", *it});
}

std::string Namespaces::add(const std::string& suffix) {
  const std::string name = prefix_ + "-" + std::to_string(::getpid()) + "-" + suffix;
  for (const auto& n : created_)
    if (n == name) return name;
  (void)run_command({"ip", "netns", "del", name});
  run_or_throw({"ip", "netns", "add", name});
  created_.push_back(name);
  run_or_throw(ip_in(name, {"link", "set", "lo", "up"}));
  return name;
}

void Namespaces::veth(const VethEnd& a, const VethEnd& b) {
  std::vector<std::string> argv = {"ip", "link", "add", a.ifname};
  if (!a.ns.empty()) argv.insert(argv.end(), {"netns", a.ns});
  argv.insert(argv.end(), {"type", "veth", "peer", "name", b.ifname});
  if (!b.ns.empty()) argv.insert(argv.end(), {"netns", b.ns});
  run_or_throw(argv);
  if (a.ns.empty())
    root_links_.push_back(a.ifname);
  else if (b.ns.empty())
    root_links_.push_back(b.ifname);
  configure_end(a);
  configure_end(b);
}

RootLink Namespaces::link_to_root(const std::string& ns, const std::string& ifname) {
  const int pid = static_cast<int>(::getpid());
  const int n = g_root_links++;
  // 198.19.<a>.<b>/30, unique per test process and link.
  const int slot = (pid * 8 + n) % (250 * 64);
  const std::string net = "198.19." + std::to_string(slot / 64) + ".";
  const int base = (slot % 64) * 4;
  RootLink link{"hsr" + std::to_string(pid % 100000) + "x" + std::to_string(n),
                net + std::to_string(base + 1), net + std::to_string(base + 2)};
  (void)run_command({"ip", "link", "del", link.root_ifname});  // a crashed run's, with the same pid
  veth({"", link.root_ifname, {link.root_address + "/30"}}, {ns, ifname, {link.ns_address + "/30"}});
  wait_for(
      [&] {
        return exec(ns, {"ping", "-c1", "-W1", link.root_address}).ok();
      },
      std::chrono::seconds(10));
  return link;
}

std::vector<std::string> Namespaces::in(const std::string& ns, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"nsenter", "--net=/run/netns/" + ns});
  return argv;
}

std::string Namespaces::in(const std::string& ns, const std::string& command_line) {
  return "nsenter --net=/run/netns/" + ns + " " + command_line;
}

CommandResult Namespaces::exec(const std::string& ns, const std::vector<std::string>& argv) {
  return run_command(in(ns, argv));
}

std::string Namespaces::ip(const std::string& ns, const std::vector<std::string>& args) {
  return must(ip_in(ns, args));
}

NetnsScope::NetnsScope(const std::string& name) {
  self_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  const int target = ::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (self_ < 0 || target < 0 || ::setns(target, CLONE_NEWNET) != 0) {
    const std::string why = std::strerror(errno);
    if (target >= 0) ::close(target);
    if (self_ >= 0) ::close(self_);
    throw std::runtime_error("cannot enter netns " + name + ": " + why);
  }
  ::close(target);
}

NetnsScope::~NetnsScope() {
  if (::setns(self_, CLONE_NEWNET) != 0) std::abort();  // a test thread left in a test namespace is fatal
  ::close(self_);
}

void run_in_fresh_netns(const std::function<void()>& body) {
  std::string setup_error;
  std::exception_ptr thrown;
  std::thread t([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      setup_error = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      return;
    }
    try {
      body();
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  t.join();
  EXPECT_EQ(setup_error, "");
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace hsns::testing
