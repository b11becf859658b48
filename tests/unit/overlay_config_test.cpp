// The `overlays:` section of the aggregator's configuration (api/overlays/thresholds.h, read by
// config.h's load_config_yaml): defaults equal to the dashboard's former fixed thresholds, overrides per
// overlay id, refusals naming the field, and the describe text stating the configured numbers.
#include <gtest/gtest.h>

#include <string>

#include "api/overlays/thresholds.h"
#include "config.h"

namespace hsns {
namespace {

const overlays::Overlay& find(const AggregatorConfig& c, const std::string& id) {
  for (const auto& o : c.overlays)
    if (o.id == id) return o;
  throw std::runtime_error("no overlay " + id);
}

std::string refusal(const std::string& yaml) {
  auto c = load_config_yaml(yaml, {});
  EXPECT_FALSE(c.has_value()) << yaml;
  return c ? "" : c.error();
}

TEST(OverlayConfig, DefaultsAreTheDashboardsThresholds) {
  auto c = load_config_yaml("port: 8080\n", {});
  ASSERT_TRUE(c) << c.error();
  const auto& util = find(*c, "util");
  EXPECT_EQ(util.grading, overlays::Grading::at_least);
  EXPECT_EQ(util.warn, 70);
  EXPECT_EQ(util.bad, 90);
  EXPECT_EQ(find(*c, "pfc").bad, 1000);
  EXPECT_EQ(find(*c, "ecn").bad, 10000);
  EXPECT_EQ(find(*c, "drops").grading, overlays::Grading::above);
  EXPECT_EQ(find(*c, "flaps").bad, 36);  // per hour: 0.01/s
  const auto& optics = find(*c, "optics");
  EXPECT_EQ(optics.bad, -10);
  EXPECT_EQ(optics.warn, -8);
  EXPECT_EQ(optics.warn_high, 3);
  EXPECT_EQ(optics.bad_high, 4);
  EXPECT_EQ(
      overlays::describe(util),
      "the busier direction of the busier end against the link capacity (warning from 70 %, bad from 90 %)");
  EXPECT_NE(overlays::describe(find(*c, "ecn")).find("bad from 10,000/s"), std::string::npos);
  EXPECT_NE(overlays::describe(optics).find(
                "bad below -10 dBm or above 4 dBm, warning below -8 dBm or above 3 dBm"),
            std::string::npos)
      << overlays::describe(optics);
}

TEST(OverlayConfig, ThresholdsAreSetPerOverlayAndDescribed) {
  auto c = load_config_yaml(R"(overlays:
  util: {warn: 40, bad: 55.5}
  pfc: {bad: 20000}
  fec: {warn: 5, bad: 50}
  optics: {warn_low: -7, bad_low: -9.5, warn_high: 2, bad_high: 3.5}
)",
                            {});
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(find(*c, "util").warn, 40);
  EXPECT_EQ(find(*c, "util").bad, 55.5);
  EXPECT_EQ(find(*c, "pfc").warn, 1);  // left out: kept
  EXPECT_EQ(find(*c, "pfc").bad, 20000);
  EXPECT_EQ(find(*c, "optics").bad, -9.5);
  EXPECT_EQ(find(*c, "optics").bad_high, 3.5);
  EXPECT_NE(overlays::describe(find(*c, "util")).find("(warning from 40 %, bad from 55.5 %)"),
            std::string::npos);
  EXPECT_NE(overlays::describe(find(*c, "pfc")).find("bad from 20,000/s"), std::string::npos);
  EXPECT_NE(overlays::describe(find(*c, "fec")).find("(warning above 5/s, bad above 50/s)"),
            std::string::npos);
  const auto answer = overlays::overlays_json(c->overlays);
  ASSERT_EQ(answer["items"].size(), 9U);
  EXPECT_EQ(answer["items"][0]["id"], "state");
  EXPECT_TRUE(answer["items"][0]["thresholds"].is_null());
  const auto& util = answer["items"][2];
  EXPECT_EQ(util["id"], "util");
  EXPECT_EQ(util["unit"], "%");
  EXPECT_EQ(util["grading"], "at_least");
  EXPECT_EQ(util["thresholds"], nlohmann::json({{"warn", 40}, {"bad", 55.5}}));
  EXPECT_EQ(answer["items"][7]["thresholds"]["warn_low"], -7);
}

TEST(OverlayConfig, BadThresholdsAreRefusedNamingTheField) {
  EXPECT_EQ(
      refusal("overlays:\n  util: {warn: 95}\n"),
      "overlays.util.warn (95) and overlays.util.bad (90): higher is worse, so warn must not be above bad");
  EXPECT_EQ(refusal("overlays:\n  pfc: {warn: many}\n"), "overlays.pfc.warn: must be a number");
  EXPECT_EQ(refusal("overlays:\n  pfc: {warn: [1]}\n"), "overlays.pfc.warn: must be a number");
  EXPECT_EQ(refusal("overlays:\n  ecn: {bad: .inf}\n"), "overlays.ecn.bad: must be a finite number");
  EXPECT_EQ(refusal("overlays:\n  drops: {warn: -1}\n"), "overlays.drops.warn: must not be negative");
  EXPECT_EQ(
      refusal("overlays:\n  optics: {warn_low: 3.5}\n"),
      "overlays.optics.warn_low (3.5) and overlays.optics.warn_high (3): warn_low must be below warn_high");
  EXPECT_EQ(
      refusal("overlays:\n  optics: {bad_low: -5}\n"),
      "overlays.optics.bad_low (-5) and overlays.optics.warn_low (-8): bad_low must not be above warn_low");
  EXPECT_EQ(refusal("overlays: [util]\n"), "overlays: must be a map of overlay ids to thresholds");
  EXPECT_EQ(refusal("overlays:\n  util: 80\n"), "overlays.util: must be a map of thresholds");
}

TEST(OverlayConfig, UnknownOverlaysAndFieldsAreRefused) {
  EXPECT_EQ(refusal("overlays:\n  latency: {warn: 1, bad: 2}\n"),
            "unknown key 'overlays.latency': not an overlay with thresholds (util, pfc, ecn, drops, fec, "
            "optics, flaps)");
  EXPECT_EQ(refusal("overlays:\n  state: {warn: 1}\n"),
            "unknown key 'overlays.state': not an overlay with thresholds (util, pfc, ecn, drops, fec, "
            "optics, flaps)");
  EXPECT_EQ(refusal("overlays:\n  util: {warning: 60}\n"), "unknown key 'overlays.util.warning' (warn, bad)");
  EXPECT_EQ(refusal("overlays:\n  optics: {warn: -7}\n"),
            "unknown key 'overlays.optics.warn' (warn_low, bad_low, warn_high, bad_high)");
}

}  // namespace
}  // namespace hsns
