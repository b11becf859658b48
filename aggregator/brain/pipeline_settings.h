// The `brain:` section of aggregator.yaml: the live pipeline of the network brain (brain/engine.h;
// docs/configuration.md, "Network brain").
//
// Contract: apply_brain_yaml() reads the section's keys (an unknown key or an out-of-range value throws
// std::runtime_error naming "brain.<key>"). patterns_dir "" means default_patterns_dir(): the installed
// library (<prefix>/share/hsns/patterns) when it exists, else, in a build tree, the repository's patterns/
// (so a development binary runs without an install). detector_config "" means the built-in detector
// defaults (lib/brain/config.h), else a YAML file read by load_brain_config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace hsns::brain_pipeline {

struct BrainSettings {
  bool enabled = true;
  std::string patterns_dir;     // "" : default_patterns_dir()
  std::string detector_config;  // "" : built-in defaults
  std::size_t queue_capacity = 262'144;
  std::size_t max_series = 100'000;  // detector bank
  std::size_t max_states = 100'000;  // pattern matcher
};

void apply_brain_yaml(const YAML::Node& node, BrainSettings& settings);
std::string default_patterns_dir();
// The directory the settings name (patterns_dir, else the default).
std::string patterns_dir(const BrainSettings& settings);

}  // namespace hsns::brain_pipeline
