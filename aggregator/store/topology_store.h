// Storage of the cluster's one current topology model and of the LLDP neighbours daemons reported.
//
// Contract:
// - The topology is stored as a document in the import file schema (docs/topology.md; written as JSON by
//   export_topology_document, earlier revisions as YAML; import_topology reads either) with a revision
//   number that grows by one on every write and never goes back,
//   also across replacements. get_topology is not_found while no topology was ever stored.
// - write_topology is a compare-and-swap: it applies only when the stored revision equals
//   expected_revision (0: none stored), conflict otherwise; the document (when given) and the
//   observations are written in one transaction, so a failed write changes nothing.
// - Observations are keyed by (host, port) or, without a port, (host, NPU index); a newer observation of
//   the same key replaces the older one.
// - Thread-safe as the underlying store is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/network_store.h"

namespace hsns::store {

struct TopologyRecord {
  std::int64_t revision = 0;
  std::string document;    // import file schema, JSON (YAML in databases written before JSON was used)
  std::string source;      // "import", "generate", "lldp", "state"
  std::string updated_at;  // RFC 3339 UTC
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
  // observations. Returns the record now stored (not_found when nothing is stored and no document given).
  virtual StoreResult<TopologyRecord> write_topology(std::int64_t expected_revision,
                                                     const std::optional<std::string>& document,
                                                     const std::string& source,
                                                     const std::vector<LldpRecord>& observations) = 0;
  virtual StoreResult<std::vector<LldpRecord>> list_observations() = 0;
  // The backend's revision counters (store/revision.h; LLDP observations are domain lldp); null when the
  // backend keeps none.
  virtual const RevisionSource* revisions() const { return nullptr; }
};

}  // namespace hsns::store
