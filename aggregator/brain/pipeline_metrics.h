// The brain pipeline's figures in /metrics (docs/brain.md, "Live pipeline"), base units:
//   hsns_brain_samples_total, hsns_brain_log_events_total (taken into the queue),
//   hsns_brain_dropped_total{input="kpi"|"log"} (the queue was full),
//   hsns_brain_queue_depth (units waiting), hsns_brain_patterns (the library's size),
//   hsns_brain_faults_total{type="<fault>",state="raised"|"cleared"},
//   hsns_brain_reloads_total{result="ok"|"error"},
//   hsns_brain_processing_lag_seconds (arrival -> processed, per queue item) and
//   hsns_brain_fault_lag_seconds (arrival -> fault handed over, per fault): histograms.
// The type label takes the library's fault types only (bounded by the library). Thread-safe
// (prometheus-cpp); the registry must outlive it.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstddef>
#include <string>

namespace hsns::brain_pipeline {

class BrainMetrics {
 public:
  explicit BrainMetrics(prometheus::Registry& registry);
  void observe_samples(std::size_t n) { samples_.Increment(static_cast<double>(n)); }
  void observe_logs(std::size_t n) { logs_.Increment(static_cast<double>(n)); }
  void observe_dropped_samples(std::size_t n) { dropped_kpi_.Increment(static_cast<double>(n)); }
  void observe_dropped_logs(std::size_t n) { dropped_log_.Increment(static_cast<double>(n)); }
  void set_queue_depth(std::size_t depth) { queue_depth_.Set(static_cast<double>(depth)); }
  void set_library_size(std::size_t patterns) { patterns_.Set(static_cast<double>(patterns)); }
  void observe_fault(const std::string& type, bool raised);
  void observe_reload(bool ok) { (ok ? reload_ok_ : reload_error_).Increment(); }
  void observe_processing_lag(double seconds) { processing_lag_.Observe(seconds); }
  void observe_fault_lag(double seconds) { fault_lag_.Observe(seconds); }

 private:
  prometheus::Counter& samples_;
  prometheus::Counter& logs_;
  prometheus::Family<prometheus::Counter>& dropped_;
  prometheus::Counter& dropped_kpi_;
  prometheus::Counter& dropped_log_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& patterns_;
  prometheus::Family<prometheus::Counter>& faults_;
  prometheus::Family<prometheus::Counter>& reloads_;
  prometheus::Counter& reload_ok_;
  prometheus::Counter& reload_error_;
  prometheus::Histogram& processing_lag_;
  prometheus::Histogram& fault_lag_;
};

}  // namespace hsns::brain_pipeline
