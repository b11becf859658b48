// The incident service (issue 12, items 6 and 7): owns the Correlator (lib/brain/correlate.h), feeds it
// alarm changes, keeps the topology and the registered jobs it ranks and scores impact on up to date,
// persists every incident change (store/incident_store.h) and publishes it on the WebSocket topic
// "incidents". docs/brain.md, "Root cause and incidents".
//
// Contract:
// - on_alarms(changes): the alarm listener (main.cpp adapts the alarm service's AlarmChange to
//   IncidentInput). Event time is the alarms' own; advance(now_ms) moves it on without alarms (main.cpp
//   calls it with the brain's event clock, the newest telemetry time), and the service's ticker (start())
//   calls it every options.tick with the newest event time plus the wall time elapsed since that event
//   arrived, so holds expire while no alarm comes.
// - Each change of an incident is stored (one transaction per batch: upserts, merged ids removed) and
//   then published as {"kind":"incident","change":"opened|updated|resolved|merged","item":<Incident>}
//   (merged: item {"id","merged_into"}). A store failure is logged and counted
//   (hsns_incidents_store_failures_total); the next change of the incident stores it again.
// - Topology and jobs: before each batch the stores' change marks (TopologyCache::change_mark, the job
//   store's jobs revision mirror: atomic loads) are compared with the last refresh's; when one moved, and
//   besides at most once a second, the topology revision (TopologyCache) and the jobs revision (JobStore)
//   are read (stores without marks: also every batch while no topology is known); a new topology re-keys
//   the correlator, new jobs rebuild
//   the job impact and re-score the affected jobs of every live incident (changed ones are answered as
//   updated). No topology yet: alarms are correlated by names only and no job is affected.
// - start() restores the stored open incidents into the correlator (same ids; the sequence continues
//   from the store's highest) and starts the ticker; stop() (and the destructor) stop it.
// - list()/get() read the store (what the API answers, also after a restart).
// - Threads: every public call is thread-safe (one mutex around the correlator; store reads take none).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "brain/correlate.h"
#include "brain/job_impact.h"
#include "hsns/error.h"
#include "hsns/periodic_thread.h"
#include "http/websocket.h"
#include "services/refresh_gate.h"
#include "services/topology_cache.h"
#include "store/incident_store.h"
#include "store/job_store.h"

namespace hsns::brain_service {

inline constexpr const char* kIncidentsTopic = "incidents";

struct IncidentServiceOptions {
  brain::CorrelatorOptions correlator;
  std::chrono::milliseconds tick{5000};
};

// The API's Incident object (docs/brain.md): id, state, first_seen(_ms), last_seen(_ms), alarm_count,
// root_causes, affected_jobs, alarms, recommended_action.
nlohmann::json incident_json(const brain::Incident& incident, const std::vector<brain::AffectedJob>& jobs);
// An alarm as stored for a restart, and back (an error names the first bad field).
nlohmann::json alarm_input_json(const brain::IncidentInput& alarm);
Result<brain::IncidentInput> alarm_input_from_json(const nlohmann::json& j);
// "2026-12-02T05:07:56.123Z"
std::string format_ms_utc(std::int64_t ms);

class IncidentService {
 public:
  IncidentService(services::TopologyCache& topology, store::JobStore& jobs, store::IncidentStore& store,
                  http::WebSocketHub* hub, prometheus::Registry& registry,
                  IncidentServiceOptions options = {});
  ~IncidentService();
  IncidentService(const IncidentService&) = delete;
  IncidentService& operator=(const IncidentService&) = delete;

  Result<void> start();
  void stop();

  void on_alarms(std::span<const brain::IncidentInput> changes);
  void advance(std::int64_t now_ms);

  Result<store::IncidentPage> list(const store::IncidentQuery& q);
  Result<store::IncidentRecord> get(const std::string& id);

  std::size_t live_incidents() const;

 private:
  void refresh_locked(bool force);
  void commit_locked(const std::vector<brain::IncidentChange>& changes);
  // The brain's event clock: the newest event time plus the wall time since it arrived (0 before any).
  std::int64_t event_now_locked() const;
  // Dates the registered jobs by the event clock: a new name starts now, a name gone ended now.
  void update_job_history_locked(const std::vector<store::JobRecord>& jobs);
  std::vector<brain::AffectedJob> affected_jobs_locked(const brain::Incident& inc) const;
  // Victim folding (CorrelatorOptions::symptom_of): the symptom's host runs a job the cause hits.
  bool victim_of_locked(const brain::IncidentInput& symptom, const brain::Incident& cause) const;
  bool shares_cause_switch_locked(const brain::IncidentInput& symptom, const brain::Incident& cause) const;
  void tick();

  services::TopologyCache& topology_;
  store::JobStore& jobs_;
  store::IncidentStore& store_;
  http::WebSocketHub* hub_;
  IncidentServiceOptions options_;

  mutable std::mutex mu_;
  std::unique_ptr<brain::Correlator> correlator_;
  std::shared_ptr<const brain::LocatedTopology> located_;
  std::unique_ptr<brain::JobImpact> impact_;
  std::int64_t topology_revision_ = -1;
  std::int64_t jobs_revision_ = -1;
  // When to read the topology and the jobs again (their stores' change marks, together).
  services::RefreshGate<std::pair<std::int64_t, std::int64_t>> refresh_gate_{std::chrono::seconds(1)};
  std::map<std::string, std::vector<brain::AffectedJob>> affected_;  // live incidents
  // Every registered job and the last kEndedJobsKept released ones, dated in event time (job impact counts
  // the jobs that ran while an incident was live). In memory: after a restart, running jobs date from 0.
  static constexpr std::size_t kEndedJobsKept = 1024;
  std::map<std::string, brain::JobDescription> job_history_;
  std::int64_t last_event_ms_ = 0;
  std::chrono::steady_clock::time_point last_event_at_{};

  std::mutex tick_mu_;  // guards ticker_ (start and stop)
  std::optional<PeriodicThread> ticker_;

  prometheus::Gauge& open_;
  prometheus::Counter& opened_;
  prometheus::Counter& resolved_;
  prometheus::Counter& merged_;
  prometheus::Counter& noise_;
  prometheus::Counter& store_failures_;
  prometheus::Histogram& alarms_per_incident_;
  std::uint64_t noise_seen_ = 0;
};

}  // namespace hsns::brain_service
