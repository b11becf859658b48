#include "services/topology_cache.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "services/store_errors.h"
#include "topology/export.h"
#include "topology/import.h"

namespace hsns::services {
namespace topo = hsns::topology;

Result<TopologySnapshot> TopologyCache::current() {
  {
    std::lock_guard lock(mutex_);
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(from_store(rev.error()));
    if (*rev == 0) return tl::unexpected(Error::not_found("no topology has been imported or generated"));
    if (cache_.topology && cache_.revision == *rev) return cache_;
  }
  return load();
}

Result<TopologySnapshot> TopologyCache::load() {
  // One loader at a time; a writer holds load_mutex_ from its commit until its model is cached, so a
  // reader that saw the new revision early waits for that model instead of parsing the document again.
  std::lock_guard loading(load_mutex_);
  {
    std::lock_guard lock(mutex_);
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(from_store(rev.error()));
    if (*rev == 0) return tl::unexpected(Error::not_found("no topology has been imported or generated"));
    if (cache_.topology && cache_.revision == *rev) return cache_;
  }
  auto record = store_.get_topology();
  if (!record) return tl::unexpected(from_store(record.error()));
  auto parsed = topo::import_topology(record->document, topo::FileFormat::kAuto, topo::kStoredDocumentLimits);
  if (!parsed) {
    return tl::unexpected(Error::internal("the stored topology (revision " +
                                          std::to_string(record->revision) +
                                          ") does not parse: " + parsed.error().detail));
  }
  TopologySnapshot loaded{std::make_shared<const topo::Topology>(std::move(*parsed)), record->revision,
                          record->source, record->updated_at};
  std::lock_guard lock(mutex_);
  if (!cache_.topology || cache_.revision < loaded.revision) cache_ = loaded;
  return loaded;
}

Result<AllocatedSnapshot> TopologyCache::with_jobs(store::JobStore& jobs) {
  auto base = current();
  if (!base) return tl::unexpected(base.error());
  auto jobs_revision = jobs.jobs_revision();
  if (!jobs_revision) return tl::unexpected(from_store(jobs_revision.error()));
  {
    std::lock_guard lock(mutex_);
    if (overlay_.topology && overlay_.base.revision == base->revision &&
        overlay_.jobs_revision == *jobs_revision) {
      return overlay_;
    }
  }
  // Built outside the lock (a copy of the whole model): readers of the cache never wait for it.
  auto allocations = jobs.allocations();
  if (!allocations) return tl::unexpected(from_store(allocations.error()));
  auto held = std::make_shared<HeldNpus>();
  std::shared_ptr<const topo::Topology> overlay = base->topology;
  if (!allocations->npus.empty()) {
    auto copy = std::make_shared<topo::Topology>(*base->topology);
    for (const auto& n : allocations->npus) {
      held->emplace(std::make_pair(n.host, n.npu), n.job);
      // NPUs of a replaced topology that the current one lacks stay held but change nothing here.
      if (auto id = copy->find(n.host); id && copy->node(*id).tier == topo::Tier::kHost) {
        (void)copy->set_npu_state(topo::NpuRef{*id, n.npu}, topo::DeviceState::kAllocated);
      }
    }
    overlay = std::move(copy);
  }
  AllocatedSnapshot built{*base, std::move(overlay), allocations->revision, std::move(held)};
  std::lock_guard lock(mutex_);
  if (!overlay_.topology || overlay_.base.revision < built.base.revision ||
      (overlay_.base.revision == built.base.revision && overlay_.jobs_revision <= built.jobs_revision)) {
    overlay_ = built;
  }
  return built;
}

Result<TopologySnapshot> TopologyCache::write(const std::string& source, bool need_current,
                                              const std::vector<store::LldpRecord>& observations,
                                              const Change& change) {
  // Writers queue here; readers never take write_mutex_, so the heavy part below (the change, the
  // document, its read-back) runs while GET /api/v1/topology keeps answering from the cached revision.
  std::lock_guard writing(write_mutex_);
  TopologySnapshot before;
  if (need_current) {
    auto cur = current();
    if (!cur) return tl::unexpected(cur.error());
    before = std::move(*cur);
  } else {
    auto rev = store_.topology_revision();
    if (!rev) return tl::unexpected(from_store(rev.error()));
    before.revision = *rev;
  }
  auto next = change(before.topology.get());
  if (!next) return tl::unexpected(next.error());
  std::optional<std::string> document;
  std::shared_ptr<const topo::Topology> parsed;
  if (*next) {
    // Store the file schema as JSON (it reads back an order of magnitude faster than YAML) and cache
    // the model as it will read back from that document (as_imported: same ids), so the answers after
    // a restart are the answers now.
    auto model = topo::as_imported(**next);
    next->reset();
    if (!model) return tl::unexpected(std::move(model.error()));  // only the size limits can fail here
    document = topo::export_topology_document(*model).dump();
    parsed = std::make_shared<const topo::Topology>(std::move(*model));
  }
  if (!document && observations.empty()) return before;
  // The commit and the cache swap are the only steps that make loaders wait (see load()).
  std::lock_guard loading(load_mutex_);
  auto stored = store_.write_topology(before.revision, document, source, observations);
  if (!stored) return tl::unexpected(from_store(stored.error()));
  if (!parsed) return before;
  TopologySnapshot snapshot{std::move(parsed), stored->revision, stored->source, stored->updated_at};
  std::lock_guard lock(mutex_);
  cache_ = snapshot;
  return snapshot;
}

}  // namespace hsns::services
