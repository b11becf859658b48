// The parsed current topology, cached per revision, shared by the topology and scheduling services.
//
// Contract:
// - current() is the stored model (not_found while none exists), parsed once per revision: reads do not
//   re-parse. with_jobs() is the stored model with every NPU a registered job holds set to allocated,
//   rebuilt only when the topology revision or the jobs revision moved (one copy of the parsed model
//   plus set_npu_state per held NPU). Snapshots are immutable and shared; the cache is thread-safe.
// - write() stores a change as a new revision, with the LLDP observations given (observations alone keep
//   the revision), and caches the model as it reads back from the stored document: the change returns
//   the new topology (nullopt: no change; nothing is stored unless there are observations);
//   need_current false means a missing topology is not an error (import, generate; the change then gets
//   nullptr). Writes are serialised in-process and checked against the stored revision (conflict on
//   "revision" if another process wrote meanwhile).
// - replace() stores a model the caller built together with the document it was built from (an import of
//   a JSON document: the client's text is stored as is, so it reads back to this very model) and caches
//   the model as given: the model is built once, never re-parsed from the stored text.
// - set_states() changes device states incrementally: the plan resolves the changes against the current
//   model (under the writer lock, so nothing replaces the model meanwhile); the changes that differ from
//   the model are stored as device state rows (store/topology_store.h) in one transaction as the next
//   revision, and applied to the cached model itself, never by reloading the document: in place when no
//   reader holds the snapshot (the cache is its only owner), else to a copy that replaces it, so a
//   snapshot a reader holds never changes. Nothing changed: nothing stored, the revision stays.
// - Locking: no lock a reader needs is held while a model is built. write() builds the new model, its
//   stored document and the model read back from it before it takes any lock readers use; it then holds
//   the load lock across the store commit and swaps the cached snapshot under the cache lock, so
//   current() answers with the previous revision until the new one is committed and cached. A reader
//   that finds the store ahead of the cache (another process wrote, or the first read after start) parses
//   the stored document under the load lock only.
// - Errors are hsns::Error: the store's (through from_store, services/store_errors.h), the change's as it
//   returned them, internal when a stored document does not parse.
// - Bounds: every model that gets here went through the size checks of topology/limits.h (import,
//   generate, read-back, LLDP merge), so one write or load costs at most the cost of a model at the
//   limits (docs/topology.md, "Limits"). The store must outlive the cache.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hsns/error.h"
#include "store/job_store.h"
#include "store/topology_store.h"
#include "topology/topology.h"

namespace hsns::services {

// The current topology, parsed, with the record it came from.
struct TopologySnapshot {
  std::shared_ptr<const topology::Topology> topology;
  std::int64_t revision = 0;
  std::string source;
  std::string updated_at;
};

// (host, NPU index) -> the job holding it.
using HeldNpus = std::map<std::pair<std::string, std::uint32_t>, std::string>;

// The current topology with the registered jobs' NPUs allocated.
struct AllocatedSnapshot {
  TopologySnapshot base;                               // as stored
  std::shared_ptr<const topology::Topology> topology;  // base with held NPUs set to allocated
  std::int64_t jobs_revision = 0;
  std::shared_ptr<const HeldNpus> held;  // every held NPU, also those the topology lacks
};

class TopologyCache {
 public:
  explicit TopologyCache(store::TopologyStore& store) : store_(store) {}

  Result<TopologySnapshot> current();
  // A cheap mark that moves with every committed topology write of this process (the store's revision
  // mirror, store/revision.h: an atomic load); nullopt when the store keeps none. A consumer that re-reads
  // current() whenever the mark moved never works on a model older than the last write.
  std::optional<std::int64_t> change_mark() const;
  Result<AllocatedSnapshot> with_jobs(store::JobStore& jobs);

  using Change = std::function<Result<std::optional<topology::Topology>>(const topology::Topology*)>;
  Result<TopologySnapshot> write(const std::string& source, bool need_current,
                                 const std::vector<store::LldpRecord>& observations, const Change& change);

  // Stores `document` (the text `model` was imported from) as the next revision and caches `model`.
  Result<TopologySnapshot> replace(const std::string& source, std::string_view document,
                                   topology::Topology model);

  // One device state change, resolved against the model: a host or switch, or (npu set) an NPU of a host.
  struct StateChange {
    topology::NodeId node = topology::kNoNode;
    std::optional<std::uint32_t> npu;
    topology::DeviceState state = topology::DeviceState::kHealthy;
  };
  using StatePlan = std::function<Result<std::vector<StateChange>>(const topology::Topology&)>;
  Result<TopologySnapshot> set_states(const std::string& source, const StatePlan& plan);

  store::TopologyStore& store() { return store_; }

 private:
  // Parses the stored document the cache lacks (outside mutex_).
  Result<TopologySnapshot> load();
  // Stores a new document (under load_mutex_) and caches the model built from it.
  Result<TopologySnapshot> store_document(std::int64_t expected_revision, std::string_view document,
                                          const std::string& source,
                                          const std::vector<store::LldpRecord>& observations,
                                          std::shared_ptr<topology::Topology> model);

  store::TopologyStore& store_;
  std::mutex write_mutex_;  // serialises writers; held while a change is built; readers never take it
  std::mutex load_mutex_;   // one parse of a stored document at a time; a writer holds it across its commit
  std::mutex mutex_;        // guards cache_ and overlay_; held only to compare or swap them
  TopologySnapshot cache_;  // its model is never created const: set_states may change it in place
  AllocatedSnapshot overlay_;
};

}  // namespace hsns::services
