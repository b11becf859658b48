// Tests of the store backend factory (store/factory.h): the `database` setting, and stores opened on a
// real temporary SQLite file.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/factory.h"
#include "store_test_support.h"

namespace hsns::store {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared helpers

TEST(StoreFactory, APathIsAnSqliteDatabase) {
  auto s = ok(parse_database_setting("/var/lib/hsns/aggregator.db"));
  EXPECT_EQ(s.backend, Backend::sqlite);
  EXPECT_EQ(s.location, "/var/lib/hsns/aggregator.db");
  EXPECT_EQ(ok(parse_database_setting("relative.db")).location, "relative.db");
}

TEST(StoreFactory, PostgresqlIsRefusedAsPlannedNotBuilt) {
  for (const std::string url : {"postgresql://hsns@db.example/hsns", "postgres://localhost/hsns"}) {
    expect_error(parse_database_setting(url), Kind::invalid, "database", "planned but not built");
    expect_error(open_stores({url, 2}), Kind::invalid, "database", "PostgreSQL backend is planned");
    expect_error(check_database(url), Kind::invalid, "database", "planned");
  }
  expect_error(parse_database_setting("clickhouse://localhost/hsns"), Kind::invalid, "database",
               "unknown backend");
  expect_error(parse_database_setting(""), Kind::invalid, "database", "empty");
  expect_error(parse_database_setting(":memory:"), Kind::invalid, "database", "not a file path");
  expect_error(parse_database_setting("file:x.db?mode=memory"), Kind::invalid, "database", "not a file path");
}

TEST(StoreFactory, CheckDatabaseWantsAnExistingDirectory) {
  TempDir dir;
  ok(check_database((dir.path() / "hsns.db").string()));
  expect_error(check_database((dir.path() / "missing" / "hsns.db").string()), Kind::invalid, "database",
               "does not exist");
}

TEST(StoreFactory, OpensEveryStoreOnOneSqliteFile) {
  TempDir dir;
  const std::string path = (dir.path() / "hsns.db").string();
  {
    auto stores = ok(open_stores({path, 2}));
    ok(stores->check());
    EXPECT_NE(stores->describe().find("SQLite " + path + ", schema v"), std::string::npos)
        << stores->describe();
    // The stores share the file: the agent store sees the host the network store registered.
    ok(stores->network().put_host(registration("node-a", 1)));
    ok(stores->agents().put_status("node-a", 1, "{}"));
    ok(stores->topology().write_topology(0, std::string("version: 1\n"), "import", {}));
    EXPECT_EQ(ok(stores->jobs().jobs_revision()), 0);
    ok(stores->close());
    expect_error(stores->check(), Kind::unavailable, "", "closed");
    ok(stores->close());  // idempotent
  }
  auto reopened = ok(open_stores({path, 2}));
  EXPECT_EQ(ok(reopened->network().get_host("node-a")).npus.size(), 1u);
  EXPECT_EQ(ok(reopened->topology().topology_revision()), 1);
}

TEST(StoreFactory, AnUnopenableFileIsUnavailable) {
  TempDir dir;
  expect_error(open_stores({(dir.path() / "missing" / "hsns.db").string(), 2}), Kind::unavailable, "",
               "cannot open database");
}

}  // namespace
}  // namespace hsns::store
