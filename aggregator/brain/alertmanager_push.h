// Push of alarms to Prometheus Alertmanager (issue 12, item 5): `POST <url>/api/v2/alerts` on a thread of its
// own, for every configured Alertmanager.
//
// Contract:
// - on_changes (an AlarmService listener; quick, never blocks on the network): a raised, reopened or
//   unsuppressed alarm that is not suppressed is queued as a firing alert and remembered as active; a
//   cleared alarm, or one a silence now suppresses, is queued as resolved (endsAt set) and forgotten. Other
//   changes (repeats, flapping, acknowledgement) only refresh the remembered alert. Suppressed alarms are
//   never sent firing.
// - An alert: labels alertname (the pattern id), fault, severity, entity, root_cause, alarm_id;
//   annotations detail, state, count, flapping; startsAt (the alarm's first time), endsAt (resolved: the
//   clear; firing: now + 4 x resend_interval, so Alertmanager resolves it by itself if hsns goes away);
//   generatorURL external_url + "/api/v1/alarms/<id>".
// - Each URL has its own queue (at most queue_max alerts; an alert that does not fit is dropped and
//   counted) and sends up to batch_max alerts per POST, oldest first. A failure (transport error or a non-2xx
//   answer) keeps the batch and retries after a backoff doubling from backoff_min to backoff_max; a 2xx
//   resets it. Every resend_interval the remembered firing alerts are queued again (Alertmanager forgets
//   alerts whose endsAt has passed).
// - Metrics: hsns_alarms_alertmanager_sent_total, hsns_alarms_alertmanager_push_failures_total,
//   hsns_alarms_alertmanager_dropped_total, hsns_alarms_alertmanager_queued (gauge).
// - start() runs the thread; stop() (also the destructor) ends it after the POST in progress. Thread-safe.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "brain/alarm_config.h"
#include "brain/alarms.h"

namespace hsns::alarms {

class AlertmanagerPush {
 public:
  AlertmanagerPush(AlertmanagerConfig config, prometheus::Registry& registry);
  ~AlertmanagerPush();
  AlertmanagerPush(const AlertmanagerPush&) = delete;
  AlertmanagerPush& operator=(const AlertmanagerPush&) = delete;

  void on_changes(std::span<const brain::AlarmChange> changes);
  // At start: the active alarms the service restored, queued as firing (suppressed ones skipped), so
  // Alertmanager keeps them across a restart of the aggregator.
  void seed(std::span<const brain::Alarm> alarms);
  void start();
  void stop();

  struct Stats {
    std::uint64_t sent = 0;  // alerts accepted by an Alertmanager (per URL)
    std::uint64_t failures = 0;
    std::uint64_t dropped = 0;
    std::size_t queued = 0;
    std::size_t active = 0;
  };
  Stats stats() const;

 private:
  struct Target;
  void run();
  void enqueue_locked(const std::shared_ptr<const std::string>& alert);
  std::string alert_json(const brain::Alarm& alarm, bool resolved, std::int64_t wall_now_ms) const;

  AlertmanagerConfig config_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Target>> targets_;
  std::unordered_map<std::string, brain::Alarm> active_;  // firing alarms by id, for the re-send
  Stats stats_;
  prometheus::Counter& sent_;
  prometheus::Counter& failures_;
  prometheus::Counter& dropped_;
  prometheus::Gauge& queued_;
  std::thread thread_;
};

}  // namespace hsns::alarms
