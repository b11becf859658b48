#include "store/sqlite_job_store.h"

#include <chrono>
#include <set>
#include <utility>

#include "hsns/time.h"
#include "store/sql_helpers.h"

namespace hsns::store {
namespace {

StoreResult<std::int64_t> read_jobs_revision(Connection& c) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COALESCE(MAX(revision), 0) FROM job_revision"));
  HSNS_STORE_ASSIGN(row, sql::step(*st));
  return *row ? st->column_int64(0) : 0;
}

StoreResult<std::vector<JobRank>> read_ranks(Connection& c, const std::string& job) {
  HSNS_STORE_ASSIGN(st,
                    sql::prepare(c, "SELECT rank, host, npu, ip FROM job_npus WHERE job = ?1 ORDER BY rank"));
  st->bind_text(1, job);
  std::vector<JobRank> out;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) break;
    out.push_back({static_cast<std::uint32_t>(st->column_int64(0)), st->column_text(1),
                   static_cast<std::uint32_t>(st->column_int64(2)), st->column_text(3)});
  }
  return out;
}

// Jobs matching `where` (bound to `name` when not empty), with their ranks.
StoreResult<std::vector<JobRecord>> read_jobs(Connection& c, const std::string& name) {
  HSNS_STORE_ASSIGN(
      st, sql::prepare(c, name.empty() ? "SELECT name, request, summary, topology_revision, created_at "
                                         "FROM jobs ORDER BY name"
                                       : "SELECT name, request, summary, topology_revision, created_at "
                                         "FROM jobs WHERE name = ?1"));
  if (!name.empty()) st->bind_text(1, name);
  std::vector<JobRecord> out;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) break;
    JobRecord r;
    r.name = st->column_text(0);
    r.request = st->column_text(1);
    r.summary = st->column_text(2);
    r.topology_revision = st->column_int64(3);
    r.created_at = st->column_text(4);
    out.push_back(std::move(r));
  }
  for (auto& r : out) {
    HSNS_STORE_ASSIGN(ranks, read_ranks(c, r.name));
    r.ranks = std::move(*ranks);
  }
  return out;
}

StoreResult<void> bump_revision(Connection& c) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c, "UPDATE job_revision SET revision = revision + 1 WHERE id = 1"));
  return sql::run(*st);
}

// What create_job checks under the write lock before it inserts: the topology revision the job was
// placed on is still current, the name is free, every NPU is free.
StoreResult<void> check_job_free(Connection& c, const JobRecord& job) {
  {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COALESCE(MAX(revision), 0) FROM topology"));
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    const std::int64_t revision = *row ? st->column_int64(0) : 0;
    if (revision != job.topology_revision) {
      return tl::unexpected(
          StoreError::conflict("topology", "the topology changed while the job was being placed (revision " +
                                               std::to_string(revision) + ", placed on " +
                                               std::to_string(job.topology_revision) + "); retry"));
    }
  }
  {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT 1 FROM jobs WHERE name = ?1"));
    st->bind_text(1, job.name);
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (*row)
      return tl::unexpected(StoreError::conflict("job_name", "a job named '" + job.name + "' exists"));
  }
  HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT job FROM job_npus WHERE host = ?1 AND npu = ?2"));
  for (const auto& r : job.ranks) {
    st->reset();
    st->bind_text(1, r.host).bind_int64(2, r.npu);
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (*row) {
      return tl::unexpected(StoreError::conflict("npus[" + r.host + ":" + std::to_string(r.npu) + "]",
                                                 "NPU " + std::to_string(r.npu) + " of host " + r.host +
                                                     " is held by job '" + st->column_text(0) + "'"));
    }
  }
  return {};
}

StoreResult<void> insert_job(Connection& c, const JobRecord& job) {
  {
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c,
                                   "INSERT INTO jobs (name, request, summary, topology_revision, created_at) "
                                   "VALUES (?1, ?2, ?3, ?4, ?5)"));
    st->bind_text(1, job.name)
        .bind_text(2, job.request)
        .bind_text(3, job.summary)
        .bind_int64(4, job.topology_revision)
        .bind_text(5, job.created_at);
    HSNS_STORE_TRY(sql::run(*st));
  }
  HSNS_STORE_ASSIGN(
      st, sql::prepare(c, "INSERT INTO job_npus (job, rank, host, npu, ip) VALUES (?1, ?2, ?3, ?4, ?5)"));
  for (const auto& r : job.ranks) {
    st->reset();
    st->bind_text(1, job.name)
        .bind_int64(2, r.rank)
        .bind_text(3, r.host)
        .bind_int64(4, r.npu)
        .bind_text(5, r.ip);
    HSNS_STORE_TRY(sql::run(*st));
  }
  return {};
}

}  // namespace

std::vector<std::string> JobRecord::hosts() const {
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  for (const auto& r : ranks) {
    if (seen.insert(r.host).second) out.push_back(r.host);
  }
  return out;
}

StoreResult<JobRecord> SqliteJobStore::create_job(const JobRecord& job) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<JobRecord> {
    HSNS_STORE_TRY(check_job_free(c, job));
    JobRecord stored = job;
    stored.created_at = format_rfc3339_utc(std::chrono::system_clock::now());
    HSNS_STORE_TRY(insert_job(c, stored));
    HSNS_STORE_TRY(bump_revision(c));
    return stored;
  });
}

StoreResult<JobRecord> SqliteJobStore::get_job(const std::string& name) {
  if (name.empty()) return tl::unexpected(StoreError::not_found("no job named ''"));
  return sql::read(db_, [&](Connection& c) -> StoreResult<JobRecord> {
    HSNS_STORE_ASSIGN(jobs, read_jobs(c, name));
    if (jobs->empty()) return tl::unexpected(StoreError::not_found("no job named '" + name + "'"));
    return std::move(jobs->front());
  });
}

StoreResult<std::vector<JobRecord>> SqliteJobStore::list_jobs() {
  return sql::read(db_, [](Connection& c) { return read_jobs(c, ""); });
}

StoreResult<void> SqliteJobStore::delete_job(const std::string& name) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "DELETE FROM jobs WHERE name = ?1"));
    st->bind_text(1, name);
    HSNS_STORE_TRY(sql::run(*st));
    if (st->changes() == 0) return tl::unexpected(StoreError::not_found("no job named '" + name + "'"));
    return bump_revision(c);
  });
}

StoreResult<std::int64_t> SqliteJobStore::jobs_revision() {
  return sql::read(db_, read_jobs_revision);
}

StoreResult<Allocations> SqliteJobStore::allocations() {
  return sql::read(db_, [](Connection& c) -> StoreResult<Allocations> {
    Allocations out;
    HSNS_STORE_ASSIGN(revision, read_jobs_revision(c));
    out.revision = *revision;
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT host, npu, job FROM job_npus ORDER BY host, npu"));
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      out.npus.push_back(
          {st->column_text(0), static_cast<std::uint32_t>(st->column_int64(1)), st->column_text(2)});
    }
    return out;
  });
}

}  // namespace hsns::store
