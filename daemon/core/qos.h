// RoCE QoS conformance (read-only): per parameter-plane netdev, read PFC enable per priority, the trust
// mode and RoCE ECN enable per priority where the NIC exposes them, and compare with the desired profile.
//
// Sources, under the configurable sysfs root (tests use recorded fixtures in tests/fixtures/daemon/):
//   class/net/<dev>/qos/pfc    "Priority: 0 1 2 3 4 5 6 7" / "Enabled: 0 0 0 1 0 0 0 0" (mlx5 mlnx_qos
//                              sysfs layout) or one line of eight 0/1 values
//   class/net/<dev>/qos/trust  "dscp" or "pcp" (also "Priority trust state: dscp")
//   class/net/<dev>/ecn/roce_np/enable/<prio>, .../roce_rp/enable/<prio>   "0" or "1"
// DCB netlink (DCB_CMD_IEEE_GET) is not read yet; a NIC exposing nothing of the above is "unknown".
//
// Contract: check_qos() never fails; unreadable items are absent and reported as findings only when
// something else is exposed. state: "conformant" (everything exposed matches), "drift" (some setting
// differs; findings say which), "unknown" (nothing exposed). No threads, reads only.
#pragma once

#include <string>
#include <vector>

#include "config.h"

namespace hsns::daemon {

struct QosReport {
  std::string netdev;
  std::string state;
  std::vector<std::string> findings;
};

QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile);

}  // namespace hsns::daemon
