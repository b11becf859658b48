#include "agent_link.h"

#include "hsns/log.h"
#include "metrics.h"

namespace hsns::daemon {

AgentLink::AgentLink(const DaemonConfig& config, NodeState& node, prometheus::Registry& registry)
    : config_(config),
      node_(node),
      fetch_errors_(
          add_counter(registry, "hsns_daemon_desired_fetch_errors_total", "Failed desired-state fetches")),
      polls_(add_counter(registry, "hsns_daemon_desired_polls_total",
                         "Successful desired-state fetches (a new document or 304 Not Modified)")),
      last_poll_(add_gauge(registry, "hsns_daemon_last_successful_desired_poll_timestamp_seconds",
                           "Unix time of the last successful desired-state fetch (0: none yet)")),
      register_errors_(
          add_counter(registry, "hsns_daemon_register_errors_total", "Failed host registrations")),
      up_gauge_(
          add_gauge(registry, "hsns_daemon_aggregator_up", "1 when the last aggregator request succeeded")),
      backoff_(config.backoff_initial, config.backoff_max, std::random_device{}()) {}

tl::expected<void, std::string> AgentLink::start() {
  auto client = AgentClient::make(config_, node_.host);
  if (client)
    client_ = std::move(*client);
  else
    HSNS_LOG(warning) << "aggregator client: " << client.error() << " (will retry after SIGHUP)";
  next_fetch_ = Clock::now();
  started_ = true;
  return {};
}

void AgentLink::reload(const DaemonConfig& config) {
  config_ = config;
  client_.reset();
  if (auto client = AgentClient::make(config_, node_.host); client) client_ = std::move(*client);
  registered_.reset();
}

bool AgentLink::ensure_client() {
  if (client_) return true;
  auto client = AgentClient::make(config_, node_.host);
  if (!client) {
    HSNS_LOG(warning) << client.error();
    return false;
  }
  client_ = std::move(*client);
  return true;
}

Component::Clock::time_point AgentLink::tick(Clock::time_point now) {
  if (now < next_fetch_) return next_fetch_;
  const bool was_up = up_;
  const auto before = node_.desired ? node_.desired->generation : -1;
  up_ = fetch();
  up_gauge_.Set(up_ ? 1 : 0);
  if (up_) {
    backoff_.reset();
    next_fetch_ = now + config_.interval;
    if (!was_up || (node_.desired && node_.desired->generation != before)) node_.pass_wanted = true;
  } else {
    next_fetch_ = now + backoff_.next();
  }
  return next_fetch_;
}

bool AgentLink::fetch() {
  if (!ensure_client()) return false;
  const Inventory inv = discover(config_);
  if (!registered_ || !(*registered_ == inv)) {
    if (auto r = client_->register_host(registration_body(inv)); !r) {
      register_errors_.Increment();
      HSNS_LOG(warning) << "registration: " << describe(r.error());
      return false;
    }
    registered_ = inv;
    HSNS_LOG(info) << "registered " << inv.npus.size() << " NPU(s), " << inv.rdma.size()
                   << " RDMA port(s) as " << node_.host;
  }
  auto f = client_->fetch_desired(node_.desired ? node_.persistent.etag : "");
  if (!f) {
    fetch_errors_.Increment();
    // The aggregator does not know this host (deleted, or a new database): register again next time.
    if (f.error().is_status(404)) registered_.reset();
    HSNS_LOG(warning) << "desired state: " << describe(f.error());
    return false;
  }
  if (!f->unchanged && f->state.host != node_.host) {
    fetch_errors_.Increment();
    HSNS_LOG(warning) << "desired state names host " << f->state.host << ", not " << node_.host
                      << "; ignored";
    return false;
  }
  polls_.Increment();
  last_poll_.SetToCurrentTime();
  if (f->unchanged) return true;
  auto& desired = node_.desired;
  if (!desired || desired->generation != f->state.generation || node_.persistent.etag != f->etag)
    HSNS_LOG(info) << "desired state generation " << f->state.generation << " with " << f->state.ports.size()
                   << " port(s)";
  desired = std::move(f->state);
  node_.persistent.desired_json = desired_state_to_json(*desired);
  node_.persistent.etag = f->etag;
  return true;
}

tl::expected<void, AgentError> AgentLink::put_status(const std::string& body) {
  if (!client_) return tl::unexpected(AgentError{AgentError::Kind::transport, 0, "no aggregator client"});
  return client_->put_status(body);
}

}  // namespace hsns::daemon
