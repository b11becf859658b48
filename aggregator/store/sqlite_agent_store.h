// SQLite implementation of AgentStore (table agent_status, schema migration 2).
//
// Contract: as AgentStore; writes go through the Database's writer connection in one BEGIN IMMEDIATE
// transaction, reads through a pooled read connection. The Database must outlive the store.
#pragma once

#include "store/agent_store.h"
#include "store/database.h"

namespace hsns::store {

class SqliteAgentStore final : public AgentStore {
 public:
  explicit SqliteAgentStore(Database& db) : db_(db) {}
  StoreResult<AgentStatus> put_status(const std::string& host, std::int64_t applied_generation,
                                      const std::string& report_json) override;
  StoreResult<AgentStatus> get_status(const std::string& host) override;
  StoreResult<std::vector<AgentStatus>> list_status() override;

 private:
  Database& db_;
};

}  // namespace hsns::store
