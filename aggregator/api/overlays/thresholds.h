// The dashboard's overlays and the thresholds its metric overlays grade by: the `overlays:` section of
// aggregator.yaml (docs/configuration.md) and the answer of GET /api/v1/overlays (docs/rest-api.md,
// "Overlays"; web/src/overlay.ts grades and describes with it).
//
// Contract:
// - default_overlays() lists every overlay the dashboard offers, in its order: "state" and "alarms"
//   (graded by topology state and alarm severity: no thresholds), then the metric overlays util, pfc,
//   ecn, drops, fec, optics and flaps with the thresholds the dashboard always used. Each metric overlay
//   grades one way, fixed here:
//     at_least  warning from `warn`, bad from `bad` (value >= threshold)        util, pfc, ecn
//     above     warning above `warn`, bad above `bad` (value > threshold)       drops, fec, flaps
//     outside   bad below `bad_low` or above `bad_high`, warning below          optics
//               `warn_low` or above `warn_high`
//   in the overlay's unit (util: % of the link capacity; flaps: per hour; optics: dBm).
// - Each metric overlay also carries what it is graded from (api/overlays/grades.h grades with it; the
//   dashboard only paints): `metrics`, the KPI metrics read (docs/brain.md's names), `fold`, how an
//   entity's metrics fold into one number (sum, max, or min_dbm: the lowest receive power, a `_watts`
//   metric turned into dBm first) and how a link's two ends fold (the worse end: the larger value, the
//   lower power for min_dbm), `scale`, how the folded value becomes the thresholds' unit (capacity_percent:
//   bytes/s against the link's capacity; per_hour: x 3600; none), and `reading`, the words after a value
//   ("pause frames/s").
// - apply_overlays_yaml(node, overlays) sets thresholds per overlay id ({util: {warn: 60, bad: 85}}); a
//   field left out keeps its value. It throws std::runtime_error whose message names the field
//   ("overlays.util.bad: ...") for: a section or entry that is not a map, an id that is not a metric
//   overlay, a field the overlay's grading does not have, a value that is not a finite number, a
//   negative threshold of a rate or utilisation, and thresholds out of order (at_least/above: warn <=
//   bad; outside: bad_low <= warn_low < warn_high <= bad_high), checked once the whole entry is read
//   (defaults filled in) and naming both fields with their values.
// - describe(o) says what the overlay colours with the thresholds it holds (the dashboard's note);
//   overlays_json() is GET /api/v1/overlays' answer ({"items": [...]}, schema Overlays: with each metric
//   overlay's metrics, fold and reading).
// - find_metric_overlay(overlays, id) is the metric overlay of that id, nullptr for another id.
// Values only; thread-safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace hsns::overlays {

enum class Grading { state, severity, at_least, above, outside };
const char* to_string(Grading g);
enum class Fold { sum, max, min_dbm };
const char* to_string(Fold f);
enum class Scale { none, capacity_percent, per_hour };

struct Overlay {
  std::string id;
  std::string label;
  std::string unit;  // of the thresholds ("" for state and alarms)
  Grading grading = Grading::state;
  // at_least / above: warn, bad. outside: warn (warn_low), bad (bad_low), warn_high, bad_high.
  double warn = 0;
  double bad = 0;
  double warn_high = 0;
  double bad_high = 0;
  std::string what;  // what the colour shows, before the thresholds ("PFC pause frames per second, ...")
  // Metric overlays: what is graded (see above); empty / sum / none for state and alarms.
  std::vector<std::string> metrics;
  Fold fold = Fold::sum;
  Scale scale = Scale::none;
  std::string reading;
};

using OverlaySettings = std::vector<Overlay>;

// What the overlay colours by, from its grading: "state", "alarms" or "metric" (graded by thresholds).
const char* kind_of(const Overlay& o);
bool is_metric(const Overlay& o);

OverlaySettings default_overlays();
void apply_overlays_yaml(const YAML::Node& node, OverlaySettings& overlays);
std::string describe(const Overlay& o);
nlohmann::json overlays_json(const OverlaySettings& overlays);
const Overlay* find_metric_overlay(const OverlaySettings& overlays, std::string_view id);

}  // namespace hsns::overlays
