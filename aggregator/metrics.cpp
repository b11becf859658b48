#include "metrics.h"

#include <prometheus/text_serializer.h>

#include "hsns/version.h"

namespace hsns {
namespace {

const prometheus::Histogram::BucketBoundaries& latency_buckets() {
  static const prometheus::Histogram::BucketBoundaries b{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                         0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
  return b;
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("hsns_http_requests_total")
                    .Help("HTTP requests answered, by route pattern, method and status code")
                    .Register(*registry_)),
      request_seconds_(prometheus::BuildHistogram()
                           .Name("hsns_http_request_duration_seconds")
                           .Help("Time from a complete request to its response being ready, by route "
                                 "pattern, method and status")
                           .Register(*registry_)),
      store_seconds_(prometheus::BuildHistogram()
                         .Name("hsns_store_operation_duration_seconds")
                         .Help("Latency of store operations, by operation")
                         .Register(*registry_)),
      store_errors_(prometheus::BuildCounter()
                        .Name("hsns_store_errors_total")
                        .Help("Store operations that failed because the store was unavailable")
                        .Register(*registry_)),
      rejected_(prometheus::BuildCounter()
                    .Name("hsns_http_rejected_requests_total")
                    .Help("Requests rejected by the HTTP transport before routing, by status code")
                    .Register(*registry_)),
      auth_failures_(prometheus::BuildCounter()
                         .Name("hsns_http_auth_failures_total")
                         .Help("Requests refused by authentication or authorisation, by reason")
                         .Register(*registry_)),
      connections_shed_(
          prometheus::BuildCounter()
              .Name("hsns_http_connections_shed_total")
              .Help("Connections over the connection limit: the oldest idle connection "
                    "closed for a new one (closed_idle), or the new one refused with 503 (refused)")
              .Register(*registry_)),
      accept_errors_(prometheus::BuildCounter()
                         .Name("hsns_http_accept_errors_total")
                         .Help("Failed accepts, by kind: descriptors (EMFILE/ENFILE: accepting backs off), "
                               "memory, other")
                         .Register(*registry_)),
      max_connections_(prometheus::BuildGauge()
                           .Name("hsns_http_max_connections")
                           .Help("The connection limit in force (configured, lowered to fit RLIMIT_NOFILE)")
                           .Register(*registry_)
                           .Add({})),
      open_connections_(prometheus::BuildGauge()
                            .Name("hsns_http_open_connections")
                            .Help("HTTP connections currently open (WebSocket sessions included)")
                            .Register(*registry_)
                            .Add({})),
      websocket_sessions_(prometheus::BuildGauge()
                              .Name("hsns_websocket_sessions_open")
                              .Help("WebSocket sessions currently open")
                              .Register(*registry_)
                              .Add({})),
      websocket_messages_sent_(prometheus::BuildCounter()
                                   .Name("hsns_websocket_messages_sent_total")
                                   .Help("Messages written to WebSocket sessions")
                                   .Register(*registry_)
                                   .Add({})),
      websocket_closed_(prometheus::BuildCounter()
                            .Name("hsns_websocket_sessions_closed_total")
                            .Help("WebSocket sessions ended, by reason: slow_consumer (outgoing queue full, "
                                  "closed 1013), idle, client, shutdown (1001), message_too_big (1009), "
                                  "endpoint, error")
                            .Register(*registry_)),
      budget_used_(prometheus::BuildGauge()
                       .Name("hsns_memory_budget_used_bytes")
                       .Help("Bytes of the memory budget held by request bodies being read or handled "
                             "(with what is decoded from them)")
                       .Register(*registry_)
                       .Add({})),
      budget_limit_(prometheus::BuildGauge()
                        .Name("hsns_memory_budget_limit_bytes")
                        .Help("The memory budget of request bodies (ingest.memory_budget_bytes)")
                        .Register(*registry_)
                        .Add({})),
      budget_refusals_(prometheus::BuildCounter()
                           .Name("hsns_memory_budget_refusals_total")
                           .Help("Requests answered 503 because their body did not fit the memory budget")
                           .Register(*registry_)
                           .Add({})) {
  prometheus::BuildGauge()
      .Name("hsns_build_info")
      .Help("Build identity of the running aggregator; the value is always 1")
      .Register(*registry_)
      .Add({{"version", kVersion}, {"revision", kGitRevision}, {"component", "aggregator"}})
      .Set(1);
}

void Metrics::observe_request(std::string_view route, std::string_view method, int status, double seconds) {
  requests_
      .Add({{"route", std::string(route)}, {"method", std::string(method)}, {"code", std::to_string(status)}})
      .Increment();
  request_seconds_
      .Add({{"route", std::string(route)}, {"method", std::string(method)}, {"code", std::to_string(status)}},
           latency_buckets())
      .Observe(seconds);
}

void Metrics::observe_store(std::string_view operation, bool ok, double seconds) {
  store_seconds_.Add({{"operation", std::string(operation)}}, latency_buckets()).Observe(seconds);
  if (!ok) store_errors_.Add({{"operation", std::string(operation)}}).Increment();
}

void Metrics::observe_rejected(int status) {
  rejected_.Add({{"code", std::to_string(status)}}).Increment();
}

void Metrics::observe_connection_shed(std::string_view action) {
  connections_shed_.Add({{"action", std::string(action)}}).Increment();
}

void Metrics::observe_accept_error(std::string_view kind) {
  accept_errors_.Add({{"kind", std::string(kind)}}).Increment();
}

void Metrics::set_max_connections(double n) {
  max_connections_.Set(n);
}

void Metrics::set_open_connections(double n) {
  open_connections_.Set(n);
}

void Metrics::observe_auth_failure(std::string_view reason) {
  auth_failures_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::observe_websocket_opened() {
  websocket_sessions_.Increment();
}

void Metrics::observe_websocket_closed(std::string_view reason) {
  websocket_sessions_.Decrement();
  websocket_closed_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::observe_websocket_message_sent() {
  websocket_messages_sent_.Increment();
}

void Metrics::watch_memory_budget(std::shared_ptr<const MemoryBudget> budget) {
  const std::lock_guard lock(budget_mutex_);
  budget_ = std::move(budget);
}

std::string Metrics::serialize() const {
  {
    const std::lock_guard lock(budget_mutex_);
    if (budget_) {
      budget_used_.Set(static_cast<double>(budget_->used()));
      budget_limit_.Set(static_cast<double>(budget_->limit()));
      const auto refusals = budget_->refusals();
      budget_refusals_.Increment(static_cast<double>(refusals - budget_refusals_seen_));
      budget_refusals_seen_ = refusals;
    }
  }
  const prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect());
}

}  // namespace hsns
