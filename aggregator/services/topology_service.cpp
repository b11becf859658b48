#include "services/topology_service.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "services/store_errors.h"

namespace hsns::services {
namespace topo = hsns::topology;

using Changed = Result<std::optional<topo::Topology>>;

Result<TopologySnapshot> TopologyService::import_document(std::string_view text, topo::FileFormat format) {
  auto imported = topo::import_topology(text, format);
  if (!imported) return tl::unexpected(std::move(imported.error()));
  if (format == topo::FileFormat::kJson) return cache_->replace("import", text, std::move(*imported));
  return cache_->write("import", false, {},
                       [&](const topo::Topology*) { return Changed(std::move(*imported)); });
}

Result<TopologySnapshot> TopologyService::generate(const topo::ClosParams& params) {
  auto generated = topo::generate_clos(params, topo::kGenerateLimits);
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

std::vector<topo::LldpObservation> reported_observations(const proto::LldpNeighbors& section) {
  std::vector<topo::LldpObservation> out;
  out.reserve(section.neighbors.size());
  for (const auto& n : section.neighbors) {
    topo::LldpObservation o;
    o.host = section.host;
    o.port = n.netdev;
    if (n.npu && *n.npu >= 0) o.npu = static_cast<std::uint32_t>(*n.npu);
    o.neighbor_system = proto::lldp_observation_system(n);
    o.neighbor_port = n.port_id;
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

bool same_observations(const std::vector<topo::LldpObservation>& a,
                       const std::vector<topo::LldpObservation>& b) {
  const auto fields = [](const topo::LldpObservation& o) {
    return std::tie(o.host, o.port, o.npu, o.neighbor_system, o.neighbor_port);
  };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [&](const auto& x, const auto& y) { return fields(x) == fields(y); });
}

// Does the model already hold every observation as a host link to that leaf port? Then a merge would
// only confirm them.
bool model_confirms(const topo::Topology& t, const std::vector<topo::LldpObservation>& observations) {
  return std::all_of(observations.begin(), observations.end(), [&](const topo::LldpObservation& o) {
    auto host = t.find(o.host);
    if (!host || t.node(*host).tier != topo::Tier::kHost) return false;
    for (const topo::Npu& n : t.node(*host).npus) {
      if (!(o.npu ? n.index == *o.npu : n.port == o.port)) continue;
      if ((!o.port.empty() && n.port != o.port) || n.link == topo::kNoLink) return false;
      const auto& link = t.link(n.link);
      return t.node(link.upper).name == o.neighbor_system && link.upper_port == o.neighbor_port;
    }
    return false;
  });
}

}  // namespace

Result<ReportedLldp> TopologyService::merge_reported_lldp(const proto::LldpNeighbors& section) {
  ReportedLldp result;
  auto observations = reported_observations(section);
  if (observations.empty()) {
    result.unchanged = true;
    return result;
  }
  auto now = cache_->current();
  if (!now) return tl::unexpected(std::move(now.error()));
  {
    const std::lock_guard lock(reported_mutex_);
    auto last = last_reported_.find(section.host);
    if (last != last_reported_.end() && same_observations(last->second.observations, observations) &&
        (last->second.revision == now->revision || model_confirms(*now->topology, observations))) {
      result.unchanged = true;
      return result;
    }
  }
  auto merged = merge_lldp(observations);
  if (!merged) return tl::unexpected(std::move(merged.error()));
  {
    const std::lock_guard lock(reported_mutex_);
    last_reported_[section.host] = {merged->revision, std::move(observations)};
  }
  result.outcome = std::move(*merged);
  return result;
}

namespace {

// Resolves one request against the model; `where` prefixes the field names ("" for the single route,
// "devices[3]." for the bulk one). Errors as set_device_state documents them.
Result<TopologyCache::StateChange> resolve(const topo::Topology& t, const DeviceStateRequest& d,
                                           const std::string& where) {
  auto id = t.find(d.name);
  if (!id) {
    const std::string detail = "no host or switch named '" + d.name + "'";
    if (where.empty()) return tl::unexpected(Error::not_found(detail));
    return tl::unexpected(Error::invalid(where + "name", detail));
  }
  const auto& node = t.node(*id);
  if (d.npu) {
    if (node.tier != topo::Tier::kHost) {
      return tl::unexpected(Error::invalid(where + "npu", "'" + d.name + "' is a " +
                                                              std::string(topo::to_string(node.tier)) +
                                                              " switch; only hosts have NPUs"));
    }
    if (t.npu(topo::NpuRef{*id, *d.npu}) == nullptr) {
      const std::string detail = "host '" + d.name + "' has no NPU " + std::to_string(*d.npu);
      if (where.empty()) return tl::unexpected(Error::unprocessable("npu", detail));
      return tl::unexpected(Error::invalid(where + "npu", detail));
    }
  }
  return TopologyCache::StateChange{*id, d.npu, d.state};
}

}  // namespace

Result<DeviceChange> TopologyService::set_device_state(const std::string& name,
                                                       std::optional<std::uint32_t> npu,
                                                       topo::DeviceState state) {
  DeviceChange change;
  auto stored = cache_->set_states(
      "state", [&](const topo::Topology& t) -> Result<std::vector<TopologyCache::StateChange>> {
        auto c = resolve(t, {name, npu, state}, "");
        if (!c) return tl::unexpected(std::move(c.error()));
        change.tier = t.node(c->node).tier;
        return std::vector<TopologyCache::StateChange>{*c};
      });
  if (!stored) return tl::unexpected(std::move(stored.error()));
  change.revision = stored->revision;
  return change;
}

Result<DeviceChanges> TopologyService::set_device_states(const std::vector<DeviceStateRequest>& devices) {
  DeviceChanges changes;
  auto stored = cache_->set_states(
      "state", [&](const topo::Topology& t) -> Result<std::vector<TopologyCache::StateChange>> {
        std::vector<TopologyCache::StateChange> out;
        std::vector<FieldError> errors;
        // (node, npu or -1) -> the entry that named it first
        std::map<std::pair<topo::NodeId, std::int64_t>, std::size_t> seen;
        for (std::size_t i = 0; i < devices.size(); ++i) {
          const std::string where = "devices[" + std::to_string(i) + "]";
          auto c = resolve(t, devices[i], where + ".");
          if (!c) {
            for (auto& f : c.error().fields) errors.push_back(std::move(f));
            continue;
          }
          const auto key = std::make_pair(c->node, c->npu ? std::int64_t{*c->npu} : std::int64_t{-1});
          if (auto [it, fresh] = seen.emplace(key, i); !fresh) {
            errors.push_back({where, "names the same device as devices[" + std::to_string(it->second) + "]"});
            continue;
          }
          changes.tiers.push_back(t.node(c->node).tier);
          out.push_back(*c);
        }
        if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
        return out;
      });
  if (!stored) return tl::unexpected(std::move(stored.error()));
  changes.revision = stored->revision;
  return changes;
}

Result<std::vector<store::LldpRecord>> TopologyService::observations() {
  auto records = cache_->store().list_observations();
  if (!records) return tl::unexpected(from_store(std::move(records.error())));
  return records;
}

}  // namespace hsns::services
