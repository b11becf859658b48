#include "brain/config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <initializer_list>

#include "brain/yaml_reader.h"

namespace hsns::brain {
namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr double kMaxBurstWindowS = 86'400;

const std::initializer_list<std::string_view> kDetectorKeys = {
    "type", "counter_bits", "baseline", "rate", "level_shift", "burst", "threshold"};

// Reads one document into configurations; the first problem is kept and every step after it stops.
class Parser : public YamlReader {
 public:
  using YamlReader::YamlReader;

  // A section's `enabled` key; a section present without it turns its detector on.
  bool read_enabled(const YAML::Node& section, const std::string& path, bool& out) {
    out = true;
    return read_bool(section, path, "enabled", out);
  }

  bool apply(const YAML::Node& map, const std::string& path, DetectorConfig& c,
             std::initializer_list<std::string_view> also = {}) {
    if (!check_keys(map, path, kDetectorKeys, also)) return false;
    if (const YAML::Node type = map["type"]) {
      if (type.IsScalar() && type.Scalar() == "gauge") {
        c.type = SeriesType::gauge;
      } else if (type.IsScalar() && type.Scalar() == "counter") {
        c.type = SeriesType::counter;
      } else {
        return fail(type, join(path, "type"), "must be gauge or counter");
      }
    }
    double bits = c.counter_bits;
    if (!read_number(map, path, "counter_bits", bits)) return false;
    if (bits != 0 && bits != 32 && bits != 64) {
      return fail(map["counter_bits"], join(path, "counter_bits"), "must be 0 (automatic), 32 or 64");
    }
    c.counter_bits = static_cast<std::uint8_t>(bits);
    return apply_baseline(map, path, c.baseline) && apply_rate(map, path, c.rate) &&
           apply_level_shift(map, path, c.level_shift) && apply_burst(map, path, c.burst) &&
           apply_threshold(map, path, c.threshold) && validate(map, path, c);
  }

  bool apply_baseline(const YAML::Node& parent, const std::string& parent_path, BaselineConfig& b) {
    const YAML::Node s = parent["baseline"];
    if (!s) return true;
    const std::string path = join(parent_path, "baseline");
    return check_keys(s, path, {"enabled", "window", "raise", "clear", "min_spread"}) &&
           read_enabled(s, path, b.enabled) && read_count(s, path, "window", b.window) &&
           read_number(s, path, "raise", b.raise) && read_number(s, path, "clear", b.clear) &&
           read_number(s, path, "min_spread", b.min_spread);
  }

  bool apply_rate(const YAML::Node& parent, const std::string& parent_path, RateConfig& r) {
    const YAML::Node s = parent["rate"];
    if (!s) return true;
    const std::string path = join(parent_path, "rate");
    if (!check_keys(s, path, {"enabled", "max_per_s", "clear_per_s"}) || !read_enabled(s, path, r.enabled) ||
        !read_number(s, path, "max_per_s", r.max_per_s)) {
      return false;
    }
    if (s["clear_per_s"]) {
      double v = 0;
      if (!read_number(s, path, "clear_per_s", v)) return false;
      r.clear_per_s = v;
    }
    return true;
  }

  bool apply_level_shift(const YAML::Node& parent, const std::string& parent_path, LevelShiftConfig& l) {
    const YAML::Node s = parent["level_shift"];
    if (!s) return true;
    const std::string path = join(parent_path, "level_shift");
    return check_keys(s, path, {"enabled", "window", "raise", "clear", "min_shift", "min_spread"}) &&
           read_enabled(s, path, l.enabled) && read_count(s, path, "window", l.window) &&
           read_number(s, path, "raise", l.raise) && read_number(s, path, "clear", l.clear) &&
           read_number(s, path, "min_shift", l.min_shift) && read_number(s, path, "min_spread", l.min_spread);
  }

  bool apply_burst(const YAML::Node& parent, const std::string& parent_path, BurstConfig& b) {
    const YAML::Node s = parent["burst"];
    if (!s) return true;
    const std::string path = join(parent_path, "burst");
    return check_keys(s, path, {"enabled", "window_s", "rate_per_s", "min_count", "clear_ratio"}) &&
           read_enabled(s, path, b.enabled) && read_number(s, path, "window_s", b.window_s) &&
           read_number(s, path, "rate_per_s", b.rate_per_s) &&
           read_number(s, path, "min_count", b.min_count) &&
           read_number(s, path, "clear_ratio", b.clear_ratio);
  }

  bool apply_threshold(const YAML::Node& parent, const std::string& parent_path, ThresholdConfig& t) {
    const YAML::Node s = parent["threshold"];
    if (!s) return true;
    const std::string path = join(parent_path, "threshold");
    if (!check_keys(s, path, {"enabled", "above", "below", "for_s", "hysteresis"}) ||
        !read_enabled(s, path, t.enabled)) {
      return false;
    }
    if (s["above"] && s["below"]) return fail(s, path, "give either above or below, not both");
    if (s["above"]) {
      t.direction = ThresholdConfig::Direction::above;
      if (!read_number(s, path, "above", t.bound)) return false;
    } else if (s["below"]) {
      t.direction = ThresholdConfig::Direction::below;
      if (!read_number(s, path, "below", t.bound)) return false;
    } else if (t.enabled && !t.bound_given) {
      return fail(s, path, "needs above or below");
    }
    t.bound_given = true;
    return read_number(s, path, "for_s", t.for_s) && read_number(s, path, "hysteresis", t.hysteresis);
  }

  // The merged configuration's rules; errors point at the section that breaks them.
  bool validate(const YAML::Node& map, const std::string& path, const DetectorConfig& c) {
    // The offending key's value when the file gives it, else its section, else the whole entry.
    const auto at = [&](std::string_view section, std::string_view key = {}) {
      const YAML::Node s = map[std::string(section)];
      if (!s) return map;
      if (key.empty() || !s.IsMap()) return s;
      const YAML::Node k = s[std::string(key)];
      return k ? k : s;
    };
    const auto bad = [&](std::string_view section, std::string_view key, const std::string& reason) {
      return fail(at(section, key), join(join(path, section), key), reason);
    };
    if (const auto& b = c.baseline; b.enabled) {
      if (b.window < 3 || b.window > kMaxBaselineWindow) {
        return bad("baseline", "window", "must be 3.." + std::to_string(kMaxBaselineWindow));
      }
      if (!(b.raise > 0) || !(b.clear >= 0) || b.clear > b.raise) {
        return bad("baseline", "clear", "needs 0 <= clear <= raise and raise > 0");
      }
      if (!(b.min_spread > 0)) return bad("baseline", "min_spread", "must be > 0");
    }
    if (const auto& r = c.rate; r.enabled) {
      if (!(r.max_per_s > 0)) return bad("rate", "max_per_s", "must be > 0");
      if (r.clear_per_s && (*r.clear_per_s < 0 || *r.clear_per_s > r.max_per_s)) {
        return bad("rate", "clear_per_s", "must be 0..max_per_s");
      }
    }
    if (const auto& l = c.level_shift; l.enabled) {
      if (l.window < 2 || l.window > kMaxLevelShiftWindow) {
        return bad("level_shift", "window", "must be 2.." + std::to_string(kMaxLevelShiftWindow));
      }
      if (!(l.raise > 0) || !(l.clear >= 0) || l.clear > l.raise) {
        return bad("level_shift", "clear", "needs 0 <= clear <= raise and raise > 0");
      }
      if (l.min_shift < 0) return bad("level_shift", "min_shift", "must be >= 0");
      if (!(l.min_spread > 0)) return bad("level_shift", "min_spread", "must be > 0");
    }
    if (const auto& b = c.burst; b.enabled) {
      if (c.type != SeriesType::counter) return fail(at("burst"), join(path, "burst"), "needs type: counter");
      if (!(b.window_s >= 0.012) || b.window_s > kMaxBurstWindowS) {
        return bad("burst", "window_s", "must be 0.012..86400");
      }
      if (b.rate_per_s < 0) return bad("burst", "rate_per_s", "must be >= 0");
      if (b.min_count < 0) return bad("burst", "min_count", "must be >= 0");
      if (b.clear_ratio < 0 || b.clear_ratio > 1) return bad("burst", "clear_ratio", "must be 0..1");
    }
    if (const auto& t = c.threshold; t.enabled) {
      if (!t.bound_given) return fail(at("threshold"), join(path, "threshold"), "needs above or below");
      if (t.for_s < 0) return bad("threshold", "for_s", "must be >= 0");
      if (t.hysteresis < 0) return bad("threshold", "hysteresis", "must be >= 0");
    }
    return true;
  }
};

DetectorConfig gauge() {
  return {};
}

DetectorConfig counter() {
  DetectorConfig c;
  c.type = SeriesType::counter;
  return c;
}

DetectorConfig threshold(DetectorConfig c, ThresholdConfig::Direction direction, double bound, double for_s,
                         double hysteresis) {
  c.threshold = {.enabled = true,
                 .direction = direction,
                 .bound = bound,
                 .bound_given = true,
                 .for_s = for_s,
                 .hysteresis = hysteresis};
  return c;
}

DetectorConfig burst(DetectorConfig c, double rate_per_s, double window_s, double min_count) {
  c.burst = {.enabled = true, .window_s = window_s, .rate_per_s = rate_per_s, .min_count = min_count};
  return c;
}

DetectorConfig level_shift(DetectorConfig c) {
  c.level_shift.enabled = true;
  return c;
}

DetectorConfig baseline(DetectorConfig c, double min_spread) {
  c.baseline.enabled = true;
  c.baseline.min_spread = min_spread;
  return c;
}

}  // namespace

namespace {

// Whether c is in the class that starts at glob[g] ('['), and where the class ends (one past ']').
// A class without its ']' is a literal '['.
bool class_match(std::string_view glob, std::size_t g, char c, std::size_t& end) {
  std::size_t i = g + 1;
  const bool negated = i < glob.size() && (glob[i] == '!' || glob[i] == '^');
  if (negated) ++i;
  bool found = false;
  const std::size_t first = i;
  for (; i < glob.size() && (glob[i] != ']' || i == first); ++i) {
    if (i + 2 < glob.size() && glob[i + 1] == '-' && glob[i + 2] != ']') {
      found = found || (glob[i] <= c && c <= glob[i + 2]);
      i += 2;
    } else {
      found = found || glob[i] == c;
    }
  }
  if (i >= glob.size()) {
    end = g + 1;
    return c == '[';
  }
  end = i + 1;
  return found != negated;
}

}  // namespace

bool glob_match(std::string_view glob, std::string_view text) {
  std::size_t g = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;  // the last '*' seen, and where its run started in text
  std::size_t star_text = 0;
  while (t < text.size()) {
    std::size_t next = g + 1;
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      star_text = t;
      continue;
    }
    if (g < glob.size() &&
        (glob[g] == '?' || (glob[g] == '[' ? class_match(glob, g, text[t], next) : glob[g] == text[t]))) {
      g = next;
      ++t;
    } else if (star != std::string_view::npos) {
      // Let the last '*' take one more character and try again from there.
      g = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

const DetectorConfig* BrainConfig::resolve(std::string_view entity, std::string_view metric) const {
  for (const EntityOverride& o : overrides) {
    if (o.metric == metric && glob_match(o.entity_glob, entity)) return &o.config;
  }
  if (auto it = metrics.find(metric); it != metrics.end()) return &it->second;
  return fallback ? &*fallback : nullptr;
}

BrainConfig default_brain_config() {
  using Direction = ThresholdConfig::Direction;
  BrainConfig b;
  // Optics: a weak receiver or an overheating module first, a sudden change of the level besides.
  // Readings are quantised (0.01 dB and coarser): a spread floor of 0.5 dB keeps a flat series' one-step
  // wiggles from scoring as infinite deviations.
  b.metrics["rx_power_dbm"] = baseline(threshold(gauge(), Direction::below, -10, 30, 0.5), 0.5);
  b.metrics["tx_power_dbm"] = baseline(threshold(gauge(), Direction::below, -8, 30, 0.5), 0.5);
  b.metrics["temperature_celsius"] = threshold(gauge(), Direction::above, 75, 60, 2);
  // Error counters: bursts of increments.
  b.metrics["symbol_error"] = burst(counter(), 1, 60, 10);
  b.metrics["port_rcv_errors"] = burst(counter(), 1, 60, 10);
  b.metrics["dot3_stats_fcs_errors"] = burst(counter(), 1, 60, 10);  // EtherLike-MIB: CRC errors received
  b.metrics["fec_uncorrectable_codewords"] = counter();
  b.metrics["out_of_sequence"] = burst(counter(), 20, 60, 1000);
  b.metrics["local_ack_timeout_err"] = burst(counter(), 1, 60, 60);
  b.metrics["out_of_buffer"] = burst(counter(), 10, 60, 100);
  b.metrics["link_downed"] = burst(counter(), 0, 300, 1);
  // Traffic counters: a change of the level of the byte rate.
  b.metrics["port_rcv_data"] = level_shift(counter());
  b.metrics["port_xmit_data"] = level_shift(counter());
  // The other cumulative counters the fabric reports: no detector of their own, but declared counters so
  // that a raw total (push API, SNMP, a replay) reaches the patterns as a per-second rate, as the daemons'
  // "_per_s" readings do. Untracked by the detector bank (no detector enabled).
  for (const char* name :
       {"port_xmit_packets", "port_rcv_packets", "link_error_recovery", "port_xmit_discards",
        "port_xmit_wait", "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored",
        "packet_seq_err", "implied_nak_seq_err", "rnr_nak_retry_err", "duplicate_request", "roce_adp_retrans",
        "roce_slow_restart", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors",
        "rx_dropped", "tx_dropped", "rx_discards_phy", "tx_discards_phy", "if_in_errors", "if_out_errors",
        "if_in_discards", "if_out_discards",
        // As switches count them (SNMP, gNMI, pushed polls): docs/brain.md "Device inputs".
        "if_in_octets", "if_out_octets", "fec_corrected_codewords", "pfc_wd_storm_detected",
        "ecn_marked_packets"}) {
    b.metrics.try_emplace(name, counter());
  }
  // IEEE 802.1Qbb pause frames per priority, received and sent (hsnsd's pfc_prio<N>_{rx,tx}_pause_per_s
  // arrive under the same names).
  for (int prio = 0; prio < 8; ++prio) {
    for (const char* dir : {"rx", "tx"}) {
      b.metrics.try_emplace("pfc_prio" + std::to_string(prio) + "_" + dir + "_pause_frames", counter());
    }
  }
  return b;
}

Result<BrainConfig> parse_brain_config(std::string_view text, std::string_view source) {
  if (text.size() > kMaxConfigBytes) {
    return tl::unexpected(
        Error::too_large(std::string(source) + ": over " + std::to_string(kMaxConfigBytes) + " bytes"));
  }
  auto loaded = load_yaml(text, source);
  if (!loaded) return tl::unexpected(std::move(loaded.error()));
  const YAML::Node root = *loaded;
  BrainConfig config = default_brain_config();
  Parser p(source);
  if (root.IsNull()) return config;
  try {
    if (!p.check_keys(root, "", {"metrics", "default", "overrides"})) return tl::unexpected(p.take_error());
    if (const YAML::Node metrics = root["metrics"]) {
      if (!metrics.IsMap()) {
        p.fail(metrics, "metrics", "must be a mapping of metric names");
        return tl::unexpected(p.take_error());
      }
      for (const auto& entry : metrics) {
        const std::string& name = entry.first.Scalar();
        DetectorConfig& c = config.metrics[name];  // a new name starts as an all-off gauge
        if (!p.apply(entry.second, "metrics." + name, c)) return tl::unexpected(p.take_error());
      }
    }
    if (const YAML::Node fallback = root["default"]) {
      DetectorConfig c;
      if (!p.apply(fallback, "default", c)) return tl::unexpected(p.take_error());
      config.fallback = c;
    }
    if (const YAML::Node overrides = root["overrides"]) {
      if (!overrides.IsSequence()) {
        p.fail(overrides, "overrides", "must be a list");
        return tl::unexpected(p.take_error());
      }
      for (std::size_t i = 0; i < overrides.size(); ++i) {
        const YAML::Node o = overrides[i];
        const std::string path = "overrides[" + std::to_string(i) + "]";
        if (!o.IsMap()) {
          p.fail(o, path, "must be a mapping");
          return tl::unexpected(p.take_error());
        }
        const YAML::Node entity = o["entity"];
        const YAML::Node metric = o["metric"];
        if (!entity || !entity.IsScalar() || entity.Scalar().empty()) {
          p.fail(entity ? entity : o, path + ".entity", "needs an entity glob");
          return tl::unexpected(p.take_error());
        }
        if (!metric || !metric.IsScalar()) {
          p.fail(metric ? metric : o, path + ".metric", "needs a metric name");
          return tl::unexpected(p.take_error());
        }
        const auto base = config.metrics.find(metric.Scalar());
        if (base == config.metrics.end()) {
          p.fail(metric, path + ".metric", "\"" + metric.Scalar() + "\" is not under metrics");
          return tl::unexpected(p.take_error());
        }
        EntityOverride entry{entity.Scalar(), metric.Scalar(), base->second};
        if (!p.apply(o, path, entry.config, {"entity", "metric"})) return tl::unexpected(p.take_error());
        config.overrides.push_back(std::move(entry));
      }
    }
  } catch (const YAML::Exception& e) {
    // Conversions of odd nodes (a mapping used as a key); never expected past the checks above.
    return tl::unexpected(
        Error::invalid("", std::string(source) + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  return config;
}

Result<BrainConfig> load_brain_config(const std::string& path) {
  auto text = read_text_file(path, kMaxConfigBytes);
  if (!text) return tl::unexpected(std::move(text.error()));
  return parse_brain_config(*text, path);
}

}  // namespace hsns::brain
