// SqliteTelemetryStore (store/telemetry_store.h) on real SQLite files: a batch stored whole in every
// table, (host, seq) stored once, nothing stored for an unregistered host, pruning by age and by size.
#include <gtest/gtest.h>

#include <chrono>

#include "store/sqlite_network_store.h"
#include "store/sqlite_telemetry_store.h"
#include "store_test_support.h"
#include "support/report_sample.h"

namespace hsns::store {
namespace {

using namespace std::chrono_literals;
using test_support::query_int;
using test_support::registration;

class TelemetryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.emplace(DatabaseOptions{(dir_ / "aggregator.db").string()});
    SqliteNetworkStore network(*db_);
    ASSERT_TRUE(network.put_host(registration("node-1", 2)));
    store_.emplace(*db_);
  }

  std::int64_t count(const std::string& table) {
    auto lease = db_->writer();
    return query_int(lease->connection(), "SELECT COUNT(*) FROM " + table);
  }

  hsns::testing::TempDir dir_;
  std::optional<Database> db_;
  std::optional<SqliteTelemetryStore> store_;
};

TEST_F(TelemetryStoreTest, StoresEverySectionOfABatchInItsTable) {
  const auto report = hsns::testing::sample_report(1, 5, 2);
  auto r = store_->ingest("node-1", report, 1000);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->acked_seq, 1U);
  EXPECT_FALSE(r->duplicate);
  EXPECT_EQ(count("telemetry_batches"), 1);
  EXPECT_EQ(count("telemetry_flow_batches"), 1);
  EXPECT_EQ(count("telemetry_flows"), 5);
  // Per port: rdma 2 + hw 1, statistics 1 + ethtool 1 + 4 pause measures.
  EXPECT_EQ(count("telemetry_port_counters"), 2 * 9);
  EXPECT_EQ(count("telemetry_modules"), 1);
  EXPECT_EQ(count("telemetry_lldp_neighbors"), 1);
  EXPECT_EQ(count("telemetry_qps"), 1);
  EXPECT_EQ(count("telemetry_ports"), 2);
  EXPECT_EQ(r->rows, static_cast<std::size_t>(1 + 1 + 5 + 18 + 1 + 1 + 1 + 2));

  auto lease = db_->writer();
  auto& c = lease->connection();
  // Values as sent: the unsigned counters keep their bits, the rate its fraction, the lane in the document.
  EXPECT_EQ(query_int(c,
                      "SELECT value FROM telemetry_port_counters WHERE port = 'mlx5_0/1' AND "
                      "counter = 'port_xmit_data'"),
            1'000'000);
  EXPECT_EQ(
      query_int(c, "SELECT COUNT(*) FROM telemetry_port_counters WHERE rate = 100.0 AND source = 'rdma'"), 1);
  EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM telemetry_port_counters WHERE counter = 'prio3.rx_frames'"),
            2);
  EXPECT_EQ(query_int(c, "SELECT json_extract(op, '$[4]') FROM telemetry_flows WHERE dest_qp = 258"), 102);
  EXPECT_EQ(query_int(c, "SELECT epoch FROM telemetry_flow_batches"), 1);
  EXPECT_EQ(query_int(c, "SELECT json_extract(document, '$.lanes[0].lane') FROM telemetry_modules"), 1);
  EXPECT_EQ(query_int(c, "SELECT speed_mbps FROM telemetry_ports WHERE name = 'ens0f0np0'"), 400'000);
  EXPECT_EQ(query_int(c, "SELECT COUNT(*) FROM telemetry_ports WHERE speed_mbps IS NULL"), 1);
  EXPECT_EQ(query_int(c, "SELECT sport FROM telemetry_qps"), 0xC123);
}

TEST_F(TelemetryStoreTest, ARepeatedSeqIsAcknowledgedAndStoredOnce) {
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(7), 100));
  auto again = store_->ingest("node-1", hsns::testing::sample_report(7, 9, 1), 100);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->acked_seq, 7U);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->rows, 0U);
  EXPECT_EQ(count("telemetry_batches"), 1);
  EXPECT_EQ(count("telemetry_flows"), 4);
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(8), 100));
  EXPECT_EQ(count("telemetry_batches"), 2);
}

TEST_F(TelemetryStoreTest, AnUnregisteredHostStoresNothing) {
  auto r = store_->ingest("node-9", hsns::testing::sample_report(1), 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, StoreError::Kind::not_found);
  EXPECT_EQ(count("telemetry_batches"), 0);
  EXPECT_EQ(count("telemetry_port_counters"), 0);
}

TEST_F(TelemetryStoreTest, PrunesBatchesOlderThanTheAgeWithAllTheirRows) {
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(1), 100));
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(2), 100));
  // Nothing is an hour old yet.
  auto none = store_->prune({1h, 0}, std::chrono::system_clock::now());
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(none->total_rows(), 0U);
  EXPECT_EQ(count("telemetry_batches"), 2);
  // Two hours later both are.
  auto pruned = store_->prune({1h, 0}, std::chrono::system_clock::now() + 2h);
  ASSERT_TRUE(pruned) << pruned.error().message();
  EXPECT_EQ(pruned->batches_by_age, 2U);
  EXPECT_EQ(pruned->rows[static_cast<std::size_t>(TelemetryTable::flows)], 8U);
  EXPECT_EQ(pruned->rows[static_cast<std::size_t>(TelemetryTable::port_counters)], 36U);
  for (const char* table :
       {"telemetry_batches", "telemetry_flow_batches", "telemetry_flows", "telemetry_port_counters",
        "telemetry_modules", "telemetry_lldp_neighbors", "telemetry_qps", "telemetry_ports"})
    EXPECT_EQ(count(table), 0) << table;
  // A pruned seq is forgotten: sent again, it is a new batch.
  auto again = store_->ingest("node-1", hsns::testing::sample_report(1), 100);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->duplicate);
}

TEST_F(TelemetryStoreTest, OverTheSizeBudgetTheOldestBatchesGoFirst) {
  for (std::uint64_t seq = 1; seq <= 5; ++seq)
    ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(seq), 100));
  auto usage = store_->usage();
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->batches, 5U);
  EXPECT_EQ(usage->bytes, 500U);
  auto within = store_->prune({0ms, 500}, std::chrono::system_clock::now());
  ASSERT_TRUE(within);
  EXPECT_EQ(within->total_rows(), 0U);
  auto pruned = store_->prune({0ms, 250}, std::chrono::system_clock::now());
  ASSERT_TRUE(pruned) << pruned.error().message();
  EXPECT_EQ(pruned->batches_by_size, 3U);
  EXPECT_EQ(pruned->batches_by_age, 0U);
  auto lease = db_->writer();
  EXPECT_EQ(query_int(lease->connection(), "SELECT MIN(seq) FROM telemetry_batches"), 4);
  EXPECT_EQ(query_int(lease->connection(), "SELECT COUNT(*) FROM telemetry_flows"), 8);
}

}  // namespace
}  // namespace hsns::store
