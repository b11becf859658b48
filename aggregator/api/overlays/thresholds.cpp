#include "api/overlays/thresholds.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace hsns::overlays {
namespace {

// An overlay graded by something other than thresholds (topology state, alarm severity).
Overlay plain(std::string id, std::string label, Grading grading, std::string what) {
  Overlay o;
  o.id = std::move(id);
  o.label = std::move(label);
  o.grading = grading;
  o.what = std::move(what);
  return o;
}

Overlay metric(std::string id, std::string label, std::string unit, Grading grading, double warn, double bad,
               std::string what, std::vector<std::string> metrics, Fold fold, std::string reading) {
  Overlay o;
  o.id = std::move(id);
  o.label = std::move(label);
  o.unit = std::move(unit);
  o.grading = grading;
  o.warn = warn;
  o.bad = bad;
  o.what = std::move(what);
  o.metrics = std::move(metrics);
  o.fold = fold;
  o.reading = std::move(reading);
  return o;
}

// "<prefix>0<suffix>" .. "<prefix>7<suffix>": the eight priorities or lanes.
std::vector<std::string> eight(const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> out;
  out.reserve(8);
  for (int n = 0; n < 8; ++n) {
    std::string name = prefix;
    name.append(std::to_string(n)).append(suffix);
    out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
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
    if (!is_metric(o)) continue;
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

const char* to_string(Fold f) {
  switch (f) {
    case Fold::sum:
      return "sum";
    case Fold::max:
      return "max";
    case Fold::min_dbm:
      return "min_dbm";
  }
  return "sum";
}

const char* kind_of(const Overlay& o) {
  switch (o.grading) {
    case Grading::state:
      return "state";
    case Grading::severity:
      return "alarms";
    case Grading::at_least:
    case Grading::above:
    case Grading::outside:
      return "metric";
  }
  return "metric";
}

bool is_metric(const Overlay& o) {
  return o.grading != Grading::state && o.grading != Grading::severity;
}

OverlaySettings default_overlays() {
  OverlaySettings out;
  out.push_back(plain("state", "Link state (topology)", Grading::state,
                      "the worst topology state of the links and of the devices at their ends"));
  out.push_back(plain("alarms", "Active alarms (worst severity)", Grading::severity,
                      "the worst severity of the active alarms of the ports and devices"));
  auto util = metric("util", "Utilisation", "%", Grading::at_least, 70, 90,
                     "the busier direction of the busier end against the link capacity",
                     {"rx_bytes_per_s", "tx_bytes_per_s", "if_in_octets_per_s", "if_out_octets_per_s"},
                     Fold::max, "% of the link capacity");
  util.scale = Scale::capacity_percent;
  out.push_back(util);
  out.push_back(metric("pfc", "PFC pauses", "/s", Grading::at_least, 1, 1000,
                       "PFC pause frames per second, every priority, both directions",
                       joined(eight("pfc_prio", "_rx_pause_per_s"), eight("pfc_prio", "_tx_pause_per_s")),
                       Fold::sum, "pause frames/s"));
  out.push_back(metric("ecn", "ECN / CNP", "/s", Grading::at_least, 1, 10000,
                       "ECN-marked RoCE packets and CNPs sent and handled per second",
                       {"np_ecn_marked_roce_packets_per_s", "np_cnp_sent_per_s", "rp_cnp_handled_per_s"},
                       Fold::sum, "ECN-marked packets + CNPs/s"));
  out.push_back(metric("drops", "Drops and errors", "/s", Grading::above, 0, 10,
                       "dropped, discarded and errored packets per second",
                       {"rx_errors_per_s", "tx_errors_per_s", "rx_dropped_per_s", "tx_dropped_per_s",
                        "port_rcv_errors_per_s", "port_xmit_discards_per_s", "if_in_errors_per_s",
                        "if_out_errors_per_s", "if_in_discards_per_s", "if_out_discards_per_s"},
                       Fold::sum, "drops + errors/s"));
  out.push_back(metric("fec", "FEC / BER", "/s", Grading::above, 0, 1,
                       "symbol errors (the bit errors the port sees) and uncorrectable FEC blocks per second",
                       {"symbol_error_per_s", "fec_uncorrectable_per_s"}, Fold::sum,
                       "symbol errors + uncorrectable FEC blocks/s"));
  auto optics =
      metric("optics", "Optics (receive power)", "dBm", Grading::outside, -8, -10,
             "the weakest lane's receive power", joined(eight("lane", "_rx_power_watts"), {"rx_power_dbm"}),
             Fold::min_dbm, "dBm (weakest lane)");
  optics.warn_high = 3;
  optics.bad_high = 4;
  out.push_back(optics);
  // Graded per hour (what an operator counts flaps in); 0.01/s before the thresholds were configurable.
  auto flaps =
      metric("flaps", "Flaps", "/h", Grading::above, 0, 36, "link downs and link error recoveries",
             {"link_downed_per_s", "link_error_recovery_per_s"}, Fold::sum, "link downs + recoveries/h");
  flaps.scale = Scale::per_hour;
  out.push_back(flaps);
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
      if (o.id == id && is_metric(o)) found = &o;
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
                     {"kind", kind_of(o)},
                     {"unit", o.unit},
                     {"grading", to_string(o.grading)},
                     {"thresholds", std::move(thresholds)},
                     {"describe", describe(o)}});
    if (is_metric(o)) {
      auto& item = items.back();
      item["metrics"] = o.metrics;
      item["fold"] = to_string(o.fold);
      item["reading"] = o.reading;
    }
  }
  return {{"items", std::move(items)}};
}

const Overlay* find_metric_overlay(const OverlaySettings& overlays, std::string_view id) {
  for (const auto& o : overlays) {
    if (is_metric(o) && o.id == id) return &o;
  }
  return nullptr;
}

}  // namespace hsns::overlays
