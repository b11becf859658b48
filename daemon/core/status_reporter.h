// The status report as an hsnsd component: after every reconcile pass it writes <state_dir>/status.json
// (the document of PUT /api/v1/agents/{host}/status plus local counters) and sends the document to the
// aggregator through the agent link. The report uploader of later work takes the same place.
//
// Contract:
// - tick() reports once per pass, in the loop turn of the pass (after the QoS check); start() reports
//   the pass the reconciler ran at its start, if any (to status.json only: nothing has talked to the
//   aggregator yet). ready() once started.
// - status.json = {applied_generation, ports, qos, daemon{version, started_at}, local{pass, changes,
//   changes_total, aggregator_up, pass_seconds}}; the aggregator gets it without `local`, while the
//   agent link is up and a desired state is known, when the document changed or kStatusHeartbeat passed
//   since the last one it accepted (liveness).
// - Send failures are counted; a 404 (an aggregator without the status endpoint) is logged once, every
//   other failure each time.
// - Metrics: hsns_daemon_status_report_errors_total (failed sends), hsns_daemon_status_reports_total and
//   hsns_daemon_last_successful_report_timestamp_seconds (reports the aggregator accepted; 0 until the
//   first; with nothing changed it advances once per kStatusHeartbeat).
#pragma once

#include <prometheus/registry.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "agent_link.h"
#include "component.h"
#include "node_state.h"
#include "qos_check.h"
#include "reconciler_component.h"

namespace hsns::daemon {

inline constexpr auto kStatusHeartbeat = std::chrono::seconds(60);

// The status document of one pass (without the local counters).
nlohmann::json status_document(const PassReport& pass, const std::vector<QosReport>& qos,
                               const std::string& started_at);

class StatusReporter final : public Component {
 public:
  StatusReporter(const NodeState& node, const ReconcilerComponent& reconciler, const QosCheck& qos,
                 AgentLink& agent, prometheus::Registry& registry);

  std::string_view name() const override { return "status"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig&) override {}
  bool ready() const override { return started_; }

 private:
  void report(bool send);

  const NodeState& node_;
  const ReconcilerComponent& reconciler_;
  const QosCheck& qos_;
  AgentLink& agent_;
  prometheus::Counter& errors_;
  prometheus::Counter& reports_;
  prometheus::Gauge& last_report_;
  std::uint64_t reported_pass_ = 0;
  std::string last_sent_;
  Clock::time_point last_sent_at_ = Clock::now();
  bool missing_endpoint_logged_ = false;
  bool started_ = false;
};

}  // namespace hsns::daemon
