#include "ingest/prometheus_config.h"

#include <fstream>
#include <set>
#include <stdexcept>

#include "ingest/prometheus_response.h"
#include "store/kpi_store.h"
#include "yaml_fields.h"

namespace hsns::ingest {
namespace {

using yaml_fields::read_text;

bool is_source_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

PrometheusQueryConfig read_query(const YAML::Node& node, const std::string& at) {
  if (!node.IsMap()) throw std::runtime_error(at + ": must be a map");
  PrometheusQueryConfig q;
  bool has_entity = false;
  bool has_metric = false;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    std::string where = at;
    where.append(".").append(key);
    if (key == "query") {
      q.query = read_text(kv.second, where);
      if (q.query.empty() || q.query.size() > 4096)
        throw std::runtime_error(where + ": must be 1 to 4096 characters of PromQL");
    } else if (key == "entity") {
      q.entity = read_text(kv.second, where);
      has_entity = true;
      if (q.entity.empty() || q.entity.size() > 512 || !valid_template(q.entity))
        throw std::runtime_error(where +
                                 ": must be a template of 1 to 512 characters with {label} placeholders "
                                 "(label names [A-Za-z_][A-Za-z0-9_]*; {{ and }} for braces)");
    } else if (key == "metric") {
      q.metric = read_text(kv.second, where);
      has_metric = true;
      if (q.metric.empty() || q.metric.size() > 256 || !valid_template(q.metric))
        throw std::runtime_error(where +
                                 ": must be a KPI metric name or a template with {label} placeholders");
      if (q.metric.find('{') == std::string::npos && !store::is_kpi_metric(q.metric))
        throw std::runtime_error(where +
                                 ": must be 1 to 128 characters of A-Z a-z 0-9 _ . : starting with a "
                                 "letter or _");
    } else if (key == "type") {
      const auto t = read_text(kv.second, where);
      if (t == "gauge") {
        q.type = PrometheusSeriesType::gauge;
      } else if (t == "counter") {
        q.type = PrometheusSeriesType::counter;
      } else {
        throw std::runtime_error(where + ": must be gauge or counter");
      }
    } else if (key == "max_series") {
      q.max_series = yaml_fields::read_size(kv.second, where, 1, 1'000'000);
    } else {
      throw std::runtime_error(std::string(at).append(": unknown key '").append(key).append("'"));
    }
  }
  if (q.query.empty()) throw std::runtime_error(at + ".query: is required");
  if (!has_entity) throw std::runtime_error(at + ".entity: is required");
  if (!has_metric) throw std::runtime_error(at + ".metric: is required");
  return q;
}

PrometheusSourceConfig read_source(const YAML::Node& node, const std::string& at) {
  if (!node.IsMap()) throw std::runtime_error(at + ": must be a map");
  PrometheusSourceConfig s;
  bool has_queries = false;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    std::string where = at;
    where.append(".").append(key);
    if (key == "name") {
      s.name = read_text(kv.second, where);
      if (!is_source_name(s.name))
        throw std::runtime_error(where + ": must be 1 to 64 characters of [A-Za-z0-9_.-]");
    } else if (key == "url") {
      s.url = read_text(kv.second, where);
      const bool http = s.url.rfind("http://", 0) == 0 && s.url.size() > 7;
      const bool https = s.url.rfind("https://", 0) == 0 && s.url.size() > 8;
      if (!http && !https) throw std::runtime_error(where + ": must be an http:// or https:// URL");
    } else if (key == "interval_ms") {
      s.interval = std::chrono::milliseconds(yaml_fields::read_integer(kv.second, where, 1000, 86'400'000));
    } else if (key == "timeout_ms") {
      s.timeout = std::chrono::milliseconds(yaml_fields::read_integer(kv.second, where, 100, 60'000));
    } else if (key == "bearer_token_file") {
      s.bearer_token_file = read_text(kv.second, where);
      std::ifstream in(s.bearer_token_file);
      if (!in) throw std::runtime_error(where + ": cannot read '" + s.bearer_token_file + "'");
      std::getline(in, s.bearer_token);
      if (s.bearer_token.empty())
        throw std::runtime_error(where + ": '" + s.bearer_token_file + "' holds no token");
    } else if (key == "ca_file") {
      s.ca_file = read_text(kv.second, where);
    } else if (key == "queries") {
      if (!kv.second.IsSequence() || kv.second.size() == 0)
        throw std::runtime_error(where + ": must be a list of at least one query");
      if (kv.second.size() > kMaxPrometheusQueries)
        throw std::runtime_error(where + ": at most " + std::to_string(kMaxPrometheusQueries) + " queries");
      for (std::size_t i = 0; i < kv.second.size(); ++i)
        s.queries.push_back(read_query(kv.second[i], where + "[" + std::to_string(i) + "]"));
      has_queries = true;
    } else {
      throw std::runtime_error(std::string(at).append(": unknown key '").append(key).append("'"));
    }
  }
  if (s.name.empty()) throw std::runtime_error(at + ".name: is required");
  if (s.url.empty()) throw std::runtime_error(at + ".url: is required");
  if (!has_queries) throw std::runtime_error(at + ".queries: is required");
  if (s.timeout >= s.interval) throw std::runtime_error(at + ".timeout_ms: must be below interval_ms");
  return s;
}

}  // namespace

void apply_prometheus_sources_yaml(const YAML::Node& node, PrometheusSourcesConfig& config) {
  const std::string at = "prometheus_sources";
  if (node.IsNull()) return;
  if (!node.IsSequence()) throw std::runtime_error(at + ": must be a list of sources");
  if (node.size() > kMaxPrometheusSources)
    throw std::runtime_error(at + ": at most " + std::to_string(kMaxPrometheusSources) + " sources");
  config.sources.clear();
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string where = at + "[" + std::to_string(i) + "]";
    auto source = read_source(node[i], where);
    if (!names.insert(source.name).second)
      throw std::runtime_error(where + ".name: '" + source.name + "' is used by an earlier source");
    config.sources.push_back(std::move(source));
  }
}

}  // namespace hsns::ingest
