#include "api/logs/routes.h"

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>

#include "hsns/error.h"
#include "hsns/time.h"
#include "http/json_io.h"

namespace hsns::logs_api {
namespace {

using ingest::IngestedLog;

constexpr std::array<const char*, 8> kSeverities = {"emergency", "alert",  "critical",      "error",
                                                    "warning",   "notice", "informational", "debug"};

// RFC 3339 with milliseconds, UTC ("2026-12-02T05:07:56.123Z").
std::string format_ms(std::int64_t ms) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(std::chrono::milliseconds(ms));
  std::string text = format_rfc3339_utc(std::chrono::system_clock::time_point(seconds));
  const auto millis = ms - std::chrono::milliseconds(seconds).count();
  char fraction[5];
  std::snprintf(fraction, sizeof fraction, ".%03lld", static_cast<long long>(millis));
  text.insert(text.size() - 1, fraction);
  return text;
}

Result<ingest::LogBuffer::Query> read_query(const http::RequestContext& ctx) {
  ingest::LogBuffer::Query q;
  std::vector<FieldError> errors;
  if (auto device = ctx.query("device")) {
    if (device->empty() || device->size() > 300) {
      errors.push_back({"device", "must be a device name of 1 to 300 characters"});
    } else {
      q.device = std::move(*device);
    }
  }
  if (auto since = ctx.query("since")) {
    q.since_ms = ingest::parse_rfc3339_ms(*since);
    if (!q.since_ms)
      errors.push_back({"since", "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z)"});
  }
  if (auto limit = ctx.query("limit")) {
    std::size_t n = 0;
    const auto* end = limit->data() + limit->size();
    const auto [ptr, ec] = std::from_chars(limit->data(), end, n);
    if (ec != std::errc() || ptr != end || n < 1 || n > kMaxLogLimit) {
      errors.push_back({"limit", "must be an integer from 1 to " + std::to_string(kMaxLogLimit)});
    } else {
      q.limit = n;
    }
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  return q;
}

}  // namespace

nlohmann::json log_json(const IngestedLog& log) {
  const auto& m = log.message;
  nlohmann::json sd = nlohmann::json::array();
  for (const auto& element : m.structured_data) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : element.params) params.push_back({{"name", p.name}, {"value", p.value}});
    sd.push_back({{"id", element.id}, {"params", std::move(params)}});
  }
  return {{"sequence", log.sequence},
          {"device", log.device},
          {"known_device", log.known_device},
          {"received_at", format_ms(log.received_ms)},
          {"timestamp", format_ms(m.timestamp_ms)},
          {"timestamp_from_receipt", m.timestamp_from_receipt},
          {"format", ingest::to_string(m.format)},
          {"facility", m.facility},
          {"severity", m.severity},
          {"severity_name", kSeverities.at(static_cast<std::size_t>(m.severity))},
          {"hostname", m.hostname},
          {"app", m.app},
          {"procid", m.procid},
          {"msgid", m.msgid},
          {"structured_data", std::move(sd)},
          {"message", m.message},
          {"source", m.source}};
}

void register_log_routes(http::Router& router, const ingest::LogBuffer& buffer) {
  // On a worker: the query walks up to every kept message (it copies only the `limit` it answers).
  router.add(
      http::bhttp::verb::get, "/api/v1/logs", http::permits(http::Permission::read),
      [&buffer](http::RequestContext& ctx) {
        if (auto p = http::check_query(ctx, {"device", "since", "limit"})) return http::problem(ctx, *p);
        auto q = read_query(ctx);
        if (!q) return http::problem(ctx, q.error());
        nlohmann::json items = nlohmann::json::array();
        for (const auto& log : buffer.query(*q)) items.push_back(log_json(log));
        return http::json_ok(ctx, {{"items", std::move(items)}});
      },
      http::Cost::heavy);
}

}  // namespace hsns::logs_api
