// The alarm engine (lib/brain/alarms.h) on faults with known answers: fingerprint dedupe, the update
// throttle, flap damping with its hold-down (and a raise cancelling it), the lifecycle with the recovery
// notice and the reopen window, one-shot expiry, silences (entity glob, type, regex, expiry, removal, the
// rules' errors and cap), the memory cap, the restart's restore, link faults cleared from the other end,
// and event time.
#include "brain/alarms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace hsns::brain {
namespace {

using K = AlarmChangeKind;

std::shared_ptr<const Pattern> kpi_pattern(const std::string& id,
                                           FaultSeverity severity = FaultSeverity::major,
                                           PatternScope scope = PatternScope::entity) {
  auto p = std::make_shared<Pattern>();
  p->id = id;
  p->fault = "fault_" + id;
  p->severity = severity;
  p->match.kpi = KpiCondition{
      .metric = "rx_power_dbm", .anomaly = std::nullopt, .comparison = Comparison::below, .bound = -10};
  p->scope = scope;
  p->root_cause = scope == PatternScope::link_both_ends ? RootCauseRole::link : RootCauseRole::port;
  return p;
}

// A log pattern: with clears_on the matcher clears it; without, it is one-shot.
std::shared_ptr<const Pattern> log_pattern(const std::string& id, bool clears) {
  auto p = std::make_shared<Pattern>();
  p->id = id;
  p->fault = "fault_" + id;
  p->severity = FaultSeverity::critical;
  LogCondition down;
  down.message = "down";
  p->match.log = down;
  if (clears) {
    LogCondition up;
    up.message = "up";
    p->clears_on = Condition{.log = up, .kpi = std::nullopt};
  }
  return p;
}

FaultMatch fault(const std::shared_ptr<const Pattern>& p, FaultState state, const std::string& entity,
                 std::int64_t ts, const std::string& detail = "detail") {
  FaultMatch f;
  f.pattern = p;
  f.state = state;
  f.entity = entity;
  f.root_cause = entity;
  f.timestamp_ms = ts;
  f.first_ms = ts;
  f.detail = detail;
  return f;
}

std::vector<AlarmChange> feed(AlarmEngine& e, std::vector<FaultMatch> faults) {
  std::vector<AlarmChange> out;
  e.observe(faults, out);
  return out;
}

std::vector<K> kinds(const std::vector<AlarmChange>& changes) {
  std::vector<K> out;
  for (const auto& c : changes) out.push_back(c.change);
  return out;
}

TEST(AlarmIds, FingerprintIsStableAndTheIdCarriesIt) {
  // FNV-1a 64 of "p\0e", computed by hand from the definition.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : std::string("p\0e", 3)) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  EXPECT_EQ(alarm_fingerprint("p", "e"), h);
  EXPECT_NE(alarm_fingerprint("p", "e1"), alarm_fingerprint("p1", "e"));
  const auto id = alarm_id(0x00ab, 1234);
  EXPECT_EQ(id, "00000000000000ab-1234");
  EXPECT_EQ(fingerprint_of_id(id), 0xabU);
  EXPECT_EQ(fingerprint_of_id("zz"), std::nullopt);
  EXPECT_EQ(fingerprint_of_id("00000000000000ab-12x4"), std::nullopt);
  EXPECT_EQ(fingerprint_of_id("00000000000000ag-1234"), std::nullopt);
}

TEST(AlarmEngine, RepeatedRaisesAreOneAlarmWithACountAndThrottledUpdates) {
  AlarmEngine e({.update_interval_ms = 10'000});
  const auto p = kpi_pattern("optics-low", FaultSeverity::major);
  std::vector<FaultMatch> faults;
  for (int i = 0; i < 100; ++i)
    faults.push_back(fault(p, FaultState::raised, "leaf01/Ethernet1", 1'000 + i * 1'000));
  const auto changes = feed(e, faults);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front().change, K::raised);
  // 100 s of repeats: one raise and an update every 10 s, not one change per fault.
  EXPECT_EQ(changes.size(), 10U);
  for (std::size_t i = 1; i < changes.size(); ++i) EXPECT_EQ(changes[i].change, K::updated);
  ASSERT_EQ(e.size(), 1U);
  const auto active = e.active();
  ASSERT_EQ(active.size(), 1U);
  EXPECT_EQ(active[0].count, 100U);
  EXPECT_EQ(active[0].first_ms, 1'000);
  EXPECT_EQ(active[0].last_ms, 100'000);
  EXPECT_EQ(active[0].severity, FaultSeverity::major);
  EXPECT_EQ(active[0].type, "optics-low");
  EXPECT_EQ(active[0].fault, "fault_optics-low");
  EXPECT_EQ(active[0].id, alarm_id(alarm_fingerprint("optics-low", "leaf01/Ethernet1"), 1'000));
  EXPECT_EQ(e.stats().repeats, 99U);

  // Another entity or another pattern is another alarm.
  feed(e, {fault(p, FaultState::raised, "leaf01/Ethernet2", 101'000),
           fault(kpi_pattern("other"), FaultState::raised, "leaf01/Ethernet1", 101'000)});
  EXPECT_EQ(e.active().size(), 3U);
}

TEST(AlarmEngine, LifecycleRaisedAcknowledgedClearedWithRecoveryNotice) {
  AlarmEngine e;
  const auto p = kpi_pattern("temp-high", FaultSeverity::critical);
  auto raised = feed(e, {fault(p, FaultState::raised, "leaf01/Ethernet5", 5'000, "too hot")});
  ASSERT_EQ(kinds(raised), std::vector<K>{K::raised});
  const std::string id = raised[0].id;
  EXPECT_EQ(raised[0].state, AlarmState::raised);
  EXPECT_EQ(raised[0].detail, "too hot");

  auto ack = e.acknowledge(id, "alice", "looking", 6'000);
  ASSERT_TRUE(ack) << ack.error().detail;
  EXPECT_EQ(ack->change, K::acknowledged);
  EXPECT_EQ(ack->state, AlarmState::acknowledged);
  EXPECT_EQ(ack->acknowledged_by, "alice");
  EXPECT_EQ(ack->acknowledged_ms, 6'000);
  EXPECT_EQ(ack->comment, "looking");
  EXPECT_EQ(ack->actor, "alice");
  EXPECT_EQ(e.find(id)->state, AlarmState::acknowledged);

  auto unknown = e.acknowledge("0000000000000001-5", "alice", "", 6'000);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, Error::Kind::not_found);
  EXPECT_FALSE(e.acknowledge("not-an-id", "alice", "", 6'000));

  auto cleared = feed(e, {fault(p, FaultState::cleared, "leaf01/Ethernet5", 9'000, "back to normal")});
  ASSERT_EQ(kinds(cleared), std::vector<K>{K::cleared});
  EXPECT_EQ(cleared[0].id, id);
  EXPECT_EQ(cleared[0].state, AlarmState::cleared);
  EXPECT_EQ(cleared[0].cleared_ms, 9'000);
  EXPECT_EQ(cleared[0].detail, "back to normal");
  EXPECT_EQ(cleared[0].acknowledged_by, "alice");  // the recovery notice keeps who handled it
  EXPECT_TRUE(e.active().empty());

  auto late_ack = e.acknowledge(id, "bob", "", 10'000);
  ASSERT_FALSE(late_ack);
  EXPECT_EQ(late_ack.error().kind, Error::Kind::conflict);

  // A second clear of the same fault has no alarm to clear.
  EXPECT_TRUE(feed(e, {fault(p, FaultState::cleared, "leaf01/Ethernet5", 9'500)}).empty());
  EXPECT_EQ(e.stats().orphan_clears, 1U);
}

TEST(AlarmEngine, ARaiseWithinTheReopenWindowReopensTheSameAlarmAfterItANewOne) {
  AlarmEngine e({.reopen_window_ms = 60'000, .flap_transitions = 10});
  const auto p = kpi_pattern("crc");
  const std::string entity = "leaf02/Ethernet1";
  const auto first = feed(e, {fault(p, FaultState::raised, entity, 1'000)});
  ASSERT_TRUE(e.acknowledge(first[0].id, "alice", "", 1'500));
  feed(e, {fault(p, FaultState::cleared, entity, 2'000)});
  const auto again = feed(e, {fault(p, FaultState::raised, entity, 30'000)});
  ASSERT_EQ(kinds(again), std::vector<K>{K::reopened});
  EXPECT_EQ(again[0].id, first[0].id);
  EXPECT_EQ(again[0].state, AlarmState::raised);
  EXPECT_EQ(again[0].acknowledged_by, "");  // a reopened alarm needs a new acknowledgement
  EXPECT_EQ(again[0].count, 2U);
  EXPECT_EQ(again[0].cleared_ms, 0);

  feed(e, {fault(p, FaultState::cleared, entity, 31'000)});
  // 60 s after the clear the alarm is forgotten: the next raise is a new alarm.
  const auto later = feed(e, {fault(p, FaultState::raised, entity, 91'001)});
  ASSERT_EQ(kinds(later), std::vector<K>{K::raised});
  EXPECT_NE(later[0].id, first[0].id);
  EXPECT_EQ(later[0].count, 1U);
  EXPECT_EQ(e.size(), 1U);
}

TEST(AlarmEngine, AFlappingLinkIsOneAlarmWhoseClearWaitsForTheHoldDown) {
  AlarmEngine e({.update_interval_ms = 120'000,
                 .reopen_window_ms = 300'000,
                 .flap_transitions = 6,
                 .flap_window_ms = 600'000,
                 .hold_down_ms = 120'000});
  const auto p = log_pattern("link-down", true);
  const std::string port = "leaf01/Ethernet48";
  std::vector<AlarmChange> all;
  std::int64_t t = 0;
  // 200 down/up cycles, 10 s apart.
  for (int i = 0; i < 200; ++i) {
    t += 10'000;
    for (auto& c : feed(e, {fault(p, FaultState::raised, port, t)})) all.push_back(c);
    t += 5'000;
    for (auto& c : feed(e, {fault(p, FaultState::cleared, port, t)})) all.push_back(c);
  }
  // Raise, clear, reopen, clear, reopen, clear (the 6th transition: flapping, this clear held), then
  // quiet updates only.
  ASSERT_GE(all.size(), 6U);
  const std::vector<K> all_kinds = kinds(all);
  EXPECT_EQ((std::vector<K>(all_kinds.begin(), all_kinds.begin() + 6)),
            (std::vector<K>{K::raised, K::cleared, K::reopened, K::cleared, K::reopened, K::flapping}));
  for (std::size_t i = 6; i < all.size(); ++i) EXPECT_EQ(all[i].change, K::updated) << i;
  EXPECT_LT(all.size(), 60U);  // not hundreds
  ASSERT_EQ(e.active().size(), 1U);
  EXPECT_TRUE(e.active()[0].flapping);
  EXPECT_EQ(e.active()[0].count, 200U);
  EXPECT_EQ(e.stats().flapping, 1U);

  // Within the hold-down nothing clears; after it, one clear (the flapping flag goes with it).
  std::vector<AlarmChange> out;
  e.advance(t + 119'000, out);
  EXPECT_TRUE(out.empty());
  e.advance(t + 120'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::cleared});
  EXPECT_EQ(out[0].cleared_ms, t + 120'000);
  EXPECT_FALSE(out[0].flapping);
  EXPECT_EQ(out[0].id, all.front().id);
  EXPECT_EQ(e.stats().cleared, 3U);
}

TEST(AlarmEngine, ARaiseDuringTheHoldDownCancelsThePendingClear) {
  AlarmEngine e(
      {.update_interval_ms = 0, .flap_transitions = 4, .flap_window_ms = 60'000, .hold_down_ms = 30'000});
  const auto p = kpi_pattern("flappy");
  const std::string x = "host0001/ens1f0np0";
  feed(e, {fault(p, FaultState::raised, x, 1'000), fault(p, FaultState::cleared, x, 2'000),
           fault(p, FaultState::raised, x, 3'000)});
  const auto held = feed(e, {fault(p, FaultState::cleared, x, 4'000)});
  ASSERT_EQ(kinds(held), std::vector<K>{K::flapping});
  EXPECT_EQ(held[0].state, AlarmState::raised);
  // Back within the hold-down: the pending clear is gone; the fault stays active past the old deadline.
  feed(e, {fault(p, FaultState::raised, x, 20'000)});
  std::vector<AlarmChange> out;
  e.advance(100'000, out);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(e.active().size(), 1U);
  // Its next clear is held again (still flapping) and goes out after the hold-down.
  EXPECT_TRUE(feed(e, {fault(p, FaultState::cleared, x, 110'000)}).empty());
  e.advance(140'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::cleared});
  EXPECT_EQ(e.stats().held_clears, 2U);
}

TEST(AlarmEngine, AOneShotAlarmClearsAfterItsQuietTimeAndARepeatExtendsIt) {
  AlarmEngine e({.oneshot_clear_ms = 60'000});
  const auto p = log_pattern("switch-reboot", false);
  const auto raised = feed(e, {fault(p, FaultState::raised, "leaf03", 1'000)});
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_TRUE(raised[0].one_shot);
  feed(e, {fault(p, FaultState::raised, "leaf03", 50'000)});
  std::vector<AlarmChange> out;
  e.advance(61'000, out);  // 60 s after the first, but only 11 s after the repeat
  EXPECT_TRUE(out.empty());
  e.advance(110'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::cleared});
  EXPECT_EQ(out[0].cleared_ms, 110'000);
  EXPECT_NE(out[0].detail.find("no repeat within 60 s"), std::string::npos) << out[0].detail;
}

TEST(AlarmEngine, SilencesSuppressMatchingAlarmsWithoutLosingThem) {
  AlarmEngine e;
  const auto optics = kpi_pattern("optics-low");
  const auto crc = kpi_pattern("crc");
  std::vector<AlarmChange> out;
  ASSERT_TRUE(e.add_silence({.id = "s1",
                             .entity = "leaf01/*",
                             .type = "",
                             .regex = "",
                             .expires_ms = std::nullopt,
                             .creator = "alice",
                             .reason = "maintenance",
                             .created_ms = 0},
                            0, out));
  EXPECT_TRUE(out.empty());
  auto c = feed(e, {fault(optics, FaultState::raised, "leaf01/Ethernet1", 1'000),
                    fault(optics, FaultState::raised, "leaf02/Ethernet1", 1'000)});
  ASSERT_EQ(c.size(), 2U);
  EXPECT_TRUE(c[0].suppressed);
  EXPECT_EQ(c[0].silence_id, "s1");
  EXPECT_FALSE(c[1].suppressed);
  EXPECT_EQ(e.active().size(), 2U);  // kept all the same

  // A rule by type and regex, added while an alarm is active: that alarm is suppressed now.
  const auto crc_changes =
      feed(e, {fault(crc, FaultState::raised, "leaf02/Ethernet9", 2'000, "FCS errors 5/s")});
  ASSERT_FALSE(crc_changes[0].suppressed);
  out.clear();
  ASSERT_TRUE(e.add_silence({.id = "s2",
                             .entity = "",
                             .type = "fault_crc",
                             .regex = "FCS errors [0-9]+",
                             .expires_ms = 50'000,
                             .creator = "bob",
                             .reason = "known bad cable",
                             .created_ms = 3'000},
                            3'000, out));
  ASSERT_EQ(kinds(out), std::vector<K>{K::suppressed});
  EXPECT_EQ(out[0].id, crc_changes[0].id);
  EXPECT_EQ(out[0].actor, "bob");
  EXPECT_EQ(out[0].silence_id, "s2");
  // The regex must match as well: another crc alarm whose detail does not is not suppressed.
  const auto other = feed(e, {fault(crc, FaultState::raised, "leaf02/Ethernet10", 4'000, "symbol errors")});
  EXPECT_FALSE(other[0].suppressed);

  // Expiry removes s2: its alarm is unsuppressed.
  out.clear();
  e.expire_silences(49'999, out);
  EXPECT_TRUE(out.empty());
  e.expire_silences(50'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::unsuppressed});
  EXPECT_FALSE(out[0].suppressed);
  EXPECT_EQ(e.silences().size(), 1U);

  // Removing s1 unsuppresses leaf01's alarm; removing it twice is false.
  out.clear();
  EXPECT_TRUE(e.remove_silence("s1", "carol", 60'000, out));
  ASSERT_EQ(kinds(out), std::vector<K>{K::unsuppressed});
  EXPECT_EQ(out[0].entity, "leaf01/Ethernet1");
  EXPECT_EQ(out[0].actor, "carol");
  EXPECT_FALSE(e.remove_silence("s1", "carol", 60'000, out));
}

TEST(AlarmEngine, ASuppressedAlarmMovesToTheNextMatchingRuleWhenItsRuleGoes) {
  AlarmEngine e;
  std::vector<AlarmChange> out;
  const Silence a{.id = "a", .entity = "leaf01/*", .reason = "r"};
  const Silence b{.id = "b", .entity = "leaf01/Ethernet1", .reason = "r"};
  ASSERT_TRUE(e.add_silence(a, 0, out));
  ASSERT_TRUE(e.add_silence(b, 0, out));
  const auto c = feed(e, {fault(kpi_pattern("x"), FaultState::raised, "leaf01/Ethernet1", 1'000)});
  EXPECT_EQ(c[0].silence_id, "a");
  out.clear();
  ASSERT_TRUE(e.remove_silence("a", "", 2'000, out));
  ASSERT_EQ(kinds(out), std::vector<K>{K::suppressed});
  EXPECT_EQ(out[0].silence_id, "b");
  EXPECT_TRUE(out[0].suppressed);
}

TEST(AlarmEngine, SilenceRulesAreCheckedAndCapped) {
  AlarmEngine e({.max_silences = 2});
  std::vector<AlarmChange> out;
  auto field_of = [](const Result<void>& r) { return r ? std::string("ok") : r.error().fields.at(0).field; };
  EXPECT_EQ(field_of(e.add_silence({.id = "x", .reason = "r"}, 0, out)), "entity");
  EXPECT_EQ(field_of(e.add_silence({.id = "x", .regex = "(unclosed", .reason = "r"}, 0, out)), "regex");
  EXPECT_EQ(field_of(e.add_silence({.id = "x", .type = "t"}, 0, out)), "reason");
  EXPECT_EQ(field_of(e.add_silence({.id = "x", .entity = std::string(2000, 'a'), .reason = "r"}, 0, out)),
            "entity");
  ASSERT_TRUE(e.add_silence({.id = "x", .type = "t", .reason = "r"}, 0, out));
  auto dup = e.add_silence({.id = "x", .type = "t", .reason = "r"}, 0, out);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().kind, Error::Kind::conflict);
  ASSERT_TRUE(e.add_silence({.id = "y", .type = "t", .reason = "r"}, 0, out));
  auto full = e.add_silence({.id = "z", .type = "t", .reason = "r"}, 0, out);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().kind, Error::Kind::unprocessable);
}

TEST(AlarmEngine, MemoryIsCappedEvictingTheOldestClearedAlarm) {
  AlarmEngine e({.max_alarms = 3, .flap_transitions = 10});
  const auto p = kpi_pattern("p");
  feed(e, {fault(p, FaultState::raised, "a", 1'000), fault(p, FaultState::raised, "b", 2'000),
           fault(p, FaultState::raised, "c", 3'000)});
  // Every slot active: a fourth alarm is dropped and counted.
  EXPECT_TRUE(feed(e, {fault(p, FaultState::raised, "d", 4'000)}).empty());
  EXPECT_EQ(e.stats().dropped, 1U);
  EXPECT_EQ(e.size(), 3U);
  // Clear b then a: a new alarm evicts the oldest cleared one (b).
  feed(e, {fault(p, FaultState::cleared, "b", 5'000), fault(p, FaultState::cleared, "a", 6'000)});
  const auto d = feed(e, {fault(p, FaultState::raised, "d", 7'000)});
  ASSERT_EQ(kinds(d), std::vector<K>{K::raised});
  EXPECT_EQ(e.stats().evicted, 1U);
  EXPECT_EQ(e.size(), 3U);
  // a is still held (its reopen works); b is gone (a new alarm, which needs a slot: a is evicted).
  EXPECT_EQ(kinds(feed(e, {fault(p, FaultState::raised, "a", 8'000)})), std::vector<K>{K::reopened});
  EXPECT_TRUE(feed(e, {fault(p, FaultState::raised, "b", 9'000)}).empty());  // a, c, d active: dropped
  EXPECT_EQ(e.stats().dropped, 2U);
}

TEST(AlarmEngine, RestoredAlarmsKeepTheirIdsAndClearUnlessRaisedAgain) {
  AlarmEngine before({.oneshot_clear_ms = 60'000});
  const auto p = kpi_pattern("optics-low");
  const auto a = feed(before, {fault(p, FaultState::raised, "leaf01/Ethernet1", 1'000)});
  const auto b = feed(before, {fault(p, FaultState::raised, "leaf01/Ethernet2", 2'000)});
  ASSERT_TRUE(before.acknowledge(a[0].id, "alice", "on it", 3'000));

  AlarmEngine after({.oneshot_clear_ms = 60'000});
  const auto active = before.active();
  after.restore(active);
  ASSERT_EQ(after.active().size(), 2U);
  EXPECT_EQ(after.find(a[0].id)->acknowledged_by, "alice");
  EXPECT_EQ(after.now_ms(), 2'000);
  // The matcher raises the first again (its condition still holds): the same alarm, acknowledged still.
  const auto again = feed(after, {fault(p, FaultState::raised, "leaf01/Ethernet1", 30'000)});
  ASSERT_EQ(kinds(again), std::vector<K>{K::updated});
  EXPECT_EQ(again[0].id, a[0].id);
  EXPECT_EQ(again[0].state, AlarmState::acknowledged);
  EXPECT_EQ(again[0].count, 2U);
  // The second never comes back: it clears 60 s after its last time; the first stays.
  std::vector<AlarmChange> out;
  after.advance(200'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::cleared});
  EXPECT_EQ(out[0].id, b[0].id);
  EXPECT_NE(out[0].detail.find("since the restart"), std::string::npos);
  EXPECT_EQ(after.active().size(), 1U);
}

TEST(AlarmEngine, ARestoredAlarmWhoseRuleExpiredMeanwhileIsUnsuppressed) {
  AlarmEngine before;
  std::vector<AlarmChange> out;
  ASSERT_TRUE(before.add_silence({.id = "gone", .entity = "leaf01/*", .reason = "r"}, 0, out));
  ASSERT_TRUE(before.add_silence({.id = "kept", .entity = "leaf02/*", .reason = "r"}, 0, out));
  feed(before, {fault(kpi_pattern("p"), FaultState::raised, "leaf01/Ethernet1", 1'000),
                fault(kpi_pattern("p"), FaultState::raised, "leaf02/Ethernet1", 1'000),
                fault(kpi_pattern("p"), FaultState::raised, "leaf03/Ethernet1", 1'000)});
  AlarmEngine after;
  const auto active = before.active();
  after.restore(active);
  out.clear();
  ASSERT_TRUE(after.add_silence({.id = "kept", .entity = "leaf02/*", .reason = "r"}, 0, out));
  ASSERT_TRUE(after.add_silence({.id = "new", .entity = "leaf03/*", .reason = "r"}, 0, out));
  ASSERT_EQ(kinds(out), std::vector<K>{K::suppressed});  // leaf03 by the new rule
  out.clear();
  after.resync_silences(5'000, out);
  ASSERT_EQ(kinds(out), std::vector<K>{K::unsuppressed});  // leaf01: its rule is gone
  EXPECT_EQ(out[0].entity, "leaf01/Ethernet1");
  out.clear();
  after.resync_silences(6'000, out);
  EXPECT_TRUE(out.empty());
}

TEST(AlarmEngine, ALinkFaultIsKeyedByItsLinkSoEitherEndClearsIt) {
  AlarmEngine e;
  const auto p = kpi_pattern("symbol-errors-both-ends", FaultSeverity::major, PatternScope::link_both_ends);
  auto raise = fault(p, FaultState::raised, "leaf01/Ethernet1", 1'000);
  raise.peer = "spine01/Ethernet7";
  raise.root_cause = "leaf01/Ethernet1<->spine01/Ethernet7";
  const auto raised = feed(e, {raise});
  ASSERT_EQ(raised.size(), 1U);
  EXPECT_EQ(raised[0].role, RootCauseRole::link);
  EXPECT_EQ(raised[0].peer, "spine01/Ethernet7");
  auto clear = fault(p, FaultState::cleared, "spine01/Ethernet7", 2'000);
  clear.root_cause = raise.root_cause;
  const auto cleared = feed(e, {clear});
  ASSERT_EQ(kinds(cleared), std::vector<K>{K::cleared});
  EXPECT_EQ(cleared[0].id, raised[0].id);
}

TEST(AlarmEngine, EventTimeNeverGoesBackAndDeadlinesRunInOrder) {
  AlarmEngine e({.oneshot_clear_ms = 10'000});
  const auto p = log_pattern("oneshot", false);
  feed(e, {fault(p, FaultState::raised, "x", 1'000), fault(p, FaultState::raised, "y", 5'000)});
  std::vector<AlarmChange> out;
  e.advance(3'000, out);
  e.advance(2'000, out);  // ignored
  EXPECT_EQ(e.now_ms(), 5'000);
  EXPECT_TRUE(out.empty());
  // A late fault (before the clock) counts into its alarm and does not move the clock back.
  feed(e, {fault(p, FaultState::raised, "x", 4'000)});
  EXPECT_EQ(e.now_ms(), 5'000);
  e.advance(1'000'000, out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[0].entity, "x");  // deadline 14 s
  EXPECT_EQ(out[0].cleared_ms, 14'000);
  EXPECT_EQ(out[1].entity, "y");  // deadline 15 s
  EXPECT_EQ(out[1].cleared_ms, 15'000);
}

TEST(AlarmEngine, FaultsWithoutAPatternAreCountedAndIgnored) {
  AlarmEngine e;
  FaultMatch f;
  f.entity = "x";
  std::vector<AlarmChange> out;
  e.observe(std::span<const FaultMatch>(&f, 1), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(e.stats().invalid, 1U);
}

TEST(AlarmOptions, ValidationNamesTheOption) {
  EXPECT_TRUE(validate(AlarmOptions{}));
  auto bad = validate(AlarmOptions{.flap_transitions = 1});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().fields.at(0).field, "flap_transitions");
  EXPECT_FALSE(validate(AlarmOptions{.max_alarms = 0}));
}

TEST(AlarmNames, RoundTrip) {
  for (const auto s : {AlarmState::raised, AlarmState::acknowledged, AlarmState::cleared})
    EXPECT_EQ(parse_alarm_state(to_string(s)), s);
  for (const auto k : {K::raised, K::reopened, K::updated, K::flapping, K::acknowledged, K::cleared,
                       K::suppressed, K::unsuppressed})
    EXPECT_EQ(parse_alarm_change_kind(to_string(k)), k);
  EXPECT_EQ(parse_fault_severity("critical"), FaultSeverity::critical);
  EXPECT_EQ(parse_fault_severity("bad"), std::nullopt);
  EXPECT_EQ(parse_root_cause_role("switch"), RootCauseRole::switch_device);
}

}  // namespace
}  // namespace hsns::brain
