// The pure half of the scenarios (scenario.h): expect.yaml, entity spellings, time formatting and the judge.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <set>

#include "output.h"
#include "scenario.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& source, const YAML::Node& node, const std::string& what) {
  const auto mark = node.Mark();
  std::string where = source;
  if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1);
  throw usage_error(where + ": " + what);
}

std::string scalar(const std::string& source, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar() || node.Scalar().empty()) bad(source, node, key + " must be a non-empty string");
  return node.Scalar();
}

// A string or a list of strings.
std::vector<std::string> one_or_many(const std::string& source, const YAML::Node& node,
                                     const std::string& key, bool allow_empty) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(scalar(source, node, key));
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      out.push_back(scalar(source, node[i], key + "[" + std::to_string(i) + "]"));
    }
  } else if (!node.IsNull()) {
    bad(source, node, key + " must be a string or a list of strings");
  }
  if (out.empty() && !allow_empty) bad(source, node, key + " must name at least one value");
  return out;
}

ExpectedIncident parse_incident(const std::string& source, const YAML::Node& node, const std::string& key) {
  if (!node.IsMap()) bad(source, node, key + " must be a mapping");
  ExpectedIncident e;
  bool has_root = false;
  for (const auto& kv : node) {
    const auto name = kv.first.as<std::string>();
    const auto field = std::string(key).append(".").append(name);
    if (name == "root_cause") {
      e.root_causes = one_or_many(source, kv.second, field, false);
      has_root = true;
    } else if (name == "fault_type") {
      e.fault_types = one_or_many(source, kv.second, field, false);
    } else if (name == "affected_jobs") {
      e.affected_jobs = one_or_many(source, kv.second, field, true);
    } else if (name == "state") {
      e.state = scalar(source, kv.second, field);
      if (e.state != "open" && e.state != "resolved")
        bad(source, kv.second, field + " must be open or resolved");
    } else {
      bad(source, kv.first, "unknown key " + field);
    }
  }
  if (!has_root) bad(source, node, key + ".root_cause is required");
  return e;
}

// An entity's spelling as the brain's writers may differ: links as "link:a|b" or "a<->b", ends in any order.
std::optional<std::pair<std::string, std::string>> link_ends(std::string_view entity) {
  std::string_view a;
  std::string_view b;
  if (entity.starts_with("link:")) {
    auto rest = entity.substr(5);
    auto bar = rest.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    a = rest.substr(0, bar);
    b = rest.substr(bar + 1);
  } else if (auto arrow = entity.find("<->"); arrow != std::string_view::npos) {
    a = entity.substr(0, arrow);
    b = entity.substr(arrow + 3);
  } else {
    return std::nullopt;
  }
  if (a.empty() || b.empty()) return std::nullopt;
  if (b < a) std::swap(a, b);
  return std::pair{std::string(a), std::string(b)};
}

bool under(const std::string& entity, const std::string& clean) {
  return entity == clean ||
         (entity.size() > clean.size() && entity.starts_with(clean) && entity[clean.size()] == '/');
}

// Does an (already canonical) root-cause entity touch the clean entity?
bool touches(const std::string& entity, const std::string& clean) {
  if (auto ends = link_ends(entity)) return under(ends->first, clean) || under(ends->second, clean);
  return under(entity, clean);
}

std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::set<std::string> job_names(const json& incident) {
  std::set<std::string> out;
  auto it = incident.find("affected_jobs");
  if (it == incident.end() || !it->is_array()) return out;
  for (const auto& job : *it) {
    if (job.is_string()) {
      out.insert(job.get<std::string>());
    } else if (job.is_object()) {
      auto name = text_of(job, "name");
      out.insert(name.empty() ? text_of(job, "job_id") : name);
    }
  }
  return out;
}

// The root causes of an incident as (rank, canonical entity, fault type), ranked; rank from the member or
// the position.
struct Cause {
  int rank;
  std::string entity;
  std::string fault_type;
};

std::vector<Cause> causes_of(const json& incident) {
  std::vector<Cause> out;
  auto it = incident.find("root_causes");
  if (it == incident.end() || !it->is_array()) return out;
  int position = 0;
  for (const auto& rc : *it) {
    ++position;
    if (!rc.is_object()) continue;
    int rank = position;
    if (auto r = rc.find("rank"); r != rc.end() && r->is_number_integer()) rank = r->get<int>();
    out.push_back({rank, canonical_entity(text_of(rc, "entity")), text_of(rc, "fault_type")});
  }
  std::stable_sort(out.begin(), out.end(), [](const Cause& x, const Cause& y) { return x.rank < y.rank; });
  return out;
}

bool cause_matches(const Cause& c, const ExpectedIncident& e) {
  // A port's module is in the port: naming "<port>/module" names the place "<port>" (the optic to act on).
  bool entity = std::any_of(e.root_causes.begin(), e.root_causes.end(), [&](const std::string& want) {
    const auto canonical = canonical_entity(want);
    return canonical == c.entity || c.entity == canonical + "/module";
  });
  bool type = e.fault_types.empty() ||
              std::find(e.fault_types.begin(), e.fault_types.end(), c.fault_type) != e.fault_types.end();
  return entity && type;
}

}  // namespace

Expectation parse_expectation(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw usage_error(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  Expectation out;
  if (root.IsNull()) return out;
  if (!root.IsMap()) bad(source, root, "expect.yaml must be a mapping");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    if (key == "class") {
      out.scenario_class = scalar(source, v, key);
    } else if (key == "description") {
      out.description = v.IsNull() ? "" : scalar(source, v, key);
    } else if (key == "incidents") {
      if (v.IsNull()) continue;
      if (!v.IsSequence()) bad(source, v, "incidents must be a list");
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.incidents.push_back(parse_incident(source, v[i], "incidents[" + std::to_string(i) + "]"));
      }
    } else if (key == "clean") {
      out.clean = one_or_many(source, v, key, true);
    } else if (key == "min_compression") {
      double bound = 0;
      try {
        bound = v.as<double>();
      } catch (const YAML::Exception&) {
        bad(source, v, "min_compression must be a number");
      }
      if (!std::isfinite(bound) || bound <= 0) bad(source, v, "min_compression must be a positive number");
      out.min_compression = bound;
    } else {
      bad(source, kv.first, "unknown key " + key);
    }
  }
  return out;
}

std::string format_time_ms(std::int64_t ms) {
  const std::int64_t seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  const auto frac = static_cast<int>(ms - seconds * 1000);
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];  // wide enough for any int fields, so the format is never truncated
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::string render_syslog_line(std::string_view line, std::int64_t ts_ms) {
  const std::string stamp = format_time_ms(ts_ms);
  std::string out;
  out.reserve(line.size() + 16);
  for (std::size_t i = 0; i < line.size();) {
    if (line.substr(i, 4) == "{ts}") {
      out += stamp;
      i += 4;
    } else {
      out += line[i++];
    }
  }
  return out;
}

std::string canonical_entity(std::string_view entity) {
  if (auto ends = link_ends(entity)) return "link:" + ends->first + "|" + ends->second;
  return std::string(entity);
}

json judge(const Expectation& expect, const json& incidents, std::optional<std::int64_t> alarms_total) {
  static const json kEmpty = json::array();
  const json& items = incidents.is_array() ? incidents : kEmpty;
  std::vector<std::vector<Cause>> causes;
  causes.reserve(items.size());
  for (const auto& inc : items) causes.push_back(inc.is_object() ? causes_of(inc) : std::vector<Cause>{});

  // Each expected incident takes the incident naming it at the best rank; an incident answers one
  // expectation only, so two faults merged into one incident cannot both be top-1. Expectations whose best
  // candidate ranks higher choose first.
  struct Candidate {
    int rank;
    std::size_t incident;
    std::size_t expected;
  };
  std::vector<Candidate> candidates;
  for (std::size_t e = 0; e < expect.incidents.size(); ++e) {
    for (std::size_t i = 0; i < causes.size(); ++i) {
      for (const auto& c : causes[i]) {
        if (cause_matches(c, expect.incidents[e])) {
          candidates.push_back({c.rank, i, e});
          break;
        }
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  std::vector<std::optional<Candidate>> chosen(expect.incidents.size());
  std::vector<bool> claimed(items.size(), false);
  for (const auto& c : candidates) {
    if (chosen[c.expected] || claimed[c.incident]) continue;
    chosen[c.expected] = c;
    claimed[c.incident] = true;
  }

  bool top1 = true;
  bool top3 = true;
  bool jobs_exact = true;
  bool state_right = true;
  json expected = json::array();
  for (std::size_t e = 0; e < expect.incidents.size(); ++e) {
    const auto& want = expect.incidents[e];
    std::set<std::string> want_jobs(want.affected_jobs.begin(), want.affected_jobs.end());
    json row = {{"root_cause", want.root_causes},
                {"fault_type", want.fault_types},
                {"affected_jobs_expected", want_jobs}};
    if (chosen[e]) {
      const auto& inc = items[chosen[e]->incident];
      auto got_jobs = job_names(inc);
      row["rank"] = chosen[e]->rank;
      row["incident"] = text_of(inc, "id");
      row["affected_jobs_actual"] = got_jobs;
      row["jobs_exact"] = got_jobs == want_jobs;
      // An expected lifecycle state is part of naming the fault right: a held condition stays open.
      const bool state_ok = want.state.empty() || text_of(inc, "state") == want.state;
      if (!want.state.empty()) {
        row["state_expected"] = want.state;
        row["state_actual"] = text_of(inc, "state");
      }
      row["state_ok"] = state_ok;
      state_right = state_right && state_ok;
      top1 = top1 && chosen[e]->rank == 1;
      top3 = top3 && chosen[e]->rank <= 3;
      jobs_exact = jobs_exact && got_jobs == want_jobs;
    } else {
      row["rank"] = nullptr;
      row["incident"] = nullptr;
      row["affected_jobs_actual"] = nullptr;
      row["jobs_exact"] = false;
      top1 = top3 = jobs_exact = false;
    }
    expected.push_back(std::move(row));
  }

  // Incidents no expectation claimed are false incidents; a clean entity is dirty when an incident's top
  // root cause touches it (the entity, a part of it, or a link with an end on it).
  json false_incidents = json::array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (claimed[i]) continue;
    const auto& inc = items[i];
    json top = causes[i].empty()
                   ? json(nullptr)
                   : json{{"entity", causes[i].front().entity}, {"fault_type", causes[i].front().fault_type}};
    false_incidents.push_back({{"id", inc.is_object() ? text_of(inc, "id") : ""}, {"top", top}});
  }
  json dirty = json::array();
  for (const auto& c : expect.clean) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!causes[i].empty() && touches(causes[i].front().entity, canonical_entity(c))) {
        dirty.push_back({{"entity", c}, {"incident", text_of(items[i], "id")}});
        break;
      }
    }
  }
  const bool clean = dirty.empty();
  const bool no_false = false_incidents.empty();

  json compression = nullptr;
  json compression_ok = nullptr;
  if (alarms_total && !items.empty()) {
    compression = static_cast<double>(*alarms_total) / static_cast<double>(items.size());
  }
  if (expect.min_compression) {
    compression_ok = compression.is_number() && compression.get<double>() >= *expect.min_compression;
  }

  // A scenario's root cause is right when every expected incident is named at that rank and nothing else
  // was blamed: no false incident, no clean entity dirty (with no expected incident: no incident at all).
  const bool blameless = no_false && clean;
  json verdict = {{"class", expect.scenario_class},
                  {"top1", top1 && blameless},
                  {"top3", top3 && blameless},
                  {"jobs_exact", jobs_exact},
                  {"state", state_right},
                  {"clean", clean},
                  {"incidents", items.size()},
                  {"expected_incidents", expect.incidents.size()},
                  {"false_incidents", false_incidents},
                  {"dirty", dirty},
                  {"alarms", alarms_total ? json(*alarms_total) : json(nullptr)},
                  {"compression", compression},
                  {"min_compression", expect.min_compression ? json(*expect.min_compression) : json(nullptr)},
                  {"compression_ok", compression_ok},
                  {"expected", expected}};
  verdict["pass"] = top1 && blameless && jobs_exact && state_right &&
                    (compression_ok.is_null() || compression_ok.get<bool>());
  return verdict;
}

}  // namespace hsnsctl
