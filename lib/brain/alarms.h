// Alarms of the network brain (issue 12, item 5): the faults of the pattern matcher (patterns.h) turned into
// alarms an operator works with: one alarm per (pattern, entity) however often the fault repeats, damped
// when it flaps, acknowledged, cleared with a recovery notice, and filtered by silence rules without being
// lost. Pure: no I/O, no clock; the caller persists and publishes the changes
// (aggregator/brain/alarm_service).
//
// Contract:
// - Time: observe() runs in EVENT time (the faults' own timestamps): the engine's clock is the latest
//   fault time seen, or a later time given to advance(). Every time-based transition (the end of a flapping
//   alarm's hold-down, the expiry of a one-shot alarm, forgetting a cleared alarm) happens when the clock
//   passes its deadline, in deadline order, so a replay faster than real time gives the same alarms.
//   Acknowledgements and silences carry the operator's (wall-clock) time instead.
// - Fingerprint: FNV-1a 64 of "<pattern id>\0<key entity>" (key entity: the matched entity; for a
//   link_both_ends pattern the root-cause link, so either end's clear finds it). Stable across versions and
//   processes. The alarm id is "<16 hex digits of the fingerprint>-<first_ms>": a raise after the reopen
//   window is a new alarm with a new id; a raise within it reopens the same alarm (same id).
// - Dedupe: a raise of an active alarm adds to its count and last time; an "updated" change is emitted at
//   most once per options.update_interval_ms of event time per alarm (the next state change carries the
//   rest), so a fault that repeats a thousand times is one alarm and a handful of changes.
// - Flap damping: the fault's raises and clears (transitions) are kept per alarm (the last
//   kMaxFlapTransitions); when flap_transitions of them fall within flap_window_ms the alarm is marked
//   flapping (a "flapping" change). A flapping alarm's clear is held: the alarm stays active until the fault
//   has stayed away for hold_down_ms (a raise within it cancels the pending clear), then it is cleared once.
// - Lifecycle: raised -> acknowledged (who, when, comment; again allowed: the last one wins) -> cleared
//   ("cleared" is the recovery notice: the fault disappeared). A one-shot alarm (a log pattern without
//   clears_on: the matcher never clears it) clears after oneshot_clear_ms without a repeat.
// - Silences: a rule matches by entity (glob, config.h glob_match, over the alarm's entity and its root
//   cause), type (the pattern id or the fault type, exact) and a regular expression (RE2, searched in the
//   detail and the message); every given part must match, at least one must be given; an optional expiry.
//   A matching alarm is kept, stored and listed with suppressed = true (changes say so: consumers skip them
//   for notifications). Rules are checked when an alarm is raised or reopened (not on repeats) and, for
//   the alarms concerned, when a rule is added, removed or expires: work per fault is constant apart from
//   that check over at most max_silences rules.
// - Memory: at most max_alarms alarms (active and recently cleared). A new alarm beyond the cap evicts the
//   oldest cleared one; when every alarm is active the new one is dropped and counted (stats().dropped).
//   Cleared alarms are forgotten after reopen_window_ms. Per alarm: its fields and at most
//   kMaxFlapTransitions timestamps.
// - Not thread-safe: one owner (the alarm service, behind its mutex).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brain/patterns.h"
#include "hsns/error.h"

namespace hsns::brain {

inline constexpr std::size_t kMaxFlapTransitions = 32;

enum class AlarmState : std::uint8_t { raised, acknowledged, cleared };
std::string_view to_string(AlarmState state);  // "raised", "acknowledged", "cleared"
std::optional<AlarmState> parse_alarm_state(std::string_view text);
std::optional<FaultSeverity> parse_fault_severity(std::string_view text);  // "info" .. "critical"
std::optional<RootCauseRole> parse_root_cause_role(std::string_view text);

// What happened to an alarm. Only `updated` is not a state change (not kept in the alarm's history).
enum class AlarmChangeKind : std::uint8_t {
  raised,        // a new alarm
  reopened,      // raised again within the reopen window after it cleared (same id; acknowledgement reset)
  updated,       // repeats counted (count, last time, detail)
  flapping,      // marked flapping: its clear is held until the fault stays away for the hold-down
  acknowledged,  // an operator acknowledged it
  cleared,       // the fault disappeared (recovery notice)
  suppressed,    // a silence rule now matches it
  unsuppressed,  // no silence rule matches it any more (removed or expired)
};
std::string_view to_string(AlarmChangeKind kind);
std::optional<AlarmChangeKind> parse_alarm_change_kind(std::string_view text);

struct Alarm {
  std::string id;  // "<fingerprint hex>-<first_ms>"
  std::uint64_t fingerprint = 0;
  std::string type;   // the pattern id
  std::string fault;  // the pattern's fault type ("link_flapping")
  FaultSeverity severity = FaultSeverity::major;
  std::string entity;      // the matched entity
  std::string peer;        // the other end of its link, when known
  std::string root_cause;  // the entity blamed
  RootCauseRole role = RootCauseRole::port;
  AlarmState state = AlarmState::raised;
  bool suppressed = false;
  bool flapping = false;
  bool one_shot = false;  // cleared by time (oneshot_clear_ms), not by the fault
  std::int64_t first_ms = 0;
  std::int64_t last_ms = 0;
  std::uint64_t count = 0;  // raises of the fault counted into this alarm
  std::string detail;       // the last fault's sentence
  std::string message;      // the last log line that raised it (log patterns)
  std::string acknowledged_by;
  std::int64_t acknowledged_ms = 0;  // 0: not acknowledged
  std::string comment;
  std::int64_t cleared_ms = 0;  // 0: not cleared
  std::string silence_id;       // the rule that suppresses it ("" when not suppressed)
};

// One change of one alarm: the alarm as it is after the change.
struct AlarmChange : Alarm {
  AlarmChangeKind change = AlarmChangeKind::raised;
  std::int64_t at_ms = 0;  // event time (faults) or the operator's time (acknowledge, silences)
  std::string actor;       // who: "" for the engine, the token name for an operator
};

struct Silence {
  std::string id{};
  std::string entity{};                      // glob over the alarm's entity or root cause; "" = any
  std::string type{};                        // pattern id or fault type, exact; "" = any
  std::string regex{};                       // RE2, searched in detail and message; "" = any
  std::optional<std::int64_t> expires_ms{};  // wall-clock ms
  std::string creator{};
  std::string reason{};
  std::int64_t created_ms = 0;
};

inline constexpr std::size_t kMaxSilenceFieldLength = 1024;
inline constexpr std::size_t kMaxSilenceReasonLength = 4096;
// Every field rule (invalid, naming the field): at least one of entity/type/regex; lengths; the regex
// compiles (RE2); reason not empty. Does not check the id.
Result<void> validate_silence(const Silence& silence);

struct AlarmOptions {
  std::size_t max_alarms = 100'000;
  std::size_t max_silences = 1'000;
  std::int64_t update_interval_ms = 10'000;  // "updated" changes per alarm at most this often
  std::int64_t reopen_window_ms = 300'000;   // a raise this soon after the clear reopens the alarm
  std::uint32_t flap_transitions = 6;        // raises + clears within flap_window_ms that mean flapping
  std::int64_t flap_window_ms = 600'000;
  std::int64_t hold_down_ms = 300'000;      // quiet time before a flapping alarm's clear goes out
  std::int64_t oneshot_clear_ms = 900'000;  // a one-shot alarm clears after this long without a repeat
};

// Result<void> naming the option at fault.
Result<void> validate(const AlarmOptions& options);

struct AlarmStats {
  std::uint64_t faults = 0;    // fault matches observed
  std::uint64_t raised = 0;    // alarms raised (new) or reopened
  std::uint64_t reopened = 0;  // of raised
  std::uint64_t repeats = 0;   // raises counted into an active alarm
  std::uint64_t cleared = 0;
  std::uint64_t flapping = 0;       // times an alarm was marked flapping
  std::uint64_t held_clears = 0;    // clears held by flap damping
  std::uint64_t orphan_clears = 0;  // clears of a fault with no alarm (already cleared or forgotten)
  std::uint64_t evicted = 0;        // cleared alarms evicted for a new one at the cap
  std::uint64_t dropped = 0;        // new alarms dropped at the cap (every alarm active)
  std::uint64_t invalid = 0;        // faults without a pattern
};

// The active alarms (raised or acknowledged) counted for gauges.
struct AlarmCounts {
  std::array<std::size_t, 5> by_severity{};  // indexed by FaultSeverity
  std::size_t suppressed = 0;
  std::size_t flapping = 0;
};

std::uint64_t alarm_fingerprint(std::string_view pattern_id, std::string_view key_entity);
std::string alarm_id(std::uint64_t fingerprint, std::int64_t first_ms);
// The fingerprint an alarm id starts with, nullopt when the text is not an alarm id.
std::optional<std::uint64_t> fingerprint_of_id(std::string_view id);

class AlarmEngine {
 public:
  explicit AlarmEngine(AlarmOptions options = {});
  ~AlarmEngine();
  AlarmEngine(const AlarmEngine&) = delete;
  AlarmEngine& operator=(const AlarmEngine&) = delete;

  // The faults in order; appends the changes they cause (the clock first advances to each fault's time).
  void observe(std::span<const FaultMatch> faults, std::vector<AlarmChange>& out);
  // Moves the clock to now_ms (never backwards) and runs the deadlines it passes.
  void advance(std::int64_t now_ms, std::vector<AlarmChange>& out);
  std::int64_t now_ms() const { return now_ms_; }

  // not_found (field "id") for an alarm the engine does not hold, conflict for a cleared one.
  Result<AlarmChange> acknowledge(std::string_view id, std::string_view who, std::string_view comment,
                                  std::int64_t at_ms);

  // validate_silence, then the id must be new (conflict) and the rule count below max_silences
  // (unprocessable "silences"). Alarms it matches become suppressed (changes appended, actor creator).
  Result<void> add_silence(Silence silence, std::int64_t at_ms, std::vector<AlarmChange>& out);
  // false when no such rule. Alarms it suppressed are checked against the remaining rules.
  bool remove_silence(std::string_view id, std::string_view actor, std::int64_t at_ms,
                      std::vector<AlarmChange>& out);
  // Removes the rules whose expiry is at or before wall_now_ms; appends the changes.
  void expire_silences(std::int64_t wall_now_ms, std::vector<AlarmChange>& out);
  const std::vector<Silence>& silences() const { return silences_; }
  // After a restore and the rules' add_silence: an alarm suppressed by a rule that is gone moves to another
  // matching rule or is unsuppressed; an unsuppressed one a rule matches is suppressed (changes appended).
  void resync_silences(std::int64_t at_ms, std::vector<AlarmChange>& out);

  // Start-up: the active alarms the store kept (their flap history is not kept). Replaces nothing held:
  // an alarm whose fingerprint is held already is skipped. Alarms beyond max_alarms are not restored
  // (counted dropped). The matcher's state did not survive the restart, so a restored alarm is
  // unconfirmed: unless its fault is raised again within oneshot_clear_ms of its last time, it clears
  // ("not raised again since the restart"). Silences are given to add_silence afterwards. The clock
  // moves to the newest restored alarm's time, but never beyond max_clock_ms (the wall clock at start): an
  // alarm stored with a time in the future cannot carry the clock there across a restart.
  void restore(std::span<const Alarm> alarms,
               std::int64_t max_clock_ms = std::numeric_limits<std::int64_t>::max());

  const Alarm* find(std::string_view id) const;
  std::vector<Alarm> active() const;  // raised or acknowledged, in no particular order
  AlarmCounts counts() const;         // O(alarms held)
  std::size_t size() const { return alarms_.size(); }
  const AlarmStats& stats() const { return stats_; }

 private:
  struct Entry;
  struct CompiledSilence;

  Entry* lookup(std::uint64_t fingerprint);
  void on_raise(const FaultMatch& fault, std::vector<AlarmChange>& out);
  void on_clear(const FaultMatch& fault, std::vector<AlarmChange>& out);
  Entry* create(std::uint64_t fingerprint, const FaultMatch& fault);
  // true when it marked the alarm flapping (a change was emitted).
  bool record_transition(Entry& e, std::int64_t at_ms, std::vector<AlarmChange>& out);
  void clear_now(Entry& e, std::int64_t at_ms, std::string_view detail, std::vector<AlarmChange>& out);
  void set_deadline(Entry& e, std::optional<std::int64_t> at_ms);
  void forget(std::uint64_t fingerprint);
  void run_deadlines(std::int64_t until_ms, std::vector<AlarmChange>& out);
  const Silence* matching_silence(const Alarm& alarm) const;
  void emit(const Entry& e, AlarmChangeKind kind, std::int64_t at_ms, std::string_view actor,
            std::vector<AlarmChange>& out);

  AlarmOptions options_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Entry>> alarms_;
  std::set<std::pair<std::int64_t, std::uint64_t>> deadlines_;  // (when, fingerprint)
  std::set<std::pair<std::int64_t, std::uint64_t>> cleared_;    // (cleared_ms, fingerprint): eviction order
  std::vector<Silence> silences_;
  std::vector<std::shared_ptr<const CompiledSilence>> compiled_;  // parallel to silences_
  std::int64_t now_ms_ = 0;
  AlarmStats stats_;
};

}  // namespace hsns::brain
