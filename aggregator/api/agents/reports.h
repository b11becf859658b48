// The telemetry report route and the retention of what it stores.
//
// Route (docs/rest-api.md, aggregator/openapi.json):
//   POST /api/v1/agents/{host}/reports   one report batch of hsnsd (hsns/proto/report.h), role agent or
//                                        operator; 200 {"acked_seq": N}
// Contract:
// - The body is CBOR or JSON by its Content-Type (application/cbor, application/json or the report kind's
//   vnd media types; anything else 415), within the route's own body limit (http.report_body_limit_bytes,
//   413 beyond it), decoded with the contract's reader (proto::decode<Report>): a bad body is a 400
//   problem naming each field at fault and stores nothing. The qp, optics and lldp sections name their
//   host; a host other than the path's is a 400 naming "<section>.host".
// - The batch is stored whole in one transaction (store::TelemetryStore::ingest); an unregistered host is
//   404. A batch whose seq this host sent before answers 200 with the same acknowledgement and stores
//   nothing again, so an agent resends safely after a lost answer.
// - The "lldp" section of a batch stored now (not of a duplicate) feeds the topology's LLDP merge as
//   observations of that host (services::TopologyService::merge_reported_lldp; the same merge as POST
//   /api/v1/topology/lldp), after the batch is stored. The merge's outcome never changes the answer: a
//   failed merge (no topology yet, a store error) is counted and logged and the batch stays stored and
//   acknowledged; neighbours naming an unknown host port or switch (unresolved) and conflicts with the
//   topology are counted and logged, never applied.
// - Decoding and storing a batch of up to hundreds of thousands of records is work of seconds: the route
//   runs on the worker pool (Cost::heavy; 503 with Retry-After when its queue is full, the agent keeps
//   the batch in its spool and resends).
// - TelemetryRetention prunes on its own thread every interval (TelemetryStore::prune with the policy;
//   the first run at once) until destroyed; a failed run is logged and retried at the next interval.
// - TelemetryMetrics: hsns_telemetry_batches_total{result="stored"|"duplicate"},
//   hsns_telemetry_rows_stored_total, hsns_telemetry_pruned_batches_total{reason="age"|"size"},
//   hsns_telemetry_pruned_rows_total{table=<store::kTelemetryTableNames>},
//   hsns_telemetry_lldp_merges_total{result="merged"|"unchanged"|"no_topology"|"failed"} (per report with
//   an lldp section; unchanged: no neighbours or the same as last merged), hsns_telemetry_lldp_links_total
//   {change="added"|"completed"}, hsns_telemetry_lldp_issues_total{kind="unresolved"|"conflict"}.
//   Thread-safe.
// The store, the topology cache and the metrics must outlive the router and the retention thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <chrono>
#include <functional>
#include <memory>

#include "hsns/periodic_thread.h"
#include "http/router.h"
#include "services/topology_service.h"
#include "store/telemetry_store.h"

namespace hsns::network {

class TelemetryMetrics {
 public:
  explicit TelemetryMetrics(prometheus::Registry& registry);
  void observe_batch(const store::IngestResult& result);
  void observe_prune(const store::PruneResult& result);
  // One report's LLDP merge (result as the metric's label) and, when it ran, its outcome.
  void observe_lldp_merge(const char* result, const services::LldpOutcome* outcome = nullptr);

 private:
  prometheus::Family<prometheus::Counter>& batches_;
  prometheus::Counter& rows_stored_;
  prometheus::Family<prometheus::Counter>& pruned_batches_;
  prometheus::Family<prometheus::Counter>& pruned_rows_;
  prometheus::Family<prometheus::Counter>& lldp_merges_;
  prometheus::Family<prometheus::Counter>& lldp_links_;
  prometheus::Family<prometheus::Counter>& lldp_issues_;
};

// Called on the worker with every newly stored batch (not a duplicate), after its answer is decided:
// what derives data from reports (the KPI samples of api/kpis/report_kpis.h) hooks in here.
using ReportObserver = std::function<void(const std::string& host, const proto::Report& report)>;

void register_report_routes(http::Router& router, store::TelemetryStore& telemetry, TelemetryMetrics& metrics,
                            std::shared_ptr<services::TopologyCache> topology, ReportObserver on_stored = {});

class TelemetryRetention {
 public:
  TelemetryRetention(store::TelemetryStore& telemetry, store::RetentionPolicy policy,
                     std::chrono::milliseconds interval, TelemetryMetrics& metrics);
  TelemetryRetention(const TelemetryRetention&) = delete;
  TelemetryRetention& operator=(const TelemetryRetention&) = delete;

 private:
  void prune();

  store::TelemetryStore& telemetry_;
  store::RetentionPolicy policy_;
  TelemetryMetrics& metrics_;
  PeriodicThread thread_;  // last: starts once the members above exist
};

}  // namespace hsns::network
