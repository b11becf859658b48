#include "store/sqlite_topology_store.h"

#include "hsns/time.h"
#include "store/sql_helpers.h"

namespace hsns::store {
namespace {

// The stored record; without_document leaves its document empty (writers answer with the record, and a
// document is up to tens of megabytes).
StoreResult<std::optional<TopologyRecord>> read_topology(Connection& c, bool with_document) {
  HSNS_STORE_ASSIGN(st,
                    sql::prepare(c, with_document ? "SELECT t.revision, t.source, t.updated_at, d.document "
                                                    "FROM topology t JOIN topology_document d ON d.id = t.id "
                                                    "WHERE t.id = 1"
                                                  : "SELECT revision, source, updated_at FROM topology "
                                                    "WHERE id = 1"));
  HSNS_STORE_ASSIGN(row, sql::step(*st));
  if (!*row) return std::optional<TopologyRecord>();
  TopologyRecord record{st->column_int64(0), {}, st->column_text(1), st->column_text(2), {}};
  if (with_document) record.document = st->column_text(3);
  return std::optional<TopologyRecord>(std::move(record));
}

StoreResult<std::vector<DeviceStateRecord>> read_device_states(Connection& c) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT device, npu, state FROM topology_device_states"));
  std::vector<DeviceStateRecord> out;
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) break;
    DeviceStateRecord r{st->column_text(0), std::nullopt, st->column_text(2)};
    if (const auto npu = st->column_int64(1); npu >= 0) r.npu = npu;
    out.push_back(std::move(r));
  }
  return out;
}

StoreResult<std::int64_t> read_revision(Connection& c) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c, "SELECT COALESCE(MAX(revision), 0) FROM topology"));
  HSNS_STORE_ASSIGN(row, sql::step(*st));
  return *row ? st->column_int64(0) : 0;
}

// The key that makes (host, port) or (host, NPU) observations replace each other.
std::string port_key(const LldpRecord& r) {
  return r.port.empty() ? "npu:" + std::to_string(r.npu.value_or(-1)) : "port:" + r.port;
}

// The record (revision, source, time) and the document are rows of their own tables (migration 6), so a
// state change rewrites only the small one.
StoreResult<void> write_document(Connection& c, const TopologyRecord& record, std::string_view document) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c,
                                     "INSERT INTO topology (id, revision, source, updated_at) "
                                     "VALUES (1, ?1, ?2, ?3) ON CONFLICT(id) DO UPDATE SET "
                                     "revision = excluded.revision, source = excluded.source, "
                                     "updated_at = excluded.updated_at"));
  st->bind_int64(1, record.revision).bind_text(2, record.source).bind_text(3, record.updated_at);
  HSNS_STORE_TRY(sql::run(*st));
  HSNS_STORE_ASSIGN(doc, sql::prepare(c,
                                      "INSERT INTO topology_document (id, document) VALUES (1, ?1) "
                                      "ON CONFLICT(id) DO UPDATE SET document = excluded.document"));
  doc->bind_text(1, document);
  return sql::run(*doc);
}

StoreResult<void> write_observations(Connection& c, const std::vector<LldpRecord>& observations,
                                     const std::string& now) {
  if (observations.empty()) return {};
  HSNS_STORE_ASSIGN(st, sql::prepare(c,
                                     "INSERT INTO lldp_observations (host, port_key, port, npu, "
                                     "neighbor_system, neighbor_port, observed_at) VALUES "
                                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(host, port_key) DO "
                                     "UPDATE SET port = excluded.port, npu = excluded.npu, "
                                     "neighbor_system = excluded.neighbor_system, "
                                     "neighbor_port = excluded.neighbor_port, "
                                     "observed_at = excluded.observed_at"));
  for (const auto& o : observations) {
    st->reset();
    st->bind_text(1, o.host).bind_text(2, port_key(o)).bind_text(3, o.port);
    if (o.npu) {
      st->bind_int64(4, *o.npu);
    } else {
      st->bind_null(4);
    }
    st->bind_text(5, o.neighbor_system).bind_text(6, o.neighbor_port).bind_text(7, now);
    HSNS_STORE_TRY(sql::run(*st));
  }
  return {};
}

// The stored revision when it is expected_revision; conflict otherwise, not_found when nothing is stored
// and the write needs a stored topology.
StoreResult<std::int64_t> check_revision(Connection& c, std::int64_t expected_revision, bool may_create) {
  HSNS_STORE_ASSIGN(revision, read_revision(c));
  if (*revision != expected_revision) {
    return tl::unexpected(StoreError::conflict("revision", "the topology changed meanwhile (revision " +
                                                               std::to_string(*revision) + ", expected " +
                                                               std::to_string(expected_revision) + ")"));
  }
  if (*revision == 0 && !may_create) {
    return tl::unexpected(StoreError::not_found("no topology has been imported or generated"));
  }
  return *revision;
}

}  // namespace

StoreResult<TopologyRecord> SqliteTopologyStore::get_topology() {
  return sql::read(db_, [](Connection& c) -> StoreResult<TopologyRecord> {
    HSNS_STORE_ASSIGN(record, read_topology(c, true));
    if (!*record) return tl::unexpected(StoreError::not_found("no topology has been imported or generated"));
    HSNS_STORE_ASSIGN(states, read_device_states(c));
    (*record)->states = std::move(*states);
    return std::move(**record);
  });
}

StoreResult<TopologyRecord> SqliteTopologyStore::write_device_states(
    std::int64_t expected_revision, const std::vector<DeviceStateRecord>& states, const std::string& source) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<TopologyRecord> {
    HSNS_STORE_ASSIGN(revision, check_revision(c, expected_revision, false));
    TopologyRecord record{
        *revision + 1, {}, source, format_rfc3339_utc(std::chrono::system_clock::now()), {}};
    HSNS_STORE_ASSIGN(bump, sql::prepare(c,
                                         "UPDATE topology SET revision = ?1, source = ?2, updated_at = ?3 "
                                         "WHERE id = 1"));
    bump->bind_int64(1, record.revision).bind_text(2, record.source).bind_text(3, record.updated_at);
    HSNS_STORE_TRY(sql::run(*bump));
    HSNS_STORE_ASSIGN(upsert, sql::prepare(c,
                                           "INSERT INTO topology_device_states (device, npu, state) "
                                           "VALUES (?1, ?2, ?3) ON CONFLICT(device, npu) DO UPDATE SET "
                                           "state = excluded.state"));
    for (const auto& s : states) {
      upsert->reset();
      upsert->bind_text(1, s.device).bind_int64(2, s.npu.value_or(-1)).bind_text(3, s.state);
      HSNS_STORE_TRY(sql::run(*upsert));
    }
    return record;
  });
}

StoreResult<std::int64_t> SqliteTopologyStore::topology_revision() {
  return sql::read(db_, read_revision);
}

StoreResult<TopologyRecord> SqliteTopologyStore::write_topology(std::int64_t expected_revision,
                                                                std::optional<std::string_view> document,
                                                                const std::string& source,
                                                                const std::vector<LldpRecord>& observations) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<TopologyRecord> {
    HSNS_STORE_ASSIGN(revision, check_revision(c, expected_revision, document.has_value()));
    const std::string now = format_rfc3339_utc(std::chrono::system_clock::now());
    TopologyRecord record;
    if (document) {
      record = {*revision + 1, {}, source, now, {}};
      HSNS_STORE_TRY(write_document(c, record, *document));
      // The new document carries every state: the rows set on top of the old one are void.
      HSNS_STORE_ASSIGN(clear, sql::prepare(c, "DELETE FROM topology_device_states"));
      HSNS_STORE_TRY(sql::run(*clear));
    } else {
      HSNS_STORE_ASSIGN(current, read_topology(c, false));
      record = std::move(**current);
    }
    HSNS_STORE_TRY(write_observations(c, observations, now));
    return record;
  });
}

StoreResult<std::vector<LldpRecord>> SqliteTopologyStore::list_observations() {
  return sql::read(db_, [](Connection& c) -> StoreResult<std::vector<LldpRecord>> {
    HSNS_STORE_ASSIGN(st, sql::prepare(c,
                                       "SELECT host, port, npu, neighbor_system, neighbor_port, observed_at "
                                       "FROM lldp_observations ORDER BY host, port_key"));
    std::vector<LldpRecord> out;
    for (;;) {
      HSNS_STORE_ASSIGN(row, sql::step(*st));
      if (!*row) break;
      LldpRecord r;
      r.host = st->column_text(0);
      r.port = st->column_text(1);
      if (!st->column_is_null(2)) r.npu = st->column_int64(2);
      r.neighbor_system = st->column_text(3);
      r.neighbor_port = st->column_text(4);
      r.observed_at = st->column_text(5);
      out.push_back(std::move(r));
    }
    return out;
  });
}

}  // namespace hsns::store
