#include <nlohmann/json.hpp>

#include "topology/export.h"

namespace hsns::topology {

std::string domain_name(const Topology& topology, Tier tier, std::uint32_t domain) {
  switch (tier) {
    case Tier::kHost:
      return topology.node(topology.domain_hosts(Tier::kHost, domain)[0]).name;
    case Tier::kLeaf:
      return "su" + std::to_string(domain);
    case Tier::kSpine:
      return "pod" + std::to_string(domain);
    case Tier::kCore:
      return "fabric" + std::to_string(domain);
  }
  return {};
}

nlohmann::json export_json_graph(const Topology& topology) {
  using nlohmann::json;
  json out = json::object();
  out["version"] = 1;
  out["name"] = topology.name();
  json tiers = json::array();
  for (Tier tier : {Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    if (topology.switches(tier).empty()) continue;
    tiers.push_back({{"tier", std::string(to_string(tier))},
                     {"switches", topology.switches(tier).size()},
                     {"domains", topology.domain_count(tier)},
                     {"oversubscription", topology.tier_oversubscription(tier)}});
  }
  out["tiers"] = std::move(tiers);
  json nodes = json::array();
  for (const Node& node : topology.nodes()) {
    json n = {{"id", node.id},
              {"name", node.name},
              {"tier", std::string(to_string(node.tier))},
              {"state", std::string(to_string(node.state))}};
    if (node.tier == Tier::kHost) {
      json npus = json::array();
      for (const Npu& npu : node.npus) {
        json j = {{"index", npu.index}, {"port", npu.port}, {"state", std::string(to_string(npu.state))}};
        j["link"] = npu.link == kNoLink ? json(nullptr) : json(npu.link);
        npus.push_back(std::move(j));
      }
      n["npus"] = std::move(npus);
      n["scalable_unit"] = topology.domain(node.id, Tier::kLeaf);
      n["superpod"] = topology.domain(node.id, Tier::kSpine);
    }
    nodes.push_back(std::move(n));
  }
  out["nodes"] = std::move(nodes);
  json links = json::array();
  for (const Link& link : topology.links()) {
    json l = {{"id", link.id},
              {"source", link.lower},
              {"target", link.upper},
              {"source_port", link.lower_port},
              {"target_port", link.upper_port},
              {"tier", std::string(to_string(topology.node(link.upper).tier))},
              {"bandwidth_gbps", link.bandwidth_gbps},
              {"latency_us", link.latency_us},
              {"state", std::string(to_string(link.state))}};
    if (link.npu) l["npu"] = *link.npu;
    links.push_back(std::move(l));
  }
  out["links"] = std::move(links);
  return out;
}

}  // namespace hsns::topology
