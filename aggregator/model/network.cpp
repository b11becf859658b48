#include "model/network.h"

#include <nlohmann/json.hpp>

namespace hsns::network {

nlohmann::json to_json(const NpuInterface& n) {
  return {{"index", n.index},
          {"netdev", n.netdev},
          {"mac", n.mac},
          {"rdma_device", n.rdma_device},
          {"link_speed_mbps", n.link_speed_mbps}};
}

nlohmann::json to_json(const Host& h) {
  auto npus = nlohmann::json::array();
  for (const auto& n : h.npus) npus.push_back(to_json(n));
  return {{"name", h.name},
          {"npus", std::move(npus)},
          {"generation", h.generation},
          {"created_at", h.created_at},
          {"updated_at", h.updated_at}};
}

nlohmann::json pools_to_json(const std::vector<IpRange>& pools) {
  auto arr = nlohmann::json::array();
  for (const auto& p : pools) arr.push_back({{"start", p.first.to_string()}, {"end", p.last.to_string()}});
  return arr;
}

nlohmann::json to_json(const Subnet& s) {
  return {{"id", s.id},
          {"name", s.name},
          {"tenant", s.tenant},
          {"cidr", s.cidr.to_string()},
          {"ip_version", s.cidr.family() == IpFamily::v4 ? 4 : 6},
          {"gateway_ip", s.gateway ? nlohmann::json(s.gateway->to_string()) : nlohmann::json(nullptr)},
          {"allocation_pools", pools_to_json(s.allocation_pools)},
          {"mtu", s.mtu},
          {"port_count", s.port_count},
          {"created_at", s.created_at},
          {"updated_at", s.updated_at}};
}

nlohmann::json to_json(const Port& p) {
  return {{"id", p.id},
          {"name", p.name},
          {"subnet_id", p.subnet_id},
          {"tenant", p.tenant},
          {"host", p.host},
          {"npu", p.npu},
          {"ip_address", p.ip_address.to_string()},
          {"fixed_ip", p.fixed_ip},
          {"created_at", p.created_at}};
}

}  // namespace hsns::network
