// SqliteKpiStore (store/kpi_store.h) on real SQLite files: samples stored raw and rolled up into 1m and 1h
// buckets, duplicates, out-of-order and late samples counted, a bad batch storing nothing, the series
// list, retention per resolution, and the data surviving a reopen.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "store/sqlite_kpi_store.h"
#include "store_test_support.h"
#include "support/temp_dir.h"

namespace hsns::store {
namespace {

using namespace std::chrono_literals;
using test_support::query_int;

constexpr std::int64_t kMinuteMs = 60'000;
constexpr std::int64_t kHourMs = 3'600'000;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The start of the hour two hours ago: every sample of a test lies within the raw retention.
std::int64_t base_ms() {
  const auto t = now_ms() - 2 * kHourMs;
  return t - t % kHourMs;
}

class KpiStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open(KpiStoreOptions options = {}) {
    store_.reset();
    db_.reset();
    db_.emplace(DatabaseOptions{(dir_ / "aggregator.db").string()});
    store_.emplace(*db_, options);
  }

  std::int64_t count(const std::string& table) {
    auto lease = db_->writer();
    return query_int(lease->connection(), "SELECT COUNT(*) FROM " + table);
  }

  KpiSeriesPoints points(KpiResolution resolution, std::string entity = "node-1/eth0",
                         std::string metric = "rx_bytes_per_s") {
    KpiQuery q;
    q.entity = std::move(entity);
    q.metric = std::move(metric);
    q.resolution = resolution;
    auto r = store_->query(q);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : KpiSeriesPoints{};
  }

  hsns::testing::TempDir dir_;
  std::optional<Database> db_;
  std::optional<SqliteKpiStore> store_;
};

TEST_F(KpiStoreTest, StoresRawSamplesAndRollsThemUpPerMinuteAndHour) {
  const auto base = base_ms();
  // Minute 0: 1, 5, 3 (last 3); minute 1: 10; the next hour: 7.
  const std::vector<KpiSample> samples = {{"node-1/eth0", "rx_bytes_per_s", base + 1'000, 1},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 20'000, 5},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 59'999, 3},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 60'000, 10},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 3'600'000, 7}};
  auto r = store_->append(samples);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->accepted, 5U);
  EXPECT_EQ(r->new_series, 1U);
  EXPECT_EQ(r->duplicate + r->late + r->out_of_order, 0U);

  const auto raw = points(KpiResolution::raw);
  ASSERT_EQ(raw.points.size(), 5U);
  EXPECT_EQ(raw.points[1].ts_ms, base + 20'000);
  EXPECT_EQ(raw.points[1].last, 5);
  EXPECT_EQ(raw.points[1].count, 1U);

  const auto minute = points(KpiResolution::minute);
  ASSERT_EQ(minute.points.size(), 3U);
  EXPECT_EQ(minute.points[0].ts_ms, base);
  EXPECT_EQ(minute.points[0].min, 1);
  EXPECT_EQ(minute.points[0].max, 5);
  EXPECT_DOUBLE_EQ(minute.points[0].avg, 3);
  EXPECT_EQ(minute.points[0].count, 3U);
  EXPECT_EQ(minute.points[0].last, 3);
  EXPECT_EQ(minute.points[1].ts_ms, base + 60'000);
  EXPECT_EQ(minute.points[1].count, 1U);

  const auto hour = points(KpiResolution::hour);
  ASSERT_EQ(hour.points.size(), 2U);
  EXPECT_EQ(hour.points[0].count, 4U);
  EXPECT_EQ(hour.points[0].min, 1);
  EXPECT_EQ(hour.points[0].max, 10);
  EXPECT_EQ(hour.points[0].last, 10);
  EXPECT_DOUBLE_EQ(hour.points[0].avg, 19.0 / 4);
  EXPECT_EQ(hour.points[1].ts_ms, base + 3'600'000);
}

TEST_F(KpiStoreTest, RollupsOfSeveralBatchesEqualThoseOfOne) {
  const auto base = base_ms();
  for (int i = 0; i < 6; ++i) {
    const KpiSample s{"node-1/eth0", "rx_bytes_per_s", base + i * std::int64_t{10'000},
                      static_cast<double>(i)};
    ASSERT_TRUE(store_->append(std::span(&s, 1)));
  }
  const auto minute = points(KpiResolution::minute);
  ASSERT_EQ(minute.points.size(), 1U);
  EXPECT_EQ(minute.points[0].count, 6U);
  EXPECT_EQ(minute.points[0].min, 0);
  EXPECT_EQ(minute.points[0].max, 5);
  EXPECT_DOUBLE_EQ(minute.points[0].avg, 2.5);
  EXPECT_EQ(minute.points[0].last, 5);
}

TEST_F(KpiStoreTest, DuplicatesAreIgnoredAndCountedTheFirstValueKept) {
  const auto base = base_ms();
  const std::vector<KpiSample> first = {{"node-1/eth0", "rx_bytes_per_s", base, 1},
                                        {"node-1/eth0", "rx_bytes_per_s", base, 2}};
  auto r = store_->append(first);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->accepted, 1U);
  EXPECT_EQ(r->duplicate, 1U);
  auto again = store_->append(first);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->accepted, 0U);
  EXPECT_EQ(again->duplicate, 2U);
  const auto raw = points(KpiResolution::raw);
  ASSERT_EQ(raw.points.size(), 1U);
  EXPECT_EQ(raw.points[0].last, 1);
  const auto minute = points(KpiResolution::minute);
  ASSERT_EQ(minute.points.size(), 1U);
  EXPECT_EQ(minute.points[0].count, 1U);
}

TEST_F(KpiStoreTest, OutOfOrderWithinTheWindowIsStoredAndLaterOnesAreRefused) {
  open(KpiStoreOptions{.retention = {}, .late_window = 10min});
  const auto base = base_ms();
  ASSERT_TRUE(
      store_->append(std::vector<KpiSample>{{"node-1/eth0", "rx_bytes_per_s", base + 30 * kMinuteMs, 9}}));
  const std::vector<KpiSample> older = {{"node-1/eth0", "rx_bytes_per_s", base + 25 * kMinuteMs + 5, 4},
                                        {"node-1/eth0", "rx_bytes_per_s", base + 5 * kMinuteMs, 1}};
  auto r = store_->append(older);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->accepted, 1U);
  EXPECT_EQ(r->out_of_order, 1U);
  EXPECT_EQ(r->late, 1U);
  const auto raw = points(KpiResolution::raw);
  ASSERT_EQ(raw.points.size(), 2U);
  EXPECT_EQ(raw.points[0].ts_ms, base + 25 * kMinuteMs + 5);
  // The hour bucket's last stays the newest sample's value although the older one came after it.
  const auto hour = points(KpiResolution::hour);
  ASSERT_EQ(hour.points.size(), 1U);
  EXPECT_EQ(hour.points[0].last, 9);
  EXPECT_EQ(hour.points[0].count, 2U);
  auto series = store_->list_series({});
  ASSERT_TRUE(series);
  ASSERT_EQ(series->items.size(), 1U);
  EXPECT_EQ(series->items[0].last_ms, base + 30 * kMinuteMs);
  EXPECT_EQ(series->items[0].last_value, 9);
  EXPECT_EQ(series->items[0].first_ms, base + 25 * kMinuteMs + 5);
}

TEST_F(KpiStoreTest, SamplesOlderThanTheRawRetentionAreLate) {
  const std::vector<KpiSample> old = {{"node-1/eth0", "rx_bytes_per_s", now_ms() - 49 * kHourMs, 1}};
  auto r = store_->append(old);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->late, 1U);
  EXPECT_EQ(r->accepted, 0U);
  EXPECT_EQ(count("kpi_series"), 0);
}

TEST_F(KpiStoreTest, ABadSampleNamesItsFieldAndNothingOfTheBatchIsStored) {
  const auto base = base_ms();
  const std::vector<KpiSample> batch = {{"node-1/eth0", "rx_bytes_per_s", base, 1},
                                        {"node-1/eth0", "9bad", base, 1},
                                        {"node 1", "x", base, 1},
                                        {"node-1/eth0", "x", -1, 1},
                                        {"node-1/eth0", "x", base, std::numeric_limits<double>::quiet_NaN()}};
  auto r = store_->append(batch);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::invalid);
  ASSERT_EQ(r.error().fields.size(), 4U);
  EXPECT_EQ(r.error().fields[0].field, "samples[1].metric");
  EXPECT_EQ(r.error().fields[1].field, "samples[2].entity");
  EXPECT_EQ(r.error().fields[2].field, "samples[3].ts");
  EXPECT_EQ(r.error().fields[3].field, "samples[4].value");
  EXPECT_EQ(count("kpi_raw"), 0);
  EXPECT_EQ(count("kpi_series"), 0);
}

// Issue 31: three samples of 1.7e308 in one minute overflowed the bucket's sum, and the average became
// null. Values are bounded so that no bucket's sum can overflow; the largest allowed ones average exactly.
TEST_F(KpiStoreTest, ValuesAreBoundedSoThatEveryAverageIsANumber) {
  const auto base = base_ms();
  const std::vector<KpiSample> huge = {{"node-1/eth0", "rx_bytes_per_s", base, 1.7e308},
                                       {"node-1/eth0", "rx_bytes_per_s", base + 1, -1.7e308}};
  auto refused = store_->append(huge);
  ASSERT_FALSE(refused);
  ASSERT_EQ(refused.error().fields.size(), 2U);
  EXPECT_EQ(refused.error().fields[0].field, "samples[0].value");
  EXPECT_EQ(refused.error().fields[1].field, "samples[1].value");
  const std::vector<KpiSample> largest = {{"node-1/eth0", "rx_bytes_per_s", base, kMaxKpiMagnitude},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 1'000, kMaxKpiMagnitude},
                                          {"node-1/eth0", "rx_bytes_per_s", base + 2'000, kMaxKpiMagnitude}};
  ASSERT_TRUE(store_->append(largest));
  for (const auto resolution : {KpiResolution::minute, KpiResolution::hour}) {
    const auto bucket = points(resolution);
    ASSERT_EQ(bucket.points.size(), 1U);
    EXPECT_TRUE(std::isfinite(bucket.points[0].avg));
    EXPECT_DOUBLE_EQ(bucket.points[0].avg, kMaxKpiMagnitude);
  }
}

TEST_F(KpiStoreTest, QueryBoundsAndLimitAndTheSeriesList) {
  const auto base = base_ms();
  std::vector<KpiSample> batch;
  batch.reserve(12);
  for (int i = 0; i < 10; ++i) {
    batch.push_back({"node-1/eth0", "rx_bytes_per_s", base + i * std::int64_t{1000}, 1.0 * i});
  }
  batch.push_back({"node-1/eth1", "rx_bytes_per_s", base, 1});
  batch.push_back({"node-1/eth0", "tx_bytes_per_s", base, 1});
  ASSERT_TRUE(store_->append(batch));

  KpiQuery q{"node-1/eth0", "rx_bytes_per_s", base + 2000, base + 6000, KpiResolution::raw, 3};
  auto r = store_->query(q);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->points.size(), 3U);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->points.front().ts_ms, base + 2000);
  q.limit = 10;
  r = store_->query(q);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->points.size(), 4U);  // until is exclusive
  EXPECT_FALSE(r->truncated);
  q.entity = "node-9/eth0";
  r = store_->query(q);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->points.empty());

  auto all = store_->list_series({});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->items.size(), 3U);
  EXPECT_EQ(all->items[0].metric, "rx_bytes_per_s");
  EXPECT_EQ(all->items[1].metric, "tx_bytes_per_s");
  EXPECT_EQ(all->items[2].entity, "node-1/eth1");
  auto one = store_->list_series({.entity = "node-1/eth0", .metric = std::nullopt, .limit = 1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->items.size(), 1U);
  EXPECT_TRUE(one->truncated);
}

// latest: per entity of one metric, the newest sample (the series' newest, or the newest raw one at or
// before a time), none older than since, in entity order, at most limit.
TEST_F(KpiStoreTest, LatestIsTheNewestSamplePerEntityNowOrAtATime) {
  const auto base = base_ms();
  const std::vector<KpiSample> batch = {
      {"node-2/eth0", "rx_bytes_per_s", base + 1000, 1},  {"node-2/eth0", "rx_bytes_per_s", base + 5000, 2},
      {"node-1/eth0", "rx_bytes_per_s", base + 2000, 10}, {"node-1/eth0", "rx_bytes_per_s", base + 9000, 11},
      {"node-3/eth0", "rx_bytes_per_s", base + 100, 30},  {"node-1/eth0", "tx_bytes_per_s", base + 9500, 99}};
  ASSERT_TRUE(store_->append(batch));

  KpiLatestQuery q;
  q.metric = "rx_bytes_per_s";
  auto now = store_->latest(q);
  ASSERT_TRUE(now) << now.error().message();
  ASSERT_EQ(now->items.size(), 3U);
  EXPECT_EQ(now->items[0].entity, "node-1/eth0");
  EXPECT_EQ(now->items[0].ts_ms, base + 9000);
  EXPECT_EQ(now->items[0].value, 11);
  EXPECT_EQ(now->items[1].value, 2);
  EXPECT_EQ(now->items[2].value, 30);
  EXPECT_FALSE(now->truncated);

  q.since_ms = base + 1000;  // node-3's only sample is older
  now = store_->latest(q);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->items.size(), 2U);

  q.at_ms = base + 4000;  // node-1: 10 (at 2000), node-2: 1 (at 1000; inclusive since), node-3 too old
  auto at = store_->latest(q);
  ASSERT_TRUE(at);
  ASSERT_EQ(at->items.size(), 2U);
  EXPECT_EQ(at->items[0].entity, "node-1/eth0");
  EXPECT_EQ(at->items[0].ts_ms, base + 2000);
  EXPECT_EQ(at->items[0].value, 10);
  EXPECT_EQ(at->items[1].ts_ms, base + 1000);
  EXPECT_EQ(at->items[1].value, 1);

  q.at_ms = base + 9000;  // inclusive at
  q.limit = 1;
  at = store_->latest(q);
  ASSERT_TRUE(at);
  ASSERT_EQ(at->items.size(), 1U);
  EXPECT_EQ(at->items[0].value, 11);
  EXPECT_TRUE(at->truncated);

  q = {};
  q.metric = "never_seen";
  auto none = store_->latest(q);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->items.empty());
}

TEST_F(KpiStoreTest, PruneRemovesEachResolutionByItsOwnRetention) {
  open(KpiStoreOptions{.retention = {.raw = 3h, .minute = 8h, .hour = 14h}, .late_window = 1h});
  const auto base = base_ms();  // two to three hours ago
  ASSERT_TRUE(store_->append(std::vector<KpiSample>{{"node-1/eth0", "rx_bytes_per_s", base, 1},
                                                    {"node-1/eth0", "rx_bytes_per_s", base + 60'000, 2}}));
  const auto now = std::chrono::system_clock::now();
  // Nothing is old enough yet.
  auto none = store_->prune(now);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->raw + none->minute + none->hour + none->series, 0U);
  // Four hours on: raw goes, the minute and hour buckets stay.
  auto raw = store_->prune(now + 4h);
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->raw, 2U);
  EXPECT_EQ(raw->minute, 0U);
  EXPECT_TRUE(points(KpiResolution::raw).points.empty());
  EXPECT_EQ(points(KpiResolution::minute).points.size(), 2U);
  // Seven hours on: the minute buckets go; the hour bucket stays.
  auto minute = store_->prune(now + 7h);
  ASSERT_TRUE(minute);
  EXPECT_EQ(minute->minute, 2U);
  EXPECT_EQ(minute->hour, 0U);
  EXPECT_EQ(points(KpiResolution::hour).points.size(), 1U);
  // Thirteen hours on: everything, the series too.
  auto all = store_->prune(now + 13h);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->hour, 1U);
  EXPECT_EQ(all->series, 1U);
  EXPECT_EQ(count("kpi_series"), 0);
  EXPECT_EQ(count("kpi_1h"), 0);
}

TEST_F(KpiStoreTest, SamplesSurviveAReopen) {
  const auto base = base_ms();
  ASSERT_TRUE(store_->append(std::vector<KpiSample>{{"node-1/eth0", "rx_bytes_per_s", base, 1}}));
  open();
  EXPECT_EQ(points(KpiResolution::raw).points.size(), 1U);
  EXPECT_EQ(db_->schema_version(), builtin_migrations().back().version);
  // The series is found again, not created twice: a duplicate after the reopen is a duplicate.
  auto r = store_->append(std::vector<KpiSample>{{"node-1/eth0", "rx_bytes_per_s", base, 2}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->duplicate, 1U);
  EXPECT_EQ(r->new_series, 0U);
}

TEST(KpiNames, EntityAndMetricRules) {
  EXPECT_TRUE(is_kpi_entity("host0042/ens1f0np0"));
  EXPECT_TRUE(is_kpi_entity("leaf01/Ethernet1/1"));
  EXPECT_FALSE(is_kpi_entity(""));
  EXPECT_FALSE(is_kpi_entity("a b"));
  EXPECT_FALSE(is_kpi_entity(std::string(kMaxKpiEntityLength + 1, 'a')));
  EXPECT_TRUE(is_kpi_metric("lane1_rx_power_watts"));
  EXPECT_TRUE(is_kpi_metric("_x.y:z"));
  EXPECT_FALSE(is_kpi_metric("1x"));
  EXPECT_FALSE(is_kpi_metric("a-b"));
  EXPECT_EQ(parse_kpi_resolution("1m"), KpiResolution::minute);
  EXPECT_EQ(parse_kpi_resolution("5m"), std::nullopt);
}

}  // namespace
}  // namespace hsns::store
