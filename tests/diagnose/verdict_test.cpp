// The verdict rules of the full-path diagnosis (lib/brain/diagnose/verdict.h): topology state, alarms by
// severity, each default KPI rule at its bound, staleness, unknown link hops, the order of reasons.
#include "brain/diagnose/verdict.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hsns::diagnose {
namespace {

constexpr std::int64_t kNow = 1'800'000'000'000;

HopEvidence link_with(std::vector<KpiReading> kpis) {
  HopEvidence e;
  e.kind = HopKind::link;
  e.kpis = std::move(kpis);
  return e;
}

KpiReading reading(const std::string& metric, double value, std::int64_t age_ms = 1000) {
  return {"leaf0/Eth1/1", metric, value, kNow - age_ms};
}

VerdictLevel level_of(const std::string& metric, double value) {
  return judge(link_with({reading(metric, value)}), kNow, default_verdict_rules()).level;
}

TEST(Verdict, FreshQuietKpisAreOkAndNoKpisAreUnknown) {
  const auto rules = default_verdict_rules();
  auto ok = judge(link_with({reading("rx_bytes_per_s", 1e9), reading("rx_errors_per_s", 0)}), kNow, rules);
  EXPECT_EQ(ok.level, VerdictLevel::ok);
  ASSERT_EQ(ok.reasons.size(), 1U);
  EXPECT_EQ(ok.reasons[0], "2 fresh KPI readings within bounds, no active alarm");

  auto none = judge(link_with({}), kNow, rules);
  EXPECT_EQ(none.level, VerdictLevel::unknown);
  EXPECT_EQ(none.reasons, std::vector<std::string>{"no KPI sample of its ports within 300 s"});

  // Stale readings are not judged: errors 10 minutes ago leave the hop unknown.
  auto stale = judge(link_with({reading("rx_errors_per_s", 50, 600'000)}), kNow, rules);
  EXPECT_EQ(stale.level, VerdictLevel::unknown);
  // A reading exactly at the staleness bound still counts.
  auto edge = judge(link_with({reading("rx_errors_per_s", 50, 300'000)}), kNow, rules);
  EXPECT_EQ(edge.level, VerdictLevel::degraded);

  HopEvidence sw;
  sw.kind = HopKind::device;
  auto device = judge(sw, kNow, rules);
  EXPECT_EQ(device.level, VerdictLevel::ok);
  EXPECT_EQ(device.reasons, std::vector<std::string>{"healthy in the topology, no active alarm"});
}

TEST(Verdict, EachDefaultKpiRuleAtItsBound) {
  struct Case {
    const char* metric;
    double quiet;
    double bad;
    VerdictLevel level;
  };
  const std::vector<Case> cases = {
      {"if_oper_status", 1, 2, VerdictLevel::faulty},
      {"link_downed_per_s", 0, 0.2, VerdictLevel::faulty},
      {"rx_errors_per_s", 0, 0.5, VerdictLevel::degraded},
      {"if_in_errors_per_s", 0, 3, VerdictLevel::degraded},
      {"symbol_error_per_s", 0, 1, VerdictLevel::degraded},
      {"port_rcv_errors_per_s", 0, 1, VerdictLevel::degraded},
      {"rx_dropped_per_s", 0, 1, VerdictLevel::degraded},
      {"if_out_discards_per_s", 0, 1, VerdictLevel::degraded},
      {"port_xmit_discards_per_s", 0, 1, VerdictLevel::degraded},
      {"pfc_prio3_rx_pause_us_per_s", 100'000, 100'001, VerdictLevel::degraded},
      {"pfc_prio3_tx_pause_us_per_s", 100'000, 900'001, VerdictLevel::faulty},
      {"np_cnp_sent_per_s", 50'000, 50'001, VerdictLevel::degraded},
      {"np_ecn_marked_roce_packets_per_s", 10'000, 10'001, VerdictLevel::degraded},
      {"out_of_sequence_per_s", 100, 101, VerdictLevel::degraded},
      {"local_ack_timeout_err_per_s", 0, 1, VerdictLevel::degraded},
      {"lane0_rx_power_watts", 0.0001, 0.00009, VerdictLevel::degraded},
      {"rx_power_dbm", -10, -10.5, VerdictLevel::degraded},
      {"tx_power_dbm", -8, -8.5, VerdictLevel::degraded},
      {"module_temperature_celsius", 75, 76, VerdictLevel::degraded},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(level_of(c.metric, c.quiet), VerdictLevel::ok) << c.metric << " " << c.quiet;
    EXPECT_EQ(level_of(c.metric, c.bad), c.level) << c.metric << " " << c.bad;
  }
  // A metric no rule names is never judged.
  EXPECT_EQ(level_of("rx_bytes_per_s", 1e12), VerdictLevel::ok);
}

TEST(Verdict, ReasonsNameEntityMetricValueAndBound) {
  auto v = judge(link_with({reading("pfc_prio3_rx_pause_us_per_s", 950'000), reading("rx_errors_per_s", 2)}),
                 kNow, default_verdict_rules());
  EXPECT_EQ(v.level, VerdictLevel::faulty);
  EXPECT_EQ(v.reasons, (std::vector<std::string>{
                           "leaf0/Eth1/1 pfc_prio3_rx_pause_us_per_s 950000 above 900000 (PFC pause most of "
                           "the time)",
                           "leaf0/Eth1/1 rx_errors_per_s 2 above 0 (errors)"}));
}

TEST(Verdict, TopologyStateAndAlarmsBySeverity) {
  const auto rules = default_verdict_rules();
  HopEvidence e = link_with({reading("rx_errors_per_s", 0)});
  e.state = topology::DeviceState::kSubHealth;
  auto sub = judge(e, kNow, rules);
  EXPECT_EQ(sub.level, VerdictLevel::degraded);
  EXPECT_EQ(sub.reasons.front(), "link marked sub-health in the topology");
  e.state = topology::DeviceState::kIsolated;
  EXPECT_EQ(judge(e, kNow, rules).level, VerdictLevel::faulty);

  e.state = topology::DeviceState::kHealthy;
  for (const auto& [severity, level] :
       std::vector<std::pair<std::string, VerdictLevel>>{{"critical", VerdictLevel::faulty},
                                                         {"major", VerdictLevel::faulty},
                                                         {"minor", VerdictLevel::degraded},
                                                         {"warning", VerdictLevel::degraded},
                                                         {"info", VerdictLevel::ok}}) {
    e.alarms = {{"a1", "crc_errors", severity, "leaf0/Eth1/1", "CRC errors"}};
    const auto v = judge(e, kNow, rules);
    EXPECT_EQ(v.level, level) << severity;
    EXPECT_EQ(v.reasons.front(), "alarm crc_errors (" + severity + ") on leaf0/Eth1/1: CRC errors");
  }
  // An alarm on a switch hop without any KPI.
  HopEvidence sw;
  sw.kind = HopKind::device;
  sw.alarms = {{"a2", "switch_fan_fault", "major", "leaf0", ""}};
  const auto v = judge(sw, kNow, rules);
  EXPECT_EQ(v.level, VerdictLevel::faulty);
  EXPECT_EQ(v.reasons, std::vector<std::string>{"alarm switch_fan_fault (major) on leaf0"});
}

TEST(Verdict, LevelsOrderWorstLast) {
  EXPECT_LT(VerdictLevel::ok, VerdictLevel::unknown);
  EXPECT_LT(VerdictLevel::unknown, VerdictLevel::degraded);
  EXPECT_LT(VerdictLevel::degraded, VerdictLevel::faulty);
  EXPECT_EQ(to_string(VerdictLevel::degraded), "degraded");
}

}  // namespace
}  // namespace hsns::diagnose
