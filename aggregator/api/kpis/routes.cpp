#include "api/kpis/routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "hsns/json_fields.h"
#include "hsns/log.h"
#include "http/auth.h"
#include "http/json_io.h"
#include "ingest/syslog_parser.h"
#include "services/store_errors.h"

namespace hsns::kpis_api {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

constexpr const char* kTimeRule =
    "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z) or an integer of Unix milliseconds";

std::optional<std::int64_t> in_range(std::int64_t ms) {
  if (ms < 0 || ms > store::kMaxKpiTimestampMs) return std::nullopt;
  return ms;
}

// The query's limit (1..max) into `limit` when present, a finding otherwise.
void read_limit(const RequestContext& ctx, std::size_t max, std::size_t& limit,
                std::vector<InvalidParam>& errors) {
  const auto text = ctx.query("limit");
  if (!text) return;
  std::size_t n = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > max) {
    errors.push_back({"limit", "must be an integer from 1 to " + std::to_string(max)});
  } else {
    limit = n;
  }
}

// The samples of a POST /api/v1/kpis body; every finding named.
tl::expected<std::vector<store::KpiSample>, Problem> parse_samples(const nlohmann::json& body) {
  FieldReader reader(body);
  std::vector<store::KpiSample> samples;
  reader.objects("samples", true, kMaxKpiBatch, [&](FieldReader& r, std::size_t i) {
    store::KpiSample s;
    s.entity = r.string("entity", true, store::kMaxKpiEntityLength).value_or("");
    s.metric = r.string("metric", true, store::kMaxKpiMetricLength).value_or("");
    r.known("ts");
    const auto& element = body.at("samples").at(i);
    const auto ts = element.find("ts");
    if (ts == element.end()) {
      r.fail("ts", "is required");
    } else if (auto ms = parse_api_time(*ts)) {
      s.ts_ms = *ms;
    } else {
      r.fail("ts", kTimeRule);
    }
    s.value = r.number("value", true, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max())
                  .value_or(0);
    samples.push_back(std::move(s));
  });
  if (reader.ok() && samples.empty()) reader.fail("samples", "must have at least 1 item");
  if (reader.ok()) {
    for (auto& e : store::validate_kpi_samples(samples)) reader.fail(e.field, std::move(e.reason));
  }
  if (auto p = reader.finish()) return tl::unexpected(std::move(*p));
  return samples;
}

Response post_kpis(store::KpiSink& store, KpiMetrics& metrics, const DeviceCheck& known_device,
                   RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return http::problem(ctx, body.error());
  auto samples = parse_samples(*body);
  if (!samples) return http::problem(ctx, samples.error());
  EntityBinding binding(ctx.bound_host);
  for (std::size_t i = 0; i < samples->size(); ++i)
    binding.check(entity_device((*samples)[i].entity), "samples", i, "entity");
  if (auto refused = binding.refusal()) return http::problem(ctx, *refused);
  auto appended = store.append(*samples);
  if (!appended) {
    metrics.observe_append_failure(KpiSource::push);
    return http::problem(ctx, services::from_store(appended.error()));
  }
  std::uint64_t unknown = 0;
  for (const auto& s : *samples) {
    if (!known_device || !known_device(entity_device(s.entity))) ++unknown;
  }
  metrics.observe_append(KpiSource::push, *appended, unknown);
  return http::json_ok(ctx, {{"accepted", appended->accepted},
                             {"duplicate", appended->duplicate},
                             {"out_of_order", appended->out_of_order},
                             {"rejected", appended->late + appended->future},
                             {"new_series", appended->new_series},
                             {"unknown_entities", unknown}});
}

// entity and metric of a query, each checked as the store's rules say.
void read_series_params(const RequestContext& ctx, bool required, std::optional<std::string>& entity,
                        std::optional<std::string>& metric, std::vector<InvalidParam>& errors) {
  entity = ctx.query("entity");
  metric = ctx.query("metric");
  if (entity ? !store::is_kpi_entity(*entity) : required)
    errors.push_back({"entity", "must be 1 to 256 printable ASCII characters without space"});
  if (metric ? !store::is_kpi_metric(*metric) : required)
    errors.push_back(
        {"metric", "must be 1 to 128 characters of A-Z a-z 0-9 _ . : starting with a letter or _"});
}

Response get_points(store::KpiStore& store, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"entity", "metric", "since", "until", "resolution", "limit"}))
    return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  std::optional<std::string> entity;
  std::optional<std::string> metric;
  read_series_params(ctx, true, entity, metric, errors);
  store::KpiQuery q;
  for (const auto& [name, target] : {std::pair{"since", &q.since_ms}, std::pair{"until", &q.until_ms}}) {
    if (auto text = ctx.query(name)) {
      if (auto ms = parse_api_time_text(*text)) {
        *target = *ms;
      } else {
        errors.push_back({name, kTimeRule});
      }
    }
  }
  if (auto text = ctx.query("resolution")) {
    if (auto r = store::parse_kpi_resolution(*text)) {
      q.resolution = *r;
    } else {
      errors.push_back({"resolution", "must be one of raw, 1m, 1h"});
    }
  }
  read_limit(ctx, kMaxKpiPoints, q.limit, errors);
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  q.entity = std::move(*entity);
  q.metric = std::move(*metric);
  auto found = store.query(q);
  if (!found) return http::problem(ctx, services::from_store(found.error()));
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : found->points) {
    points.push_back({{"ts_ms", p.ts_ms},
                      {"min", p.min},
                      {"max", p.max},
                      {"avg", p.avg},
                      {"count", p.count},
                      {"last", p.last}});
  }
  return http::json_ok(ctx, {{"entity", q.entity},
                             {"metric", q.metric},
                             {"resolution", std::string(store::to_string(q.resolution))},
                             {"points", std::move(points)},
                             {"truncated", found->truncated}});
}

Response get_series(store::KpiStore& store, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"entity", "metric", "limit"})) return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  store::KpiSeriesFilter filter;
  read_series_params(ctx, false, filter.entity, filter.metric, errors);
  read_limit(ctx, kMaxKpiSeriesLimit, filter.limit, errors);
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  auto listed = store.list_series(filter);
  if (!listed) return http::problem(ctx, services::from_store(listed.error()));
  nlohmann::json items = nlohmann::json::array();
  for (const auto& s : listed->items) {
    items.push_back({{"entity", s.entity},
                     {"metric", s.metric},
                     {"first_ms", s.first_ms},
                     {"last_ms", s.last_ms},
                     {"last_value", s.last_value}});
  }
  return http::json_ok(ctx, {{"items", std::move(items)}, {"truncated", listed->truncated}});
}

Response get_latest(store::KpiStore& store, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"metric", "at", "max_age_s", "limit"})) return http::problem(ctx, *p);
  std::vector<InvalidParam> errors;
  store::KpiLatestQuery q;
  q.limit = 100'000;
  const auto metric = ctx.query("metric");
  if (!metric || !store::is_kpi_metric(*metric)) {
    errors.push_back(
        {"metric", "must be 1 to 128 characters of A-Z a-z 0-9 _ . : starting with a letter or _"});
  } else {
    q.metric = std::string(*metric);
  }
  if (auto text = ctx.query("at")) {
    if (auto ms = parse_api_time_text(*text)) {
      q.at_ms = *ms;
    } else {
      errors.push_back({"at", kTimeRule});
    }
  }
  std::int64_t max_age_s = 600;
  if (auto text = ctx.query("max_age_s")) {
    const auto* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, max_age_s);
    if (ec != std::errc() || ptr != end || max_age_s < 1 || max_age_s > kMaxKpiLatestAgeS) {
      errors.push_back({"max_age_s", "must be an integer from 1 to " + std::to_string(kMaxKpiLatestAgeS)});
    }
  }
  read_limit(ctx, kMaxKpiLatestLimit, q.limit, errors);
  if (!errors.empty()) return http::problem(ctx, Problem::invalid(std::move(errors)));
  const std::int64_t reference = q.at_ms.value_or(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      std::chrono::system_clock::now().time_since_epoch())
                                                      .count());
  q.since_ms = std::max<std::int64_t>(0, reference - max_age_s * 1000);
  auto found = store.latest(q);
  if (!found) return http::problem(ctx, services::from_store(found.error()));
  nlohmann::json entities = nlohmann::json::array();
  nlohmann::json times = nlohmann::json::array();
  nlohmann::json values = nlohmann::json::array();
  for (auto& item : found->items) {
    entities.push_back(std::move(item.entity));
    times.push_back(item.ts_ms);
    values.push_back(item.value);
  }
  return http::json_ok(ctx, {{"metric", q.metric},
                             {"at_ms", q.at_ms ? nlohmann::json(*q.at_ms) : nlohmann::json(nullptr)},
                             {"since_ms", q.since_ms},
                             {"entities", std::move(entities)},
                             {"ts_ms", std::move(times)},
                             {"values", std::move(values)},
                             {"truncated", found->truncated}});
}

}  // namespace

std::string_view entity_device(std::string_view entity) {
  return entity.substr(0, entity.find('/'));
}

std::optional<std::int64_t> parse_api_time(const nlohmann::json& value) {
  if (value.is_string()) return parse_api_time_text(value.get_ref<const std::string&>());
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      return std::nullopt;
    return in_range(value.get<std::int64_t>());
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_api_time_text(std::string_view text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos) {
    std::int64_t ms = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, ms);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return in_range(ms);
  }
  auto ms = ingest::parse_rfc3339_ms(text);
  if (!ms) return std::nullopt;
  return in_range(*ms);
}

void register_kpi_routes(http::Router& router, store::KpiStore& store, store::KpiSink& sink,
                         KpiMetrics& metrics, DeviceCheck known_device) {
  using http::Permission;
  using V = bhttp::verb;
  // A push of up to kMaxKpiBatch samples is parsed and written on a worker, not on an I/O thread.
  router.add(
      V::post, "/api/v1/kpis", Permission::agent_report | Permission::manage_network,
      [&sink, &metrics, known = std::move(known_device)](RequestContext& ctx) {
        return post_kpis(sink, metrics, known, ctx);
      },
      http::Cost::heavy);
  router.add(V::get, "/api/v1/kpis", http::permits(Permission::read),
             [&store](RequestContext& ctx) { return get_points(store, ctx); });
  router.add(V::get, "/api/v1/kpis/series", http::permits(Permission::read),
             [&store](RequestContext& ctx) { return get_series(store, ctx); });
  router.add(
      V::get, "/api/v1/kpis/latest", http::permits(Permission::read),
      [&store](RequestContext& ctx) { return get_latest(store, ctx); }, http::Cost::heavy);
}

KpiRetentionTask::KpiRetentionTask(store::KpiStore& store, std::chrono::milliseconds interval,
                                   KpiMetrics& metrics)
    : store_(store), metrics_(metrics), thread_("KPI retention", {.period = interval}, [this] { prune(); }) {}

void KpiRetentionTask::prune() {
  auto pruned = store_.prune(std::chrono::system_clock::now());
  if (!pruned) {
    HSNS_LOG(warning) << "KPI retention: " << pruned.error().message();
    return;
  }
  metrics_.observe_prune(*pruned);
  if (pruned->raw + pruned->minute + pruned->hour > 0) {
    HSNS_LOG(info) << "KPI retention removed " << pruned->raw << " raw samples, " << pruned->minute
                   << " minute and " << pruned->hour << " hour buckets, " << pruned->series << " series";
  }
}

}  // namespace hsns::kpis_api
