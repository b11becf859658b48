// The RoCEv2 flow probe as hsnsd runs it: attaches bpf/roce_flow.bpf.c to the configured interfaces
// (tc ingress/egress, or XDP on a collector port, with optional ERSPAN decapsulation), harvests the flow
// table at an interval and returns per-interval flow records.
//
// Contract:
// - FlowProbe::start() mounts bpffs when missing, loads the program with the configured table and ring
//   buffer sizes (set before load), pins its maps under config.pin_dir (reusing maps already pinned there,
//   so a restart after a crash or an upgrade loses no counts; a pinned table of another size or layout is
//   an error), calibrates the jiffies-to-ns conversion of the program's timestamps (up to two ticks),
//   and attaches: tc filters at handle kRoceTcHandle / priority kRoceTcPriority (before the isolation
//   filter, returning TC_ACT_UNSPEC), replacing a filter left by a previous process; XDP replaces any
//   program. A clsact qdisc is created only when missing, and remembered in a pinned map so that stop()
//   (even of a later process) removes only qdiscs the probe made. Any failure detaches what was attached.
// - harvest() flips the program to the other of two flow tables (a map-in-map update, which waits for
//   running programs), then has the roce_harvest program copy the previous table's flows to a 1 MiB
//   staging array mapped into this process and clear them (no concurrent writer, so no packet's update is
//   split; no per-flow syscall), merges the overflow ring buffer's records, and returns the deltas since
//   the previous harvest. A PSN regression across two harvests is detected from the flow's last PSN at the
//   previous harvest, kept in a pinned open-addressing table (so it survives a restart; mapped only while
//   a harvest runs).
// - counters() returns the program's counters (enum roce_counter) summed over CPUs, cumulative since the
//   maps were created.
// - stop(purge) detaches everything (no filters, programs or probe-made qdiscs left); pinned maps stay
//   unless purge. The destructor calls stop(false) if stop was not called.
// - Thread-compatible: one owner thread. Known loss window: records drained but not yet written when the
//   process is killed (a kill between the flip and the drain loses nothing: the next harvests drain both).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "flow_probe_config.h"
#include "flow_record.h"

namespace hsns::daemon {

inline constexpr std::uint32_t kRoceTcHandle = 0x4f52;
inline constexpr std::uint32_t kRoceTcPriority = 10;

class FlowProbe {
 public:
  static tl::expected<std::unique_ptr<FlowProbe>, std::string> start(const FlowProbeConfig& config);
  virtual ~FlowProbe() = default;
  virtual tl::expected<std::vector<FlowRecord>, std::string> harvest() = 0;
  virtual std::array<std::uint64_t, ROCE_CNT_MAX> counters() const = 0;
  virtual std::chrono::milliseconds interval() const = 0;
  virtual void stop(bool purge_pinned_maps) = 0;
};

const char* counter_name(int counter);

}  // namespace hsns::daemon
