#include "services/topology_service.h"

#include <utility>

#include "services/store_errors.h"

namespace hsns::services {
namespace topo = hsns::topology;

using Changed = Result<std::optional<topo::Topology>>;

Result<TopologySnapshot> TopologyService::import_document(std::string_view text, topo::FileFormat format) {
  auto imported = topo::import_topology(text, format);
  if (!imported) return tl::unexpected(std::move(imported.error()));
  return cache_->write("import", false, {},
                       [&](const topo::Topology*) { return Changed(std::move(*imported)); });
}

Result<TopologySnapshot> TopologyService::generate(const topo::ClosParams& params) {
  auto generated = topo::generate_clos(params);
  if (!generated) return tl::unexpected(std::move(generated.error()));
  return cache_->write("generate", false, {},
                       [&](const topo::Topology*) { return Changed(std::move(*generated)); });
}

Result<LldpOutcome> TopologyService::merge_lldp(const std::vector<topo::LldpObservation>& observations) {
  std::vector<store::LldpRecord> records;
  records.reserve(observations.size());
  for (const auto& o : observations) {
    records.push_back({o.host, o.port,
                       o.npu ? std::optional<std::int64_t>(*o.npu) : std::optional<std::int64_t>(),
                       o.neighbor_system, o.neighbor_port, ""});
  }
  LldpOutcome outcome;
  auto stored = cache_->write("lldp", true, records, [&](const topo::Topology* current) -> Changed {
    auto merged = topo::merge_lldp(*current, observations);
    if (!merged) return tl::unexpected(std::move(merged.error()));
    outcome.report = std::move(merged->report);
    if (outcome.report.added == 0 && outcome.report.completed == 0) return std::optional<topo::Topology>();
    return std::optional<topo::Topology>(std::move(merged->topology));
  });
  if (!stored) return tl::unexpected(std::move(stored.error()));
  outcome.revision = stored->revision;
  return outcome;
}

Result<DeviceChange> TopologyService::set_device_state(const std::string& name,
                                                       std::optional<std::uint32_t> npu,
                                                       topo::DeviceState state) {
  DeviceChange change;
  auto stored = cache_->write("state", true, {}, [&](const topo::Topology* current) -> Changed {
    auto id = current->find(name);
    if (!id) return tl::unexpected(Error::not_found("no host or switch named '" + name + "'"));
    const auto& node = current->node(*id);
    change.tier = node.tier;
    if (npu) {
      if (node.tier != topo::Tier::kHost) {
        return tl::unexpected(Error::invalid("npu", "'" + name + "' is a " +
                                                        std::string(topo::to_string(node.tier)) +
                                                        " switch; only hosts have NPUs"));
      }
      const topo::NpuRef ref{*id, *npu};
      const auto* existing = current->npu(ref);
      if (!existing) {
        return tl::unexpected(
            Error::unprocessable("npu", "host '" + name + "' has no NPU " + std::to_string(*npu)));
      }
      if (existing->state == state) return std::optional<topo::Topology>();
      topo::Topology next = *current;
      (void)next.set_npu_state(ref, state);
      return std::optional<topo::Topology>(std::move(next));
    }
    if (node.state == state) return std::optional<topo::Topology>();
    topo::Topology next = *current;
    next.set_node_state(*id, state);
    return std::optional<topo::Topology>(std::move(next));
  });
  if (!stored) return tl::unexpected(std::move(stored.error()));
  change.revision = stored->revision;
  return change;
}

Result<std::vector<store::LldpRecord>> TopologyService::observations() {
  auto records = cache_->store().list_observations();
  if (!records) return tl::unexpected(from_store(std::move(records.error())));
  return records;
}

}  // namespace hsns::services
