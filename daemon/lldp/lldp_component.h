// The LLDP receiver as an hsnsd component (daemon/core/component.h, name "lldp"): a passive listener on
// every parameter-plane port (the NPU netdevs of the configuration), keeping each port's neighbours for
// the report (neighbors()) and on /metrics.
//
// Contract:
// - Receive only: hsnsd never sends an LLDPDU. One LldpSocket per configured netdev; a netdev that does
//   not exist (yet), or whose socket fails, is logged (once per distinct error) and retried at every
//   tick; a netdev whose ifindex changed (deleted and made again) gets a new socket. start() never fails
//   and ready() is true from the start: LLDP is never a reason to hold READY=1 back.
// - tick() drains every socket (at most kMaxFramesPerTick frames per port, so a flood cannot hold the
//   main loop), parses each frame (lldpdu.h), updates the NeighborTable (TTL expiry, TTL 0 removes at
//   once), expires what ran out, and asks for its next tick after kLldpPoll or at the next expiry,
//   whichever is sooner. Frames queue in the kernel between ticks (the socket's receive buffer). The main
//   loop ticks every component whenever any of them is due: a tick before the time this component asked
//   for does nothing and asks for that time again (reload() makes the next tick due at once).
// - reload() follows the configuration's NPU list: a port that left it is closed, its neighbours and its
//   hsns_lldp_neighbors series dropped (its counters stay); a new one is opened at once.
// - Metrics (hsns_lldp_*): neighbors{netdev} (gauge), frames_total{netdev,result} (result "ok", a parse
//   failure's reason_name(), "oversize" for a frame over kMaxFrameBytes, "table_full" for a neighbour
//   refused by kMaxNeighborsPerPort), neighbor_info{netdev,chassis_id,port_id,system_name} (1 per
//   neighbour), expired_total, shutdowns_total (neighbours removed by a TTL-0 LLDPDU),
//   skipped_tlvs_total{netdev,kind="org_specific"|"reserved"}, socket_errors_total{netdev},
//   ports_listening (gauge).
// - Threads: the main thread only (as every component); metrics are thread-safe for the exposer.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "component.h"
#include "hsns/proto/lldp.h"
#include "lldp_socket.h"
#include "neighbor_table.h"

namespace hsns::daemon {

inline constexpr auto kLldpPoll = std::chrono::seconds(1);
inline constexpr std::size_t kMaxFramesPerTick = 256;

class LldpComponent final : public Component {
 public:
  LldpComponent(const DaemonConfig& config, std::string host, prometheus::Registry& registry);

  std::string_view name() const override { return "lldp"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override;
  void stop() override;
  bool ready() const override { return true; }

  // The neighbours heard so far, as the report section (ts_ms = now).
  proto::LldpNeighbors neighbors() const;
  const lldp::NeighborTable& table() const { return table_; }

 private:
  struct Port {
    int npu = 0;
    std::optional<lldp::LldpSocket> socket;
    std::string error;  // the last open/read error logged ("" once open)
  };

  void set_ports(const DaemonConfig& config);
  void ensure_open(const std::string& netdev, Port& port);
  void receive(const std::string& netdev, std::span<const std::uint8_t> frame, bool truncated,
               Clock::time_point now);
  void count_frame(const std::string& netdev, const std::string& result);
  void refresh_gauges();

  std::string host_;
  std::map<std::string, Port> ports_;  // by netdev
  lldp::NeighborTable table_;
  bool table_changed_ = true;
  Clock::time_point next_tick_ = Clock::time_point::min();  // the time tick() last asked for

  prometheus::Family<prometheus::Gauge>& neighbors_family_;
  prometheus::Family<prometheus::Counter>& frames_family_;
  prometheus::Family<prometheus::Gauge>& info_family_;
  prometheus::Family<prometheus::Counter>& skipped_family_;
  prometheus::Family<prometheus::Counter>& socket_errors_family_;
  prometheus::Counter& expired_;
  prometheus::Counter& shutdowns_;
  prometheus::Gauge& ports_listening_;
  std::vector<prometheus::Gauge*> info_;  // the neighbor_info series now exposed
};

}  // namespace hsns::daemon
