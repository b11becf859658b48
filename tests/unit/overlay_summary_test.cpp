// The site view's group summary (api/overlays/summary.h): each layout and rail group's worst active alarm
// and the 95th percentile of its links' utilisation, on a generated Clos fabric.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/overlays/grades.h"
#include "api/overlays/summary.h"
#include "topology/generator.h"

namespace hsns::overlays {
namespace {

namespace topo = hsns::topology;

// 40 hosts × 1 NPU, 20 hosts per SU, one spine per plane: SU 0 and SU 1 (one leaf each), one spine group.
topo::Topology fabric() {
  topo::ClosParams p;
  p.hosts = 40;
  p.npus_per_host = 1;
  p.hosts_per_su = 20;
  p.spines_per_plane = 1;
  auto t = topo::generate_clos(p);
  EXPECT_TRUE(t.has_value());
  return std::move(*t);
}

std::size_t group(const GroupSummary& s, const std::string& id) {
  for (std::size_t i = 0; i < s.group_ids.size(); ++i)
    if (s.group_ids[i] == id) return i;
  ADD_FAILURE() << "no group " << id;
  return 0;
}

// The bytes per second that make `percent` of link i's capacity, on its lower end's port.
void load(EntityValues& v, const topo::Topology& t, std::size_t i, double percent) {
  const auto& l = t.links()[i];
  v.values[t.nodes()[l.lower].name + "/" + l.lower_port] = percent / 100 * l.bandwidth_gbps * 1e9 / 8;
}

brain::Alarm alarm(std::string entity, brain::FaultSeverity severity, std::string peer = "") {
  brain::Alarm a;
  a.entity = std::move(entity);
  a.peer = std::move(peer);
  a.severity = severity;
  return a;
}

class OverlaySummary : public ::testing::Test {
 protected:
  GroupSummary summarise(const EntityValues& values, const std::vector<brain::Alarm>& alarms) {
    return summarise_groups(util_, t_, grade_topology(util_, t_, 7, values), alarms);
  }
  std::string name_of(topo::Tier tier, std::size_t i) const { return t_.nodes()[t_.switches(tier)[i]].name; }

  OverlaySettings all_ = default_overlays();
  const Overlay& util_ = *find_metric_overlay(all_, "util");
  topo::Topology t_ = fabric();
};

TEST_F(OverlaySummary, UtilisationIsTheNearestRank95thPercentileOfEachGroupsLinks) {
  EntityValues v;
  std::size_t uplink = SIZE_MAX;
  int pct = 0;
  for (std::size_t i = 0; i < t_.links().size(); ++i) {
    const auto& l = t_.links()[i];
    const auto& lower = t_.nodes()[l.lower];
    if (lower.tier == topo::Tier::kHost && t_.domain(l.lower, topo::Tier::kLeaf) == 0) load(v, t_, i, ++pct);
    if (lower.tier == topo::Tier::kLeaf && uplink == SIZE_MAX && !t_.hosts_under(l.lower).empty() &&
        t_.domain(t_.hosts_under(l.lower).front(), topo::Tier::kLeaf) == 0)
      uplink = i;
  }
  ASSERT_EQ(pct, 20);
  ASSERT_NE(uplink, SIZE_MAX);
  load(v, t_, uplink, 95);  // SU 0's leaf to the spine: counts for SU 0 and for the spine group
  const auto s = summarise(v, {});
  EXPECT_EQ(s.revision, 7);
  const auto su0 = group(s, "su:0");
  // SU 0: 1 % .. 20 % and 95 %: the 20th of 21 values is 20 % (not the 95 % maximum).
  EXPECT_EQ(s.util_links[su0], 21U);
  ASSERT_TRUE(s.util_p95[su0].has_value());
  EXPECT_DOUBLE_EQ(*s.util_p95[su0], 20);
  EXPECT_EQ(s.util_grade[su0], 0);
  const auto spines = group(s, "spines:0");
  EXPECT_EQ(s.util_links[spines], 1U);
  EXPECT_DOUBLE_EQ(s.util_p95[spines].value_or(-1), 95);
  EXPECT_EQ(s.util_grade[spines], 2);  // bad from 90 %
  const auto su1 = group(s, "su:1");
  EXPECT_EQ(s.util_links[su1], 0U);
  EXPECT_FALSE(s.util_p95[su1].has_value());
  EXPECT_EQ(s.util_grade[su1], kNoData);
  // The one rail (every leaf is on NPU 0's rail): SU 0's NPU links and the uplink, after the layout groups.
  EXPECT_EQ(s.group_ids.back(), "rail:0");
  const auto rail = group(s, "rail:0");
  EXPECT_EQ(s.util_links[rail], 21U);
  EXPECT_DOUBLE_EQ(s.util_p95[rail].value_or(-1), 20);
}

TEST_F(OverlaySummary, AGroupTakesTheWorstOfTheActiveAlarmsNamingItsDevices) {
  const auto host0 = t_.nodes()[t_.hosts()[0]].name;    // SU 0
  const auto host25 = t_.nodes()[t_.hosts()[25]].name;  // SU 1
  const auto leaf0 = name_of(topo::Tier::kLeaf, 0);
  const auto spine0 = name_of(topo::Tier::kSpine, 0);
  std::vector<brain::Alarm> alarms = {
      alarm(host0 + "/eth0", brain::FaultSeverity::minor),
      alarm(host0 + "/eth0", brain::FaultSeverity::major, leaf0 + "/swp1"),      // both ends in SU 0: once
      alarm(leaf0 + "/swp60", brain::FaultSeverity::warning, spine0 + "/swp1"),  // SU 0 and the spines
      alarm(host25 + "/eth0", brain::FaultSeverity::critical),
      alarm("nohost/eth0", brain::FaultSeverity::critical),  // no device of the topology: nowhere
  };
  alarms.push_back(alarm(host25, brain::FaultSeverity::critical));
  alarms.back().suppressed = true;  // silenced: not counted (the alarm overlay does not colour it)
  alarms.push_back(alarm(host0, brain::FaultSeverity::critical));
  alarms.back().state = brain::AlarmState::cleared;
  alarms.push_back(alarm(host0, brain::FaultSeverity::info));
  alarms.back().state = brain::AlarmState::acknowledged;  // still active
  const auto s = summarise({}, alarms);
  const auto su0 = group(s, "su:0");
  EXPECT_EQ(s.active_alarms[su0], 4U);
  EXPECT_EQ(s.worst_alarm[su0], brain::FaultSeverity::major);
  const auto spines = group(s, "spines:0");
  EXPECT_EQ(s.active_alarms[spines], 1U);
  EXPECT_EQ(s.worst_alarm[spines], brain::FaultSeverity::warning);
  const auto su1 = group(s, "su:1");
  EXPECT_EQ(s.active_alarms[su1], 1U);
  EXPECT_EQ(s.worst_alarm[su1], brain::FaultSeverity::critical);
  // The rail: the alarms of NPU ports on it (through their link's leaf) and of its leaves; not the one
  // naming a host alone (a host has a port on every rail).
  const auto rail = group(s, "rail:0");
  EXPECT_EQ(s.active_alarms[rail], 4U);
  EXPECT_EQ(s.worst_alarm[rail], brain::FaultSeverity::critical);
  // Without alarms and readings every group says so, and the answer names it.
  const auto none = summarise({}, {});
  const auto j = summary_json(util_, none, 1234);
  EXPECT_EQ(j["at_ms"], 1234);
  EXPECT_EQ(j["util_thresholds"]["bad"], 90.0);
  ASSERT_EQ(j["groups"]["id"].size(), none.group_ids.size());
  for (std::size_t i = 0; i < none.group_ids.size(); ++i) {
    EXPECT_TRUE(j["groups"]["worst_alarm"][i].is_null());
    EXPECT_EQ(j["groups"]["active_alarms"][i], 0);
    EXPECT_TRUE(j["groups"]["util_p95"][i].is_null());
    EXPECT_EQ(j["groups"]["util_grade"][i], -1);
  }
  const auto some = summary_json(util_, s, 1);
  EXPECT_EQ(some["groups"]["worst_alarm"][su0], "major");
}

}  // namespace
}  // namespace hsns::overlays
