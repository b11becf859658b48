#include "status_reporter.h"

#include "desired_state.h"
#include "hsns/log.h"
#include "hsns/proto/agent.h"
#include "hsns/version.h"
#include "metrics.h"

namespace hsns::daemon {

// The one writer of the status report is the wire contract's (hsns/proto/agent.h).
nlohmann::json status_document(const PassReport& pass, const std::vector<QosReport>& qos,
                               const std::string& started_at) {
  return proto::to_json(status_report(pass, qos, kVersion, started_at));
}

StatusReporter::StatusReporter(const NodeState& node, const ReconcilerComponent& reconciler,
                               const QosCheck& qos, AgentLink& agent, prometheus::Registry& registry)
    : node_(node),
      reconciler_(reconciler),
      qos_(qos),
      agent_(agent),
      errors_(add_counter(registry, "hsns_daemon_status_report_errors_total", "Failed status reports")),
      reports_(add_counter(registry, "hsns_daemon_status_reports_total",
                           "Status reports the aggregator accepted")),
      last_report_(add_gauge(registry, "hsns_daemon_last_successful_report_timestamp_seconds",
                             "Unix time of the last status report the aggregator accepted (0: none yet)")) {}

tl::expected<void, std::string> StatusReporter::start() {
  if (reconciler_.last_pass().number != reported_pass_) report(false);
  started_ = true;
  return {};
}

Component::Clock::time_point StatusReporter::tick(Clock::time_point) {
  if (reconciler_.last_pass().number != reported_pass_) report(true);
  return Clock::time_point::max();
}

void StatusReporter::report(bool send) {
  const auto& pass = reconciler_.last_pass();
  reported_pass_ = pass.number;
  auto doc = status_document(pass.report, qos_.reports(), node_.started_at);
  // Local extras (not part of the aggregator's status document): pass counters for tests and the lab.
  doc["local"] = {{"pass", pass.number},
                  {"changes", pass.report.changes},
                  {"changes_total", pass.changes_total},
                  {"aggregator_up", agent_.up()},
                  {"pass_seconds", std::chrono::duration<double>(Clock::now() - pass.started).count()}};
  if (auto r = reconciler_.write_state_file("status.json", doc.dump(2) + "\n"); !r)
    HSNS_LOG(warning) << r.error();
  doc.erase("local");
  // Report when something changed, and at least every kStatusHeartbeat so the aggregator sees liveness.
  const std::string body = doc.dump();
  const bool due = body != last_sent_ || Clock::now() - last_sent_at_ >= kStatusHeartbeat;
  if (!send || !agent_.up() || !node_.desired || !due) return;
  auto r = agent_.put_status(body);
  if (r) {
    last_sent_ = body;
    last_sent_at_ = Clock::now();
    reports_.Increment();
    last_report_.SetToCurrentTime();
    return;
  }
  errors_.Increment();
  const bool missing_endpoint = r.error().is_status(404);
  if (!missing_endpoint || !missing_endpoint_logged_) HSNS_LOG(warning) << describe(r.error());
  if (missing_endpoint) missing_endpoint_logged_ = true;
}

}  // namespace hsns::daemon
