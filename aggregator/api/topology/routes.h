// REST handlers for the cluster topology model: the one current topology (import, generate, show,
// export), LLDP discovery merged into it and device state changes.
//
// Routes (see docs/rest-api.md, "Topology"):
//   PUT   /api/v1/topology                  import a topology document (JSON, or YAML with a YAML media
//                                           type), replacing the current one; 200 with the summary
//   POST  /api/v1/topology/generate         generate a rail-optimised Clos cluster (ClosParams as JSON)
//   GET   /api/v1/topology                  the summary; 404 while no topology exists
//   GET   /api/v1/topology/export?format=F  json | slurm-tree | slurm-block | volcano | kueue |
//                                           node-labels | yaml, each with its media type
//   POST  /api/v1/topology/lldp             merge LLDP observations (role agent or operator); the report
//   GET   /api/v1/topology/lldp             the stored observations
//   PATCH /api/v1/topology/devices/{name}   set the state of a host, switch or (with "npu") an NPU
// Contract: writes need manage_network (LLDP also agent_report), reads need read. Every input is validated
// (unknown fields and query parameters, types, ranges, the import schema) before anything is stored; a
// rejected request changes nothing. Each accepted write stores the model in the import file schema
// (export_topology_document, as JSON) with the revision incremented; LLDP conflicts are reported, never
// applied. Writes are serialised in-process and checked against the stored revision (409 if another process
// wrote meanwhile). The parsed model is cached per revision, so reads do not re-parse. The store must
// outlive the router; handlers are thread-safe.
//
// TopologyCache is the parsed-model cache, shared with the scheduling routes (api/scheduling/routes.h): current()
// is the stored model; with_jobs() is the stored model with every NPU a registered job holds set to
// allocated, rebuilt only when the topology revision or the jobs revision moved (one copy of the parsed
// model plus set_npu_state per held NPU). Snapshots are immutable and shared; the cache is thread-safe.
// Locking: no lock a reader needs is held while a model is built. write() builds the new model, its
// stored document and the model read back from it before it takes any lock readers use; it then holds
// the load lock across the store commit and swaps the cached snapshot under the cache lock, so
// current() answers with the previous revision until the new one is committed and cached. A reader
// that finds the store ahead of the cache (another process wrote, or the first read after start)
// parses the stored document under the load lock only.
//
// Bounds: every model that gets here went through the size checks of topology/limits.h
// (import, generate, read-back, LLDP merge), so one write or load costs at most the cost of a model at
// the limits (docs/topology.md, "Limits").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

#include "http/router.h"
#include "topology/generator.h"
#include "store/job_store.h"
#include "store/topology_store.h"

namespace hsns::topology_api {

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

  // The stored topology (404 Problem while none exists), from the cache when the revision did not move.
  tl::expected<TopologySnapshot, Problem> current();
  // The stored topology with the jobs' NPUs allocated (404 while no topology exists).
  tl::expected<AllocatedSnapshot, Problem> with_jobs(store::JobStore& jobs);

  // change returns the new topology (nullopt: no change) or a Problem; the result is stored (with the
  // observations) as a new revision under the write lock. need_current false: a missing topology is not
  // an error (import, generate; change then gets nullptr).
  using Change =
      std::function<tl::expected<std::optional<topology::Topology>, Problem>(const topology::Topology*)>;
  tl::expected<TopologySnapshot, Problem> write(const std::string& source, bool need_current,
                                                const std::vector<store::LldpRecord>& observations,
                                                const Change& change);

  store::TopologyStore& store() { return store_; }

 private:
  // Parses the stored document the cache lacks (outside mutex_).
  tl::expected<TopologySnapshot, Problem> load();

  store::TopologyStore& store_;
  std::mutex write_mutex_;  // serialises writers; held while a change is built; readers never take it
  std::mutex load_mutex_;   // one parse of a stored document at a time; a writer holds it across its commit
  std::mutex mutex_;        // guards cache_ and overlay_; held only to compare or swap them
  TopologySnapshot cache_;
  AllocatedSnapshot overlay_;
};

void register_topology_routes(http::Router& router, store::TopologyStore& store);
// The same routes over a cache shared with other route sets.
void register_topology_routes(http::Router& router, std::shared_ptr<TopologyCache> cache);

// Validates a generate request body (ClosParams fields, all optional, unknown fields rejected, server
// size limits applied); a 400 Problem naming every bad field otherwise.
tl::expected<topology::ClosParams, Problem> parse_clos_params(const nlohmann::json& body);

// The summary document of a topology (see docs/rest-api.md).
nlohmann::json topology_summary(const topology::Topology& topology);

}  // namespace hsns::topology_api
