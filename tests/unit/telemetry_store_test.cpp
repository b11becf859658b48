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

// Statements are kept on the writer connection across batches: a batch that failed half-way (an
// unregistered host), a duplicate and a batch after them all behave as the first one did.
TEST_F(TelemetryStoreTest, KeptStatementsServeBatchAfterBatchAndAfterAFailure) {
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(1, 3, 2), 100));
  EXPECT_FALSE(store_->ingest("node-9", hsns::testing::sample_report(2, 3, 2), 100));
  auto dup = store_->ingest("node-1", hsns::testing::sample_report(1, 3, 2), 100);
  ASSERT_TRUE(dup);
  EXPECT_TRUE(dup->duplicate);
  auto next = store_->ingest("node-1", hsns::testing::sample_report(2, 3, 2), 100);
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_FALSE(next->duplicate);
  EXPECT_EQ(count("telemetry_batches"), 2);
  EXPECT_EQ(count("telemetry_flows"), 6);
  // Text bound without a copy is stored as sent.
  auto lease = db_->writer();
  EXPECT_EQ(
      query_int(lease->connection(),
                "SELECT COUNT(*) FROM telemetry_flows WHERE ifname = 'ens1f0np0' AND src LIKE '198.18.0.%' "
                "AND op = '[0,900,0,0,101,0,0,0]'"),
      2);
}

TEST_F(TelemetryStoreTest, CountersLatestSnapshotSeriesAndPaging) {
  auto first = hsns::testing::sample_report(1, 0, 2);
  auto second = hsns::testing::sample_report(2, 0, 2);
  second.counters->rdma[0].counters["port_xmit_data"].value = 0xFFFF'FFFF'FFFF'FFF0ULL;  // above 2^63
  ASSERT_TRUE(store_->ingest("node-1", first, 100));
  ASSERT_TRUE(store_->ingest("node-1", second, 100));

  auto latest = store_->latest_counters("node-1", {});
  ASSERT_TRUE(latest) << latest.error().message();
  EXPECT_EQ(latest->items.size(), 2U * 9);
  EXPECT_FALSE(latest->more);
  for (const auto& c : latest->items) EXPECT_EQ(c.ts_ms, second.counters->ts_ms);
  CounterQuery xmit;
  xmit.port = "mlx5_0/1";
  xmit.counter = "port_xmit_data";
  auto one = store_->latest_counters("node-1", xmit);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->items.size(), 1U);
  EXPECT_EQ(one->items[0].value, 0xFFFF'FFFF'FFFF'FFF0ULL);
  EXPECT_EQ(one->items[0].rate, 100.0);

  auto series = store_->counter_series("node-1", xmit, {first.counters->ts_ms, std::nullopt});
  ASSERT_TRUE(series);
  ASSERT_EQ(series->items.size(), 2U);
  EXPECT_EQ(series->items[0].ts_ms, first.counters->ts_ms);
  EXPECT_EQ(series->items[1].ts_ms, second.counters->ts_ms);
  auto before = store_->counter_series("node-1", xmit, {std::nullopt, second.counters->ts_ms});
  ASSERT_TRUE(before);
  EXPECT_EQ(before->items.size(), 1U);

  CounterQuery paged;
  paged.paging = {16, 5};
  auto page = store_->latest_counters("node-1", paged);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->items.size(), 2U);
  EXPECT_FALSE(page->more);
  paged.paging = {0, 5};
  page = store_->latest_counters("node-1", paged);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->items.size(), 5U);
  EXPECT_TRUE(page->more);

  EXPECT_FALSE(store_->latest_counters("node-9", {}));
}

TEST_F(TelemetryStoreTest, FlowDirectionsSumOverBatchesAndStopAtTheKeyBound) {
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(1, 3, 1), 100));
  ASSERT_TRUE(store_->ingest("node-1", hsns::testing::sample_report(2, 3, 1), 100));
  FlowQuery q;
  q.host = "node-1";
  auto all = store_->flow_directions(q);
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 3U);  // the same three keys in both batches
  for (const auto& d : *all) {
    EXPECT_EQ(d.records, 2U);
    EXPECT_EQ(d.directions, std::vector<std::string>{"egress"});
    EXPECT_EQ(d.ifnames, std::vector<std::string>{"ens1f0np0"});
  }
  // By address: record 1 of each batch (198.18.0.2 -> 198.18.1.2), summed over both batches.
  q.addresses = std::vector<std::string>{"198.18.0.2"};
  auto one = store_->flow_directions(q);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1U);
  EXPECT_EQ((*one)[0].packets, 2U * 1001);
  EXPECT_EQ((*one)[0].bytes, 2U * 4096 * 1001);
  q.addresses = std::vector<std::string>{};
  auto none = store_->flow_directions(q);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  // More keys than the bound: bound + 1 answered, so the caller can refuse.
  q.addresses.reset();
  q.max_keys = 1;
  auto over = store_->flow_directions(q);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->size(), 2U);
  q.host = "node-9";
  EXPECT_FALSE(store_->flow_directions(q));
}

}  // namespace
}  // namespace hsns::store
