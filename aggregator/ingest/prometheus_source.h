// The aggregator's Prometheus sources (issue 12, item 1; docs/brain.md "Prometheus source"): KPIs from an
// existing Prometheus server, pulled through its HTTP query API and written into the KPI store through the
// same sink as the SNMP poller's (ingest::KpiSink; StoreKpiSink in hsns-aggregator), so everything that
// reads the store or wraps the sink sees them.
//
// Contract:
// - One thread per configured source (prometheus_config.h). Every interval (the first poll at start) it
//   runs each of the source's queries in order as an instant query, GET <url>/api/v1/query?query=<q>&
//   time=<poll time, Unix seconds with ms>, with the source's timeout for each request, maps the answer
//   (prometheus_response.h) and appends that query's samples to the sink. A poll that overruns the
//   interval starts the next one at once (polls are never run concurrently, never queued).
// - Failures are counted by reason and never stop the thread: transport (no connection, a broken answer),
//   timeout, http_status (not 200), malformed (not the documented shape, too large), error_status
//   (Prometheus answered "status":"error"), sink (the sink refused the samples). A failed query leaves its
//   counter baselines as they were.
// - stop() (also the destructor) ends every thread: a thread waiting for its next poll wakes at once; one
//   in a request returns within that request's timeout.
// - Metrics (label source = the configured name, bounded by kMaxPrometheusSources):
//   hsns_prometheus_source_queries_total{source}, hsns_prometheus_source_failures_total{source,reason},
//   hsns_prometheus_source_samples_total{source}, hsns_prometheus_source_skipped_series_total{source,reason}
//   (unmapped, invalid_value, over_limit), hsns_prometheus_source_counter_resets_total{source},
//   hsns_prometheus_source_last_success_timestamp_seconds{source} (the source's latest successful query),
//   hsns_prometheus_source_query_duration_seconds{source} (a histogram).
// - Thread-safe: status() may be called from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "hsns/periodic_thread.h"
#include "ingest/prometheus_config.h"
#include "ingest/prometheus_response.h"
#include "ingest/snmp_poller.h"

namespace hsns::ingest {

class PrometheusSourceMetrics {
 public:
  explicit PrometheusSourceMetrics(prometheus::Registry& registry);
  // Every series of a source at 0 from the start, so a rate over a counter sees the first failure.
  void declare(const std::string& source);
  void query(const std::string& source, double seconds);
  void failure(const std::string& source, std::string_view reason);
  void mapped(const std::string& source, const MappedSamples& m);
  void success(const std::string& source, double unix_seconds);

 private:
  prometheus::Family<prometheus::Counter>& queries_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Counter>& samples_;
  prometheus::Family<prometheus::Counter>& skipped_;
  prometheus::Family<prometheus::Counter>& resets_;
  prometheus::Family<prometheus::Gauge>& last_success_;
  prometheus::Family<prometheus::Histogram>& duration_;
};

// What a source's polls came to so far (tests, logs).
struct PrometheusSourceStatus {
  std::uint64_t polls = 0;     // completed polls (every query tried)
  std::uint64_t queries = 0;   // queries sent
  std::uint64_t failures = 0;  // queries failed, any reason
  std::uint64_t samples = 0;   // samples the sink took
  std::string last_failure;    // "<reason>: <detail>" of the latest failure
};

class PrometheusSources {
 public:
  PrometheusSources(const PrometheusSourcesConfig& config, KpiSink& sink, PrometheusSourceMetrics& metrics);
  ~PrometheusSources();
  PrometheusSources(const PrometheusSources&) = delete;
  PrometheusSources& operator=(const PrometheusSources&) = delete;

  void start();
  void stop();
  PrometheusSourceStatus status(const std::string& source) const;

 private:
  struct Source;
  void poll(Source& source, const std::stop_token& stop);

  KpiSink& sink_;
  PrometheusSourceMetrics& metrics_;
  std::vector<std::unique_ptr<Source>> sources_;
  mutable std::mutex mutex_;  // guards every Source's status
  std::mutex lifecycle_;      // start and stop, one at a time; guards threads_ (polls never take it)
  std::vector<std::unique_ptr<PeriodicThread>> threads_;
};

}  // namespace hsns::ingest
