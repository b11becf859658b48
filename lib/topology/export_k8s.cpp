#include <yaml-cpp/yaml.h>

#include "topology/export.h"
#include "topology/hostlist.h"

namespace hsns::topology {
namespace {

// Anchored alternation of regex-escaped names (RE2/Go syntax, as Volcano evaluates it).
std::string name_regex(const std::vector<std::string>& names) {
  std::string out = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += '|';
    for (char c : names[i]) {
      if (std::string_view(".+*?()|[]{}^$\\").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + ")$";
}

void begin_object(YAML::Emitter& e, const std::string& api_version, const std::string& kind,
                  const std::string& name) {
  e << YAML::BeginDoc << YAML::BeginMap;
  e << YAML::Key << "apiVersion" << YAML::Value << api_version;
  e << YAML::Key << "kind" << YAML::Value << kind;
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
}

void member(YAML::Emitter& e, const char* type, const char* match, const char* key,
            const std::string& value) {
  e << YAML::BeginMap << YAML::Key << "type" << YAML::Value << type;
  e << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key << match << YAML::Value
    << YAML::BeginMap << YAML::Key << key << YAML::Value << value << YAML::EndMap << YAML::EndMap;
  e << YAML::EndMap;
}

std::vector<std::string> unit_hosts(const Topology& t, std::uint32_t su) {
  std::vector<std::string> names;
  for (NodeId h : t.domain_hosts(Tier::kLeaf, su)) names.push_back(t.node(h).name);
  return names;
}

std::string unit_leaves(const Topology& t, std::uint32_t su) {
  std::vector<std::string> leaves;
  for (NodeId h : t.domain_hosts(Tier::kLeaf, su)) {
    for (LinkId l : t.node(h).uplinks) leaves.push_back(t.node(t.link(l).upper).name);
  }
  return compress_hostlist(leaves);
}

}  // namespace

std::string export_volcano_hypernodes(const Topology& topology, const VolcanoOptions& options) {
  YAML::Emitter e;
  const char* api = "topology.volcano.sh/v1alpha1";
  for (std::uint32_t su = 0; su < topology.domain_count(Tier::kLeaf); ++su) {
    begin_object(e, api, "HyperNode", domain_name(topology, Tier::kLeaf, su));
    const std::string leaves = unit_leaves(topology, su);
    if (!leaves.empty()) {
      e << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key
        << "topology.hsns.io/leaves" << YAML::Value << leaves << YAML::EndMap;
    }
    e << YAML::EndMap;  // metadata
    e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "tier" << YAML::Value << 1;
    e << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
    const auto hosts = unit_hosts(topology, su);
    if (options.regex_members) {
      member(e, "Node", "regexMatch", "pattern", name_regex(hosts));
    } else {
      for (const auto& host : hosts) member(e, "Node", "exactMatch", "name", host);
    }
    e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  }
  const Tier top = topology.top_tier();
  int tier_number = 2;
  for (Tier parent : {Tier::kSpine, Tier::kCore}) {
    if (top < parent) break;
    const Tier child = static_cast<Tier>(static_cast<int>(parent) - 1);
    std::vector<std::vector<std::uint32_t>> groups(topology.domain_count(parent));
    for (std::uint32_t d = 0; d < topology.domain_count(child); ++d) {
      groups[topology.domain(topology.domain_hosts(child, d)[0], parent)].push_back(d);
    }
    for (std::uint32_t d = 0; d < groups.size(); ++d) {
      begin_object(e, api, "HyperNode", domain_name(topology, parent, d));
      e << YAML::EndMap;
      e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
      e << YAML::Key << "tier" << YAML::Value << tier_number;
      e << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
      for (std::uint32_t c : groups[d])
        member(e, "HyperNode", "exactMatch", "name", domain_name(topology, child, c));
      e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    }
    ++tier_number;
  }
  return std::string(e.c_str()) + "\n";
}

std::string export_kueue_topology(const Topology& topology, const KueueOptions& options) {
  YAML::Emitter e;
  begin_object(e, options.api_version, "Topology", options.name);
  e << YAML::EndMap;
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "levels" << YAML::Value
    << YAML::BeginSeq;
  auto level = [&](const std::string& label) {
    e << YAML::BeginMap << YAML::Key << "nodeLabel" << YAML::Value << label << YAML::EndMap;
  };
  if (topology.top_tier() >= Tier::kSpine) level(options.labels.superpod);
  level(options.labels.scalable_unit);
  level(options.labels.hostname);
  e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::vector<NodeLabels> node_labels(const Topology& topology, const K8sLabelKeys& keys) {
  std::vector<NodeLabels> out;
  const bool pods = topology.top_tier() >= Tier::kSpine;
  for (NodeId h : topology.hosts()) {
    NodeLabels labels{topology.node(h).name, {}};
    if (pods)
      labels.labels.emplace_back(keys.superpod,
                                 domain_name(topology, Tier::kSpine, topology.domain(h, Tier::kSpine)));
    labels.labels.emplace_back(keys.scalable_unit,
                               domain_name(topology, Tier::kLeaf, topology.domain(h, Tier::kLeaf)));
    out.push_back(std::move(labels));
  }
  return out;
}

std::string export_node_label_manifests(const Topology& topology, const K8sLabelKeys& keys) {
  YAML::Emitter e;
  for (const NodeLabels& node : node_labels(topology, keys)) {
    begin_object(e, "v1", "Node", node.node);
    e << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : node.labels) e << YAML::Key << key << YAML::Value << value;
    e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  }
  return std::string(e.c_str()) + "\n";
}

}  // namespace hsns::topology
