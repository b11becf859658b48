// SqliteAlarmStore (store/alarm_store.h) on real SQLite files: changes upsert the alarm row and add history
// (updates do not), the list's filters, order, paging and total, an alarm with its history, silences,
// retention, and everything surviving a reopen of the file.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "store/sqlite_alarm_store.h"
#include "store_test_support.h"
#include "support/temp_dir.h"

namespace hsns::store {
namespace {

using brain::AlarmChange;
using brain::AlarmChangeKind;
using brain::AlarmState;
using brain::FaultSeverity;
using test_support::query_int;

AlarmChange change(const std::string& entity, AlarmChangeKind kind, AlarmState state, std::int64_t at_ms,
                   FaultSeverity severity = FaultSeverity::major) {
  AlarmChange c;
  c.fingerprint = brain::alarm_fingerprint("optics-low", entity);
  c.first_ms = 1'000;
  c.id = brain::alarm_id(c.fingerprint, c.first_ms);
  c.type = "optics-low";
  c.fault = "optical_power_out_of_range";
  c.severity = severity;
  c.entity = entity;
  c.root_cause = entity + "/module";
  c.role = brain::RootCauseRole::module;
  c.state = state;
  c.last_ms = at_ms;
  c.count = 1;
  c.detail = "rx power low";
  c.change = kind;
  c.at_ms = at_ms;
  return c;
}

class AlarmStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open() {
    store_.reset();
    db_.reset();
    db_.emplace(DatabaseOptions{(dir_ / "aggregator.db").string()});
    store_.emplace(*db_);
  }

  std::int64_t count(const std::string& table) {
    auto lease = db_->writer();
    return query_int(lease->connection(), "SELECT COUNT(*) FROM " + table);
  }

  void apply(std::vector<AlarmChange> changes) {
    auto ok = store_->apply(changes);
    ASSERT_TRUE(ok) << ok.error().detail;
  }

  testing::TempDir dir_;
  std::optional<Database> db_;
  std::optional<SqliteAlarmStore> store_;
};

TEST_F(AlarmStoreTest, ChangesKeepTheLastStateAndEveryStateChangeInHistory) {
  auto raised = change("leaf01/Ethernet1", AlarmChangeKind::raised, AlarmState::raised, 1'000);
  auto updated = raised;
  updated.change = AlarmChangeKind::updated;
  updated.count = 7;
  updated.last_ms = 5'000;
  updated.at_ms = 5'000;
  auto acked = updated;
  acked.change = AlarmChangeKind::acknowledged;
  acked.state = AlarmState::acknowledged;
  acked.acknowledged_by = "alice";
  acked.acknowledged_ms = 6'000;
  acked.comment = "replacing the optic";
  acked.actor = "alice";
  acked.at_ms = 6'000;
  apply({raised, updated});
  apply({acked});
  EXPECT_EQ(count("alarms"), 1);
  EXPECT_EQ(count("alarm_history"), 2);  // raised, acknowledged (not the update)

  auto got = store_->get(raised.id);
  ASSERT_TRUE(got) << got.error().detail;
  ASSERT_TRUE(*got);
  const auto& a = (*got)->alarm;
  EXPECT_EQ(a.state, AlarmState::acknowledged);
  EXPECT_EQ(a.count, 7U);
  EXPECT_EQ(a.last_ms, 5'000);
  EXPECT_EQ(a.fingerprint, raised.fingerprint);
  EXPECT_EQ(a.acknowledged_by, "alice");
  EXPECT_EQ(a.comment, "replacing the optic");
  EXPECT_EQ(a.role, brain::RootCauseRole::module);
  EXPECT_EQ(a.root_cause, "leaf01/Ethernet1/module");
  const auto& h = (*got)->history;
  ASSERT_EQ(h.size(), 2U);
  EXPECT_EQ(h[0].change, AlarmChangeKind::raised);
  EXPECT_EQ(h[0].at_ms, 1'000);
  EXPECT_EQ(h[1].change, AlarmChangeKind::acknowledged);
  EXPECT_EQ(h[1].actor, "alice");
  EXPECT_EQ(h[1].comment, "replacing the optic");
  EXPECT_EQ(h[1].state, AlarmState::acknowledged);

  auto missing = store_->get("0000000000000000-1");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
}

TEST_F(AlarmStoreTest, FingerprintsWithTheHighBitSetRoundTrip) {
  auto c = change("x", AlarmChangeKind::raised, AlarmState::raised, 1'000);
  c.fingerprint = 0xfedcba9876543210ULL;
  c.id = brain::alarm_id(c.fingerprint, 1'000);
  apply({c});
  auto got = store_->get(c.id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->alarm.fingerprint, 0xfedcba9876543210ULL);
}

TEST_F(AlarmStoreTest, ListFiltersOrdersAndPages) {
  std::vector<AlarmChange> batch;
  for (int i = 0; i < 10; ++i) {
    auto c = change("leaf01/Ethernet" + std::to_string(i), AlarmChangeKind::raised,
                    i % 2 == 0 ? AlarmState::raised : AlarmState::cleared, 10'000 + i * 1'000,
                    i < 3 ? FaultSeverity::critical : FaultSeverity::minor);
    c.suppressed = i == 4;
    batch.push_back(c);
  }
  apply(batch);

  auto all = store_->query({});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->total, 10U);
  ASSERT_EQ(all->items.size(), 10U);
  EXPECT_EQ(all->items.front().entity, "leaf01/Ethernet9");  // newest last_seen first
  EXPECT_EQ(all->items.back().entity, "leaf01/Ethernet0");

  AlarmFilter raised;
  raised.state = AlarmState::raised;
  EXPECT_EQ(store_->query(raised)->total, 5U);
  AlarmFilter critical;
  critical.severity = FaultSeverity::critical;
  EXPECT_EQ(store_->query(critical)->total, 3U);
  AlarmFilter by_entity;
  by_entity.entity = "leaf01/Ethernet3";
  EXPECT_EQ(store_->query(by_entity)->total, 1U);
  by_entity.entity = "leaf01/Ethernet3/module";  // the root cause matches too
  EXPECT_EQ(store_->query(by_entity)->total, 1U);
  AlarmFilter by_type;
  by_type.type = "optical_power_out_of_range";
  EXPECT_EQ(store_->query(by_type)->total, 10U);
  by_type.type = "crc";
  EXPECT_EQ(store_->query(by_type)->total, 0U);
  AlarmFilter suppressed;
  suppressed.suppressed = true;
  EXPECT_EQ(store_->query(suppressed)->total, 1U);
  AlarmFilter window;
  window.since_ms = 12'000;
  window.until_ms = 15'000;
  EXPECT_EQ(store_->query(window)->total, 3U);
  AlarmFilter combined;
  combined.state = AlarmState::raised;
  combined.severity = FaultSeverity::minor;
  combined.suppressed = false;
  EXPECT_EQ(store_->query(combined)->total, 2U);  // 6 and 8 (4 is suppressed)

  AlarmFilter page;
  page.limit = 3;
  page.offset = 8;
  auto p = store_->query(page);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->total, 10U);
  ASSERT_EQ(p->items.size(), 2U);
  EXPECT_EQ(p->items[0].entity, "leaf01/Ethernet1");

  auto active = store_->load_active(100);
  ASSERT_TRUE(active);
  EXPECT_EQ(active->size(), 5U);
  EXPECT_EQ(store_->load_active(2)->size(), 2U);
}

TEST_F(AlarmStoreTest, SilencesAreStoredListedAndDeleted) {
  brain::Silence s{.id = "s-1",
                   .entity = "leaf01/*",
                   .type = "",
                   .regex = "rx power",
                   .expires_ms = 99'000,
                   .creator = "alice",
                   .reason = "maintenance",
                   .created_ms = 1'000};
  ASSERT_TRUE(store_->put_silence(s));
  auto dup = store_->put_silence(s);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().kind, StoreError::Kind::conflict);
  brain::Silence forever{
      .id = "s-2", .type = "crc", .creator = "bob", .reason = "known", .created_ms = 2'000};
  ASSERT_TRUE(store_->put_silence(forever));
  auto list = store_->list_silences();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].id, "s-1");
  EXPECT_EQ((*list)[0].expires_ms, 99'000);
  EXPECT_EQ((*list)[0].regex, "rx power");
  EXPECT_EQ((*list)[1].expires_ms, std::nullopt);
  EXPECT_EQ((*list)[1].creator, "bob");
  EXPECT_EQ(store_->delete_silence("s-1").value(), true);
  EXPECT_EQ(store_->delete_silence("s-1").value(), false);
  EXPECT_EQ(store_->list_silences()->size(), 1U);
}

TEST_F(AlarmStoreTest, PruneDeletesOldClearedAlarmsWithTheirHistory) {
  auto old_clear = change("a", AlarmChangeKind::cleared, AlarmState::cleared, 1'000);
  old_clear.cleared_ms = 1'000;
  auto new_clear = change("b", AlarmChangeKind::cleared, AlarmState::cleared, 9'000);
  new_clear.cleared_ms = 9'000;
  auto active = change("c", AlarmChangeKind::raised, AlarmState::raised, 500);
  apply({old_clear, new_clear, active});
  auto pruned = store_->prune(5'000);
  ASSERT_TRUE(pruned);
  EXPECT_EQ(*pruned, 1U);
  EXPECT_EQ(count("alarms"), 2);
  EXPECT_EQ(count("alarm_history"), 2);
  EXPECT_FALSE(*store_->get(old_clear.id));
}

TEST_F(AlarmStoreTest, EverythingSurvivesAReopen) {
  apply({change("leaf01/Ethernet1", AlarmChangeKind::raised, AlarmState::raised, 1'000)});
  ASSERT_TRUE(store_->put_silence({.id = "s", .type = "t", .creator = "c", .reason = "r", .created_ms = 1}));
  open();
  EXPECT_EQ(store_->load_active(10)->size(), 1U);
  EXPECT_EQ(store_->list_silences()->size(), 1U);
  EXPECT_GE(db_->schema_version(), 10);
}

}  // namespace
}  // namespace hsns::store
