// The clsact ownership rule (daemon/bpf/qdisc_owners.h) as pure functions: who holds a qdisc, when hsns
// may delete it, and how stale records (a qdisc replaced behind hsns's back) lose their claim.
#include "bpf/qdisc_owners.h"

#include <gtest/gtest.h>

namespace hsns::daemon::bpf {
namespace {

constexpr std::uint32_t kIso = bit(TcUser::isolation);
constexpr std::uint32_t kProbe = bit(TcUser::flow_probe);
constexpr QdiscRecord created(std::uint32_t users) {
  return QdiscRecord{users, kQdiscCreatedByHsns};
}
constexpr QdiscRecord foreign(std::uint32_t users) {
  return QdiscRecord{users, 0};
}

TEST(QdiscOwners, FirstUserThatCreatesTheQdiscOwnsIt) {
  EXPECT_EQ(after_hold(std::nullopt, TcUser::isolation, true, 0), created(kIso));
}

TEST(QdiscOwners, QdiscThatExistedWithoutRecordIsSomeoneElses) {
  EXPECT_EQ(after_hold(std::nullopt, TcUser::flow_probe, false, 0), foreign(kProbe));
  // Even when another hsns user's filter is on it: without a record nobody recorded creating it.
  EXPECT_EQ(after_hold(std::nullopt, TcUser::flow_probe, false, kIso), foreign(kProbe));
}

TEST(QdiscOwners, SecondUserJoinsAndKeepsTheCreatedFlag) {
  EXPECT_EQ(after_hold(created(kIso), TcUser::flow_probe, false, kIso), created(kIso | kProbe));
  EXPECT_EQ(after_hold(foreign(kIso), TcUser::flow_probe, false, kIso), foreign(kIso | kProbe));
}

TEST(QdiscOwners, AttachingTwiceCountsOnce) {
  const QdiscRecord once = after_hold(std::nullopt, TcUser::isolation, true, 0);
  const QdiscRecord twice = after_hold(once, TcUser::isolation, false, kIso);
  EXPECT_EQ(twice, created(kIso));
  // One release is enough to let the qdisc go.
  const ReleaseDecision d = after_release(twice, TcUser::isolation, kIso);
  EXPECT_FALSE(d.after.has_value());
  EXPECT_TRUE(d.delete_qdisc);
}

TEST(QdiscOwners, LastOfTwoUsersDeletesWhatHsnsCreated) {
  const QdiscRecord both = created(kIso | kProbe);
  const ReleaseDecision first = after_release(both, TcUser::flow_probe, kIso | kProbe);
  ASSERT_TRUE(first.after.has_value());
  EXPECT_EQ(*first.after, created(kIso));
  EXPECT_FALSE(first.delete_qdisc);
  const ReleaseDecision last = after_release(first.after, TcUser::isolation, kIso);
  EXPECT_FALSE(last.after.has_value());
  EXPECT_TRUE(last.delete_qdisc);
}

TEST(QdiscOwners, ForeignQdiscIsNeverDeleted) {
  const ReleaseDecision first = after_release(foreign(kIso | kProbe), TcUser::isolation, kIso | kProbe);
  EXPECT_EQ(first.after, foreign(kProbe));
  EXPECT_FALSE(first.delete_qdisc);
  const ReleaseDecision last = after_release(first.after, TcUser::flow_probe, kProbe);
  EXPECT_FALSE(last.after.has_value());
  EXPECT_FALSE(last.delete_qdisc);
}

TEST(QdiscOwners, ReleaseWithoutRecordDoesNothing) {
  const ReleaseDecision d = after_release(std::nullopt, TcUser::isolation, kIso | kProbe);
  EXPECT_FALSE(d.after.has_value());
  EXPECT_FALSE(d.delete_qdisc);
}

TEST(QdiscOwners, HolderWhoseFilterIsGoneNoLongerCounts) {
  // The probe crashed and its filter was removed by hand: isolation's release may delete the qdisc.
  const ReleaseDecision d = after_release(created(kIso | kProbe), TcUser::isolation, kIso);
  EXPECT_FALSE(d.after.has_value());
  EXPECT_TRUE(d.delete_qdisc);
  // And a join drops it too.
  EXPECT_EQ(after_hold(created(kIso | kProbe), TcUser::isolation, false, kIso), created(kIso));
}

TEST(QdiscOwners, StaleRecordLosesItsClaim) {
  // hsns made the qdisc, it was deleted by hand (with every filter) and someone else made a new one.
  EXPECT_EQ(after_hold(created(kIso), TcUser::isolation, false, 0), foreign(kIso));
  EXPECT_EQ(after_hold(created(kIso), TcUser::flow_probe, false, 0), foreign(kProbe));
  // Released while stale: the record goes, the (someone else's) qdisc stays.
  const ReleaseDecision d = after_release(created(kIso), TcUser::isolation, 0);
  EXPECT_FALSE(d.after.has_value());
  EXPECT_FALSE(d.delete_qdisc);
}

TEST(QdiscOwners, RecreatedQdiscStartsOver) {
  // Our qdisc was deleted (the probe's filter with it); isolation's next attach makes a new one.
  EXPECT_EQ(after_hold(created(kIso | kProbe), TcUser::isolation, true, 0), created(kIso));
  EXPECT_EQ(after_hold(foreign(kProbe), TcUser::isolation, true, 0), created(kIso));
}

TEST(QdiscOwners, UsersHaveNames) {
  EXPECT_STREQ(tc_user_name(TcUser::isolation), "isolation");
  EXPECT_STREQ(tc_user_name(TcUser::flow_probe), "flow probe");
}

}  // namespace
}  // namespace hsns::daemon::bpf
