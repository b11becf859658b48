#include "api/alarms/routes.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "api/kpis/routes.h"
#include "hsns/json_fields.h"
#include "hsns/time.h"
#include "http/json_io.h"

namespace hsns::alarms_api {
namespace {

using http::Permission;
using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

std::string actor_of(const RequestContext& ctx) {
  return ctx.principal.empty() ? "anonymous" : ctx.principal;
}

std::optional<std::size_t> read_count(const std::string& text, std::size_t min, std::size_t max) {
  std::size_t n = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || p != end || n < min || n > max) return std::nullopt;
  return n;
}

Result<store::AlarmFilter> read_filter(const RequestContext& ctx) {
  store::AlarmFilter f;
  std::vector<FieldError> errors;
  if (auto v = ctx.query("state")) {
    if (auto s = brain::parse_alarm_state(*v)) {
      f.state = s;
    } else {
      errors.push_back({"state", "must be one of raised, acknowledged, cleared"});
    }
  }
  if (auto v = ctx.query("severity")) {
    if (auto s = brain::parse_fault_severity(*v)) {
      f.severity = s;
    } else {
      errors.push_back({"severity", "must be one of info, warning, minor, major, critical"});
    }
  }
  for (const auto& [name, target] : {std::pair{"entity", &f.entity}, std::pair{"type", &f.type}}) {
    if (auto v = ctx.query(name)) {
      if (v->empty() || v->size() > 512) {
        errors.push_back({name, "must be 1 to 512 characters"});
      } else {
        *target = std::move(*v);
      }
    }
  }
  if (auto v = ctx.query("suppressed")) {
    if (*v == "true" || *v == "false") {
      f.suppressed = *v == "true";
    } else {
      errors.push_back({"suppressed", "must be true or false"});
    }
  }
  for (const auto& [name, target] : {std::pair{"since", &f.since_ms}, std::pair{"until", &f.until_ms}}) {
    if (auto v = ctx.query(name)) {
      if (auto ms = kpis_api::parse_api_time_text(*v)) {
        *target = ms;
      } else {
        errors.push_back(
            {name, "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z) or Unix milliseconds"});
      }
    }
  }
  if (f.since_ms && f.until_ms && *f.until_ms < *f.since_ms)
    errors.push_back({"until", "must not be before since"});
  if (auto v = ctx.query("limit")) {
    if (auto n = read_count(*v, 1, kMaxAlarmLimit)) {
      f.limit = *n;
    } else {
      errors.push_back({"limit", "must be an integer from 1 to " + std::to_string(kMaxAlarmLimit)});
    }
  }
  if (auto v = ctx.query("offset")) {
    if (auto n = read_count(*v, 0, kMaxAlarmOffset)) {
      f.offset = *n;
    } else {
      errors.push_back({"offset", "must be an integer from 0 to " + std::to_string(kMaxAlarmOffset)});
    }
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  return f;
}

nlohmann::json optional_time(std::int64_t ms) {
  return ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(alarms::format_time_ms(ms));
}

Response list_alarms(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(
          ctx, {"state", "severity", "entity", "type", "suppressed", "since", "until", "limit", "offset"}))
    return http::problem(ctx, *p);
  auto filter = read_filter(ctx);
  if (!filter) return http::problem(ctx, filter.error());
  auto page = service.query(*filter);
  if (!page) return http::problem(ctx, page.error());
  nlohmann::json items = nlohmann::json::array();
  for (const auto& a : page->items) items.push_back(alarm_json(a));
  return http::json_ok(ctx, {{"items", std::move(items)}, {"total", page->total}});
}

Response get_alarm(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  const std::string id(ctx.path_param("id"));
  auto found = service.get(id);
  if (!found) return http::problem(ctx, found.error());
  if (!*found) return http::problem(ctx, Error::not_found("no alarm " + id));
  nlohmann::json body = alarm_json((*found)->alarm);
  nlohmann::json history = nlohmann::json::array();
  for (const auto& h : (*found)->history) {
    history.push_back({{"change", std::string(brain::to_string(h.change))},
                       {"at", alarms::format_time_ms(h.at_ms)},
                       {"at_ms", h.at_ms},
                       {"actor", h.actor},
                       {"state", std::string(brain::to_string(h.state))},
                       {"suppressed", h.suppressed},
                       {"detail", h.detail},
                       {"comment", h.comment}});
  }
  body["history"] = std::move(history);
  return http::json_ok(ctx, body);
}

// The optional "comment" of an acknowledgement body (an empty body is no comment).
tl::expected<std::pair<std::string, std::vector<std::string>>, Problem> read_ack(const RequestContext& ctx,
                                                                                 bool group) {
  std::pair<std::string, std::vector<std::string>> out;
  if (!group && ctx.request.body().empty()) return out;
  auto body = http::json_request_body(ctx);
  if (!body) return tl::unexpected(body.error());
  FieldReader r(*body);
  out.first = r.string("comment", false, kMaxCommentLength).value_or("");
  if (group) {
    if (auto ids = r.strings("ids", true, alarms::kMaxAckGroup, 64)) {
      if (ids->empty() && r.ok()) r.fail("ids", "must name at least 1 alarm");
      out.second = std::move(*ids);
    }
  }
  if (auto p = r.finish()) return tl::unexpected(std::move(*p));
  return out;
}

Response ack_one(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto ack = read_ack(ctx, false);
  if (!ack) return http::problem(ctx, ack.error());
  auto done =
      service.acknowledge(std::string(ctx.path_param("id")), actor_of(ctx), ack->first, unix_now_ms());
  if (!done) return http::problem(ctx, done.error());
  return http::json_ok(ctx, alarm_json(*done));
}

Response ack_group(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto ack = read_ack(ctx, true);
  if (!ack) return http::problem(ctx, ack.error());
  auto done = service.acknowledge_all(ack->second, actor_of(ctx), ack->first, unix_now_ms());
  if (!done) return http::problem(ctx, done.error());
  nlohmann::json items = nlohmann::json::array();
  for (const auto& a : *done) items.push_back(alarm_json(a));
  return http::json_ok(ctx, {{"items", std::move(items)}});
}

Response list_silences(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  nlohmann::json items = nlohmann::json::array();
  for (const auto& s : service.silences()) items.push_back(silence_json(s));
  return http::json_ok(ctx, {{"items", std::move(items)}});
}

Response get_silence(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  const auto id = ctx.path_param("id");
  for (const auto& s : service.silences()) {
    if (s.id == id) return http::json_ok(ctx, silence_json(s));
  }
  return http::problem(ctx, Error::not_found("no silence " + std::string(id)));
}

Response create_silence(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return http::problem(ctx, body.error());
  const std::int64_t now = unix_now_ms();
  FieldReader r(*body);
  brain::Silence s;
  s.entity = r.string("entity", false, brain::kMaxSilenceFieldLength).value_or("");
  s.type = r.string("type", false, brain::kMaxSilenceFieldLength).value_or("");
  s.regex = r.string("regex", false, brain::kMaxSilenceFieldLength).value_or("");
  s.reason = r.string("reason", true, brain::kMaxSilenceReasonLength).value_or("");
  r.known("expires");
  if (const auto e = body->find("expires"); e != body->end() && !e->is_null()) {
    if (auto ms = kpis_api::parse_api_time(*e)) {
      if (*ms <= now) {
        r.fail("expires", "must be in the future");
      } else {
        s.expires_ms = ms;
      }
    } else {
      r.fail("expires",
             "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z) or Unix milliseconds");
    }
  }
  if (auto p = r.finish()) return http::problem(ctx, *p);
  s.creator = actor_of(ctx);
  auto added = service.add_silence(std::move(s), now);
  if (!added) return http::problem(ctx, added.error());
  return http::json_created(ctx, silence_json(*added), "/api/v1/silences/" + added->id);
}

Response delete_silence(alarms::AlarmService& service, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto gone = service.delete_silence(std::string(ctx.path_param("id")), actor_of(ctx), unix_now_ms());
  if (!gone) return http::problem(ctx, gone.error());
  return http::empty_response(ctx.request, bhttp::status::no_content);
}

}  // namespace

nlohmann::json alarm_json(const brain::Alarm& a) {
  return {{"id", a.id},
          {"fingerprint", brain::alarm_id(a.fingerprint, 0).substr(0, 16)},
          {"type", a.type},
          {"fault", a.fault},
          {"severity", std::string(brain::to_string(a.severity))},
          {"entity", a.entity},
          {"peer", a.peer},
          {"root_cause", a.root_cause},
          {"role", std::string(brain::to_string(a.role))},
          {"state", std::string(brain::to_string(a.state))},
          {"suppressed", a.suppressed},
          {"silence_id", a.silence_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.silence_id)},
          {"flapping", a.flapping},
          {"first_seen", alarms::format_time_ms(a.first_ms)},
          {"first_seen_ms", a.first_ms},
          {"last_seen", alarms::format_time_ms(a.last_ms)},
          {"last_seen_ms", a.last_ms},
          {"cleared_at", optional_time(a.cleared_ms)},
          {"count", a.count},
          {"detail", a.detail},
          {"message", a.message},
          {"acknowledged_by",
           a.acknowledged_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.acknowledged_by)},
          {"acknowledged_at", optional_time(a.acknowledged_ms)},
          {"comment", a.comment}};
}

nlohmann::json silence_json(const brain::Silence& s) {
  auto text_or_null = [](const std::string& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  return {{"id", s.id},
          {"entity", text_or_null(s.entity)},
          {"type", text_or_null(s.type)},
          {"regex", text_or_null(s.regex)},
          {"expires",
           s.expires_ms ? nlohmann::json(alarms::format_time_ms(*s.expires_ms)) : nlohmann::json(nullptr)},
          {"creator", s.creator},
          {"reason", s.reason},
          {"created", alarms::format_time_ms(s.created_ms)}};
}

std::string change_message(const brain::AlarmChange& c) {
  const nlohmann::json m = {{"kind", "alarm"},
                            {"change", std::string(brain::to_string(c.change))},
                            {"at", alarms::format_time_ms(c.at_ms)},
                            {"actor", c.actor},
                            {"item", alarm_json(c)}};
  return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void register_alarm_routes(http::Router& router, alarms::AlarmService& service, http::WebSocketHub& hub) {
  using V = bhttp::verb;
  service.add_listener([&hub](std::span<const brain::AlarmChange> changes) {
    for (const auto& c : changes) {
      // A suppressed alarm is not notified; the change that suppresses it is (a dashboard drops it).
      if (c.suppressed && c.change != brain::AlarmChangeKind::suppressed) continue;
      hub.publish(kAlarmTopic, change_message(c));
    }
  });
  const auto read = http::permits(Permission::read);
  const auto write = http::permits(Permission::manage_network);
  router.add(V::get, "/api/v1/alarms", read,
             [&service](RequestContext& ctx) { return list_alarms(service, ctx); });
  // Before /api/v1/alarms/{id}: the first matching route wins.
  router.add_websocket("/api/v1/alarms/stream", read,
                       [&hub](const RequestContext&, const std::shared_ptr<http::WebSocketChannel>& channel) {
                         hub.subscribe(kAlarmTopic, channel);
                       });
  router.add(V::post, "/api/v1/alarms/ack", write,
             [&service](RequestContext& ctx) { return ack_group(service, ctx); });
  router.add(V::get, "/api/v1/alarms/{id}", read,
             [&service](RequestContext& ctx) { return get_alarm(service, ctx); });
  router.add(V::post, "/api/v1/alarms/{id}/ack", write,
             [&service](RequestContext& ctx) { return ack_one(service, ctx); });
  router.add(V::get, "/api/v1/silences", read,
             [&service](RequestContext& ctx) { return list_silences(service, ctx); });
  router.add(V::post, "/api/v1/silences", write,
             [&service](RequestContext& ctx) { return create_silence(service, ctx); });
  router.add(V::get, "/api/v1/silences/{id}", read,
             [&service](RequestContext& ctx) { return get_silence(service, ctx); });
  router.add(V::delete_, "/api/v1/silences/{id}", write,
             [&service](RequestContext& ctx) { return delete_silence(service, ctx); });
}

}  // namespace hsns::alarms_api
