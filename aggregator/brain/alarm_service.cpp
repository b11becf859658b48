#include "brain/alarm_service.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "hsns/log.h"
#include "hsns/time.h"

namespace hsns::alarms {
namespace {

constexpr std::int64_t kPruneEveryMs = 3'600'000;

std::string new_silence_id() {
  std::random_device rd;
  std::uniform_int_distribution<std::uint64_t> dist;
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "s-%012llx",
                static_cast<unsigned long long>(dist(rd) & 0xffffffffffffULL));
  return buffer;
}

Error from_store(const store::StoreError& e) {
  if (e.kind == Error::Kind::unavailable) return Error::unavailable("alarm store unavailable: " + e.detail);
  return e;
}

}  // namespace

std::string format_time_ms(std::int64_t ms) {
  const std::int64_t millis = ((ms % 1000) + 1000) % 1000;
  const std::chrono::system_clock::time_point whole{std::chrono::milliseconds(ms - millis)};
  std::string text = format_rfc3339_utc(whole);  // "...:56Z"
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03d", static_cast<int>(millis));
  text.insert(text.size() - 1, fraction);
  return text;
}

AlarmService::AlarmService(store::AlarmStore& store, prometheus::Registry& registry,
                           AlarmServiceOptions options)
    : store_(store),
      options_(options),
      engine_(options.engine),
      active_(prometheus::BuildGauge()
                  .Name("hsns_alarms_active")
                  .Help("Alarms raised or acknowledged and not cleared, by severity")
                  .Register(registry)),
      suppressed_(prometheus::BuildGauge()
                      .Name("hsns_alarms_suppressed")
                      .Help("Active alarms a silence rule suppresses (stored, not notified)")
                      .Register(registry)
                      .Add({})),
      flapping_(prometheus::BuildGauge()
                    .Name("hsns_alarms_flapping")
                    .Help("Active alarms marked flapping (their clear held for the hold-down)")
                    .Register(registry)
                    .Add({})),
      silences_(prometheus::BuildGauge()
                    .Name("hsns_alarms_silences")
                    .Help("Silence rules in force")
                    .Register(registry)
                    .Add({})),
      raised_(prometheus::BuildCounter()
                  .Name("hsns_alarms_raised_total")
                  .Help("Alarms raised or reopened")
                  .Register(registry)
                  .Add({})),
      cleared_(prometheus::BuildCounter()
                   .Name("hsns_alarms_cleared_total")
                   .Help("Alarms cleared (recovery notices)")
                   .Register(registry)
                   .Add({})),
      changes_(prometheus::BuildCounter()
                   .Name("hsns_alarms_changes_total")
                   .Help("Alarm changes written and notified, by kind")
                   .Register(registry)),
      dropped_(
          prometheus::BuildCounter()
              .Name("hsns_alarms_dropped_total")
              .Help("New alarms dropped because every alarm slot held an active alarm, and changes dropped "
                    "from the queue of failed store writes")
              .Register(registry)
              .Add({})),
      store_failures_(prometheus::BuildCounter()
                          .Name("hsns_alarms_store_failures_total")
                          .Help("Alarm store writes that failed (the changes stay queued and are retried)")
                          .Register(registry)
                          .Add({})) {
  for (const auto s : {brain::FaultSeverity::info, brain::FaultSeverity::warning, brain::FaultSeverity::minor,
                       brain::FaultSeverity::major, brain::FaultSeverity::critical}) {
    active_.Add({{"severity", std::string(brain::to_string(s))}});
  }
}

AlarmService::~AlarmService() {
  stop();
}

Result<void> AlarmService::load(std::int64_t wall_now_ms) {
  std::lock_guard lock(mu_);
  auto silences = store_.list_silences();
  if (!silences) return tl::unexpected(from_store(silences.error()));
  auto active = store_.load_active(options_.engine.max_alarms);
  if (!active) return tl::unexpected(from_store(active.error()));
  engine_.restore(*active, wall_now_ms);
  std::vector<brain::AlarmChange> changes;
  for (auto& s : *silences) {
    if (s.expires_ms && *s.expires_ms <= wall_now_ms) {
      if (auto gone = store_.delete_silence(s.id); !gone) return tl::unexpected(from_store(gone.error()));
      continue;
    }
    const std::string id = s.id;
    if (auto added = engine_.add_silence(std::move(s), wall_now_ms, changes); !added) {
      HSNS_LOG(warning) << "stored silence " << id
                        << " is not valid any more, ignored: " << added.error().detail;
    }
  }
  // A rule that expired while the aggregator was down no longer suppresses its alarms.
  engine_.resync_silences(wall_now_ms, changes);
  last_event_ms_ = engine_.now_ms();
  wall_at_last_event_ms_ = wall_now_ms;
  next_prune_ms_ = wall_now_ms;
  commit(std::move(changes));
  refresh_gauges();
  HSNS_LOG(info) << "alarms: " << active->size() << " active alarms and " << engine_.silences().size()
                 << " silences loaded";
  return {};
}

void AlarmService::add_listener(AlarmListener listener) {
  std::lock_guard lock(mu_);
  listeners_.push_back(std::move(listener));
}

bool AlarmService::commit(std::vector<brain::AlarmChange> changes) {
  for (const auto& c : changes) {
    changes_.Add({{"change", std::string(brain::to_string(c.change))}}).Increment();
    if (c.change == brain::AlarmChangeKind::raised || c.change == brain::AlarmChangeKind::reopened)
      raised_.Increment();
    if (c.change == brain::AlarmChangeKind::cleared) cleared_.Increment();
  }
  const auto stats = engine_.stats();
  if (stats.dropped > reported_.dropped)
    dropped_.Increment(static_cast<double>(stats.dropped - reported_.dropped));
  reported_ = stats;

  bool written = true;
  if (!pending_.empty() || !changes.empty()) {
    std::vector<brain::AlarmChange> batch(pending_.begin(), pending_.end());
    batch.insert(batch.end(), changes.begin(), changes.end());
    if (auto ok = store_.apply(batch); ok) {
      pending_.clear();
    } else {
      written = false;
      store_failures_.Increment();
      HSNS_LOG(warning) << "alarm store write failed (" << batch.size()
                        << " changes queued for retry): " << ok.error().detail;
      pending_.insert(pending_.end(), changes.begin(), changes.end());
      while (pending_.size() > kMaxPendingChanges) {
        pending_.pop_front();
        dropped_.Increment();
      }
    }
  }
  if (!changes.empty()) {
    for (const auto& listener : listeners_) listener(changes);
  }
  return written;
}

void AlarmService::on_faults(std::span<const brain::FaultMatch> faults) {
  if (faults.empty()) return;
  std::lock_guard lock(mu_);
  std::vector<brain::AlarmChange> changes;
  engine_.observe(faults, changes);
  last_event_ms_ = engine_.now_ms();
  wall_at_last_event_ms_ = unix_now_ms();
  commit(std::move(changes));
}

void AlarmService::advance_event_time(std::int64_t event_ms) {
  std::lock_guard lock(mu_);
  if (event_ms <= engine_.now_ms()) return;
  std::vector<brain::AlarmChange> changes;
  engine_.advance(event_ms, changes);
  last_event_ms_ = engine_.now_ms();
  wall_at_last_event_ms_ = unix_now_ms();
  commit(std::move(changes));
}

void AlarmService::tick(std::int64_t wall_now_ms) {
  std::lock_guard lock(mu_);
  std::vector<brain::AlarmChange> changes;
  if (wall_now_ms > wall_at_last_event_ms_) {
    engine_.advance(last_event_ms_ + (wall_now_ms - wall_at_last_event_ms_), changes);
  }
  std::vector<std::string> expired;
  for (const auto& s : engine_.silences()) {
    if (s.expires_ms && *s.expires_ms <= wall_now_ms) expired.push_back(s.id);
  }
  for (const auto& id : expired) {
    if (auto gone = store_.delete_silence(id); !gone) {
      store_failures_.Increment();
      continue;  // retried on the next tick: the rule stays in force until its row is gone
    }
    engine_.remove_silence(id, "", wall_now_ms, changes);
    HSNS_LOG(info) << "silence " << id << " expired";
  }
  commit(std::move(changes));
  if (wall_now_ms >= next_prune_ms_) {
    next_prune_ms_ = wall_now_ms + kPruneEveryMs;
    if (auto pruned = store_.prune(wall_now_ms - options_.retention.count()); !pruned) {
      store_failures_.Increment();
    } else if (*pruned > 0) {
      HSNS_LOG(info) << "alarms: " << *pruned << " cleared alarms past the retention deleted";
    }
  }
  refresh_gauges();
}

void AlarmService::refresh_gauges() {
  const auto counts = engine_.counts();
  for (const auto s : {brain::FaultSeverity::info, brain::FaultSeverity::warning, brain::FaultSeverity::minor,
                       brain::FaultSeverity::major, brain::FaultSeverity::critical}) {
    active_.Add({{"severity", std::string(brain::to_string(s))}})
        .Set(static_cast<double>(counts.by_severity[static_cast<std::size_t>(s)]));
  }
  suppressed_.Set(static_cast<double>(counts.suppressed));
  flapping_.Set(static_cast<double>(counts.flapping));
  silences_.Set(static_cast<double>(engine_.silences().size()));
}

void AlarmService::start() {
  const std::lock_guard lock(tick_mu_);
  if (ticker_) return;
  ticker_.emplace(
      "alarm ticker",
      PeriodicThread::Options{.period = options_.tick_interval, .start = PeriodicThread::Start::after_period},
      [this] { tick(unix_now_ms()); });
}

void AlarmService::stop() {
  const std::lock_guard lock(tick_mu_);
  ticker_.reset();  // waits for a running tick (ticks never take tick_mu_)
}

Result<brain::Alarm> AlarmService::acknowledge(const std::string& id, const std::string& who,
                                               const std::string& comment, std::int64_t wall_now_ms) {
  std::vector<std::string> one{id};
  auto acked = acknowledge_all(one, who, comment, wall_now_ms);
  if (!acked) {
    Error e = acked.error();
    for (auto& f : e.fields) {
      if (f.field == "ids[0]") f.field = "id";
    }
    if (e.detail.starts_with("ids[0]: ")) e.detail.erase(0, 8);
    return tl::unexpected(std::move(e));
  }
  return acked->front();
}

Result<std::vector<brain::Alarm>> AlarmService::acknowledge_all(std::span<const std::string> ids,
                                                                const std::string& who,
                                                                const std::string& comment,
                                                                std::int64_t wall_now_ms) {
  std::lock_guard lock(mu_);
  // Every id first: a group is acknowledged whole or not at all.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string field = "ids[" + std::to_string(i) + "]";
    if (const brain::Alarm* a = engine_.find(ids[i])) {
      if (a->state == brain::AlarmState::cleared)
        return tl::unexpected(Error::conflict(field, "alarm " + ids[i] + " is cleared"));
      continue;
    }
    auto stored = store_.get(ids[i]);
    if (!stored) return tl::unexpected(from_store(stored.error()));
    if (*stored && (*stored)->alarm.state == brain::AlarmState::cleared)
      return tl::unexpected(Error::conflict(field, "alarm " + ids[i] + " is cleared"));
    // A problem document of a 404 carries no field list: the detail names the field.
    return tl::unexpected(Error::not_found(field + ": no active alarm " + ids[i]));
  }
  std::vector<brain::AlarmChange> changes;
  std::vector<brain::Alarm> out;
  for (const auto& id : ids) {
    auto c = engine_.acknowledge(id, who, comment, wall_now_ms);
    if (!c) return tl::unexpected(c.error());  // checked above; cannot happen under the lock
    out.push_back(static_cast<const brain::Alarm&>(*c));
    changes.push_back(std::move(*c));
  }
  if (!commit(std::move(changes)))
    return tl::unexpected(
        Error::unavailable("acknowledged, but the alarm store is unavailable: the change is "
                           "queued and written when the store is back"));
  return out;
}

Result<brain::Silence> AlarmService::add_silence(brain::Silence silence, std::int64_t wall_now_ms) {
  if (auto ok = brain::validate_silence(silence); !ok) return tl::unexpected(ok.error());
  std::lock_guard lock(mu_);
  if (silence.id.empty()) silence.id = new_silence_id();
  if (engine_.silences().size() >= options_.engine.max_silences)
    return tl::unexpected(Error::unprocessable(
        "silences",
        "at most " + std::to_string(options_.engine.max_silences) + " silences; delete one first"));
  silence.created_ms = wall_now_ms;
  if (auto stored = store_.put_silence(silence); !stored) return tl::unexpected(from_store(stored.error()));
  std::vector<brain::AlarmChange> changes;
  if (auto added = engine_.add_silence(silence, wall_now_ms, changes); !added) {
    (void)store_.delete_silence(silence.id);
    return tl::unexpected(added.error());
  }
  commit(std::move(changes));
  refresh_gauges();
  return silence;
}

Result<void> AlarmService::delete_silence(const std::string& id, const std::string& actor,
                                          std::int64_t wall_now_ms) {
  std::lock_guard lock(mu_);
  auto gone = store_.delete_silence(id);
  if (!gone) return tl::unexpected(from_store(gone.error()));
  std::vector<brain::AlarmChange> changes;
  const bool held = engine_.remove_silence(id, actor, wall_now_ms, changes);
  if (!*gone && !held) return tl::unexpected(Error::not_found("no silence " + id));
  commit(std::move(changes));
  refresh_gauges();
  return {};
}

std::vector<brain::Silence> AlarmService::silences() const {
  std::lock_guard lock(mu_);
  return engine_.silences();
}

Result<store::AlarmPage> AlarmService::query(const store::AlarmFilter& filter) {
  auto page = store_.query(filter);
  if (!page) return tl::unexpected(from_store(page.error()));
  return std::move(*page);
}

Result<std::optional<store::AlarmWithHistory>> AlarmService::get(const std::string& id) {
  auto found = store_.get(id);
  if (!found) return tl::unexpected(from_store(found.error()));
  return std::move(*found);
}

brain::AlarmStats AlarmService::stats() const {
  std::lock_guard lock(mu_);
  return engine_.stats();
}

std::vector<brain::Alarm> AlarmService::active() const {
  std::lock_guard lock(mu_);
  return engine_.active();
}

std::vector<brain::Alarm> AlarmService::active_on(const std::string& entity) const {
  auto all = active();
  std::erase_if(all, [&entity](const brain::Alarm& a) {
    return a.entity != entity && a.root_cause != entity && a.peer != entity;
  });
  return all;
}

std::size_t AlarmService::pending_writes() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

}  // namespace hsns::alarms
