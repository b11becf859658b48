#include "api/kpis/events.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "hsns/json_fields.h"
#include "http/auth.h"
#include "http/json_io.h"
#include "store/kpi_store.h"

namespace hsns::kpis_api {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

constexpr int kUserFacility = 1;

bool is_event_type(std::string_view type) {
  if (type.empty() || type.size() > 64) return false;
  for (const char c : type) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// An attribute's value as text: strings as they are, numbers and booleans as JSON writes them.
std::optional<std::string> attribute_text(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > 1024) return std::nullopt;
    return s;
  }
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}

void read_attributes(FieldReader& r, ingest::SyslogMessage& m) {
  const auto* attributes = r.object("attributes", false);
  if (attributes == nullptr) return;
  if (attributes->size() > kMaxEventAttributes) {
    r.fail("attributes", "must have at most " + std::to_string(kMaxEventAttributes) + " members");
    return;
  }
  ingest::SdElement sd{"attributes", {}};
  for (const auto& item : attributes->items()) {
    const std::string& name = item.key();
    const nlohmann::json& value = item.value();
    if (name.empty() || name.size() > 64) {
      r.fail("attributes", "member names must be 1 to 64 characters");
      continue;
    }
    auto text = attribute_text(value);
    if (!text) {
      r.fail("attributes." + name, "must be a string of at most 1024 characters, a number or a boolean");
      continue;
    }
    sd.params.push_back({name, std::move(*text)});
  }
  if (!sd.params.empty()) m.structured_data.push_back(std::move(sd));
}

tl::expected<std::vector<ingest::IngestedLog>, Problem> parse_events(const nlohmann::json& body,
                                                                     const std::string& source,
                                                                     std::int64_t now_ms) {
  FieldReader reader(body);
  std::vector<ingest::IngestedLog> events;
  reader.objects("events", true, kMaxEventBatch, [&](FieldReader& r, std::size_t i) {
    const auto& element = body.at("events").at(i);
    ingest::IngestedLog log;
    auto& m = log.message;
    m.format = ingest::SyslogFormat::api;
    m.facility = kUserFacility;
    m.source = source;
    log.received_ms = now_ms;
    if (auto entity = r.string("entity", true, store::kMaxKpiEntityLength)) {
      if (store::is_kpi_entity(*entity)) {
        m.hostname = std::move(*entity);
      } else {
        r.fail("entity", "must be 1 to 256 printable ASCII characters without space");
      }
    }
    if (auto type = r.string("type", true, 64)) {
      if (is_event_type(*type)) {
        m.app = std::move(*type);
      } else {
        r.fail("type", "must be 1 to 64 characters of A-Z a-z 0-9 _ . : -");
      }
    }
    if (auto severity = r.one_of(
            "severity", true,
            {"emergency", "alert", "critical", "error", "warning", "notice", "informational", "debug"})) {
      m.severity = static_cast<int>(*severity);
    }
    m.message = r.string("message", true, kMaxEventMessage).value_or("");
    r.known("ts");
    if (const auto ts = element.find("ts"); ts == element.end()) {
      m.timestamp_ms = now_ms;
      m.timestamp_from_receipt = true;
    } else if (auto ms = parse_api_time(*ts)) {
      m.timestamp_ms = *ms;
    } else {
      r.fail("ts",
             "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z) or an integer of Unix "
             "milliseconds");
    }
    read_attributes(r, m);
    events.push_back(std::move(log));
  });
  if (reader.ok() && events.empty()) reader.fail("events", "must have at least 1 item");
  if (auto p = reader.finish()) return tl::unexpected(std::move(*p));
  return events;
}

Response post_events(ingest::LogBuffer& logs, KpiMetrics& metrics, ingest::IngestMetrics& ingest_metrics,
                     const DeviceCheck& known_device, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {})) return http::problem(ctx, *p);
  auto body = http::json_request_body(ctx);
  if (!body) return http::problem(ctx, body.error());
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto events = parse_events(*body, ctx.principal.empty() ? "api" : "api:" + ctx.principal, now_ms);
  if (!events) return http::problem(ctx, events.error());
  EntityBinding binding(ctx.bound_host);
  for (std::size_t i = 0; i < events->size(); ++i)
    binding.check(entity_device((*events)[i].message.hostname), "events", i, "entity");
  if (auto refused = binding.refusal()) return http::problem(ctx, *refused);
  std::uint64_t stored = 0;
  std::uint64_t dropped = 0;
  std::uint64_t unknown = 0;
  for (auto& log : *events) {
    const auto device = entity_device(log.message.hostname);
    std::optional<std::string> known;
    if (known_device) known = known_device(device);
    log.known_device = known.has_value();
    if (!log.known_device) ++unknown;
    log.device = known ? std::move(*known) : "unknown:" + std::string(device);
    const auto added = logs.add(std::move(log));
    if (added.stored) {
      ++stored;
    } else {
      ++dropped;
    }
    ingest_metrics.outside_window("events", added.time);
    ingest_metrics.evicted(added.evicted);
  }
  metrics.observe_events(stored, dropped, unknown);
  return http::json_ok(ctx, {{"stored", stored}, {"dropped", dropped}, {"unknown_entities", unknown}});
}

}  // namespace

void register_event_routes(http::Router& router, ingest::LogBuffer& logs, KpiMetrics& metrics,
                           ingest::IngestMetrics& ingest_metrics, DeviceCheck known_device) {
  using http::Permission;
  // A batch of up to kMaxEventBatch events is parsed on a worker, not on an I/O thread.
  router.add(
      bhttp::verb::post, "/api/v1/events", Permission::agent_report | Permission::manage_network,
      [&logs, &metrics, &ingest_metrics, known = std::move(known_device)](RequestContext& ctx) {
        return post_events(logs, metrics, ingest_metrics, known, ctx);
      },
      http::Cost::heavy);
}

}  // namespace hsns::kpis_api
