// Configuration of the aggregator's Prometheus sources (the `prometheus_sources:` section of
// aggregator.yaml; docs/brain.md "Prometheus source"): existing Prometheus servers
// whose query API the aggregator polls for KPIs, with the mapping of each query's series to entities and
// metrics.
//
// Contract: no section, no source. apply_prometheus_sources_yaml() reads the section (a list of sources);
// an unknown key, a wrong type, an out-of-range value or a bad template throws std::runtime_error naming
// the field ("prometheus_sources[1].queries[0].entity: ..."). Rules: names unique, 1..64 of
// [A-Za-z0-9_.-] (they label the metrics); url an absolute http:// or https:// URL; at most
// kMaxPrometheusSources sources and kMaxPrometheusQueries queries each; interval_ms 1000..86,400,000;
// timeout_ms 100..60,000 and below the interval; a bearer token file is read at once (first line) so a
// missing file fails the start and check-config. A template is text with {label} placeholders (label
// names as Prometheus allows: [A-Za-z_][A-Za-z0-9_]*; "{{" and "}}" are literal braces); the entity
// template needs at least one placeholder or text, the metric one is a KPI metric name after substitution.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hsns::ingest {

inline constexpr std::size_t kMaxPrometheusSources = 64;
inline constexpr std::size_t kMaxPrometheusQueries = 256;

enum class PrometheusSeriesType : std::uint8_t { gauge, counter };

struct PrometheusQueryConfig {
  std::string query;   // PromQL, evaluated as an instant query at the poll's time
  std::string entity;  // template, e.g. "{instance}/{ifName}"
  std::string metric;  // template or plain name, e.g. "if_in_octets_per_s"
  PrometheusSeriesType type = PrometheusSeriesType::gauge;  // counter: stored as a per-second rate
  std::size_t max_series = 10'000;  // series of one answer beyond it are dropped (counted)
};

struct PrometheusSourceConfig {
  std::string name;
  std::string url;  // base URL of the Prometheus server, e.g. "http://127.0.0.1:9090"
  std::chrono::milliseconds interval{15'000};
  std::chrono::milliseconds timeout{5'000};
  std::string bearer_token_file;
  std::string bearer_token;  // read from the file
  std::string ca_file;       // https: the CA bundle to verify the server against ("" = system store)
  std::vector<PrometheusQueryConfig> queries;
};

struct PrometheusSourcesConfig {
  std::vector<PrometheusSourceConfig> sources;
};

void apply_prometheus_sources_yaml(const YAML::Node& node, PrometheusSourcesConfig& config);

}  // namespace hsns::ingest
