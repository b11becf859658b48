// Tests of the SQLite layer (store/database.h) and SqliteNetworkStore on real temporary database files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <latch>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "model/network.h"
#include "store/database.h"
#include "store/sqlite_network_store.h"
#include "store_test_support.h"

namespace hsns::store {
namespace {

// The newest schema version this binary knows.
// The newest migration's version; numbers may have gaps (a migration of a branch not merged yet).
const int kLatest = hsns::store::builtin_migrations().back().version;
const int kMigrations = static_cast<int>(hsns::store::builtin_migrations().size());

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared helpers
using network::PortFilter;
using network::SubnetFilter;
using network::SubnetUpdate;

// Everything the store answers, as text: equal snapshots mean equal stored state.
std::string snapshot(NetworkStore& store) {
  nlohmann::json j;
  for (const auto& h : ok(store.list_hosts())) j["hosts"].push_back(network::to_json(h));
  for (const auto& s : ok(store.list_subnets({}))) j["subnets"].push_back(network::to_json(s));
  for (const auto& p : ok(store.list_ports({}))) j["ports"].push_back(network::to_json(p));
  return j.dump();
}

// ---- Database ---------------------------------------------------------------------------------------

class DatabaseTest : public ::testing::Test {
 protected:
  std::string db_path() const { return (dir_.path() / "hsns.db").string(); }
  DatabaseOptions options() const {
    DatabaseOptions o;
    o.path = db_path();
    o.read_connections = 2;
    return o;
  }
  TempDir dir_;
};

TEST_F(DatabaseTest, OpensInWalModeWithPragmasAndAppliesMigrationsOnce) {
  std::string applied_at;
  {
    Database db(options());
    EXPECT_EQ(db.schema_version(), kLatest);
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    Connection& c = w->connection();
    EXPECT_EQ(query_text(c, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(query_int(c, "PRAGMA foreign_keys"), 1);
    EXPECT_EQ(query_int(c, "PRAGMA synchronous"), 2);  // FULL
    EXPECT_GT(query_int(c, "PRAGMA busy_timeout"), 0);
    EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM schema_migrations"), kMigrations);
    applied_at = query_text(c, "SELECT applied_at FROM schema_migrations WHERE version = 1");
    EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'ports'"), 1);
  }
  Database db(options());  // reopen: nothing applied again
  EXPECT_EQ(db.schema_version(), kLatest);
  auto w = db.writer();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(query_int(w->connection(), "SELECT COUNT(*) FROM schema_migrations"), kMigrations);
  EXPECT_EQ(query_text(w->connection(), "SELECT applied_at FROM schema_migrations WHERE version = 1"),
            applied_at);
}

TEST_F(DatabaseTest, AppliesNewMigrationsOnUpgrade) {
  { Database db(options()); }
  std::vector<Migration> migrations = builtin_migrations();
  migrations.push_back(
      {kLatest + 1, "test table", "CREATE TABLE extra (x INTEGER); INSERT INTO extra VALUES (42);"});
  DatabaseOptions o = options();
  o.migrations = &migrations;
  {
    Database db(o);
    EXPECT_EQ(db.schema_version(), kLatest + 1);
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(query_int(w->connection(), "SELECT x FROM extra"), 42);
    EXPECT_EQ(query_int(w->connection(), "SELECT COUNT(*) FROM schema_migrations"), kMigrations + 1);
  }
  Database again(o);
  auto w = again.writer();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(query_int(w->connection(), "SELECT COUNT(*) FROM extra"), 1);  // not applied twice
}

TEST_F(DatabaseTest, FailedMigrationIsRolledBackAndOpenThrows) {
  std::vector<Migration> migrations = builtin_migrations();
  migrations.push_back(
      {kLatest + 1, "broken", "CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);"});
  DatabaseOptions o = options();
  o.migrations = &migrations;
  try {
    Database db(o);
    FAIL() << "open must fail";
  } catch (const DatabaseOpenError& e) {
    EXPECT_NE(std::string(e.what()).find("migration " + std::to_string(kLatest + 1)), std::string::npos)
        << e.what();
  }
  Database db(options());
  EXPECT_EQ(db.schema_version(), kLatest);
  auto w = db.writer();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(query_int(w->connection(), "SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'"), 0);
}

TEST_F(DatabaseTest, RefusesDatabaseFromNewerBinary) {
  {
    Database db(options());
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->connection().execute("INSERT INTO schema_migrations VALUES (99, '2030-01-01T00:00:00Z')"));
  }
  try {
    Database db(options());
    FAIL() << "open must fail";
  } catch (const DatabaseOpenError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("schema version 99"), std::string::npos) << what;
    EXPECT_NE(what.find("newer than this binary supports (" + std::to_string(kLatest) + ")"),
              std::string::npos)
        << what;
  }
}

TEST_F(DatabaseTest, OpenErrorsThrow) {
  DatabaseOptions o;
  o.path = (dir_.path() / "no-such-dir" / "x.db").string();
  EXPECT_THROW(Database db(o), DatabaseOpenError);
  o.path = ":memory:";
  EXPECT_THROW(Database db(o), DatabaseOpenError);
  o.path = "";
  EXPECT_THROW(Database db(o), DatabaseOpenError);
}

TEST_F(DatabaseTest, StatementBindStepColumnsAndReset) {
  Database db(options());
  auto w = db.writer();
  ASSERT_TRUE(w.has_value());
  Connection& c = w->connection();
  ASSERT_TRUE(c.execute("CREATE TABLE t (a TEXT, b INTEGER, c TEXT)"));
  auto ins = c.prepare("INSERT INTO t VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(ins.has_value());
  ins->bind_text(1, "x").bind_int64(2, 1LL << 40).bind_null(3);
  ASSERT_TRUE(ins->run());
  EXPECT_EQ(ins->changes(), 1);
  ins->reset();
  ins->bind_text(1, std::string_view("yz\0w", 4)).bind_int64(2, -5).bind_optional_text(3, std::string("c"));
  ASSERT_TRUE(ins->run());

  auto sel = c.prepare("SELECT a, b, c FROM t ORDER BY b");
  ASSERT_TRUE(sel.has_value());
  auto row = sel->step();
  ASSERT_TRUE(row && *row);
  EXPECT_EQ(sel->column_text(0), std::string("yz\0w", 4));
  EXPECT_EQ(sel->column_int64(1), -5);
  EXPECT_EQ(sel->column_optional_text(2), std::optional<std::string>("c"));
  row = sel->step();
  ASSERT_TRUE(row && *row);
  EXPECT_EQ(sel->column_int64(1), 1LL << 40);
  EXPECT_TRUE(sel->column_is_null(2));
  EXPECT_EQ(sel->column_optional_text(2), std::nullopt);
  row = sel->step();
  ASSERT_TRUE(row.has_value());
  EXPECT_FALSE(*row);

  // A bind error is reported by step().
  auto bad = c.prepare("SELECT ?1");
  ASSERT_TRUE(bad.has_value());
  bad->bind_text(7, "out of range");
  auto r = bad->step();
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("parameter 7"), std::string::npos) << r.error().message;

  // Syntax errors and more than one statement are errors, not exceptions.
  EXPECT_FALSE(c.prepare("SELEC 1").has_value());
  EXPECT_FALSE(c.prepare("  -- only a comment").has_value());
  EXPECT_FALSE(c.prepare("SELECT 1; SELECT 2").has_value());
  EXPECT_TRUE(c.prepare("SELECT 1;").has_value());
}

TEST_F(DatabaseTest, TransactionRollsBackUnlessCommitted) {
  Database db(options());
  auto w = db.writer();
  ASSERT_TRUE(w.has_value());
  Connection& c = w->connection();
  ASSERT_TRUE(c.execute("CREATE TABLE t (x INTEGER)"));
  {
    auto txn = Transaction::begin(c, Transaction::Mode::write);
    ASSERT_TRUE(txn.has_value());
    EXPECT_TRUE(c.in_transaction());
    ASSERT_TRUE(c.execute("INSERT INTO t VALUES (1)"));
  }
  EXPECT_FALSE(c.in_transaction());
  EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM t"), 0);
  {
    auto txn = Transaction::begin(c, Transaction::Mode::write);
    ASSERT_TRUE(txn.has_value());
    ASSERT_TRUE(c.execute("INSERT INTO t VALUES (2)"));
    ASSERT_TRUE(txn->commit());
    EXPECT_FALSE(txn->commit().has_value());  // only once
  }
  EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM t"), 1);
}

TEST_F(DatabaseTest, ReadersAreReadOnlyConcurrentAndSeeCommittedData) {
  Database db(options());
  {
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->connection().execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);"));
  }
  auto r1 = db.reader();
  auto r2 = db.reader();  // both pooled connections at once
  ASSERT_TRUE(r1.has_value());
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(query_int(r1->connection(), "SELECT x FROM t"), 7);
  auto denied = r2->connection().execute("INSERT INTO t VALUES (8)");
  ASSERT_FALSE(denied.has_value());
  EXPECT_NE(denied.error().message.find("readonly"), std::string::npos) << denied.error().message;

  // A read transaction keeps its snapshot while the writer commits.
  auto txn = Transaction::begin(r1->connection(), Transaction::Mode::read);
  ASSERT_TRUE(txn.has_value());
  EXPECT_EQ(query_int(r1->connection(), "SELECT COUNT(*) FROM t"), 1);
  {
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->connection().execute("INSERT INTO t VALUES (9)"));
  }
  EXPECT_EQ(query_int(r1->connection(), "SELECT COUNT(*) FROM t"), 1);
  EXPECT_EQ(query_int(r2->connection(), "SELECT COUNT(*) FROM t"), 2);
  ASSERT_TRUE(txn->commit());
  EXPECT_EQ(query_int(r1->connection(), "SELECT COUNT(*) FROM t"), 2);
}

TEST_F(DatabaseTest, CheckAndCloseCheckpointsTheWal) {
  Database db(options());
  EXPECT_TRUE(db.check().has_value());
  {
    auto w = db.writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(
        w->connection().execute("CREATE TABLE t (x TEXT); INSERT INTO t VALUES (hex(randomblob(5000)));"));
  }
  const fs::path wal = db_path() + "-wal";
  ASSERT_TRUE(fs::exists(wal));
  EXPECT_GT(fs::file_size(wal), 0u);
  EXPECT_TRUE(db.close().has_value());
  EXPECT_TRUE(!fs::exists(wal) || fs::file_size(wal) == 0);
  EXPECT_TRUE(db.close().has_value());  // idempotent
  EXPECT_FALSE(db.check().has_value());
  EXPECT_FALSE(db.writer().has_value());
  EXPECT_FALSE(db.reader().has_value());

  Database reopened(options());
  auto r = reopened.reader();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(query_int(r->connection(), "SELECT length(x) FROM t"), 10000);
}

// ---- SqliteNetworkStore -----------------------------------------------------------------------------

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() { open(); }

  void open() {
    DatabaseOptions o;
    o.path = (dir_.path() / "hsns.db").string();
    db_ = std::make_unique<Database>(o);
    store_ = std::make_unique<SqliteNetworkStore>(
        *db_, [this] { return std::chrono::system_clock::time_point(std::chrono::seconds(clock_.load())); });
  }
  void reopen() {
    store_.reset();
    ASSERT_TRUE(db_->close().has_value());
    db_.reset();
    open();
  }
  void tick(int seconds = 1) { clock_ += seconds; }

  network::Subnet make_subnet(const std::string& name, const std::string& cidr,
                              std::optional<std::string> gateway = {}, std::vector<IpRange> pools = {},
                              const std::string& tenant = "default") {
    return ok(store_->create_subnet(subnet_spec(name, cidr, std::move(gateway), std::move(pools), tenant)));
  }

  TempDir dir_;
  std::atomic<std::int64_t> clock_{1795970873};  // 2026-11-29T16:47:53Z
  std::unique_ptr<Database> db_;
  std::unique_ptr<SqliteNetworkStore> store_;
};

TEST_F(StoreTest, PutHostCreatesThenBumpsOnlyOnChange) {
  auto h = ok(store_->put_host(registration("node-a", 2))).host;
  EXPECT_EQ(h.name, "node-a");
  EXPECT_EQ(h.generation, 1);
  EXPECT_EQ(h.created_at, "2026-11-29T16:47:53Z");
  EXPECT_EQ(h.updated_at, h.created_at);
  ASSERT_EQ(h.npus.size(), 2u);
  EXPECT_EQ(h.npus[1].netdev, "eth3");
  EXPECT_EQ(h.npus[1].rdma_device, "mlx5_1");
  EXPECT_EQ(h.npus[1].link_speed_mbps, 200000);

  tick();
  auto same = ok(store_->put_host(registration("node-a", 2))).host;  // unchanged: nothing changes
  EXPECT_EQ(network::to_json(same), network::to_json(h));
  EXPECT_EQ(network::to_json(ok(store_->get_host("node-a"))), network::to_json(h));

  tick();
  auto changed = ok(store_->put_host(registration("node-a", 3))).host;
  EXPECT_EQ(changed.generation, 2);
  EXPECT_EQ(changed.created_at, h.created_at);
  EXPECT_EQ(changed.updated_at, "2026-11-29T16:47:55Z");
  EXPECT_EQ(changed.npus.size(), 3u);
  EXPECT_EQ(network::to_json(ok(store_->get_host("node-a"))), network::to_json(changed));

  tick();
  auto renamed = ok(store_->put_host(registration("node-a", 3, "ens"))).host;  // a field changed
  EXPECT_EQ(renamed.generation, 3);
  EXPECT_EQ(renamed.npus[0].netdev, "ens2");

  auto fewer = ok(store_->put_host(registration("node-a", 0))).host;
  EXPECT_EQ(fewer.generation, 4);
  EXPECT_TRUE(ok(store_->get_host("node-a")).npus.empty());
}

TEST_F(StoreTest, PutHostSaysWhetherItCreated) {
  auto first = ok(store_->put_host(registration("node-a", 2)));
  EXPECT_TRUE(first.created);
  EXPECT_EQ(first.host.generation, 1);
  // Repeating the very first registration unchanged is not a creation (the generation alone could not
  // tell: it is still 1).
  auto again = ok(store_->put_host(registration("node-a", 2)));
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.host.generation, 1);
  auto changed = ok(store_->put_host(registration("node-a", 3)));
  EXPECT_FALSE(changed.created);
  EXPECT_EQ(changed.host.generation, 2);
  // A rejected registration creates nothing.
  auto dup = registration("node-b", 2);
  dup.npus[1].index = 0;
  EXPECT_FALSE(store_->put_host(dup).has_value());
  EXPECT_TRUE(ok(store_->put_host(registration("node-b", 1))).created);
}

// Many identical first registrations at once, through two Database handles on one file (so the only
// thing serialising them is SQLite's write transaction, not the in-process writer mutex): exactly one
// reports the creation, and the host is stored once, intact.
TEST_F(StoreTest, ConcurrentPutHostCreatesExactlyOnce) {
  DatabaseOptions o;
  o.path = (dir_.path() / "hsns.db").string();
  Database second_db(o);
  SqliteNetworkStore second(second_db);
  constexpr int kThreads = 20;
  for (int round = 0; round < 5; ++round) {
    const std::string name = "node-" + std::to_string(round);
    std::latch start(kThreads);
    std::atomic<int> created{0}, updated{0}, failed{0};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        NetworkStore& store = i % 2 == 0 ? static_cast<NetworkStore&>(*store_) : second;
        start.arrive_and_wait();
        auto r = store.put_host(registration(name, 4));
        if (!r) {
          ++failed;
          ADD_FAILURE() << r.error().detail;
          return;
        }
        EXPECT_EQ(r->host.generation, 1);
        EXPECT_EQ(r->host.npus.size(), 4u);
        (r->created ? created : updated)++;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(created.load(), 1) << name;
    EXPECT_EQ(updated.load(), kThreads - 1) << name;
    EXPECT_EQ(failed.load(), 0);
    const auto stored = ok(store_->get_host(name));
    EXPECT_EQ(stored.generation, 1);
    network::Host expected;
    expected.npus = registration(name, 4).npus;
    EXPECT_EQ(network::to_json(stored)["npus"], network::to_json(expected)["npus"]);
  }
  EXPECT_EQ(ok(store_->list_hosts()).size(), 5u);
}

TEST_F(StoreTest, PutHostSortsNpusAndRejectsDuplicateIndexes) {
  auto reg = registration("node-b", 3);
  std::swap(reg.npus[0], reg.npus[2]);
  auto h = ok(store_->put_host(reg)).host;
  ASSERT_EQ(h.npus.size(), 3u);
  EXPECT_EQ(h.npus[0].index, 0);
  EXPECT_EQ(h.npus[2].index, 2);
  // The same inventory in another order is unchanged.
  EXPECT_EQ(ok(store_->put_host(reg)).host.generation, 1);

  const auto before = snapshot(*store_);
  reg.npus[1].index = 2;
  expect_error(store_->put_host(reg), Kind::invalid, "npus", "NPU index 2");
  EXPECT_EQ(snapshot(*store_), before);
}

TEST_F(StoreTest, GetAndListHosts) {
  expect_error(store_->get_host("nope"), Kind::not_found, "", "host nope not found");
  EXPECT_TRUE(ok(store_->list_hosts()).empty());
  ok(store_->put_host(registration("node-c", 1)));
  ok(store_->put_host(registration("node-a", 2)));
  ok(store_->put_host(registration("node-b", 0)));
  auto hosts = ok(store_->list_hosts());
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].name, "node-a");
  EXPECT_EQ(hosts[0].npus.size(), 2u);
  EXPECT_EQ(hosts[1].name, "node-b");
  EXPECT_TRUE(hosts[1].npus.empty());
  EXPECT_EQ(hosts[2].name, "node-c");
  EXPECT_EQ(hosts[2].npus.size(), 1u);
}

TEST_F(StoreTest, CreateSubnetWithDefaults) {
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1");
  EXPECT_EQ(s.id.size(), 36u);
  EXPECT_EQ(s.tenant, "default");
  EXPECT_EQ(s.cidr.to_string(), "10.0.0.0/24");
  EXPECT_EQ(s.gateway, ip("10.0.0.1"));
  EXPECT_EQ(s.mtu, 9000);
  EXPECT_EQ(s.port_count, 0);
  EXPECT_EQ(s.created_at, "2026-11-29T16:47:53Z");
  EXPECT_EQ(s.updated_at, s.created_at);
  ASSERT_EQ(s.allocation_pools.size(), 1u);
  EXPECT_EQ(s.allocation_pools[0], range("10.0.0.2", "10.0.0.254"));
  EXPECT_EQ(network::to_json(ok(store_->get_subnet(s.id))), network::to_json(s));

  // Gateway in the middle: two pools around it; empty tenant means the default tenant.
  auto mid = make_subnet("net-b", "10.0.1.0/24", "10.0.1.100", {}, "");
  EXPECT_EQ(mid.tenant, "default");
  ASSERT_EQ(mid.allocation_pools.size(), 2u);
  EXPECT_EQ(mid.allocation_pools[0], range("10.0.1.1", "10.0.1.99"));
  EXPECT_EQ(mid.allocation_pools[1], range("10.0.1.101", "10.0.1.254"));

  auto no_gw = make_subnet("net-c", "10.0.2.0/30");
  EXPECT_FALSE(no_gw.gateway.has_value());
  ASSERT_EQ(no_gw.allocation_pools.size(), 1u);
  EXPECT_EQ(no_gw.allocation_pools[0], range("10.0.2.1", "10.0.2.2"));

  auto v6 = make_subnet("net-v6", "2001:db8:1::/64", "2001:db8:1::1");
  EXPECT_EQ(v6.cidr.family(), IpFamily::v6);
  ASSERT_EQ(v6.allocation_pools.size(), 1u);
  EXPECT_EQ(v6.allocation_pools[0], range("2001:db8:1::2", "2001:db8:1::ffff:ffff:ffff:ffff"));
  EXPECT_EQ(network::to_json(ok(store_->get_subnet(v6.id))), network::to_json(v6));
}

TEST_F(StoreTest, CreateSubnetWithExplicitPoolsAndMtu) {
  auto spec =
      subnet_spec("net-p", "198.18.0.0/24", "198.18.0.1",
                  {range("198.18.0.100", "198.18.0.149"), range("198.18.0.10", "198.18.0.19")}, "team-x");
  spec.mtu = 4200;
  auto s = ok(store_->create_subnet(spec));
  EXPECT_EQ(s.tenant, "team-x");
  EXPECT_EQ(s.mtu, 4200);
  ASSERT_EQ(s.allocation_pools.size(), 2u);
  EXPECT_EQ(s.allocation_pools[0], range("198.18.0.100", "198.18.0.149"));  // order kept
  auto got = ok(store_->get_subnet(s.id));
  EXPECT_EQ(network::to_json(got), network::to_json(s));
}

TEST_F(StoreTest, CreateSubnetErrors) {
  auto a = make_subnet("net-a", "10.0.0.0/16", "10.0.0.1");
  const auto before = snapshot(*store_);

  expect_error(store_->create_subnet(subnet_spec("net-a", "10.9.0.0/24")), Kind::conflict, "name",
               "'net-a' already exists in tenant 'default'");
  expect_error(store_->create_subnet(subnet_spec("net-b", "10.0.5.0/24")), Kind::conflict, "cidr",
               "overlaps subnet net-a (10.0.0.0/16");
  expect_error(store_->create_subnet(subnet_spec("net-b", "10.0.0.0/8")), Kind::conflict, "cidr", "net-a");
  expect_error(store_->create_subnet(subnet_spec("net-b", "10.1.0.0/24", "10.2.0.1")), Kind::invalid,
               "gateway_ip", "10.2.0.1 is outside 10.1.0.0/24");
  expect_error(
      store_->create_subnet(subnet_spec("net-b", "10.1.0.0/24", "10.1.0.1", {range("10.1.0.1", "10.1.0.9")})),
      Kind::invalid, "allocation_pools[0]", "gateway");
  expect_error(
      store_->create_subnet(subnet_spec("net-b", "10.1.0.0/24", {}, {range("10.1.0.5", "10.1.1.9")})),
      Kind::invalid, "allocation_pools[0].end", "outside");
  expect_error(store_->create_subnet(subnet_spec("net-b", "10.1.0.5/32", "10.1.0.5")), Kind::invalid,
               "allocation_pools", "no address left");
  EXPECT_EQ(snapshot(*store_), before);

  // Names and CIDRs are scoped to the tenant; different families never overlap.
  auto other = make_subnet("net-a", "10.0.0.0/16", {}, {}, "other");
  EXPECT_EQ(other.tenant, "other");
  make_subnet("net-v6", "fc00::/7");
  make_subnet("net-adjacent", "10.1.0.0/16");
  (void)a;
}

TEST_F(StoreTest, GetAndListSubnets) {
  expect_error(store_->get_subnet("00000000-0000-0000-0000-000000000000"), Kind::not_found, "",
               "subnet 00000000-0000-0000-0000-000000000000 not found");
  ok(store_->put_host(registration("node-a", 2)));
  auto b = make_subnet("b", "10.2.0.0/24", {}, {}, "t1");
  auto a = make_subnet("a", "10.1.0.0/24", {}, {}, "t1");
  auto z = make_subnet("a", "10.1.0.0/24", {}, {}, "t0");
  ok(store_->create_port(port_spec(a.id, "node-a", 0)));
  ok(store_->create_port(port_spec(a.id, "node-a", 1)));
  ok(store_->create_port(port_spec(b.id, "node-a", 0)));

  auto all = ok(store_->list_subnets({}));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, z.id);  // tenant t0 first
  EXPECT_EQ(all[1].id, a.id);
  EXPECT_EQ(all[2].id, b.id);
  EXPECT_EQ(all[0].port_count, 0);
  EXPECT_EQ(all[1].port_count, 2);
  EXPECT_EQ(all[2].port_count, 1);
  EXPECT_EQ(all[1].allocation_pools, a.allocation_pools);

  SubnetFilter f;
  f.tenant = "t1";
  auto t1 = ok(store_->list_subnets(f));
  ASSERT_EQ(t1.size(), 2u);
  f.name = "b";
  auto only_b = ok(store_->list_subnets(f));
  ASSERT_EQ(only_b.size(), 1u);
  EXPECT_EQ(only_b[0].id, b.id);
  SubnetFilter by_name;
  by_name.name = "a";
  EXPECT_EQ(ok(store_->list_subnets(by_name)).size(), 2u);
  f.tenant = "nobody";
  EXPECT_TRUE(ok(store_->list_subnets(f)).empty());
  EXPECT_EQ(ok(store_->get_subnet(a.id)).port_count, 2);
}

TEST_F(StoreTest, UpdateSubnet) {
  ok(store_->put_host(registration("node-a", 2)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.19")});
  make_subnet("net-b", "10.0.1.0/24");
  auto p = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  EXPECT_EQ(p.ip_address, ip("10.0.0.10"));

  expect_error(store_->update_subnet("missing", {}), Kind::not_found, "", "subnet missing not found");

  const auto before = snapshot(*store_);
  SubnetUpdate dup;
  dup.name = "net-b";
  expect_error(store_->update_subnet(s.id, dup), Kind::conflict, "name", "'net-b' already exists");
  SubnetUpdate bad_pools;
  bad_pools.name = "renamed-too";  // the whole update is rejected, the name too
  bad_pools.allocation_pools = std::vector<IpRange>{range("10.0.0.1", "10.0.0.5")};
  expect_error(store_->update_subnet(s.id, bad_pools), Kind::invalid, "allocation_pools[0]", "gateway");
  bad_pools.allocation_pools =
      std::vector<IpRange>{range("10.0.0.30", "10.0.0.40"), range("10.0.0.35", "10.0.0.50")};
  expect_error(store_->update_subnet(s.id, bad_pools), Kind::invalid, "allocation_pools[1]", "overlaps");
  EXPECT_EQ(snapshot(*store_), before);

  // No change: nothing touched.
  tick();
  SubnetUpdate same;
  same.name = "net-a";
  EXPECT_EQ(network::to_json(ok(store_->update_subnet(s.id, same))),
            network::to_json(ok(store_->get_subnet(s.id))));
  EXPECT_EQ(snapshot(*store_), before);

  // New pools that no longer contain the existing port's address: the port keeps it.
  SubnetUpdate pools;
  pools.allocation_pools = std::vector<IpRange>{range("10.0.0.200", "10.0.0.201")};
  auto updated = ok(store_->update_subnet(s.id, pools));
  EXPECT_EQ(updated.name, "net-a");
  EXPECT_EQ(updated.allocation_pools, pools.allocation_pools);
  EXPECT_EQ(updated.updated_at, "2026-11-29T16:47:54Z");
  EXPECT_EQ(updated.created_at, s.created_at);
  EXPECT_EQ(updated.port_count, 1);
  EXPECT_EQ(ok(store_->get_port(p.id)).ip_address, ip("10.0.0.10"));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 1))).ip_address, ip("10.0.0.200"));

  // Rename, then back to the defaults with an empty list.
  SubnetUpdate both;
  both.name = "net-renamed";
  both.allocation_pools = std::vector<IpRange>{};
  updated = ok(store_->update_subnet(s.id, both));
  EXPECT_EQ(updated.name, "net-renamed");
  ASSERT_EQ(updated.allocation_pools.size(), 1u);
  EXPECT_EQ(updated.allocation_pools[0], range("10.0.0.2", "10.0.0.254"));
  EXPECT_EQ(network::to_json(ok(store_->get_subnet(s.id))), network::to_json(updated));
  SubnetFilter f;
  f.name = "net-a";
  EXPECT_TRUE(ok(store_->list_subnets(f)).empty());
}

TEST_F(StoreTest, DeleteSubnet) {
  ok(store_->put_host(registration("node-a", 2)));
  auto s = make_subnet("net-a", "10.0.0.0/24");
  auto p1 = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  auto p2 = ok(store_->create_port(port_spec(s.id, "node-a", 1)));
  expect_error(store_->delete_subnet(s.id), Kind::conflict, "subnet_id", "still has 2 ports");
  ok(store_->delete_port(p1.id));
  expect_error(store_->delete_subnet(s.id), Kind::conflict, "subnet_id", "still has 1 port;");
  ok(store_->delete_port(p2.id));
  ok(store_->delete_subnet(s.id));
  expect_error(store_->get_subnet(s.id), Kind::not_found, "", "not found");
  expect_error(store_->delete_subnet(s.id), Kind::not_found, "", "not found");
  // The pools went with it, and the name and range are free again.
  {
    auto r = db_->reader();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(query_int(r->connection(), "SELECT COUNT(*) FROM allocation_pools"), 0);
  }
  make_subnet("net-a", "10.0.0.0/24");
}

TEST_F(StoreTest, CreatePortErrorsInOrder) {
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1");
  ok(store_->put_host(registration("node-a", 2)));
  auto first = ok(store_->create_port(port_spec(s.id, "node-a", 0, {}, "p0")));
  const auto before = snapshot(*store_);

  expect_error(store_->create_port(port_spec("no-such-subnet", "node-x", 9)), Kind::not_found, "",
               "subnet no-such-subnet not found");
  expect_error(store_->create_port(port_spec(s.id, "node-x", 0)), Kind::invalid, "host",
               "host node-x is not registered");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 2)), Kind::invalid, "npu",
               "host node-a has no NPU 2");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 0)), Kind::conflict, "npu",
               "already has port " + first.id);
  expect_error(store_->create_port(port_spec(s.id, "node-a", 0, "10.0.0.77")), Kind::conflict, "npu",
               "NPU 0");
  EXPECT_EQ(snapshot(*store_), before);
}

TEST_F(StoreTest, CreatePortFillsEveryField) {
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {}, "team-x");
  ok(store_->put_host(registration("node-a", 1)));
  tick(5);
  auto p = ok(store_->create_port(port_spec(s.id, "node-a", 0, {}, "rdma0")));
  EXPECT_EQ(p.id.size(), 36u);
  EXPECT_NE(p.id, s.id);
  EXPECT_EQ(p.name, "rdma0");
  EXPECT_EQ(p.subnet_id, s.id);
  EXPECT_EQ(p.tenant, "team-x");
  EXPECT_EQ(p.host, "node-a");
  EXPECT_EQ(p.npu, 0);
  EXPECT_EQ(p.ip_address, ip("10.0.0.2"));
  EXPECT_FALSE(p.fixed_ip);
  EXPECT_EQ(p.created_at, "2026-11-29T16:47:58Z");
  EXPECT_EQ(network::to_json(ok(store_->get_port(p.id))), network::to_json(p));
  expect_error(store_->get_port("nope"), Kind::not_found, "", "port nope not found");
}

TEST_F(StoreTest, AllocatesLowestFreeAddressAndReusesGaps) {
  ok(store_->put_host(registration("node-a", 8)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.19")});
  std::vector<network::Port> ports;
  ports.reserve(5);
  for (int i = 0; i < 5; ++i) ports.push_back(ok(store_->create_port(port_spec(s.id, "node-a", i))));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ports[i].ip_address, ip("10.0.0.1" + std::to_string(i)));
  ok(store_->delete_port(ports[2].id));
  ok(store_->delete_port(ports[0].id));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 5))).ip_address, ip("10.0.0.10"));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 6))).ip_address, ip("10.0.0.12"));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 7))).ip_address, ip("10.0.0.15"));
}

TEST_F(StoreTest, AllocationMovesThroughPoolsAndReportsExhaustion) {
  ok(store_->put_host(registration("node-a", 8)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1",
                       {range("10.0.0.20", "10.0.0.21"), range("10.0.0.10", "10.0.0.11")});
  // A fixed IP inside the first pool is skipped by allocation.
  auto fixed = ok(store_->create_port(port_spec(s.id, "node-a", 0, "10.0.0.20")));
  EXPECT_TRUE(fixed.fixed_ip);
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 1))).ip_address, ip("10.0.0.21"));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 2))).ip_address, ip("10.0.0.10"));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 3))).ip_address, ip("10.0.0.11"));
  // Ports outside the pools do not count.
  ok(store_->create_port(port_spec(s.id, "node-a", 4, "10.0.0.100")));
  const auto before = snapshot(*store_);
  expect_error(store_->create_port(port_spec(s.id, "node-a", 5)), Kind::conflict, "subnet_id",
               "allocation pools of subnet net-a (10.0.0.0/24) are exhausted: 4 of 4 addresses in use");
  EXPECT_EQ(snapshot(*store_), before);
  ok(store_->delete_port(fixed.id));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 5))).ip_address, ip("10.0.0.20"));
}

TEST_F(StoreTest, AllocatesInIpv6Slash64) {
  ok(store_->put_host(registration("node-a", 8)));
  auto s = make_subnet("net-v6", "2001:db8:1::/64", "2001:db8:1::1");
  auto p0 = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  EXPECT_EQ(p0.ip_address.to_string(), "2001:db8:1::2");
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 1))).ip_address.to_string(), "2001:db8:1::3");
  auto high = ok(store_->create_port(port_spec(s.id, "node-a", 2, "2001:db8:1::ffff:ffff:ffff:fffe")));
  EXPECT_TRUE(high.fixed_ip);
  ok(store_->delete_port(p0.id));
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 3))).ip_address.to_string(), "2001:db8:1::2");
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 4))).ip_address.to_string(), "2001:db8:1::4");

  // A pool ending at the last address of a subnet (the top of the unique local space; the top of the
  // whole address space is multicast, which no subnet may use).
  auto top = make_subnet(
      "net-top", "fdff:ffff:ffff:ffff::/64", {},
      {range("fdff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")});
  EXPECT_EQ(ok(store_->create_port(port_spec(top.id, "node-a", 0))).ip_address.to_string(),
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:fffe");
  EXPECT_EQ(ok(store_->create_port(port_spec(top.id, "node-a", 1))).ip_address.to_string(),
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  expect_error(store_->create_port(port_spec(top.id, "node-a", 2)), Kind::conflict, "subnet_id",
               "exhausted: 2 of 2 addresses in use");

  // The exhaustion count of a huge pool saturates rather than overflowing.
  auto big = make_subnet("net-big", "2001:db8:2::/64");
  EXPECT_EQ(big.allocation_pools[0].size(), 18446744073709551615u);
  EXPECT_EQ(ok(store_->create_port(port_spec(big.id, "node-a", 0))).ip_address.to_string(), "2001:db8:2::1");
}

TEST_F(StoreTest, FixedIpRules) {
  ok(store_->put_host(registration("node-a", 8)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.19")});
  auto held = ok(store_->create_port(port_spec(s.id, "node-a", 0, "10.0.0.15", "holder")));
  EXPECT_TRUE(held.fixed_ip);
  EXPECT_EQ(held.ip_address, ip("10.0.0.15"));
  const auto before = snapshot(*store_);

  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.1.5")), Kind::invalid, "ip_address",
               "10.0.1.5 is outside 10.0.0.0/24 (subnet net-a)");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "2001:db8::5")), Kind::invalid, "ip_address",
               "is outside");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.1")), Kind::invalid, "ip_address",
               "is the gateway");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.0")), Kind::invalid, "ip_address",
               "network address");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.255")), Kind::invalid, "ip_address",
               "broadcast address");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.15")), Kind::conflict, "ip_address",
               "already in use by port " + held.id + " (holder)");
  EXPECT_EQ(snapshot(*store_), before);

  // Outside the pools but inside the CIDR is allowed (Neutron semantics).
  auto outside = ok(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.200")));
  EXPECT_EQ(outside.ip_address, ip("10.0.0.200"));
  EXPECT_TRUE(outside.fixed_ip);
  expect_error(store_->create_port(port_spec(s.id, "node-a", 2, "10.0.0.200")), Kind::conflict, "ip_address",
               "in use by port " + outside.id + " in subnet net-a");

  // /31 and /32 have no network/broadcast address.
  auto p2p = make_subnet("net-p2p", "10.9.0.0/31");
  EXPECT_EQ(ok(store_->create_port(port_spec(p2p.id, "node-a", 0, "10.9.0.0"))).ip_address, ip("10.9.0.0"));
  EXPECT_EQ(ok(store_->create_port(port_spec(p2p.id, "node-a", 1, "10.9.0.1"))).ip_address, ip("10.9.0.1"));
  auto one = make_subnet("net-one", "10.9.1.7/32");
  EXPECT_EQ(ok(store_->create_port(port_spec(one.id, "node-a", 0, "10.9.1.7"))).ip_address, ip("10.9.1.7"));

  // Same address in two subnets of different tenants is fine.
  auto other = make_subnet("net-a", "10.0.0.0/24", {}, {}, "other");
  EXPECT_EQ(ok(store_->create_port(port_spec(other.id, "node-a", 0, "10.0.0.15"))).tenant, "other");
}

TEST_F(StoreTest, SubnetAddressRules) {
  ok(store_->put_host(registration("node-a", 4)));
  const auto before = snapshot(*store_);
  // The store refuses what the request layer refuses, for any caller.
  expect_error(store_->create_subnet(subnet_spec("m", "224.0.0.0/24")), Kind::invalid, "cidr", "multicast");
  expect_error(store_->create_subnet(subnet_spec("m", "::ffff:0:0/96")), Kind::invalid, "cidr",
               "IPv4-mapped");
  expect_error(store_->create_subnet(subnet_spec("m", "::ffff:10.10.0.0/120")), Kind::invalid, "cidr",
               "IPv4-mapped");
  expect_error(store_->create_subnet(subnet_spec("m", "127.0.0.0/8")), Kind::invalid, "cidr", "loopback");
  expect_error(store_->create_subnet(subnet_spec("m", "fe80::/64")), Kind::invalid, "cidr", "link-local");
  expect_error(store_->create_subnet(subnet_spec("m", "2001:db8:1::/64", "2001:db8:1::")), Kind::invalid,
               "gateway_ip", "Subnet-Router anycast");
  expect_error(store_->create_subnet(subnet_spec("m", "198.18.0.0/24", "198.18.0.255")), Kind::invalid,
               "gateway_ip", "broadcast address");
  EXPECT_EQ(snapshot(*store_), before);

  // A fixed IP equal to the IPv6 Subnet-Router anycast address is refused, as the gateway check and the
  // allocator refuse it; the next address is fine.
  auto v6 = make_subnet("net-v6", "2001:db8:1::/64");
  expect_error(store_->create_port(port_spec(v6.id, "node-a", 0, "2001:db8:1::")), Kind::invalid,
               "ip_address", "Subnet-Router anycast");
  EXPECT_EQ(ok(store_->create_port(port_spec(v6.id, "node-a", 0, "2001:db8:1::1"))).ip_address,
            ip("2001:db8:1::1"));
  // IPv6 has no broadcast: the last address is a host address.
  EXPECT_TRUE(store_->create_port(port_spec(v6.id, "node-a", 1, "2001:db8:1::ffff:ffff:ffff:ffff")));
  // RFC 6164: a /127 uses both addresses, the first included.
  auto p2p = make_subnet("net-p2p6", "2001:db8:9::/127");
  EXPECT_TRUE(store_->create_port(port_spec(p2p.id, "node-a", 0, "2001:db8:9::")));
}

TEST_F(StoreTest, AllocationRefusesASubnetStoredInARefusedRange) {
  ok(store_->put_host(registration("node-a", 2)));
  auto s = make_subnet("legacy", "198.18.0.0/24");
  {
    // A subnet as an older version stored it, before the address rules: 224.0.0.0/24 (multicast).
    auto w = db_->writer();
    ASSERT_TRUE(w.has_value());
    const auto net = ip("224.0.0.0"), last = ip("224.0.0.255");
    ASSERT_TRUE(w->connection().execute("UPDATE subnets SET cidr = '224.0.0.0/24', network_key = '" +
                                        net.sort_key() + "', last_key = '" + last.sort_key() +
                                        "' WHERE id = '" + s.id + "'"));
    ASSERT_TRUE(w->connection().execute("UPDATE allocation_pools SET first_key = '" +
                                        ip("224.0.0.1").sort_key() + "', last_key = '" +
                                        ip("224.0.0.254").sort_key() + "' WHERE subnet_id = '" + s.id + "'"));
  }
  const auto before = snapshot(*store_);
  expect_error(store_->create_port(port_spec(s.id, "node-a", 0)), Kind::conflict, "subnet_id",
               "cannot hold ports: 224.0.0.1 is inside 224.0.0.0/4");
  expect_error(store_->create_port(port_spec(s.id, "node-a", 0, "224.0.0.9")), Kind::invalid, "ip_address",
               "multicast");
  EXPECT_EQ(snapshot(*store_), before);
}

TEST_F(StoreTest, PortPlacementsReadPortsWithTheirSubnets) {
  ok(store_->put_host(registration("node-a", 2)));
  auto a = make_subnet("a", "198.18.0.0/24");
  auto b = make_subnet("b", "2001:db8::/64");
  auto pa = ok(store_->create_port(port_spec(a.id, "node-a", 0)));
  auto pb = ok(store_->create_port(port_spec(b.id, "node-a", 1)));
  const auto got = ok(store_->port_placements({pb.id, "nope", pa.id}));
  ASSERT_EQ(got.size(), 3u);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(network::to_json(got[0]->port), network::to_json(pb));
  EXPECT_EQ(got[0]->subnet.id, b.id);
  EXPECT_EQ(got[0]->subnet.port_count, 1);
  EXPECT_FALSE(got[1].has_value());
  ASSERT_TRUE(got[2].has_value());
  EXPECT_EQ(got[2]->subnet.name, "a");
  EXPECT_EQ(got[2]->subnet.allocation_pools, a.allocation_pools);
  EXPECT_TRUE(ok(store_->port_placements({})).empty());
}

TEST_F(StoreTest, ListPortsFiltersAndOrder) {
  ok(store_->put_host(registration("node-b", 2)));
  ok(store_->put_host(registration("node-a", 2)));
  auto s2 = make_subnet("zeta", "10.2.0.0/24", {}, {}, "t2");
  auto s1 = make_subnet("alpha", "10.1.0.0/24", {}, {}, "t1");
  auto b1 = ok(store_->create_port(port_spec(s1.id, "node-b", 1)));
  auto a0z = ok(store_->create_port(port_spec(s2.id, "node-a", 0)));
  auto a0a = ok(store_->create_port(port_spec(s1.id, "node-a", 0)));
  auto a1 = ok(store_->create_port(port_spec(s1.id, "node-a", 1)));

  auto ids = [](const std::vector<network::Port>& ps) {
    std::vector<std::string> v;
    v.reserve(ps.size());
    for (const auto& p : ps) v.push_back(p.id);
    return v;
  };
  EXPECT_EQ(ids(ok(store_->list_ports({}))), (std::vector<std::string>{a0a.id, a0z.id, a1.id, b1.id}));
  PortFilter f;
  f.host = "node-a";
  EXPECT_EQ(ids(ok(store_->list_ports(f))), (std::vector<std::string>{a0a.id, a0z.id, a1.id}));
  f.subnet_id = s1.id;
  EXPECT_EQ(ids(ok(store_->list_ports(f))), (std::vector<std::string>{a0a.id, a1.id}));
  PortFilter t;
  t.tenant = "t2";
  EXPECT_EQ(ids(ok(store_->list_ports(t))), (std::vector<std::string>{a0z.id}));
  t.host = "node-b";
  EXPECT_TRUE(ok(store_->list_ports(t)).empty());
  PortFilter none;
  none.host = "nobody";
  EXPECT_TRUE(ok(store_->list_ports(none)).empty());
}

TEST_F(StoreTest, DeletePort) {
  ok(store_->put_host(registration("node-a", 1)));
  auto s = make_subnet("net-a", "10.0.0.0/24");
  auto p = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  ok(store_->delete_port(p.id));
  expect_error(store_->get_port(p.id), Kind::not_found, "", "not found");
  expect_error(store_->delete_port(p.id), Kind::not_found, "", "port " + p.id + " not found");
  EXPECT_EQ(ok(store_->get_subnet(s.id)).port_count, 0);
  // The (host, npu, subnet) slot is free again.
  ok(store_->create_port(port_spec(s.id, "node-a", 0)));
}

TEST_F(StoreTest, GenerationBumps) {
  ok(store_->put_host(registration("node-a", 2)));
  ok(store_->put_host(registration("node-b", 2)));
  auto gen = [&](const std::string& h) { return ok(store_->get_host(h)).generation; };
  auto s = make_subnet("net-a", "10.0.0.0/24");
  EXPECT_EQ(gen("node-a"), 1);
  auto p = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  EXPECT_EQ(gen("node-a"), 2);
  EXPECT_EQ(gen("node-b"), 1);
  tick();
  const auto updated_at = ok(store_->get_host("node-a")).updated_at;
  EXPECT_EQ(updated_at, "2026-11-29T16:47:53Z");  // port changes bump only the generation
  ok(store_->create_port(port_spec(s.id, "node-a", 1)));
  EXPECT_EQ(gen("node-a"), 3);
  ok(store_->delete_port(p.id));
  EXPECT_EQ(gen("node-a"), 4);
  EXPECT_EQ(ok(store_->put_host(registration("node-a", 2))).host.generation, 4);  // unchanged
  EXPECT_EQ(ok(store_->put_host(registration("node-a", 3))).host.generation, 5);
  // Renaming a subnet changes the desired state of its hosts; pools do not.
  SubnetUpdate rename;
  rename.name = "net-a2";
  ok(store_->update_subnet(s.id, rename));
  EXPECT_EQ(gen("node-a"), 6);
  EXPECT_EQ(gen("node-b"), 1);
  SubnetUpdate pools;
  pools.allocation_pools = std::vector<IpRange>{range("10.0.0.50", "10.0.0.60")};
  ok(store_->update_subnet(s.id, pools));
  EXPECT_EQ(gen("node-a"), 6);
  // Rejected requests bump nothing.
  (void)store_->create_port(port_spec(s.id, "node-a", 1));
  (void)store_->create_port(port_spec(s.id, "node-a", 2, "10.0.0.0"));
  EXPECT_EQ(gen("node-a"), 6);
}

TEST_F(StoreTest, HostView) {
  expect_error(store_->host_view("node-a"), Kind::not_found, "", "host node-a not found");
  ok(store_->put_host(registration("node-a", 2)));
  ok(store_->put_host(registration("node-b", 2)));
  auto empty = ok(store_->host_view("node-a"));
  EXPECT_EQ(empty.host.name, "node-a");
  EXPECT_TRUE(empty.ports.empty());
  EXPECT_TRUE(empty.subnets.empty());

  auto s1 = make_subnet("s1", "10.1.0.0/24", "10.1.0.1");
  auto s2 = make_subnet("s2", "10.2.0.0/24", "10.2.0.1");
  auto s3 = make_subnet("s3", "10.3.0.0/24", "10.3.0.1");
  auto p1 = ok(store_->create_port(port_spec(s2.id, "node-a", 0)));
  auto p2 = ok(store_->create_port(port_spec(s1.id, "node-a", 1)));
  auto p3 = ok(store_->create_port(port_spec(s1.id, "node-a", 0)));
  ok(store_->create_port(port_spec(s3.id, "node-b", 0)));

  auto view = ok(store_->host_view("node-a"));
  EXPECT_EQ(view.host.generation, 4);
  EXPECT_EQ(view.host.npus.size(), 2u);
  ASSERT_EQ(view.ports.size(), 3u);
  EXPECT_EQ(view.ports[0].id, p3.id);  // npu 0 / s1
  EXPECT_EQ(view.ports[1].id, p1.id);  // npu 0 / s2
  EXPECT_EQ(view.ports[2].id, p2.id);  // npu 1 / s1
  ASSERT_EQ(view.subnets.size(), 2u);
  EXPECT_EQ(view.subnets[0].id, s1.id);
  EXPECT_EQ(view.subnets[0].port_count, 2);
  EXPECT_EQ(view.subnets[0].allocation_pools, s1.allocation_pools);
  EXPECT_EQ(view.subnets[1].id, s2.id);
}

TEST_F(StoreTest, HostViewIsOneSnapshotWhileWritersCommit) {
  ok(store_->put_host(registration("node-a", 8)));
  std::vector<std::string> subnets;
  subnets.reserve(5);
  for (int i = 0; i < 5; ++i)
    subnets.push_back(make_subnet("s" + std::to_string(i), "10." + std::to_string(i) + ".0.0/24").id);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int npu = 0; npu < 8; ++npu) {
      for (const auto& id : subnets) ok(store_->create_port(port_spec(id, "node-a", npu)));
    }
    done = true;
  });
  int views = 0;
  while (!done || views < 3) {
    auto view = ok(store_->host_view("node-a"));
    // Each create_port bumps the generation by one in the same transaction as its insert.
    ASSERT_EQ(view.host.generation, 1 + static_cast<std::int64_t>(view.ports.size()));
    std::set<std::string> ids;
    for (const auto& s : view.subnets) ids.insert(s.id);
    for (const auto& p : view.ports) ASSERT_TRUE(ids.count(p.subnet_id));
    ++views;
  }
  writer.join();
  EXPECT_EQ(ok(store_->host_view("node-a")).ports.size(), 40u);
}

TEST_F(StoreTest, ConcurrentCreatePortAllocatesEachAddressOnce) {
  constexpr int kHosts = 8;
  constexpr int kNpus = 8;
  for (int h = 0; h < kHosts; ++h) ok(store_->put_host(registration("node-" + std::to_string(h), kNpus)));
  auto s =
      make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.69")});  // 60 addresses

  const auto outcomes = run_together<network::Port>(kHosts * kNpus, [&](int i) {
    return store_->create_port(port_spec(s.id, "node-" + std::to_string(i / kNpus), i % kNpus));
  });
  std::vector<IpAddress> addresses;
  for (const auto& p : outcomes.values) addresses.push_back(p.ip_address);
  const auto& errors = outcomes.errors;

  EXPECT_EQ(addresses.size(), 60u);
  EXPECT_EQ(std::set<IpAddress>(addresses.begin(), addresses.end()).size(), 60u);
  for (const auto& a : addresses) EXPECT_TRUE(s.allocation_pools[0].contains(a)) << a.to_string();
  ASSERT_EQ(errors.size(), 4u);
  for (const auto& e : errors) {
    EXPECT_EQ(e.kind, Kind::conflict) << e.detail;
    EXPECT_EQ(e.field(), "subnet_id");
    EXPECT_NE(e.detail.find("60 of 60 addresses in use"), std::string::npos) << e.detail;
  }
  PortFilter f;
  f.subnet_id = s.id;
  EXPECT_EQ(ok(store_->list_ports(f)).size(), 60u);
  std::int64_t generations = 0;
  for (const auto& h : ok(store_->list_hosts())) generations += h.generation;
  EXPECT_EQ(generations, kHosts + 60);
}

TEST_F(StoreTest, PersistsAcrossCloseAndReopen) {
  ok(store_->put_host(registration("node-a", 2)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.20")}, "t1");
  auto v6 = make_subnet("net-v6", "2001:db8::/64", "2001:db8::1");
  ok(store_->create_port(port_spec(s.id, "node-a", 0, {}, "p0")));
  ok(store_->create_port(port_spec(v6.id, "node-a", 1, "2001:db8::abcd")));
  const auto before = snapshot(*store_);
  reopen();
  EXPECT_EQ(db_->schema_version(), kLatest);
  EXPECT_EQ(snapshot(*store_), before);
  // Allocation continues where it was.
  EXPECT_EQ(ok(store_->create_port(port_spec(s.id, "node-a", 1))).ip_address, ip("10.0.0.11"));
}

TEST_F(StoreTest, RejectedRequestsLeaveStateUnchanged) {
  ok(store_->put_host(registration("node-a", 2)));
  auto s = make_subnet("net-a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.10")});
  auto other = make_subnet("net-b", "10.0.1.0/24");
  auto p = ok(store_->create_port(port_spec(s.id, "node-a", 0)));
  const auto before = snapshot(*store_);
  tick(100);

  auto dup = registration("node-a", 2);
  dup.npus[1].index = 0;
  EXPECT_FALSE(store_->put_host(dup));
  EXPECT_FALSE(store_->create_subnet(subnet_spec("net-a", "10.5.0.0/24")));
  EXPECT_FALSE(store_->create_subnet(subnet_spec("net-c", "10.0.0.128/25")));
  EXPECT_FALSE(store_->create_subnet(subnet_spec("net-c", "10.5.0.0/24", "10.6.0.1")));
  SubnetUpdate u;
  u.name = "net-b";
  EXPECT_FALSE(store_->update_subnet(s.id, u));
  EXPECT_FALSE(store_->update_subnet("nope", u));
  EXPECT_FALSE(store_->delete_subnet(s.id));
  EXPECT_FALSE(store_->delete_subnet("nope"));
  EXPECT_FALSE(store_->create_port(port_spec(s.id, "node-a", 1)));               // exhausted
  EXPECT_FALSE(store_->create_port(port_spec(s.id, "node-a", 0)));               // npu conflict
  EXPECT_FALSE(store_->create_port(port_spec(s.id, "node-a", 1, "10.0.0.10")));  // taken
  EXPECT_FALSE(store_->create_port(port_spec(other.id, "node-a", 5)));
  EXPECT_FALSE(store_->create_port(port_spec(other.id, "ghost", 0)));
  EXPECT_FALSE(store_->delete_port("nope"));
  EXPECT_EQ(snapshot(*store_), before);
  EXPECT_EQ(ok(store_->get_port(p.id)).ip_address, ip("10.0.0.10"));
}

TEST_F(StoreTest, DiskFullIsUnavailableAndRollsBack) {
  ok(store_->put_host(registration("node-a", 4)));
  {
    auto w = db_->writer();
    ASSERT_TRUE(w.has_value());
    const auto pages = query_int(w->connection(), "PRAGMA page_count");
    ASSERT_TRUE(w->connection().execute("PRAGMA max_page_count = " + std::to_string(pages)));
  }
  const std::string long_name(60, 'n');
  std::optional<StoreError> failure;
  std::string before;
  for (int i = 0; i < 2000 && !failure; ++i) {
    before = snapshot(*store_);
    auto r = store_->create_subnet(
        subnet_spec(long_name + std::to_string(i),
                    "10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".0/24"));
    if (!r) failure = r.error();
  }
  ASSERT_TRUE(failure.has_value()) << "the database never filled up";
  EXPECT_EQ(failure->kind, Kind::unavailable) << failure->detail;
  EXPECT_NE(failure->detail.find("full"), std::string::npos) << failure->detail;
  EXPECT_EQ(snapshot(*store_), before);

  // The store recovers once there is room again.
  {
    auto w = db_->writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->connection().execute("PRAGMA max_page_count = 1000000"));
  }
  make_subnet("after-full", "192.168.0.0/24");
  EXPECT_TRUE(db_->check().has_value());
}

TEST_F(StoreTest, ClosedDatabaseIsUnavailable) {
  ok(store_->put_host(registration("node-a", 1)));
  ASSERT_TRUE(db_->close().has_value());
  expect_error(store_->get_host("node-a"), Kind::unavailable, "", "database is closed");
  expect_error(store_->put_host(registration("node-a", 2)), Kind::unavailable, "", "database is closed");
}

}  // namespace
}  // namespace hsns::store
