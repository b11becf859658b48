// Properties of the fault-pattern matcher (RapidCheck): its state never exceeds its cap whatever the stream
// of events and entities, and every fault it raises is either still active or reported cleared exactly once
// (evictions included).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "brain/patterns.h"

namespace hsns::brain {
namespace {

// Patterns that keep state (KPI conditions with duration, count and anomaly; a log pattern with clears_on).
const char* const kStatefulLibrary = R"(patterns:
  - id: low
    fault: f
    severity: minor
    description: d
    match: {kpi: {metric: m, below: 0}, for: 20s}
    root_cause: port
    impact: i
    action: a
  - id: flaps
    fault: f
    severity: minor
    description: d
    match: {kpi: {metric: m, above: 5}, count: 3, within: 60s}
    root_cause: link
    impact: i
    action: a
  - id: burst
    fault: f
    severity: minor
    description: d
    match: {kpi: {metric: 'm*', anomaly: burst}}
    root_cause: module
    impact: i
    action: a
  - id: down
    fault: f
    severity: minor
    description: d
    match: {log: {message: 'Port (?P<ifname>\w+) down'}}
    clears_on: {log: {message: 'Port (?P<ifname>\w+) up'}}
    root_cause: port
    impact: i
    action: a
)";

PatternLibrary library_of(const char* text) {
  const std::vector<PatternSource> files{{"p.yaml", text}};
  auto library = parse_pattern_library(files);
  if (!library) throw std::runtime_error(library.error().message());
  return std::move(*library);
}

struct Step {
  bool log = false;
  int entity = 0;
  int what = 0;  // log: down/up; kpi: value class
  bool burst_raised = false;
  bool burst_cleared = false;
};

rc::Gen<Step> step_gen(int entities) {
  return rc::gen::build<Step>(rc::gen::set(&Step::log, rc::gen::arbitrary<bool>()),
                              rc::gen::set(&Step::entity, rc::gen::inRange(0, entities)),
                              rc::gen::set(&Step::what, rc::gen::inRange(0, 3)),
                              rc::gen::set(&Step::burst_raised, rc::gen::arbitrary<bool>()),
                              rc::gen::set(&Step::burst_cleared, rc::gen::arbitrary<bool>()));
}

RC_GTEST_PROP(PatternMatcherProperties, StateStaysWithinItsCapAndEveryRaisedFaultIsClearedOnce, ()) {
  const auto cap = *rc::gen::inRange<std::size_t>(1, 40);
  const int entities = *rc::gen::inRange(1, 200);
  const auto steps = *rc::gen::container<std::vector<Step>>(step_gen(entities));
  PatternMatcher matcher(library_of(kStatefulLibrary), nullptr, {.max_states = cap});
  std::vector<FaultMatch> out;
  std::int64_t t_ms = 0;
  for (const Step& s : steps) {
    t_ms += 5000;
    const std::string entity = "dev" + std::to_string(s.entity);
    if (s.log) {
      const std::string message = "Port e" + std::to_string(s.what) + (s.burst_raised ? " down" : " up");
      matcher.observe(LogEvent{.entity = entity, .timestamp_ms = t_ms, .message = message}, out);
    } else {
      std::vector<AnomalyEvent> verdicts;
      if (s.burst_raised || s.burst_cleared) {
        AnomalyEvent v;
        v.kind = AnomalyKind::burst;
        v.state = s.burst_raised ? EventState::raised : EventState::cleared;
        verdicts.push_back(v);
      }
      const double value = s.what == 0 ? -1.0 : s.what == 1 ? 1.0 : 9.0;
      matcher.observe(KpiObservation{entity, s.what == 2 ? "m2" : "m", t_ms, value, verdicts}, out);
    }
    RC_ASSERT(matcher.state_count() <= cap);
  }
  // Every raise is matched by one clear or one active state, per (pattern, entity), in order.
  std::map<std::pair<std::string, std::string>, bool> active;
  for (const FaultMatch& m : out) {
    bool& a = active[{m.pattern->id, m.entity}];
    RC_ASSERT(a == (m.state == FaultState::cleared));
    a = m.state == FaultState::raised;
  }
  std::size_t still = 0;
  for (const auto& [key, a] : active) still += a ? 1 : 0;
  RC_ASSERT(still == matcher.active_faults());
  RC_ASSERT(matcher.stats().raised - matcher.stats().cleared == matcher.active_faults());
}

RC_GTEST_PROP(PatternMatcherProperties, TheShippedLibraryStaysWithinItsCap, ()) {
  static const PatternLibrary shipped = [] {
    auto l = load_pattern_library(std::string(HSNS_TEST_SOURCE_DIR) + "/patterns");
    if (!l) throw std::runtime_error(l.error().message());
    return *l;
  }();
  const auto cap = *rc::gen::inRange<std::size_t>(1, 30);
  const int ports = *rc::gen::inRange(1, 100);
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 1000));
  PatternMatcher matcher(shipped,
                         [](std::string_view e) -> std::optional<std::string> {
                           // each port's peer is the port one up or down ("leafN/p" <-> "leafN^1/p")
                           return "peer-of-" + std::string(e.substr(0, 16));
                         },
                         {.max_states = cap});
  static const char* const kMetrics[] = {"rx_power_dbm", "symbol_error", "rx_prio3_pause_duration",
                                         "link_downed", "np_cnp_sent"};
  std::vector<FaultMatch> out;
  std::int64_t t_ms = 0;
  for (const int v : values) {
    t_ms += 10'000;
    const std::string entity = "leaf" + std::to_string(v % ports) + "/Ethernet" + std::to_string(v % 7);
    AnomalyEvent burst;
    burst.kind = AnomalyKind::burst;
    matcher.observe(KpiObservation{entity, kMetrics[v % 5], t_ms, static_cast<double>(v % 20) * 100000.0 - 20,
                                   v % 3 == 0 ? std::span(&burst, 1) : std::span<const AnomalyEvent>()},
                    out);
    const std::string line = "Port Ethernet" + std::to_string(v % 7) + " oper state set from up to down";
    matcher.observe(
        LogEvent{.entity = "leaf" + std::to_string(v % ports), .timestamp_ms = t_ms, .message = line}, out);
    RC_ASSERT(matcher.state_count() <= cap);
  }
}

}  // namespace
}  // namespace hsns::brain
