#include "lldp_component.h"

#include <algorithm>

#include "hsns/log.h"
#include "metrics.h"

namespace hsns::daemon {

namespace {

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string describe(const lldp::Lldpdu& l) {
  return (l.system_name ? *l.system_name : std::string("(no system name)")) + " port " + l.port_id +
         " (chassis " + l.chassis_id + ", TTL " + std::to_string(l.ttl_s) + " s)";
}

}  // namespace

LldpComponent::LldpComponent(const DaemonConfig& config, std::string host, prometheus::Registry& r)
    : host_(std::move(host)),
      neighbors_family_(prometheus::BuildGauge()
                            .Name("hsns_lldp_neighbors")
                            .Help("LLDP neighbours currently known on each parameter-plane port")
                            .Register(r)),
      frames_family_(prometheus::BuildCounter()
                         .Name("hsns_lldp_frames_total")
                         .Help("LLDP frames received, by port and result (ok, or why the frame was refused)")
                         .Register(r)),
      info_family_(prometheus::BuildGauge()
                       .Name("hsns_lldp_neighbor_info")
                       .Help("1 for each LLDP neighbour known: its chassis ID, port ID and system name")
                       .Register(r)),
      skipped_family_(
          prometheus::BuildCounter()
              .Name("hsns_lldp_skipped_tlvs_total")
              .Help("TLVs of accepted LLDPDUs skipped: organisationally specific or reserved types")
              .Register(r)),
      socket_errors_family_(prometheus::BuildCounter()
                                .Name("hsns_lldp_socket_errors_total")
                                .Help("Failures to open or read a port's LLDP packet socket")
                                .Register(r)),
      expired_(
          add_counter(r, "hsns_lldp_expired_total", "LLDP neighbours forgotten because their TTL ran out")),
      shutdowns_(add_counter(r, "hsns_lldp_shutdowns_total",
                             "LLDP neighbours removed by their shutdown LLDPDU (TTL 0)")),
      ports_listening_(
          add_gauge(r, "hsns_lldp_ports_listening", "Parameter-plane ports with an open LLDP socket")) {
  set_ports(config);
}

tl::expected<void, std::string> LldpComponent::start() {
  for (auto& [netdev, port] : ports_) ensure_open(netdev, port);
  refresh_gauges();
  return {};
}

void LldpComponent::set_ports(const DaemonConfig& config) {
  std::map<std::string, int> wanted;
  for (const auto& [npu, netdev] : config.npus) wanted[netdev] = npu;
  for (auto it = ports_.begin(); it != ports_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    if (table_.remove_port(it->first) > 0) table_changed_ = true;
    neighbors_family_.Remove(&neighbors_family_.Add({{"netdev", it->first}}));
    HSNS_LOG(info) << "lldp: " << it->first << ": no longer a parameter-plane port, not listening";
    it = ports_.erase(it);
  }
  for (const auto& [netdev, npu] : wanted) {
    ports_[netdev].npu = npu;
    neighbors_family_.Add({{"netdev", netdev}});
  }
}

void LldpComponent::ensure_open(const std::string& netdev, Port& port) {
  // Still bound where it was opened: the kernel unbinds a packet socket (ifindex -1) when its netdev is
  // deleted, so a netdev deleted and made again is seen without looking the name up every tick.
  if (port.socket && port.socket->bound_ifindex() == port.socket->ifindex()) return;
  if (port.socket) HSNS_LOG(notice) << "lldp: " << netdev << ": the interface changed, reopening";
  port.socket.reset();
  auto s = lldp::LldpSocket::open(netdev);
  if (!s) {
    socket_errors_family_.Add({{"netdev", netdev}}).Increment();
    if (s.error() != port.error)
      HSNS_LOG(warning) << s.error() << " (retried every " << kLldpPoll.count() << " s)";
    port.error = s.error();
    return;
  }
  port.socket = std::move(*s);
  port.error.clear();
  HSNS_LOG(info) << "lldp: listening on " << netdev;
}

Component::Clock::time_point LldpComponent::tick(Clock::time_point now) {
  // Woken for another component: nothing is due here (eight ports' reads and gauges each time added up).
  if (now < next_tick_) return next_tick_;
  for (auto& [netdev, port] : ports_) {
    ensure_open(netdev, port);
    if (!port.socket) continue;
    const auto& name = netdev;
    auto drained = port.socket->drain(
        [&](std::span<const std::uint8_t> frame, bool truncated) { receive(name, frame, truncated, now); },
        kMaxFramesPerTick);
    if (!drained) {
      socket_errors_family_.Add({{"netdev", netdev}}).Increment();
      if (drained.error() != port.error) HSNS_LOG(warning) << drained.error() << " (reopening)";
      port.error = drained.error();
      port.socket.reset();
    }
  }
  for (const auto& gone : table_.expire(now)) {
    expired_.Increment();
    table_changed_ = true;
    HSNS_LOG(info) << "lldp: " << gone.netdev << ": neighbour " << describe(gone.neighbor.lldpdu)
                   << " expired";
  }
  refresh_gauges();
  auto next = now + kLldpPoll;
  if (const auto expiry = table_.next_expiry(); expiry && *expiry < next) next = *expiry;
  next_tick_ = next;
  return next;
}

void LldpComponent::receive(const std::string& netdev, std::span<const std::uint8_t> bytes, bool truncated,
                            Clock::time_point now) {
  if (truncated) {
    count_frame(netdev, "oversize");
    return;
  }
  auto frame = lldp::parse_frame(bytes);
  if (!frame) {
    count_frame(netdev, lldp::reason_name(frame.error().reason));
    HSNS_LOG(debug) << "lldp: " << netdev << ": malformed LLDPDU: " << frame.error().detail;
    return;
  }
  const auto& l = frame->lldpdu;
  if (l.org_specific_tlvs > 0)
    skipped_family_.Add({{"netdev", netdev}, {"kind", "org_specific"}})
        .Increment(static_cast<double>(l.org_specific_tlvs));
  if (l.reserved_tlvs > 0)
    skipped_family_.Add({{"netdev", netdev}, {"kind", "reserved"}})
        .Increment(static_cast<double>(l.reserved_tlvs));
  using Update = lldp::NeighborTable::Update;
  const auto update = table_.update(netdev, *frame, now, unix_ms_now());
  count_frame(netdev, update == Update::table_full ? "table_full" : "ok");
  switch (update) {
    case Update::added:
      HSNS_LOG(info) << "lldp: " << netdev << ": new neighbour " << describe(l);
      table_changed_ = true;
      break;
    case Update::refreshed:
      table_changed_ = true;  // a system name may have changed
      break;
    case Update::removed:
      shutdowns_.Increment();
      table_changed_ = true;
      HSNS_LOG(info) << "lldp: " << netdev << ": neighbour port " << l.port_id << " (chassis " << l.chassis_id
                     << ") shut down";
      break;
    case Update::unknown_shutdown:
    case Update::table_full:
      break;
  }
}

void LldpComponent::count_frame(const std::string& netdev, const std::string& result) {
  frames_family_.Add({{"netdev", netdev}, {"result", result}}).Increment();
}

void LldpComponent::refresh_gauges() {
  std::size_t listening = 0;
  for (const auto& [netdev, port] : ports_) {
    if (port.socket) ++listening;
    neighbors_family_.Add({{"netdev", netdev}}).Set(static_cast<double>(table_.size(netdev)));
  }
  ports_listening_.Set(static_cast<double>(listening));
  if (!table_changed_) return;
  table_changed_ = false;
  for (auto* g : info_) info_family_.Remove(g);
  info_.clear();
  for (const auto& [netdev, neighbors] : table_.ports())
    for (const auto& n : neighbors) {
      auto& g = info_family_.Add({{"netdev", netdev},
                                  {"chassis_id", n.lldpdu.chassis_id},
                                  {"port_id", n.lldpdu.port_id},
                                  {"system_name", n.lldpdu.system_name.value_or("")}});
      g.Set(1);
      if (std::find(info_.begin(), info_.end(), &g) == info_.end()) info_.push_back(&g);
    }
}

void LldpComponent::reload(const DaemonConfig& config) {
  next_tick_ = Clock::time_point::min();
  set_ports(config);
  for (auto& [netdev, port] : ports_) ensure_open(netdev, port);
  refresh_gauges();
}

void LldpComponent::stop() {
  for (auto& [netdev, port] : ports_) port.socket.reset();
  ports_listening_.Set(0);
}

proto::LldpNeighbors LldpComponent::neighbors() const {
  proto::LldpNeighbors out;
  out.host = host_;
  out.ts_ms = unix_ms_now();
  for (const auto& [netdev, neighbors] : table_.ports()) {
    const auto port = ports_.find(netdev);
    const std::optional<int> npu = port == ports_.end() ? std::nullopt : std::optional<int>(port->second.npu);
    for (const auto& n : neighbors) out.neighbors.push_back(lldp::to_proto(netdev, npu, n));
  }
  return out;
}

}  // namespace hsns::daemon
