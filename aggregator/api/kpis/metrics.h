// The KPI store's counters in /metrics (docs/brain.md, "KPI store"):
//   hsns_kpi_samples_total{source="push"|"report",
//   result="accepted"|"duplicate"|"out_of_order"|"late"|"future"}
//     (accepted includes out_of_order), hsns_kpi_unknown_entity_samples_total (pushed samples whose
//     entity names no device of the topology; stored all the same), hsns_kpi_append_failures_total{source},
//     hsns_kpi_events_total{result="stored"|"dropped"|"unknown_entity"} (pushed events),
//     hsns_kpi_pruned_total{resolution="raw"|"1m"|"1h"|"series"}.
// Thread-safe (prometheus-cpp counters); the registry must outlive it.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <cstdint>

#include "store/kpi_store.h"

namespace hsns::kpis_api {

enum class KpiSource : std::uint8_t { push, report };

class KpiMetrics {
 public:
  explicit KpiMetrics(prometheus::Registry& registry);
  void observe_append(KpiSource source, const store::KpiAppendResult& result, std::uint64_t unknown_entity);
  void observe_append_failure(KpiSource source);
  void observe_events(std::uint64_t stored, std::uint64_t dropped, std::uint64_t unknown_entity);
  void observe_prune(const store::KpiPruneResult& result);

 private:
  prometheus::Family<prometheus::Counter>& samples_;
  prometheus::Counter& unknown_entity_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Counter>& events_;
  prometheus::Family<prometheus::Counter>& pruned_;
};

}  // namespace hsns::kpis_api
