// The metric overlays graded by the aggregator: each link's and each device's grade under a metric
// overlay (api/overlays/thresholds.h: its metrics, fold, scale and thresholds) from the newest KPIs, so
// that the dashboard only paints (GET /api/v1/overlays/{id}/grades and its stream, api/overlays/routes.h;
// docs/rest-api.md, "Overlays").
//
// Contract:
// - read_entity_values(kpis, o, at_ms, since_ms) reads, per metric of o, the newest value per entity
//   (KpiStore::latest: at or before at_ms when given, none older than since_ms) and folds them per entity
//   (fold_value): sum, max, or min_dbm (a `_watts` value turned into dBm, 10·log10(W·1000); 0 W or less
//   is -40 dBm). truncated says a metric had more entities than kMaxGradeEntities.
// - grade_topology(o, t, revision, values): per link in the model's link order, its two ports' entities
//   ("<lower device>/<lower port>", "<upper device>/<upper port>") folded the worse way (the larger
//   value; min_dbm: the lower); a link without a value at either end has grade kNoData (-1) and no value.
//   The value is scaled to the thresholds' unit (capacity_percent: bytes/s·8 against the link's capacity,
//   0 without a capacity; per_hour: ·3600), rounded to 3 significant digits (what a tooltip shows; small
//   jitter is no change), then graded (grade_value: 0 ok, 1 warning, 2 bad by o's grading). A device's
//   grade is the worst grade of its links (kNoData without a graded link); a group's (the site view's
//   layout groups, api/topology/layout.h: "su:<n>" hosts and leaves, "su:none", "spines:<pod>",
//   "spines:none", "core") the worst of its devices'.
// - link_positions(t, upper): per model link, its index among the links the `upper` filter keeps (what
//   GET /api/v1/topology/links with that filter answers, index-aligned), -1 when left out.
// - grades_json / groups_json / changes_json: the answers and messages (schema OverlayGrades; the stream's
//   messages as GET /api/v1/overlays/{id}/stream describes them). changes_json is nullopt when nothing a
//   message carries differs (the same revision assumed: a new topology revision is a new full grade set).
// Pure functions but read_entity_values (thread-safe as the store).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/overlays/thresholds.h"
#include "api/topology/links.h"
#include "store/kpi_store.h"
#include "topology/topology.h"

namespace hsns::overlays {

inline constexpr std::int8_t kNoData = -1;
// How old a reading may be by default (what the dashboard always used), and at most.
inline constexpr std::int64_t kDefaultGradeMaxAgeS = 900;
inline constexpr std::size_t kMaxGradeEntities = 200'000;

struct EntityValues {
  std::unordered_map<std::string, double> values;  // entity -> folded value (before scaling)
  bool truncated = false;
};

// Folds one metric's raw value into an entity's value so far (`first`: there is none yet).
double fold_value(const Overlay& o, std::string_view metric, double raw, std::optional<double> so_far);
store::StoreResult<EntityValues> read_entity_values(store::KpiStore& kpis, const Overlay& o,
                                                    std::optional<std::int64_t> at_ms, std::int64_t since_ms);

std::int8_t grade_value(const Overlay& o, double value);

struct Grades {
  std::int64_t revision = 0;                  // the topology revision graded
  std::vector<std::int8_t> links;             // model link order
  std::vector<std::optional<double>> values;  // per link, in the thresholds' unit; none without data
  std::vector<std::int8_t> devices;           // node id order
  std::vector<std::string> group_ids;         // layout order
  std::vector<std::int8_t> groups;
  std::vector<std::size_t> group_of;  // node id order: its group's index in group_ids, SIZE_MAX for none
  bool truncated = false;
};

Grades grade_topology(const Overlay& o, const topology::Topology& t, std::int64_t revision,
                      const EntityValues& values);

std::vector<std::int64_t> link_positions(const topology::Topology& t, const topology_api::UpperFilter& upper);

nlohmann::json grades_json(const Overlay& o, const Grades& g, const std::vector<std::int64_t>& positions,
                           std::optional<std::int64_t> at_ms, std::int64_t since_ms);
nlohmann::json groups_json(const Overlay& o, const Grades& g);
std::optional<nlohmann::json> changes_json(const Overlay& o, const Grades& before, const Grades& after,
                                           const std::vector<std::int64_t>& positions);

}  // namespace hsns::overlays
