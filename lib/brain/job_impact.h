// Job impact (issue 12, item 7): which registered jobs an incident's root cause hits, and their ranks.
// Pure library over hsns_topology; the aggregator's incident service gives it the job store's jobs.
//
// Contract:
// - JobImpact is built from a located topology and job descriptions (each rank's host and NPU index; a job
//   may carry planned flows: rank pairs with the topology links of their planned path). Building indexes
//   every rank by its NPU link, host and leaf: O(ranks + planned links). Immutable; thread-safe.
// - affected(root_causes) looks at the top candidate and every candidate scoring within 0.05 of it (a tie
//   is not broken by guessing) and answers, per job hit, its ranks, ascending; jobs ordered by id:
//   * a port, module or link on an NPU link: the rank on that NPU;
//   * a host (host_nic): every rank on the host;
//   * a leaf switch: every rank whose NPU link ends on that leaf;
//   * a fabric link (leaf-spine, spine-core) or a spine or core switch: with planned flows, the two ranks
//     of every planned flow whose path crosses it; without, the ranks whose traffic may cross it under
//     ECMP: for a leaf-spine link or a spine, the job's ranks on the leaves below it, when the job's hosts
//     span more than one leaf domain (SU): inside one SU a rail-optimised fabric carries a job's traffic
//     rail-local (NPU k to NPU k through leaf k; cross-rail hops stay in the host, PXN), so it never leaves
//     its leaves; for a spine-core link or a core, every rank of a job spanning more than one spine
//     domain, on leaves below that spine or core.
//   * a candidate whose fault type has no data-plane effect (kNoTrafficFaults: a failed fan or one power
//     supply of a redundant set) hits no job; a switch that does stop forwarding shows it on its ports.
//   * a candidate off the topology whose entity starts with a job host's name: every rank on that host.
//   A rank whose host or NPU the topology lacks is skipped.
// - Time: a job counts only when it ran during the incident: its [started_ms, ended_ms) (event time; 0 =
//   from the beginning / still running) overlaps the window [from_ms, to_ms] affected() is given (the
//   incident's first alarm to its resolution; to_ms 0 = still open).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brain/correlate.h"

namespace hsns::brain {

struct JobRankPlace {
  std::uint32_t rank = 0;
  std::string host;
  std::uint32_t npu = 0;
};

struct PlannedFlow {
  std::uint32_t src_rank = 0;
  std::uint32_t dst_rank = 0;
  std::vector<topology::LinkId> links;  // the planned path's links
};

struct JobDescription {
  std::string id;
  std::string name;
  std::vector<JobRankPlace> ranks;
  std::vector<PlannedFlow> planned;  // empty: no route plan (ECMP reach)
  std::int64_t started_ms = 0;       // event time it was registered; 0: before anything the brain saw
  std::int64_t ended_ms = 0;         // event time it was released; 0: still running
};

// When an incident was live, for job impact: from its first alarm to its resolution (0: still open).
struct ImpactWindow {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
};

// Fault types of a redundant component whose failure does not stop traffic: no job is affected.
inline constexpr std::string_view kNoTrafficFaults[] = {"switch_fan_fault", "switch_power_fault"};

struct AffectedJob {
  std::string job_id;
  std::string name;
  std::vector<std::uint32_t> ranks;  // ascending
  bool operator==(const AffectedJob&) const = default;
};

class JobImpact {
 public:
  JobImpact(std::shared_ptr<const LocatedTopology> topo, std::vector<JobDescription> jobs);
  ~JobImpact();
  JobImpact(const JobImpact&) = delete;
  JobImpact& operator=(const JobImpact&) = delete;

  std::vector<AffectedJob> affected(std::span<const RootCauseCandidate> root_causes,
                                    ImpactWindow window = {}) const;
  std::size_t jobs() const;

 private:
  struct Index;
  std::unique_ptr<Index> index_;
};

}  // namespace hsns::brain
