#include "brain/diagnose/verdict.h"

#include <algorithm>
#include <cstdio>

#include "brain/config.h"

namespace hsns::diagnose {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

VerdictLevel alarm_level(std::string_view severity) {
  if (severity == "critical" || severity == "major") return VerdictLevel::faulty;
  if (severity == "minor" || severity == "warning") return VerdictLevel::degraded;
  return VerdictLevel::ok;
}

}  // namespace

std::string_view to_string(VerdictLevel level) {
  switch (level) {
    case VerdictLevel::ok:
      return "ok";
    case VerdictLevel::unknown:
      return "unknown";
    case VerdictLevel::degraded:
      return "degraded";
    case VerdictLevel::faulty:
      return "faulty";
  }
  return "unknown";
}

VerdictRules default_verdict_rules() {
  using L = VerdictLevel;
  VerdictRules r;
  auto above = [&](const char* metric, double bound, L level, const char* what) {
    r.kpi.push_back({metric, true, bound, level, what});
  };
  auto below = [&](const char* metric, double bound, L level, const char* what) {
    r.kpi.push_back({metric, false, bound, level, what});
  };
  // IF-MIB ifOperStatus: 1 is up, anything else (down, testing, dormant, notPresent, lowerLayerDown) not.
  above("if_oper_status", 1, L::faulty, "port not up");
  above("link_downed_per_s", 0, L::faulty, "link went down");
  for (const char* m : {"rx_errors_per_s", "tx_errors_per_s", "if_in_errors_per_s", "if_out_errors_per_s",
                        "symbol_error_per_s", "port_rcv_errors_per_s", "link_error_recovery_per_s"})
    above(m, 0, L::degraded, "errors");
  for (const char* m : {"rx_dropped_per_s", "tx_dropped_per_s", "if_in_discards_per_s",
                        "if_out_discards_per_s", "port_xmit_discards_per_s"})
    above(m, 0, L::degraded, "drops");
  // Pause duration in microseconds per second: 900,000 is the PFC deadlock pattern's bound.
  above("pfc_prio?_*_pause_us_per_s", 900'000, L::faulty, "PFC pause most of the time");
  above("pfc_prio?_*_pause_us_per_s", 100'000, L::degraded, "PFC pause");
  above("np_cnp_sent_per_s", 50'000, L::degraded, "CNP surge");
  above("np_ecn_marked_roce_packets_per_s", 10'000, L::degraded, "ECN marking");
  above("out_of_sequence_per_s", 100, L::degraded, "retransmissions");
  above("local_ack_timeout_err_per_s", 0, L::degraded, "retransmissions");
  // 0.1 mW = -10 dBm: the optics pattern's receive bound.
  below("lane?_rx_power_watts", 0.0001, L::degraded, "optical rx power low");
  below("rx_power_dbm", -10, L::degraded, "optical rx power low");
  below("tx_power_dbm", -8, L::degraded, "optical tx power low");
  above("module_temperature_celsius", 75, L::degraded, "module hot");
  above("temperature_celsius", 75, L::degraded, "module hot");
  return r;
}

Verdict judge(const HopEvidence& e, std::int64_t now_ms, const VerdictRules& rules) {
  Verdict v;
  auto raise = [&](VerdictLevel level, std::string reason) {
    v.level = std::max(v.level, level);
    v.reasons.push_back(std::move(reason));
  };
  const char* what = e.kind == HopKind::link ? "link" : "switch";
  if (e.state == topology::DeviceState::kIsolated) {
    raise(VerdictLevel::faulty, std::string(what) + " isolated in the topology");
  } else if (e.state == topology::DeviceState::kSubHealth) {
    raise(VerdictLevel::degraded, std::string(what) + " marked sub-health in the topology");
  }
  for (const auto& a : e.alarms) {
    raise(alarm_level(a.severity), "alarm " + a.type + " (" + a.severity + ") on " + a.entity +
                                       (a.detail.empty() ? "" : ": " + a.detail));
  }
  std::size_t fresh = 0;
  for (const auto& k : e.kpis) {
    if (now_ms - k.ts_ms > rules.stale_after_ms) continue;
    ++fresh;
    for (const auto& rule : rules.kpi) {
      if (!brain::glob_match(rule.metric, k.metric)) continue;
      if (rule.above ? !(k.value > rule.bound) : !(k.value < rule.bound)) continue;
      raise(rule.level, k.entity + " " + k.metric + " " + number(k.value) +
                            (rule.above ? " above " : " below ") + number(rule.bound) + " (" + rule.what +
                            ")");
      break;
    }
  }
  if (v.reasons.empty()) {
    if (e.kind == HopKind::link && fresh == 0) {
      v.level = VerdictLevel::unknown;
      v.reasons.push_back("no KPI sample of its ports within " + std::to_string(rules.stale_after_ms / 1000) +
                          " s");
    } else if (e.kind == HopKind::device && fresh == 0) {
      v.reasons.push_back("healthy in the topology, no active alarm");
    } else {
      v.reasons.push_back(std::to_string(fresh) + " fresh KPI readings within bounds, no active alarm");
    }
  }
  return v;
}

}  // namespace hsns::diagnose
