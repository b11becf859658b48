#include "neighbor_table.h"

#include <algorithm>

namespace hsns::lldp {

bool same_msap(const Lldpdu& a, const Lldpdu& b) {
  return a.chassis_id_subtype == b.chassis_id_subtype && a.chassis_id == b.chassis_id &&
         a.port_id_subtype == b.port_id_subtype && a.port_id == b.port_id;
}

NeighborTable::Update NeighborTable::update(const std::string& netdev, const Frame& frame,
                                            Clock::time_point now, std::int64_t unix_ms) {
  auto& neighbors = ports_[netdev];
  const auto it = std::find_if(neighbors.begin(), neighbors.end(),
                               [&](const Neighbor& n) { return same_msap(n.lldpdu, frame.lldpdu); });
  if (frame.lldpdu.ttl_s == 0) {
    if (it == neighbors.end()) {
      if (neighbors.empty()) ports_.erase(netdev);
      return Update::unknown_shutdown;
    }
    neighbors.erase(it);
    if (neighbors.empty()) ports_.erase(netdev);
    return Update::removed;
  }
  Neighbor n{frame.source_mac, frame.lldpdu, now + std::chrono::seconds(frame.lldpdu.ttl_s), unix_ms};
  if (it != neighbors.end()) {
    *it = std::move(n);
    return Update::refreshed;
  }
  if (neighbors.size() >= kMaxNeighborsPerPort) return Update::table_full;
  neighbors.push_back(std::move(n));
  return Update::added;
}

std::vector<ExpiredNeighbor> NeighborTable::expire(Clock::time_point now) {
  std::vector<ExpiredNeighbor> out;
  for (auto port = ports_.begin(); port != ports_.end();) {
    auto& neighbors = port->second;
    for (auto it = neighbors.begin(); it != neighbors.end();) {
      if (it->expires_at <= now) {
        out.push_back({port->first, std::move(*it)});
        it = neighbors.erase(it);
      } else {
        ++it;
      }
    }
    port = neighbors.empty() ? ports_.erase(port) : std::next(port);
  }
  return out;
}

std::optional<Clock::time_point> NeighborTable::next_expiry() const {
  std::optional<Clock::time_point> earliest;
  for (const auto& [netdev, neighbors] : ports_)
    for (const auto& n : neighbors)
      if (!earliest || n.expires_at < *earliest) earliest = n.expires_at;
  return earliest;
}

std::size_t NeighborTable::remove_port(const std::string& netdev) {
  const auto it = ports_.find(netdev);
  if (it == ports_.end()) return 0;
  const std::size_t n = it->second.size();
  ports_.erase(it);
  return n;
}

proto::LldpNeighbor to_proto(const std::string& netdev, std::optional<int> npu, const Neighbor& n) {
  const auto& l = n.lldpdu;
  proto::LldpNeighbor out;
  out.netdev = netdev;
  out.npu = npu;
  out.source_mac = n.source_mac;
  out.chassis_id_subtype = to_string(l.chassis_id_subtype);
  out.chassis_id = l.chassis_id;
  out.port_id_subtype = to_string(l.port_id_subtype);
  out.port_id = l.port_id;
  out.ttl_s = l.ttl_s;
  out.last_seen_ms = n.last_seen_unix_ms;
  out.port_description = l.port_description;
  out.system_name = l.system_name;
  out.system_description = l.system_description;
  if (l.capabilities)
    out.capabilities = proto::LldpCapabilities{l.capabilities->system, l.capabilities->enabled};
  for (const auto& a : l.management_addresses)
    out.management_addresses.push_back({a.family, a.address, a.interface_subtype, a.interface_number});
  return out;
}

std::size_t NeighborTable::size(const std::string& netdev) const {
  const auto it = ports_.find(netdev);
  return it == ports_.end() ? 0 : it->second.size();
}

}  // namespace hsns::lldp
