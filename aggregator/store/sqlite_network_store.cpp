#include "store/sqlite_network_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "api/network/requests.h"
#include "hsns/time.h"
#include "services/ipam.h"
#include "store/sql_helpers.h"
#include "store/sqlite_address_book.h"

namespace hsns::store {

using network::Host;
using network::HostView;
using network::NpuInterface;
using network::Port;
using network::Subnet;

namespace {

using ipam::describe;
using sql::prepare;
using sql::run;
using sql::step;

StoreError corrupt(const std::string& what) {
  return StoreError::unavailable("database holds a malformed " + what);
}

std::string new_uuid() {
  thread_local boost::uuids::random_generator generator;
  return boost::uuids::to_string(generator());
}

bool same_npu(const NpuInterface& a, const NpuInterface& b) {
  return a.index == b.index && a.netdev == b.netdev && a.mac == b.mac && a.rdma_device == b.rdma_device &&
         a.link_speed_mbps == b.link_speed_mbps;
}

bool same_npus(const std::vector<NpuInterface>& a, const std::vector<NpuInterface>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_npu);
}

// ---- rows -------------------------------------------------------------------------------------------

constexpr const char* kHostColumns = "h.name, h.generation, h.created_at, h.updated_at";

Host read_host_row(const Statement& st) {
  Host h;
  h.name = st.column_text(0);
  h.generation = st.column_int64(1);
  h.created_at = st.column_text(2);
  h.updated_at = st.column_text(3);
  return h;
}

constexpr const char* kNpuColumns = "n.host, n.npu_index, n.netdev, n.mac, n.rdma_device, n.link_speed_mbps";

NpuInterface read_npu_row(const Statement& st) {
  NpuInterface n;
  n.index = static_cast<int>(st.column_int64(1));
  n.netdev = st.column_text(2);
  n.mac = st.column_text(3);
  n.rdma_device = st.column_text(4);
  n.link_speed_mbps = st.column_int64(5);
  return n;
}

constexpr const char* kSubnetColumns =
    "s.id, s.name, s.tenant, s.network_key, s.prefix_length, s.gateway_ip, s.mtu, s.created_at, "
    "s.updated_at, "
    "(SELECT COUNT(*) FROM ports p WHERE p.subnet_id = s.id)";

StoreResult<Subnet> read_subnet_row(const Statement& st) {
  Subnet s;
  s.id = st.column_text(0);
  s.name = st.column_text(1);
  s.tenant = st.column_text(2);
  const auto network = IpAddress::from_sort_key(st.column_text(3));
  const auto length = st.column_int64(4);
  if (!network || length < 0 || length > network->bits())
    return tl::unexpected(corrupt("cidr of subnet " + s.id));
  s.cidr = IpPrefix(*network, static_cast<int>(length));
  if (auto gw = st.column_optional_text(5)) {
    auto parsed = IpAddress::parse(*gw);
    if (!parsed) return tl::unexpected(corrupt("gateway_ip of subnet " + s.id));
    s.gateway = *parsed;
  }
  s.mtu = static_cast<int>(st.column_int64(6));
  s.created_at = st.column_text(7);
  s.updated_at = st.column_text(8);
  s.port_count = st.column_int64(9);
  return s;
}

constexpr const char* kPortColumns =
    "p.id, p.name, p.subnet_id, p.tenant, p.host, p.npu, p.ip_key, p.fixed_ip, p.created_at";

StoreResult<Port> read_port_row(const Statement& st) {
  Port p;
  p.id = st.column_text(0);
  p.name = st.column_text(1);
  p.subnet_id = st.column_text(2);
  p.tenant = st.column_text(3);
  p.host = st.column_text(4);
  p.npu = static_cast<int>(st.column_int64(5));
  const auto ip = IpAddress::from_sort_key(st.column_text(6));
  if (!ip) return tl::unexpected(corrupt("ip_address of port " + p.id));
  p.ip_address = *ip;
  p.fixed_ip = st.column_int64(7) != 0;
  p.created_at = st.column_text(8);
  return p;
}

// ---- loaders (run inside the caller's transaction) --------------------------------------------------

StoreResult<std::vector<NpuInterface>> load_npus(Connection& c, const std::string& host) {
  HSNS_STORE_ASSIGN(st, prepare(c, std::string("SELECT ") + kNpuColumns +
                                       " FROM host_npus n WHERE n.host = ?1 ORDER BY n.npu_index"));
  st->bind_text(1, host);
  std::vector<NpuInterface> npus;
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) break;
    npus.push_back(read_npu_row(*st));
  }
  return npus;
}

StoreResult<std::optional<Host>> load_host(Connection& c, const std::string& name) {
  HSNS_STORE_ASSIGN(st,
                    prepare(c, std::string("SELECT ") + kHostColumns + " FROM hosts h WHERE h.name = ?1"));
  st->bind_text(1, name);
  HSNS_STORE_ASSIGN(row, step(*st));
  if (!*row) return std::optional<Host>();
  Host h = read_host_row(*st);
  HSNS_STORE_ASSIGN(npus, load_npus(c, name));
  h.npus = std::move(*npus);
  return std::optional<Host>(std::move(h));
}

// Every host with its NPUs, ordered by name (two queries, not one per host).
StoreResult<std::vector<Host>> load_hosts(Connection& c) {
  HSNS_STORE_ASSIGN(st, prepare(c, std::string("SELECT ") + kHostColumns + " FROM hosts h ORDER BY h.name"));
  std::vector<Host> hosts;
  std::unordered_map<std::string, std::size_t> index;
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) break;
    hosts.push_back(read_host_row(*st));
    index.emplace(hosts.back().name, hosts.size() - 1);
  }
  HSNS_STORE_ASSIGN(npus, prepare(c, std::string("SELECT ") + kNpuColumns +
                                         " FROM host_npus n ORDER BY n.host, n.npu_index"));
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(*npus));
    if (!*row) break;
    const auto it = index.find(npus->column_text(0));
    if (it != index.end()) hosts[it->second].npus.push_back(read_npu_row(*npus));
  }
  return hosts;
}

// Fills s.allocation_pools; pools is "SELECT first_key, last_key ... WHERE subnet_id = ?1", reused.
StoreResult<void> load_pools(Statement& pools, Subnet& s) {
  pools.reset();
  pools.bind_text(1, s.id);
  s.allocation_pools.clear();
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(pools));
    if (!*row) break;
    const auto first = IpAddress::from_sort_key(pools.column_text(0));
    const auto last = IpAddress::from_sort_key(pools.column_text(1));
    if (!first || !last) return tl::unexpected(corrupt("allocation pool of subnet " + s.id));
    s.allocation_pools.push_back(IpRange{*first, *last});
  }
  return {};
}

StoreResult<Statement> prepare_pools(Connection& c) {
  return prepare(c, "SELECT first_key, last_key FROM allocation_pools WHERE subnet_id = ?1 ORDER BY ordinal");
}

// Subnets selected by "SELECT <kSubnetColumns> FROM subnets s <where_and_order>", with their pools.
StoreResult<std::vector<Subnet>> query_subnets(Connection& c, const std::string& where_and_order,
                                               const std::vector<std::string>& params) {
  HSNS_STORE_ASSIGN(
      st, prepare(c, std::string("SELECT ") + kSubnetColumns + " FROM subnets s " + where_and_order));
  for (std::size_t i = 0; i < params.size(); ++i) st->bind_text(static_cast<int>(i) + 1, params[i]);
  std::vector<Subnet> subnets;
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) break;
    HSNS_STORE_ASSIGN(subnet, read_subnet_row(*st));
    subnets.push_back(std::move(*subnet));
  }
  HSNS_STORE_ASSIGN(pools, prepare_pools(c));
  for (auto& s : subnets) HSNS_STORE_TRY(load_pools(*pools, s));
  return subnets;
}

StoreResult<std::optional<Subnet>> load_subnet(Connection& c, const std::string& id) {
  HSNS_STORE_ASSIGN(subnets, query_subnets(c, "WHERE s.id = ?1", {id}));
  if (subnets->empty()) return std::optional<Subnet>();
  return std::optional<Subnet>(std::move(subnets->front()));
}

// A WHERE clause of "column = ?n" terms joined by AND, for the optional filters of list calls.
struct EqualityFilter {
  std::string sql;
  std::vector<std::string> params;

  void add(const char* column, const std::optional<std::string>& value) {
    if (!value) return;
    sql += sql.empty() ? "WHERE " : " AND ";
    params.push_back(*value);
    sql += std::string(column) + " = ?" + std::to_string(params.size());
  }
};

StoreResult<std::vector<Port>> query_ports(Connection& c, const std::string& where,
                                           const std::vector<std::string>& params, const std::string& order) {
  HSNS_STORE_ASSIGN(
      st, prepare(c, std::string("SELECT ") + kPortColumns +
                         " FROM ports p JOIN subnets s ON s.id = p.subnet_id " + where + " " + order));
  for (std::size_t i = 0; i < params.size(); ++i) st->bind_text(static_cast<int>(i) + 1, params[i]);
  std::vector<Port> ports;
  for (;;) {
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) break;
    HSNS_STORE_ASSIGN(port, read_port_row(*st));
    ports.push_back(std::move(*port));
  }
  return ports;
}

StoreResult<std::optional<Port>> load_port(Connection& c, const std::string& id) {
  HSNS_STORE_ASSIGN(ports, query_ports(c, "WHERE p.id = ?1", {id}, ""));
  if (ports->empty()) return std::optional<Port>();
  return std::optional<Port>(std::move(ports->front()));
}

// ---- writes -----------------------------------------------------------------------------------------

StoreResult<void> insert_npus(Connection& c, const std::string& host, const std::vector<NpuInterface>& npus) {
  HSNS_STORE_ASSIGN(st, prepare(c,
                                "INSERT INTO host_npus (host, npu_index, netdev, mac, rdma_device, "
                                "link_speed_mbps) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  for (const auto& n : npus) {
    st->reset();
    st->bind_text(1, host)
        .bind_int64(2, n.index)
        .bind_text(3, n.netdev)
        .bind_text(4, n.mac)
        .bind_text(5, n.rdma_device)
        .bind_int64(6, n.link_speed_mbps);
    HSNS_STORE_TRY(run(*st));
  }
  return {};
}

StoreResult<void> insert_pools(Connection& c, const std::string& subnet_id,
                               const std::vector<IpRange>& pools) {
  HSNS_STORE_ASSIGN(st, prepare(c,
                                "INSERT INTO allocation_pools (subnet_id, ordinal, first_key, last_key) "
                                "VALUES (?1, ?2, ?3, ?4)"));
  for (std::size_t i = 0; i < pools.size(); ++i) {
    st->reset();
    st->bind_text(1, subnet_id)
        .bind_int64(2, static_cast<std::int64_t>(i))
        .bind_text(3, pools[i].first.sort_key())
        .bind_text(4, pools[i].last.sort_key());
    HSNS_STORE_TRY(run(*st));
  }
  return {};
}

StoreResult<void> bump_generation(Connection& c, const std::string& host) {
  HSNS_STORE_ASSIGN(st, prepare(c, "UPDATE hosts SET generation = generation + 1 WHERE name = ?1"));
  st->bind_text(1, host);
  return run(*st);
}

StoreResult<void> check_name_free(Connection& c, const std::string& tenant, const std::string& name,
                                  const std::string& except_id) {
  HSNS_STORE_ASSIGN(st, prepare(c, "SELECT id FROM subnets WHERE tenant = ?1 AND name = ?2 AND id <> ?3"));
  st->bind_text(1, tenant).bind_text(2, name).bind_text(3, except_id);
  HSNS_STORE_ASSIGN(row, step(*st));
  if (*row) {
    return tl::unexpected(StoreError::conflict("name", "a subnet named '" + name +
                                                           "' already exists in tenant '" + tenant +
                                                           "' (id " + st->column_text(0) + ")"));
  }
  return {};
}

}  // namespace

SqliteNetworkStore::SqliteNetworkStore(Database& db, Clock clock) : db_(db), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return std::chrono::system_clock::now(); };
}

std::string SqliteNetworkStore::now() const {
  return format_rfc3339_utc(clock_());
}

namespace {

// Whether a subnet of the tenant overlaps s.cidr (conflict "cidr" naming it).
StoreResult<void> check_no_overlap(Connection& c, const Subnet& s) {
  HSNS_STORE_ASSIGN(st, prepare(c,
                                "SELECT id, name, cidr FROM subnets WHERE tenant = ?1 AND network_key <= ?2 "
                                "AND last_key >= ?3 ORDER BY network_key LIMIT 1"));
  st->bind_text(1, s.tenant).bind_text(2, s.cidr.last().sort_key()).bind_text(3, s.cidr.first().sort_key());
  HSNS_STORE_ASSIGN(row, step(*st));
  if (*row) {
    return tl::unexpected(StoreError::conflict(
        "cidr", "cidr " + s.cidr.to_string() + " overlaps subnet " + st->column_text(1) + " (" +
                    st->column_text(2) + ", id " + st->column_text(0) + ") in tenant '" + s.tenant + "'"));
  }
  return {};
}

StoreResult<void> insert_subnet(Connection& c, const Subnet& s) {
  HSNS_STORE_ASSIGN(st, prepare(c,
                                "INSERT INTO subnets (id, name, tenant, cidr, ip_version, prefix_length, "
                                "network_key, last_key, gateway_ip, mtu, created_at, updated_at) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)"));
  st->bind_text(1, s.id)
      .bind_text(2, s.name)
      .bind_text(3, s.tenant)
      .bind_text(4, s.cidr.to_string())
      .bind_int64(5, s.cidr.family() == IpFamily::v4 ? 4 : 6)
      .bind_int64(6, s.cidr.length())
      .bind_text(7, s.cidr.first().sort_key())
      .bind_text(8, s.cidr.last().sort_key())
      .bind_optional_text(9, s.gateway ? std::optional<std::string>(s.gateway->to_string()) : std::nullopt)
      .bind_int64(10, s.mtu)
      .bind_text(11, s.created_at);
  HSNS_STORE_TRY(run(*st));
  return insert_pools(c, s.id, s.allocation_pools);
}

// create_port's checks before the address: host registered, host has the NPU, no port yet for
// (host, npu, subnet).
StoreResult<void> check_port_target(Connection& c, const network::PortSpec& spec, const Subnet& s) {
  {
    HSNS_STORE_ASSIGN(st, prepare(c, "SELECT 1 FROM hosts WHERE name = ?1"));
    st->bind_text(1, spec.host);
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) return tl::unexpected(StoreError::invalid("host", "host " + spec.host + " is not registered"));
  }
  {
    HSNS_STORE_ASSIGN(st, prepare(c, "SELECT 1 FROM host_npus WHERE host = ?1 AND npu_index = ?2"));
    st->bind_text(1, spec.host).bind_int64(2, spec.npu);
    HSNS_STORE_ASSIGN(row, step(*st));
    if (!*row) {
      return tl::unexpected(
          StoreError::invalid("npu", "host " + spec.host + " has no NPU " + std::to_string(spec.npu)));
    }
  }
  HSNS_STORE_ASSIGN(st, prepare(c, "SELECT id FROM ports WHERE host = ?1 AND npu = ?2 AND subnet_id = ?3"));
  st->bind_text(1, spec.host).bind_int64(2, spec.npu).bind_text(3, s.id);
  HSNS_STORE_ASSIGN(row, step(*st));
  if (*row) {
    return tl::unexpected(StoreError::conflict("npu", "NPU " + std::to_string(spec.npu) + " of host " +
                                                          spec.host + " already has port " +
                                                          st->column_text(0) + " in " + describe(s)));
  }
  return {};
}

StoreResult<Subnet> existing_subnet(Connection& c, const std::string& id) {
  HSNS_STORE_ASSIGN(subnet, load_subnet(c, id));
  if (!*subnet) return tl::unexpected(StoreError::not_found("subnet " + id + " not found"));
  return std::move(**subnet);
}

}  // namespace

// ---- hosts ------------------------------------------------------------------------------------------

StoreResult<PutHostResult> SqliteNetworkStore::put_host(const network::HostRegistration& reg) {
  std::vector<NpuInterface> npus = reg.npus;
  std::sort(npus.begin(), npus.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < npus.size(); ++i) {
    if (npus[i].index == npus[i - 1].index) {
      return tl::unexpected(StoreError::invalid(
          "npus", "NPU index " + std::to_string(npus[i].index) + " is listed more than once"));
    }
  }
  return sql::write(db_, [&](Connection& c) -> StoreResult<PutHostResult> {
    // Whether the host exists is read in the write transaction that acts on it: concurrent
    // registrations of one new host are serialised here, and only the first inserts (and reports a
    // creation).
    HSNS_STORE_ASSIGN(existing, load_host(c, reg.name));
    const std::string timestamp = now();
    if (!*existing) {
      HSNS_STORE_ASSIGN(st, prepare(c,
                                    "INSERT INTO hosts (name, generation, created_at, updated_at) "
                                    "VALUES (?1, 1, ?2, ?2)"));
      st->bind_text(1, reg.name).bind_text(2, timestamp);
      HSNS_STORE_TRY(run(*st));
      HSNS_STORE_TRY(insert_npus(c, reg.name, npus));
      return PutHostResult{Host{reg.name, std::move(npus), 1, timestamp, timestamp}, true};
    }
    Host host = std::move(**existing);
    if (same_npus(host.npus, npus)) return PutHostResult{std::move(host), false};  // nothing to write
    HSNS_STORE_ASSIGN(del, prepare(c, "DELETE FROM host_npus WHERE host = ?1"));
    del->bind_text(1, reg.name);
    HSNS_STORE_TRY(run(*del));
    HSNS_STORE_TRY(insert_npus(c, reg.name, npus));
    HSNS_STORE_ASSIGN(upd, prepare(c,
                                   "UPDATE hosts SET generation = generation + 1, updated_at = ?2 "
                                   "WHERE name = ?1 RETURNING generation"));
    upd->bind_text(1, reg.name).bind_text(2, timestamp);
    HSNS_STORE_ASSIGN(row, step(*upd));
    if (!*row) return tl::unexpected(StoreError::unavailable("host " + reg.name + " vanished during update"));
    host.generation = upd->column_int64(0);
    HSNS_STORE_TRY(run(*upd));  // finish the statement before COMMIT
    host.npus = std::move(npus);
    host.updated_at = timestamp;
    return PutHostResult{std::move(host), false};
  });
}

StoreResult<Host> SqliteNetworkStore::get_host(const std::string& name) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<Host> {
    HSNS_STORE_ASSIGN(host, load_host(c, name));
    if (!*host) return tl::unexpected(StoreError::not_found("host " + name + " not found"));
    return std::move(**host);
  });
}

StoreResult<std::vector<Host>> SqliteNetworkStore::list_hosts() {
  return sql::read(db_, [](Connection& c) { return load_hosts(c); });
}

// ---- subnets ----------------------------------------------------------------------------------------

StoreResult<Subnet> SqliteNetworkStore::create_subnet(const network::SubnetSpec& spec) {
  HSNS_STORE_ASSIGN(pools, ipam::subnet_pools(spec));
  Subnet s;
  s.name = spec.name;
  s.tenant = spec.tenant.empty() ? std::string(network::kDefaultTenant) : spec.tenant;
  s.cidr = spec.cidr;
  s.gateway = spec.gateway;
  s.allocation_pools = std::move(*pools);
  s.mtu = spec.mtu;
  return sql::write(db_, [&](Connection& c) -> StoreResult<Subnet> {
    HSNS_STORE_TRY(check_name_free(c, s.tenant, s.name, ""));
    HSNS_STORE_TRY(check_no_overlap(c, s));
    s.id = new_uuid();
    s.created_at = s.updated_at = now();
    HSNS_STORE_TRY(insert_subnet(c, s));
    return s;
  });
}

StoreResult<Subnet> SqliteNetworkStore::get_subnet(const std::string& id) {
  return sql::read(db_, [&](Connection& c) { return existing_subnet(c, id); });
}

StoreResult<std::vector<Subnet>> SqliteNetworkStore::list_subnets(const network::SubnetFilter& filter) {
  EqualityFilter where;
  where.add("s.tenant", filter.tenant);
  where.add("s.name", filter.name);
  return sql::read(db_, [&](Connection& c) {
    return query_subnets(c, where.sql + " ORDER BY s.tenant, s.name", where.params);
  });
}

StoreResult<Subnet> SqliteNetworkStore::update_subnet(const std::string& id, const network::SubnetUpdate& u) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<Subnet> {
    HSNS_STORE_ASSIGN(loaded, existing_subnet(c, id));
    const Subnet& s = *loaded;
    bool renamed = false;
    bool changed = false;
    if (u.name && *u.name != s.name) {
      HSNS_STORE_TRY(check_name_free(c, s.tenant, *u.name, s.id));
      HSNS_STORE_ASSIGN(st, prepare(c, "UPDATE subnets SET name = ?2 WHERE id = ?1"));
      st->bind_text(1, s.id).bind_text(2, *u.name);
      HSNS_STORE_TRY(run(*st));
      renamed = changed = true;
    }
    if (u.allocation_pools) {
      HSNS_STORE_ASSIGN(pools, ipam::updated_pools(s, *u.allocation_pools));
      if (*pools != s.allocation_pools) {
        HSNS_STORE_ASSIGN(del, prepare(c, "DELETE FROM allocation_pools WHERE subnet_id = ?1"));
        del->bind_text(1, s.id);
        HSNS_STORE_TRY(run(*del));
        HSNS_STORE_TRY(insert_pools(c, s.id, *pools));
        changed = true;
      }
    }
    if (!changed) return s;
    {
      HSNS_STORE_ASSIGN(st, prepare(c, "UPDATE subnets SET updated_at = ?2 WHERE id = ?1"));
      st->bind_text(1, s.id).bind_text(2, now());
      HSNS_STORE_TRY(run(*st));
    }
    if (renamed) {
      // The subnet name is part of every affected host's desired state.
      HSNS_STORE_ASSIGN(st, prepare(c,
                                    "UPDATE hosts SET generation = generation + 1 "
                                    "WHERE name IN (SELECT host FROM ports WHERE subnet_id = ?1)"));
      st->bind_text(1, s.id);
      HSNS_STORE_TRY(run(*st));
    }
    HSNS_STORE_ASSIGN(updated, load_subnet(c, id));
    if (!*updated) return tl::unexpected(StoreError::unavailable("subnet " + id + " vanished during update"));
    return std::move(**updated);
  });
}

StoreResult<void> SqliteNetworkStore::delete_subnet(const std::string& id) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(s, existing_subnet(c, id));
    if (s->port_count > 0) {
      return tl::unexpected(StoreError::conflict(
          "subnet_id", describe(*s) + " still has " + std::to_string(s->port_count) +
                           (s->port_count == 1 ? " port" : " ports") + "; delete them first"));
    }
    HSNS_STORE_ASSIGN(st, prepare(c, "DELETE FROM subnets WHERE id = ?1"));
    st->bind_text(1, id);
    return run(*st);
  });
}

// ---- ports ------------------------------------------------------------------------------------------

StoreResult<Port> SqliteNetworkStore::create_port(const network::PortSpec& spec) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<Port> {
    HSNS_STORE_ASSIGN(s, existing_subnet(c, spec.subnet_id));
    HSNS_STORE_TRY(check_port_target(c, spec, *s));
    Port p;
    p.id = new_uuid();
    p.name = spec.name;
    p.subnet_id = s->id;
    p.tenant = s->tenant;
    p.host = spec.host;
    p.npu = spec.npu;
    p.fixed_ip = spec.ip_address.has_value();
    p.created_at = now();
    // IPAM picks the address and stores the port through the book (the insert is the claim).
    SqlitePortAddressBook book(c, p);
    HSNS_STORE_TRY(ipam::assign_address(*s, spec.ip_address, book));
    HSNS_STORE_TRY(bump_generation(c, p.host));
    return p;
  });
}

StoreResult<Port> SqliteNetworkStore::get_port(const std::string& id) {
  return sql::read(db_, [&](Connection& c) -> StoreResult<Port> {
    HSNS_STORE_ASSIGN(port, load_port(c, id));
    if (!*port) return tl::unexpected(StoreError::not_found("port " + id + " not found"));
    return std::move(**port);
  });
}

StoreResult<std::vector<Port>> SqliteNetworkStore::list_ports(const network::PortFilter& filter) {
  EqualityFilter where;
  where.add("p.host", filter.host);
  where.add("p.subnet_id", filter.subnet_id);
  where.add("p.tenant", filter.tenant);
  return sql::read(db_, [&](Connection& c) {
    return query_ports(c, where.sql, where.params, "ORDER BY p.host, p.npu, s.name, p.id");
  });
}

StoreResult<void> SqliteNetworkStore::delete_port(const std::string& id) {
  return sql::write(db_, [&](Connection& c) -> StoreResult<void> {
    HSNS_STORE_ASSIGN(port, load_port(c, id));
    if (!*port) return tl::unexpected(StoreError::not_found("port " + id + " not found"));
    HSNS_STORE_ASSIGN(st, prepare(c, "DELETE FROM ports WHERE id = ?1"));
    st->bind_text(1, id);
    HSNS_STORE_TRY(run(*st));
    return bump_generation(c, (*port)->host);
  });
}

StoreResult<std::vector<std::optional<PortPlacement>>> SqliteNetworkStore::port_placements(
    const std::vector<std::string>& ids) {
  // One read transaction: every port and its subnet as of one moment.
  return sql::read(db_, [&](Connection& c) -> StoreResult<std::vector<std::optional<PortPlacement>>> {
    std::vector<std::optional<PortPlacement>> out;
    out.reserve(ids.size());
    for (const auto& id : ids) {
      HSNS_STORE_ASSIGN(port, load_port(c, id));
      if (!*port) {
        out.emplace_back();
        continue;
      }
      HSNS_STORE_ASSIGN(subnet, load_subnet(c, (*port)->subnet_id));
      if (!*subnet) return tl::unexpected(corrupt("subnet reference of port " + id));
      out.push_back(PortPlacement{std::move(**port), std::move(**subnet)});
    }
    return out;
  });
}

StoreResult<HostView> SqliteNetworkStore::host_view(const std::string& host) {
  // One read transaction: the host, its ports and their subnets come from one snapshot even while
  // writers commit.
  return sql::read(db_, [&](Connection& c) -> StoreResult<HostView> {
    HSNS_STORE_ASSIGN(loaded, load_host(c, host));
    if (!*loaded) return tl::unexpected(StoreError::not_found("host " + host + " not found"));
    HostView view;
    view.host = std::move(**loaded);
    HSNS_STORE_ASSIGN(ports, query_ports(c, "WHERE p.host = ?1", {host}, "ORDER BY p.npu, s.name, p.id"));
    view.ports = std::move(*ports);
    HSNS_STORE_ASSIGN(subnets, query_subnets(c,
                                             "WHERE s.id IN (SELECT subnet_id FROM ports WHERE host = ?1) "
                                             "ORDER BY s.tenant, s.name",
                                             {host}));
    view.subnets = std::move(*subnets);
    return view;
  });
}

StoreResult<std::vector<HostView>> SqliteNetworkStore::host_views() {
  // One read transaction and one pass over each table: the views host_view() would give one by one,
  // in the same orders (ports by npu, subnet name, id within a host; subnets by tenant, name).
  return sql::read(db_, [](Connection& c) -> StoreResult<std::vector<HostView>> {
    HSNS_STORE_ASSIGN(hosts, load_hosts(c));
    std::vector<HostView> views(hosts->size());
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < hosts->size(); ++i) {
      views[i].host = std::move((*hosts)[i]);
      index.emplace(views[i].host.name, i);
    }
    HSNS_STORE_ASSIGN(ports, query_ports(c, "", {}, "ORDER BY p.host, p.npu, s.name, p.id"));
    HSNS_STORE_ASSIGN(subnets, query_subnets(c,
                                             "WHERE s.id IN (SELECT subnet_id FROM ports) "
                                             "ORDER BY s.tenant, s.name",
                                             {}));
    std::unordered_map<std::string, std::size_t> subnet_rank;
    for (std::size_t i = 0; i < subnets->size(); ++i) subnet_rank.emplace((*subnets)[i].id, i);
    // Per host, the ranks of the subnets its ports are in (distinct, in the subnets' order).
    std::vector<std::vector<std::size_t>> host_subnets(views.size());
    for (auto& p : *ports) {
      const auto host = index.find(p.host);
      const auto rank = subnet_rank.find(p.subnet_id);
      if (host == index.end() || rank == subnet_rank.end())
        return tl::unexpected(corrupt("host or subnet reference of port " + p.id));
      host_subnets[host->second].push_back(rank->second);
      views[host->second].ports.push_back(std::move(p));
    }
    for (std::size_t i = 0; i < views.size(); ++i) {
      auto& ranks = host_subnets[i];
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      views[i].subnets.reserve(ranks.size());
      for (const auto r : ranks) views[i].subnets.push_back((*subnets)[r]);
    }
    return views;
  });
}

}  // namespace hsns::store
