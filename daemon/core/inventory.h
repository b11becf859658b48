// Host inventory: RDMA devices (libibverbs device list plus sysfs attributes under a configurable root),
// their netdevs, and the NPU index -> netdev map from the configuration, rendered as the aggregator's
// registration body (PUT /api/v1/hosts/{host}; the wire contract's host-registration, hsns/proto/agent.h).
//
// Contract:
// - discover() never fails: a host without RDMA devices (no /sys/class/infiniband, no verbs provider)
//   has an empty `rdma` list, which is normal. Unreadable attributes are left empty/zero.
// - An NPU whose netdev does not exist (yet) is still listed, with present=false and an all-zero MAC,
//   so the aggregator can render its port and hsnsd can report it failed.
// - Pure reads of sysfs (and libibverbs when sysfs_root is the real /sys); no threads.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config.h"

namespace hsns::daemon {

struct RdmaPort {
  std::string device;  // "mlx5_0"
  int port = 0;
  std::string state;       // "ACTIVE"
  std::string link_layer;  // "Ethernet" (RoCE) or "InfiniBand"
  long rate_mbps = 0;
  std::string netdev;                    // "" when sysfs names none
  std::vector<std::string> rocev2_gids;  // GIDs whose type is "RoCE v2"
  bool operator==(const RdmaPort&) const = default;
};

struct NpuEntry {
  int index = 0;
  std::string netdev;
  std::string mac;
  std::string rdma_device;
  long link_speed_mbps = 0;
  bool present = false;
  bool operator==(const NpuEntry&) const = default;
};

struct Inventory {
  std::vector<RdmaPort> rdma;
  std::vector<NpuEntry> npus;
  bool operator==(const Inventory&) const = default;
};

Inventory discover(const DaemonConfig& config);
std::string registration_body(const Inventory& inventory);

// The first line of a sysfs attribute file without its trailing newline, spaces and carriage return;
// nullopt when the file cannot be read (missing, or EINVAL from an attribute such as the speed of a link
// that is down).
std::optional<std::string> read_sysfs_line(const std::filesystem::path& path);

}  // namespace hsns::daemon
