// Full-path diagnosis: the verdict of one hop from its evidence (docs/brain.md "Path diagnosis").
//
// Contract:
// - Evidence: the hop's state in the topology (the link's or the switch's), the latest KPI reading of each
//   (entity, metric) of its entities (value and time), and the alarms active on them.
// - Levels, worst first: faulty, degraded, unknown, ok. judge() gives the worst level any rule reaches and
//   one reason per rule that fired, in rule order: the topology state (isolated: faulty; sub-health:
//   degraded), each alarm (severity critical or major: faulty; minor or warning: degraded; info: a reason
//   only), each fresh KPI reading against the KPI rules (the first rule whose metric glob matches decides
//   for that reading; glob as brain::glob_match). A reading older than stale_after_ms before now is not
//   judged (its age is reported by the caller).
// - unknown: nothing fired and a link hop has no fresh reading at all (reason: no KPI sample of its
//   entities within the staleness window). A switch hop with nothing fired is ok: its evidence is its state
//   and its alarms (switch-level KPIs are judged when present); the reason says so.
// - ok otherwise, with a reason naming how many fresh readings were checked.
// - Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "brain/diagnose/path_expansion.h"
#include "topology/topology.h"

namespace hsns::diagnose {

// In increasing badness (the order hops are sorted by, worst first).
enum class VerdictLevel : std::uint8_t { ok, unknown, degraded, faulty };
std::string_view to_string(VerdictLevel level);

struct KpiReading {
  std::string entity;
  std::string metric;
  double value = 0;
  std::int64_t ts_ms = 0;
};

// An alarm active on an entity, as the alarm service answers it (brain-contract AlarmChange's fields the
// diagnosis shows).
struct ActiveAlarm {
  std::string id;
  std::string type;      // the fault type (pattern id)
  std::string severity;  // info | warning | minor | major | critical
  std::string entity;
  std::string detail;
};

struct HopEvidence {
  HopKind kind = HopKind::link;
  topology::DeviceState state = topology::DeviceState::kHealthy;
  std::vector<KpiReading> kpis;
  std::vector<ActiveAlarm> alarms;
};

struct KpiRule {
  std::string metric;  // a glob
  bool above = true;   // value > bound (else value < bound)
  double bound = 0;
  VerdictLevel level = VerdictLevel::degraded;
  std::string what;  // "errors", "drops", ... for the reason
};

struct VerdictRules {
  std::int64_t stale_after_ms = 300'000;
  std::vector<KpiRule> kpi;
};

// The built-in rules (docs/brain.md "Path diagnosis" lists them).
VerdictRules default_verdict_rules();

struct Verdict {
  VerdictLevel level = VerdictLevel::ok;
  std::vector<std::string> reasons;
};

Verdict judge(const HopEvidence& evidence, std::int64_t now_ms, const VerdictRules& rules);

}  // namespace hsns::diagnose
