#include "brain/alarms.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>

#include "brain/config.h"

namespace hsns::brain {
namespace {

constexpr int kMaxSilenceProgramSize = 20'000;  // as the pattern library's expressions

std::unique_ptr<RE2> compile(const std::string& text, std::string& error) {
  RE2::Options o;
  o.set_log_errors(false);
  auto re = std::make_unique<RE2>(text, o);
  if (!re->ok()) {
    error = "bad regular expression: " + re->error();
    return nullptr;
  }
  if (re->ProgramSize() > kMaxSilenceProgramSize) {
    error = "regular expression too large (program size " + std::to_string(re->ProgramSize()) + ", at most " +
            std::to_string(kMaxSilenceProgramSize) + ")";
    return nullptr;
  }
  return re;
}

std::string key_entity(const FaultMatch& fault) {
  if (fault.pattern->scope == PatternScope::link_both_ends && !fault.root_cause.empty())
    return fault.root_cause;
  return fault.entity;
}

}  // namespace

std::string_view to_string(AlarmState state) {
  switch (state) {
    case AlarmState::raised:
      return "raised";
    case AlarmState::acknowledged:
      return "acknowledged";
    case AlarmState::cleared:
      return "cleared";
  }
  return "raised";
}

std::optional<AlarmState> parse_alarm_state(std::string_view text) {
  for (const auto s : {AlarmState::raised, AlarmState::acknowledged, AlarmState::cleared}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

std::optional<FaultSeverity> parse_fault_severity(std::string_view text) {
  for (const auto s : {FaultSeverity::info, FaultSeverity::warning, FaultSeverity::minor,
                       FaultSeverity::major, FaultSeverity::critical}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

std::optional<RootCauseRole> parse_root_cause_role(std::string_view text) {
  for (const auto r : {RootCauseRole::port, RootCauseRole::link, RootCauseRole::module,
                       RootCauseRole::switch_device, RootCauseRole::host_nic}) {
    if (to_string(r) == text) return r;
  }
  return std::nullopt;
}

std::string_view to_string(AlarmChangeKind kind) {
  switch (kind) {
    case AlarmChangeKind::raised:
      return "raised";
    case AlarmChangeKind::reopened:
      return "reopened";
    case AlarmChangeKind::updated:
      return "updated";
    case AlarmChangeKind::flapping:
      return "flapping";
    case AlarmChangeKind::acknowledged:
      return "acknowledged";
    case AlarmChangeKind::cleared:
      return "cleared";
    case AlarmChangeKind::suppressed:
      return "suppressed";
    case AlarmChangeKind::unsuppressed:
      return "unsuppressed";
  }
  return "updated";
}

std::optional<AlarmChangeKind> parse_alarm_change_kind(std::string_view text) {
  for (const auto k : {AlarmChangeKind::raised, AlarmChangeKind::reopened, AlarmChangeKind::updated,
                       AlarmChangeKind::flapping, AlarmChangeKind::acknowledged, AlarmChangeKind::cleared,
                       AlarmChangeKind::suppressed, AlarmChangeKind::unsuppressed}) {
    if (to_string(k) == text) return k;
  }
  return std::nullopt;
}

std::uint64_t alarm_fingerprint(std::string_view pattern_id, std::string_view key_entity) {
  // FNV-1a 64: fixed by its definition, unlike std::hash, so ids survive upgrades and restarts.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::string_view s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
  };
  mix(pattern_id);
  mix(std::string_view("\0", 1));
  mix(key_entity);
  return h;
}

std::string alarm_id(std::uint64_t fingerprint, std::int64_t first_ms) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%016llx-%lld", static_cast<unsigned long long>(fingerprint),
                static_cast<long long>(first_ms));
  return buffer;
}

std::optional<std::uint64_t> fingerprint_of_id(std::string_view id) {
  if (id.size() < 18 || id[16] != '-') return std::nullopt;
  std::uint64_t fp = 0;
  const auto [p, ec] = std::from_chars(id.data(), id.data() + 16, fp, 16);
  if (ec != std::errc() || p != id.data() + 16) return std::nullopt;
  std::int64_t first = 0;
  const auto rest = id.substr(17);
  const auto [q, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), first);
  if (ec2 != std::errc() || q != rest.data() + rest.size()) return std::nullopt;
  return fp;
}

Result<void> validate_silence(const Silence& s) {
  std::vector<FieldError> errors;
  if (s.entity.empty() && s.type.empty() && s.regex.empty())
    errors.push_back(
        {"entity", "a silence needs at least one of entity, type and regex (it would match every alarm)"});
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"entity", &s.entity},
                                    {"type", &s.type},
                                    {"regex", &s.regex},
                                    {"creator", &s.creator}}) {
    if (value->size() > kMaxSilenceFieldLength)
      errors.push_back({name, "at most " + std::to_string(kMaxSilenceFieldLength) + " characters"});
    if (value->find('\0') != std::string::npos) errors.push_back({name, "must not contain a NUL character"});
  }
  if (s.reason.empty() || s.reason.size() > kMaxSilenceReasonLength)
    errors.push_back(
        {"reason", "must say why, 1 to " + std::to_string(kMaxSilenceReasonLength) + " characters"});
  if (!s.regex.empty() && s.regex.size() <= kMaxSilenceFieldLength) {
    std::string error;
    if (!compile(s.regex, error)) errors.push_back({"regex", error});
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  return {};
}

Result<void> validate(const AlarmOptions& o) {
  std::vector<FieldError> errors;
  if (o.max_alarms < 1) errors.push_back({"max_alarms", "must be at least 1"});
  if (o.max_silences < 1) errors.push_back({"max_silences", "must be at least 1"});
  if (o.update_interval_ms < 0) errors.push_back({"update_interval_ms", "must not be negative"});
  if (o.reopen_window_ms < 0) errors.push_back({"reopen_window_ms", "must not be negative"});
  if (o.flap_transitions < 2 || o.flap_transitions > kMaxFlapTransitions)
    errors.push_back({"flap_transitions", "must be 2 to " + std::to_string(kMaxFlapTransitions)});
  if (o.flap_window_ms < 1) errors.push_back({"flap_window_ms", "must be positive"});
  if (o.hold_down_ms < 0) errors.push_back({"hold_down_ms", "must not be negative"});
  if (o.oneshot_clear_ms < 1) errors.push_back({"oneshot_clear_ms", "must be positive"});
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  return {};
}

struct AlarmEngine::Entry {
  Alarm alarm;
  bool fault_active = true;    // the matcher's view: raised and not cleared
  bool clear_pending = false;  // flapping: the fault cleared, the alarm waits out the hold-down
  bool unconfirmed = false;    // restored at start and not raised since
  std::int64_t last_emit_ms = 0;
  std::optional<std::int64_t> deadline;
  std::array<std::int64_t, kMaxFlapTransitions> transitions{};  // a ring of the last transition times
  std::size_t transition_count = 0;
};

struct AlarmEngine::CompiledSilence {
  std::unique_ptr<RE2> regex;
};

AlarmEngine::AlarmEngine(AlarmOptions options) : options_(options) {}
AlarmEngine::~AlarmEngine() = default;

AlarmEngine::Entry* AlarmEngine::lookup(std::uint64_t fingerprint) {
  auto it = alarms_.find(fingerprint);
  return it == alarms_.end() ? nullptr : it->second.get();
}

const Alarm* AlarmEngine::find(std::string_view id) const {
  const auto fp = fingerprint_of_id(id);
  if (!fp) return nullptr;
  auto it = alarms_.find(*fp);
  if (it == alarms_.end() || it->second->alarm.id != id) return nullptr;
  return &it->second->alarm;
}

std::vector<Alarm> AlarmEngine::active() const {
  std::vector<Alarm> out;
  for (const auto& [fp, e] : alarms_) {
    if (e->alarm.state != AlarmState::cleared) out.push_back(e->alarm);
  }
  return out;
}

AlarmCounts AlarmEngine::counts() const {
  AlarmCounts c;
  for (const auto& [fp, e] : alarms_) {
    const Alarm& a = e->alarm;
    if (a.state == AlarmState::cleared) continue;
    ++c.by_severity[static_cast<std::size_t>(a.severity)];
    if (a.suppressed) ++c.suppressed;
    if (a.flapping) ++c.flapping;
  }
  return c;
}

void AlarmEngine::emit(const Entry& e, AlarmChangeKind kind, std::int64_t at_ms, std::string_view actor,
                       std::vector<AlarmChange>& out) {
  AlarmChange c;
  static_cast<Alarm&>(c) = e.alarm;
  c.change = kind;
  c.at_ms = at_ms;
  c.actor = std::string(actor);
  out.push_back(std::move(c));
}

void AlarmEngine::set_deadline(Entry& e, std::optional<std::int64_t> at_ms) {
  if (e.deadline) deadlines_.erase({*e.deadline, e.alarm.fingerprint});
  e.deadline = at_ms;
  if (at_ms) deadlines_.insert({*at_ms, e.alarm.fingerprint});
}

void AlarmEngine::forget(std::uint64_t fingerprint) {
  auto it = alarms_.find(fingerprint);
  if (it == alarms_.end()) return;
  Entry& e = *it->second;
  set_deadline(e, std::nullopt);
  if (e.alarm.state == AlarmState::cleared) cleared_.erase({e.alarm.cleared_ms, fingerprint});
  alarms_.erase(it);
}

void AlarmEngine::observe(std::span<const FaultMatch> faults, std::vector<AlarmChange>& out) {
  for (const FaultMatch& f : faults) {
    ++stats_.faults;
    if (!f.pattern) {
      ++stats_.invalid;
      continue;
    }
    advance(f.timestamp_ms, out);
    if (f.state == FaultState::raised) {
      on_raise(f, out);
    } else {
      on_clear(f, out);
    }
  }
}

void AlarmEngine::advance(std::int64_t now_ms, std::vector<AlarmChange>& out) {
  if (now_ms <= now_ms_) return;
  run_deadlines(now_ms, out);
  now_ms_ = now_ms;
}

void AlarmEngine::run_deadlines(std::int64_t until_ms, std::vector<AlarmChange>& out) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= until_ms) {
    const auto [when, fp] = *deadlines_.begin();
    deadlines_.erase(deadlines_.begin());
    Entry* e = lookup(fp);
    if (e == nullptr) continue;
    e->deadline.reset();
    if (e->alarm.state == AlarmState::cleared) {
      forget(fp);  // the reopen window is over
    } else if (e->clear_pending) {
      clear_now(*e, when,
                "the fault stayed away for the hold-down (" + std::to_string(options_.hold_down_ms / 1000) +
                    " s) after flapping",
                out);
    } else if (e->unconfirmed) {
      clear_now(*e, when, "not raised again since the restart: " + e->alarm.detail, out);
    } else if (e->alarm.one_shot) {
      clear_now(
          *e, when,
          "no repeat within " + std::to_string(options_.oneshot_clear_ms / 1000) + " s: " + e->alarm.detail,
          out);
    }
  }
}

AlarmEngine::Entry* AlarmEngine::create(std::uint64_t fingerprint, const FaultMatch& f) {
  if (alarms_.size() >= options_.max_alarms) {
    if (cleared_.empty()) {
      ++stats_.dropped;
      return nullptr;
    }
    ++stats_.evicted;
    forget(cleared_.begin()->second);
  }
  auto entry = std::make_unique<Entry>();
  Alarm& a = entry->alarm;
  const Pattern& p = *f.pattern;
  a.fingerprint = fingerprint;
  a.first_ms = f.timestamp_ms;
  a.id = alarm_id(fingerprint, a.first_ms);
  a.type = p.id;
  a.fault = p.fault;
  a.severity = p.severity;
  a.entity = f.entity;
  a.peer = f.peer;
  a.root_cause = f.root_cause.empty() ? f.entity : f.root_cause;
  a.role = p.root_cause;
  a.one_shot = p.match.log.has_value() && !p.clears_on.has_value();
  Entry* raw = entry.get();
  alarms_.emplace(fingerprint, std::move(entry));
  return raw;
}

bool AlarmEngine::record_transition(Entry& e, std::int64_t at_ms, std::vector<AlarmChange>& out) {
  e.transitions[e.transition_count % kMaxFlapTransitions] = at_ms;
  ++e.transition_count;
  if (e.alarm.flapping) return false;
  const std::size_t kept = std::min<std::size_t>(e.transition_count, kMaxFlapTransitions);
  std::size_t within = 0;
  for (std::size_t i = 0; i < kept; ++i) {
    if (e.transitions[i] >= at_ms - options_.flap_window_ms && e.transitions[i] <= at_ms) ++within;
  }
  if (within >= options_.flap_transitions) {
    e.alarm.flapping = true;
    ++stats_.flapping;
    emit(e, AlarmChangeKind::flapping, at_ms, "", out);
    e.last_emit_ms = at_ms;
    return true;
  }
  return false;
}

void AlarmEngine::on_raise(const FaultMatch& f, std::vector<AlarmChange>& out) {
  const std::uint64_t fp = alarm_fingerprint(f.pattern->id, key_entity(f));
  const std::int64_t t = f.timestamp_ms;
  Entry* e = lookup(fp);
  auto take = [&f, t](Alarm& a) {
    ++a.count;
    a.last_ms = std::max(a.last_ms, t);
    if (!f.detail.empty()) a.detail = f.detail;
    if (!f.message.empty()) a.message = f.message;
    if (!f.peer.empty()) a.peer = f.peer;
  };
  if (e != nullptr && e->alarm.state != AlarmState::cleared) {
    ++stats_.repeats;
    take(e->alarm);
    bool flagged = false;
    if (!e->fault_active) {
      e->fault_active = true;
      if (e->clear_pending) {
        e->clear_pending = false;
        set_deadline(*e, std::nullopt);
      }
      flagged = record_transition(*e, t, out);
    }
    if (e->unconfirmed) {
      e->unconfirmed = false;
      if (!e->alarm.one_shot) set_deadline(*e, std::nullopt);
    }
    if (e->alarm.one_shot) set_deadline(*e, e->alarm.last_ms + options_.oneshot_clear_ms);
    if (!flagged && t - e->last_emit_ms >= options_.update_interval_ms) {
      emit(*e, AlarmChangeKind::updated, t, "", out);
      e->last_emit_ms = t;
    }
    return;
  }
  AlarmChangeKind kind = AlarmChangeKind::raised;
  if (e != nullptr) {  // cleared within the reopen window: the same alarm again
    kind = AlarmChangeKind::reopened;
    cleared_.erase({e->alarm.cleared_ms, fp});
    set_deadline(*e, std::nullopt);
    Alarm& a = e->alarm;
    a.state = AlarmState::raised;
    a.cleared_ms = 0;
    a.acknowledged_by.clear();
    a.acknowledged_ms = 0;
    a.comment.clear();
    a.severity = f.pattern->severity;  // a reloaded library may have changed it
    ++stats_.reopened;
  } else {
    e = create(fp, f);
    if (e == nullptr) return;
  }
  take(e->alarm);
  e->fault_active = true;
  e->clear_pending = false;
  const Silence* s = matching_silence(e->alarm);
  e->alarm.suppressed = s != nullptr;
  e->alarm.silence_id = s != nullptr ? s->id : "";
  ++stats_.raised;
  emit(*e, kind, t, "", out);
  e->last_emit_ms = t;
  if (kind == AlarmChangeKind::reopened) record_transition(*e, t, out);
  if (kind == AlarmChangeKind::raised) {
    e->transitions[0] = t;
    e->transition_count = 1;
  }
  if (e->alarm.one_shot) set_deadline(*e, e->alarm.last_ms + options_.oneshot_clear_ms);
}

void AlarmEngine::on_clear(const FaultMatch& f, std::vector<AlarmChange>& out) {
  const std::uint64_t fp = alarm_fingerprint(f.pattern->id, key_entity(f));
  Entry* e = lookup(fp);
  if (e == nullptr || e->alarm.state == AlarmState::cleared || !e->fault_active) {
    ++stats_.orphan_clears;
    return;
  }
  const std::int64_t t = std::max(f.timestamp_ms, e->alarm.first_ms);
  e->fault_active = false;
  record_transition(*e, t, out);
  if (e->alarm.flapping) {
    e->clear_pending = true;
    ++stats_.held_clears;
    set_deadline(*e, t + options_.hold_down_ms);
    return;
  }
  clear_now(*e, t, f.detail, out);
}

void AlarmEngine::clear_now(Entry& e, std::int64_t at_ms, std::string_view detail,
                            std::vector<AlarmChange>& out) {
  Alarm& a = e.alarm;
  a.state = AlarmState::cleared;
  a.cleared_ms = at_ms;
  a.flapping = false;
  if (!detail.empty()) a.detail = std::string(detail);
  e.fault_active = false;
  e.clear_pending = false;
  e.unconfirmed = false;
  ++stats_.cleared;
  emit(e, AlarmChangeKind::cleared, at_ms, "", out);
  e.last_emit_ms = at_ms;
  cleared_.insert({at_ms, a.fingerprint});
  set_deadline(e, at_ms + options_.reopen_window_ms);
}

Result<AlarmChange> AlarmEngine::acknowledge(std::string_view id, std::string_view who,
                                             std::string_view comment, std::int64_t at_ms) {
  const auto fp = fingerprint_of_id(id);
  Entry* e = fp ? lookup(*fp) : nullptr;
  if (e == nullptr || e->alarm.id != id)
    return tl::unexpected(Error::not_found("no active alarm " + std::string(id)));
  if (e->alarm.state == AlarmState::cleared)
    return tl::unexpected(Error::conflict("id", "alarm " + std::string(id) + " is cleared"));
  Alarm& a = e->alarm;
  a.state = AlarmState::acknowledged;
  a.acknowledged_by = std::string(who);
  a.acknowledged_ms = at_ms;
  a.comment = std::string(comment);
  std::vector<AlarmChange> out;
  emit(*e, AlarmChangeKind::acknowledged, at_ms, who, out);
  return std::move(out.front());
}

const Silence* AlarmEngine::matching_silence(const Alarm& a) const {
  for (std::size_t i = 0; i < silences_.size(); ++i) {
    const Silence& s = silences_[i];
    if (!s.type.empty() && s.type != a.type && s.type != a.fault) continue;
    if (!s.entity.empty() && !glob_match(s.entity, a.entity) && !glob_match(s.entity, a.root_cause)) continue;
    if (compiled_[i]->regex && !RE2::PartialMatch(a.detail, *compiled_[i]->regex) &&
        !RE2::PartialMatch(a.message, *compiled_[i]->regex))
      continue;
    return &s;
  }
  return nullptr;
}

Result<void> AlarmEngine::add_silence(Silence silence, std::int64_t at_ms, std::vector<AlarmChange>& out) {
  if (auto ok = validate_silence(silence); !ok) return ok;
  for (const Silence& s : silences_) {
    if (s.id == silence.id) return tl::unexpected(Error::conflict("id", "silence " + s.id + " exists"));
  }
  if (silences_.size() >= options_.max_silences)
    return tl::unexpected(Error::unprocessable(
        "silences", "at most " + std::to_string(options_.max_silences) + " silences; delete one first"));
  auto compiled = std::make_shared<CompiledSilence>();
  if (!silence.regex.empty()) {
    std::string error;
    compiled->regex = compile(silence.regex, error);
  }
  silences_.push_back(std::move(silence));
  compiled_.push_back(std::move(compiled));
  const Silence& added = silences_.back();
  for (auto& [fp, e] : alarms_) {
    Alarm& a = e->alarm;
    if (a.state == AlarmState::cleared || a.suppressed) continue;
    if (matching_silence(a) != &added) continue;
    a.suppressed = true;
    a.silence_id = added.id;
    emit(*e, AlarmChangeKind::suppressed, at_ms, added.creator, out);
  }
  return {};
}

bool AlarmEngine::remove_silence(std::string_view id, std::string_view actor, std::int64_t at_ms,
                                 std::vector<AlarmChange>& out) {
  const auto it =
      std::find_if(silences_.begin(), silences_.end(), [id](const Silence& s) { return s.id == id; });
  if (it == silences_.end()) return false;
  const std::string removed = it->id;
  const auto index = static_cast<std::size_t>(it - silences_.begin());
  silences_.erase(it);
  compiled_.erase(compiled_.begin() + static_cast<std::ptrdiff_t>(index));
  for (auto& [fp, e] : alarms_) {
    Alarm& a = e->alarm;
    if (a.state == AlarmState::cleared || a.silence_id != removed) continue;
    if (const Silence* other = matching_silence(a)) {
      a.silence_id = other->id;
      emit(*e, AlarmChangeKind::suppressed, at_ms, actor, out);
    } else {
      a.suppressed = false;
      a.silence_id.clear();
      emit(*e, AlarmChangeKind::unsuppressed, at_ms, actor, out);
    }
  }
  return true;
}

void AlarmEngine::expire_silences(std::int64_t wall_now_ms, std::vector<AlarmChange>& out) {
  std::vector<std::string> expired;
  for (const Silence& s : silences_) {
    if (s.expires_ms && *s.expires_ms <= wall_now_ms) expired.push_back(s.id);
  }
  for (const auto& id : expired) remove_silence(id, "", wall_now_ms, out);
}

void AlarmEngine::resync_silences(std::int64_t at_ms, std::vector<AlarmChange>& out) {
  for (auto& [fp, e] : alarms_) {
    Alarm& a = e->alarm;
    if (a.state == AlarmState::cleared) continue;
    const bool rule_held =
        a.suppressed && std::any_of(silences_.begin(), silences_.end(),
                                    [&a](const Silence& s) { return s.id == a.silence_id; });
    if (rule_held) continue;
    const Silence* s = matching_silence(a);
    if (s != nullptr) {
      a.suppressed = true;
      a.silence_id = s->id;
      emit(*e, AlarmChangeKind::suppressed, at_ms, "", out);
    } else if (a.suppressed) {
      a.suppressed = false;
      a.silence_id.clear();
      emit(*e, AlarmChangeKind::unsuppressed, at_ms, "", out);
    }
  }
}

void AlarmEngine::restore(std::span<const Alarm> alarms, std::int64_t max_clock_ms) {
  for (const Alarm& a : alarms) {
    if (a.state == AlarmState::cleared || alarms_.contains(a.fingerprint)) continue;
    if (alarms_.size() >= options_.max_alarms) {
      ++stats_.dropped;
      continue;
    }
    auto e = std::make_unique<Entry>();
    e->alarm = a;
    e->fault_active = true;
    e->last_emit_ms = a.last_ms;
    e->transitions[0] = a.last_ms;
    e->transition_count = 1;
    e->unconfirmed = true;
    Entry& ref = *e;
    alarms_.emplace(a.fingerprint, std::move(e));
    set_deadline(ref, a.last_ms + options_.oneshot_clear_ms);
    now_ms_ = std::max(now_ms_, std::min(a.last_ms, max_clock_ms));
  }
}

}  // namespace hsns::brain
