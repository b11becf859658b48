// Brain scenarios (docs/scenarios.md): a directory holding a topology, registered jobs, timed streams of
// KPI samples, syslog lines and host reports, and expect.yaml; `hsnsctl scenario run` replays one against a
// real aggregator and `hsnsctl scenario judge` compares the incidents with the expectation.
//
// Contract:
// - load_scenario(dir) reads and checks every file of the directory (docs/scenarios.md, "Files") and throws
//   a usage error naming "<file>:<line>: <what>" for the first problem; nothing is sent before the whole
//   scenario has been read. Streams are ordered by their send offset (`at_ms`), file order kept for ties.
// - parse_expectation(text, source) reads expect.yaml alone (unknown keys refused).
// - A syslog line's `source` must be a loopback address (127.0.0.0/8 or ::1): the runner binds it, one
//   connection (or UDP socket) per source, so that the receiver sees a device's management address.
// - render_syslog_line(line, ts_ms) replaces every "{ts}" of the line by the RFC 3339 UTC time of ts_ms
//   with milliseconds (both of the aggregator's syslog parsers accept it).
// - canonical_entity(): one spelling per entity, so the judge compares names as the brain may write them:
//   a link given as "link:<a>|<b>" or "<a><-><b>" becomes "link:<lower>|<higher>"; anything else is kept.
// - judge(expectation, incidents, alarms_total) is pure: it compares the incidents (GET
//   /api/v1/incidents items) with the expectation and answers the verdict JSON described in
//   docs/scenarios.md ("Verdict"). Malformed incident members count as not matching, never throw.
// Values and pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hsnsctl {

struct ExpectedIncident {
  std::vector<std::string> root_causes;  // any of these entities (equivalent names of one fault)
  std::vector<std::string> fault_types;  // any of these; empty: any fault type
  std::vector<std::string> affected_jobs;
  std::string state;  // "open" or "resolved": the incident's state at the end of the run; "" = either
};

struct Expectation {
  std::string scenario_class = "unclassified";
  std::string description;
  std::vector<ExpectedIncident> incidents;
  std::vector<std::string> clean;
  std::optional<double> min_compression;
};

struct ScenarioKpi {
  std::int64_t at_ms = 0;  // send offset
  std::int64_t ts_ms = 0;  // the sample's own offset (at_ms unless a late sample says otherwise)
  std::string entity;
  std::string metric;
  double value = 0;
};

struct ScenarioSyslog {
  std::int64_t at_ms = 0;
  std::string line;
  std::string source;  // the sender's address (a loopback address the runner binds); "" = the default
};

// A job event of jobs.jsonl: a schedule request registered at at_ms, or the release of a job.
struct ScenarioJobEvent {
  std::int64_t at_ms = 0;
  nlohmann::json schedule;  // POST /api/v1/schedule body; null for a release
  std::string release;      // the job's name for DELETE /api/v1/jobs/{name}
};

struct ScenarioReport {
  std::int64_t at_ms = 0;
  std::string host;
  nlohmann::json report;  // "ts_ms" members are offsets, rewritten to base + offset when sent
};

enum class TopologySource { none, import_json, import_yaml, generate };

struct Scenario {
  std::filesystem::path dir;
  std::string name;  // the directory's name
  TopologySource topology_source = TopologySource::none;
  std::string topology_body;                 // the file as it is (JSON or YAML)
  std::vector<nlohmann::json> jobs;          // POST /api/v1/schedule bodies (jobs.json, before offset 0)
  std::vector<ScenarioJobEvent> job_events;  // jobs.jsonl
  std::vector<ScenarioKpi> kpis;
  std::vector<ScenarioSyslog> syslog;
  std::vector<ScenarioReport> reports;
  Expectation expect;
  std::int64_t duration_ms = 0;  // the largest offset of any stream
};

Scenario load_scenario(const std::filesystem::path& dir);
Expectation parse_expectation(const std::string& text, const std::string& source);

std::string render_syslog_line(std::string_view line, std::int64_t ts_ms);
std::string format_time_ms(std::int64_t ms);  // RFC 3339 UTC with milliseconds

std::string canonical_entity(std::string_view entity);

nlohmann::json judge(const Expectation& expect, const nlohmann::json& incidents,
                     std::optional<std::int64_t> alarms_total);

}  // namespace hsnsctl
