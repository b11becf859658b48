#include "api/agents/reports.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/network/requests.h"
#include "hsns/log.h"
#include "hsns/proto/report.h"
#include "http/json_io.h"
#include "services/store_errors.h"

namespace hsns::network {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

// The sections that name their host must name the path's.
std::optional<Problem> check_section_hosts(const std::string& host, const proto::Report& report) {
  std::vector<InvalidParam> wrong;
  const auto check = [&](const char* section, const std::string& named) {
    if (named != host) wrong.push_back({std::string(section) + ".host", "must be the path's host " + host});
  };
  if (report.qp) check("qp", report.qp->host);
  if (report.optics) check("optics", report.optics->host);
  if (report.lldp) check("lldp", report.lldp->host);
  if (wrong.empty()) return std::nullopt;
  return Problem::invalid(std::move(wrong));
}

Response post_report(store::TelemetryStore& telemetry, TelemetryMetrics& metrics,
                     const ReportObserver& on_stored, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  const std::string host(ctx.path_param("host"));
  if (auto why = check_host_name(host)) return http::problem(ctx, Problem::invalid("host", *why));
  auto encoding =
      proto::parse_media_type(ctx.request[bhttp::field::content_type], proto::Kind<proto::Report>::kName);
  if (!encoding) return http::problem(ctx, Problem::unsupported_media_type(encoding.error().message()));
  const std::string& body = ctx.request.body();
  auto report = proto::decode<proto::Report>(body, *encoding);
  if (!report) return http::problem(ctx, report.error());
  if (auto p = check_section_hosts(host, *report)) return http::problem(ctx, *p);
  auto stored = telemetry.ingest(host, *report, body.size());
  if (!stored) return http::problem(ctx, services::from_store(stored.error()));
  metrics.observe_batch(*stored);
  if (on_stored && !stored->duplicate) on_stored(host, *report);
  return http::json_ok(ctx, nlohmann::json{{"acked_seq", stored->acked_seq}});
}

}  // namespace

TelemetryMetrics::TelemetryMetrics(prometheus::Registry& registry)
    : batches_(
          prometheus::BuildCounter()
              .Name("hsns_telemetry_batches_total")
              .Help("Telemetry report batches accepted, by result: stored, or duplicate (seq seen before)")
              .Register(registry)),
      rows_stored_(prometheus::BuildCounter()
                       .Name("hsns_telemetry_rows_stored_total")
                       .Help("Rows written for telemetry report batches, in every table")
                       .Register(registry)
                       .Add({})),
      pruned_batches_(prometheus::BuildCounter()
                          .Name("hsns_telemetry_pruned_batches_total")
                          .Help("Telemetry report batches removed by retention, by reason: age or size")
                          .Register(registry)),
      pruned_rows_(prometheus::BuildCounter()
                       .Name("hsns_telemetry_pruned_rows_total")
                       .Help("Rows removed by telemetry retention, by table")
                       .Register(registry)) {
  // Every series exists from the start, so a scrape sees 0 before the first prune.
  for (const char* result : {"stored", "duplicate"}) batches_.Add({{"result", result}});
  for (const char* reason : {"age", "size"}) pruned_batches_.Add({{"reason", reason}});
  for (const char* table : store::kTelemetryTableNames) pruned_rows_.Add({{"table", table}});
}

void TelemetryMetrics::observe_batch(const store::IngestResult& result) {
  batches_.Add({{"result", result.duplicate ? "duplicate" : "stored"}}).Increment();
  rows_stored_.Increment(static_cast<double>(result.rows));
}

void TelemetryMetrics::observe_prune(const store::PruneResult& result) {
  pruned_batches_.Add({{"reason", "age"}}).Increment(static_cast<double>(result.batches_by_age));
  pruned_batches_.Add({{"reason", "size"}}).Increment(static_cast<double>(result.batches_by_size));
  for (std::size_t t = 0; t < store::kTelemetryTables; ++t) {
    pruned_rows_.Add({{"table", store::kTelemetryTableNames.at(t)}})
        .Increment(static_cast<double>(result.rows.at(t)));
  }
}

void register_report_routes(http::Router& router, store::TelemetryStore& telemetry, TelemetryMetrics& metrics,
                            ReportObserver on_stored) {
  using http::Permission;
  router.add(
      bhttp::verb::post, "/api/v1/agents/{host}/reports",
      Permission::agent_report | Permission::manage_network,
      [&telemetry, &metrics, on_stored = std::move(on_stored)](RequestContext& ctx) {
        return post_report(telemetry, metrics, on_stored, ctx);
      },
      http::Cost::heavy);
}

TelemetryRetention::TelemetryRetention(store::TelemetryStore& telemetry, store::RetentionPolicy policy,
                                       std::chrono::milliseconds interval, TelemetryMetrics& metrics)
    : telemetry_(telemetry), policy_(policy), interval_(interval), metrics_(metrics), thread_([this] {
        run();
      }) {}

TelemetryRetention::~TelemetryRetention() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TelemetryRetention::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    auto pruned = telemetry_.prune(policy_, std::chrono::system_clock::now());
    if (!pruned) {
      HSNS_LOG(warning) << "telemetry retention: " << pruned.error().message();
    } else {
      metrics_.observe_prune(*pruned);
      if (pruned->total_rows() > 0) {
        HSNS_LOG(info) << "telemetry retention removed " << pruned->batches_by_age << " batches by age and "
                       << pruned->batches_by_size << " by size (" << pruned->total_rows() << " rows)";
      }
    }
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace hsns::network
