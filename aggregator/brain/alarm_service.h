// The aggregator's alarm service (issue 12, item 5): owns the alarm engine (lib/brain/alarms.h) behind a
// mutex, persists every alarm change and the silence rules in the AlarmStore, and hands the changes to its
// listeners (the WebSocket topic "alarms", the Alertmanager push, the incident service).
//
// Contract:
// - load(now) once at start: the silence rules (expired ones deleted) and the active alarms the store kept
//   are given to the engine, so a restart loses no alarm, acknowledgement or silence. A store that cannot
//   be read is an error (the aggregator does not start with alarms it cannot see).
// - on_faults(faults) (the pipeline's FaultHandler; any thread): the engine's changes are written to the
//   store in one transaction, then given to every listener, in order, under the service's mutex (a listener
//   must be quick and must not call back into the service). A failed write keeps the changes queued
//   (at most kMaxPendingChanges, the oldest dropped and counted) and retried on the next write or tick.
// - tick(wall_now) (once a second from start()'s thread, or by a test): the engine's event-time clock moves
//   on by the wall time passed since the last fault (so hold-downs and one-shot expiries end while no fault
//   arrives), expired silences are deleted, queued writes retried, gauges refreshed; once an hour cleared
//   alarms older than the retention are pruned from the store.
// - acknowledge / acknowledge_all: an alarm the engine holds (not_found field "id" / "ids[i]" otherwise;
//   conflict for a cleared one). acknowledge_all checks every id first: one bad id refuses the group. The
//   answer is the acknowledged alarm(s) once written (unavailable when the store failed: the change stays
//   queued).
// - add_silence (id generated when empty; creator and created time set by the caller), delete_silence
//   (not_found): the store first, then the engine; the alarms they (un)suppress are written and notified.
// - Metrics (prometheus): hsns_alarms_active{severity}, hsns_alarms_suppressed, hsns_alarms_flapping,
//   hsns_alarms_silences (gauges), hsns_alarms_raised_total, hsns_alarms_cleared_total,
//   hsns_alarms_changes_total{change}, hsns_alarms_dropped_total, hsns_alarms_store_failures_total.
// - Thread-safe.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brain/alarm_config.h"
#include "brain/alarms.h"
#include "hsns/error.h"
#include "hsns/periodic_thread.h"
#include "store/alarm_store.h"

namespace hsns::alarms {

inline constexpr std::size_t kMaxPendingChanges = 100'000;
inline constexpr std::size_t kMaxAckGroup = 1000;

using AlarmListener = std::function<void(std::span<const brain::AlarmChange>)>;

// RFC 3339 UTC with milliseconds ("2026-12-02T05:07:56.123Z"), as the rest of the API writes times.
std::string format_time_ms(std::int64_t ms);

class AlarmService {
 public:
  AlarmService(store::AlarmStore& store, prometheus::Registry& registry, AlarmServiceOptions options = {});
  ~AlarmService();
  AlarmService(const AlarmService&) = delete;
  AlarmService& operator=(const AlarmService&) = delete;

  Result<void> load(std::int64_t wall_now_ms);
  void add_listener(AlarmListener listener);

  void on_faults(std::span<const brain::FaultMatch> faults);
  // The brain's event clock (BrainEngine's ClockHandler): moves the alarms' event time on to event_ms
  // (never back) and runs the deadlines it passes, as the tick does with wall time.
  void advance_event_time(std::int64_t event_ms);
  void tick(std::int64_t wall_now_ms);
  void start();  // the tick thread
  void stop();   // idempotent

  Result<brain::Alarm> acknowledge(const std::string& id, const std::string& who, const std::string& comment,
                                   std::int64_t wall_now_ms);
  Result<std::vector<brain::Alarm>> acknowledge_all(std::span<const std::string> ids, const std::string& who,
                                                    const std::string& comment, std::int64_t wall_now_ms);
  Result<brain::Silence> add_silence(brain::Silence silence, std::int64_t wall_now_ms);
  Result<void> delete_silence(const std::string& id, const std::string& actor, std::int64_t wall_now_ms);
  std::vector<brain::Silence> silences() const;

  Result<store::AlarmPage> query(const store::AlarmFilter& filter);
  Result<std::optional<store::AlarmWithHistory>> get(const std::string& id);
  brain::AlarmStats stats() const;
  std::vector<brain::Alarm> active() const;  // raised or acknowledged
  // The active alarms raised on the entity or blaming it (entity, root cause or peer equal to it); a scan
  // of the active alarms (path diagnosis asks per hop).
  std::vector<brain::Alarm> active_on(const std::string& entity) const;
  std::size_t pending_writes() const;

 private:
  // Under mu_: writes (with the queue of earlier failures), notifies, counts. false when the write failed.
  bool commit(std::vector<brain::AlarmChange> changes);
  void refresh_gauges();

  store::AlarmStore& store_;
  AlarmServiceOptions options_;
  mutable std::mutex mu_;
  brain::AlarmEngine engine_;
  std::vector<AlarmListener> listeners_;
  std::deque<brain::AlarmChange> pending_;
  std::int64_t last_event_ms_ = 0;  // the engine clock at the last fault
  std::int64_t wall_at_last_event_ms_ = 0;
  std::int64_t next_prune_ms_ = 0;
  brain::AlarmStats reported_;  // the engine's stats already counted in the metrics

  prometheus::Family<prometheus::Gauge>& active_;
  prometheus::Gauge& suppressed_;
  prometheus::Gauge& flapping_;
  prometheus::Gauge& silences_;
  prometheus::Counter& raised_;
  prometheus::Counter& cleared_;
  prometheus::Family<prometheus::Counter>& changes_;
  prometheus::Counter& dropped_;
  prometheus::Counter& store_failures_;

  std::mutex tick_mu_;  // guards ticker_ (start and stop)
  std::optional<PeriodicThread> ticker_;
};

}  // namespace hsns::alarms
