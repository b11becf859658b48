#include "brain/pipeline_metrics.h"

namespace hsns::brain_pipeline {
namespace {

// 100 µs .. 10 s: the engine's target is well under a second from arrival to fault.
prometheus::Histogram::BucketBoundaries lag_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

}  // namespace

BrainMetrics::BrainMetrics(prometheus::Registry& registry)
    : samples_(prometheus::BuildCounter()
                   .Name("hsns_brain_samples_total")
                   .Help("KPI samples taken into the brain pipeline's queue")
                   .Register(registry)
                   .Add({})),
      logs_(prometheus::BuildCounter()
                .Name("hsns_brain_log_events_total")
                .Help("Log events (syslog lines, pushed events) taken into the brain pipeline's queue")
                .Register(registry)
                .Add({})),
      dropped_(prometheus::BuildCounter()
                   .Name("hsns_brain_dropped_total")
                   .Help("KPI samples and log events dropped because the brain pipeline's queue was full")
                   .Register(registry)),
      dropped_kpi_(dropped_.Add({{"input", "kpi"}})),
      dropped_log_(dropped_.Add({{"input", "log"}})),
      queue_depth_(prometheus::BuildGauge()
                       .Name("hsns_brain_queue_depth")
                       .Help("KPI samples and log events waiting in the brain pipeline's queue")
                       .Register(registry)
                       .Add({})),
      patterns_(prometheus::BuildGauge()
                    .Name("hsns_brain_patterns")
                    .Help("Fault patterns in the active library")
                    .Register(registry)
                    .Add({})),
      faults_(prometheus::BuildCounter()
                  .Name("hsns_brain_faults_total")
                  .Help("Faults the pattern matcher raised or cleared, by fault type")
                  .Register(registry)),
      reloads_(prometheus::BuildCounter()
                   .Name("hsns_brain_reloads_total")
                   .Help("Pattern library reloads, by result (error: the previous library stayed)")
                   .Register(registry)),
      reload_ok_(reloads_.Add({{"result", "ok"}})),
      reload_error_(reloads_.Add({{"result", "error"}})),
      processing_lag_(prometheus::BuildHistogram()
                          .Name("hsns_brain_processing_lag_seconds")
                          .Help("Time from a queue item's arrival to the end of its processing")
                          .Register(registry)
                          .Add({}, lag_buckets())),
      fault_lag_(prometheus::BuildHistogram()
                     .Name("hsns_brain_fault_lag_seconds")
                     .Help("Time from the arrival of a sample or line to the fault it raised or cleared")
                     .Register(registry)
                     .Add({}, lag_buckets())) {}

void BrainMetrics::observe_fault(const std::string& type, bool raised) {
  faults_.Add({{"type", type}, {"state", raised ? "raised" : "cleared"}}).Increment();
}

}  // namespace hsns::brain_pipeline
