#include "api/overlays/grades.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace hsns::overlays {
namespace topo = hsns::topology;
namespace {

using nlohmann::json;

// 3 significant digits: what a tooltip shows, so that jitter below it is no change of the live stream.
double rounded(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 2 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

json value_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// The layout's groups (api/topology/layout.cpp makes the same ones, in the same order): SUs in domain
// order, "su:none" for leaves without hosts, a spine group per super-pod, "core".
void place_groups(const topo::Topology& t, Grades& g) {
  const auto& nodes = t.nodes();
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::size_t> member_of(nodes.size(), SIZE_MAX);
  auto group = [&](const std::string& id) {
    auto [it, added] = index.try_emplace(id, g.group_ids.size());
    if (added) {
      g.group_ids.push_back(id);
      g.groups.push_back(kNoData);
    }
    return it->second;
  };
  for (std::uint32_t su = 0; su < t.domain_count(topo::Tier::kLeaf); ++su) group("su:" + std::to_string(su));
  for (const auto host : t.hosts())
    member_of[host] = group("su:" + std::to_string(t.domain(host, topo::Tier::kLeaf)));
  for (const auto leaf : t.switches(topo::Tier::kLeaf)) {
    const auto under = t.hosts_under(leaf);
    member_of[leaf] =
        group(under.empty() ? std::string("su:none")
                            : "su:" + std::to_string(t.domain(under.front(), topo::Tier::kLeaf)));
  }
  for (const auto spine : t.switches(topo::Tier::kSpine)) {
    const auto under = t.hosts_under(spine);
    member_of[spine] =
        group("spines:" + (under.empty() ? std::string("none")
                                         : std::to_string(t.domain(under.front(), topo::Tier::kSpine))));
  }
  for (const auto core : t.switches(topo::Tier::kCore)) member_of[core] = group("core");
  for (std::size_t id = 0; id < nodes.size(); ++id) {
    if (member_of[id] == SIZE_MAX) continue;
    auto& level = g.groups[member_of[id]];
    level = std::max(level, g.devices[id]);
  }
  g.group_of = std::move(member_of);
}

}  // namespace

double fold_value(const Overlay& o, std::string_view metric, double raw, std::optional<double> so_far) {
  switch (o.fold) {
    case Fold::sum:
      return so_far.value_or(0) + raw;
    case Fold::max:
      return so_far ? std::max(*so_far, raw) : raw;
    case Fold::min_dbm: {
      const bool watts = metric.size() >= 6 && metric.substr(metric.size() - 6) == "_watts";
      const double dbm = !watts ? raw : raw > 0 ? 10 * std::log10(raw * 1000) : -40;
      return so_far ? std::min(*so_far, dbm) : dbm;
    }
  }
  return raw;
}

store::StoreResult<EntityValues> read_entity_values(store::KpiStore& kpis, const Overlay& o,
                                                    std::optional<std::int64_t> at_ms,
                                                    std::int64_t since_ms) {
  EntityValues out;
  for (const auto& metric : o.metrics) {
    store::KpiLatestQuery q;
    q.metric = metric;
    q.at_ms = at_ms;
    q.since_ms = since_ms;
    q.limit = kMaxGradeEntities;
    auto found = kpis.latest(q);
    if (!found) return tl::unexpected(found.error());
    out.truncated = out.truncated || found->truncated;
    for (auto& item : found->items) {
      auto it = out.values.find(item.entity);
      if (it == out.values.end()) {
        out.values.emplace(std::move(item.entity), fold_value(o, metric, item.value, std::nullopt));
      } else {
        it->second = fold_value(o, metric, item.value, it->second);
      }
    }
  }
  return out;
}

std::int8_t grade_value(const Overlay& o, double v) {
  constexpr std::int8_t ok = 0;
  constexpr std::int8_t warning = 1;
  constexpr std::int8_t bad = 2;
  switch (o.grading) {
    case Grading::at_least:
      return v >= o.bad ? bad : v >= o.warn ? warning : ok;
    case Grading::above:
      return v > o.bad ? bad : v > o.warn ? warning : ok;
    case Grading::outside:
      return v < o.bad || v > o.bad_high ? bad : v < o.warn || v > o.warn_high ? warning : ok;
    case Grading::state:
    case Grading::severity:
      return 0;
  }
  return 0;
}

Grades grade_topology(const Overlay& o, const topo::Topology& t, std::int64_t revision,
                      const EntityValues& values) {
  Grades g;
  g.revision = revision;
  g.truncated = values.truncated;
  const auto& nodes = t.nodes();
  const auto& links = t.links();
  g.links.assign(links.size(), kNoData);
  g.values.assign(links.size(), std::nullopt);
  g.devices.assign(nodes.size(), kNoData);
  const auto value_of = [&values](const std::string& device,
                                  const std::string& port) -> std::optional<double> {
    const auto it = values.values.find(device + "/" + port);
    if (it == values.values.end()) return std::nullopt;
    return it->second;
  };
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& link = links[i];
    const auto a = value_of(nodes[link.lower].name, link.lower_port);
    const auto b = value_of(nodes[link.upper].name, link.upper_port);
    if (!a && !b) continue;
    double v = 0;
    if (a && b) {
      v = o.fold == Fold::min_dbm ? std::min(*a, *b) : std::max(*a, *b);
    } else {
      v = a ? *a : *b;
    }
    if (o.scale == Scale::capacity_percent) {
      v = link.bandwidth_gbps > 0 ? v * 8 / (link.bandwidth_gbps * 1e9) * 100 : 0;
    } else if (o.scale == Scale::per_hour) {
      v *= 3600;
    }
    v = rounded(v);
    g.values[i] = v;
    g.links[i] = grade_value(o, v);
    for (const auto end : {link.lower, link.upper}) g.devices[end] = std::max(g.devices[end], g.links[i]);
  }
  place_groups(t, g);
  return g;
}

std::vector<std::int64_t> link_positions(const topo::Topology& t, const topology_api::UpperFilter& upper) {
  std::vector<std::int64_t> out;
  out.reserve(t.links().size());
  std::int64_t next = 0;
  for (const auto& link : t.links()) {
    out.push_back(topology_api::keeps_upper(upper, t.nodes()[link.upper].tier) ? next++ : -1);
  }
  return out;
}

json grades_json(const Overlay& o, const Grades& g, const std::vector<std::int64_t>& positions,
                 std::optional<std::int64_t> at_ms, std::int64_t since_ms) {
  json grades = json::array();
  json values = json::array();
  for (std::size_t i = 0; i < g.links.size() && i < positions.size(); ++i) {
    if (positions[i] < 0) continue;
    grades.push_back(g.links[i]);
    values.push_back(value_json(g.values[i]));
  }
  return {{"kind", "grades"},
          {"overlay", o.id},
          {"revision", g.revision},
          {"unit", o.unit},
          {"at_ms", at_ms ? json(*at_ms) : json(nullptr)},
          {"since_ms", since_ms},
          {"links", {{"grade", std::move(grades)}, {"value", std::move(values)}}},
          {"devices", {{"grade", g.devices}}},
          {"groups", {{"id", g.group_ids}, {"grade", g.groups}}},
          {"truncated", g.truncated}};
}

json groups_json(const Overlay& o, const Grades& g) {
  return {{"kind", "groups"},
          {"overlay", o.id},
          {"revision", g.revision},
          {"groups", {{"id", g.group_ids}, {"grade", g.groups}}}};
}

std::optional<json> changes_json(const Overlay& o, const Grades& before, const Grades& after,
                                 const std::vector<std::int64_t>& positions) {
  json link_index = json::array();
  json link_grade = json::array();
  json link_value = json::array();
  for (std::size_t i = 0; i < after.links.size() && i < before.links.size() && i < positions.size(); ++i) {
    if (positions[i] < 0 || (after.links[i] == before.links[i] && after.values[i] == before.values[i]))
      continue;
    link_index.push_back(positions[i]);
    link_grade.push_back(after.links[i]);
    link_value.push_back(value_json(after.values[i]));
  }
  json device_index = json::array();
  json device_grade = json::array();
  for (std::size_t i = 0; i < after.devices.size() && i < before.devices.size(); ++i) {
    if (after.devices[i] == before.devices[i]) continue;
    device_index.push_back(i);
    device_grade.push_back(after.devices[i]);
  }
  json group_id = json::array();
  json group_grade = json::array();
  for (std::size_t i = 0; i < after.groups.size() && i < before.groups.size(); ++i) {
    if (after.groups[i] == before.groups[i]) continue;
    group_id.push_back(after.group_ids[i]);
    group_grade.push_back(after.groups[i]);
  }
  if (link_index.empty() && device_index.empty() && group_id.empty()) return std::nullopt;
  return json{{"kind", "changes"},
              {"overlay", o.id},
              {"revision", after.revision},
              {"links",
               {{"index", std::move(link_index)},
                {"grade", std::move(link_grade)},
                {"value", std::move(link_value)}}},
              {"devices", {{"index", std::move(device_index)}, {"grade", std::move(device_grade)}}},
              {"groups", {{"id", std::move(group_id)}, {"grade", std::move(group_grade)}}},
              {"truncated", after.truncated}};
}

}  // namespace hsns::overlays
