#include "brain/pipeline_routes.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "hsns/time.h"
#include "http/json_io.h"

namespace hsns::brain_pipeline {
namespace {

namespace bhttp = boost::beast::http;
using nlohmann::json;

// RFC 3339 UTC with milliseconds, like the rest of the API.
std::string format_ms(std::int64_t ms) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(std::chrono::milliseconds(ms));
  std::string text = format_rfc3339_utc(std::chrono::system_clock::time_point(seconds));
  const auto millis = ms - std::chrono::milliseconds(seconds).count();
  char fraction[5];
  std::snprintf(fraction, sizeof fraction, ".%03lld", static_cast<long long>(millis));
  text.insert(text.size() - 1, fraction);
  return text;
}

json lag_json(const LagSummary& s) {
  return {{"count", s.count}, {"p50_ms", s.p50_ms}, {"p99_ms", s.p99_ms}, {"max_ms", s.max_ms}};
}

json fault_json(const brain::FaultMatch& m) {
  json j = {{"type", m.pattern->fault},
            {"pattern", m.pattern->id},
            {"severity", brain::to_string(m.pattern->severity)},
            {"state", brain::to_string(m.state)},
            {"entity", m.entity},
            {"peer", m.peer},
            {"root_cause", m.root_cause},
            {"role", brain::to_string(m.pattern->root_cause)},
            {"time", format_ms(m.timestamp_ms)},
            {"time_ms", m.timestamp_ms},
            {"first_seen", format_ms(m.first_ms)},
            {"first_seen_ms", m.first_ms},
            {"occurrences", m.occurrences},
            {"detail", m.detail}};
  if (!m.message.empty()) j["message"] = m.message;
  if (!m.metric.empty()) {
    j["metric"] = m.metric;
    j["value"] = m.value;
  }
  return j;
}

json status_json(const EngineStatus& s, const std::string& dir) {
  const auto& d = s.detectors;
  const auto& m = s.matcher;
  json recent = json::array();
  for (const auto& f : s.recent_faults) recent.push_back(fault_json(f));
  return {{"enabled", true},
          {"patterns_dir", dir},
          {"library", {{"patterns", s.library_patterns}}},
          {"queue", {{"depth", s.queue_depth}, {"capacity", s.queue_capacity}}},
          {"counters",
           {{"samples", s.samples},
            {"logs", s.logs},
            {"dropped_samples", s.dropped_samples},
            {"dropped_logs", s.dropped_logs},
            {"processed_samples", s.processed_samples},
            {"processed_logs", s.processed_logs},
            {"faults_raised", s.faults_raised},
            {"faults_cleared", s.faults_cleared},
            {"active_faults", s.active_faults},
            {"reloads", s.reloads},
            {"reload_failures", s.reload_failures}}},
          {"detectors",
           {{"series", s.detector_series},
            {"samples", d.samples},
            {"accepted", d.accepted},
            {"late", d.late},
            {"duplicate", d.duplicate},
            {"invalid", d.invalid},
            {"untracked", d.untracked},
            {"evicted", d.evicted},
            {"counter_resets", d.counter_resets},
            {"counter_wraps", d.counter_wraps},
            {"raised", d.raised},
            {"cleared", d.cleared}}},
          {"matcher",
           {{"states", s.matcher_states},
            {"log_events", m.log_events},
            {"kpi_observations", m.kpi_observations},
            {"invalid", m.invalid},
            {"raised", m.raised},
            {"cleared", m.cleared},
            {"evicted", m.evicted},
            {"unpaired", m.unpaired}}},
          {"topology", {{"revision", s.topology_revision}, {"peers", s.peers}}},
          {"lag", {{"processing", lag_json(s.processing_lag)}, {"fault", lag_json(s.fault_lag)}}},
          {"recent_faults", std::move(recent)}};
}

}  // namespace

void register_brain_routes(http::Router& router, BrainEngine* engine, std::string patterns_dir) {
  using http::Permission;
  router.add(bhttp::verb::get, "/api/v1/brain/status", http::permits(Permission::read),
             [engine, patterns_dir](http::RequestContext& ctx) {
               if (auto bad = http::check_query(ctx, {})) return http::problem(ctx, *bad);
               if (engine == nullptr) return http::json_ok(ctx, json{{"enabled", false}});
               return http::json_ok(ctx, status_json(engine->status(), patterns_dir));
             });
  router.add(
      bhttp::verb::post, "/api/v1/brain/reload", http::permits(Permission::manage_network),
      [engine, patterns_dir](http::RequestContext& ctx) {
        if (auto bad = http::check_query(ctx, {})) return http::problem(ctx, *bad);
        if (!ctx.request.body().empty()) {
          return http::problem(ctx, Problem::malformed("this request takes no body"));
        }
        if (engine == nullptr) {
          return http::problem(ctx,
                               Error::conflict("brain.enabled", "the network brain is off (brain.enabled)"));
        }
        auto loaded = engine->reload(patterns_dir);
        if (!loaded) {
          const Error& e = loaded.error();
          const std::string reason = e.fields.empty() ? e.detail : e.fields.front().reason;
          const std::string field = e.field().empty() ? "patterns_dir" : e.field();
          return http::problem(ctx, Error::unprocessable(field,
                                                         "pattern library not reloaded (the previous one "
                                                         "stays active): " +
                                                             reason));
        }
        return http::json_ok(ctx, json{{"patterns", *loaded}, {"patterns_dir", patterns_dir}});
      },
      http::Cost::heavy);
}

}  // namespace hsns::brain_pipeline
