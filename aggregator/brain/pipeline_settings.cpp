#include "brain/pipeline_settings.h"

#include <filesystem>
#include <stdexcept>

#include "yaml_fields.h"

namespace hsns::brain_pipeline {
namespace {

std::string read_path(const YAML::Node& n, const std::string& key) {
  auto path = yaml_fields::read_text(n, key);
  if (path.empty()) throw std::runtime_error(key + ": must not be empty");
  return path;
}

}  // namespace

void apply_brain_yaml(const YAML::Node& node, BrainSettings& c) {
  if (!node.IsMap()) throw std::runtime_error("brain: must be a map");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "brain." + key;
    if (key == "enabled") {
      c.enabled = v.as<bool>();
    } else if (key == "patterns_dir") {
      c.patterns_dir = read_path(v, where);
    } else if (key == "detector_config") {
      c.detector_config = read_path(v, where);
    } else if (key == "queue_capacity") {
      c.queue_capacity = yaml_fields::read_size(v, where, 1, 16'777'216);
    } else if (key == "max_series") {
      c.max_series = yaml_fields::read_size(v, where, 1, 10'000'000);
    } else if (key == "max_states") {
      c.max_states = yaml_fields::read_size(v, where, 1, 10'000'000);
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

std::string default_patterns_dir() {
  std::error_code ec;
  if (std::filesystem::is_directory(HSNS_INSTALLED_PATTERNS_DIR, ec)) return HSNS_INSTALLED_PATTERNS_DIR;
#ifdef HSNS_SOURCE_PATTERNS_DIR
  if (std::filesystem::is_directory(HSNS_SOURCE_PATTERNS_DIR, ec)) return HSNS_SOURCE_PATTERNS_DIR;
#endif
  return HSNS_INSTALLED_PATTERNS_DIR;
}

std::string patterns_dir(const BrainSettings& settings) {
  return settings.patterns_dir.empty() ? default_patterns_dir() : settings.patterns_dir;
}

}  // namespace hsns::brain_pipeline
