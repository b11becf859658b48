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

// The report's LLDP neighbours into the topology; never fails the report (the batch is stored already).
void merge_lldp(services::TopologyService& topology, TelemetryMetrics& metrics, const std::string& host,
                const proto::LldpNeighbors& section) {
  auto merged = topology.merge_reported_lldp(section);
  if (!merged) {
    // Before the first topology import every report lands here: not worth a warning each time.
    if (merged.error().kind == Error::Kind::not_found) {
      metrics.observe_lldp_merge("no_topology");
      HSNS_LOG(debug) << "report of " << host << ": no topology to merge LLDP into";
    } else {
      metrics.observe_lldp_merge("failed");
      HSNS_LOG(warning) << "report of " << host
                        << ": LLDP merge failed (the batch is stored): " << merged.error().message();
    }
    return;
  }
  if (merged->unchanged) {
    metrics.observe_lldp_merge("unchanged");
    return;
  }
  const auto& report = merged->outcome.report;
  metrics.observe_lldp_merge("merged", &merged->outcome);
  if (report.added > 0 || report.completed > 0) {
    HSNS_LOG(info) << "report of " << host << ": LLDP added " << report.added << " links, completed "
                   << report.completed << " (topology revision " << merged->outcome.revision << ")";
  }
  for (const auto* issues : {&report.unresolved, &report.conflicts}) {
    for (const auto& i : *issues) {
      HSNS_LOG(warning) << "report of " << host << ": LLDP " << i.field << " '" << i.observed
                        << "': " << i.reason;
    }
  }
}

Response post_report(store::TelemetryStore& telemetry, services::TopologyService& topology,
                     TelemetryMetrics& metrics, const ReportObserver& on_stored, RequestContext& ctx) {
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
  if (report->lldp && !stored->duplicate) merge_lldp(topology, metrics, host, *report->lldp);
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
                       .Register(registry)),
      lldp_merges_(prometheus::BuildCounter()
                       .Name("hsns_telemetry_lldp_merges_total")
                       .Help("LLDP sections of stored reports fed to the topology, by result: merged, "
                             "unchanged, no_topology or failed")
                       .Register(registry)),
      lldp_links_(prometheus::BuildCounter()
                      .Name("hsns_telemetry_lldp_links_total")
                      .Help("Topology host links reported LLDP changed, by change: added or completed")
                      .Register(registry)),
      lldp_issues_(prometheus::BuildCounter()
                       .Name("hsns_telemetry_lldp_issues_total")
                       .Help("Reported LLDP neighbours not applied to the topology, by kind: unresolved "
                             "(unknown host port or switch) or conflict")
                       .Register(registry)) {
  // Every series exists from the start, so a scrape sees 0 before the first prune.
  for (const char* result : {"stored", "duplicate"}) batches_.Add({{"result", result}});
  for (const char* reason : {"age", "size"}) pruned_batches_.Add({{"reason", reason}});
  for (const char* table : store::kTelemetryTableNames) pruned_rows_.Add({{"table", table}});
  for (const char* result : {"merged", "unchanged", "no_topology", "failed"})
    lldp_merges_.Add({{"result", result}});
  for (const char* change : {"added", "completed"}) lldp_links_.Add({{"change", change}});
  for (const char* kind : {"unresolved", "conflict"}) lldp_issues_.Add({{"kind", kind}});
}

void TelemetryMetrics::observe_batch(const store::IngestResult& result) {
  batches_.Add({{"result", result.duplicate ? "duplicate" : "stored"}}).Increment();
  rows_stored_.Increment(static_cast<double>(result.rows));
}

void TelemetryMetrics::observe_lldp_merge(const char* result, const services::LldpOutcome* outcome) {
  lldp_merges_.Add({{"result", result}}).Increment();
  if (outcome == nullptr) return;
  const auto& r = outcome->report;
  lldp_links_.Add({{"change", "added"}}).Increment(static_cast<double>(r.added));
  lldp_links_.Add({{"change", "completed"}}).Increment(static_cast<double>(r.completed));
  lldp_issues_.Add({{"kind", "unresolved"}}).Increment(static_cast<double>(r.unresolved.size()));
  lldp_issues_.Add({{"kind", "conflict"}}).Increment(static_cast<double>(r.conflicts.size()));
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
                            std::shared_ptr<services::TopologyCache> topology, ReportObserver on_stored) {
  using http::Permission;
  auto service = std::make_shared<services::TopologyService>(std::move(topology));
  router.add(
      bhttp::verb::post, "/api/v1/agents/{host}/reports",
      Permission::agent_report | Permission::manage_network,
      [&telemetry, &metrics, service, on_stored = std::move(on_stored)](RequestContext& ctx) {
        return post_report(telemetry, *service, metrics, on_stored, ctx);
      },
      http::Cost::heavy);
}

TelemetryRetention::TelemetryRetention(store::TelemetryStore& telemetry, store::RetentionPolicy policy,
                                       std::chrono::milliseconds interval, TelemetryMetrics& metrics)
    : telemetry_(telemetry),
      policy_(policy),
      metrics_(metrics),
      thread_("telemetry retention", {.period = interval}, [this] { prune(); }) {}

void TelemetryRetention::prune() {
  auto pruned = telemetry_.prune(policy_, std::chrono::system_clock::now());
  if (!pruned) {
    HSNS_LOG(warning) << "telemetry retention: " << pruned.error().message();
    return;
  }
  metrics_.observe_prune(*pruned);
  if (pruned->total_rows() > 0) {
    HSNS_LOG(info) << "telemetry retention removed " << pruned->batches_by_age << " batches by age and "
                   << pruned->batches_by_size << " by size (" << pruned->total_rows() << " rows)";
  }
}

}  // namespace hsns::network
