#include "brain/alarm_config.h"

#include <stdexcept>

namespace hsns::alarms {
namespace {

constexpr long long kWeekMs = 7LL * 86'400'000;

long long integer(const YAML::Node& n, const std::string& where, long long min, long long max) {
  long long v = 0;
  try {
    v = n.as<long long>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(where + ": must be an integer");
  }
  if (v < min || v > max)
    throw std::runtime_error(where + ": must be between " + std::to_string(min) + " and " +
                             std::to_string(max));
  return v;
}

bool is_http_url(const std::string& url) {
  for (const char* scheme : {"http://", "https://"}) {
    const std::string s(scheme);
    if (url.size() > s.size() && url.compare(0, s.size(), s) == 0) return true;
  }
  return false;
}

}  // namespace

void apply_alarms_yaml(const YAML::Node& node, AlarmServiceOptions& o) {
  if (!node.IsMap()) throw std::runtime_error("alarms: must be a map");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "alarms." + key;
    auto& e = o.engine;
    if (key == "max_alarms") {
      e.max_alarms = static_cast<std::size_t>(integer(v, where, 1, 10'000'000));
    } else if (key == "max_silences") {
      e.max_silences = static_cast<std::size_t>(integer(v, where, 1, 100'000));
    } else if (key == "update_interval_ms") {
      e.update_interval_ms = integer(v, where, 0, kWeekMs);
    } else if (key == "reopen_window_ms") {
      e.reopen_window_ms = integer(v, where, 0, kWeekMs);
    } else if (key == "flap_transitions") {
      e.flap_transitions = static_cast<std::uint32_t>(integer(v, where, 2, brain::kMaxFlapTransitions));
    } else if (key == "flap_window_ms") {
      e.flap_window_ms = integer(v, where, 1, kWeekMs);
    } else if (key == "hold_down_ms") {
      e.hold_down_ms = integer(v, where, 0, kWeekMs);
    } else if (key == "oneshot_clear_ms") {
      e.oneshot_clear_ms = integer(v, where, 1, kWeekMs);
    } else if (key == "retention_days") {
      o.retention = std::chrono::hours(24 * integer(v, where, 1, 3650));
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

void apply_alertmanager_yaml(const YAML::Node& node, AlertmanagerConfig& c) {
  if (!node.IsMap()) throw std::runtime_error("alertmanager: must be a map");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "alertmanager." + key;
    if (key == "urls") {
      if (!v.IsSequence()) throw std::runtime_error(where + ": must be a list of URLs");
      std::vector<std::string> urls;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!v[i].IsScalar()) throw std::runtime_error(at + ": must be a URL");
        auto url = v[i].as<std::string>();
        while (!url.empty() && url.back() == '/') url.pop_back();
        if (!is_http_url(url)) throw std::runtime_error(at + ": must be an http:// or https:// URL");
        urls.push_back(std::move(url));
      }
      if (urls.size() > 16) throw std::runtime_error(where + ": at most 16 URLs");
      c.urls = std::move(urls);
    } else if (key == "external_url") {
      if (!v.IsScalar()) throw std::runtime_error(where + ": must be a URL");
      auto url = v.as<std::string>();
      while (!url.empty() && url.back() == '/') url.pop_back();
      if (!is_http_url(url)) throw std::runtime_error(where + ": must be an http:// or https:// URL");
      c.external_url = std::move(url);
    } else if (key == "resend_interval_ms") {
      c.resend_interval = std::chrono::milliseconds(integer(v, where, 100, 3'600'000));
    } else if (key == "timeout_ms") {
      c.timeout = std::chrono::milliseconds(integer(v, where, 100, 600'000));
    } else if (key == "batch_max") {
      c.batch_max = static_cast<std::size_t>(integer(v, where, 1, 10'000));
    } else if (key == "queue_max") {
      c.queue_max = static_cast<std::size_t>(integer(v, where, 1, 10'000'000));
    } else if (key == "backoff_min_ms") {
      c.backoff_min = std::chrono::milliseconds(integer(v, where, 1, 3'600'000));
    } else if (key == "backoff_max_ms") {
      c.backoff_max = std::chrono::milliseconds(integer(v, where, 1, 3'600'000));
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
  if (c.backoff_max < c.backoff_min)
    throw std::runtime_error("alertmanager.backoff_max_ms: below backoff_min_ms");
}

}  // namespace hsns::alarms
