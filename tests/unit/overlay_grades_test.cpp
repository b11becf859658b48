// The metric overlays graded by the aggregator (api/overlays/grades.h): each overlay's fold of its
// metrics, a link's two ends, the scale to the thresholds' unit, the thresholds, no data, devices and
// layout groups, the positions of a filtered link list and the change messages; the KPI read on a real
// SQLite KPI store.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "api/overlays/grades.h"
#include "store/database.h"
#include "store/sqlite_kpi_store.h"
#include "support/temp_dir.h"
#include "topology/generator.h"

namespace hsns::overlays {
namespace {

namespace topo = hsns::topology;

const Overlay& overlay(const OverlaySettings& all, const std::string& id) {
  const Overlay* o = find_metric_overlay(all, id);
  EXPECT_NE(o, nullptr) << id;
  return *o;
}

// 4 hosts x 2 NPUs, 2 hosts per SU, one spine per plane: 8 NPU links, leaf-spine uplinks.
topo::Topology small() {
  topo::ClosParams p;
  p.hosts = 4;
  p.npus_per_host = 2;
  p.hosts_per_su = 2;
  p.spines_per_plane = 1;
  auto t = topo::generate_clos(p);
  EXPECT_TRUE(t.has_value());
  return std::move(*t);
}

// The name of the host at position `i` of hosts().
std::string host(const topo::Topology& t, std::size_t i) {
  return t.nodes()[t.hosts()[i]].name;
}

// The NPU link of host `host` (its lower end's entity and upper end's).
struct End {
  std::size_t link;
  std::string lower;
  std::string upper;
};
End npu_link(const topo::Topology& t, const std::string& name, std::uint32_t npu) {
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    const auto& l = t.links()[i];
    if (t.nodes()[l.lower].name == name && l.npu == npu) {
      return {i, name + "/" + l.lower_port, t.nodes()[l.upper].name + "/" + l.upper_port};
    }
  }
  ADD_FAILURE() << "no NPU link " << name << " " << npu;
  return {};
}

TEST(OverlayGrades, EachOverlayFoldsItsMetricsItsWay) {
  const auto all = default_overlays();
  // pfc sums every priority and direction; util takes the busiest direction; optics the weakest lane in dBm.
  EXPECT_DOUBLE_EQ(fold_value(overlay(all, "pfc"), "pfc_prio3_tx_pause_per_s", 2, 5.0), 7);
  EXPECT_DOUBLE_EQ(fold_value(overlay(all, "util"), "tx_bytes_per_s", 2, 5.0), 5);
  EXPECT_DOUBLE_EQ(fold_value(overlay(all, "util"), "tx_bytes_per_s", 9, 5.0), 9);
  EXPECT_NEAR(fold_value(overlay(all, "optics"), "lane0_rx_power_watts", 0.001, std::nullopt), 0, 1e-9);
  EXPECT_NEAR(fold_value(overlay(all, "optics"), "lane1_rx_power_watts", 0.0001, 0.0), -10, 1e-9);
  EXPECT_DOUBLE_EQ(fold_value(overlay(all, "optics"), "rx_power_dbm", -3, -10.0), -10);
  EXPECT_DOUBLE_EQ(fold_value(overlay(all, "optics"), "lane2_rx_power_watts", 0, std::nullopt), -40);
  // The metric lists are the one definition the dashboard used: 16 PFC series, 9 optics readings.
  EXPECT_EQ(overlay(all, "pfc").metrics.size(), 16U);
  EXPECT_EQ(overlay(all, "optics").metrics.size(), 9U);
  EXPECT_EQ(overlay(all, "flaps").scale, Scale::per_hour);
}

TEST(OverlayGrades, ThresholdsGradeEachWay) {
  const auto all = default_overlays();
  const auto& util = overlay(all, "util");  // at_least 70, 90
  EXPECT_EQ(grade_value(util, 69.9), 0);
  EXPECT_EQ(grade_value(util, 70), 1);
  EXPECT_EQ(grade_value(util, 90), 2);
  const auto& drops = overlay(all, "drops");  // above 0, 10
  EXPECT_EQ(grade_value(drops, 0), 0);
  EXPECT_EQ(grade_value(drops, 10), 1);
  EXPECT_EQ(grade_value(drops, 10.5), 2);
  const auto& optics = overlay(all, "optics");  // bad < -10 or > 4, warning < -8 or > 3
  EXPECT_EQ(grade_value(optics, -2), 0);
  EXPECT_EQ(grade_value(optics, -9), 1);
  EXPECT_EQ(grade_value(optics, -13), 2);
  EXPECT_EQ(grade_value(optics, 3.5), 1);
  EXPECT_EQ(grade_value(optics, 5), 2);
}

TEST(OverlayGrades, ALinkTakesItsWorseEndScaledAndDevicesAndGroupsTheirWorstLink) {
  const auto all = default_overlays();
  const auto t = small();
  const auto a = npu_link(t, host(t, 0), 0);
  const auto b = npu_link(t, host(t, 3), 1);
  const double gbps = t.links()[a.link].bandwidth_gbps;
  EntityValues v;
  v.values[a.lower] = 0.10 * gbps * 1e9 / 8;  // 10 %
  v.values[a.upper] = 0.95 * gbps * 1e9 / 8;  // 95 %: the worse end
  v.values[b.lower] = 0.75 * gbps * 1e9 / 8;  // 75 %: a warning
  const auto g = grade_topology(overlay(all, "util"), t, 7, v);
  EXPECT_EQ(g.revision, 7);
  ASSERT_EQ(g.links.size(), t.links().size());
  EXPECT_EQ(g.links[a.link], 2);
  ASSERT_TRUE(g.values[a.link].has_value());
  EXPECT_DOUBLE_EQ(*g.values[a.link], 95);
  EXPECT_EQ(g.links[b.link], 1);
  EXPECT_DOUBLE_EQ(*g.values[b.link], 75);
  // Every other link has no data.
  int no_data = 0;
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    if (g.links[i] == kNoData) {
      ++no_data;
      EXPECT_FALSE(g.values[i].has_value());
    }
  }
  EXPECT_EQ(no_data, static_cast<int>(g.links.size()) - 2);
  // Devices: the first host bad, the fourth a warning, the second no data; groups: SU 0 (the first two) bad,
  // SU 1 warning.
  const auto id_of = [&t](const std::string& name) {
    for (const auto& n : t.nodes())
      if (n.name == name) return n.id;
    return topo::kNoNode;
  };
  EXPECT_EQ(g.devices[id_of(host(t, 0))], 2);
  EXPECT_EQ(g.devices[id_of(host(t, 3))], 1);
  EXPECT_EQ(g.devices[id_of(host(t, 1))], kNoData);
  ASSERT_GE(g.group_ids.size(), 2U);
  EXPECT_EQ(g.group_ids[0], "su:0");
  EXPECT_EQ(g.groups[0], 2);
  EXPECT_EQ(g.group_ids[1], "su:1");
  EXPECT_EQ(g.groups[1], 1);
}

TEST(OverlayGrades, OpticsTakesTheWeakerEndAndFlapsCountPerHour) {
  const auto all = default_overlays();
  const auto t = small();
  const auto a = npu_link(t, host(t, 1), 1);
  EntityValues v;
  v.values[a.lower] = -2;
  v.values[a.upper] = -13.01;
  auto g = grade_topology(overlay(all, "optics"), t, 1, v);
  EXPECT_EQ(g.links[a.link], 2);
  EXPECT_DOUBLE_EQ(*g.values[a.link], -13);  // 3 significant digits
  v.values.clear();
  v.values[a.lower] = 0.005;  // 18 per hour: a warning (above 0, not above 36)
  g = grade_topology(overlay(all, "flaps"), t, 1, v);
  EXPECT_EQ(g.links[a.link], 1);
  EXPECT_DOUBLE_EQ(*g.values[a.link], 18);
}

TEST(OverlayGrades, PositionsFollowTheUpperFilterAndChangesNameOnlyWhatChanged) {
  const auto all = default_overlays();
  const auto& pfc = overlay(all, "pfc");
  const auto t = small();
  const auto npu_only = link_positions(t, {false, true, false, false});
  const auto every = link_positions(t, {false, true, true, true});
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    EXPECT_EQ(every[i], static_cast<std::int64_t>(i));
    const bool npu = t.nodes()[t.links()[i].upper].tier == topo::Tier::kLeaf;
    EXPECT_EQ(npu_only[i], npu ? kept++ : -1);
  }
  const auto a = npu_link(t, host(t, 2), 1);
  EntityValues v;
  v.values[a.lower] = 5;
  const auto before = grade_topology(pfc, t, 3, v);
  EXPECT_FALSE(changes_json(pfc, before, before, npu_only).has_value()) << "nothing changed";
  v.values[a.lower] = 5000;
  const auto after = grade_topology(pfc, t, 3, v);
  const auto changes = changes_json(pfc, before, after, npu_only);
  ASSERT_TRUE(changes.has_value());
  EXPECT_EQ((*changes)["links"]["index"], nlohmann::json::array({npu_only[a.link]}));
  EXPECT_EQ((*changes)["links"]["grade"], nlohmann::json::array({2}));
  EXPECT_EQ((*changes)["links"]["value"], nlohmann::json::array({5000.0}));
  EXPECT_EQ((*changes)["groups"]["id"], nlohmann::json::array({"su:1"}));
  const auto full = grades_json(pfc, after, npu_only, std::nullopt, 0);
  EXPECT_EQ(full["links"]["grade"].size(), static_cast<std::size_t>(kept));
  EXPECT_EQ(full["links"]["grade"][static_cast<std::size_t>(npu_only[a.link])], 2);
  EXPECT_EQ(full["revision"], 3);
}

TEST(OverlayGrades, TheKpiReadFoldsTheNewestValuesWithinTheMaxAge) {
  hsns::testing::TempDir dir;
  store::Database db(store::DatabaseOptions{(dir.path() / "aggregator.db").string()});
  store::SqliteKpiStore kpis(db, {});
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::vector<store::KpiSample> samples = {
      {"host000/eth0", "pfc_prio3_rx_pause_per_s", now - 10'000, 300},
      {"host000/eth0", "pfc_prio3_tx_pause_per_s", now - 10'000, 200},
      {"host001/eth0", "pfc_prio0_rx_pause_per_s", now - 2'000'000, 9000},  // older than the max age
      {"host002/eth1", "fec_uncorrectable_per_s", now - 10'000, 1}};        // another overlay's metric
  ASSERT_TRUE(kpis.append(samples));
  const auto all = default_overlays();
  auto v = read_entity_values(kpis, overlay(all, "pfc"), std::nullopt, now - kDefaultGradeMaxAgeS * 1000);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(v->values.size(), 1U);
  EXPECT_DOUBLE_EQ(v->values["host000/eth0"], 500);
  EXPECT_FALSE(v->truncated);
  // At a past time: the newest sample at or before it.
  v = read_entity_values(kpis, overlay(all, "pfc"), now - 1'999'000, now - 2'100'000);
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->values["host001/eth0"], 9000);
  EXPECT_EQ(v->values.count("host000/eth0"), 0U);
}

}  // namespace
}  // namespace hsns::overlays
