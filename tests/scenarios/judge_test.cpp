// The scenario judge and reader (cli/scenario.h) without a server: verdicts on canned incident JSON,
// expect.yaml and stream errors naming file and line, the committed suite loading, covering every shipped
// pattern and matching its generator's output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "output.h"
#include "scenario.h"
#include "support/aggregator_process.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

using hsnsctl::canonical_entity;
using hsnsctl::Expectation;
using hsnsctl::judge;
using hsnsctl::parse_expectation;
using nlohmann::json;
namespace fs = std::filesystem;

json incident(const std::string& id, const std::vector<std::pair<std::string, std::string>>& causes,
              const std::vector<std::string>& jobs = {}) {
  json rc = json::array();
  int rank = 0;
  for (auto& [entity, type] : causes) {
    rc.push_back(
        {{"rank", ++rank}, {"entity", entity}, {"kind", "port"}, {"fault_type", type}, {"score", 0.5}});
  }
  json aj = json::array();
  for (auto& j : jobs) aj.push_back({{"job_id", j}, {"name", j}, {"ranks", {0, 1}}});
  return {
      {"id", id}, {"state", "open"}, {"root_causes", rc}, {"affected_jobs", aj}, {"alarms", json::array()}};
}

Expectation expect_of(const std::string& yaml) {
  return parse_expectation(yaml, "expect.yaml");
}

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const hsnsctl::CliError& e) {
    EXPECT_EQ(e.exit_code(), hsnsctl::kExitUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no usage error";
  return "";
}

TEST(ScenarioJudge, TopOneHitWithExactJobsPasses) {
  auto e = expect_of(
      "class: job\nincidents:\n  - root_cause: leaf00/Ethernet4\n    fault_type: link_down\n"
      "    affected_jobs: [train-a]\nclean: [spine00]\n");
  json incidents = json::array(
      {incident("i1", {{"leaf00/Ethernet4", "link_down"}, {"leaf00", "switch_reboot"}}, {"train-a"})});
  auto v = judge(e, incidents, 7);
  EXPECT_TRUE(v["pass"]) << v.dump(2);
  EXPECT_TRUE(v["top1"]);
  EXPECT_TRUE(v["top3"]);
  EXPECT_TRUE(v["jobs_exact"]);
  EXPECT_EQ(v["class"], "job");
  EXPECT_EQ(v["expected"][0]["rank"], 1);
  EXPECT_EQ(v["expected"][0]["incident"], "i1");
  EXPECT_DOUBLE_EQ(v["compression"].get<double>(), 7.0);
  EXPECT_TRUE(v["compression_ok"].is_null());
}

TEST(ScenarioJudge, SecondRankIsTopThreeOnly) {
  auto e = expect_of("incidents:\n  - {root_cause: spine01, fault_type: switch_reboot}\n");
  json incidents =
      json::array({incident("i1", {{"leaf03", "routing_session_down"}, {"spine01", "switch_reboot"}})});
  auto v = judge(e, incidents, std::nullopt);
  EXPECT_FALSE(v["top1"]);
  EXPECT_TRUE(v["top3"]);
  EXPECT_FALSE(v["pass"]);
  EXPECT_EQ(v["expected"][0]["rank"], 2);
  EXPECT_TRUE(v["alarms"].is_null());
  EXPECT_TRUE(v["compression"].is_null());
}

TEST(ScenarioJudge, FourthRankAndWrongFaultTypeMiss) {
  auto e = expect_of("incidents:\n  - {root_cause: a/b, fault_type: crc_errors}\n");
  auto v =
      judge(e, json::array({incident("i1", {{"x", "t"}, {"y", "t"}, {"z", "t"}, {"a/b", "crc_errors"}})}), 1);
  EXPECT_FALSE(v["top3"]);
  EXPECT_EQ(v["expected"][0]["rank"], 4);
  v = judge(e, json::array({incident("i1", {{"a/b", "link_down"}})}), 1);
  EXPECT_TRUE(v["expected"][0]["rank"].is_null());
  EXPECT_FALSE(v["top3"]);
  EXPECT_FALSE(v["jobs_exact"]);
  // The incident blames something the expectation does not name: a false incident.
  EXPECT_EQ(v["false_incidents"].size(), 1u);
}

TEST(ScenarioJudge, LinkSpellingsAndAlternativesMatch) {
  EXPECT_EQ(canonical_entity("leaf00/Ethernet4<->host0002/eth0"), "link:host0002/eth0|leaf00/Ethernet4");
  EXPECT_EQ(canonical_entity("link:leaf00/Ethernet4|host0002/eth0"), "link:host0002/eth0|leaf00/Ethernet4");
  EXPECT_EQ(canonical_entity("leaf00/Ethernet4"), "leaf00/Ethernet4");
  EXPECT_EQ(canonical_entity("link:broken"), "link:broken");
  auto e = expect_of(
      "incidents:\n  - root_cause: [leaf00/Ethernet4, \"link:host0002/eth0|leaf00/Ethernet4\"]\n"
      "    fault_type: [link_down, link_flapping]\n");
  EXPECT_TRUE(judge(e, json::array({incident("i", {{"host0002/eth0<->leaf00/Ethernet4", "link_flapping"}})}),
                    2)["top1"]);
  EXPECT_TRUE(judge(e, json::array({incident("i", {{"leaf00/Ethernet4", "link_down"}})}), 2)["top1"]);
  // No fault type given: any fault type on the entity is right.
  auto any = expect_of("incidents:\n  - root_cause: spine03\n");
  EXPECT_TRUE(judge(any, json::array({incident("i", {{"spine03", "link_down"}})}), 20)["top1"]);
}

TEST(ScenarioJudge, MergedFaultsCannotBothBeTopOne) {
  auto e = expect_of(
      "incidents:\n  - {root_cause: leaf00/Ethernet4, fault_type: link_down}\n"
      "  - {root_cause: spine01, fault_type: switch_power_fault}\n");
  // One incident naming both: the second expectation has no incident of its own.
  auto merged = judge(
      e, json::array({incident("i", {{"leaf00/Ethernet4", "link_down"}, {"spine01", "switch_power_fault"}})}),
      3);
  EXPECT_FALSE(merged["top1"]);
  EXPECT_FALSE(merged["top3"]);
  // Two incidents in any order: both top-1.
  auto split = judge(e,
                     json::array({incident("b", {{"spine01", "switch_power_fault"}}),
                                  incident("a", {{"leaf00/Ethernet4", "link_down"}})}),
                     3);
  EXPECT_TRUE(split["top1"]) << split.dump(2);
  EXPECT_EQ(split["expected"][0]["incident"], "a");
  EXPECT_EQ(split["expected"][1]["incident"], "b");
  EXPECT_DOUBLE_EQ(split["compression"].get<double>(), 1.5);
}

TEST(ScenarioJudge, JobsMustMatchExactly) {
  auto e = expect_of("incidents:\n  - {root_cause: h/eth0, fault_type: crc_errors, affected_jobs: [a]}\n");
  EXPECT_FALSE(
      judge(e, json::array({incident("i", {{"h/eth0", "crc_errors"}}, {"a", "b"})}), 1)["jobs_exact"]);
  EXPECT_FALSE(judge(e, json::array({incident("i", {{"h/eth0", "crc_errors"}})}), 1)["jobs_exact"]);
  auto none = expect_of("incidents:\n  - {root_cause: h/eth0, fault_type: crc_errors}\n");
  EXPECT_TRUE(judge(none, json::array({incident("i", {{"h/eth0", "crc_errors"}})}), 1)["jobs_exact"]);
  EXPECT_FALSE(judge(none, json::array({incident("i", {{"h/eth0", "crc_errors"}}, {"x"})}), 1)["pass"]);
}

TEST(ScenarioJudge, CleanEntitiesAndHealthyScenarios) {
  auto e = expect_of(
      "incidents:\n  - {root_cause: leaf00/Ethernet4, fault_type: link_down}\n"
      "clean: [host0007, leaf01/Ethernet8]\n");
  // The clean host's port is blamed by an extra incident: dirty, and a false incident.
  auto v = judge(e,
                 json::array({incident("i1", {{"leaf00/Ethernet4", "link_down"}}),
                              incident("i2", {{"host0007/eth0/module", "module_overtemperature"}})}),
                 4);
  EXPECT_FALSE(v["clean"]);
  EXPECT_FALSE(v["top1"]);
  EXPECT_EQ(v["dirty"][0]["entity"], "host0007");
  EXPECT_EQ(v["dirty"][0]["incident"], "i2");
  // A link with one end on a clean port.
  v = judge(e,
            json::array({incident("i1", {{"leaf00/Ethernet4", "link_down"}}),
                         incident("i2", {{"link:leaf01/Ethernet8|spine00/Ethernet0", "pfc_storm"}})}),
            4);
  EXPECT_FALSE(v["clean"]);
  // "host00070" is not under "host0007".
  v = judge(e,
            json::array({incident("i1", {{"leaf00/Ethernet4", "link_down"}}),
                         incident("i2", {{"host00070/eth0", "crc_errors"}})}),
            4);
  EXPECT_TRUE(v["clean"]);
  EXPECT_FALSE(v["pass"]);  // still a false incident

  auto healthy = expect_of("class: healthy\nincidents: []\n");
  auto quiet = judge(healthy, json::array(), 0);
  EXPECT_TRUE(quiet["pass"]);
  EXPECT_TRUE(quiet["top1"]);
  EXPECT_TRUE(quiet["compression"].is_null());
  auto noisy = judge(healthy, json::array({incident("x", {{"host0001/eth0", "crc_errors"}})}), 1);
  EXPECT_FALSE(noisy["pass"]);
  EXPECT_FALSE(noisy["top1"]);
  EXPECT_EQ(noisy["false_incidents"][0]["top"]["entity"], "host0001/eth0");
}

TEST(ScenarioJudge, AnExpectedStateMustHoldAndAModuleNamesItsPort) {
  auto e = expect_of(
      "incidents:\n  - root_cause: leaf00/Ethernet4\n    fault_type: module_overtemperature\n"
      "    state: open\n");
  json open_incident = incident("i1", {{"leaf00/Ethernet4/module", "module_overtemperature"}});
  auto v = judge(e, json::array({open_incident}), 1);
  EXPECT_TRUE(v["pass"]) << v.dump(2);
  EXPECT_EQ(v["expected"][0]["rank"], 1);  // the optic in the port names the port
  EXPECT_EQ(v["expected"][0]["state_actual"], "open");
  json resolved = open_incident;
  resolved["state"] = "resolved";
  v = judge(e, json::array({resolved}), 1);
  EXPECT_TRUE(v["top1"]);
  EXPECT_FALSE(v["state"]);
  EXPECT_FALSE(v["pass"]);
  EXPECT_NE(usage_message([] {
              expect_of("incidents:\n  - root_cause: x\n    state: closed\n");
            }).find("incidents[0].state must be open or resolved"),
            std::string::npos);
  // A module is not a different port's name.
  auto other = expect_of("incidents:\n  - root_cause: leaf00/Ethernet8\n");
  EXPECT_FALSE(judge(other, json::array({open_incident}), 1)["top3"]);
}

TEST(ScenarioJudge, CompressionBound) {
  auto e =
      expect_of("incidents:\n  - {root_cause: spine01, fault_type: switch_reboot}\nmin_compression: 10\n");
  json one = json::array({incident("i", {{"spine01", "switch_reboot"}})});
  EXPECT_TRUE(judge(e, one, 33)["compression_ok"]);
  EXPECT_TRUE(judge(e, one, 33)["pass"]);
  auto low = judge(e, one, 9);
  EXPECT_FALSE(low["compression_ok"]);
  EXPECT_FALSE(low["pass"]);
  EXPECT_FALSE(judge(e, one, std::nullopt)["compression_ok"]);  // no alarm API: unproven
}

TEST(ScenarioJudge, MalformedIncidentsNeverThrow) {
  auto e = expect_of("incidents:\n  - {root_cause: a, fault_type: b}\n");
  json junk = json::array({42, json::object(), json{{"root_causes", "x"}}, json{{"root_causes", {1, "y"}}},
                           json{{"root_causes", {{{"entity", 5}}}}, {"affected_jobs", 3}}});
  auto v = judge(e, junk, 1);
  EXPECT_FALSE(v["top3"]);
  EXPECT_EQ(v["false_incidents"].size(), 5u);
  EXPECT_FALSE(judge(e, json("not a list"), 1)["top1"]);
}

TEST(ScenarioExpect, ErrorsNameFileAndLine) {
  EXPECT_NE(usage_message([] {
              expect_of("class: x\nincidnets: []\n");
            }).find("expect.yaml:2: unknown key incidnets"),
            std::string::npos);
  EXPECT_NE(
      usage_message([] { expect_of("incidents:\n  - {fault_type: x}\n"); }).find("root_cause is required"),
      std::string::npos);
  EXPECT_NE(usage_message([] {
              expect_of("incidents:\n  - {root_cause: a, colour: red}\n");
            }).find("unknown key incidents[0].colour"),
            std::string::npos);
  EXPECT_NE(usage_message([] { expect_of("min_compression: -3\n"); }).find("positive"), std::string::npos);
  EXPECT_NE(usage_message([] { expect_of("incidents: [\n"); }).find("expect.yaml:"), std::string::npos);
  EXPECT_NE(usage_message([] { expect_of("clean: {a: b}\n"); }).find("clean must be"), std::string::npos);
}

TEST(ScenarioReader, StreamsAreReadOrderedAndChecked) {
  TempDir dir;
  const auto d = dir.path() / "my-scenario";
  fs::create_directories(d);
  std::ofstream(d / "generate.json") << R"({"hosts": 4})";
  std::ofstream(d / "jobs.json") << R"([{"job_name": "a", "hosts": ["host001"]}])";
  std::ofstream(d / "kpis.jsonl")
      << "# comment\n"
      << R"({"at_ms": 5000, "entity": "h/eth0", "metric": "m", "value": 2})"
      << "\n\n"
      << R"({"at_ms": 1000, "entity": "h/eth0", "metric": "m", "value": 1.5})"
      << "\n"
      << R"({"at_ms": 9000, "ts_ms": 2000, "entity": "h/eth0", "metric": "m", "value": 3})"
      << "\n";
  std::ofstream(d / "syslog.jsonl") << R"({"at_ms": 7000, "line": "<13>1 {ts} leaf00 app - - - hi"})"
                                    << "\n";
  std::ofstream(d / "expect.yaml") << "class: demo\nincidents: []\n";
  auto s = hsnsctl::load_scenario(d);
  EXPECT_EQ(s.name, "my-scenario");
  EXPECT_EQ(s.topology_source, hsnsctl::TopologySource::generate);
  ASSERT_EQ(s.kpis.size(), 3u);
  EXPECT_EQ(s.kpis[0].at_ms, 1000);
  EXPECT_EQ(s.kpis[0].value, 1.5);
  EXPECT_EQ(s.kpis[2].ts_ms, 2000);
  EXPECT_EQ(s.kpis[1].ts_ms, 5000);
  EXPECT_EQ(s.duration_ms, 9000);
  EXPECT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.expect.scenario_class, "demo");
  EXPECT_EQ(hsnsctl::render_syslog_line(s.syslog[0].line, 1764651276250),
            "<13>1 2025-12-02T04:54:36.250Z leaf00 app - - - hi");

  std::ofstream(d / "kpis.jsonl") << R"({"at_ms": 1, "entity": "e", "metric": "m", "value": 1})"
                                  << "\n"
                                  << R"({"at_ms": -5, "entity": "e", "metric": "m", "value": 1})"
                                  << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("kpis.jsonl:2: \"at_ms\""),
            std::string::npos);
  std::ofstream(d / "kpis.jsonl") << R"({"at_ms": 1, "entity": "e", "metric": "m", "value": "x"})"
                                  << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("kpis.jsonl:1: \"value\""),
            std::string::npos);
  std::ofstream(d / "kpis.jsonl") << R"({"at_ms": 1, "entity": "e", "metric": "m", "value": 1, "vaule": 2})"
                                  << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("unknown key \"vaule\""),
            std::string::npos);
  std::ofstream(d / "kpis.jsonl") << "{not json\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("kpis.jsonl:1: not a JSON object"),
            std::string::npos);
  fs::remove(d / "kpis.jsonl");
  std::ofstream(d / "topology.json") << "{}";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("give one of"), std::string::npos);
  fs::remove(d / "topology.json");
  fs::remove(d / "expect.yaml");
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("expect.yaml is missing"),
            std::string::npos);
}

TEST(ScenarioReader, JobEventsAndSyslogSourcesAreReadAndChecked) {
  TempDir dir;
  const auto d = dir.path() / "timed-jobs";
  fs::create_directories(d);
  std::ofstream(d / "generate.json") << R"({"hosts": 4})";
  std::ofstream(d / "jobs.jsonl") << R"({"at_ms": 9000, "release": "a"})"
                                  << "\n"
                                  << R"({"at_ms": 1000, "schedule": {"job_name": "a", "hosts": ["host001"]}})"
                                  << "\n";
  std::ofstream(d / "syslog.jsonl")
      << R"({"at_ms": 7000, "line": "<189>: 2026 Dec  7 10:00:00 UTC: %ETHPORT-5-IF_UP: x", "source": "127.20.0.5"})"
      << "\n";
  std::ofstream(d / "expect.yaml") << "incidents: []\n";
  auto s = hsnsctl::load_scenario(d);
  ASSERT_EQ(s.job_events.size(), 2u);
  EXPECT_EQ(s.job_events[0].at_ms, 1000);
  EXPECT_EQ(s.job_events[0].schedule["job_name"], "a");
  EXPECT_EQ(s.job_events[1].release, "a");
  EXPECT_EQ(s.duration_ms, 9000);
  EXPECT_EQ(s.syslog[0].source, "127.20.0.5");

  std::ofstream(d / "jobs.jsonl") << R"({"at_ms": 1, "schedule": {}, "release": "a"})"
                                  << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("jobs.jsonl:1: give one of"),
            std::string::npos);
  fs::remove(d / "jobs.jsonl");
  // Scenarios send only from loopback: a source elsewhere is refused before anything is sent.
  std::ofstream(d / "syslog.jsonl") << R"({"at_ms": 1, "line": "x", "source": "192.0.2.1"})"
                                    << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("must be a loopback address"),
            std::string::npos);
  std::ofstream(d / "syslog.jsonl") << R"({"at_ms": 1, "line": "x", "source": "leaf01"})"
                                    << "\n";
  EXPECT_NE(usage_message([&] { hsnsctl::load_scenario(d); }).find("must be an IP address"),
            std::string::npos);
}

// The pattern ids of the shipped library// The pattern ids of the shipped library (patterns/*.yaml, "  - id:
// <id>" lines).
std::set<std::string> shipped_pattern_ids() {
  std::set<std::string> ids;
  const std::regex id_line(R"(^  - id: ([A-Za-z0-9._-]+)\s*$)");
  for (const auto& f : fs::directory_iterator(source_path("patterns"))) {
    if (f.path().extension() != ".yaml") continue;
    std::ifstream in(f.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_match(line, m, id_line)) ids.insert(m[1]);
    }
  }
  return ids;
}

TEST(ScenarioSuite, CommittedScenariosLoadAndCoverEveryPattern) {
  const auto suite = source_path("tests/scenarios/suite");
  std::map<std::string, int> per_class;
  std::set<std::string> names;
  for (const auto& d : fs::directory_iterator(suite)) {
    if (!d.is_directory()) continue;
    auto s = hsnsctl::load_scenario(d.path());
    ++per_class[s.expect.scenario_class];
    names.insert(s.name);
    EXPECT_TRUE(s.topology_source != hsnsctl::TopologySource::none) << s.name;
    EXPECT_FALSE(s.kpis.empty() && s.syslog.empty()) << s.name << " sends nothing";
    if (s.expect.scenario_class == "storm") {
      EXPECT_TRUE(s.expect.min_compression.has_value()) << s.name;
    }
  }
  const auto ids = shipped_pattern_ids();
  EXPECT_GE(ids.size(), 39u);
  for (const auto& id : ids) EXPECT_TRUE(names.contains("pattern-" + id)) << "no scenario for pattern " << id;
  for (const char* cls : {"pattern", "multi", "storm", "far_end", "noise", "job"}) {
    EXPECT_GT(per_class[cls], 0) << cls;
  }
  EXPECT_GE(names.size(), 60u);
}

// The committed files are what the generator writes (nobody edited them by hand, the generator did not
// drift), and the generator is deterministic.
TEST(ScenarioSuite, CommittedFilesMatchTheGenerator) {
  TempDir out;
  const auto cmd = "python3 " + source_path("tests/scenarios/generate.py").string() + " " +
                   out.path().string() + " --set small 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto suite = source_path("tests/scenarios/suite");
  std::size_t files = 0;
  for (const auto& f : fs::recursive_directory_iterator(out.path())) {
    if (!f.is_regular_file()) continue;
    const auto rel = fs::relative(f.path(), out.path());
    std::ifstream a(f.path());
    std::ifstream b(suite / rel);
    ASSERT_TRUE(b.good())
        << rel << " is not committed (run tests/scenarios/generate.py tests/scenarios/suite --set small)";
    std::stringstream ta;
    std::stringstream tb;
    ta << a.rdbuf();
    tb << b.rdbuf();
    EXPECT_TRUE(ta.str() == tb.str()) << rel << " differs from the generator's output";
    ++files;
  }
  std::size_t committed = 0;
  for (const auto& f : fs::recursive_directory_iterator(suite)) committed += f.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, committed) << "tests/scenarios/suite holds files the generator does not write";
}

}  // namespace
}  // namespace hsns::testing
