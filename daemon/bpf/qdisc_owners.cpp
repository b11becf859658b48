#include "qdisc_owners.h"

namespace hsns::daemon::bpf {

const char* tc_user_name(TcUser user) {
  switch (user) {
    case TcUser::isolation:
      return "isolation";
    case TcUser::flow_probe:
      return "flow probe";
  }
  return "?";
}

QdiscRecord after_hold(const std::optional<QdiscRecord>& before, TcUser user, bool created_now,
                       std::uint32_t present) {
  if (created_now) return QdiscRecord{bit(user), kQdiscCreatedByHsns};
  if (before && (before->users & present) != 0) {
    return QdiscRecord{(before->users & present) | bit(user), before->flags};
  }
  return QdiscRecord{bit(user), 0};
}

ReleaseDecision after_release(const std::optional<QdiscRecord>& before, TcUser user, std::uint32_t present) {
  if (!before) return {};
  const std::uint32_t remaining = before->users & ~bit(user) & present;
  if (remaining != 0) return ReleaseDecision{QdiscRecord{remaining, before->flags}, false};
  const bool live = (before->users & present) != 0;
  return ReleaseDecision{std::nullopt, live && (before->flags & kQdiscCreatedByHsns) != 0};
}

}  // namespace hsns::daemon::bpf
