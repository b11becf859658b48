#include "api/overlays/summary.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <map>
#include <unordered_map>
#include <utility>

#include "api/kpis/routes.h"
#include "api/topology/layout.h"
#include "hsns/time.h"
#include "http/json_io.h"
#include "services/store_errors.h"

namespace hsns::overlays {
namespace {

using nlohmann::json;

// Nearest rank: the smallest value with at least 95 % of the values at or below it.
double p95_of(std::vector<double>& values) {
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(values.size())));
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

template <typename T, typename F>
json column(const std::vector<T>& values, F&& to_json) {
  json out = json::array();
  for (const auto& v : values) out.push_back(to_json(v));
  return out;
}

}  // namespace

GroupSummary summarise_groups(const Overlay& util, const topology::Topology& t, const Grades& util_grades,
                              std::span<const brain::Alarm> active) {
  GroupSummary s;
  s.revision = util_grades.revision;
  s.truncated = util_grades.truncated;
  s.group_ids = util_grades.group_ids;
  const auto& nodes = t.nodes();
  const auto& links = t.links();
  // The rail groups after the layout groups, in rail order; each leaf's rail group.
  std::vector<std::size_t> rail_group_of(nodes.size(), SIZE_MAX);
  {
    std::map<std::uint32_t, std::vector<topology::NodeId>> rails;
    for (const auto leaf : t.switches(topology::Tier::kLeaf)) {
      if (const auto rail = topology_api::leaf_rail(t, nodes[leaf])) rails[*rail].push_back(leaf);
    }
    for (const auto& [rail, leaves] : rails) {
      for (const auto leaf : leaves) rail_group_of[leaf] = s.group_ids.size();
      s.group_ids.push_back("rail:" + std::to_string(rail));
    }
  }
  const auto groups = s.group_ids.size();
  s.worst_alarm.assign(groups, std::nullopt);
  s.active_alarms.assign(groups, 0);
  s.util_p95.assign(groups, std::nullopt);
  s.util_grade.assign(groups, kNoData);
  s.util_links.assign(groups, 0);
  const auto group_of = [&](topology::NodeId node) {
    return node < util_grades.group_of.size() ? util_grades.group_of[node] : SIZE_MAX;
  };
  // The rail an NPU port entity ("host003/eth1") belongs to: its link's leaf's.
  std::unordered_map<std::string, std::size_t> port_rail;
  for (const auto& link : links) {
    if (nodes[link.lower].tier == topology::Tier::kHost && rail_group_of[link.upper] != SIZE_MAX)
      port_rail.emplace(nodes[link.lower].name + "/" + link.lower_port, rail_group_of[link.upper]);
  }

  std::vector<std::size_t> touched;  // the groups one alarm names, each once
  const auto touch = [&touched, groups](std::size_t group) {
    if (group < groups && std::find(touched.begin(), touched.end(), group) == touched.end())
      touched.push_back(group);
  };
  for (const auto& alarm : active) {
    if (alarm.suppressed || alarm.state == brain::AlarmState::cleared) continue;
    touched.clear();
    for (const auto& entity : {alarm.entity, alarm.peer}) {
      if (entity.empty()) continue;
      const auto node = t.find(kpis_api::entity_device(entity));
      if (!node) continue;
      touch(group_of(*node));
      touch(rail_group_of[*node]);
      if (const auto port = port_rail.find(entity); port != port_rail.end()) touch(port->second);
    }
    for (const auto group : touched) {
      ++s.active_alarms[group];
      auto& worst = s.worst_alarm[group];
      if (!worst || alarm.severity > *worst) worst = alarm.severity;
    }
  }

  std::vector<std::vector<double>> values(groups);
  for (std::size_t i = 0; i < links.size() && i < util_grades.values.size(); ++i) {
    const auto& v = util_grades.values[i];
    if (!v) continue;
    touched.clear();
    for (const auto end : {links[i].lower, links[i].upper}) {
      touch(group_of(end));
      touch(rail_group_of[end]);
    }
    for (const auto group : touched) values[group].push_back(*v);
  }
  for (std::size_t g = 0; g < groups; ++g) {
    if (values[g].empty()) continue;
    s.util_links[g] = static_cast<std::uint32_t>(values[g].size());
    const double p95 = p95_of(values[g]);
    s.util_p95[g] = p95;
    s.util_grade[g] = grade_value(util, p95);
  }
  return s;
}

json summary_json(const Overlay& util, const GroupSummary& s, std::int64_t at_ms) {
  return {
      {"revision", s.revision},
      {"at_ms", at_ms},
      {"util_thresholds", {{"warn", util.warn}, {"bad", util.bad}, {"unit", util.unit}}},
      {"groups",
       {{"id", s.group_ids},
        {"worst_alarm",
         column(s.worst_alarm, [](const auto& v) { return v ? json(brain::to_string(*v)) : json(nullptr); })},
        {"active_alarms", s.active_alarms},
        {"util_p95", column(s.util_p95, [](const auto& v) { return v ? json(*v) : json(nullptr); })},
        {"util_grade", s.util_grade},
        {"util_links", s.util_links}}},
      {"truncated", s.truncated}};
}

void register_summary_route(http::Router& router, const OverlaySettings& overlays, store::KpiStore& kpis,
                            std::shared_ptr<services::TopologyCache> topology, ActiveAlarms active_alarms) {
  const Overlay* found = find_metric_overlay(overlays, "util");
  if (found == nullptr) return;  // the built-in overlays always have it
  router.add(
      http::bhttp::verb::get, "/api/v1/overlays/summary", http::permits(http::Permission::read),
      [util = std::make_shared<const Overlay>(*found), &kpis, cache = std::move(topology),
       active = std::move(active_alarms)](http::RequestContext& ctx) {
        if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
        auto snapshot = cache->current();
        if (!snapshot) return http::problem(ctx, snapshot.error());
        const auto now = unix_now_ms();
        auto values = read_entity_values(kpis, *util, std::nullopt,
                                         std::max<std::int64_t>(0, now - kDefaultGradeMaxAgeS * 1000));
        if (!values) return http::problem(ctx, services::from_store(values.error()));
        const auto& t = *snapshot->topology;
        const auto grades = grade_topology(*util, t, snapshot->revision, *values);
        const auto alarms = active();
        return http::json_ok(ctx, summary_json(*util, summarise_groups(*util, t, grades, alarms), now));
      },
      http::Cost::heavy);
}

}  // namespace hsns::overlays
