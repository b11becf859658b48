// SQLite implementation of TopologyStore (tables topology and lldp_observations, schema
// migration 3; migration 6: topology_device_states, with npu -1 for a host or switch, and the document
// in topology_document, apart from the revision a state change bumps).
//
// Contract: as TopologyStore; writes go through the Database's writer connection in one BEGIN IMMEDIATE
// transaction (the revision check happens under the write lock; each statement is prepared once per
// write and re-bound per row), reads through a pooled read connection.
// The Database must outlive the store.
#pragma once

#include "store/database.h"
#include "store/topology_store.h"

namespace hsns::store {

class SqliteTopologyStore final : public TopologyStore {
 public:
  explicit SqliteTopologyStore(Database& db) : db_(db) {}
  StoreResult<TopologyRecord> get_topology() override;
  StoreResult<std::int64_t> topology_revision() override;
  StoreResult<TopologyRecord> write_topology(std::int64_t expected_revision,
                                             std::optional<std::string_view> document,
                                             const std::string& source,
                                             const std::vector<LldpRecord>& observations) override;
  StoreResult<TopologyRecord> write_device_states(std::int64_t expected_revision,
                                                  const std::vector<DeviceStateRecord>& states,
                                                  const std::string& source) override;
  StoreResult<std::vector<LldpRecord>> list_observations() override;
  const RevisionSource* revisions() const override { return &db_; }

 private:
  Database& db_;
};

}  // namespace hsns::store
