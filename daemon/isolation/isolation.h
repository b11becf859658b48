// Subnet isolation on the host: a tc egress eBPF program on each parameter-plane port drops IPv4/IPv6
// packets whose destination lies outside the prefixes that port may reach, and counts them per port.
//
// Contract:
// - create() loads the program once (bpf/isolation.bpf.c) and pins its maps under options.pin_dir
//   (bpf::ensure_pin_dir: mounting bpffs at /sys/fs/bpf first when it is not mounted), so a daemon restart
//   keeps both the allowed prefixes and the drop counters. Pins the program cannot reuse (left by a version
//   with another map layout) are replaced by fresh maps, with a warning in the log. It fails with a message
//   when the kernel lacks a program or map type the program uses (naming it) or refuses the program.
// - apply(netdev, prefixes) replaces that port's allowed prefixes through map updates (a diff: new trie
//   entries first, then the port's hot-path policy swapped in whole, then stale entries deleted; see
//   isolation_maps.h and bpf/isolation.h for the maps) and attaches the program to netdev's clsact egress
//   hook if this instance's program is not there yet (through the attach layer, daemon/bpf/tc_attach.h, which
//   creates the clsact qdisc only when missing and counts isolation as one of its holders); changing
//   prefixes never re-attaches. A filter or qdisc deleted by hand is restored by the next apply(). An empty
//   prefix list drops all IP traffic of that port except IPv6 link-local scope (fe80::/10, ff02::/16:
//   neighbour discovery and MLD, which never leave the link). Non-IP traffic (ARP, LLDP) always passes. IP
//   behind up to two VLAN tags is checked; an IP/VLAN frame cut before its destination address is dropped.
//   Ports never applied are not touched at all.
// - remove(netdev) detaches the program from netdev, releases the clsact qdisc (the attach layer deletes it
//   only if hsns made it and no other hsns user, such as the flow probe, still has a filter on it), and
//   forgets the port's prefixes and counters. Removing a port never applied succeeds and does
//   nothing. detach_all() does that for every port (SIGTERM path).
// - Destroying the manager without detach_all() leaves the tc filters, the pinned maps and therefore the
//   enforcement in place (a crash or restart does not open the ports). A new manager on the same pin_dir
//   takes over: it recovers the applied ports from the pinned port map (dropping entries of netdevs that
//   no longer exist), counts on from the pinned counters, and its first apply() of a port replaces the
//   old filter's program in place (same handle and priority, no window without a filter).
// - Who made a port's clsact qdisc is kept by the attach layer in a pinned registry, so remove() after a
//   restart still deletes only qdiscs hsns made. A port entry of an older version that carries
//   HSNS_ISO_PORT_OWNS_QDISC is handed over to that registry on recovery (and the flag cleared). Caveat: a
//   qdisc hsns made is deleted with any non-hsns filters that were added to it later.
// - The filter sits at isolation's slot of the attach layer (handle kIsolationTcHandle, priority
//   kIsolationTcPriority) on clsact egress and returns TC_ACT_OK for what it passes, so filters with a
//   higher priority number on the same hook do not run; observation programs (the flow probe) sit at a
//   lower number and return TC_ACT_UNSPEC.
// - ifindexes are per network namespace: one manager per pin_dir per network namespace (the emulated
//   cluster gives each host namespace its own pin_dir). netdev names are resolved in the namespace of
//   the calling thread.
// - counters() and attached() list the ports this manager applied or recovered, sorted by name.
// - remove_pins(pin_dir) unlinks the pinned maps and the directory (uninstall, tests); ENOENT is success.
// - Thread-compatible: one owner (the daemon's main loop) calls it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bpf/tc_attach.h"
#include "hsns/ip.h"

namespace hsns::daemon {

inline constexpr std::uint32_t kIsolationTcHandle = bpf::tc_slot(bpf::TcUser::isolation).handle;
inline constexpr std::uint32_t kIsolationTcPriority = bpf::tc_slot(bpf::TcUser::isolation).priority;

struct IsolationOptions {
  std::string pin_dir = "/sys/fs/bpf/hsns/isolation";
};

struct PortDropCounters {
  std::string netdev;
  int ifindex = 0;
  std::uint64_t dropped_packets = 0;  // outside the allowed prefixes
  std::uint64_t dropped_bytes = 0;
  std::uint64_t passed_packets = 0;  // IP packets allowed through
};

class IsolationManager {
 public:
  static tl::expected<std::unique_ptr<IsolationManager>, std::string> create(const IsolationOptions& options);
  static tl::expected<void, std::string> remove_pins(const std::string& pin_dir);
  virtual ~IsolationManager() = default;

  virtual tl::expected<void, std::string> apply(const std::string& netdev,
                                                const std::vector<IpPrefix>& allowed) = 0;
  virtual tl::expected<void, std::string> remove(const std::string& netdev) = 0;
  virtual void detach_all() = 0;
  virtual std::vector<PortDropCounters> counters() const = 0;
  virtual std::vector<std::string> attached() const = 0;
};

}  // namespace hsns::daemon
