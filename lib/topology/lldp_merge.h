// Merge of LLDP discovery into a topology: what each NPU port sees as its neighbour switch and port.
//
// Contract: a pure function over values; thread-safe. The input topology is not changed: the result holds a
// new Topology (existing ids kept, new links appended) and a report.
// - An observation names a host, its port (netdev) or NPU index, and the neighbour's system name (LLDP
//   chassis/system name) and port.
// - Confirmed: the NPU's link already goes to that leaf and port (or the file gave no leaf port; the
//   observed one is then filled in and counted as `completed`).
// - Added: the NPU had no link and the neighbour is a known leaf: a link is added with
// `default_bandwidth_gbps`
//   (or the bandwidth of the host's other NPU links, when it has any).
// - Conflicts are reported, never applied: the NPU links to another leaf or leaf port, two observations of
// one
//   NPU disagree, or the neighbour is not a leaf. Observations naming unknown hosts, ports or switches are
//   `unresolved`. Each conflict names the observation by index and the field
//   ("observations[3].neighbor_system").
// - Errors: a malformed observation (empty host, no port and no NPU) is an error value (hsns::Error, kind
// invalid); so
//   is a merged model over the size limits (limits.h; checked by TopologyBuilder::build). The cost is
//   O(observations x NPUs of a host + size of the model), both bounded by the callers' limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace hsns::topology {

struct LldpObservation {
  std::string host;
  std::string port;                  // netdev; may be empty when npu is given
  std::optional<std::uint32_t> npu;  // NPU index; may be absent when port is given
  std::string neighbor_system;       // LLDP system name of the switch
  std::string neighbor_port;         // LLDP port id on the switch
};

struct MergeIssue {
  std::size_t observation = 0;  // index into the input
  std::string field;            // "observations[i].<field>"
  std::string expected;         // what the topology says (empty for unresolved)
  std::string observed;         // what LLDP says
  std::string reason;
};

struct MergeReport {
  std::size_t confirmed = 0;
  std::size_t completed = 0;  // confirmed and the leaf port filled in from LLDP
  std::size_t added = 0;
  std::vector<MergeIssue> conflicts;
  std::vector<MergeIssue> unresolved;
};

struct MergeResult {
  Topology topology;
  MergeReport report;
};

Result<MergeResult> merge_lldp(const Topology& topology, const std::vector<LldpObservation>& observations,
                               double default_bandwidth_gbps = 400, double default_latency_us = 0.5);

}  // namespace hsns::topology
