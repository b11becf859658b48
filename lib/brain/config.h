// Detector configuration of the network brain: which incremental detectors run on a KPI series and with
// which parameters, per metric name, with overrides per entity glob. Schema and defaults in docs/brain.md.
//
// Contract: values only; parse/load are pure functions (load reads one file), thread-safe, never throw.
// A file is applied on top of the built-in defaults (default_brain_config): a metric the file names starts
// from the built-in entry of that name (or from an all-off gauge), and each detector section present in
// the file turns that detector on (unless it says `enabled: false`) and overrides only the keys it gives.
// An override starts from its metric's resolved configuration the same way. Errors are hsns::Error kind
// invalid with one field: the key path ("metrics.rx_power_dbm.threshold.below") and a reason that starts
// with "<file>:<line>:<column>:"; the first error stops the parse. Unknown keys are errors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsns/error.h"

namespace hsns::brain {

// gauge: detectors see the value. counter: a monotonic counter; detectors see its per-second rate, and
// resets and wraps are counted, never reported as anomalies.
enum class SeriesType : std::uint8_t { gauge, counter };

// Bounds of the per-series state every configuration must respect (memory per series is bounded by them).
inline constexpr std::uint32_t kMaxBaselineWindow = 256;
inline constexpr std::uint32_t kMaxLevelShiftWindow = 128;

// Robust baseline: median and MAD of the last `window` samples; score = |x - median| / (1.4826 MAD),
// the spread floored at min_spread. Raised at score >= raise, cleared below clear.
struct BaselineConfig {
  bool enabled = false;
  std::uint32_t window = 64;  // 3..kMaxBaselineWindow; scoring starts once the window is full
  double raise = 8;
  double clear = 4;
  double min_spread = 1e-9;  // > 0: a flat series' tiny moves do not score as infinite
};

// Rate of change: |d value / dt| per second for a gauge, the counter's rate for a counter. Raised when it
// exceeds max_per_s, cleared at or below clear_per_s (default: max_per_s).
struct RateConfig {
  bool enabled = false;
  double max_per_s = 0;
  std::optional<double> clear_per_s;
};

// Level shift: mean of the last `window` samples against the mean of the `window` before them, as a
// two-sample t statistic (spread floored at min_spread). Raised at score >= raise and |shift| >= min_shift,
// cleared below clear (the shifted level has then filled both windows).
struct LevelShiftConfig {
  bool enabled = false;
  std::uint32_t window = 16;  // 2..kMaxLevelShiftWindow
  double raise = 8;
  double clear = 3;
  double min_shift = 0;
  double min_spread = 1e-9;
};

// Counter burst: increments of a counter within the last window_s seconds (12 time buckets) above
// rate_per_s * window_s and at least min_count. Cleared when the window's rate is at or below
// rate_per_s * clear_ratio. Counters only.
struct BurstConfig {
  bool enabled = false;
  double window_s = 60;
  double rate_per_s = 1;
  double min_count = 1;
  double clear_ratio = 0.5;
};

// Threshold with duration: the series (a counter's rate) beyond `bound` continuously for at least for_s
// seconds. Cleared once back inside by `hysteresis` (below: value >= bound + hysteresis).
struct ThresholdConfig {
  enum class Direction : std::uint8_t { above, below };
  bool enabled = false;
  Direction direction = Direction::above;
  double bound = 0;
  bool bound_given = false;  // above or below was set
  double for_s = 0;
  double hysteresis = 0;
};

struct DetectorConfig {
  SeriesType type = SeriesType::gauge;
  std::uint8_t counter_bits = 0;  // 0: 32-bit wrap below 2^32, else 64-bit; 32 or 64: that width only
  BaselineConfig baseline;
  RateConfig rate;
  LevelShiftConfig level_shift;
  BurstConfig burst;
  ThresholdConfig threshold;

  bool any_enabled() const {
    return baseline.enabled || rate.enabled || level_shift.enabled || burst.enabled || threshold.enabled;
  }
};

// An override: series whose entity matches the glob (glob_match) and whose metric is
// `metric` use `config` instead of the metric's entry.
struct EntityOverride {
  std::string entity_glob;
  std::string metric;
  DetectorConfig config;
};

struct BrainConfig {
  std::map<std::string, DetectorConfig, std::less<>> metrics;
  // Metrics not listed: this configuration when given, else such series are not tracked.
  std::optional<DetectorConfig> fallback;
  std::vector<EntityOverride> overrides;  // the first match wins

  // The configuration of a series, nullptr when its metric is not tracked. Stable while *this lives.
  const DetectorConfig* resolve(std::string_view entity, std::string_view metric) const;
};

// `*` matches any run of characters, `?` exactly one, `[a-z0-9]` one of a class (`[!...]` or `[^...]`
// one not in it; a `]` first in the class is literal); everything else literally.
bool glob_match(std::string_view glob, std::string_view text);

// The built-in per-metric defaults (docs/brain.md lists them).
BrainConfig default_brain_config();
// `source` names the text in errors (a file name).
Result<BrainConfig> parse_brain_config(std::string_view text, std::string_view source);
Result<BrainConfig> load_brain_config(const std::string& path);

}  // namespace hsns::brain
