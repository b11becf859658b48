// A KPI store that counts its accepted writes: the cheap change mark the overlay grade stream
// (api/overlays/stream.h) polls to learn that new KPI data landed, without a query.
//
// Contract:
// - Every call is forwarded to the wrapped store. change_mark() moves (an atomic increment, after the
//   wrapped append returned) after every append that stored at least one sample (accepted > 0): the
//   report route, POST /api/v1/kpis, the SNMP poller and the Prometheus sources all append through the
//   aggregator's one KPI sink chain, so any of them moves it. A refused batch, or one of duplicates and
//   late samples only, leaves it. A reader that reads the mark and then the store sees data at least as
//   new as the mark says. Writes by another process are not seen (one aggregator per database).
// - Thread-safe as the wrapped store; the wrapped store must outlive it.
#pragma once

#include <atomic>
#include <cstdint>

#include "store/kpi_store.h"

namespace hsns::store {

class MarkedKpiStore final : public KpiStore {
 public:
  explicit MarkedKpiStore(KpiStore& store) : store_(store) {}

  StoreResult<KpiAppendResult> append(std::span<const KpiSample> samples) override {
    auto result = store_.append(samples);
    if (result && result->accepted > 0) mark_.fetch_add(1, std::memory_order_release);
    return result;
  }
  StoreResult<KpiSeriesPoints> query(const KpiQuery& q) override { return store_.query(q); }
  StoreResult<KpiSeriesList> list_series(const KpiSeriesFilter& filter) override {
    return store_.list_series(filter);
  }
  StoreResult<KpiLatestValues> latest(const KpiLatestQuery& q) override { return store_.latest(q); }
  StoreResult<KpiPruneResult> prune(std::chrono::system_clock::time_point now) override {
    return store_.prune(now);
  }

  std::uint64_t change_mark() const { return mark_.load(std::memory_order_acquire); }

 private:
  KpiStore& store_;
  std::atomic<std::uint64_t> mark_{0};
};

}  // namespace hsns::store
