// Tests of the stores' one transaction helper (store/sql_helpers.h: sql::read, sql::write) on real
// temporary SQLite files: commit on a value, rollback on any error, busy and full databases, snapshots.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "store/database.h"
#include "store/sql_helpers.h"
#include "store_test_support.h"

namespace hsns::store {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared helpers

class TransactionHelperTest : public ::testing::Test {
 protected:
  TransactionHelperTest() {
    db_ = std::make_unique<Database>(options());
    auto w = db_->writer();
    if (!w || !w->connection().execute("CREATE TABLE t (x INTEGER PRIMARY KEY, note TEXT)")) {
      throw std::runtime_error("cannot create the test table");
    }
  }
  DatabaseOptions options() const {
    DatabaseOptions o;
    o.path = (dir_.path() / "hsns.db").string();
    o.read_connections = 2;
    o.busy_timeout = std::chrono::milliseconds(200);
    return o;
  }
  std::int64_t rows() {
    auto r = db_->reader();
    if (!r) throw std::runtime_error(r.error().message);
    return query_int(r->connection(), "SELECT COUNT(*) FROM t");
  }
  static StoreResult<void> insert(Connection& c, std::int64_t x) {
    HSNS_STORE_ASSIGN(st, sql::prepare(c, "INSERT INTO t (x, note) VALUES (?1, hex(randomblob(2000)))"));
    st->bind_int64(1, x);
    return sql::run(*st);
  }

  TempDir dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(TransactionHelperTest, WriteCommitsWhatReturnsAValue) {
  auto r = sql::write(*db_, [](Connection& c) -> StoreResult<int> {
    EXPECT_TRUE(c.in_transaction());
    HSNS_STORE_TRY(insert(c, 1));
    HSNS_STORE_TRY(insert(c, 2));
    return 42;
  });
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(rows(), 2);
  auto w = db_->writer();
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE(w->connection().in_transaction());
}

TEST_F(TransactionHelperTest, WriteRollsBackEverythingOnAnyError) {
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 1); }).has_value());
  // An error the operation decides on after it wrote: nothing of it stays.
  auto refused = sql::write(*db_, [](Connection& c) -> StoreResult<void> {
    HSNS_STORE_TRY(insert(c, 2));
    HSNS_STORE_TRY(insert(c, 3));
    return tl::unexpected(StoreError::conflict("x", "refused after two inserts"));
  });
  expect_error(refused, Kind::conflict, "x", "refused after two inserts");
  EXPECT_EQ(rows(), 1);
  // An error SQLite reports (the primary key) after an insert that succeeded: a conflict, rolled back.
  auto clash = sql::write(*db_, [](Connection& c) -> StoreResult<void> {
    HSNS_STORE_TRY(insert(c, 4));
    return insert(c, 1);
  });
  expect_error(clash, Kind::conflict, "", "constraint");
  EXPECT_EQ(rows(), 1);
  // The writer connection is left usable, outside any transaction.
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 5); }).has_value());
  EXPECT_EQ(rows(), 2);
}

TEST_F(TransactionHelperTest, BusyWriteLockIsUnavailableAndRunsNothing) {
  // Another process holds the write lock (a second connection to the file, as another aggregator
  // would): BEGIN IMMEDIATE waits for the busy timeout, then the operation is unavailable.
  Connection other(options().path, false, std::chrono::milliseconds(0));
  ASSERT_TRUE(other.execute("BEGIN IMMEDIATE; INSERT INTO t (x) VALUES (100);"));
  bool ran = false;
  const auto started = std::chrono::steady_clock::now();
  auto busy = sql::write(*db_, [&](Connection& c) {
    ran = true;
    return insert(c, 1);
  });
  const auto waited = std::chrono::steady_clock::now() - started;
  expect_error(busy, Kind::unavailable, "", "locked");
  EXPECT_FALSE(ran);
  EXPECT_GE(waited, std::chrono::milliseconds(150));  // the busy timeout, not an immediate failure

  // Once the other writer is done, writes go through again on the same Database.
  ASSERT_TRUE(other.execute("COMMIT"));
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 1); }).has_value());
  EXPECT_EQ(rows(), 2);
}

TEST_F(TransactionHelperTest, FullDatabaseIsUnavailableAndStoresNothing) {
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 1); }).has_value());
  {
    auto w = db_->writer();
    ASSERT_TRUE(w.has_value());
    const auto pages = query_int(w->connection(), "PRAGMA page_count");
    ASSERT_TRUE(w->connection().execute("PRAGMA max_page_count = " + std::to_string(pages + 2)));
  }
  // Many rows in one transaction: SQLITE_FULL part-way; none of them is stored.
  auto full = sql::write(*db_, [](Connection& c) -> StoreResult<void> {
    for (std::int64_t x = 10; x < 200; ++x) HSNS_STORE_TRY(insert(c, x));
    return {};
  });
  expect_error(full, Kind::unavailable, "", "full");
  EXPECT_EQ(rows(), 1);
  {
    auto w = db_->writer();
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->connection().execute("PRAGMA max_page_count = 1000000"));
  }
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 2); }).has_value());
  EXPECT_EQ(rows(), 2);
}

TEST_F(TransactionHelperTest, ReadSeesOneSnapshotWhileWritersCommit) {
  ASSERT_TRUE(sql::write(*db_, [](Connection& c) { return insert(c, 1); }).has_value());
  auto r = sql::read(*db_, [&](Connection& c) -> StoreResult<std::int64_t> {
    EXPECT_TRUE(c.in_transaction());
    const auto before = query_int(c, "SELECT COUNT(*) FROM t");
    // A writer commits in the middle of the read.
    auto committed = sql::write(*db_, [](Connection& w) { return insert(w, 2); });
    if (!committed) return tl::unexpected(committed.error());
    return query_int(c, "SELECT COUNT(*) FROM t") - before;
  });
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(*r, 0);  // the read saw none of the concurrent commit
  EXPECT_EQ(rows(), 2);
}

TEST_F(TransactionHelperTest, ReadErrorIsReturnedAndTheConnectionReused) {
  for (int i = 0; i < 5; ++i) {  // more times than there are pooled readers
    auto r = sql::read(*db_, [](Connection&) -> StoreResult<void> {
      return tl::unexpected(StoreError::not_found("nothing here"));
    });
    expect_error(r, Kind::not_found, "", "nothing here");
  }
  auto refused = sql::read(*db_, [](Connection& c) { return insert(c, 1); });  // a read-only connection
  expect_error(refused, Kind::unavailable, "", "readonly");
  EXPECT_EQ(rows(), 0);
}

TEST_F(TransactionHelperTest, ClosedDatabaseIsUnavailable) {
  ASSERT_TRUE(db_->close().has_value());
  expect_error(sql::write(*db_, [](Connection& c) { return insert(c, 1); }), Kind::unavailable, "",
               "database is closed");
  expect_error(sql::read(*db_, [](Connection&) -> StoreResult<void> { return {}; }), Kind::unavailable, "",
               "database is closed");
}

}  // namespace
}  // namespace hsns::store
