// The one place where hsnsd attaches eBPF programs to netdevs: tc filters on the clsact qdisc (isolation,
// the flow probe) and XDP (the flow probe on a collector port). Several users share one clsact qdisc per
// netdev; this layer decides who made it and when it may go.
//
// Ownership rule (qdisc_owners.h): a clsact qdisc hsns did not create is never deleted. One hsns created is
// deleted when the last hsns user detaches from it. Each user's filter sits at its own slot (tc_slot():
// handle and priority per user, the same on ingress and egress), so detaching one user never removes
// another's filter.
//
// Where the knowledge lives: a pinned BPF hash map `hsns_clsact_owners` at the root of the bpffs that holds
// the user's pin dir (bpffs_root()), key {network namespace cookie, ifindex}, value QdiscRecord (holders,
// created-by-hsns). Why a pinned map: it lives exactly as long as the qdiscs it describes can (bpffs and tc
// state both end with the boot, a state file on disk would outlive them), it is shared by every process
// (hsnsd, hsns-flowprobe) and every restart of them, and each update is one atomic syscall. The network
// namespace cookie (SO_NETNS_COOKIE, never reused during a boot) keeps ifindexes of different namespaces
// apart (the emulated cluster runs one hsnsd per namespace on one bpffs). The holders are a bit per user,
// not a counter, so a user that attaches twice, or crashes and attaches again after its restart, counts
// once; a holder whose filter is no longer on the qdisc is dropped (the kernel's filters are checked on
// every attach/detach), so nothing can keep a qdisc alive forever or let a stale record claim a qdisc
// someone else made after ours was deleted. Records of the calling namespace's netdevs that no longer
// exist are pruned on every attach/detach. The map is unpinned when its last record goes. Records of a
// network namespace deleted while hsns was attached in it cannot be recognised and stay (harmless: its
// cookie never comes back).
//
// Contract:
// - TcAttach::open(pin_dir) (pin_dir on a bpffs: ensure_pin_dir first) locates the registry. Cheap; the
//   object holds two paths, no fds.
// - attach(ifindex, user, hook, prog_fd) creates the clsact qdisc when missing, records user as a holder
//   and attaches prog_fd at user's slot on hook, replacing a filter already there (a previous process's).
// - detach(ifindex, user) removes user's filters from both hooks and releases the qdisc (deleting it by
//   the rule above). A netdev that is gone, or a user never attached, succeeds.
// - filter_prog_id() is the kernel id of the program in user's slot, 0 when none.
// - adopt_created(ifindex, user) records a qdisc created by a version before this layer (its own flag said
//   so) as hsns's, when there is no record yet and user's filter is on it.
// - Every operation runs under an exclusive flock(2) of the bpffs root directory (across threads and
//   processes) and in the network namespace of the calling thread. libbpf's messages end up in the error
//   values (or are dropped when a failure is expected, such as an existing qdisc).
// - xdp_attach() attaches prog_fd as the netdev's XDP program, replacing any; xdp_detach() removes it only
//   while prog_fd's program is still the one attached (never someone else's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hsns/error.h"
#include "qdisc_owners.h"

namespace hsns::daemon::bpf {

struct TcSlot {
  std::uint32_t handle = 0;
  std::uint32_t priority = 0;
};

// Isolation enforces (returns TC_ACT_OK/SHOT) and runs after the flow probe, which only observes
// (TC_ACT_UNSPEC): a lower priority number runs first.
constexpr TcSlot tc_slot(TcUser user) {
  return user == TcUser::isolation ? TcSlot{0x150, 100} : TcSlot{0x4f52, 10};
}
static_assert(tc_slot(TcUser::isolation).handle != tc_slot(TcUser::flow_probe).handle &&
                  tc_slot(TcUser::isolation).priority != tc_slot(TcUser::flow_probe).priority,
              "every user needs a slot of its own");

enum class TcHook { ingress, egress };

inline constexpr const char* kQdiscRegistryName = "hsns_clsact_owners";

class TcAttach {
 public:
  static Result<TcAttach> open(const std::string& pin_dir);

  Result<void> attach(int ifindex, TcUser user, TcHook hook, int prog_fd) const;
  Result<void> detach(int ifindex, TcUser user) const;
  std::uint32_t filter_prog_id(int ifindex, TcUser user, TcHook hook) const;
  Result<void> adopt_created(int ifindex, TcUser user) const;

  // The registry's record of ifindex in the calling thread's namespace (nullopt: none).
  Result<std::optional<QdiscRecord>> record(int ifindex) const;
  const std::string& registry_path() const { return registry_; }

 private:
  TcAttach(std::string root, std::string registry) : root_(std::move(root)), registry_(std::move(registry)) {}
  std::string root_;
  std::string registry_;
};

Result<void> xdp_attach(int ifindex, int prog_fd);
Result<void> xdp_detach(int ifindex, int prog_fd);

}  // namespace hsns::daemon::bpf
