#include "brain/incident_service.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <utility>

#include "hsns/log.h"
#include "hsns/time.h"
#include "services/store_errors.h"

namespace hsns::brain_service {

using brain::IncidentInput;
using nlohmann::json;

namespace {

constexpr std::array<const char*, 5> kSeverities = {"info", "warning", "minor", "major", "critical"};
constexpr std::array<const char*, 5> kRoles = {"port", "link", "module", "switch", "host_nic"};
constexpr std::array<const char*, 3> kStates = {"raised", "acknowledged", "cleared"};

template <std::size_t N>
int index_of(const std::array<const char*, N>& names, const std::string& text) {
  for (std::size_t i = 0; i < N; ++i) {
    if (text == names[i]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string format_ms_utc(std::int64_t ms) {
  const std::int64_t seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  std::string text = format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::seconds(seconds)));
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03d", static_cast<int>(ms - seconds * 1000));
  text.insert(text.size() - 1, fraction);  // before the "Z"
  return text;
}

json incident_json(const brain::Incident& incident, const std::vector<brain::AffectedJob>& jobs) {
  json causes = json::array();
  for (const auto& c : incident.root_causes) {
    causes.push_back({{"rank", c.rank},
                      {"entity", c.entity},
                      {"kind", std::string(brain::to_string(c.kind))},
                      {"fault_type", c.fault_type},
                      {"score", c.score},
                      {"evidence", c.evidence},
                      {"symptoms", c.symptoms}});
  }
  json affected = json::array();
  for (const auto& j : jobs) affected.push_back({{"job_id", j.job_id}, {"name", j.name}, {"ranks", j.ranks}});
  json alarms = json::array();
  for (const auto& a : incident.alarms) alarms.push_back(a.alarm_id);
  return {{"id", incident.id},
          {"state", incident.resolved ? "resolved" : "open"},
          {"first_seen", format_ms_utc(incident.first_ms)},
          {"first_seen_ms", incident.first_ms},
          {"last_seen", format_ms_utc(incident.last_ms)},
          {"last_seen_ms", incident.last_ms},
          {"alarm_count", incident.alarms.size()},
          {"root_causes", std::move(causes)},
          {"affected_jobs", std::move(affected)},
          {"alarms", std::move(alarms)},
          {"recommended_action", incident.recommended_action}};
}

json alarm_input_json(const IncidentInput& a) {
  return {{"id", a.alarm_id},
          {"fingerprint", a.fingerprint},
          {"type", a.fault_type},
          {"severity", kSeverities.at(static_cast<std::size_t>(a.severity))},
          {"entity", a.entity},
          {"peer", a.peer},
          {"root_cause", a.root_cause},
          {"role", kRoles.at(static_cast<std::size_t>(a.role))},
          {"state", kStates.at(static_cast<std::size_t>(a.state))},
          {"suppressed", a.suppressed},
          {"flapping", a.flapping},
          {"victim", a.victim},
          {"one_shot", a.one_shot},
          {"first_ms", a.first_ms},
          {"last_ms", a.last_ms},
          {"count", a.count},
          {"detail", a.detail},
          {"action", a.action}};
}

Result<IncidentInput> alarm_input_from_json(const json& j) {
  if (!j.is_object()) return tl::unexpected(Error::invalid("alarm", "must be an object"));
  IncidentInput a;
  auto text = [&](const char* key, std::string& out) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  auto integer = [&](const char* key, std::int64_t& out) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return false;
    out = it->get<std::int64_t>();
    return true;
  };
  auto boolean = [&](const char* key, bool& out) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_boolean()) return false;
    out = it->get<bool>();
    return true;
  };
  for (auto [key, field] : {std::pair{"id", &a.alarm_id}, std::pair{"fingerprint", &a.fingerprint},
                            std::pair{"type", &a.fault_type}, std::pair{"entity", &a.entity},
                            std::pair{"peer", &a.peer}, std::pair{"root_cause", &a.root_cause},
                            std::pair{"detail", &a.detail}, std::pair{"action", &a.action}}) {
    if (!text(key, *field)) return tl::unexpected(Error::invalid(key, "must be a string"));
  }
  std::string severity, role, state;
  if (!text("severity", severity) || index_of(kSeverities, severity) < 0)
    return tl::unexpected(Error::invalid("severity", "must be info, warning, minor, major or critical"));
  if (!text("role", role) || index_of(kRoles, role) < 0)
    return tl::unexpected(Error::invalid("role", "must be port, link, module, switch or host_nic"));
  if (!text("state", state) || index_of(kStates, state) < 0)
    return tl::unexpected(Error::invalid("state", "must be raised, acknowledged or cleared"));
  a.severity = static_cast<brain::FaultSeverity>(index_of(kSeverities, severity));
  a.role = static_cast<brain::RootCauseRole>(index_of(kRoles, role));
  a.state = static_cast<IncidentInput::State>(index_of(kStates, state));
  if (!boolean("suppressed", a.suppressed))
    return tl::unexpected(Error::invalid("suppressed", "must be a boolean"));
  if (!boolean("flapping", a.flapping))
    return tl::unexpected(Error::invalid("flapping", "must be a boolean"));
  // Absent in incidents stored before victims were folded: not a victim.
  if (j.contains("victim") && !boolean("victim", a.victim))
    return tl::unexpected(Error::invalid("victim", "must be a boolean"));
  if (j.contains("one_shot") && !boolean("one_shot", a.one_shot))
    return tl::unexpected(Error::invalid("one_shot", "must be a boolean"));
  std::int64_t count = 0;
  if (!integer("first_ms", a.first_ms))
    return tl::unexpected(Error::invalid("first_ms", "must be an integer"));
  if (!integer("last_ms", a.last_ms)) return tl::unexpected(Error::invalid("last_ms", "must be an integer"));
  if (!integer("count", count) || count < 0 || count > UINT32_MAX)
    return tl::unexpected(Error::invalid("count", "must be an integer from 0 to 4294967295"));
  a.count = static_cast<std::uint32_t>(count);
  if (a.alarm_id.empty()) return tl::unexpected(Error::invalid("id", "must not be empty"));
  return a;
}

IncidentService::IncidentService(services::TopologyCache& topology, store::JobStore& jobs,
                                 store::IncidentStore& store, http::WebSocketHub* hub,
                                 prometheus::Registry& registry, IncidentServiceOptions options)
    : topology_(topology),
      jobs_(jobs),
      store_(store),
      hub_(hub),
      options_(std::move(options)),
      correlator_(std::make_unique<brain::Correlator>(nullptr, options.correlator)),
      open_(prometheus::BuildGauge()
                .Name("hsns_incidents_open")
                .Help("Incidents open now (confirmed, not yet resolved)")
                .Register(registry)
                .Add({})),
      opened_(prometheus::BuildCounter()
                  .Name("hsns_incidents_opened_total")
                  .Help("Incidents opened")
                  .Register(registry)
                  .Add({})),
      resolved_(prometheus::BuildCounter()
                    .Name("hsns_incidents_resolved_total")
                    .Help("Incidents resolved (every alarm cleared for the hold time)")
                    .Register(registry)
                    .Add({})),
      merged_(prometheus::BuildCounter()
                  .Name("hsns_incidents_merged_total")
                  .Help("Incidents merged into an older one by an alarm related to both")
                  .Register(registry)
                  .Add({})),
      noise_(prometheus::BuildCounter()
                 .Name("hsns_incidents_noise_dropped_total")
                 .Help("Pending incidents dropped because their alarms cleared before confirmation")
                 .Register(registry)
                 .Add({})),
      store_failures_(prometheus::BuildCounter()
                          .Name("hsns_incidents_store_failures_total")
                          .Help("Incident changes the store refused (stored again with the next change)")
                          .Register(registry)
                          .Add({})),
      alarms_per_incident_(
          prometheus::BuildHistogram()
              .Name("hsns_incidents_alarms_per_incident")
              .Help("Alarms an incident held when it was resolved (alarm compression)")
              .Register(registry)
              .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000})) {}

IncidentService::~IncidentService() {
  stop();
}

Result<void> IncidentService::start() {
  auto stored = store_.open_incidents();
  if (!stored) return tl::unexpected(services::from_store(std::move(stored.error())));
  auto max_seq = store_.max_sequence();
  if (!max_seq) return tl::unexpected(services::from_store(std::move(max_seq.error())));
  {
    std::lock_guard lock(mu_);
    auto options = options_.correlator;
    options.first_sequence = std::max(options.first_sequence, *max_seq + 1);
    // Runs inside the correlator's apply, which is called with mu_ held.
    options.symptom_of = [this](const brain::IncidentInput& symptom, const brain::Incident& cause) {
      return victim_of_locked(symptom, cause);
    };
    correlator_ = std::make_unique<brain::Correlator>(nullptr, options);
    topology_revision_ = -1;
    jobs_revision_ = -1;
    refresh_locked(true);
    for (const auto& r : *stored) {
      brain::Incident inc;
      inc.id = r.id;
      inc.sequence = r.sequence;
      const auto alarms = json::parse(r.alarms, nullptr, false);
      if (!alarms.is_array()) {
        HSNS_LOG(warning) << "incident " << r.id << ": stored alarms do not parse; not restored";
        continue;
      }
      for (const auto& a : alarms) {
        auto input = alarm_input_from_json(a);
        if (input) inc.alarms.push_back(std::move(*input));
      }
      correlator_->restore(inc);
      if (const auto* live = correlator_->find(r.id)) {
        affected_[r.id] = affected_jobs_locked(*live);
        last_event_ms_ = std::max(last_event_ms_, live->last_ms);
      }
    }
    last_event_at_ = std::chrono::steady_clock::now();
    open_.Set(static_cast<double>(affected_.size()));
  }
  const std::lock_guard lock(tick_mu_);
  if (!ticker_ && options_.tick.count() > 0) {
    ticker_.emplace(
        "incident ticker",
        PeriodicThread::Options{.period = options_.tick, .start = PeriodicThread::Start::after_period},
        [this] { tick(); });
  }
  return {};
}

void IncidentService::stop() {
  const std::lock_guard lock(tick_mu_);
  ticker_.reset();  // waits for a running tick (ticks never take tick_mu_)
}

void IncidentService::tick() {
  std::int64_t now = 0;
  {
    const std::lock_guard lock(mu_);
    if (last_event_ms_ > 0) {
      now = last_event_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - last_event_at_)
                                 .count();
    }
  }
  if (now > 0) advance(now);
}

void IncidentService::on_alarms(std::span<const IncidentInput> changes) {
  if (changes.empty()) return;
  std::lock_guard lock(mu_);
  refresh_locked(false);
  auto out = correlator_->apply(changes);
  std::int64_t newest = last_event_ms_;
  for (const auto& c : changes) newest = std::max({newest, c.first_ms, c.last_ms});
  if (newest > last_event_ms_) {
    last_event_ms_ = newest;
    last_event_at_ = std::chrono::steady_clock::now();
  }
  commit_locked(out);
}

void IncidentService::advance(std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  refresh_locked(false);          // before the clock moves: a job written since is dated by the clock it saw
  if (now_ms > last_event_ms_) {  // the ticker extrapolates from here when no event comes
    last_event_ms_ = now_ms;
    last_event_at_ = std::chrono::steady_clock::now();
  }
  commit_locked(correlator_->advance(now_ms));
}

std::size_t IncidentService::live_incidents() const {
  std::lock_guard lock(mu_);
  return affected_.size();
}

void IncidentService::refresh_locked(bool force) {
  const auto now = std::chrono::steady_clock::now();
  // The stores' change marks (an atomic load each) tell at once that this process wrote the topology or
  // the jobs: alarms right after an import or a schedule are correlated over it. Besides, look again once
  // a second; without marks (a store that keeps none) also every batch until a topology is known.
  const auto topology_mark = topology_.change_mark();
  const store::RevisionSource* job_revisions = jobs_.revisions();
  const auto jobs_mark = job_revisions != nullptr
                             ? std::optional(job_revisions->revision(store::RevisionDomain::jobs))
                             : std::nullopt;
  const bool marked = topology_mark && jobs_mark;
  // The marks are taken before the reads: what they answer is at least as new.
  if (!refresh_gate_.due(marked ? std::optional(std::pair(*topology_mark, *jobs_mark)) : std::nullopt, now,
                         force || (!marked && !located_)))
    return;
  bool new_topology = false;
  if (auto snap = topology_.current(); snap && snap->revision != topology_revision_) {
    topology_revision_ = snap->revision;
    located_ = std::make_shared<brain::LocatedTopology>(snap->topology);
    commit_locked(correlator_->set_topology(located_));
    new_topology = true;
  }
  auto revision = jobs_.jobs_revision();
  if (!revision) return;
  if (!new_topology && *revision == jobs_revision_ && impact_) return;
  auto jobs = jobs_.list_jobs();
  if (!jobs) return;
  jobs_revision_ = *revision;
  update_job_history_locked(*jobs);
  std::vector<brain::JobDescription> described;
  described.reserve(job_history_.size());
  for (const auto& [name, d] : job_history_) described.push_back(d);
  impact_ = located_ ? std::make_unique<brain::JobImpact>(located_, std::move(described)) : nullptr;
  // Re-score the jobs of the live incidents; answer those that changed.
  std::vector<store::IncidentRecord> records;
  std::vector<json> events;
  for (auto& [id, affected] : affected_) {
    const auto* inc = correlator_->find(id);
    if (inc == nullptr) continue;
    auto now_affected = affected_jobs_locked(*inc);
    if (now_affected == affected) continue;
    affected = std::move(now_affected);
    auto doc = incident_json(*inc, affected);
    json alarms = json::array();
    for (const auto& a : inc->alarms) alarms.push_back(alarm_input_json(a));
    records.push_back({id, inc->sequence, "open", inc->first_ms, inc->last_ms, doc.dump(), alarms.dump()});
    events.push_back({{"kind", "incident"}, {"change", "updated"}, {"item", std::move(doc)}});
  }
  if (records.empty()) return;
  if (auto saved = store_.save(records, {}); !saved) {
    store_failures_.Increment();
    HSNS_LOG(warning) << "incidents: storing re-scored jobs failed: " << saved.error().detail;
  }
  if (hub_ != nullptr) {
    for (auto& e : events) hub_->publish(kIncidentsTopic, e.dump());
  }
}

std::int64_t IncidentService::event_now_locked() const {
  if (last_event_ms_ == 0) return 0;
  return last_event_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - last_event_at_)
                              .count();
}

void IncidentService::update_job_history_locked(const std::vector<store::JobRecord>& jobs) {
  const std::int64_t now = event_now_locked();
  std::set<std::string> running;
  for (const auto& j : jobs) {
    running.insert(j.name);
    auto it = job_history_.find(j.name);
    if (it != job_history_.end() && it->second.ended_ms == 0) continue;  // still the same run
    brain::JobDescription d;
    d.id = j.name;
    d.name = j.name;
    d.started_ms = now;
    for (const auto& r : j.ranks) d.ranks.push_back({r.rank, r.host, r.npu});
    job_history_.insert_or_assign(j.name, std::move(d));
  }
  std::vector<std::pair<std::int64_t, std::string>> ended;
  for (auto& [name, d] : job_history_) {
    if (!running.contains(name) && d.ended_ms == 0) d.ended_ms = std::max<std::int64_t>(now, 1);
    if (d.ended_ms != 0) ended.emplace_back(d.ended_ms, name);
  }
  // Ended jobs are kept for the incidents they may have run during; the oldest go beyond the bound.
  if (ended.size() > kEndedJobsKept) {
    std::sort(ended.begin(), ended.end());
    for (std::size_t i = 0; i + kEndedJobsKept < ended.size(); ++i) job_history_.erase(ended[i].second);
  }
}

bool IncidentService::victim_of_locked(const brain::IncidentInput& symptom,
                                       const brain::Incident& cause) const {
  const auto host = std::string_view(symptom.entity).substr(0, symptom.entity.find('/'));
  // A symptom at a host that runs a job the cause hits: collectives are synchronous, so every rank of the
  // job retransmits, times out or throttles while one of its paths is broken.
  if (impact_) {
    for (const auto& job : impact_->affected(cause.root_causes, {cause.first_ms, 0})) {
      const auto it = job_history_.find(job.name);
      if (it == job_history_.end()) continue;
      for (const auto& rank : it->second.ranks) {
        if (rank.host == host) return true;
      }
    }
  }
  return shares_cause_switch_locked(symptom, cause);
}

// Without a job to tell: a symptom at a host port whose leaf is the cause's switch (or a switch end of the
// cause's link). Its traffic goes through the broken part: paused by a storm on that leaf, dropped by an
// MTU or CRC fault on one of its ports.
bool IncidentService::shares_cause_switch_locked(const brain::IncidentInput& symptom,
                                                 const brain::Incident& cause) const {
  if (!located_ || cause.root_causes.empty()) return false;
  const auto& t = located_->topology();
  const auto& top = cause.root_causes.front();
  // A switch's own symptom (its routing sessions): the cause is that switch, a neighbour of it, or a link
  // with an end on it.
  if (const auto device = t.find(symptom.entity); device && t.node(*device).tier != topology::Tier::kHost) {
    if (top.node != topology::kNoNode)
      return top.node == *device || brain::link_between(t, top.node, *device);
    if (top.link != topology::kNoLink && top.link < t.links().size()) {
      const auto& l = t.link(top.link);
      return l.lower == *device || l.upper == *device;
    }
    return false;
  }
  const auto* port = located_->port(symptom.entity);
  if (port == nullptr || port->upper) return false;
  const auto& symptom_link = t.link(port->link);
  if (!symptom_link.npu) return false;  // a host port's link
  const topology::NodeId leaf = symptom_link.upper;
  if (top.node != topology::kNoNode) return top.node == leaf;
  if (top.link != topology::kNoLink && top.link < t.links().size()) {
    const auto& l = t.link(top.link);
    return l.upper == leaf || (t.node(l.lower).tier != topology::Tier::kHost && l.lower == leaf);
  }
  return false;
}

std::vector<brain::AffectedJob> IncidentService::affected_jobs_locked(const brain::Incident& inc) const {
  if (!impact_) return {};
  // Until its alarms cleared: a job that started after the repair ran during no fault. An event's alarm
  // (one-shot: a reboot line) marks an instant; its expiry later is no part of the fault.
  const bool over = inc.resolved || std::none_of(inc.alarms.begin(), inc.alarms.end(), [](const auto& a) {
                      return !a.one_shot && a.state != brain::IncidentInput::State::cleared && !a.suppressed;
                    });
  return impact_->affected(inc.root_causes, {inc.first_ms, over ? inc.last_ms : 0});
}

void IncidentService::commit_locked(const std::vector<brain::IncidentChange>& changes) {
  const auto noise = correlator_->stats().noise_dropped;
  if (noise > noise_seen_) {
    noise_.Increment(static_cast<double>(noise - noise_seen_));
    noise_seen_ = noise;
  }
  if (changes.empty()) return;
  std::vector<store::IncidentRecord> records;
  std::vector<std::string> removals;
  std::vector<json> events;
  for (const auto& c : changes) {
    const auto& inc = *c.incident;
    if (c.kind == brain::IncidentChangeKind::merged) {
      removals.push_back(inc.id);
      std::erase_if(records, [&](const store::IncidentRecord& r) { return r.id == inc.id; });
      affected_.erase(inc.id);
      merged_.Increment();
      events.push_back({{"kind", "incident"},
                        {"change", "merged"},
                        {"item", {{"id", inc.id}, {"merged_into", c.merged_into}}}});
      continue;
    }
    auto jobs = affected_jobs_locked(inc);
    auto doc = incident_json(inc, jobs);
    json alarms = json::array();
    for (const auto& a : inc.alarms) alarms.push_back(alarm_input_json(a));
    if (inc.resolved) {
      affected_.erase(inc.id);
      resolved_.Increment();
      alarms_per_incident_.Observe(static_cast<double>(inc.alarms.size()));
    } else {
      affected_[inc.id] = std::move(jobs);
    }
    if (c.kind == brain::IncidentChangeKind::opened) opened_.Increment();
    std::erase_if(records, [&](const store::IncidentRecord& r) { return r.id == inc.id; });
    records.push_back({inc.id, inc.sequence, inc.resolved ? "resolved" : "open", inc.first_ms, inc.last_ms,
                       doc.dump(), alarms.dump()});
    events.push_back(
        {{"kind", "incident"}, {"change", std::string(brain::to_string(c.kind))}, {"item", std::move(doc)}});
  }
  if (auto saved = store_.save(records, removals); !saved) {
    store_failures_.Increment();
    HSNS_LOG(warning) << "incidents: storing " << records.size()
                      << " changes failed: " << saved.error().detail;
  }
  open_.Set(static_cast<double>(affected_.size()));
  if (hub_ != nullptr) {
    for (auto& e : events) hub_->publish(kIncidentsTopic, e.dump());
  }
}

Result<store::IncidentPage> IncidentService::list(const store::IncidentQuery& q) {
  auto page = store_.list(q);
  if (!page) return tl::unexpected(services::from_store(std::move(page.error())));
  return page;
}

Result<store::IncidentRecord> IncidentService::get(const std::string& id) {
  auto r = store_.get(id);
  if (!r) return tl::unexpected(services::from_store(std::move(r.error())));
  return r;
}

}  // namespace hsns::brain_service
