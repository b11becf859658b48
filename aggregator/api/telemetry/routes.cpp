#include "api/telemetry/routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "api/network/requests.h"
#include "api/telemetry/flow_pairs.h"
#include "hsns/proto/qp.h"
#include "hsns/time.h"
#include "http/json_io.h"
#include "ingest/syslog_parser.h"
#include "services/job_traffic.h"
#include "services/store_errors.h"

namespace hsns::telemetry_api {
namespace {

using http::RequestContext;
using http::Response;
namespace bhttp = boost::beast::http;

Response store_problem(const RequestContext& ctx, store::StoreError e) {
  return http::problem(ctx, services::from_store(std::move(e)));
}

// The query parameters every telemetry route reads, checked strictly; errors collect per parameter.
class QueryReader {
 public:
  explicit QueryReader(const RequestContext& ctx) : ctx_(ctx) {}

  std::optional<std::string> text(const char* name) {
    auto v = ctx_.query(name);
    if (v && (v->empty() || v->size() > 300)) {
      errors_.push_back({name, "must be 1 to 300 characters"});
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::string> host_name(const char* name) {
    auto v = ctx_.query(name);
    if (!v) return std::nullopt;
    if (auto why = network::check_host_name(*v)) {
      errors_.push_back({name, *why});
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::int64_t> time(const char* name) {
    auto v = ctx_.query(name);
    if (!v) return std::nullopt;
    auto ms = ingest::parse_rfc3339_ms(*v);
    if (!ms) errors_.push_back({name, "must be an RFC 3339 time with an offset (2026-12-02T05:07:56Z)"});
    return ms;
  }

  std::size_t count(const char* name, std::size_t min, std::size_t max, std::size_t fallback) {
    auto v = ctx_.query(name);
    if (!v) return fallback;
    std::size_t n = 0;
    const auto* end = v->data() + v->size();
    const auto [ptr, ec] = std::from_chars(v->data(), end, n);
    if (ec != std::errc() || ptr != end || n < min || n > max) {
      errors_.push_back(
          {name, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max)});
      return fallback;
    }
    return n;
  }

  store::TimeRange range() {
    store::TimeRange r{time("since"), time("until")};
    if (r.since_ms && r.until_ms && *r.since_ms >= *r.until_ms)
      errors_.push_back({"until", "must be after since"});
    return r;
  }

  store::Paging paging() {
    return {count("offset", 0, kMaxTelemetryOffset, 0),
            count("limit", 1, kMaxTelemetryLimit, kDefaultTelemetryLimit)};
  }

  std::optional<Problem> problem() const {
    if (errors_.empty()) return std::nullopt;
    std::vector<InvalidParam> params;
    for (const auto& e : errors_) params.push_back({e.field, e.reason});
    return Problem::invalid(std::move(params));
  }

 private:
  const RequestContext& ctx_;
  std::vector<FieldError> errors_;
};

nlohmann::json next_offset(const store::Paging& paging, bool more) {
  if (!more) return nullptr;
  return paging.offset + paging.limit;
}

std::string time_text(std::int64_t ms) {
  return format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

// The page answer: {"items": [...], "next_offset": n|null}.
template <typename T, typename Row>
Response page_answer(const RequestContext& ctx, const store::TelemetryPage<T>& page,
                     const store::Paging& paging, Row row) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& x : page.items) items.push_back(row(x));
  return http::json_ok(ctx, {{"items", std::move(items)}, {"next_offset", next_offset(paging, page.more)}});
}

// The path's host, checked (400 naming "host").
std::optional<Problem> check_path_host(const RequestContext& ctx, std::string& host) {
  host = std::string(ctx.path_param("host"));
  if (auto why = network::check_host_name(host)) return Problem::invalid("host", *why);
  return std::nullopt;
}

// ---- flows ----

struct FlowRoute {
  store::TelemetryStore& telemetry;
  store::JobStore& jobs;
  store::NetworkStore& network;
};

// The addresses of the job's NPUs: every port of each (host, NPU) it holds, and the address it was
// scheduled with (services/job_traffic.h, per rank).
store::StoreResult<std::set<std::string>> job_addresses(FlowRoute& r, const std::string& name) {
  auto job = r.jobs.get_job(name);
  if (!job) return tl::unexpected(job.error());
  auto ranks = services::rank_addresses(r.network, *job);
  if (!ranks) return tl::unexpected(ranks.error());
  std::set<std::string> out;
  for (auto& [rank, addresses] : *ranks) out.merge(addresses);
  return out;
}

bool involves(const std::set<std::string>& addresses, const store::FlowDirectionTotals& d) {
  return addresses.count(d.src) > 0 || addresses.count(d.dst) > 0;
}

Response list_flows(FlowRoute& r, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"host", "port", "job", "since", "until", "limit", "offset"}))
    return http::problem(ctx, *p);
  QueryReader q(ctx);
  store::FlowQuery query;
  query.host = q.host_name("host");
  const auto port = q.text("port");
  const auto job = q.text("job");
  query.range = q.range();
  const auto paging = q.paging();
  if (auto p = q.problem()) return http::problem(ctx, *p);

  std::optional<std::set<std::string>> port_addresses;
  if (port) {
    auto found = r.network.get_port(*port);
    if (!found) return store_problem(ctx, found.error());
    port_addresses = std::set<std::string>{found->ip_address.to_string()};
  }
  std::optional<std::set<std::string>> job_set;
  if (job) {
    auto found = job_addresses(r, *job);
    if (!found) return store_problem(ctx, found.error());
    job_set = std::move(*found);
  }
  // The store selects by one address set; with both, by the port's, and the job's is applied here.
  const auto& selecting = port_addresses ? port_addresses : job_set;
  if (selecting) query.addresses = std::vector<std::string>(selecting->begin(), selecting->end());
  query.max_keys = kMaxFlowKeys;

  auto directions = r.telemetry.flow_directions(query);
  if (!directions) return store_problem(ctx, directions.error());
  if (directions->size() > kMaxFlowKeys) {
    return http::problem(
        ctx, Problem::unprocessable("since", "the range holds more than " + std::to_string(kMaxFlowKeys) +
                                                 " flows: narrow it with since/until, host, "
                                                 "port or job"));
  }
  if (port_addresses && job_set) {
    std::erase_if(*directions, [&](const store::FlowDirectionTotals& d) { return !involves(*job_set, d); });
  }
  const auto pairs = pair_flow_directions(*directions);
  nlohmann::json items = nlohmann::json::array();
  const std::size_t end = std::min(pairs.size(), paging.offset + paging.limit);
  for (std::size_t i = paging.offset; i < end; ++i) items.push_back(flow_pair_json(pairs[i]));
  return http::json_ok(
      ctx, {{"items", std::move(items)}, {"next_offset", next_offset(paging, end < pairs.size())}});
}

// ---- per host ----

nlohmann::json counter_json(const store::CounterReading& c) {
  return {{"port", c.port},   {"source", c.source}, {"counter", c.counter}, {"value", c.value},
          {"delta", c.delta}, {"rate", c.rate},     {"ts_ms", c.ts_ms},     {"time", time_text(c.ts_ms)}};
}

Response host_counters(store::TelemetryStore& t, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"port", "counter", "since", "until", "limit", "offset"}))
    return http::problem(ctx, *p);
  std::string host;
  if (auto p = check_path_host(ctx, host)) return http::problem(ctx, *p);
  QueryReader q(ctx);
  store::CounterQuery query;
  query.port = q.text("port");
  query.counter = q.text("counter");
  const auto range = q.range();
  query.paging = q.paging();
  if (auto p = q.problem()) return http::problem(ctx, *p);
  const bool series = range.since_ms || range.until_ms;
  auto page = series ? t.counter_series(host, query, range) : t.latest_counters(host, query);
  if (!page) return store_problem(ctx, page.error());
  return page_answer(ctx, *page, query.paging, counter_json);
}

// A module or neighbour: its section's document with the reading's time.
nlohmann::json document_json(const store::SectionDocument& d) {
  auto out = nlohmann::json::parse(d.document);
  out["ts_ms"] = d.ts_ms;
  out["time"] = time_text(d.ts_ms);
  return out;
}

template <auto Method>
Response host_documents(store::TelemetryStore& t, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"netdev", "limit", "offset"})) return http::problem(ctx, *p);
  std::string host;
  if (auto p = check_path_host(ctx, host)) return http::problem(ctx, *p);
  QueryReader q(ctx);
  const auto netdev = q.text("netdev");
  const auto paging = q.paging();
  if (auto p = q.problem()) return http::problem(ctx, *p);
  auto page = (t.*Method)(host, netdev, paging);
  if (!page) return store_problem(ctx, page.error());
  return page_answer(ctx, *page, paging, document_json);
}

Response host_qps(store::TelemetryStore& t, RequestContext& ctx) {
  if (auto p = http::check_query(ctx, {"limit", "offset"})) return http::problem(ctx, *p);
  std::string host;
  if (auto p = check_path_host(ctx, host)) return http::problem(ctx, *p);
  QueryReader q(ctx);
  const auto paging = q.paging();
  if (auto p = q.problem()) return http::problem(ctx, *p);
  auto page = t.latest_qps(host, paging);
  if (!page) return store_problem(ctx, page.error());
  return page_answer(ctx, *page, paging, [](const store::QpReading& r) {
    auto out = proto::to_json(r.record);
    out["ts_ms"] = r.ts_ms;
    out["time"] = time_text(r.ts_ms);
    return out;
  });
}

}  // namespace

void register_telemetry_routes(http::Router& router, store::TelemetryStore& telemetry, store::JobStore& jobs,
                               store::NetworkStore& network) {
  using V = bhttp::verb;
  const auto read = http::permits(http::Permission::read);
  auto flows = std::make_shared<FlowRoute>(FlowRoute{telemetry, jobs, network});
  const auto per_host = [&telemetry](Response (*fn)(store::TelemetryStore&, RequestContext&)) {
    return [&telemetry, fn](RequestContext& ctx) { return fn(telemetry, ctx); };
  };
  router.add(
      V::get, "/api/v1/flows", read, [flows](RequestContext& ctx) { return list_flows(*flows, ctx); },
      http::Cost::heavy);
  router.add(V::get, "/api/v1/hosts/{host}/counters", read, per_host(host_counters), http::Cost::heavy);
  router.add(V::get, "/api/v1/hosts/{host}/optics", read,
             per_host(host_documents<&store::TelemetryStore::latest_modules>));
  router.add(V::get, "/api/v1/hosts/{host}/lldp", read,
             per_host(host_documents<&store::TelemetryStore::latest_neighbors>));
  router.add(V::get, "/api/v1/hosts/{host}/qps", read, per_host(host_qps));
}

}  // namespace hsns::telemetry_api
