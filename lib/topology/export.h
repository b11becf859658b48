// Exports of a topology for schedulers and tools: a JSON graph, Slurm topology.conf (topology/tree and
// topology/block), Volcano HyperNode manifests, a Kueue Topology and the node labels it relies on.
//
// Contract: pure functions over a const Topology; thread-safe; deterministic (same topology, same bytes).
// Scheduler exports work on domains (see topology.h), not on physical switches: in a rail-optimised
// fabric every host sits under npus_per_host leaves, which no single-parent tree can express, so the
// scalable unit (leaf domain, named "su<k>") is the lowest switch level, the super-pod (spine domain,
// "pod<k>") the next and the whole fabric (core domain, "fabric<k>") the top; a level is written only when
// the topology has switches of that tier. Physical leaves of each unit are listed in comments (Slurm) or
// annotations (Volcano). Scheduler YAML is written with yaml-cpp's emitter, one document per object; the
// file-schema YAML (large: every link) is written directly, in flow-style mappings.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace hsns::topology {

// "su3", "pod1", "fabric0" (host: the host's name).
std::string domain_name(const Topology& topology, Tier tier, std::uint32_t domain);

// The topology in the import file schema (docs/topology.md) as YAML: every link with explicit bandwidth and
// latency, states only when not healthy. import_topology() reads it back to the same model (same names,
// links, ports, capacities and states; ids may differ because the file lists switches before hosts).
std::string export_topology_yaml(const Topology& topology);
// The same document as a JSON tree (what the aggregator stores: JSON is read back much faster than YAML,
// and import_topology takes either). import_topology_json(export_topology_document(t)) and
// import_topology(export_topology_document(t).dump()) give the same model, ids included.
nlohmann::json export_topology_document(const Topology& topology);

// Node-link graph: {"name", "version":1, "tiers":[...], "nodes":[...], "links":[...]} (docs/topology.md).
nlohmann::json export_json_graph(const Topology& topology);

// topology/tree: "SwitchName=su0 Nodes=host[001-032]" per unit, "SwitchName=pod0 Switches=su[0-3]" per
// super-pod, "SwitchName=fabric0 Switches=pod[0-1]" when cores exist. Hostlists compressed.
std::string export_slurm_tree(const Topology& topology);
// topology/block: "BlockName=su0 Nodes=host[001-032]" per unit and "BlockSizes=D,2D,..,2^k*D" with D the
// smallest unit and k = floor(log2(units)).
std::string export_slurm_block(const Topology& topology);

struct K8sLabelKeys {
  std::string hostname = "kubernetes.io/hostname";
  std::string superpod = "topology.hsns.io/superpod";
  std::string scalable_unit = "topology.hsns.io/scalable-unit";
};

struct VolcanoOptions {
  // Node members as one regexMatch per unit ("^(host001|host002)$") instead of one exactMatch per host.
  bool regex_members = false;
};
// HyperNode (topology.volcano.sh/v1alpha1) per unit (tier 1, members type Node), per super-pod (tier 2,
// members type HyperNode) and per fabric (tier 3, when cores exist).
std::string export_volcano_hypernodes(const Topology& topology, const VolcanoOptions& options = {});

struct KueueOptions {
  std::string name = "hsns-fabric";
  std::string api_version = "kueue.x-k8s.io/v1beta1";
  K8sLabelKeys labels;
};
// Kueue Topology with levels, broadest first: super-pod label (when spines exist), scalable-unit label,
// kubernetes.io/hostname.
std::string export_kueue_topology(const Topology& topology, const KueueOptions& options = {});

struct NodeLabels {
  std::string node;
  std::vector<std::pair<std::string, std::string>> labels;  // key order as in K8sLabelKeys, hostname excluded
};
std::vector<NodeLabels> node_labels(const Topology& topology, const K8sLabelKeys& keys = {});
// One "apiVersion: v1 / kind: Node" document per host carrying only metadata.name and metadata.labels, for
// `kubectl apply --server-side` (or `kubectl label` from node_labels()).
std::string export_node_label_manifests(const Topology& topology, const K8sLabelKeys& keys = {});

}  // namespace hsns::topology
