// The RDMA queue-pair inventory as an hsnsd component (daemon/core/component.h): every interval it reads
// the host's QPs over RDMA netlink (rdma_netlink.h) and keeps the last inventory for the telemetry report
// (hsns/proto/qp.h), with the RoCE v2 UDP source port of each connected RC QP (roce_sport.h).
//
// Contract:
// - start() reads once and succeeds whatever the read answers: hsnsd runs without RDMA. ready() once
//   started. tick() reads when the interval (the configuration's `interval`) is due; trigger() makes the
//   next tick read; reload() takes the new interval.
// - A read that succeeds replaces the inventory. A kernel without RDMA netlink ("absent") empties it: the
//   host has no QPs; this is logged once (notice) until RDMA netlink appears, and counted every interval.
//   Any other failed read keeps the previous inventory (its ts_ms tells its age), is counted by reason,
//   and logged (warning) when its text changes. A failed CM ID dump leaves the QPs without addresses,
//   counted too.
// - to_inventory(): pid and comm (from <procfs_root>/<pid>/comm; the kernel's module name for kernel QPs);
//   sport for RC QPs with a remote QP on a RoCE v2 port: an Ethernet link layer with a RoCE v2 GID in
//   the port's GID table (inventory.h), computed with flow label 0 (RDMA netlink does not expose a QP's
//   label).
// - Metrics: hsns_rdma_qps{device,port,state,type} (QPs of the last inventory; series of combinations
//   that vanished are removed), hsns_rdma_qp_reads_total, hsns_rdma_qp_read_errors_total{reason}
//   (rdma::kNlErrorReasons, all exported from the start), hsns_rdma_netlink_available (0 when the kernel
//   has no RDMA netlink), hsns_rdma_qp_last_read_timestamp_seconds.
// - Every method on the main thread; the source is called from there.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "component.h"
#include "hsns/proto/qp.h"
#include "rdma_netlink.h"

namespace hsns::daemon {

using QpSnapshotSource = std::function<tl::expected<rdma::QpSnapshot, rdma::NlError>()>;

// (device, port) pairs whose QPs send RoCE v2.
using RoceV2Ports = std::set<std::pair<std::string, std::uint32_t>>;

proto::QpInventory to_inventory(const rdma::QpSnapshot& snapshot, const std::string& host, std::int64_t ts_ms,
                                const std::string& procfs_root, const RoceV2Ports& roce_v2_ports);

// The RoCE v2 ports of the sysfs tree under config.sysfs_root (inventory.h's discovery).
RoceV2Ports discover_roce_v2_ports(const DaemonConfig& config);

class RdmaQpComponent final : public Component {
 public:
  RdmaQpComponent(const DaemonConfig& config, std::string host, prometheus::Registry& registry,
                  QpSnapshotSource source = rdma::read_qp_snapshot);

  std::string_view name() const override { return "rdma_qp"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override { config_ = config; }
  void trigger() override { next_ = Clock::time_point::min(); }
  bool ready() const override { return started_; }

  // The last inventory (empty before the first successful read and while RDMA netlink is absent).
  const proto::QpInventory& inventory() const { return inventory_; }

 private:
  void read_once();
  void export_counts();
  void count_error(const rdma::NlError& error);

  DaemonConfig config_;
  std::string host_;
  QpSnapshotSource source_;
  prometheus::Family<prometheus::Gauge>& qps_family_;
  prometheus::Family<prometheus::Counter>& errors_family_;
  prometheus::Counter& reads_;
  prometheus::Gauge& available_;
  prometheus::Gauge& last_read_;
  std::map<std::map<std::string, std::string>, prometheus::Gauge*> qp_series_;
  proto::QpInventory inventory_;
  Clock::time_point next_ = Clock::time_point::min();
  bool started_ = false;
  bool absent_logged_ = false;
  std::string last_warning_;
};

}  // namespace hsns::daemon
