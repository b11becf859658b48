// The fault-pattern library of the network brain: YAML files that say which log messages and KPI conditions
// mean which fault (type, severity, root-cause entity, impact, recommended action), and the matcher that
// answers, for each log event or KPI observation, the patterns that fire. Schema in docs/brain.md
// ("Fault patterns"); the shipped library is patterns/ at the repository root.
//
// Contract:
// - Loading: load_pattern_library(dir) reads every *.yaml in dir (sorted by name) and checks all of them;
//   any error fails the whole load with an hsns::Error (kind invalid: field = key path, reason starting with
//   "<file>:<line>:<column>:"; a syntax error has field ""). Unknown keys, a regular expression RE2 cannot
//   compile (or over kMaxRegexLength / too large a program), an id used twice (in any file) and a missing
//   required key are errors. A PatternLibrary is an immutable value: copies share it; a reload loads a new
//   one and swaps it in, so a failed reload leaves the previous library in use (PatternMatcher::reload).
// - Matching: PatternMatcher::observe(log event | KPI observation, out) appends the faults raised or cleared
//   by that event. Regular expressions are RE2 (linear time in the input, no backtracking): every message
//   regex of the library is tried in one pass (an RE2::Set), then only the patterns it names are checked in
//   full. Conditions over time (`for`, `count`/`within`, `scope: link_both_ends`) keep a small state per
//   (pattern, entity) in a least-recently-used table of at most limits.max_states entries; an evicted entry
//   with a raised fault reports it cleared ("state evicted"). Per event the work is bounded by the library
//   (its size), never by the number of entities or events seen. Link peers come from the caller's
//   PeerResolver (entity -> the entity at the other end of its link).
// - Not thread-safe: one owner feeds a matcher. PatternLibrary is thread-safe (immutable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brain/bank.h"
#include "brain/series.h"
#include "hsns/error.h"

namespace hsns::brain {

inline constexpr std::size_t kMaxPatternFileBytes = 1 << 20;
inline constexpr std::size_t kMaxPatterns = 4096;  // over every file of a library
inline constexpr std::size_t kMaxRegexLength = 4096;
inline constexpr std::uint32_t kMaxCount = 64;  // `count`: occurrences remembered per state
inline constexpr std::int64_t kMaxDurationMs =
    std::int64_t{7} * 86'400'000;  // `for`, `within`, `both_ends_within`

enum class FaultSeverity : std::uint8_t { info, warning, minor, major, critical };
std::string_view to_string(FaultSeverity severity);

// Which entity the fault is blamed on, derived from the matched entity (docs/brain.md "Root cause").
enum class RootCauseRole : std::uint8_t { port, link, module, switch_device, host_nic };
std::string_view to_string(RootCauseRole role);  // "port", "link", "module", "switch", "host_nic"

// A condition on one field of a log event: a regular expression over the whole field, or an exact value.
// field: "app", "hostname", "msgid", "procid", or a structured-data parameter "<sd-id>.<param-name>".
struct FieldCondition {
  std::string field;
  std::string regex;                  // "" when equals is given
  std::optional<std::string> equals;  // exact text
};

struct LogCondition {
  std::string message;  // RE2, searched anywhere in the message; a named group `ifname` names the port
  std::vector<FieldCondition> fields;
  int severity_min = 0;  // syslog severities min..max (0 emergency .. 7 debug)
  int severity_max = 7;
};

enum class Comparison : std::uint8_t { none, above, below };

struct KpiCondition {
  std::string metric;                  // a name or a glob (config.h glob_match)
  std::optional<AnomalyKind> anomaly;  // a detector of that kind has raised on the series (and not cleared)
  Comparison comparison = Comparison::none;  // and/or the value above (>) or below (<) the bound
  double bound = 0;
};

// Exactly one of log and kpi is set.
struct Condition {
  std::optional<LogCondition> log;
  std::optional<KpiCondition> kpi;
};

enum class PatternScope : std::uint8_t { entity, link_both_ends };

struct Pattern {
  std::string id;     // stable, unique across the library's files
  std::string fault;  // fault type, e.g. "link_down"
  FaultSeverity severity = FaultSeverity::major;
  std::string description;
  Condition match;
  std::int64_t for_ms = 0;     // KPI: the condition held continuously this long
  std::uint32_t count = 0;     // 0: every occurrence; else this many occurrences within within_ms
  std::int64_t within_ms = 0;  // with count
  PatternScope scope = PatternScope::entity;
  std::int64_t both_ends_within_ms = 60'000;  // link_both_ends: the other end held within this window
  RootCauseRole root_cause = RootCauseRole::port;
  std::string impact;
  std::string action;
  std::optional<Condition> clears_on;  // what ends the fault; KPI patterns without it: the condition ending
  std::string origin;                  // "<file>:<line>:<column>" of the entry
};

struct PatternSource {
  std::string name;  // the file name errors give
  std::string text;
};

class PatternLibrary {
 public:
  PatternLibrary();  // empty
  const std::vector<Pattern>& patterns() const;
  const Pattern* find(std::string_view id) const;
  std::size_t size() const { return patterns().size(); }

  struct Compiled;  // the compiled regular expressions and metric indexes (patterns.cpp)

 private:
  friend class PatternMatcher;
  friend Result<PatternLibrary> parse_pattern_library(std::span<const PatternSource> files);
  explicit PatternLibrary(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

// Files in the order given; ids are unique over all of them.
Result<PatternLibrary> parse_pattern_library(std::span<const PatternSource> files);
// Every *.yaml file of the directory, sorted by name; not_found when the directory cannot be read.
Result<PatternLibrary> load_pattern_library(const std::string& directory);

// ---- Matching ----

struct LogField {
  std::string_view name;  // "<sd-id>.<param-name>"
  std::string_view value;
};

struct LogEvent {
  std::string_view entity{};  // the device the line came from, as the caller resolved its hostname ("leaf01")
  std::int64_t timestamp_ms = 0;
  std::string_view message{};
  std::string_view app{};
  std::string_view hostname{};
  std::string_view msgid{};
  std::string_view procid{};
  int severity = 6;  // 0..7
  std::span<const LogField> fields{};
};

struct KpiObservation {
  std::string_view entity{};  // "host0042/mlx5_3/1", "leaf01/Ethernet48"
  std::string_view metric{};
  std::int64_t timestamp_ms = 0;
  double value = 0;                          // a gauge's value, a counter's per-second rate
  std::span<const AnomalyEvent> verdicts{};  // the DetectorBank's events for this sample, if any
};

enum class FaultState : std::uint8_t { raised, cleared };
std::string_view to_string(FaultState state);

struct FaultMatch {
  std::shared_ptr<const Pattern> pattern;  // keeps its library alive
  FaultState state = FaultState::raised;
  std::string entity;      // the matched entity (a log line's device, "/<ifname>" appended when captured)
  std::string peer;        // the other end of the link when the pattern resolved it
  std::string root_cause;  // the entity the fault is blamed on
  std::int64_t timestamp_ms = 0;
  std::int64_t first_ms = 0;      // the first occurrence counted, or when the condition started
  std::uint32_t occurrences = 1;  // occurrences counted (count patterns), else 1
  std::string message;            // log patterns: the line that fired or cleared it
  std::vector<std::pair<std::string, std::string>> captures;  // named groups of the message regex
  std::string metric;                                         // KPI patterns: the series' metric and value
  double value = 0;
  std::string detail;  // one sentence for an operator
};

using PeerResolver = std::function<std::optional<std::string>(std::string_view entity)>;

struct MatcherLimits {
  std::size_t max_states = 100'000;     // (pattern, entity) states; at least 1
  std::size_t max_entity_length = 512;  // longer entities are counted invalid and ignored
};

struct MatcherStats {
  std::uint64_t log_events = 0;
  std::uint64_t kpi_observations = 0;
  std::uint64_t invalid = 0;
  std::uint64_t raised = 0;
  std::uint64_t cleared = 0;
  std::uint64_t evicted = 0;
  std::uint64_t unpaired = 0;  // link_both_ends conditions held on one end with no peer known
};

class PatternMatcher {
 public:
  PatternMatcher(PatternLibrary library, PeerResolver peers, MatcherLimits limits = {});
  ~PatternMatcher();
  PatternMatcher(const PatternMatcher&) = delete;
  PatternMatcher& operator=(const PatternMatcher&) = delete;

  void observe(const LogEvent& event, std::vector<FaultMatch>& out);
  void observe(const KpiObservation& observation, std::vector<FaultMatch>& out);

  // Swaps in another library. The state of the previous one is dropped without events (its raised faults
  // are the caller's to close: their pattern ids may not exist any more).
  void replace_library(PatternLibrary library);
  // Loads the directory and swaps the result in; on an error nothing changes and the error is returned.
  Result<std::size_t> reload(const std::string& directory);

  const PatternLibrary& library() const { return library_; }
  const MatcherStats& stats() const { return stats_; }
  std::size_t state_count() const { return index_.size(); }
  std::size_t active_faults() const;

 private:
  struct State;
  using Lru = std::list<State>;
  struct Occurrence;

  State* find(std::uint32_t pattern, std::string_view entity);
  State& find_or_add(std::uint32_t pattern, std::string_view entity, std::vector<FaultMatch>& out);
  void set_key(std::uint32_t pattern, std::string_view entity);
  void step(std::uint32_t pattern, State& state, bool held, const Occurrence& occurrence,
            std::vector<FaultMatch>& out);
  std::string resolve_peer(std::uint32_t pattern, std::string_view entity) const;
  // state: nullptr for a one-shot fault (nothing remembered).
  void raise(std::uint32_t pattern, State* state, std::string_view entity, const std::string& peer,
             const Occurrence& occurrence, std::vector<FaultMatch>& out);
  void clear(std::uint32_t pattern, State& state, const Occurrence& occurrence, std::string_view reason,
             std::vector<FaultMatch>& out);
  FaultMatch make_match(std::uint32_t pattern, FaultState state, std::string_view entity,
                        const Occurrence& occurrence) const;
  void check_log(std::uint32_t pattern, bool clearing, const LogEvent& event, std::vector<FaultMatch>& out);
  void check_kpi(std::uint32_t pattern, bool clearing, const KpiObservation& observation,
                 std::vector<FaultMatch>& out);

  PatternLibrary library_;
  PeerResolver peers_;
  MatcherLimits limits_;
  MatcherStats stats_;
  Lru lru_;                                                    // most recently used first
  std::unordered_map<std::string_view, Lru::iterator> index_;  // keys view State::key
  std::string key_;                                            // scratch for lookups
  std::vector<int> set_hits_;                                  // scratch for the RE2::Set
};

}  // namespace hsns::brain
