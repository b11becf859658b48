// Configuration of the alarm service and of the Alertmanager push: the `alarms:` and `alertmanager:`
// sections of aggregator.yaml (docs/configuration.md, docs/brain.md "Alarms").
//
// Contract: apply_alarms_yaml / apply_alertmanager_yaml read their section onto the defaults; an unknown key,
// a wrong type or an out-of-range value throws std::runtime_error naming the key ("alarms.hold_down_ms: must
// be between 0 and 604800000"). The push is off unless alertmanager.urls lists at least one URL; each must
// be an absolute http(s) URL (the base: "/api/v2/alerts" is appended).
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "brain/alarms.h"

namespace hsns::alarms {

struct AlarmServiceOptions {
  brain::AlarmOptions engine;
  std::chrono::milliseconds retention{std::chrono::hours(24 * 30)};  // cleared alarms kept in the store
  std::chrono::milliseconds tick_interval{1000};
};

struct AlertmanagerConfig {
  std::vector<std::string> urls;  // Alertmanager base URLs ("http://127.0.0.1:9093")
  std::string external_url;  // generatorURL = external_url + "/api/v1/alarms/<id>"; "" = the listen address
  std::chrono::milliseconds resend_interval{60'000};  // active alerts are sent again this often
  std::chrono::milliseconds timeout{10'000};          // per POST
  std::size_t batch_max = 64;                         // alerts per POST
  std::size_t queue_max = 10'000;                     // alerts waiting per URL; more are dropped (counted)
  std::size_t max_active = 100'000;                   // firing alerts remembered for the re-send
  std::chrono::milliseconds backoff_min{500};         // retry delay after a failure, doubling ...
  std::chrono::milliseconds backoff_max{30'000};      // ... up to this
};

void apply_alarms_yaml(const YAML::Node& node, AlarmServiceOptions& options);
void apply_alertmanager_yaml(const YAML::Node& node, AlertmanagerConfig& config);

}  // namespace hsns::alarms
