#include "reconciler_component.h"

#include <filesystem>

#include "hsns/log.h"
#include "metrics.h"

namespace hsns::daemon {

ReconcilerComponent::ReconcilerComponent(const DaemonConfig& config, NodeState& node,
                                         const IsolationComponent& isolation, prometheus::Registry& registry)
    : config_(config),
      node_(node),
      isolation_(isolation),
      store_(config.state_dir),
      passes_(add_counter(registry, "hsns_daemon_reconcile_passes_total", "Reconcile passes run")),
      changes_(add_counter(registry, "hsns_daemon_changes_total", "Netlink changes and sysctl writes made")),
      drift_repairs_(add_counter(registry, "hsns_daemon_drift_repairs_total",
                                 "Changes that repaired drift on converged ports")),
      corrupt_state_files_(
          add_counter(registry, "hsns_daemon_corrupt_state_files_total", "Corrupt state files set aside")),
      ports_converged_(
          add_gauge(registry, "hsns_daemon_ports_converged", "Ports converged in the last pass")),
      ports_failed_(add_gauge(registry, "hsns_daemon_ports_failed", "Ports failed in the last pass")),
      generation_(
          add_gauge(registry, "hsns_daemon_desired_generation", "Generation of the desired state applied")),
      last_pass_seconds_(
          add_gauge(registry, "hsns_daemon_last_pass_duration_seconds", "Duration of the last pass")) {}

tl::expected<void, std::string> ReconcilerComponent::start() {
  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  auto loaded = store_.load();
  if (!loaded) return tl::unexpected(loaded.error());
  node_.persistent = std::move(loaded->state);
  const RoutingParams routing{config_.table_base, config_.rule_priority_base, config_.route_protocol};
  auto netlink = Netlink::open(routing);
  if (!netlink) return tl::unexpected(netlink.error());
  netlink_ = std::move(*netlink);
  reconciler_ = std::make_unique<Reconciler>(config_, *netlink_, node_.persistent, isolation_.manager());
  if (loaded->set_aside) {
    corrupt_state_files_.Increment();
    HSNS_LOG(warning) << "state file was corrupt; moved to " << *loaded->set_aside
                      << "; rebuilding from the live system";
    if (auto r = reconciler_->rebuild_ownership(); !r) HSNS_LOG(warning) << "rebuild: " << r.error();
  } else {
    saved_state_ = state_to_json(node_.persistent);
  }
  if (!node_.persistent.desired_json.empty()) {
    auto parsed = parse_desired_state(node_.persistent.desired_json);
    if (parsed)
      node_.desired = std::move(*parsed);
    else
      HSNS_LOG(warning) << "stored desired state ignored: " << parsed.error();
  }
  // Serve the last applied configuration before anything talks to the aggregator.
  if (node_.desired) pass();
  next_pass_ = Clock::now();
  started_ = true;
  return {};
}

Component::Clock::time_point ReconcilerComponent::tick(Clock::time_point now) {
  if (!node_.pass_wanted && now < next_pass_) return next_pass_;
  node_.pass_wanted = false;
  pass();
  next_pass_ = Clock::now() + config_.interval;
  return next_pass_;
}

void ReconcilerComponent::pass() {
  const auto t0 = Clock::now();
  PassReport report;
  if (node_.desired) report = reconciler_->reconcile(*node_.desired);
  for (const auto& e : report.errors) HSNS_LOG(warning) << e;
  int converged = 0, failed = 0;
  for (const auto& p : report.ports) {
    converged += p.state == "converged";
    failed += p.state == "failed";
    for (const auto& d : p.drift)
      HSNS_LOG(warning) << "drift repaired on " << p.netdev.value_or("?") << ": " << d;
  }
  passes_.Increment();
  changes_.Increment(static_cast<double>(report.changes));
  drift_repairs_.Increment(static_cast<double>(report.drift_repairs));
  ports_converged_.Set(converged);
  ports_failed_.Set(failed);
  generation_.Set(static_cast<double>(report.generation));
  // The state file is rewritten (with fsync) only when what it records changed.
  if (const auto text = state_to_json(node_.persistent); text != saved_state_) {
    if (auto r = store_.save(node_.persistent); !r)
      HSNS_LOG(error) << "cannot save state: " << r.error();
    else
      saved_state_ = text;
  }
  last_pass_.number += 1;
  last_pass_.changes_total += report.changes;
  last_pass_.report = std::move(report);
  last_pass_.started = t0;
  last_pass_seconds_.Set(std::chrono::duration<double>(Clock::now() - t0).count());
}

void ReconcilerComponent::stop() {
  if (!started_) return;
  if (auto r = store_.save(node_.persistent); !r) HSNS_LOG(error) << "cannot save state: " << r.error();
}

}  // namespace hsns::daemon
