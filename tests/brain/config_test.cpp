// Detector configuration (lib/brain/config.h): the built-in defaults, files applied on top of them,
// overrides per entity glob, and errors that name the file, the line and the key.
#include "brain/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace hsns::brain {
namespace {

// The reason of the one field of an invalid-config error ("" when the error is something else).
std::string reason_of(const Error& e, const std::string& field) {
  if (e.kind != Error::Kind::invalid || e.fields.size() != 1 || e.fields[0].field != field) {
    return "unexpected error: " + e.message();
  }
  return e.fields[0].reason;
}

TEST(BrainConfig, DefaultsCoverTheDocumentedMetrics) {
  const BrainConfig b = default_brain_config();
  const DetectorConfig* rx = b.resolve("host1/mlx5_0/1", "rx_power_dbm");
  ASSERT_NE(rx, nullptr);
  EXPECT_TRUE(rx->threshold.enabled);
  EXPECT_EQ(rx->threshold.direction, ThresholdConfig::Direction::below);
  EXPECT_DOUBLE_EQ(rx->threshold.bound, -10);
  EXPECT_DOUBLE_EQ(rx->threshold.for_s, 30);
  const DetectorConfig* symbol = b.resolve("host1/mlx5_0/1", "symbol_error");
  ASSERT_NE(symbol, nullptr);
  EXPECT_EQ(symbol->type, SeriesType::counter);
  EXPECT_TRUE(symbol->burst.enabled);
  const DetectorConfig* data = b.resolve("host1/mlx5_0/1", "port_rcv_data");
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(data->level_shift.enabled);
  EXPECT_EQ(b.resolve("host1", "no_such_metric"), nullptr);
}

TEST(BrainConfig, AFileChangesOnlyTheKeysItGivesAndAddsMetricsAndOverrides) {
  const auto parsed = parse_brain_config(R"(
metrics:
  rx_power_dbm:
    threshold: {below: -12}
  pfc_pause_rx:
    type: counter
    counter_bits: 64
    rate: {max_per_s: 1000, clear_per_s: 100}
    baseline: {window: 32}
default:
  baseline: {}
overrides:
  - entity: "host00[0-4]?/*"
    metric: rx_power_dbm
    threshold: {for_s: 120}
  - entity: "spine*"
    metric: rx_power_dbm
    baseline: {enabled: false}
)",
                                         "brain.yaml");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const BrainConfig& b = *parsed;
  const DetectorConfig* rx = b.resolve("leaf1/swp1", "rx_power_dbm");
  ASSERT_NE(rx, nullptr);
  EXPECT_DOUBLE_EQ(rx->threshold.bound, -12);
  EXPECT_DOUBLE_EQ(rx->threshold.for_s, 30);  // kept from the built-in entry
  EXPECT_TRUE(rx->baseline.enabled);
  const DetectorConfig* pfc = b.resolve("host1/mlx5_0/1", "pfc_pause_rx");
  ASSERT_NE(pfc, nullptr);
  EXPECT_EQ(pfc->type, SeriesType::counter);
  EXPECT_EQ(pfc->counter_bits, 64);
  EXPECT_TRUE(pfc->rate.enabled);
  EXPECT_EQ(pfc->rate.clear_per_s, 100);
  EXPECT_EQ(pfc->baseline.window, 32U);
  EXPECT_FALSE(pfc->level_shift.enabled);
  // Metrics not listed get the `default` section.
  const DetectorConfig* other = b.resolve("host1", "anything");
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(other->baseline.enabled);
  EXPECT_EQ(other->baseline.window, 64U);
  // `?` is one character, `*` any run; an override starts from its metric's entry in the file.
  const DetectorConfig* slow = b.resolve("host0042/mlx5_1/1", "rx_power_dbm");
  ASSERT_NE(slow, nullptr);
  EXPECT_DOUBLE_EQ(slow->threshold.for_s, 120);
  EXPECT_DOUBLE_EQ(slow->threshold.bound, -12);
  EXPECT_DOUBLE_EQ(b.resolve("host0142/mlx5_1/1", "rx_power_dbm")->threshold.for_s, 30);
  EXPECT_FALSE(b.resolve("spine3", "rx_power_dbm")->baseline.enabled);
  EXPECT_EQ(b.resolve("spine3", "pfc_pause_rx"), pfc);  // overrides are per metric
}

TEST(BrainConfig, GlobMatching) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("host*/mlx5_?/1", "host0001/mlx5_3/1"));
  EXPECT_FALSE(glob_match("host*/mlx5_?/1", "host0001/mlx5_13/1"));
  EXPECT_TRUE(glob_match("*a*b*", "xxaxxbxx"));
  EXPECT_FALSE(glob_match("*a*b", "xxaxxbxxc"));
  EXPECT_TRUE(glob_match("a**", "a"));
  EXPECT_FALSE(glob_match("a?", "a"));
  EXPECT_TRUE(glob_match("leaf[0-3][!0-4]", "leaf27"));
  EXPECT_FALSE(glob_match("leaf[0-3][!0-4]", "leaf24"));
  EXPECT_FALSE(glob_match("leaf[0-3]*", "leaf4"));
  EXPECT_TRUE(glob_match("x[]a]", "x]"));
  EXPECT_TRUE(glob_match("x[ab", "x[ab"));  // no closing bracket: literal
  EXPECT_TRUE(glob_match("*[0-9]", "port12"));
}

struct BadFile {
  const char* text;
  const char* field;
  const char* reason_start;  // "<file>:<line>:<column>: ..."
};

TEST(BrainConfig, ErrorsNameTheFileTheLineAndTheKey) {
  const BadFile cases[] = {
      {"metrics:\n  rx_power_dbm:\n    threshold: {below: low}\n", "metrics.rx_power_dbm.threshold.below",
       "brain.yaml:3:24: must be a finite number"},
      {"metrics:\n  rx_power_dbm:\n    treshold: {below: -3}\n", "metrics.rx_power_dbm.treshold",
       "brain.yaml:3:5: unknown key"},
      {"metrics:\n  x:\n    burst: {rate_per_s: 3}\n", "metrics.x.burst",
       "brain.yaml:3:12: needs type: counter"},
      {"metrics:\n  x:\n    threshold: {for_s: 3}\n", "metrics.x.threshold",
       "brain.yaml:3:16: needs above or below"},
      {"metrics:\n  x:\n    threshold: {above: 1, below: 0}\n", "metrics.x.threshold",
       "brain.yaml:3:16: give either above or below"},
      {"metrics:\n  x:\n    baseline:\n      window: 100000\n", "metrics.x.baseline.window",
       "brain.yaml:4:15: must be 3..256"},
      {"metrics:\n  x:\n    baseline: {raise: 2, clear: 3}\n", "metrics.x.baseline.clear",
       "brain.yaml:3:33: needs 0 <= clear <= raise"},
      {"metrics:\n  x:\n    type: histogram\n", "metrics.x.type",
       "brain.yaml:3:11: must be gauge or counter"},
      {"metrics:\n  x:\n    counter_bits: 16\n", "metrics.x.counter_bits", "brain.yaml:3:19: must be 0"},
      {"metrics:\n  x:\n    rate: {enabled: yes-please, max_per_s: 1}\n", "metrics.x.rate.enabled",
       "brain.yaml:3:21: must be true or false"},
      {"metrics:\n  x:\n    rate: {max_per_s: .nan}\n", "metrics.x.rate.max_per_s",
       "brain.yaml:3:23: must be a finite number"},
      {"overrides:\n  - entity: \"a*\"\n    metric: nope\n", "overrides[0].metric",
       "brain.yaml:3:13: \"nope\" is not under metrics"},
      {"overrides:\n  - metric: rx_power_dbm\n", "overrides[0].entity",
       "brain.yaml:2:5: needs an entity glob"},
      {"overrides:\n  - entity: a\n    metric: rx_power_dbm\n    threshold: {hysteresis: -1}\n",
       "overrides[0].threshold.hysteresis", "brain.yaml:4:29: must be >= 0"},
      {"metric:\n  x: {}\n", "metric", "brain.yaml:1:1: unknown key"},
      {"- 1\n- 2\n", "", "brain.yaml:1:1: must be a mapping"},
      {"metrics: [1, 2]\n", "metrics", "brain.yaml:1:10: must be a mapping"},
      {"metrics:\n  x: {baseline: {window: 8}\n", "", "brain.yaml:3:1: "},  // malformed YAML
  };
  for (const BadFile& c : cases) {
    const auto parsed = parse_brain_config(c.text, "brain.yaml");
    ASSERT_FALSE(parsed) << c.text;
    const std::string reason = reason_of(parsed.error(), c.field);
    EXPECT_EQ(reason.rfind(c.reason_start, 0), 0U) << c.text << "\n  got: " << reason;
  }
}

TEST(BrainConfig, LoadsARealFileAndNamesAMissingOne) {
  testing::TempDir dir("hsns-brain-config");
  const std::string path = (dir / "brain.yaml").string();
  {
    std::ofstream out(path);
    out << "metrics:\n  symbol_error:\n    burst: {rate_per_s: 5}\n";
  }
  const auto loaded = load_brain_config(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_DOUBLE_EQ(loaded->metrics.at("symbol_error").burst.rate_per_s, 5);
  EXPECT_DOUBLE_EQ(loaded->metrics.at("symbol_error").burst.window_s, 60);
  {
    std::ofstream out(path);
    out << "metrics:\n  symbol_error:\n    burst: {rate_per_s: -5}\n";
  }
  const auto refused = load_brain_config(path);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "metrics.symbol_error.burst.rate_per_s: " + path + ":3:25: must be >= 0");
  const auto missing = load_brain_config((dir / "absent.yaml").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::not_found);
  EXPECT_NE(missing.error().message().find("absent.yaml"), std::string::npos);
}

TEST(BrainConfig, AnEmptyFileIsTheDefaults) {
  const auto parsed = parse_brain_config("", "empty.yaml");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->metrics.size(), default_brain_config().metrics.size());
  const auto too_large = parse_brain_config(std::string((1 << 20) + 1, ' '), "big.yaml");
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.error().kind, Error::Kind::too_large);
}

}  // namespace
}  // namespace hsns::brain
