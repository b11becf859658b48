#include "api/overlays/thresholds.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace hsns::overlays {
namespace {

Overlay metric(std::string id, std::string label, std::string unit, Grading grading, double warn, double bad,
               std::string what) {
  Overlay o;
  o.id = std::move(id);
  o.label = std::move(label);
  o.kind = "metric";
  o.unit = std::move(unit);
  o.grading = grading;
  o.warn = warn;
  o.bad = bad;
  o.what = std::move(what);
  return o;
}

// The shortest text that reads back as `v`, integers grouped by thousands ("10,000") as the notes
// always wrote them.
std::string number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string text(buf, ec == std::errc() ? end : buf);
  if (v != std::floor(v) || std::fabs(v) < 1000 || text.find_first_of("e.") != std::string::npos) return text;
  const std::size_t first = text[0] == '-' ? 1 : 0;
  for (auto i = static_cast<std::ptrdiff_t>(text.size()) - 3; i > static_cast<std::ptrdiff_t>(first); i -= 3)
    text.insert(static_cast<std::size_t>(i), ",");
  return text;
}

// "70 %", "1,000/s", "-10 dBm": a word-like unit gets a space, a rate none.
std::string with_unit(double v, const std::string& unit) {
  if (unit.empty() || unit[0] == '/') return number_text(v) + unit;
  return number_text(v) + " " + unit;
}

double read_number(const YAML::Node& n, const std::string& where) {
  double v = 0;
  try {
    if (!n.IsScalar()) throw std::runtime_error("");
    v = n.as<double>();
  } catch (const std::exception&) {
    throw std::runtime_error(where + ": must be a number");
  }
  if (!std::isfinite(v)) throw std::runtime_error(where + ": must be a finite number");
  return v;
}

std::string known_ids(const OverlaySettings& overlays) {
  std::string out;
  for (const auto& o : overlays) {
    if (o.kind != "metric") continue;
    if (!out.empty()) out += ", ";
    out += o.id;
  }
  return out;
}

void apply_entry(const YAML::Node& node, Overlay& o, const std::string& where) {
  if (!node.IsMap()) throw std::runtime_error(where + ": must be a map of thresholds");
  const bool band = o.grading == Grading::outside;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    std::string field = where;
    field.append(".").append(key);
    double* target = nullptr;
    if (!band && key == "warn") target = &o.warn;
    if (!band && key == "bad") target = &o.bad;
    if (band && key == "warn_low") target = &o.warn;
    if (band && key == "bad_low") target = &o.bad;
    if (band && key == "warn_high") target = &o.warn_high;
    if (band && key == "bad_high") target = &o.bad_high;
    if (target == nullptr) {
      throw std::runtime_error("unknown key '" + field + "' (" +
                               (band ? "warn_low, bad_low, warn_high, bad_high" : "warn, bad") + ")");
    }
    *target = read_number(kv.second, field);
    if (!band && *target < 0) throw std::runtime_error(field + ": must not be negative");
  }
  // Named by the pair: either of the two may be the one the operator got wrong.
  const auto order = [&where](const char* low, double a, const char* high, double b, const char* why) {
    throw std::runtime_error(where + "." + low + " (" + number_text(a) + ") and " + where + "." + high +
                             " (" + number_text(b) + "): " + why);
  };
  if (band) {
    if (o.bad > o.warn) order("bad_low", o.bad, "warn_low", o.warn, "bad_low must not be above warn_low");
    if (o.warn >= o.warn_high)
      order("warn_low", o.warn, "warn_high", o.warn_high, "warn_low must be below warn_high");
    if (o.warn_high > o.bad_high)
      order("warn_high", o.warn_high, "bad_high", o.bad_high, "bad_high must not be below warn_high");
  } else if (o.warn > o.bad) {
    order("warn", o.warn, "bad", o.bad, "higher is worse, so warn must not be above bad");
  }
}

}  // namespace

const char* to_string(Grading g) {
  switch (g) {
    case Grading::state:
      return "state";
    case Grading::severity:
      return "severity";
    case Grading::at_least:
      return "at_least";
    case Grading::above:
      return "above";
    case Grading::outside:
      return "outside";
  }
  return "state";
}

OverlaySettings default_overlays() {
  OverlaySettings out;
  Overlay state;
  state.id = "state";
  state.label = "Link state (topology)";
  state.kind = "state";
  state.grading = Grading::state;
  state.what = "the worst topology state of the links and of the devices at their ends";
  out.push_back(state);
  Overlay alarms;
  alarms.id = "alarms";
  alarms.label = "Active alarms (worst severity)";
  alarms.kind = "alarms";
  alarms.grading = Grading::severity;
  alarms.what = "the worst severity of the active alarms of the ports and devices";
  out.push_back(alarms);
  out.push_back(metric("util", "Utilisation", "%", Grading::at_least, 70, 90,
                       "the busier direction of the busier end against the link capacity"));
  out.push_back(metric("pfc", "PFC pauses", "/s", Grading::at_least, 1, 1000,
                       "PFC pause frames per second, every priority, both directions"));
  out.push_back(metric("ecn", "ECN / CNP", "/s", Grading::at_least, 1, 10000,
                       "ECN-marked RoCE packets and CNPs sent and handled per second"));
  out.push_back(metric("drops", "Drops and errors", "/s", Grading::above, 0, 10,
                       "dropped, discarded and errored packets per second"));
  out.push_back(
      metric("fec", "FEC / BER", "/s", Grading::above, 0, 1,
             "symbol errors (the bit errors the port sees) and uncorrectable FEC blocks per second"));
  auto optics = metric("optics", "Optics (receive power)", "dBm", Grading::outside, -8, -10,
                       "the weakest lane's receive power");
  optics.warn_high = 3;
  optics.bad_high = 4;
  out.push_back(optics);
  // Graded per hour (what an operator counts flaps in); 0.01/s before the thresholds were configurable.
  out.push_back(
      metric("flaps", "Flaps", "/h", Grading::above, 0, 36, "link downs and link error recoveries"));
  return out;
}

void apply_overlays_yaml(const YAML::Node& node, OverlaySettings& overlays) {
  if (node.IsNull()) return;
  if (!node.IsMap()) throw std::runtime_error("overlays: must be a map of overlay ids to thresholds");
  for (const auto& kv : node) {
    const auto id = kv.first.as<std::string>();
    const std::string where = "overlays." + id;
    Overlay* found = nullptr;
    for (auto& o : overlays) {
      if (o.id == id && o.kind == "metric") found = &o;
    }
    if (found == nullptr) {
      throw std::runtime_error("unknown key '" + where + "': not an overlay with thresholds (" +
                               known_ids(overlays) + ")");
    }
    apply_entry(kv.second, *found, where);
  }
}

std::string describe(const Overlay& o) {
  const auto v = [&o](double x) { return with_unit(x, o.unit); };
  switch (o.grading) {
    case Grading::state:
    case Grading::severity:
      return o.what;
    case Grading::at_least:
      return o.what + " (warning from " + v(o.warn) + ", bad from " + v(o.bad) + ")";
    case Grading::above:
      return o.what + " (warning above " + v(o.warn) + ", bad above " + v(o.bad) + ")";
    case Grading::outside:
      return o.what + " (bad below " + v(o.bad) + " or above " + v(o.bad_high) + ", warning below " +
             v(o.warn) + " or above " + v(o.warn_high) + ")";
  }
  return o.what;
}

nlohmann::json overlays_json(const OverlaySettings& overlays) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& o : overlays) {
    nlohmann::json thresholds = nullptr;
    if (o.grading == Grading::outside) {
      thresholds = {
          {"warn_low", o.warn}, {"bad_low", o.bad}, {"warn_high", o.warn_high}, {"bad_high", o.bad_high}};
    } else if (o.grading == Grading::at_least || o.grading == Grading::above) {
      thresholds = {{"warn", o.warn}, {"bad", o.bad}};
    }
    items.push_back({{"id", o.id},
                     {"label", o.label},
                     {"kind", o.kind},
                     {"unit", o.unit},
                     {"grading", to_string(o.grading)},
                     {"thresholds", std::move(thresholds)},
                     {"describe", describe(o)}});
  }
  return {{"items", std::move(items)}};
}

}  // namespace hsns::overlays
