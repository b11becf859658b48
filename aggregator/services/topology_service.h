// The topology operations the API offers, over the shared cache (services/topology_cache.h): the
// current model, import of a document, generation of a Clos cluster, the merge of LLDP observations and
// device state changes. Handlers (api/topology/routes.cpp) parse the request, call one of these and
// answer the result or convert the error.
//
// Contract:
// - Every write goes through TopologyCache::write: a changed model is one new stored revision; when the
//   model does not change the revision stays (an LLDP merge that adds and completes no link still stores
//   its observations; a state already set stores nothing) and the current revision is answered. A refused
//   write stores nothing.
// - import_document reads the text with the bounded reader (topology/import.h: size, values, depth,
//   aliases) before any model exists and builds the model once; a JSON document is stored as received
//   and that model cached (TopologyCache::replace), a YAML one is stored as the JSON file schema.
//   generate takes parameters already checked by clos_size.
// - merge_lldp: the observations are stored (conflicts are reported, never applied); the model changes
//   only when links were added or leaf ports completed. not_found while no topology exists.
// - merge_reported_lldp: the "lldp" section of a host's telemetry report (hsns/proto/lldp.h) as
//   observations of that host, what it sees on each local port: {host, port: netdev, npu,
//   neighbor_system: lldp_observation_system(), neighbor_port: port_id}, merged as merge_lldp does. A
//   section with no neighbours is not merged (unchanged); nor is one with the same observations this
//   service last merged for that host when the topology revision has not moved since, or the current
//   model already links every one of them to that leaf port: a host reporting the same neighbours every
//   interval costs a comparison, not a copy of the model (so the stored observations' observed_at is when
//   they were first reported, or last changed). not_found while no topology exists.
// - set_device_state: a host or switch by name (not_found otherwise); with an NPU index only for a host
//   (invalid "npu" for a switch, unprocessable "npu" for an index the host lacks). set_device_states: the
//   same for many devices, all or nothing: every bad entry is one field of one invalid Error
//   ("devices[3].name", "devices[3].npu"; an entry naming the same device or NPU as an earlier one is
//   "devices[3]"). Both are incremental (TopologyCache::set_states): one row per changed device, one
//   transaction, one new revision; entries already in their state store nothing.
// - Errors are hsns::Error (the libraries' and the cache's); thread-safe as the cache is.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/lldp.h"
#include "services/topology_cache.h"
#include "topology/generator.h"
#include "topology/import.h"
#include "topology/lldp_merge.h"

namespace hsns::services {

struct LldpOutcome {
  std::int64_t revision = 0;
  topology::MergeReport report;
};

struct ReportedLldp {
  bool unchanged = false;  // not merged: no neighbours, or the same as last merged at this revision
  LldpOutcome outcome;     // of the merge (revision 0 and an empty report when unchanged)
};

// The observations a host's report section stands for (see merge_reported_lldp).
std::vector<topology::LldpObservation> reported_observations(const proto::LldpNeighbors& section);

struct DeviceChange {
  std::int64_t revision = 0;
  topology::Tier tier = topology::Tier::kHost;  // of the device named
};

struct DeviceStateRequest {
  std::string name;
  std::optional<std::uint32_t> npu;
  topology::DeviceState state = topology::DeviceState::kHealthy;
};

struct DeviceChanges {
  std::int64_t revision = 0;
  std::vector<topology::Tier> tiers;  // of each device named, in request order
};

class TopologyService {
 public:
  explicit TopologyService(std::shared_ptr<TopologyCache> cache) : cache_(std::move(cache)) {}

  Result<TopologySnapshot> current() { return cache_->current(); }
  Result<TopologySnapshot> import_document(std::string_view text, topology::FileFormat format);
  Result<TopologySnapshot> generate(const topology::ClosParams& params);
  Result<LldpOutcome> merge_lldp(const std::vector<topology::LldpObservation>& observations);
  Result<ReportedLldp> merge_reported_lldp(const proto::LldpNeighbors& section);
  Result<DeviceChange> set_device_state(const std::string& name, std::optional<std::uint32_t> npu,
                                        topology::DeviceState state);
  Result<DeviceChanges> set_device_states(const std::vector<DeviceStateRequest>& devices);
  // The stored LLDP observations, as last merged.
  Result<std::vector<store::LldpRecord>> observations();

 private:
  // What merge_reported_lldp last merged for a host, and at which topology revision.
  struct LastReported {
    std::int64_t revision = 0;
    std::vector<topology::LldpObservation> observations;
  };

  std::shared_ptr<TopologyCache> cache_;
  std::mutex reported_mutex_;  // guards last_reported_ only; never held across a merge
  std::map<std::string, LastReported, std::less<>> last_reported_;
};

}  // namespace hsns::services
