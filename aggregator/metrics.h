// The aggregator's Prometheus metrics (prometheus-cpp core; served by our own HTTP server at /metrics).
//
// Contract: one Metrics object per process, created at start-up; every method is thread-safe. Names
// follow Prometheus conventions: hsns_ prefix, base units (seconds, bytes), _total for counters, an
// _info gauge for the build. Label values are low-cardinality by construction: the route label is the
// route pattern ("/api/v1/ports/{port_id}"), never the raw path; unmatched paths are "unmatched". Every
// label value is one of a fixed set chosen by the caller (route patterns, method names or "other", status
// codes, reason words), so no client can grow the exposition.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "hsns/memory_budget.h"

namespace hsns {

class Metrics {
 public:
  Metrics();

  void observe_request(std::string_view route, std::string_view method, int status, double seconds);
  void observe_store(std::string_view operation, bool ok, double seconds);
  void observe_rejected(int status);  // rejected by the transport before routing (400, 408, 413, 431, 501)
  void observe_connection_shed(std::string_view action);  // "closed_idle" or "refused" at the cap
  void observe_accept_error(std::string_view kind);       // "descriptors", "memory", "other"
  void set_max_connections(double n);
  void set_open_connections(double n);
  void observe_auth_failure(std::string_view reason);
  // WebSocket sessions (http/websocket.h): the open-sessions gauge follows opened/closed; reason is one of
  // http::close_reason (slow_consumer, idle, client, shutdown, message_too_big, endpoint, error).
  void observe_websocket_opened();
  void observe_websocket_closed(std::string_view reason);
  void observe_websocket_message_sent();
  // hsns_memory_budget_{used,limit}_bytes and hsns_memory_budget_refusals_total, read from the budget at
  // every scrape (hsns/memory_budget.h).
  void watch_memory_budget(std::shared_ptr<const MemoryBudget> budget);

  // Prometheus text exposition format 0.0.4.
  std::string serialize() const;
  // For the families of other components (api/agents/reports.h, ingest/syslog_receiver.h), served with
  // these.
  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Histogram>& store_seconds_;
  prometheus::Family<prometheus::Counter>& store_errors_;
  prometheus::Family<prometheus::Counter>& rejected_;
  prometheus::Family<prometheus::Counter>& auth_failures_;
  prometheus::Family<prometheus::Counter>& connections_shed_;
  prometheus::Family<prometheus::Counter>& accept_errors_;
  prometheus::Gauge& max_connections_;
  prometheus::Gauge& open_connections_;
  prometheus::Gauge& websocket_sessions_;
  prometheus::Counter& websocket_messages_sent_;
  prometheus::Family<prometheus::Counter>& websocket_closed_;
  prometheus::Gauge& budget_used_;
  prometheus::Gauge& budget_limit_;
  prometheus::Counter& budget_refusals_;
  mutable std::mutex budget_mutex_;  // guards budget_ and budget_refusals_seen_
  std::shared_ptr<const MemoryBudget> budget_;
  mutable std::uint64_t budget_refusals_seen_ = 0;  // what budget_refusals_ has counted
};

}  // namespace hsns
