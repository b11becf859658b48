// The counters component of hsnsd ("counters"): every interval it reads the parameter-plane ports'
// counters, the configured NPUs' netdevs (sysfs statistics, ethtool statistics, PFC pause per priority)
// and the RDMA ports on those netdevs (sysfs counters/ and hw_counters/), turns them into deltas and
// rates (counter_delta.h), keeps the last snapshot for the telemetry report (hsns/proto/counters.h) and
// exports them on /metrics.
//
// Contract:
// - start() reads once (interval_ms 0, deltas 0) and succeeds whatever it finds: missing or unreadable
//   files are counted in hsns_counters_read_errors_total{source} and in the snapshot's read_errors,
//   logged once per path, and never stop hsnsd. tick() reads again when `interval` (DaemonConfig) has
//   passed since the last reading; trigger() makes the next tick read; reload() takes the new NPUs,
//   sysfs root and interval from the next reading on (counters keep their history).
// - Which ports: counter_targets() of the inventory (daemon/core/inventory.h) under sysfs_root: every
//   NPU netdev of the configuration, and every RDMA device port whose netdev is one of them.
// - Ethtool statistics come from the EthtoolSource given (read_ethtool_stats in hsnsd, in hsnsd's
//   network namespace); statistic names a snapshot cannot carry (proto::is_counter_name) and repeated
//   names are left out.
// - Metrics (base units, _total counters that follow the hardware counters: the first reading adds the
//   counter's value, later ones its delta, so a reset or wrap never makes them go down):
//     hsns_rdma_port_bytes_total{device,port,direction}       port_xmit_data/port_rcv_data, bytes
//     hsns_rdma_port_packets_total{device,port,direction}     port_xmit_packets/port_rcv_packets
//     hsns_rdma_port_events_total{device,port,counter}       the other counters/ files
//     hsns_rdma_hw_events_total{device,port,counter}         every hw_counters/ file but lifespan
//     hsns_netdev_bytes_total{netdev,direction}, hsns_netdev_packets_total{netdev,direction},
//     hsns_netdev_statistic_total{netdev,counter}             sysfs statistics/
//     hsns_port_pause_frames_total{netdev,priority,direction} PFC pause frames (ethtool, mlx5 names)
//     hsns_port_pause_duration_seconds_total{netdev,priority,direction}  (mlx5 counts microseconds)
//     hsns_counters_read_errors_total{source}, hsns_counters_discontinuities_total{kind=reset|wrap},
//     hsns_counters_readings_total
//   (promtool refuses a metric name that contains "counter": hence _events_total.)
//   Ethtool statistics other than the pause ones are in the snapshot only: drivers mix counters with
//   values that are not (veth's peer_ifindex).
// - Main thread only (component.h).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "component.h"
#include "counter_delta.h"
#include "ethtool_stats.h"
#include "hsns/proto/counters.h"
#include "inventory.h"
#include "sysfs_counters.h"

namespace hsns::daemon::counters {

struct CounterTargets {
  std::vector<std::string> netdevs;
  std::vector<std::pair<std::string, int>> rdma_ports;  // device, port
  bool operator==(const CounterTargets&) const = default;
};
CounterTargets counter_targets(const Inventory& inventory);

class CountersComponent final : public Component {
 public:
  CountersComponent(const DaemonConfig& config, prometheus::Registry& registry,
                    EthtoolSource ethtool = read_ethtool_stats);
  std::string_view name() const override { return "counters"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override { config_ = config; }
  void trigger() override { next_read_ = Clock::time_point::min(); }
  bool ready() const override { return started_; }

  // The last reading, for the telemetry report.
  const proto::CountersSnapshot& snapshot() const { return snapshot_; }
  // Reads now (start() and tick() call it); exposed so tests can read at chosen instants.
  void read(Clock::time_point now);

 private:
  prometheus::Counter& counter(prometheus::Family<prometheus::Counter>& family,
                               const std::map<std::string, std::string>& labels);
  proto::CounterSample update(const std::string& key, const CounterReading& reading, double interval_s,
                              prometheus::Counter& metric, double metric_scale = 1);
  void read_rdma_port(const std::string& device, int port, double interval_s, std::vector<ReadError>& errors);
  void read_netdev(const std::string& netdev, double interval_s, std::vector<ReadError>& errors);
  void account(const std::vector<ReadError>& errors);

  DaemonConfig config_;
  EthtoolSource ethtool_;
  DeltaTracker tracker_;
  CounterDirectories dirs_;  // the counter directories, held open between readings
  proto::CountersSnapshot snapshot_;
  Clock::time_point last_read_{};
  Clock::time_point next_read_ = Clock::time_point::min();
  bool have_previous_ = false;
  bool started_ = false;
  std::set<std::string> logged_paths_;

  prometheus::Family<prometheus::Counter>& rdma_bytes_;
  prometheus::Family<prometheus::Counter>& rdma_packets_;
  prometheus::Family<prometheus::Counter>& rdma_counter_;
  prometheus::Family<prometheus::Counter>& rdma_hw_counter_;
  prometheus::Family<prometheus::Counter>& netdev_bytes_;
  prometheus::Family<prometheus::Counter>& netdev_packets_;
  prometheus::Family<prometheus::Counter>& netdev_statistic_;
  prometheus::Family<prometheus::Counter>& pause_frames_;
  prometheus::Family<prometheus::Counter>& pause_seconds_;
  prometheus::Family<prometheus::Counter>& read_errors_;
  prometheus::Family<prometheus::Counter>& discontinuities_;
  prometheus::Counter& readings_;
};

}  // namespace hsns::daemon::counters
