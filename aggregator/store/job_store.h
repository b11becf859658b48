// Storage interface for registered training jobs (POST /api/v1/schedule): which NPUs each job holds.
//
// Contract:
// - A job is a name (unique), its ranks (rank, host, NPU index, NPU IP), the accepted request and a
//   schedule summary (JSON texts, stored as given), the topology revision it was placed on and the time
//   it was created (set by the store).
// - An NPU (host, index) is held by at most one job. create_job checks, under the write lock and in the
//   same transaction as the insert: the name is free (conflict on field "job_name"), every NPU is free
//   (conflict on field "npus[<host>:<npu>]" whose detail names the job holding it) and the stored topology
//   revision still equals job.topology_revision (conflict on field "topology"). So two concurrent creates
//   can never both get one NPU, and a failed create stores nothing.
// - The jobs revision grows by one on every create and delete and never goes back; allocations() returns
//   it with every held NPU from one read snapshot, so a cache keyed by the revision is exact.
// - delete_job is not_found for an unknown name. Lists are ordered by name, ranks by rank.
// - Thread-safe as the underlying database is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/network_store.h"
#include "store/revision.h"

namespace hsns::store {

struct JobRank {
  std::uint32_t rank = 0;
  std::string host;
  std::uint32_t npu = 0;
  std::string ip;
};

struct JobRecord {
  std::string name;
  std::vector<JobRank> ranks;  // by rank
  std::string request;         // JSON text: the request as accepted
  std::string summary;         // JSON text: the schedule summary
  std::int64_t topology_revision = 0;
  std::string created_at;  // RFC 3339 UTC; set by create_job

  // Hosts in rank (node-rank) order, each once.
  std::vector<std::string> hosts() const;
};

struct HeldNpu {
  std::string host;
  std::uint32_t npu = 0;
  std::string job;
};

struct Allocations {
  std::int64_t revision = 0;
  std::vector<HeldNpu> npus;  // ordered by (host, npu)
};

class JobStore {
 public:
  virtual ~JobStore() = default;
  // Returns the stored record (created_at set).
  virtual StoreResult<JobRecord> create_job(const JobRecord& job) = 0;
  virtual StoreResult<JobRecord> get_job(const std::string& name) = 0;
  virtual StoreResult<std::vector<JobRecord>> list_jobs() = 0;
  virtual StoreResult<void> delete_job(const std::string& name) = 0;
  // The jobs revision (a cheap query, for cache checks).
  virtual StoreResult<std::int64_t> jobs_revision() = 0;
  virtual StoreResult<Allocations> allocations() = 0;
  // The backend's revision counters (store/revision.h; domain jobs moves with every create and delete);
  // null when the backend keeps none.
  virtual const RevisionSource* revisions() const { return nullptr; }
};

}  // namespace hsns::store
