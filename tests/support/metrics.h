// Prometheus text exposition (format 0.0.4) as tests read it: the samples of a /metrics body, looked up
// by metric name and labels.
//
// Contract:
// - parse() reads every sample line: a metric name, optional {label="value",...} (escapes \\ \" \n),
//   a value (a float, +Inf, -Inf or NaN) and an optional timestamp. Comment (# HELP, # TYPE) and blank
//   lines are skipped. A malformed line throws std::invalid_argument naming its line number and text.
// - find() matches the name and the whole label set (the order of labels does not matter); a
//   selector string is written as in the exposition: `name` or `name{label="value",...}`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hsns::testing {

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

class Exposition {
 public:
  static Exposition parse(const std::string& text);

  const std::vector<MetricSample>& samples() const { return samples_; }
  std::optional<double> find(const std::string& name, const std::map<std::string, std::string>& labels) const;
  std::optional<double> find(const std::string& selector) const;
  // Every sample of a metric name, whatever its labels.
  std::vector<MetricSample> all(const std::string& name) const;

 private:
  std::vector<MetricSample> samples_;
};

// One sample's value in an exposition text (selector as in Exposition::find); nullopt when absent.
std::optional<double> metric_value(const std::string& exposition_text, const std::string& selector);

}  // namespace hsns::testing
