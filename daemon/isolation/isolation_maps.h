// The loaded isolation program (bpf/isolation.bpf.c) and typed access to its maps. IsolationManager
// builds on it; the fixture tests use it directly to run the program with bpf_prog_test_run_opts.
//
// Contract:
// - load(pin_dir) opens and loads the skeleton. With a non-empty pin_dir (which must exist on a bpffs),
//   each map is bound to pin_dir/<map name>: an existing pinned map is reused (policies and counters
//   survive a restart), a missing one is created and pinned. An empty pin_dir loads unpinned maps.
//   A kernel without one of the program's program or map types fails before the load, naming the type
//   (bpf/kernel_features.h). Errors carry libbpf's message (the verifier log tail when the kernel refuses
//   the program).
// - Ports are keyed by ifindex. set_prefixes() makes the port's trie entries equal to the given prefixes
//   by a diff against what the maps hold: new entries are inserted before stale ones are deleted, so a
//   change never drops traffic that both the old and the new policy allow. Host bits of a prefix are
//   masked off. For an enforced port with ifindex < HSNS_ISO_FAST_IFINDEX it also publishes the port's
//   hot-path policy (hsns_iso_fast, see bpf/isolation.h) between the inserts and the deletes: a fresh
//   one-element inner map swapped in with one outer-map update (the kernel returns after an RCU grace
//   period, a few ms), skipped when the policy is unchanged. The policy is always derived from the port
//   entry (its counter slot) and the port's trie entries (each family inline when it has at most
//   HSNS_ISO_FAST_V4 / HSNS_ISO_FAST_V6 prefixes, else flagged for the trie): set_port() publishes it,
//   forget_port() withdraws it before anything else.
// - load() with a pin_dir reconciles the policies with the pinned ports and tries (maps pinned by a version
//   without hsns_iso_fast, or a crash between two updates).
// - set_port() makes a port enforced (see bpf/isolation.h) or updates its flags/name; the counter slot
//   is assigned here (port.slot is ignored): an existing port keeps its slot, a new port gets the lowest
//   free slot, zeroed before the port entry is published. forget_port() deletes the port entry and the
//   trie entries and zeroes the counter slot.
// - The object owns the skeleton (RAII); destroying it closes every fd but leaves pins and tc filters
//   alone. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bpf/isolation.h"
#include "hsns/ip.h"

struct isolation;

namespace hsns::daemon {

struct IsolationCounters {
  std::uint64_t dropped_packets = 0;
  std::uint64_t dropped_bytes = 0;
  std::uint64_t passed_packets = 0;
  friend bool operator==(const IsolationCounters&, const IsolationCounters&) = default;
};

class IsolationMaps {
 public:
  static tl::expected<std::unique_ptr<IsolationMaps>, std::string> load(const std::string& pin_dir);
  ~IsolationMaps();
  IsolationMaps(const IsolationMaps&) = delete;
  IsolationMaps& operator=(const IsolationMaps&) = delete;

  int program_fd() const;
  std::uint32_t program_id() const;  // the kernel's id of the loaded program

  tl::expected<void, std::string> set_prefixes(std::uint32_t ifindex, const std::vector<IpPrefix>& allowed);
  // The port's prefixes as the tries hold them, sorted (IPv4 first, then by address and length).
  tl::expected<std::vector<IpPrefix>, std::string> prefixes(std::uint32_t ifindex) const;

  tl::expected<void, std::string> set_port(std::uint32_t ifindex, const hsns_iso_port& port);
  std::map<std::uint32_t, hsns_iso_port> ports() const;
  tl::expected<void, std::string> forget_port(std::uint32_t ifindex);

  // Summed over CPUs; zero when the port is not enforced.
  IsolationCounters counters(std::uint32_t ifindex) const;

  // The port's hot-path policy as the program reads it; nullopt for a port without one (not enforced, or
  // ifindex >= HSNS_ISO_FAST_IFINDEX).
  std::optional<hsns_iso_policy> fast_policy(std::uint32_t ifindex) const;

 private:
  explicit IsolationMaps(isolation* skel) : skel_(skel) {}
  tl::expected<void, std::string> zero_counters(std::uint32_t slot);
  tl::expected<void, std::string> publish_policy(std::uint32_t ifindex, const hsns_iso_policy& pol);
  tl::expected<void, std::string> unpublish_policy(std::uint32_t ifindex);
  // Publishes the policy derived from the port's trie entries (no-op for ifindex >= HSNS_ISO_FAST_IFINDEX).
  tl::expected<void, std::string> republish_policy(std::uint32_t ifindex, std::uint32_t slot);
  tl::expected<void, std::string> reconcile_policies();
  isolation* skel_;
};

}  // namespace hsns::daemon
