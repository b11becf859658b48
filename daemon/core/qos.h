// RoCE QoS conformance (read-only): per parameter-plane netdev, read PFC enable per priority, the trust
// mode, the DSCP -> priority map and RoCE ECN enable per priority where the NIC exposes them, and
// compare with the desired profile.
//
// Sources:
// - sysfs, under the configurable sysfs root (tests use recorded fixtures in tests/fixtures/daemon/):
//   class/net/<dev>/qos/pfc    "Priority: 0 1 2 3 4 5 6 7" / "Enabled: 0 0 0 1 0 0 0 0" (mlx5 mlnx_qos
//                              sysfs layout) or one line of eight 0/1 values
//   class/net/<dev>/qos/trust  "dscp" or "pcp" (also "Priority trust state: dscp")
//   class/net/<dev>/ecn/roce_np/enable/<prio>, .../roce_rp/enable/<prio>   "0" or "1"
// - DCB netlink (dcb.h, DCB_CMD_IEEE_GET), through a DcbSource: the daemon passes read_dcb_qos (the
//   real netdev in its network namespace), tests pass recorded replies. PFC from DCB_ATTR_IEEE_PFC,
//   trust from the apptrust table or the APP table's DSCP entries, the DSCP map from the APP table.
//   ECN has no DCB attribute: sysfs only. A netdev without DCB (veth, lo) simply adds nothing.
// Where both sources expose PFC (or trust) and disagree, one finding names both values
// ("pfc sources disagree: sysfs {3}, dcb {} (expected {3})"). Findings from DCB alone say "(dcb)" or
// start with "dcb"; findings from sysfs alone keep their plain wording.
// With DSCP trust wanted, every PFC (RoCE) priority must have at least one DSCP mapped to it in the DCB
// APP table, and a DCB APP table without any DSCP entry is drift (the classic "lost on reboot").
// A DSCP with APP entries for several priorities, one of them a PFC priority, is drift too.
//
// Contract: check_qos() never fails; unreadable items are absent and reported as findings only when
// something else is exposed (a DCB read error is a finding only when sysfs exposes something).
// state: "conformant" (everything exposed matches), "drift" (some setting differs; findings say
// which), "unknown" (nothing exposed). sources lists what exposed settings ("sysfs", "dcb"). No threads;
// reads only (the DCB source may open a netlink socket).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "config.h"
#include "dcb.h"

namespace hsns::daemon {

struct QosReport {
  std::string netdev;
  std::string state;
  std::vector<std::string> findings;
  std::vector<std::string> sources;           // "sysfs", "dcb": which exposed QoS settings
  std::map<int, std::vector<int>> roce_dscp;  // DCB: each PFC (RoCE) priority -> DSCPs mapped to it
};

// The DCB view of a netdev: read_dcb_qos, or a recorded reply in tests. An error is "unreadable".
using DcbSource = std::function<tl::expected<DcbQos, std::string>(const std::string& netdev)>;

// sysfs only.
QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile);
// sysfs and DCB (an empty dcb means sysfs only).
QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile,
                    const DcbSource& dcb);

}  // namespace hsns::daemon
