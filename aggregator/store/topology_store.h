// Storage of the cluster's one current topology model and of the LLDP neighbours daemons reported.
//
// Contract:
// - The topology is stored as a document in the import file schema (docs/topology.md; JSON as a client
//   imported it or as export_topology_document writes it, earlier revisions as YAML; import_topology
//   reads either) with a revision
//   number that grows by one on every write and never goes back,
//   also across replacements. get_topology is not_found while no topology was ever stored.
// - write_topology is a compare-and-swap: it applies only when the stored revision equals
//   expected_revision (0: none stored), conflict otherwise; the document (when given) and the
//   observations are written in one transaction, so a failed write changes nothing.
// - Device states (write_device_states) are rows applied on top of the document: one per host or switch
//   (npu unset) or NPU, the newest row of a device replacing the older one. Writing them is one
//   transaction that upserts the rows and moves the revision to expected_revision + 1 without touching
//   the document; a write of a document clears every row (the document carries the states).
//   get_topology returns the rows with the document.
// - Observations are keyed by (host, port) or, without a port, (host, NPU index); a newer observation of
//   the same key replaces the older one.
// - Thread-safe as the underlying store is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/network_store.h"

namespace hsns::store {

// A device state set after the document was stored. state is the word topology::to_string gives.
struct DeviceStateRecord {
  std::string device;               // host or switch name
  std::optional<std::int64_t> npu;  // NPU index on a host; unset: the host or switch itself
  std::string state;
};

struct TopologyRecord {
  std::int64_t revision = 0;
  std::string document;    // import file schema, JSON (YAML in databases written before JSON was used)
  std::string source;      // "import", "generate", "lldp", "state"
  std::string updated_at;  // RFC 3339 UTC
  std::vector<DeviceStateRecord> states;  // set by get_topology: to apply on top of the document
};

struct LldpRecord {
  std::string host;
  std::string port;                 // netdev; may be empty when npu is set
  std::optional<std::int64_t> npu;  // NPU index
  std::string neighbor_system;
  std::string neighbor_port;
  std::string observed_at;  // RFC 3339 UTC; set by the store on write
};

class TopologyStore {
 public:
  virtual ~TopologyStore() = default;
  virtual StoreResult<TopologyRecord> get_topology() = 0;
  // The stored revision, 0 when no topology is stored (a cheap query, for cache checks).
  virtual StoreResult<std::int64_t> topology_revision() = 0;
  // Replaces the document (when given; the revision then becomes expected_revision + 1) and records the
  // observations. Returns the record now stored, without its document (not_found when nothing is stored
  // and no document given).
  virtual StoreResult<TopologyRecord> write_topology(std::int64_t expected_revision,
                                                     std::optional<std::string_view> document,
                                                     const std::string& source,
                                                     const std::vector<LldpRecord>& observations) = 0;
  // Stores device states (one row each, in one transaction) as revision expected_revision + 1 with the
  // given source; conflict when the stored revision differs, not_found when no topology is stored.
  // Returns the record now stored without its document (revision, source, updated_at).
  virtual StoreResult<TopologyRecord> write_device_states(std::int64_t expected_revision,
                                                          const std::vector<DeviceStateRecord>& states,
                                                          const std::string& source) = 0;
  virtual StoreResult<std::vector<LldpRecord>> list_observations() = 0;
  // The backend's revision counters (store/revision.h; LLDP observations are domain lldp); null when the
  // backend keeps none.
  virtual const RevisionSource* revisions() const { return nullptr; }
};

}  // namespace hsns::store
