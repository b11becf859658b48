// The RoCEv2 flow probe as hsnsd runs it: attaches bpf/roce_flow.bpf.c to the configured interfaces
// (tc ingress/egress, or XDP on a collector port, with optional ERSPAN decapsulation), harvests the flow
// table at an interval and returns per-interval flow records.
//
// Contract:
// - FlowProbe::start() mounts bpffs when missing (bpf::ensure_pin_dir), checks that the kernel has every
//   program and map type the program uses (an error naming the missing one), loads the program with the
//   configured table and ring buffer sizes (set before load), pins its maps under config.pin_dir (reusing
//   maps already pinned there, so a restart after a crash or an upgrade loses no counts; a pinned table of
//   another size or layout is an error), calibrates the jiffies-to-ns conversion of the program's timestamps
//   (up to two ticks), and attaches through the attach layer (daemon/bpf/tc_attach.h): tc filters at the flow
//   probe's slot, handle kRoceTcHandle / priority kRoceTcPriority (before the isolation filter, returning
//   TC_ACT_UNSPEC), replacing a filter left by a previous process; XDP replaces any program. The clsact
//   qdisc is shared with isolation on the same netdev: created only when missing, and deleted by stop()
//   (even of a later process) only when hsns made it and isolation no longer has a filter on it. A
//   qdisc recorded by an older version in the roce_qdisc_owner map is handed over to the layer's registry.
//   Any failure detaches what was attached.
// - Harvests are two-phase batches numbered by an epoch kept in a pinned map (bpf/roce_flow.h, struct
//   roce_epoch_state), so that a kill -9 at any moment neither loses nor repeats a count:
//   1. harvest() flips the program to the other of two flow tables (a map-in-map update, which waits for
//      running programs), has the roce_harvest program copy the previous table's flows to a 1 MiB staging
//      array mapped into this process WITHOUT clearing them (no concurrent writer, so no packet's update is
//      split; no per-flow syscall; only the slots the table's occupancy bits name, except at this process's
//      first copy of each table and every 64th, which read the whole table), reads the overflow ring
//      buffer without consuming it, records "epoch E
//      drained" in the pinned map and returns the batch {E, records} (deltas since the previous batch).
//   2. The owner writes the batch durably (FlowSink::write tags it with E), then calls commit(batch): the
//      PSN state is advanced, the ring buffer consumed, the table cleared and E marked committed. The
//      table is cleared by one program run over the slots harvest() copied (roce_clear_listed), or, when
//      this process did not copy E itself (a restart), by one run over the whole table (roce_clear).
//   While E is pending (not committed: the write failed, or the process died before commit), harvest()
//   returns the same batch E again, and the tables are not flipped. A PSN regression across two batches is
//   detected from the flow's last PSN of the previous committed batch, kept in a pinned open-addressing
//   table (survives a restart; mapped while the probe runs); it is advanced only by commit, so a
//   re-harvested batch is checked against the same state and counts the same regressions.
// - recover(sink_last_epoch), after start() and whenever the owner opens another sink: the last epoch the
//   sink holds completely (FlowSink::last_epoch), or nullopt when there is no sink. If the pending epoch E
//   is in the sink (or there is no sink), its commit is finished without emitting it again; otherwise the
//   next harvest() re-emits it. Epoch numbering continues after the sink's last epoch when that is higher
//   (maps purged, another sink). Without recover(), the pending batch is re-emitted (never lost).
// - A crash between the flip and the "drained" record leaves data in the inactive table with nothing
//   pending: the next harvest() notices (the pinned map records which table is known empty), harvests that
//   table first without flipping, and only then goes on with the usual flip.
// - Test-only hooks: HSNS_TEST_CRASH_AFTER_DRAIN=before-commit|mid-commit makes commit() of a non-empty
//   batch SIGKILL its own process at its start or after the PSN state was advanced; =after-flip makes
//   harvest() SIGKILL it right after flipping the tables, before the epoch is recorded (see also FlowSink).
// - counters() returns the program's counters (enum roce_counter) summed over CPUs, cumulative since the
//   maps were created.
// - stop(purge) detaches everything the probe attached (its filters; its XDP program while it is still
//   the one attached; a clsact qdisc hsns made and no other hsns user holds); pinned maps stay unless
//   purge. The destructor calls stop(false) if stop was not called.
// - Thread-compatible: one owner thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bpf/tc_attach.h"
#include "flow_probe_config.h"
#include "flow_record.h"

namespace hsns::daemon {

inline constexpr std::uint32_t kRoceTcHandle = bpf::tc_slot(bpf::TcUser::flow_probe).handle;
inline constexpr std::uint32_t kRoceTcPriority = bpf::tc_slot(bpf::TcUser::flow_probe).priority;

// One harvest: the records of epoch `epoch` (deltas since the previous epoch). `caught_up` is true when the
// batch reaches the moment of the harvest (the active table was flipped and copied); false when it is a
// pending batch emitted again or a table a killed process left behind, after which the active table still
// holds counts: a last harvest before stopping repeats until a batch is caught up (FlowHarvester::drain).
struct FlowBatch {
  std::uint64_t epoch = 0;
  std::vector<FlowRecord> records;
  bool caught_up = false;
};

// Harvests that always reach a caught-up batch: a pending batch, then a table a killed process left behind,
// then the active table. The last harvest before a stop repeats up to this many times.
inline constexpr int kHarvestsToCatchUp = 3;

class FlowProbe {
 public:
  static tl::expected<std::unique_ptr<FlowProbe>, std::string> start(const FlowProbeConfig& config);
  virtual ~FlowProbe() = default;
  virtual tl::expected<void, std::string> recover(std::optional<std::uint64_t> sink_last_epoch) = 0;
  virtual tl::expected<FlowBatch, std::string> harvest() = 0;
  virtual tl::expected<void, std::string> commit(const FlowBatch& batch) = 0;
  virtual std::array<std::uint64_t, ROCE_CNT_MAX> counters() const = 0;
  virtual std::chrono::milliseconds interval() const = 0;
  virtual void stop(bool purge_pinned_maps) = 0;
};

const char* counter_name(int counter);

// The inner-map template of the flow tables (roce_tables' values), to pass to bpf_map__set_inner_map_fd
// before the object is loaded: an mmapable array of `slots` slots with a BTF layout of its own (a u32 key and
// a struct of a slot's size with no special field). A template without BTF would match the tables on current
// kernels but not on Linux 6.1, which compares a template and an inner map by the offsets of their BTF
// special fields ("none" for a map with BTF, which libbpf gives the tables, "unknown" for one without):
// there the object would not load. Returns the map's fd (the caller closes it once the object is loaded) or
// -errno.
int create_flow_table_template(std::uint32_t slots);

// Test-only crash hook (HSNS_TEST_CRASH_AFTER_DRAIN): kills the calling process with SIGKILL, exactly as
// kill -9 would, when the variable equals `point`. Never set it outside the restart tests.
void flow_test_crash_point(const char* point);

}  // namespace hsns::daemon
