// Scalar fields of the aggregator's YAML configuration sections (syslog, snmp, prometheus_sources, brain).
// Contract: each reader returns the value or throws std::runtime_error whose message starts with `where`, the
// field's path as the operator wrote it ("snmp.switches[2].port"), and says what the field must be; the
// configuration loader turns that message into its refusal. Integers are read as integers only (a float or a
// word is "must be an integer"), then checked against the inclusive range [min, max].
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace hsns::yaml_fields {

inline long long read_integer(const YAML::Node& n, const std::string& where, long long min, long long max) {
  long long v = 0;
  try {
    v = n.as<long long>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(where + ": must be an integer");
  }
  if (v < min || v > max) {
    throw std::runtime_error(where + ": must be between " + std::to_string(min) + " and " +
                             std::to_string(max));
  }
  return v;
}

// A count or size: read_integer with a non-negative range.
inline std::size_t read_size(const YAML::Node& n, const std::string& where, long long min, long long max) {
  return static_cast<std::size_t>(read_integer(n, where, min, max));
}

inline std::string read_text(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) throw std::runtime_error(where + ": must be a string");
  return n.as<std::string>();
}

}  // namespace hsns::yaml_fields
