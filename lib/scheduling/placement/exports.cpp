#include <nlohmann/json.hpp>

#include "scheduling/placement/schedule.h"

namespace hsns::placement {

std::string export_hccl_rank_table(const Placement& placement,
                                   const std::map<std::string, IpAddress>& host_ips,
                                   const std::string& version) {
  const bool v12 = version == "1.2";
  nlohmann::ordered_json doc;
  doc["status"] = "completed";
  doc["version"] = version;
  doc["server_count"] = std::to_string(placement.hosts.size());
  nlohmann::ordered_json servers = nlohmann::ordered_json::array();
  for (const auto& h : placement.hosts) {
    nlohmann::ordered_json server;
    server["server_id"] = h.name;
    if (auto it = host_ips.find(h.name); it != host_ips.end()) {
      server[v12 ? "host_ip" : "host_nic_ip"] = it->second.to_string();
    }
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const auto& slot : placement.ranks) {
      if (slot.node_rank != h.node_rank) continue;
      nlohmann::ordered_json d;
      d["device_id"] = std::to_string(slot.npu);
      d["device_ip"] = slot.ip.to_string();
      d["rank_id"] = std::to_string(slot.rank);
      devices.push_back(std::move(d));
    }
    server["device"] = std::move(devices);
    servers.push_back(std::move(server));
  }
  doc["server_list"] = std::move(servers);
  if (v12) {
    // One entry per super-pod (spine domain) the job uses, ascending id; servers in node-rank order.
    std::map<std::uint32_t, nlohmann::ordered_json> pods;
    for (const auto& h : placement.hosts) {
      auto& list = pods[h.superpod];
      if (list.is_null()) list = nlohmann::ordered_json::array();
      list.push_back(nlohmann::ordered_json{{"server_id", h.name}});
    }
    nlohmann::ordered_json pod_list = nlohmann::ordered_json::array();
    for (auto& [id, list] : pods) {
      pod_list.push_back(nlohmann::ordered_json{{"super_pod_id", std::to_string(id)}, {"server_list", list}});
    }
    doc["super_pod_list"] = std::move(pod_list);
  }
  return doc.dump(4) + "\n";
}

std::string export_hostfile(const Placement& placement) {
  std::string out;
  for (const auto& h : placement.hosts) out += h.name + " slots=" + std::to_string(h.npus.size()) + "\n";
  return out;
}

std::vector<TorchrunEnv> torchrun_envs(const Placement& placement,
                                       const std::map<std::string, IpAddress>& host_ips,
                                       std::uint16_t master_port) {
  std::vector<TorchrunEnv> out;
  if (placement.hosts.empty()) return out;
  const auto& master = placement.hosts.front().name;
  auto it = host_ips.find(master);
  const std::string master_addr = it != host_ips.end() ? it->second.to_string() : master;
  const auto nproc = static_cast<std::uint32_t>(placement.hosts.front().npus.size());
  for (const auto& h : placement.hosts) {
    TorchrunEnv env;
    env.host = h.name;
    env.master_addr = master_addr;
    env.master_port = master_port;
    env.world_size = static_cast<std::uint32_t>(placement.ranks.size());
    env.nnodes = static_cast<std::uint32_t>(placement.hosts.size());
    env.node_rank = h.node_rank;
    env.nproc_per_node = nproc;
    env.first_rank = h.node_rank * nproc;
    env.last_rank = env.first_rank + nproc - 1;
    out.push_back(std::move(env));
  }
  return out;
}

std::string TorchrunEnv::to_env() const {
  return "MASTER_ADDR=" + master_addr + "\nMASTER_PORT=" + std::to_string(master_port) +
         "\nWORLD_SIZE=" + std::to_string(world_size) + "\nNNODES=" + std::to_string(nnodes) +
         "\nNODE_RANK=" + std::to_string(node_rank) + "\nNPROC_PER_NODE=" + std::to_string(nproc_per_node) +
         "\nRANK_RANGE=" + std::to_string(first_rank) + "-" + std::to_string(last_rank) + "\n";
}

}  // namespace hsns::placement
