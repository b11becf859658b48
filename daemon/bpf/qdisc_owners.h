// The ownership rule of the clsact qdiscs hsnsd attaches tc filters to, as pure functions (no kernel): the
// attach layer (tc_attach.h) applies them to the record it keeps per netdev in a pinned map, and the unit
// tests check them directly.
//
// A record says which hsns users (isolation, the flow probe) hold the qdisc and whether hsns created it.
// `present` is what the kernel says now: the users whose filters sit on the qdisc at their own slots.
// Filters cannot move between qdiscs, so a record none of whose users still has a filter there describes
// a qdisc that is gone (deleted by hand, netdev recreated): it is stale and no longer proves ownership.
//
// Contract:
// - after_hold(before, user, created_now, present): the record once `user` holds the qdisc. created_now
//   (bpf_tc_hook_create made it just now): hsns created it and user is its only holder (earlier holders'
//   filters went with the old qdisc). Otherwise the qdisc existed: a live record (one of its users present)
//   keeps its created flag and gains user; no record or a stale one: someone else's qdisc, held by user.
// - after_release(before, user, present): user no longer holds it; `present` is taken before user's own
//   filters are removed. The remaining holders are the record's other users present. None left: the record
//   is dropped, and the qdisc is deleted iff hsns created it and the record is live. A stale record is
//   dropped without deleting anything (the qdisc there now may be someone else's). No record: nothing to
//   do, never delete (a qdisc hsns did not record is not hsns's).
// - A user's bit is dropped whenever its filter is gone, so a crashed user never pins the qdisc forever,
//   and a user attached twice counts once.
#pragma once

#include <cstdint>
#include <optional>

namespace hsns::daemon::bpf {

// The users of the attach layer, one bit each (the value stored in the registry: do not renumber).
enum class TcUser : std::uint32_t { isolation = 1u << 0, flow_probe = 1u << 1 };
inline constexpr TcUser kTcUsers[] = {TcUser::isolation, TcUser::flow_probe};

constexpr std::uint32_t bit(TcUser user) {
  return static_cast<std::uint32_t>(user);
}
const char* tc_user_name(TcUser user);

// The value of one registry entry (layout shared with the pinned map: fixed width, no holes).
struct QdiscRecord {
  std::uint32_t users = 0;  // bits of TcUser holding the qdisc
  std::uint32_t flags = 0;  // kQdiscCreatedByHsns
  friend bool operator==(const QdiscRecord&, const QdiscRecord&) = default;
};
inline constexpr std::uint32_t kQdiscCreatedByHsns = 1u;

struct ReleaseDecision {
  std::optional<QdiscRecord> after;  // nullopt: drop the record
  bool delete_qdisc = false;
};

QdiscRecord after_hold(const std::optional<QdiscRecord>& before, TcUser user, bool created_now,
                       std::uint32_t present);
ReleaseDecision after_release(const std::optional<QdiscRecord>& before, TcUser user, std::uint32_t present);

}  // namespace hsns::daemon::bpf
