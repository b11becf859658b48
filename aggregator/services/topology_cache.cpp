#include "services/topology_cache.h"

#include <atomic>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "services/store_errors.h"
#include "topology/export.h"
#include "topology/import.h"

namespace hsns::services {
namespace topo = hsns::topology;
namespace {

void apply(topo::Topology& t, const TopologyCache::StateChange& c) {
  if (c.npu) {
    (void)t.set_npu_state(topo::NpuRef{c.node, *c.npu}, c.state);
  } else {
    t.set_node_state(c.node, c.state);
  }
}

// The stored state rows on top of the parsed document. A row naming what the document lacks cannot
// exist (a new document clears the rows) and is skipped.
void apply_rows(topo::Topology& t, const std::vector<store::DeviceStateRecord>& rows) {
  for (const auto& row : rows) {
    const auto id = t.find(row.device);
    const auto state = topo::parse_state(row.state);
    if (!id || !state) continue;
    if (row.npu) {
      if (*row.npu < 0 || *row.npu > std::numeric_limits<std::uint32_t>::max()) continue;
      apply(t, {*id, static_cast<std::uint32_t>(*row.npu), *state});
    } else {
      apply(t, {*id, std::nullopt, *state});
    }
  }
}

bool changes(const topo::Topology& t, const TopologyCache::StateChange& c) {
  if (!c.npu) return t.node(c.node).state != c.state;
  const auto* npu = t.npu(topo::NpuRef{c.node, *c.npu});
  return npu != nullptr && npu->state != c.state;
}

}  // namespace

std::optional<std::int64_t> TopologyCache::change_mark() const {
  const store::RevisionSource* revisions = store_.revisions();
  if (revisions == nullptr) return std::nullopt;
  return revisions->revision(store::RevisionDomain::topology);
}

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
  apply_rows(*parsed, record->states);
  TopologySnapshot loaded{std::make_shared<topo::Topology>(std::move(*parsed)), record->revision,
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
  if (!*next) {
    if (observations.empty()) return before;
    std::lock_guard loading(load_mutex_);
    auto stored = store_.write_topology(before.revision, std::nullopt, source, observations);
    if (!stored) return tl::unexpected(from_store(stored.error()));
    return before;
  }
  // Store the file schema as JSON (it reads back an order of magnitude faster than YAML) and cache
  // the model as it will read back from that document (as_imported: same ids), so the answers after
  // a restart are the answers now.
  auto model = topo::as_imported(**next);
  next->reset();
  if (!model) return tl::unexpected(std::move(model.error()));  // only the size limits can fail here
  const std::string document = topo::export_topology_document(*model).dump();
  return store_document(before.revision, document, source, observations,
                        std::make_shared<topo::Topology>(std::move(*model)));
}

Result<TopologySnapshot> TopologyCache::replace(const std::string& source, std::string_view document,
                                                topo::Topology model) {
  std::lock_guard writing(write_mutex_);
  auto rev = store_.topology_revision();
  if (!rev) return tl::unexpected(from_store(rev.error()));
  return store_document(*rev, document, source, {}, std::make_shared<topo::Topology>(std::move(model)));
}

Result<TopologySnapshot> TopologyCache::store_document(std::int64_t expected_revision,
                                                       std::string_view document, const std::string& source,
                                                       const std::vector<store::LldpRecord>& observations,
                                                       std::shared_ptr<topo::Topology> model) {
  // The commit and the cache swap are the only steps that make loaders wait (see load()).
  std::lock_guard loading(load_mutex_);
  auto stored = store_.write_topology(expected_revision, document, source, observations);
  if (!stored) return tl::unexpected(from_store(stored.error()));
  TopologySnapshot snapshot{std::move(model), stored->revision, stored->source, stored->updated_at};
  std::lock_guard lock(mutex_);
  cache_ = snapshot;
  return snapshot;
}

Result<TopologySnapshot> TopologyCache::set_states(const std::string& source, const StatePlan& plan) {
  std::lock_guard writing(write_mutex_);
  auto before = current();
  if (!before) return tl::unexpected(before.error());
  auto planned = plan(*before->topology);
  if (!planned) return tl::unexpected(planned.error());
  std::vector<StateChange> effective;
  std::vector<store::DeviceStateRecord> rows;
  for (const auto& c : *planned) {
    if (!changes(*before->topology, c)) continue;
    rows.push_back({before->topology->node(c.node).name,
                    c.npu ? std::optional<std::int64_t>(*c.npu) : std::optional<std::int64_t>(),
                    std::string(topo::to_string(c.state))});
    effective.push_back(c);
  }
  if (rows.empty()) return before;
  const std::int64_t expected = before->revision;
  const auto* model = before->topology.get();
  before->topology.reset();  // our own reference must not count as a reader's below
  std::lock_guard loading(load_mutex_);
  auto stored = store_.write_device_states(expected, rows, source);
  if (!stored) return tl::unexpected(from_store(stored.error()));
  std::shared_ptr<topo::Topology> owned;
  {
    std::lock_guard lock(mutex_);
    // load_mutex_ and write_mutex_ are held: cache_ is still the model the plan saw.
    if (overlay_.base.revision <= expected) overlay_ = {};  // stale now; it may share the model
    if (cache_.topology.get() == model && cache_.topology.use_count() == 1) {
      // No reader holds the model and new readers copy it only under mutex_: change it in place. The
      // fence pairs with the release of the last reader's reference, so its reads happen before these
      // writes. The model was created non-const (load(), store_document()).
      std::atomic_thread_fence(std::memory_order_acquire);
      auto* writable = const_cast<topo::Topology*>(cache_.topology.get());  // NOLINT(*-const-cast)
      for (const auto& c : effective) apply(*writable, c);
      cache_.revision = stored->revision;
      cache_.source = stored->source;
      cache_.updated_at = stored->updated_at;
      return cache_;
    }
  }
  // Readers hold the model: change a copy (outside mutex_, readers keep being answered meanwhile).
  owned = std::make_shared<topo::Topology>(*model);
  for (const auto& c : effective) apply(*owned, c);
  TopologySnapshot snapshot{std::move(owned), stored->revision, stored->source, stored->updated_at};
  std::lock_guard lock(mutex_);
  cache_ = snapshot;
  return snapshot;
}

}  // namespace hsns::services
