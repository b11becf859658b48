#include <yaml-cpp/yaml.h>

#include "scheduling/topology/export.h"

namespace hsns::topology {
namespace {

void numbers_and_state(YAML::Emitter& e, const Link& link, const char* state_key) {
  e << YAML::Key << "bandwidth_gbps" << YAML::Value << link.bandwidth_gbps;
  e << YAML::Key << "latency_us" << YAML::Value << link.latency_us;
  if (link.state != DeviceState::kHealthy) {
    e << YAML::Key << state_key << YAML::Value << std::string(to_string(link.state));
  }
}

void state(YAML::Emitter& e, DeviceState s) {
  if (s != DeviceState::kHealthy) e << YAML::Key << "state" << YAML::Value << std::string(to_string(s));
}

}  // namespace

std::string export_topology_yaml(const Topology& topology) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << 1;
  if (!topology.name().empty()) e << YAML::Key << "name" << YAML::Value << topology.name();
  e << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (Tier tier : {Tier::kCore, Tier::kSpine, Tier::kLeaf}) {
    for (NodeId id : topology.switches(tier)) {
      const Node& sw = topology.node(id);
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << sw.name;
      e << YAML::Key << "tier" << YAML::Value << std::string(to_string(tier));
      state(e, sw.state);
      e << YAML::EndMap;
    }
  }
  e << YAML::EndSeq;
  e << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
  for (NodeId id : topology.hosts()) {
    const Node& host = topology.node(id);
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << host.name;
    state(e, host.state);
    e << YAML::Key << "npus" << YAML::Value << YAML::BeginSeq;
    for (const Npu& npu : host.npus) {
      e << YAML::Flow << YAML::BeginMap;
      e << YAML::Key << "index" << YAML::Value << npu.index;
      e << YAML::Key << "port" << YAML::Value << npu.port;
      state(e, npu.state);
      if (npu.link != kNoLink) {
        const Link& link = topology.link(npu.link);
        e << YAML::Key << "leaf" << YAML::Value << topology.node(link.upper).name;
        if (!link.upper_port.empty()) e << YAML::Key << "leaf_port" << YAML::Value << link.upper_port;
        numbers_and_state(e, link, "link_state");
      }
      e << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndSeq;
  e << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const Link& link : topology.links()) {
    if (topology.node(link.lower).tier == Tier::kHost) continue;
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "lower" << YAML::Value << topology.node(link.lower).name;
    e << YAML::Key << "upper" << YAML::Value << topology.node(link.upper).name;
    if (!link.lower_port.empty()) e << YAML::Key << "lower_port" << YAML::Value << link.lower_port;
    if (!link.upper_port.empty()) e << YAML::Key << "upper_port" << YAML::Value << link.upper_port;
    numbers_and_state(e, link, "state");
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace hsns::topology
