// SQLite implementation of JobStore (tables jobs, job_npus and job_revision, schema migration 4).
//
// Contract: as JobStore; writes go through the Database's writer connection in one BEGIN IMMEDIATE
// transaction (the checks happen under the write lock; UNIQUE (host, npu) on job_npus backs the NPU check
// against other processes writing the same file), reads through a pooled read connection in one read
// transaction. create_job reads the topology table (migration 3) for the revision check. The Database
// must outlive the store.
#pragma once

#include "store/database.h"
#include "store/job_store.h"

namespace hsns::store {

class SqliteJobStore final : public JobStore {
 public:
  explicit SqliteJobStore(Database& db) : db_(db) {}
  StoreResult<JobRecord> create_job(const JobRecord& job) override;
  StoreResult<JobRecord> get_job(const std::string& name) override;
  StoreResult<std::vector<JobRecord>> list_jobs() override;
  StoreResult<void> delete_job(const std::string& name) override;
  StoreResult<std::int64_t> jobs_revision() override;
  StoreResult<Allocations> allocations() override;
  const RevisionSource* revisions() const override { return &db_; }

 private:
  Database& db_;
};

}  // namespace hsns::store
