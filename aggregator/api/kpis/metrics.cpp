#include "api/kpis/metrics.h"

namespace hsns::kpis_api {
namespace {

const char* source_label(KpiSource source) {
  return source == KpiSource::push ? "push" : "report";
}

void add(prometheus::Family<prometheus::Counter>& family, const prometheus::Labels& labels, std::uint64_t n) {
  family.Add(labels).Increment(static_cast<double>(n));
}

}  // namespace

KpiMetrics::KpiMetrics(prometheus::Registry& registry)
    : samples_(prometheus::BuildCounter()
                   .Name("hsns_kpi_samples_total")
                   .Help("KPI samples handed to the KPI store, by source and what became of them")
                   .Register(registry)),
      unknown_entity_(prometheus::BuildCounter()
                          .Name("hsns_kpi_unknown_entity_samples_total")
                          .Help("Pushed KPI samples whose entity names no device of the topology (stored)")
                          .Register(registry)
                          .Add({})),
      failures_(prometheus::BuildCounter()
                    .Name("hsns_kpi_append_failures_total")
                    .Help("KPI batches the store refused or failed to write, by source")
                    .Register(registry)),
      events_(prometheus::BuildCounter()
                  .Name("hsns_kpi_events_total")
                  .Help("Events pushed through POST /api/v1/events, by result")
                  .Register(registry)),
      pruned_(prometheus::BuildCounter()
                  .Name("hsns_kpi_pruned_total")
                  .Help("Raw samples, buckets and series removed by KPI retention, by resolution")
                  .Register(registry)) {}

void KpiMetrics::observe_append(KpiSource source, const store::KpiAppendResult& result,
                                std::uint64_t unknown_entity) {
  const std::string label = source_label(source);
  add(samples_, {{"source", label}, {"result", "accepted"}}, result.accepted);
  add(samples_, {{"source", label}, {"result", "duplicate"}}, result.duplicate);
  add(samples_, {{"source", label}, {"result", "out_of_order"}}, result.out_of_order);
  add(samples_, {{"source", label}, {"result", "late"}}, result.late);
  add(samples_, {{"source", label}, {"result", "future"}}, result.future);
  unknown_entity_.Increment(static_cast<double>(unknown_entity));
}

void KpiMetrics::observe_append_failure(KpiSource source) {
  failures_.Add({{"source", source_label(source)}}).Increment();
}

void KpiMetrics::observe_events(std::uint64_t stored, std::uint64_t dropped, std::uint64_t unknown_entity) {
  add(events_, {{"result", "stored"}}, stored);
  add(events_, {{"result", "dropped"}}, dropped);
  add(events_, {{"result", "unknown_entity"}}, unknown_entity);
}

void KpiMetrics::observe_prune(const store::KpiPruneResult& result) {
  add(pruned_, {{"resolution", "raw"}}, result.raw);
  add(pruned_, {{"resolution", "1m"}}, result.minute);
  add(pruned_, {{"resolution", "1h"}}, result.hour);
  add(pruned_, {{"resolution", "series"}}, result.series);
}

}  // namespace hsns::kpis_api
