#include "topology/lldp_merge.h"

#include <map>

namespace hsns::topology {
namespace {

std::string field(std::size_t i, const char* name) {
  return "observations[" + std::to_string(i) + "]." + name;
}

}  // namespace

Result<MergeResult> merge_lldp(const Topology& topology, const std::vector<LldpObservation>& observations,
                               double default_bandwidth_gbps, double default_latency_us) {
  std::vector<FieldError> errors;
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const auto& o = observations[i];
    if (o.host.empty()) errors.push_back({field(i, "host"), "must not be empty"});
    if (o.port.empty() && !o.npu) errors.push_back({field(i, "port"), "port or npu is required"});
    if (o.neighbor_system.empty()) errors.push_back({field(i, "neighbor_system"), "must not be empty"});
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));

  MergeReport report;
  std::vector<Link> links = topology.links();
  std::vector<Link> added;
  // (host, npu index) -> (observation index, leaf, port) of the first observation that was applied.
  std::map<std::pair<NodeId, std::uint32_t>, std::size_t> seen;
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const auto& o = observations[i];
    auto unresolved = [&](const char* name, std::string observed, std::string reason) {
      report.unresolved.push_back({i, field(i, name), "", std::move(observed), std::move(reason)});
    };
    auto host = topology.find(o.host);
    if (!host || topology.node(*host).tier != Tier::kHost) {
      unresolved("host", o.host, "no such host in the topology");
      continue;
    }
    const Npu* npu = nullptr;
    for (const Npu& n : topology.node(*host).npus) {
      if ((o.npu && n.index == *o.npu) || (!o.npu && n.port == o.port)) npu = &n;
    }
    if (npu == nullptr) {
      unresolved(o.npu ? "npu" : "port", o.npu ? std::to_string(*o.npu) : o.port,
                 "no such NPU port on " + o.host);
      continue;
    }
    if (o.npu && !o.port.empty() && npu->port != o.port) {
      report.conflicts.push_back(
          {i, field(i, "port"), npu->port, o.port,
           "NPU " + std::to_string(npu->index) + " of " + o.host + " has another port"});
      continue;
    }
    auto neighbor = topology.find(o.neighbor_system);
    if (!neighbor) {
      unresolved("neighbor_system", o.neighbor_system, "no such switch in the topology");
      continue;
    }
    if (topology.node(*neighbor).tier != Tier::kLeaf) {
      report.conflicts.push_back({i, field(i, "neighbor_system"), "a leaf", o.neighbor_system,
                                  "an NPU port can only link to a leaf; this is a " +
                                      std::string(to_string(topology.node(*neighbor).tier))});
      continue;
    }
    const auto key = std::make_pair(*host, npu->index);
    auto [previous, first] = seen.emplace(key, i);
    if (!first) {
      const auto& p = observations[previous->second];
      if (p.neighbor_system != o.neighbor_system || p.neighbor_port != o.neighbor_port) {
        report.conflicts.push_back(
            {i, field(i, "neighbor_system"), p.neighbor_system + " " + p.neighbor_port,
             o.neighbor_system + " " + o.neighbor_port,
             "observation " + std::to_string(previous->second) + " saw another neighbour"});
      } else {
        ++report.confirmed;
      }
      continue;
    }
    if (npu->link != kNoLink) {
      Link& link = links[npu->link];
      const std::string& leaf = topology.node(link.upper).name;
      if (link.upper != *neighbor) {
        report.conflicts.push_back({i, field(i, "neighbor_system"), leaf, o.neighbor_system,
                                    "the topology links " + o.host + " " + npu->port + " to " + leaf});
      } else if (!link.upper_port.empty() && !o.neighbor_port.empty() && link.upper_port != o.neighbor_port) {
        report.conflicts.push_back(
            {i, field(i, "neighbor_port"), link.upper_port, o.neighbor_port,
             "the topology links " + o.host + " " + npu->port + " to " + leaf + " port " + link.upper_port});
      } else {
        ++report.confirmed;
        if (link.upper_port.empty() && !o.neighbor_port.empty()) {
          link.upper_port = o.neighbor_port;
          ++report.completed;
        }
      }
      continue;
    }
    Link link;
    link.lower = *host;
    link.upper = *neighbor;
    link.lower_port = npu->port;
    link.upper_port = o.neighbor_port;
    link.npu = npu->index;
    link.bandwidth_gbps = default_bandwidth_gbps;
    link.latency_us = default_latency_us;
    for (LinkId l : topology.node(*host).uplinks) {
      link.bandwidth_gbps = topology.link(l).bandwidth_gbps;
      link.latency_us = topology.link(l).latency_us;
    }
    added.push_back(std::move(link));
    ++report.added;
  }

  TopologyBuilder b = TopologyBuilder::from(topology);
  for (const Link& link : links) b.link(link.id).upper_port = link.upper_port;  // completed ports
  for (Link& link : added) b.add_link(std::move(link));
  auto result = std::move(b).build();
  if (!result) return tl::unexpected(std::move(result.error()));
  return MergeResult{std::move(*result), std::move(report)};
}

}  // namespace hsns::topology
