// The fault-pattern library (lib/brain/patterns.h): the shipped library (patterns/) loads and every pattern
// has a positive and a negative example (pattern_examples.yaml); the loader's errors name file, line and
// column; a failed reload keeps the previous library; count, duration, both-ends and clear conditions.
#include "brain/patterns.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "brain/config.h"
#include "support/temp_dir.h"

namespace hsns::brain {
namespace {

std::string shipped_dir() {
  return std::string(HSNS_TEST_SOURCE_DIR) + "/patterns";
}

PatternLibrary shipped() {
  auto library = load_pattern_library(shipped_dir());
  if (!library) throw std::runtime_error(library.error().message());
  return std::move(*library);
}

PatternLibrary parse_one(const std::string& text, const std::string& name = "test.yaml") {
  const std::vector<PatternSource> files{{name, text}};
  auto library = parse_pattern_library(files);
  if (!library) throw std::runtime_error(library.error().message());
  return std::move(*library);
}

// A peer resolver over a symmetric table.
PeerResolver peers_of(const std::map<std::string, std::string>& links) {
  std::map<std::string, std::string, std::less<>> both;
  for (const auto& [a, b] : links) {
    both[a] = b;
    both[b] = a;
  }
  return [both](std::string_view entity) -> std::optional<std::string> {
    const auto it = both.find(entity);
    if (it == both.end()) return std::nullopt;
    return it->second;
  };
}

std::vector<FaultMatch> raised_of(const std::vector<FaultMatch>& out, std::string_view id) {
  std::vector<FaultMatch> r;
  for (const auto& m : out) {
    if (m.pattern->id == id && m.state == FaultState::raised) r.push_back(m);
  }
  return r;
}

AnomalyEvent verdict(AnomalyKind kind, EventState state) {
  AnomalyEvent e;
  e.kind = kind;
  e.state = state;
  return e;
}

std::string scalar(const YAML::Node& map, const char* key, const std::string& fallback = "") {
  return map[key] ? map[key].as<std::string>() : fallback;
}

// Feeds one example event (pattern_examples.yaml) to the matcher.
void feed(PatternMatcher& matcher, const YAML::Node& event, std::vector<FaultMatch>& out) {
  if (const YAML::Node log = event["log"]) {
    const std::string entity = scalar(log, "entity");
    const std::string message = scalar(log, "message");
    const std::string app = scalar(log, "app");
    LogEvent e{.entity = entity,
               .timestamp_ms = static_cast<std::int64_t>(log["t"] ? log["t"].as<double>() * 1000 : 0),
               .message = message,
               .app = app,
               .hostname = entity,
               .severity = log["severity"] ? log["severity"].as<int>() : 5};
    matcher.observe(e, out);
    return;
  }
  const YAML::Node kpi = event["kpi"];
  ASSERT_TRUE(kpi) << "an event is log or kpi";
  const std::string entity = scalar(kpi, "entity");
  const std::string metric = scalar(kpi, "metric");
  const auto t_ms = static_cast<std::int64_t>(kpi["t"].as<double>() * 1000);
  std::vector<AnomalyEvent> verdicts;
  if (kpi["anomaly"]) {
    AnomalyEvent v;
    v.entity = entity;
    v.metric = metric;
    const std::string kind = scalar(kpi, "anomaly");
    bool known = false;
    for (const AnomalyKind k : {AnomalyKind::deviation, AnomalyKind::rate, AnomalyKind::level_shift,
                                AnomalyKind::burst, AnomalyKind::threshold}) {
      if (to_string(k) == kind) v.kind = k, known = true;
    }
    ASSERT_TRUE(known) << kind;
    v.state = scalar(kpi, "state", "raised") == "cleared" ? EventState::cleared : EventState::raised;
    verdicts.push_back(v);
  }
  matcher.observe(KpiObservation{entity, metric, t_ms, kpi["value"].as<double>(), verdicts}, out);
}

TEST(ShippedPatterns, LoadAndCoverEveryFaultOfTheIssue) {
  const PatternLibrary library = shipped();
  EXPECT_GE(library.size(), 20U);
  std::set<std::string> faults;
  for (const Pattern& p : library.patterns()) faults.insert(p.fault);
  for (const char* fault :
       {"link_down", "link_flapping", "crc_errors", "fec_uncorrectable", "optical_power_out_of_range",
        "module_overtemperature", "pfc_storm", "pfc_deadlock", "ecn_surge", "cnp_surge", "buffer_drops",
        "mtu_mismatch", "npu_port_down", "switch_reboot", "switch_power_fault", "switch_fan_fault",
        "routing_session_flapping", "qos_config_drift", "retransmission_burst"}) {
    EXPECT_TRUE(faults.contains(fault)) << fault;
  }
}

// A pattern that waits for an anomaly of a kind no detector runs on its metric never fires: every shipped
// pattern's `anomaly:` has a detector of that kind on its metric in the built-in configuration.
TEST(ShippedPatterns, EveryAnomalyTheyWaitForHasADefaultDetector) {
  const PatternLibrary library = shipped();
  const BrainConfig defaults = default_brain_config();
  int checked = 0;
  for (const Pattern& p : library.patterns()) {
    if (!p.match.kpi || !p.match.kpi->anomaly) continue;
    SCOPED_TRACE(p.id + " (" + p.match.kpi->metric + ")");
    ASSERT_EQ(p.match.kpi->metric.find_first_of("*?["), std::string::npos) << "a glob: name the metrics";
    const DetectorConfig* c = defaults.resolve("host0001/eth0", p.match.kpi->metric);
    ASSERT_NE(c, nullptr) << "the metric is not tracked";
    switch (*p.match.kpi->anomaly) {
      case AnomalyKind::deviation:
        EXPECT_TRUE(c->baseline.enabled);
        break;
      case AnomalyKind::rate:
        EXPECT_TRUE(c->rate.enabled);
        break;
      case AnomalyKind::level_shift:
        EXPECT_TRUE(c->level_shift.enabled);
        break;
      case AnomalyKind::burst:
        EXPECT_TRUE(c->burst.enabled);
        break;
      case AnomalyKind::threshold:
        EXPECT_TRUE(c->threshold.enabled);
        break;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5);  // port_rcv_errors, symbol_error, ECN, out_of_buffer, the two retransmissions
}

TEST(ShippedPatterns, EveryPatternMatchesItsExamplesAndNotItsCounterExamples) {
  const PatternLibrary library = shipped();
  const YAML::Node cases =
      YAML::LoadFile(std::string(HSNS_TEST_SOURCE_DIR) + "/tests/brain/pattern_examples.yaml")["cases"];
  ASSERT_TRUE(cases.IsSequence());
  std::map<std::string, int> positives;
  std::map<std::string, int> negatives;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const YAML::Node c = cases[i];
    const std::string id = scalar(c, "pattern");
    const bool raised = scalar(c, "expect") == "raised";
    SCOPED_TRACE("case " + std::to_string(i) + " (" + id + (raised ? ", raised)" : ", none)"));
    ASSERT_NE(library.find(id), nullptr) << "no shipped pattern " << id;
    std::map<std::string, std::string> links;
    if (c["peers"]) {
      for (const auto& e : c["peers"]) links[e.first.as<std::string>()] = e.second.as<std::string>();
    }
    PatternMatcher matcher(library, peers_of(links));
    std::vector<FaultMatch> out;
    for (const auto& event : c["events"]) feed(matcher, event, out);
    const auto hits = raised_of(out, id);
    if (!raised) {
      EXPECT_TRUE(hits.empty()) << id << " raised on " << hits.front().entity << ": " << hits.front().detail;
      ++negatives[id];
      continue;
    }
    ++positives[id];
    ASSERT_EQ(hits.size(), 1U) << id;
    if (c["entity"]) {
      EXPECT_EQ(hits[0].entity, scalar(c, "entity"));
    }
    if (c["root_cause"]) {
      EXPECT_EQ(hits[0].root_cause, scalar(c, "root_cause"));
    }
    EXPECT_FALSE(hits[0].detail.empty());
  }
  for (const Pattern& p : library.patterns()) {
    EXPECT_GE(positives[p.id], 1) << p.id << " has no positive example";
    EXPECT_GE(negatives[p.id], 1) << p.id << " has no negative example";
  }
}

// ---- Loader errors ----

struct LoadError {
  std::string text;
  std::string field;
  std::string reason_start;  // "file:line:column: ..."
};

class PatternLoaderErrors : public ::testing::TestWithParam<LoadError> {};

const std::string kValid =
    "patterns:\n"
    "  - id: ok\n"
    "    fault: link_down\n"
    "    severity: major\n"
    "    description: d\n"
    "    match:\n"
    "      log:\n"
    "        message: 'down'\n"
    "    root_cause: port\n"
    "    impact: i\n"
    "    action: a\n";

TEST_P(PatternLoaderErrors, NameFileLineColumnAndReason) {
  const LoadError& c = GetParam();
  const std::vector<PatternSource> files{{"a.yaml", kValid}, {"b.yaml", c.text}};
  const auto library = parse_pattern_library(files);
  ASSERT_FALSE(library);
  EXPECT_EQ(library.error().kind, Error::Kind::invalid);
  EXPECT_EQ(library.error().field(), c.field);
  ASSERT_EQ(library.error().fields.size(), 1U);
  EXPECT_EQ(library.error().fields[0].reason.substr(0, c.reason_start.size()), c.reason_start)
      << library.error().fields[0].reason;
}

std::string entry(const std::string& id, const std::string& match, const std::string& extra = "") {
  return "patterns:\n"
         "  - id: " +
         id +
         "\n"
         "    fault: f\n"
         "    severity: minor\n"
         "    description: d\n"
         "    root_cause: port\n"
         "    impact: i\n"
         "    action: a\n" +
         extra + "    match:\n" + match;
}

INSTANTIATE_TEST_SUITE_P(
    Table, PatternLoaderErrors,
    ::testing::Values(
        // bad YAML: an unclosed flow sequence
        LoadError{"patterns: [\n  - id: x\n", "", "b.yaml:2:3: illegal block entry"},
        // unknown key, in an entry and in a condition
        LoadError{entry("x", "      log: {message: a}\n", "    colour: red\n"), "patterns[0].colour",
                  "b.yaml:9:5: unknown key"},
        LoadError{entry("x", "      log: {message: a, sevrity: {max: 3}}\n"), "patterns[0].match.log.sevrity",
                  "b.yaml:10:25: unknown key"},
        // a regular expression RE2 cannot compile (a look-ahead)
        LoadError{entry("x", "      log:\n        message: 'down(?=x)'\n"), "patterns[0].match.log.message",
                  "b.yaml:11:18: bad regular expression: "},
        LoadError{entry("x", "      log: {message: a, app: 'x[', }\n"), "patterns[0].match.log.app",
                  "b.yaml:10:30: bad regular expression: missing ]"},
        // an id used in the other file
        LoadError{entry("ok", "      log: {message: a}\n"), "patterns[0].id",
                  "b.yaml:2:9: duplicate id \"ok\" (first at a.yaml:2:5)"},
        // missing required keys
        LoadError{"patterns:\n  - id: x\n    fault: f\n    severity: minor\n    description: d\n"
                  "    match: {log: {message: a}}\n    root_cause: port\n    action: a\n",
                  "patterns[0].impact", "b.yaml:2:5: missing required key \"impact\""},
        LoadError{entry("x", "      kpi: {above: 3}\n"), "patterns[0].match.kpi.metric",
                  "b.yaml:10:12: missing required key \"metric\""},
        // wrong values
        LoadError{entry("x", "      kpi: {metric: m, above: 3}\n      for: soon\n"), "patterns[0].match.for",
                  "b.yaml:11:12: must be a duration"},
        LoadError{entry("x", "      log: {message: a}\n      for: 30s\n"), "patterns[0].match.for",
                  "b.yaml:11:12: only for kpi conditions"},
        LoadError{entry("x", "      log: {message: a}\n      count: 3\n"), "patterns[0].match.within",
                  "b.yaml:11:14: count needs within"},
        LoadError{entry("x", "      log: {message: a}\n      count: 65\n      within: 1m\n"),
                  "patterns[0].match.count", "b.yaml:11:14: must be 1..64"},
        LoadError{entry("x", "      kpi: {metric: m, anomaly: spike}\n"), "patterns[0].match.kpi.anomaly",
                  "b.yaml:10:33: must be deviation"},
        LoadError{entry("x", "      kpi: {metric: m}\n"), "patterns[0].match.kpi",
                  "b.yaml:10:12: needs anomaly, above or below"},
        LoadError{entry("x", "      log: {message: a}\n      kpi: {metric: m, above: 1}\n"),
                  "patterns[0].match", "b.yaml:10:7: give either log or kpi"},
        LoadError{entry("x", "      log: {message: a}\n      scope: link\n"), "patterns[0].match.scope",
                  "b.yaml:11:14: must be entity or link_both_ends"},
        LoadError{entry("x Y", "      log: {message: a}\n"), "patterns[0].id", "b.yaml:2:9: must be 1..64"},
        LoadError{"patterns: {}\n", "patterns", "b.yaml:1:11: must be a list of patterns"}),
    [](const ::testing::TestParamInfo<LoadError>& param) { return "case" + std::to_string(param.index); });

TEST(PatternLoader, ReadsADirectoryOfYamlFilesOnly) {
  hsns::testing::TempDir dir("hsns-patterns");
  std::ofstream(dir / "a.yaml") << kValid;
  std::ofstream(dir / "notes.txt") << "not a pattern file: ignored";
  std::ofstream(dir / "empty.yaml") << "";
  const auto library = load_pattern_library(dir.string());
  ASSERT_TRUE(library) << library.error().message();
  EXPECT_EQ(library->size(), 1U);
  EXPECT_NE(library->find("ok"), nullptr);
  EXPECT_EQ(library->find("ok")->origin, (dir / "a.yaml").string() + ":2:5");
  EXPECT_EQ(load_pattern_library((dir / "missing").string()).error().kind, Error::Kind::not_found);
}

TEST(PatternLoader, AFailedReloadKeepsThePreviousLibrary) {
  hsns::testing::TempDir dir("hsns-patterns");
  std::ofstream(dir / "a.yaml") << kValid;
  PatternMatcher matcher(PatternLibrary{}, nullptr);
  ASSERT_EQ(matcher.reload(dir.string()).value_or(0), 1U);
  std::vector<FaultMatch> out;
  matcher.observe(LogEvent{.entity = "leaf01", .message = "port went down"}, out);
  ASSERT_EQ(out.size(), 1U);

  // A second file with an error: the reload fails with its file and line, the first library stays.
  std::ofstream(dir / "b.yaml") << "patterns:\n  - id: broken\n    fault: x\n    matc: {}\n";
  const auto reloaded = matcher.reload(dir.string());
  ASSERT_FALSE(reloaded);
  EXPECT_EQ(reloaded.error().fields.at(0).reason, (dir / "b.yaml").string() + ":4:5: unknown key");
  EXPECT_EQ(matcher.library().size(), 1U);
  out.clear();
  matcher.observe(LogEvent{.entity = "leaf01", .message = "port went down"}, out);
  EXPECT_EQ(out.size(), 1U);
}

// ---- Conditions ----

TEST(PatternMatcher, LogFieldsAndSeverityRangeNarrowAMatch) {
  const PatternLibrary library =
      parse_one(entry("x",
                      "      log:\n"
                      "        message: 'down'\n"
                      "        app: 'bgpd|ospfd'\n"
                      "        severity: {min: 0, max: warning}\n"
                      "        structured_data: {\"origin.software\": {equals: FRR}}\n"));
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  const LogField frr[] = {{"origin.software", "FRR"}};
  const LogField other[] = {{"origin.software", "EOS"}};
  matcher.observe(LogEvent{.entity = "r", .message = "down", .app = "bgpd", .severity = 4, .fields = frr},
                  out);
  EXPECT_EQ(out.size(), 1U);
  matcher.observe(LogEvent{.entity = "r", .message = "down", .app = "bgpd", .severity = 5, .fields = frr},
                  out);
  matcher.observe(LogEvent{.entity = "r", .message = "down", .app = "bgpd2", .severity = 4, .fields = frr},
                  out);
  matcher.observe(LogEvent{.entity = "r", .message = "down", .app = "bgpd", .severity = 4, .fields = other},
                  out);
  matcher.observe(LogEvent{.entity = "r", .message = "down", .app = "bgpd", .severity = 4}, out);
  EXPECT_EQ(out.size(), 1U);
}

TEST(PatternMatcher, FlapCountFiresAtTheNthOccurrenceWithinTheWindowAndAgainAfterNMore) {
  const PatternLibrary library = parse_one(entry(
      "flap", "      log: {message: 'Port (?P<ifname>\\w+) down'}\n      count: 3\n      within: 60s\n"));
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  const auto line = [&](std::int64_t t_s) {
    matcher.observe(LogEvent{.entity = "leaf", .timestamp_ms = t_s * 1000, .message = "Port e1 down"}, out);
  };
  line(0);
  line(50);
  line(100);  // 0 fell out of the window: 50 and 100 only
  EXPECT_TRUE(out.empty());
  line(105);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].entity, "leaf/e1");
  EXPECT_EQ(out[0].occurrences, 3U);
  EXPECT_EQ(out[0].first_ms, 50'000);
  EXPECT_EQ(out[0].captures, (std::vector<std::pair<std::string, std::string>>{{"ifname", "e1"}}));
  line(110);
  line(115);
  EXPECT_EQ(out.size(), 1U);
  line(120);
  EXPECT_EQ(out.size(), 2U);
}

TEST(PatternMatcher, LinesOfOneEventWithinTwoSecondsCountOnce) {
  // A device writes several lines for one port going down (Huawei: IF_STATE, linkDown_active, LINK_STATE).
  const PatternLibrary library = parse_one(entry(
      "flap", "      log: {message: 'Port (?P<ifname>\\w+) down'}\n      count: 3\n      within: 60s\n"));
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  const auto line = [&](std::int64_t t_ms) {
    matcher.observe(LogEvent{.entity = "leaf", .timestamp_ms = t_ms, .message = "Port e1 down"}, out);
  };
  for (std::int64_t t : {0, 20, 50, 1900}) line(t);  // one event
  EXPECT_TRUE(out.empty());
  line(2000);  // two seconds after the first counted line: the second event
  line(2100);
  EXPECT_TRUE(out.empty());
  line(30'000);  // the third
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].first_ms, 0);
}

TEST(PatternMatcher, KpiForDurationRaisesOnceAndClearsWhenTheConditionEnds) {
  const PatternLibrary library =
      parse_one(entry("rx", "      kpi: {metric: rx_power_dbm, below: -10}\n      for: 30s\n"));
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  const auto obs = [&](std::int64_t t_s, double v) {
    matcher.observe(KpiObservation{"h/mlx5_0/1", "rx_power_dbm", t_s * 1000, v, {}}, out);
  };
  obs(0, -12);
  obs(20, -12);
  EXPECT_TRUE(out.empty());
  obs(30, -12);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].state, FaultState::raised);
  EXPECT_EQ(out[0].first_ms, 0);
  EXPECT_EQ(out[0].metric, "rx_power_dbm");
  obs(40, -13);
  EXPECT_EQ(out.size(), 1U);
  EXPECT_EQ(matcher.active_faults(), 1U);
  obs(50, -5);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1].state, FaultState::cleared);
  EXPECT_EQ(matcher.active_faults(), 0U);
}

TEST(PatternMatcher, AnomalyConditionFollowsTheDetectorVerdictsAndGlobsMatchMetrics) {
  const PatternLibrary library =
      parse_one(entry("pfc", "      kpi: {metric: 'rx_prio[0-7]_pause', anomaly: rate}\n"));
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  const AnomalyEvent raised = verdict(AnomalyKind::rate, EventState::raised);
  const AnomalyEvent cleared = verdict(AnomalyKind::rate, EventState::cleared);
  const AnomalyEvent other = verdict(AnomalyKind::burst, EventState::raised);
  matcher.observe(KpiObservation{"p", "rx_prio9_pause", 0, 1, std::span(&raised, 1)}, out);
  matcher.observe(KpiObservation{"p", "rx_prio3_pause", 0, 1, std::span(&other, 1)}, out);
  EXPECT_TRUE(out.empty());
  matcher.observe(KpiObservation{"p", "rx_prio3_pause", 1000, 1, std::span(&raised, 1)}, out);
  matcher.observe(KpiObservation{"p", "rx_prio3_pause", 2000, 1, {}}, out);  // still raised
  ASSERT_EQ(out.size(), 1U);
  matcher.observe(KpiObservation{"p", "rx_prio3_pause", 3000, 1, std::span(&cleared, 1)}, out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1].state, FaultState::cleared);
}

TEST(PatternMatcher, BothEndsRaisesOnceForTheLinkAndClearsOnceWhenEitherEndRecovers) {
  std::string text = entry("both",
                           "      kpi: {metric: symbol_error, above: 1}\n      scope: link_both_ends\n"
                           "      both_ends_within: 60s\n",
                           "    clears_on:\n      kpi: {metric: symbol_error, below: 0.5}\n");
  text.replace(text.find("root_cause: port"), 16, "root_cause: link");
  const PatternLibrary library = parse_one(text);
  int lookups = 0;
  const PeerResolver table = peers_of({{"a/p1", "b/p9"}});
  PatternMatcher matcher(library, [&](std::string_view e) {
    ++lookups;
    return table(e);
  });
  std::vector<FaultMatch> out;
  const auto obs = [&](const char* entity, std::int64_t t_s, double v) {
    matcher.observe(KpiObservation{entity, "symbol_error", t_s * 1000, v, {}}, out);
  };
  obs("a/p1", 0, 5);
  EXPECT_TRUE(out.empty());
  obs("c/p2", 1, 5);  // no peer known: never raised
  EXPECT_EQ(matcher.stats().unpaired, 1U);
  obs("b/p9", 90, 5);  // a/p1's condition held 90 s ago: outside the window
  EXPECT_TRUE(out.empty());
  obs("a/p1", 100, 5);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].entity, "a/p1");
  EXPECT_EQ(out[0].peer, "b/p9");
  EXPECT_EQ(out[0].root_cause, "a/p1<->b/p9");
  EXPECT_EQ(matcher.active_faults(), 2U);  // both ends carry the one fault
  obs("b/p9", 110, 5);
  obs("a/p1", 120, 5);
  EXPECT_EQ(out.size(), 1U);
  obs("b/p9", 130, 0);  // clears_on on one end
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1].state, FaultState::cleared);
  EXPECT_EQ(out[1].root_cause, "a/p1<->b/p9");
  EXPECT_EQ(matcher.active_faults(), 0U);
  obs("a/p1", 140, 0);
  EXPECT_EQ(out.size(), 2U);
  EXPECT_GT(lookups, 0);
}

TEST(PatternMatcher, LogClearsOnEndsARaisedFaultOfTheSamePort) {
  const PatternLibrary library = shipped();
  PatternMatcher matcher(library, nullptr);
  std::vector<FaultMatch> out;
  matcher.observe(LogEvent{.entity = "leaf01", .message = "Port Ethernet4 oper state set from up to down"},
                  out);
  matcher.observe(LogEvent{.entity = "leaf01", .message = "Port Ethernet4 oper state set from up to down"},
                  out);
  ASSERT_EQ(raised_of(out, "link-down-sonic").size(), 1U);  // raised once while active
  matcher.observe(LogEvent{.entity = "leaf01", .message = "Port Ethernet8 oper state set from down to up"},
                  out);
  EXPECT_EQ(matcher.stats().cleared, 0U);  // another port
  matcher.observe(LogEvent{.entity = "leaf01", .message = "Port Ethernet4 oper state set from down to up"},
                  out);
  ASSERT_EQ(out.back().state, FaultState::cleared);
  EXPECT_EQ(out.back().pattern->id, "link-down-sonic");
  EXPECT_EQ(out.back().entity, "leaf01/Ethernet4");
}

TEST(PatternMatcher, AnEvictedStateReportsItsRaisedFaultCleared) {
  const PatternLibrary library = parse_one(entry("hot", "      kpi: {metric: t, above: 75}\n"));
  PatternMatcher matcher(library, nullptr, {.max_states = 1});
  std::vector<FaultMatch> out;
  matcher.observe(KpiObservation{"a", "t", 0, 80, {}}, out);
  ASSERT_EQ(out.size(), 1U);
  matcher.observe(KpiObservation{"b", "t", 1000, 20, {}}, out);  // holds nothing: no state, no eviction
  EXPECT_EQ(out.size(), 1U);
  matcher.observe(KpiObservation{"b", "t", 2000, 90, {}}, out);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(out[1].state, FaultState::cleared);
  EXPECT_EQ(out[1].entity, "a");
  EXPECT_EQ(out[1].detail, "state evicted");
  EXPECT_EQ(out[2].state, FaultState::raised);
  EXPECT_EQ(out[2].entity, "b");
  EXPECT_EQ(matcher.state_count(), 1U);
  EXPECT_EQ(matcher.stats().evicted, 1U);
}

TEST(PatternMatcher, InvalidInputIsCountedAndIgnored) {
  PatternMatcher matcher(shipped(), nullptr);
  std::vector<FaultMatch> out;
  matcher.observe(LogEvent{.entity = "", .message = "Port Ethernet4 oper state set from up to down"}, out);
  matcher.observe(KpiObservation{std::string(600, 'x'), "rx_power_dbm", 0, -20, {}}, out);
  matcher.observe(KpiObservation{"h", "rx_power_dbm", 0, std::nan(""), {}}, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(matcher.stats().invalid, 3U);
  EXPECT_EQ(matcher.state_count(), 0U);
}

}  // namespace
}  // namespace hsns::brain
