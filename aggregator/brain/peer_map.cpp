#include "brain/peer_map.h"

namespace hsns::brain_pipeline {

std::unordered_map<std::string, std::string> build_peer_map(const topology::Topology& topology) {
  std::unordered_map<std::string, std::string> peers;
  peers.reserve(topology.links().size() * 2);
  for (const auto& link : topology.links()) {
    const auto& lower = topology.node(link.lower);
    const auto& upper = topology.node(link.upper);
    std::string lower_port = link.lower_port;
    if (lower_port.empty() && link.npu) {
      for (const auto& npu : lower.npus) {
        if (npu.index == *link.npu) lower_port = npu.port;
      }
    }
    if (lower_port.empty() || link.upper_port.empty()) continue;
    std::string a = lower.name;
    a.append(1, '/').append(lower_port);
    std::string b = upper.name;
    b.append(1, '/').append(link.upper_port);
    peers[a] = b;
    peers[std::move(b)] = std::move(a);
  }
  return peers;
}

}  // namespace hsns::brain_pipeline
