// The agent link: hsnsd's conversation with the aggregator. Registers the host's inventory, polls the
// desired state (If-None-Match) every interval, and carries the status report (put_status).
//
// Contract:
// - start() makes the client; a client that cannot be made (unreadable token file) is logged and made
//   again at the next fetch, so start() never fails. ready() is true once started: the aggregator being
//   away never holds hsnsd back, the stored desired state keeps being applied.
// - tick(): when the fetch is due, registers first when the discovered inventory differs from what was
//   last registered, then fetches. A new document (another generation or ETag) replaces
//   NodeState::desired and the persistent desired_json/etag; pass_wanted is set when the generation
//   moved or the aggregator just came back. Success: the next fetch after `interval`. Failure: after a
//   backoff (exponential, full jitter, reset by a success). The aggregator being unreachable never removes
//   anything.
// - Error branches (AgentError, agent_client.h): a desired-state 404 means the aggregator does not know
//   the host (deleted, or its database replaced): the host registers again at the next fetch. Every
//   other failure is logged and retried with backoff. A desired document naming another host is ignored.
// - put_status() sends one status document (the status report decides when, and logs failures).
// - reload(): a new client from the new configuration, and the host registers again.
// - Metrics: hsns_daemon_desired_fetch_errors_total (every failed fetch: transport, HTTP status, a
//   document naming another host), hsns_daemon_desired_polls_total and
//   hsns_daemon_last_successful_desired_poll_timestamp_seconds (fetches answered with a document or 304;
//   the timestamp stays 0 until the first), hsns_daemon_register_errors_total, hsns_daemon_aggregator_up.
#pragma once

#include <prometheus/registry.h>

#include <memory>
#include <optional>
#include <random>

#include "agent_client.h"
#include "backoff.h"
#include "component.h"
#include "inventory.h"
#include "node_state.h"

namespace hsns::daemon {

class AgentLink final : public Component {
 public:
  AgentLink(const DaemonConfig& config, NodeState& node, prometheus::Registry& registry);

  std::string_view name() const override { return "agent"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override;
  void trigger() override { next_fetch_ = Clock::now(); }
  bool ready() const override { return started_; }

  // True while the last fetch succeeded.
  bool up() const { return up_; }
  // Sends one status document (only call while up()).
  tl::expected<void, AgentError> put_status(const std::string& body);

 private:
  bool fetch();
  bool ensure_client();

  DaemonConfig config_;
  NodeState& node_;
  prometheus::Counter& fetch_errors_;
  prometheus::Counter& polls_;
  prometheus::Gauge& last_poll_;
  prometheus::Counter& register_errors_;
  prometheus::Gauge& up_gauge_;
  std::unique_ptr<AgentClient> client_;
  Backoff backoff_;
  std::optional<Inventory> registered_;
  Clock::time_point next_fetch_ = Clock::now();
  bool up_ = false;
  bool started_ = false;
};

}  // namespace hsns::daemon
