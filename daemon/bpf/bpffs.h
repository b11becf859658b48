// The BPF filesystem the daemon pins its maps in.
//
// Contract:
// - ensure_bpffs(mount_point) mounts bpffs (mode 0700) at mount_point unless a bpffs is mounted there
//   already; idempotent. Needs CAP_SYS_ADMIN only when it has to mount (systemd mounts /sys/fs/bpf at boot).
// - ensure_pin_dir(pin_dir) is what isolation and the flow probe call before pinning: it mounts bpffs at
//   kBpffsMount when pin_dir lies under it and it is not mounted (e.g. inside `ip netns exec`, which hides
//   it), creates pin_dir and its parents (mode 0700), and fails unless pin_dir is on a bpffs.
// - bpffs_root(path) is the top directory of the bpffs instance that holds path (walking up while the
//   parent is the same filesystem): where the attach layer keeps its qdisc registry, so that every user
//   pinning on one bpffs (one mount of it, or a bind mount of a part of it) shares one registry.
// - Errors name the path and the system's reason. Thread-safe (no state).
#pragma once

#include <string>

#include "hsns/error.h"

namespace hsns::daemon::bpf {

inline constexpr const char* kBpffsMount = "/sys/fs/bpf";

bool is_bpffs(const std::string& path);
Result<void> ensure_bpffs(const std::string& mount_point = kBpffsMount);
Result<void> ensure_pin_dir(const std::string& pin_dir);
Result<std::string> bpffs_root(const std::string& path);

}  // namespace hsns::daemon::bpf
