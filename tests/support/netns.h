// Network namespaces for tests: named namespaces with veth pairs and addresses, commands run inside
// them, a thread moved into one, and a throw-away anonymous namespace for one piece of code.
//
// Contract:
// - Namespaces creates namespaces named "<prefix>-<pid>-<suffix>" (lo up, nothing else, no route out).
//   Its destructor deletes every namespace it created and every veth end it put in the root namespace,
//   also when the test failed or threw; a veth pair dies with the namespace holding one of its ends.
//   Declare it before the Process members that run inside its namespaces, so those are killed first.
// - Its constructor deletes namespaces of the same prefix left by test processes that no longer run
//   (crashed runs); add() deletes a leftover of the same name first.
// - add(), veth() and link_to_root() throw std::runtime_error naming the failed command and its output.
// - Addresses are what the caller gives (tests use 198.18.0.0/15 and 2001:db8::/32); duplicate address
//   detection is off on every veth end (IPv6 usable at once, link-local too). link_to_root() alone picks
//   addresses: a /30 from 198.19.0.0/16 unique per test process and link.
// - Commands run inside a namespace through `nsenter --net=/run/netns/<name>`: the mount namespace (and
//   so /sys/fs/bpf pins and the test's files) stays the host's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/shell.h"

namespace hsns::testing {

struct VethEnd {
  std::string ns;  // "" for the root namespace
  std::string ifname;
  std::vector<std::string> addresses;  // "198.18.40.1/24", "2001:db8:40::1/64"
};

// A link between a namespace and the root namespace (root_address answers from the root side).
struct RootLink {
  std::string root_ifname;
  std::string root_address;  // without prefix length (a /30)
  std::string ns_address;
};

class Namespaces {
 public:
  explicit Namespaces(std::string prefix);
  ~Namespaces();
  Namespaces(const Namespaces&) = delete;
  Namespaces& operator=(const Namespaces&) = delete;

  // Creates namespace <prefix>-<pid>-<suffix> (returns it as it is when this object made it already).
  std::string add(const std::string& suffix);
  // A veth pair between two ends, both up, with their addresses.
  void veth(const VethEnd& a, const VethEnd& b);
  // A veth pair ns:ifname <-> root namespace with a fresh /30; waits (up to 10 s) until the root side
  // answers a ping from inside.
  RootLink link_to_root(const std::string& ns, const std::string& ifname);
  const std::vector<std::string>& names() const { return created_; }

  // argv / a command line prefixed to run inside ns.
  static std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv);
  static std::string in(const std::string& ns, const std::string& command_line);
  static CommandResult exec(const std::string& ns, const std::vector<std::string>& argv);
  // `ip -n <ns> <args...>`; a failure is a test failure naming the command. Returns the output.
  static std::string ip(const std::string& ns, const std::vector<std::string>& args);

 private:
  std::string prefix_;
  std::vector<std::string> created_;
  std::vector<std::string> root_links_;
};

// Moves the calling thread into the named namespace, and back on destruction.
class NetnsScope {
 public:
  explicit NetnsScope(const std::string& name);  // throws std::runtime_error
  ~NetnsScope();
  NetnsScope(const NetnsScope&) = delete;
  NetnsScope& operator=(const NetnsScope&) = delete;

 private:
  int self_ = -1;
};

// Runs body on a thread of its own inside a new anonymous network namespace, which disappears (with
// every netdev made in it) when the thread ends. Commands started from body run in it too. An exception
// from body is rethrown here; failing to make the namespace is a test failure.
void run_in_fresh_netns(const std::function<void()>& body);

}  // namespace hsns::testing
