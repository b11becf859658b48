#include "store/sqlite_agent_store.h"

#include "hsns/time.h"
#include "store/sql_helpers.h"

namespace hsns::store {
namespace {

constexpr const char* kColumns = "host, applied_generation, report, received_at";

StoreResult<std::vector<AgentStatus>> query(Connection& c, const std::string& where,
                                            const std::vector<std::string>& params) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c, std::string("SELECT ") + kColumns + " FROM agent_status " + where +
                                            " ORDER BY host"));
  for (std::size_t i = 0; i < params.size(); ++i) st->bind_text(static_cast<int>(i) + 1, params[i]);
  std::vector<AgentStatus> out;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) break;
    out.push_back({st->column_text(0), st->column_int64(1), st->column_text(2), st->column_text(3)});
  }
  return out;
}

}  // namespace

StoreResult<AgentStatus> SqliteAgentStore::put_status(const std::string& host,
                                                      std::int64_t applied_generation,
                                                      const std::string& report_json) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<AgentStatus> {
    HSNS_STORE_ASSIGN(exists, sql::prepare(c, "SELECT 1 FROM hosts WHERE name = ?1"));
    exists->bind_text(1, host);
    HSNS_STORE_ASSIGN(found, sql::step(*exists));
    if (!*found) return tl::unexpected(StoreError::not_found("host " + host + " is not registered"));
    AgentStatus status{host, applied_generation, report_json,
                       format_rfc3339_utc(std::chrono::system_clock::now())};
    HSNS_STORE_ASSIGN(st,
                      sql::prepare(c,
                                   "INSERT INTO agent_status (host, applied_generation, report, received_at) "
                                   "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(host) DO UPDATE SET "
                                   "applied_generation = excluded.applied_generation, "
                                   "report = excluded.report, received_at = excluded.received_at"));
    st->bind_text(1, status.host)
        .bind_int64(2, status.applied_generation)
        .bind_text(3, status.report_json)
        .bind_text(4, status.received_at);
    HSNS_STORE_TRY(sql::run(*st));
    return status;
  });
}

StoreResult<AgentStatus> SqliteAgentStore::get_status(const std::string& host) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<AgentStatus> {
    HSNS_STORE_ASSIGN(rows, query(c, "WHERE host = ?1", {host}));
    if (rows->empty())
      return tl::unexpected(StoreError::not_found("host " + host + " has not reported a status"));
    return std::move(rows->front());
  });
}

StoreResult<std::vector<AgentStatus>> SqliteAgentStore::list_status() {
  return sql::read(db_, [](Connection& c) { return query(c, "", {}); });
}

}  // namespace hsns::store
