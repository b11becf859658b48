#include "brain/patterns.h"

#include <re2/re2.h>
#include <re2/set.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <system_error>

#include "brain/config.h"
#include "brain/yaml_reader.h"

namespace hsns::brain {

namespace {

// Log lines of one device about one entity closer than this are one event (a count pattern counts it once).
constexpr std::int64_t kSameEventMs = 2000;

constexpr std::size_t kMaxIdLength = 64;
constexpr std::size_t kMaxTextLength = 4096;
// RE2's compiled program size: a bound on the memory and the per-byte work of one expression.
constexpr int kMaxProgramSize = 20'000;
constexpr std::size_t kKeyPrefix = sizeof(std::uint32_t);

RE2::Options regex_options() {
  RE2::Options o;
  o.set_log_errors(false);
  return o;
}

std::unique_ptr<RE2> compile_regex(const std::string& text, std::string& error) {
  if (text.size() > kMaxRegexLength) {
    error = "regular expression over " + std::to_string(kMaxRegexLength) + " characters";
    return nullptr;
  }
  auto re = std::make_unique<RE2>(text, regex_options());
  if (!re->ok()) {
    error = "bad regular expression: " + re->error();
    return nullptr;
  }
  if (re->ProgramSize() > kMaxProgramSize) {
    error = "regular expression too large (program size " + std::to_string(re->ProgramSize()) + ", at most " +
            std::to_string(kMaxProgramSize) + ")";
    return nullptr;
  }
  return re;
}

struct CompiledField {
  const FieldCondition* condition = nullptr;
  std::unique_ptr<RE2> regex;  // null with equals
};

struct CompiledLog {
  const LogCondition* condition = nullptr;
  std::unique_ptr<RE2> message;
  std::vector<CompiledField> fields;
  int ifname_group = -1;
  std::vector<std::pair<int, std::string>> named;  // group index, name
};

struct CompiledCondition {
  std::optional<CompiledLog> log;
  const KpiCondition* kpi = nullptr;
};

// (pattern index, whether it is the pattern's clears_on condition)
using ConditionRef = std::pair<std::uint32_t, bool>;

}  // namespace

struct PatternLibrary::Compiled {
  std::vector<Pattern> patterns;
  std::vector<CompiledCondition> match;   // per pattern
  std::vector<CompiledCondition> clear;   // per pattern (empty without clears_on)
  std::unique_ptr<RE2::Set> set;          // every log condition's message regex; null when there is none
  std::vector<ConditionRef> set_entries;  // by set index
  std::unordered_map<std::string_view, std::vector<ConditionRef>> kpi_exact;  // metric name -> conditions
  std::vector<ConditionRef> kpi_glob;
  std::unordered_map<std::string_view, std::uint32_t> by_id;
};

namespace {

// ---- Loading ----

bool is_glob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

bool valid_name(std::string_view s, bool lower_only) {
  if (s.empty() || s.size() > kMaxIdLength) return false;
  const auto ok = [&](char c, bool first) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
    if (!lower_only && c >= 'A' && c <= 'Z') return true;
    return !first && (c == '_' || c == '-' || (!lower_only && c == '.'));
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!ok(s[i], i == 0)) return false;
  }
  return true;
}

class PatternParser : public YamlReader {
 public:
  using YamlReader::YamlReader;

  bool read_text(const YAML::Node& map, const std::string& path, std::string_view key, std::string& out,
                 bool required) {
    const YAML::Node node = map[std::string(key)];
    if (!node)
      return !required || fail(map, join(path, key), "missing required key \"" + std::string(key) + "\"");
    if (!node.IsScalar() || node.Scalar().empty())
      return fail(node, join(path, key), "must be a non-empty text");
    if (node.Scalar().size() > kMaxTextLength) {
      return fail(node, join(path, key), "over " + std::to_string(kMaxTextLength) + " characters");
    }
    out = node.Scalar();
    return true;
  }

  // "250ms", "30s", "10m", "1h", or a plain number of seconds.
  bool read_duration(const YAML::Node& map, const std::string& path, std::string_view key,
                     std::int64_t& out) {
    const YAML::Node node = map[std::string(key)];
    if (!node) return true;
    const std::string at = join(path, key);
    if (!node.IsScalar()) return fail(node, at, "must be a duration (\"30s\", \"10m\")");
    const std::string& text = node.Scalar();
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    double scale = 0;
    if (unit.empty() || unit == "s") {
      scale = 1000;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    }
    const double ms = v * scale;
    if (ec != std::errc() || scale == 0 || !std::isfinite(ms) || ms <= 0 ||
        ms > static_cast<double>(kMaxDurationMs)) {
      return fail(node, at, "must be a duration from 1ms to 7 days (\"30s\", \"10m\"), got \"" + text + "\"");
    }
    out = static_cast<std::int64_t>(std::llround(ms));
    return true;
  }

  bool read_regex(const YAML::Node& node, const std::string& path, std::string& out) {
    if (!node.IsScalar() || node.Scalar().empty()) return fail(node, path, "must be a regular expression");
    std::string error;
    if (!compile_regex(node.Scalar(), error)) return fail(node, path, error);
    out = node.Scalar();
    return true;
  }

  bool read_field(const YAML::Node& node, const std::string& path, std::string field, LogCondition& log) {
    FieldCondition f{std::move(field), "", std::nullopt};
    if (node.IsScalar()) {
      if (!read_regex(node, path, f.regex)) return false;
    } else {
      if (!check_keys(node, path, {"regex", "equals"})) return false;
      if (node["regex"] && node["equals"]) return fail(node, path, "give either regex or equals, not both");
      if (const YAML::Node r = node["regex"]) {
        if (!read_regex(r, join(path, "regex"), f.regex)) return false;
      } else if (const YAML::Node e = node["equals"]; e && e.IsScalar()) {
        f.equals = e.Scalar();
      } else {
        return fail(node, path, "needs regex or equals (a text)");
      }
    }
    log.fields.push_back(std::move(f));
    return true;
  }

  bool read_severity_bound(const YAML::Node& range, const std::string& path, std::string_view key, int& out) {
    static constexpr std::array<std::string_view, 8> kNames = {"emerg",   "alert",  "crit", "err",
                                                               "warning", "notice", "info", "debug"};
    const YAML::Node node = range[std::string(key)];
    if (!node) return true;
    const std::string at = join(path, key);
    if (node.IsScalar()) {
      for (std::size_t i = 0; i < kNames.size(); ++i) {
        if (node.Scalar() == kNames[i] || node.Scalar() == std::to_string(i)) {
          out = static_cast<int>(i);
          return true;
        }
      }
    }
    return fail(node, at,
                "must be a syslog severity 0..7 or emerg, alert, crit, err, warning, notice, info, debug");
  }

  bool parse_log(const YAML::Node& node, const std::string& path, LogCondition& log) {
    if (!check_keys(node, path,
                    {"message", "app", "hostname", "msgid", "procid", "severity", "structured_data"})) {
      return false;
    }
    const YAML::Node message = node["message"];
    if (!message) return fail(node, join(path, "message"), "missing required key \"message\"");
    if (!read_regex(message, join(path, "message"), log.message)) return false;
    for (const char* field : {"app", "hostname", "msgid", "procid"}) {
      if (const YAML::Node f = node[field]) {
        if (!read_field(f, join(path, field), field, log)) return false;
      }
    }
    if (const YAML::Node range = node["severity"]) {
      const std::string at = join(path, "severity");
      if (!check_keys(range, at, {"min", "max"}) ||
          !read_severity_bound(range, at, "min", log.severity_min) ||
          !read_severity_bound(range, at, "max", log.severity_max)) {
        return false;
      }
      if (log.severity_min > log.severity_max)
        return fail(range, at, "needs min <= max (0 is the most severe)");
    }
    if (const YAML::Node sd = node["structured_data"]) {
      const std::string at = join(path, "structured_data");
      if (!sd.IsMap()) return fail(sd, at, "must be a mapping of \"<sd-id>.<param>\" to conditions");
      for (const auto& entry : sd) {
        const std::string& name = entry.first.Scalar();
        if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.') {
          return fail(entry.first, join(at, name), "must name \"<sd-id>.<param>\"");
        }
        if (!read_field(entry.second, join(at, name), name, log)) return false;
      }
    }
    return true;
  }

  bool parse_kpi(const YAML::Node& node, const std::string& path, KpiCondition& kpi) {
    if (!check_keys(node, path, {"metric", "anomaly", "above", "below"})) return false;
    if (!read_text(node, path, "metric", kpi.metric, true)) return false;
    if (const YAML::Node a = node["anomaly"]) {
      for (const AnomalyKind k : {AnomalyKind::deviation, AnomalyKind::rate, AnomalyKind::level_shift,
                                  AnomalyKind::burst, AnomalyKind::threshold}) {
        if (a.IsScalar() && a.Scalar() == to_string(k)) kpi.anomaly = k;
      }
      if (!kpi.anomaly) {
        return fail(a, join(path, "anomaly"), "must be deviation, rate, level_shift, burst or threshold");
      }
    }
    if (node["above"] && node["below"]) return fail(node, path, "give either above or below, not both");
    if (node["above"]) {
      kpi.comparison = Comparison::above;
      if (!read_number(node, path, "above", kpi.bound)) return false;
    } else if (node["below"]) {
      kpi.comparison = Comparison::below;
      if (!read_number(node, path, "below", kpi.bound)) return false;
    }
    if (!kpi.anomaly && kpi.comparison == Comparison::none) {
      return fail(node, path, "needs anomaly, above or below");
    }
    return true;
  }

  // `log:` or `kpi:` (exactly one) with, for `match`, the conditions over time.
  bool parse_condition(const YAML::Node& node, const std::string& path, Condition& c, Pattern* timing) {
    if (timing) {
      if (!check_keys(node, path, {"log", "kpi", "for", "count", "within", "scope", "both_ends_within"})) {
        return false;
      }
    } else if (!check_keys(node, path, {"log", "kpi"})) {
      return false;
    }
    if (node["log"] && node["kpi"]) return fail(node, path, "give either log or kpi, not both");
    if (const YAML::Node log = node["log"]) {
      c.log.emplace();
      if (!parse_log(log, join(path, "log"), *c.log)) return false;
    } else if (const YAML::Node kpi = node["kpi"]) {
      c.kpi.emplace();
      if (!parse_kpi(kpi, join(path, "kpi"), *c.kpi)) return false;
    } else {
      return fail(node, path, "needs log or kpi");
    }
    return !timing || parse_timing(node, path, *timing);
  }

  bool parse_timing(const YAML::Node& node, const std::string& path, Pattern& p) {
    if (!read_duration(node, path, "for", p.for_ms) || !read_count(node, path, "count", p.count) ||
        !read_duration(node, path, "within", p.within_ms) ||
        !read_duration(node, path, "both_ends_within", p.both_ends_within_ms)) {
      return false;
    }
    if (node["for"] && !p.match.kpi) return fail(node["for"], join(path, "for"), "only for kpi conditions");
    if (node["for"] && node["count"]) return fail(node["for"], join(path, "for"), "give either for or count");
    if (node["count"] && (p.count < 1 || p.count > kMaxCount)) {
      return fail(node["count"], join(path, "count"), "must be 1.." + std::to_string(kMaxCount));
    }
    if (node["count"] && !node["within"])
      return fail(node["count"], join(path, "within"), "count needs within");
    if (node["within"] && !node["count"])
      return fail(node["within"], join(path, "count"), "within needs count");
    if (const YAML::Node scope = node["scope"]) {
      if (scope.IsScalar() && scope.Scalar() == "link_both_ends") {
        p.scope = PatternScope::link_both_ends;
      } else if (!(scope.IsScalar() && scope.Scalar() == "entity")) {
        return fail(scope, join(path, "scope"), "must be entity or link_both_ends");
      }
    }
    if (node["both_ends_within"] && p.scope != PatternScope::link_both_ends) {
      return fail(node["both_ends_within"], join(path, "both_ends_within"), "needs scope: link_both_ends");
    }
    return true;
  }

  bool parse_pattern(const YAML::Node& node, const std::string& path, Pattern& p) {
    if (!check_keys(node, path,
                    {"id", "fault", "severity", "description", "match", "root_cause", "impact", "action",
                     "clears_on"})) {
      return false;
    }
    p.origin = where(node);
    if (!read_text(node, path, "id", p.id, true)) return false;
    if (!valid_name(p.id, false)) {
      return fail(node["id"], join(path, "id"), "must be 1..64 letters, digits, '.', '_' or '-', not first");
    }
    if (!read_text(node, path, "fault", p.fault, true)) return false;
    if (!valid_name(p.fault, true)) {
      return fail(node["fault"], join(path, "fault"), "must be 1..64 lower-case letters, digits, '_' or '-'");
    }
    if (!read_text(node, path, "description", p.description, true)) return false;
    std::string severity;
    if (!read_text(node, path, "severity", severity, true)) return false;
    bool known = false;
    for (const FaultSeverity s : {FaultSeverity::info, FaultSeverity::warning, FaultSeverity::minor,
                                  FaultSeverity::major, FaultSeverity::critical}) {
      if (severity == to_string(s)) p.severity = s, known = true;
    }
    if (!known) {
      return fail(node["severity"], join(path, "severity"),
                  "must be info, warning, minor, major or critical");
    }
    std::string role;
    if (!read_text(node, path, "root_cause", role, true)) return false;
    known = false;
    for (const RootCauseRole r : {RootCauseRole::port, RootCauseRole::link, RootCauseRole::module,
                                  RootCauseRole::switch_device, RootCauseRole::host_nic}) {
      if (role == to_string(r)) p.root_cause = r, known = true;
    }
    if (!known) {
      return fail(node["root_cause"], join(path, "root_cause"),
                  "must be port, link, module, switch or host_nic");
    }
    if (!read_text(node, path, "impact", p.impact, true) ||
        !read_text(node, path, "action", p.action, true)) {
      return false;
    }
    const YAML::Node match = node["match"];
    if (!match) return fail(node, join(path, "match"), "missing required key \"match\"");
    if (!parse_condition(match, join(path, "match"), p.match, &p)) return false;
    if (const YAML::Node clears = node["clears_on"]) {
      p.clears_on.emplace();
      if (!parse_condition(clears, join(path, "clears_on"), *p.clears_on, nullptr)) return false;
    }
    return true;
  }
};

CompiledLog compile_log(const LogCondition& log) {
  CompiledLog c;
  c.condition = &log;
  std::string error;
  c.message = compile_regex(log.message, error);  // checked when parsed
  for (const auto& [name, index] : c.message->NamedCapturingGroups()) {
    c.named.emplace_back(index, name);
    if (name == "ifname") c.ifname_group = index;
  }
  std::sort(c.named.begin(), c.named.end());
  for (const FieldCondition& f : log.fields) {
    c.fields.push_back({&f, f.equals ? nullptr : compile_regex(f.regex, error)});
  }
  return c;
}

Result<std::shared_ptr<const PatternLibrary::Compiled>> compile(std::vector<Pattern> patterns) {
  auto c = std::make_shared<PatternLibrary::Compiled>();
  c->patterns = std::move(patterns);
  RE2::Options set_options = regex_options();
  c->set = std::make_unique<RE2::Set>(set_options, RE2::UNANCHORED);
  const auto add = [&](const Condition& condition, std::uint32_t index, bool clearing,
                       CompiledCondition& out) {
    if (condition.log) {
      out.log = compile_log(*condition.log);
      std::string error;
      if (c->set->Add(condition.log->message, &error) < 0) return false;
      c->set_entries.emplace_back(index, clearing);
    } else if (condition.kpi) {
      out.kpi = &*condition.kpi;
      const std::string_view metric = condition.kpi->metric;
      if (is_glob(metric)) {
        c->kpi_glob.emplace_back(index, clearing);
      } else {
        c->kpi_exact[metric].emplace_back(index, clearing);
      }
    }
    return true;
  };
  c->match.resize(c->patterns.size());
  c->clear.resize(c->patterns.size());
  for (std::uint32_t i = 0; i < c->patterns.size(); ++i) {
    const Pattern& p = c->patterns[i];
    c->by_id.emplace(p.id, i);
    if (!add(p.match, i, false, c->match[i]) || (p.clears_on && !add(*p.clears_on, i, true, c->clear[i]))) {
      return tl::unexpected(Error::internal(p.origin + ": RE2::Set refused a checked expression"));
    }
  }
  if (c->set_entries.empty()) {
    c->set.reset();
  } else if (!c->set->Compile()) {
    return tl::unexpected(Error::invalid("", "the library's regular expressions exceed RE2's memory"));
  }
  return std::shared_ptr<const PatternLibrary::Compiled>(std::move(c));
}

// ---- Matching helpers ----

std::string first_segment(std::string_view entity) {
  return std::string(entity.substr(0, entity.find('/')));
}

// The entity a fault is blamed on (docs/brain.md "Root cause").
std::string root_cause_entity(RootCauseRole role, std::string_view entity, std::string_view peer) {
  switch (role) {
    case RootCauseRole::port:
      return std::string(entity);
    case RootCauseRole::module:
      return std::string(entity) + "/module";
    case RootCauseRole::switch_device:
      return first_segment(entity);
    case RootCauseRole::host_nic: {
      const auto first = entity.find('/');
      const auto last = entity.rfind('/');
      return std::string(first != last ? entity.substr(0, last) : entity);
    }
    case RootCauseRole::link:
      if (peer.empty()) return std::string(entity);
      return entity < peer ? std::string(entity) + "<->" + std::string(peer)
                           : std::string(peer) + "<->" + std::string(entity);
  }
  return std::string(entity);
}

std::string format_number(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string format_seconds(std::int64_t ms) {
  return format_number(static_cast<double>(ms) / 1000.0) + " s";
}

bool field_ok(const CompiledField& f, std::string_view value) {
  if (f.condition->equals) return value == *f.condition->equals;
  return RE2::FullMatch(re2::StringPiece(value.data(), value.size()), *f.regex);
}

std::string_view field_value(const LogEvent& e, std::string_view name, bool& present) {
  present = true;
  if (name == "app") return e.app;
  if (name == "hostname") return e.hostname;
  if (name == "msgid") return e.msgid;
  if (name == "procid") return e.procid;
  for (const LogField& f : e.fields) {
    if (f.name == name) return f.value;
  }
  present = false;
  return {};
}

}  // namespace

// ---- PatternLibrary ----

PatternLibrary::PatternLibrary() : compiled_(std::make_shared<const Compiled>()) {}

const std::vector<Pattern>& PatternLibrary::patterns() const {
  return compiled_->patterns;
}

const Pattern* PatternLibrary::find(std::string_view id) const {
  const auto it = compiled_->by_id.find(id);
  return it == compiled_->by_id.end() ? nullptr : &compiled_->patterns[it->second];
}

Result<PatternLibrary> parse_pattern_library(std::span<const PatternSource> files) {
  std::vector<Pattern> patterns;
  std::map<std::string, std::string, std::less<>> seen;  // id -> where it was defined first
  for (const PatternSource& file : files) {
    if (file.text.size() > kMaxPatternFileBytes) {
      return tl::unexpected(
          Error::too_large(file.name + ": over " + std::to_string(kMaxPatternFileBytes) + " bytes"));
    }
    auto root = load_yaml(file.text, file.name);
    if (!root) return tl::unexpected(std::move(root.error()));
    if (root->IsNull()) continue;
    PatternParser p(file.name);
    try {
      if (!p.check_keys(*root, "", {"patterns"})) return tl::unexpected(p.take_error());
      const YAML::Node list = (*root)["patterns"];
      if (!list || !list.IsSequence()) {
        p.fail(list ? list : *root, "patterns", "must be a list of patterns");
        return tl::unexpected(p.take_error());
      }
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "patterns[" + std::to_string(i) + "]";
        Pattern pattern;
        if (!p.parse_pattern(list[i], path, pattern)) return tl::unexpected(p.take_error());
        if (const auto it = seen.find(pattern.id); it != seen.end()) {
          p.fail(list[i]["id"], path + ".id",
                 "duplicate id \"" + pattern.id + "\" (first at " + it->second + ")");
          return tl::unexpected(p.take_error());
        }
        if (patterns.size() == kMaxPatterns) {
          p.fail(list[i], path, "more than " + std::to_string(kMaxPatterns) + " patterns in the library");
          return tl::unexpected(p.take_error());
        }
        seen.emplace(pattern.id, pattern.origin);
        patterns.push_back(std::move(pattern));
      }
    } catch (const YAML::Exception& e) {
      // Conversions of odd nodes; never expected past the checks above.
      return tl::unexpected(
          Error::invalid("", file.name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
    }
  }
  auto compiled = compile(std::move(patterns));
  if (!compiled) return tl::unexpected(std::move(compiled.error()));
  return PatternLibrary(std::move(*compiled));
}

Result<PatternLibrary> load_pattern_library(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml" && it->is_regular_file(ec)) paths.push_back(it->path());
  }
  if (ec) return tl::unexpected(Error::not_found("cannot read " + directory + ": " + ec.message()));
  std::sort(paths.begin(), paths.end());
  std::vector<PatternSource> files;
  for (const fs::path& path : paths) {
    auto text = read_text_file(path.string(), kMaxPatternFileBytes);
    if (!text) return tl::unexpected(std::move(text.error()));
    files.push_back({path.string(), std::move(*text)});
  }
  return parse_pattern_library(files);
}

std::string_view to_string(FaultSeverity severity) {
  switch (severity) {
    case FaultSeverity::info:
      return "info";
    case FaultSeverity::warning:
      return "warning";
    case FaultSeverity::minor:
      return "minor";
    case FaultSeverity::major:
      return "major";
    case FaultSeverity::critical:
      return "critical";
  }
  return "?";
}

std::string_view to_string(RootCauseRole role) {
  switch (role) {
    case RootCauseRole::port:
      return "port";
    case RootCauseRole::link:
      return "link";
    case RootCauseRole::module:
      return "module";
    case RootCauseRole::switch_device:
      return "switch";
    case RootCauseRole::host_nic:
      return "host_nic";
  }
  return "?";
}

std::string_view to_string(FaultState state) {
  return state == FaultState::raised ? "raised" : "cleared";
}

// ---- PatternMatcher ----

struct PatternMatcher::State {
  std::string key;  // the pattern index's bytes, then the entity
  std::string_view entity() const { return std::string_view(key).substr(kKeyPrefix); }
  bool anomaly = false;  // KPI: the anomaly verdict's level (raised, not yet cleared)
  bool condition = false;
  bool held = false;    // the condition with its `for` / `count` holds
  bool active = false;  // raised and not cleared
  std::int64_t condition_since_ms = 0;
  std::int64_t last_held_ms = 0;
  std::string peer;                // the link's other end of a raised fault, when resolved
  std::vector<std::int64_t> ring;  // `count` occurrences, oldest overwritten
  std::uint32_t ring_next = 0;
  std::uint32_t ring_size = 0;

  void push(std::int64_t t_ms) {
    ring[ring_next] = t_ms;
    ring_next = (ring_next + 1) % static_cast<std::uint32_t>(ring.size());
    ring_size = std::min<std::uint32_t>(ring_size + 1, static_cast<std::uint32_t>(ring.size()));
  }
  std::int64_t oldest() const { return ring_size < ring.size() ? ring[0] : ring[ring_next]; }
  std::int64_t newest() const {
    const auto n = static_cast<std::uint32_t>(ring.size());
    return ring[(ring_next + n - 1) % n];
  }
  bool count_reached(std::int64_t now_ms, std::int64_t within_ms) const {
    return !ring.empty() && ring_size == ring.size() && now_ms - oldest() <= within_ms;
  }
  void reset_count() { ring_next = ring_size = 0; }
};

// What the event that steps a state brings as evidence.
struct PatternMatcher::Occurrence {
  std::int64_t t_ms = 0;
  std::int64_t first_ms = 0;
  std::uint32_t occurrences = 1;
  std::string_view message;
  std::vector<std::pair<std::string, std::string>> captures;
  std::string_view metric;
  double value = 0;
};

PatternMatcher::PatternMatcher(PatternLibrary library, PeerResolver peers, MatcherLimits limits)
    : library_(std::move(library)), peers_(std::move(peers)), limits_(limits) {
  limits_.max_states = std::max<std::size_t>(limits_.max_states, 1);
}

PatternMatcher::~PatternMatcher() = default;

void PatternMatcher::replace_library(PatternLibrary library) {
  index_.clear();
  lru_.clear();
  library_ = std::move(library);
}

Result<std::size_t> PatternMatcher::reload(const std::string& directory) {
  auto loaded = load_pattern_library(directory);
  if (!loaded) return tl::unexpected(std::move(loaded.error()));
  const std::size_t n = loaded->size();
  replace_library(std::move(*loaded));
  return n;
}

std::size_t PatternMatcher::active_faults() const {
  return static_cast<std::size_t>(
      std::count_if(lru_.begin(), lru_.end(), [](const State& s) { return s.active; }));
}

void PatternMatcher::set_key(std::uint32_t pattern, std::string_view entity) {
  key_.assign(reinterpret_cast<const char*>(&pattern), kKeyPrefix);
  key_.append(entity);
}

PatternMatcher::State* PatternMatcher::find(std::uint32_t pattern, std::string_view entity) {
  set_key(pattern, entity);
  const auto it = index_.find(key_);
  return it == index_.end() ? nullptr : &*it->second;
}

PatternMatcher::State& PatternMatcher::find_or_add(std::uint32_t pattern, std::string_view entity,
                                                   std::vector<FaultMatch>& out) {
  set_key(pattern, entity);
  if (const auto it = index_.find(key_); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return *it->second;
  }
  if (index_.size() >= limits_.max_states) {
    State& victim = lru_.back();
    std::uint32_t victim_pattern = 0;
    std::memcpy(&victim_pattern, victim.key.data(), kKeyPrefix);
    ++stats_.evicted;
    if (victim.active) {
      Occurrence gone;
      gone.t_ms = victim.last_held_ms;
      clear(victim_pattern, victim, gone, "state evicted", out);
    }
    index_.erase(victim.key);
    lru_.pop_back();
    set_key(pattern, entity);
  }
  lru_.emplace_front();
  State& s = lru_.front();
  s.key = key_;
  s.ring.resize(library_.compiled_->patterns[pattern].count);
  index_.emplace(s.key, lru_.begin());
  return s;
}

FaultMatch PatternMatcher::make_match(std::uint32_t pattern, FaultState state, std::string_view entity,
                                      const Occurrence& occurrence) const {
  const Pattern& p = library_.compiled_->patterns[pattern];
  FaultMatch m;
  m.pattern = std::shared_ptr<const Pattern>(library_.compiled_, &p);
  m.state = state;
  m.entity = std::string(entity);
  m.timestamp_ms = occurrence.t_ms;
  m.first_ms = occurrence.first_ms;
  m.occurrences = occurrence.occurrences;
  m.message = std::string(occurrence.message);
  m.captures = occurrence.captures;
  m.metric = std::string(occurrence.metric);
  m.value = occurrence.value;
  return m;
}

std::string PatternMatcher::resolve_peer(std::uint32_t pattern, std::string_view entity) const {
  const Pattern& p = library_.compiled_->patterns[pattern];
  if (!peers_ || (p.scope != PatternScope::link_both_ends && p.root_cause != RootCauseRole::link)) return {};
  auto resolved = peers_(entity);
  if (!resolved || resolved->size() > limits_.max_entity_length) return {};
  return std::move(*resolved);
}

void PatternMatcher::raise(std::uint32_t pattern, State* state, std::string_view entity,
                           const std::string& peer, const Occurrence& occurrence,
                           std::vector<FaultMatch>& out) {
  const Pattern& p = library_.compiled_->patterns[pattern];
  FaultMatch m = make_match(pattern, FaultState::raised, entity, occurrence);
  m.peer = peer;
  m.root_cause = root_cause_entity(p.root_cause, entity, peer);
  std::string detail = p.description;
  if (!occurrence.metric.empty()) {
    detail += " (" + std::string(occurrence.metric) + " " + format_number(occurrence.value);
    if (p.for_ms > 0) detail += " for " + format_seconds(occurrence.t_ms - occurrence.first_ms);
    detail += ")";
  }
  if (p.count > 0) {
    detail += " (" + std::to_string(occurrence.occurrences) + " times in " +
              format_seconds(occurrence.t_ms - occurrence.first_ms) + ")";
  }
  if (p.scope == PatternScope::link_both_ends) detail += " on both ends of the link to " + peer;
  m.detail = std::move(detail);
  out.push_back(std::move(m));
  ++stats_.raised;
  // Log patterns without clears_on are one-shot: raised each time they fire, never active.
  if (state == nullptr || (!p.clears_on && !p.match.kpi)) return;
  state->active = true;
  state->peer = peer;
  if (p.scope == PatternScope::link_both_ends) {
    const std::string self(state->entity());
    if (State* other = find(pattern, peer)) {
      other->active = true;
      other->peer = self;
    }
  }
}

void PatternMatcher::clear(std::uint32_t pattern, State& state, const Occurrence& occurrence,
                           std::string_view reason, std::vector<FaultMatch>& out) {
  const Pattern& p = library_.compiled_->patterns[pattern];
  FaultMatch m = make_match(pattern, FaultState::cleared, state.entity(), occurrence);
  m.peer = state.peer;
  m.root_cause = root_cause_entity(p.root_cause, state.entity(), state.peer);
  m.detail = std::string(reason);
  out.push_back(std::move(m));
  ++stats_.cleared;
  state.active = false;
  if (p.scope == PatternScope::link_both_ends && !state.peer.empty()) {
    const std::string self(state.entity());
    if (State* other = find(pattern, state.peer); other && other->active && other->peer == self) {
      other->active = false;
      other->peer.clear();
    }
  }
  state.peer.clear();
}

// The state's condition holds (with its `for` / `count`) at this occurrence: raise unless raised, pairing the
// two ends of a link for link_both_ends.
void PatternMatcher::step(std::uint32_t pattern, State& state, bool held, const Occurrence& occurrence,
                          std::vector<FaultMatch>& out) {
  const Pattern& p = library_.compiled_->patterns[pattern];
  if (!held) return;
  state.held = true;
  state.last_held_ms = occurrence.t_ms;
  if (state.active) return;
  const std::string peer = resolve_peer(pattern, state.entity());
  if (p.scope == PatternScope::link_both_ends) {
    if (peer.empty()) {
      ++stats_.unpaired;
      return;
    }
    const State* other = find(pattern, peer);
    if (other == nullptr || !other->held || other->active ||
        std::abs(occurrence.t_ms - other->last_held_ms) > p.both_ends_within_ms) {
      return;
    }
  }
  raise(pattern, &state, state.entity(), peer, occurrence, out);
}

void PatternMatcher::check_log(std::uint32_t pattern, bool clearing, const LogEvent& event,
                               std::vector<FaultMatch>& out) {
  const auto& compiled = *library_.compiled_;
  const Pattern& p = compiled.patterns[pattern];
  const CompiledLog& log = *(clearing ? compiled.clear : compiled.match)[pattern].log;
  if (event.severity < log.condition->severity_min || event.severity > log.condition->severity_max) return;
  for (const CompiledField& f : log.fields) {
    bool present = false;
    const std::string_view value = field_value(event, f.condition->field, present);
    if (!present || !field_ok(f, value)) return;
  }
  // Only the groups up to the last named one are asked for: RE2 is faster the fewer it has to report.
  std::array<re2::StringPiece, 16> small;
  std::vector<re2::StringPiece> large;
  const auto wanted = static_cast<std::size_t>(log.named.empty() ? 0 : log.named.back().first) + 1;
  if (wanted > small.size()) large.resize(wanted);
  re2::StringPiece* groups = wanted > small.size() ? large.data() : small.data();
  if (!log.message->Match(re2::StringPiece(event.message.data(), event.message.size()), 0,
                          event.message.size(), RE2::UNANCHORED, groups, static_cast<int>(wanted))) {
    return;
  }
  Occurrence occurrence;
  occurrence.t_ms = occurrence.first_ms = event.timestamp_ms;
  occurrence.message = event.message;
  for (const auto& [index, name] : log.named) {
    const re2::StringPiece g = groups[static_cast<std::size_t>(index)];
    if (g.data() != nullptr) occurrence.captures.emplace_back(name, std::string(g.data(), g.size()));
  }
  std::string entity(event.entity);
  if (log.ifname_group > 0) {
    const re2::StringPiece g = groups[static_cast<std::size_t>(log.ifname_group)];
    if (!g.empty()) entity.append("/").append(g.data(), g.size());
  }
  if (entity.size() > limits_.max_entity_length) {
    ++stats_.invalid;
    return;
  }
  if (clearing) {
    if (State* s = find(pattern, entity); s != nullptr) {
      s->held = false;
      s->reset_count();
      if (s->active)
        clear(pattern, *s, occurrence, "cleared: " + std::string(event.message.substr(0, 200)), out);
    }
    return;
  }
  if (p.count == 0 && p.scope == PatternScope::entity && !p.clears_on) {
    // Nothing to remember: a one-shot fault, raised by every matching line.
    raise(pattern, nullptr, entity, resolve_peer(pattern, entity), occurrence, out);
    return;
  }
  State& s = find_or_add(pattern, entity, out);
  bool held = true;
  if (p.count > 0) {
    // One event is often several lines (Huawei: IF_STATE, linkDown_active and LINK_STATE for one port going
    // down; NX-OS: ETHPORT and the port-channel): lines within kSameEventMs of the last one counted are
    // that event, not another occurrence.
    if (s.ring_size > 0 && event.timestamp_ms - s.newest() < kSameEventMs) return;
    s.push(event.timestamp_ms);
    held = s.count_reached(event.timestamp_ms, p.within_ms);
    if (held) {
      occurrence.first_ms = s.oldest();
      occurrence.occurrences = p.count;
      s.reset_count();  // the next `count` occurrences fire again
    }
  }
  step(pattern, s, held, occurrence, out);
}

void PatternMatcher::check_kpi(std::uint32_t pattern, bool clearing, const KpiObservation& observation,
                               std::vector<FaultMatch>& out) {
  const auto& compiled = *library_.compiled_;
  const Pattern& p = compiled.patterns[pattern];
  const KpiCondition& k = *(clearing ? compiled.clear : compiled.match)[pattern].kpi;
  if (is_glob(k.metric) && !glob_match(k.metric, observation.metric)) return;
  int verdict = -1;  // this sample's verdict of the anomaly kind: 1 raised, 0 cleared, -1 none
  if (k.anomaly) {
    for (const AnomalyEvent& e : observation.verdicts) {
      if (e.kind == *k.anomaly) verdict = e.state == EventState::raised ? 1 : 0;
    }
  }
  const double v = observation.value;
  const bool compared = k.comparison == Comparison::none ||
                        (k.comparison == Comparison::above && v > k.bound) ||
                        (k.comparison == Comparison::below && v < k.bound);
  Occurrence occurrence;
  occurrence.t_ms = occurrence.first_ms = observation.timestamp_ms;
  occurrence.metric = observation.metric;
  occurrence.value = v;
  if (clearing) {
    State* s = find(pattern, observation.entity);
    if (s != nullptr && s->active && compared && (!k.anomaly || verdict == 0)) {
      clear(pattern, *s, occurrence, "cleared: " + std::string(observation.metric) + " " + format_number(v),
            out);
    }
    return;
  }
  // A series whose condition does not hold and that has no state yet leaves nothing to remember.
  if (!(compared && (!k.anomaly || verdict == 1)) && find(pattern, observation.entity) == nullptr) return;
  State& s = find_or_add(pattern, observation.entity, out);
  if (verdict >= 0) s.anomaly = verdict == 1;
  const bool condition = compared && (!k.anomaly || s.anomaly);
  const bool rising = condition && !s.condition;
  if (rising) s.condition_since_ms = observation.timestamp_ms;
  s.condition = condition;
  bool held = false;
  if (p.count > 0) {
    // An occurrence: each rising edge of an anomaly, each observation beyond a bound.
    if (k.anomaly ? rising : condition) s.push(observation.timestamp_ms);
    held = s.count_reached(observation.timestamp_ms, p.within_ms);
    if (held) {
      occurrence.first_ms = s.oldest();
      occurrence.occurrences = p.count;
    }
  } else {
    held = condition && observation.timestamp_ms - s.condition_since_ms >= p.for_ms;
    occurrence.first_ms = s.condition_since_ms;
  }
  if (held) {
    step(pattern, s, true, occurrence, out);
    return;
  }
  s.held = false;
  if (s.active && !p.clears_on) clear(pattern, s, occurrence, "condition ended", out);
}

void PatternMatcher::observe(const LogEvent& event, std::vector<FaultMatch>& out) {
  ++stats_.log_events;
  if (event.entity.empty() || event.entity.size() > limits_.max_entity_length) {
    ++stats_.invalid;
    return;
  }
  const auto& compiled = *library_.compiled_;
  if (!compiled.set) return;
  set_hits_.clear();
  RE2::Set::ErrorInfo info{};
  if (!compiled.set->Match(re2::StringPiece(event.message.data(), event.message.size()), &set_hits_, &info) &&
      info.kind != RE2::Set::kNoError) {
    // The set's DFA ran out of memory: try every expression on its own.
    set_hits_.resize(compiled.set_entries.size());
    std::iota(set_hits_.begin(), set_hits_.end(), 0);
  }
  std::sort(set_hits_.begin(), set_hits_.end());  // library order, whatever order the set answers in
  // A line that a pattern's clears_on matches is a recovery notice ("Fan fault warning cleared: FAN 2 is back
  // to normal"): it never raises that pattern, even when its words match the fault too.
  const auto recovery_for = [&](std::uint32_t pattern) {
    return std::any_of(set_hits_.begin(), set_hits_.end(), [&](int other) {
      const auto [p, clearing] = compiled.set_entries[static_cast<std::size_t>(other)];
      return clearing && p == pattern;
    });
  };
  for (const int hit : set_hits_) {
    const auto [pattern, clearing] = compiled.set_entries[static_cast<std::size_t>(hit)];
    if (!clearing && recovery_for(pattern)) continue;
    check_log(pattern, clearing, event, out);
  }
}

void PatternMatcher::observe(const KpiObservation& observation, std::vector<FaultMatch>& out) {
  ++stats_.kpi_observations;
  if (observation.entity.empty() || observation.entity.size() > limits_.max_entity_length ||
      !std::isfinite(observation.value)) {
    ++stats_.invalid;
    return;
  }
  const auto& compiled = *library_.compiled_;
  if (const auto it = compiled.kpi_exact.find(observation.metric); it != compiled.kpi_exact.end()) {
    for (const auto& [pattern, clearing] : it->second) check_kpi(pattern, clearing, observation, out);
  }
  for (const auto& [pattern, clearing] : compiled.kpi_glob) check_kpi(pattern, clearing, observation, out);
}

}  // namespace hsns::brain
