// The KPI store and the push APIs over real HTTP on loopback, against the real aggregator with its SQLite
// file: POST /api/v1/kpis with an agent token (what a monitoring platform holds), GET /api/v1/kpis at raw, 1m
// and 1h, the series list, duplicates, out-of-order and late samples counted (answer and /metrics), a bad
// batch storing nothing, POST /api/v1/events listed by GET /api/v1/logs, and hsnsd's reports becoming KPI
// series.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "hsns/proto/report.h"
#include "hsns/time.h"
#include "store/database.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/report_sample.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The start of the hour two hours ago: every sample of a test lies within the raw retention (48 h).
std::int64_t base_ms() {
  const auto t = now_ms() - std::int64_t{2} * 3'600'000;
  return t - t % 3'600'000;
}

std::int64_t count(const AggregatorProcess& agg, const std::string& sql) {
  store::Connection c(agg.database().string(), true, 5000ms);
  auto st = c.prepare(sql);
  if (!st) throw std::runtime_error(st.error().message);
  auto row = st->step();
  if (!row || !*row) throw std::runtime_error("no row for " + sql);
  return st->column_int64(0);
}

json call(HttpClient& client, const std::string& method, const std::string& target, const json& body,
          int expected_status) {
  auto r = method == "GET" ? client.get(target) : client.post(target, body.dump());
  if (!r) throw std::runtime_error(r.error());
  EXPECT_EQ(r->status, expected_status) << method << " " << target << ": " << r->body;
  return json::parse(r->body);
}

json sample(const std::string& entity, const std::string& metric, const json& ts, double value) {
  return {{"entity", entity}, {"metric", metric}, {"ts", ts}, {"value", value}};
}

double metric(AggregatorProcess& agg, const std::string& selector) {
  auto r = agg.client().get("/metrics");
  if (!r) throw std::runtime_error(r.error());
  return metric_value(r->body, selector).value_or(-1);
}

// The names of a problem document's invalid_params.
std::vector<std::string> invalid_names(const json& problem) {
  std::vector<std::string> names;
  for (const auto& p : problem.value("invalid_params", json::array())) names.push_back(p.at("name"));
  return names;
}

TEST(KpiApi, PushedSamplesAreQueriedAtEachResolution) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto monitor = agg.client(kAgentToken);
  auto viewer = agg.client(kViewerToken);
  const auto base = base_ms();
  // RFC 3339 and Unix milliseconds mixed; minute 0: 1, 5 (last 5); minute 1: 9; next hour: 2.
  const std::string rfc3339 =
      format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(base + 1'000)));
  const json batch = {{"samples",
                       {sample("leaf01/Ethernet1/1", "rx_bytes_per_s", rfc3339, 1),
                        sample("leaf01/Ethernet1/1", "rx_bytes_per_s", base + 30'000, 5),
                        sample("leaf01/Ethernet1/1", "rx_bytes_per_s", base + 60'000, 9),
                        sample("leaf01/Ethernet1/1", "rx_bytes_per_s", base + 3'600'000, 2),
                        sample("leaf01", "cpu_utilisation", base, 0.25)}}};
  const auto answer = call(monitor, "POST", "/api/v1/kpis", batch, 200);
  EXPECT_EQ(answer, json({{"accepted", 5},
                          {"duplicate", 0},
                          {"out_of_order", 0},
                          {"rejected", 0},
                          {"new_series", 2},
                          {"unknown_entities", 5}}));  // no topology: every device is unknown

  const std::string series = "/api/v1/kpis?entity=leaf01/Ethernet1/1&metric=rx_bytes_per_s";
  const auto raw = call(viewer, "GET", series, nullptr, 200);
  ASSERT_EQ(raw.at("points").size(), 4U);
  EXPECT_EQ(raw.at("resolution"), "raw");
  EXPECT_EQ(
      raw.at("points")[0],
      json({{"ts_ms", base + 1'000}, {"min", 1.0}, {"max", 1.0}, {"avg", 1.0}, {"count", 1}, {"last", 1.0}}));
  const auto minute = call(viewer, "GET", series + "&resolution=1m", nullptr, 200);
  ASSERT_EQ(minute.at("points").size(), 3U);
  EXPECT_EQ(minute.at("points")[0],
            json({{"ts_ms", base}, {"min", 1.0}, {"max", 5.0}, {"avg", 3.0}, {"count", 2}, {"last", 5.0}}));
  const auto hour = call(viewer, "GET", series + "&resolution=1h", nullptr, 200);
  ASSERT_EQ(hour.at("points").size(), 2U);
  EXPECT_EQ(hour.at("points")[0],
            json({{"ts_ms", base}, {"min", 1.0}, {"max", 9.0}, {"avg", 5.0}, {"count", 3}, {"last", 9.0}}));
  // since / until bound the points; limit truncates.
  const auto window = call(viewer, "GET",
                           series + "&since=" + std::to_string(base + 30'000) +
                               "&until=" + std::to_string(base + 3'600'000) + "&limit=1",
                           nullptr, 200);
  ASSERT_EQ(window.at("points").size(), 1U);
  EXPECT_EQ(window.at("points")[0].at("ts_ms"), base + 30'000);
  EXPECT_TRUE(window.at("truncated"));

  const auto list = call(viewer, "GET", "/api/v1/kpis/series", nullptr, 200);
  ASSERT_EQ(list.at("items").size(), 2U);
  EXPECT_EQ(list.at("items")[0].at("entity"), "leaf01");
  EXPECT_EQ(list.at("items")[1].at("last_ms"), base + 3'600'000);
  EXPECT_EQ(list.at("items")[1].at("last_value"), 2.0);
  const auto one = call(viewer, "GET", "/api/v1/kpis/series?metric=cpu_utilisation", nullptr, 200);
  EXPECT_EQ(one.at("items").size(), 1U);
  EXPECT_EQ(metric(agg, "hsns_kpi_unknown_entity_samples_total"), 5);
}

// GET /api/v1/kpis/latest: per entity the newest sample of one metric (now, or at a time for the time
// slider), only as old as max_age_s allows, in entity order; bad input is a problem naming each parameter.
TEST(KpiApi, LatestAnswersTheNewestValuePerEntityNowAndAtATime) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto monitor = agg.client(kAgentToken);
  auto viewer = agg.client(kViewerToken);
  const auto now = now_ms();
  const json batch = {{"samples",
                       {sample("host001/eth0", "rx_bytes_per_s", now - 3'600'000, 10),
                        sample("host001/eth0", "rx_bytes_per_s", now - 60'000, 11),
                        sample("host000/eth0", "rx_bytes_per_s", now - 7'200'000, 20),
                        sample("host000/eth0", "rx_bytes_per_s", now - 30'000, 21),
                        sample("host002/eth0", "rx_bytes_per_s", now - 5'400'000, 30),  // old only
                        sample("host000/eth0", "tx_bytes_per_s", now - 30'000, 99)}}};
  call(monitor, "POST", "/api/v1/kpis", batch, 200);

  // Now, default max age (10 minutes): host002's value is too old; another metric is not mixed in.
  const auto fresh = call(viewer, "GET", "/api/v1/kpis/latest?metric=rx_bytes_per_s", nullptr, 200);
  EXPECT_EQ(fresh.at("metric"), "rx_bytes_per_s");
  EXPECT_TRUE(fresh.at("at_ms").is_null());
  EXPECT_EQ(fresh.at("entities"), json({"host000/eth0", "host001/eth0"}));
  EXPECT_EQ(fresh.at("ts_ms"), json({now - 30'000, now - 60'000}));
  EXPECT_EQ(fresh.at("values"), json({21.0, 11.0}));
  EXPECT_FALSE(fresh.at("truncated"));
  // A longer max age takes host002 in; limit truncates in entity order.
  const auto all =
      call(viewer, "GET", "/api/v1/kpis/latest?metric=rx_bytes_per_s&max_age_s=10800", nullptr, 200);
  EXPECT_EQ(all.at("values"), json({21.0, 11.0, 30.0}));
  const auto first =
      call(viewer, "GET", "/api/v1/kpis/latest?metric=rx_bytes_per_s&max_age_s=10800&limit=1", nullptr, 200);
  EXPECT_EQ(first.at("entities"), json({"host000/eth0"}));
  EXPECT_TRUE(first.at("truncated"));
  // At a time 50 minutes ago, looking back 3 hours: each entity's newest sample at or before it.
  const auto at = now - 3'000'000;
  const auto past = call(viewer, "GET",
                         "/api/v1/kpis/latest?metric=rx_bytes_per_s&max_age_s=10800&at=" + std::to_string(at),
                         nullptr, 200);
  EXPECT_EQ(past.at("at_ms"), at);
  EXPECT_EQ(past.at("since_ms"), at - 10'800'000);
  EXPECT_EQ(past.at("entities"), json({"host000/eth0", "host001/eth0", "host002/eth0"}));
  EXPECT_EQ(past.at("ts_ms"), json({now - 7'200'000, now - 3'600'000, now - 5'400'000}));
  EXPECT_EQ(past.at("values"), json({20.0, 10.0, 30.0}));
  // A time as RFC 3339; with the default max age (10 minutes) nothing that old is taken: 48 minutes ago,
  // host001's sample of an hour ago is too old.
  const std::string rfc3339 =
      format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(now - 2'880'000)));
  const auto quiet =
      call(viewer, "GET", "/api/v1/kpis/latest?metric=rx_bytes_per_s&at=" + rfc3339, nullptr, 200);
  EXPECT_EQ(quiet.at("entities"), json::array());
  const auto near = call(
      viewer, "GET", "/api/v1/kpis/latest?metric=rx_bytes_per_s&max_age_s=900&at=" + rfc3339, nullptr, 200);
  EXPECT_EQ(near.at("entities"), json({"host001/eth0"}));
  // A metric never seen: an empty answer, not an error.
  EXPECT_EQ(
      call(viewer, "GET", "/api/v1/kpis/latest?metric=fec_uncorrectable_per_s", nullptr, 200).at("values"),
      json::array());

  // Bad input: one problem naming every bad parameter; unknown parameters refused.
  const auto bad = call(
      viewer, "GET", "/api/v1/kpis/latest?metric=1bad&at=yesterday&max_age_s=0&limit=200001", nullptr, 400);
  EXPECT_EQ(invalid_names(bad), (std::vector<std::string>{"metric", "at", "max_age_s", "limit"}));
  EXPECT_EQ(invalid_names(call(viewer, "GET", "/api/v1/kpis/latest", nullptr, 400)),
            std::vector<std::string>{"metric"});
  EXPECT_EQ(invalid_names(call(viewer, "GET", "/api/v1/kpis/latest?metric=a&max_age_s=604801", nullptr, 400)),
            std::vector<std::string>{"max_age_s"});
  const auto unknown = call(viewer, "GET", "/api/v1/kpis/latest?metric=a&entity=x", nullptr, 400);
  EXPECT_EQ(unknown.at("status"), 400);
  // Unauthenticated: refused.
  auto anonymous = agg.client("");
  auto refused = anonymous.get("/api/v1/kpis/latest?metric=rx_bytes_per_s");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
}

TEST(KpiApi, DuplicatesOutOfOrderAndLateSamplesAreCountedNeverErrors) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto monitor = agg.client(kAgentToken);
  const auto base = base_ms();
  const std::string entity = "node-1/ens0f0np0";
  call(monitor, "POST", "/api/v1/kpis",
       {{"samples", {sample(entity, "symbol_error_per_s", base + 7'200'000, 1)}}}, 200);
  const json batch = {{"samples",
                       {sample(entity, "symbol_error_per_s", base + 7'200'000, 3),            // duplicate
                        sample(entity, "symbol_error_per_s", base + 7'200'000 - 600'000, 2),  // 10 min older
                        sample(entity, "symbol_error_per_s", base, 4)}}};  // 2 h older: beyond the 1 h window
  const auto answer = call(monitor, "POST", "/api/v1/kpis", batch, 200);
  EXPECT_EQ(answer.at("accepted"), 1);
  EXPECT_EQ(answer.at("duplicate"), 1);
  EXPECT_EQ(answer.at("out_of_order"), 1);
  EXPECT_EQ(answer.at("rejected"), 1);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_raw"), 2);
  EXPECT_EQ(count(agg, "SELECT CAST(value AS INTEGER) FROM kpi_raw WHERE ts_ms = " +
                           std::to_string(base + 7'200'000)),
            1);  // the first value stays
  EXPECT_EQ(metric(agg, R"(hsns_kpi_samples_total{source="push",result="accepted"})"), 2);
  EXPECT_EQ(metric(agg, R"(hsns_kpi_samples_total{source="push",result="duplicate"})"), 1);
  EXPECT_EQ(metric(agg, R"(hsns_kpi_samples_total{source="push",result="out_of_order"})"), 1);
  EXPECT_EQ(metric(agg, R"(hsns_kpi_samples_total{source="push",result="late"})"), 1);
}

TEST(KpiApi, ABadBatchIsRefusedNamingEachFieldAndStoresNothing) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto monitor = agg.client(kAgentToken);
  const auto base = base_ms();
  const json batch = {{"samples",
                       {sample("leaf01/Ethernet1", "rx_bytes_per_s", base, 1),
                        sample("leaf01 Ethernet1", "rx_bytes_per_s", base, 1),
                        sample("leaf01/Ethernet1", "rx-bytes", base, 1),
                        sample("leaf01/Ethernet1", "rx_bytes_per_s", "yesterday", 1),
                        {{"entity", "leaf01"}, {"metric", "x"}, {"ts", base}, {"value", "1"}},
                        {{"entity", "leaf01"}, {"metric", "x"}, {"ts", base}, {"value", 1}, {"unit", "B"}}}}};
  const auto problem = call(monitor, "POST", "/api/v1/kpis", batch, 400);
  EXPECT_EQ(invalid_names(problem),
            (std::vector<std::string>{"samples[3].ts", "samples[4].value", "samples[5].unit"}));
  // The shape is right but names break the store's rules: named as well, still nothing stored.
  const json names = {{"samples",
                       {sample("leaf01/Ethernet1", "rx_bytes_per_s", base, 1),
                        sample("leaf01 Ethernet1", "rx_bytes_per_s", base, 1),
                        sample("leaf01/Ethernet1", "rx-bytes", base, 1)}}};
  EXPECT_EQ(invalid_names(call(monitor, "POST", "/api/v1/kpis", names, 400)),
            (std::vector<std::string>{"samples[1].entity", "samples[2].metric"}));
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_raw"), 0);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_series"), 0);

  EXPECT_EQ(invalid_names(call(monitor, "POST", "/api/v1/kpis", {{"samples", json::array()}}, 400)),
            std::vector<std::string>{"samples"});
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_raw"), 0);

  // Only agents and operators push; queries name their bad parameters.
  auto viewer = agg.client(kViewerToken);
  call(viewer, "POST", "/api/v1/kpis", {{"samples", {sample("a", "b", base, 1)}}}, 403);
  EXPECT_EQ(invalid_names(call(viewer, "GET", "/api/v1/kpis?entity=a", nullptr, 400)),
            std::vector<std::string>{"metric"});
  EXPECT_EQ(invalid_names(
                call(viewer, "GET", "/api/v1/kpis?entity=a&metric=b&resolution=5m&since=x", nullptr, 400)),
            (std::vector<std::string>{"since", "resolution"}));
  call(viewer, "GET", "/api/v1/kpis?entity=a&metric=b&step=1", nullptr, 400);
}

TEST(KpiApi, ABatchOfMoreThan10000SamplesIsRefused) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  // Reading a JSON body of 10^4 array elements (the strict parser of lib/json_fields.cpp) takes tens of
  // seconds in the sanitizer build: a patient client. Empty objects keep the body small; the bound is
  // checked before any element is read.
  HttpClient::Options options;
  options.bearer_token = kAgentToken;
  options.timeout = std::chrono::seconds(240);
  HttpClient patient(agg.url(), options);
  json too_many = {{"samples", json::array()}};
  for (int i = 0; i <= 10'000; ++i) too_many["samples"].push_back(json::object());
  EXPECT_EQ(invalid_names(call(patient, "POST", "/api/v1/kpis", too_many, 400)),
            std::vector<std::string>{"samples"});
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_series"), 0);
}

TEST(KpiApi, PushedEventsAreListedWithTheLogs) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto monitor = agg.client(kAgentToken);
  const json events = {
      {"events",
       {{{"entity", "leaf01/Ethernet1/1"},
         {"type", "link_flap"},
         {"severity", "warning"},
         {"message", "Ethernet1/1 flapped 3 times"},
         {"ts", "2026-12-02T05:07:56.250Z"},
         {"attributes", {{"count", 3}, {"peer", "spine01"}}}},
        {{"entity", "leaf02"}, {"type", "reboot"}, {"severity", "notice"}, {"message", ""}}}}};
  EXPECT_EQ(call(monitor, "POST", "/api/v1/events", events, 200),
            json({{"stored", 2}, {"dropped", 0}, {"unknown_entities", 2}}));
  auto viewer = agg.client(kViewerToken);
  const auto logs = call(viewer, "GET", "/api/v1/logs?device=unknown:leaf01", nullptr, 200);
  ASSERT_EQ(logs.at("items").size(), 1U);
  const auto& e = logs.at("items")[0];
  EXPECT_EQ(e.at("format"), "api");
  EXPECT_EQ(e.at("hostname"), "leaf01/Ethernet1/1");
  EXPECT_EQ(e.at("app"), "link_flap");
  EXPECT_EQ(e.at("severity_name"), "warning");
  EXPECT_EQ(e.at("timestamp"), "2026-12-02T05:07:56.250Z");
  EXPECT_EQ(e.at("source"), "api:hsnsd");
  EXPECT_EQ(e.at("structured_data"),
            json::parse(R"([{"id":"attributes","params":[{"name":"count","value":"3"},)"
                        R"({"name":"peer","value":"spine01"}]}])"));
  const auto all = call(viewer, "GET", "/api/v1/logs", nullptr, 200);
  ASSERT_EQ(all.at("items").size(), 2U);
  EXPECT_TRUE(all.at("items")[1].at("timestamp_from_receipt"));

  // A bad event: nothing of the batch is kept.
  const json bad = {
      {"events",
       {{{"entity", "leaf03"}, {"type", "ok"}, {"severity", "info"}, {"message", "x"}},
        {{"entity", "leaf03"}, {"type", "bad type"}, {"severity", "error"}, {"message", "x"}}}}};
  EXPECT_EQ(invalid_names(call(monitor, "POST", "/api/v1/events", bad, 400)),
            (std::vector<std::string>{"events[0].severity", "events[1].type"}));
  EXPECT_EQ(call(viewer, "GET", "/api/v1/logs", nullptr, 200).at("items").size(), 2U);
  auto scheduler = agg.client(kSchedulerToken);
  call(scheduler, "POST", "/api/v1/events", events, 403);
  EXPECT_EQ(metric(agg, R"(hsns_kpi_events_total{result="stored"})"), 2);
}

TEST(KpiApi, EntitiesOfTopologyDevicesAreKnown) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto gen = ops.post("/api/v1/topology/generate",
                      R"({"hosts": 4, "npus_per_host": 2, "hosts_per_su": 2, "spines_per_plane": 2})");
  ASSERT_TRUE(gen && gen->status == 200) << (gen ? gen->body : gen.error());
  auto exported = ops.get("/api/v1/topology/export?format=json");
  ASSERT_TRUE(exported && exported->status == 200);
  std::smatch leaf;
  ASSERT_TRUE(std::regex_search(exported->body, leaf, std::regex("\"(leaf[A-Za-z0-9_-]*[0-9])\"")));
  const std::string name = leaf[1];
  std::this_thread::sleep_for(1100ms);  // the device check reads the topology at most once a second
  auto monitor = agg.client(kAgentToken);
  const json batch = {{"samples",
                       {sample(name + "/Ethernet1", "rx_bytes_per_s", base_ms(), 1),
                        sample("nosuchdevice/Ethernet1", "rx_bytes_per_s", base_ms(), 1)}}};
  EXPECT_EQ(call(monitor, "POST", "/api/v1/kpis", batch, 200).at("unknown_entities"), 1);
  const json events = {
      {"events", {{{"entity", name}, {"type", "reboot"}, {"severity", "notice"}, {"message", "up"}}}}};
  EXPECT_EQ(call(monitor, "POST", "/api/v1/events", events, 200).at("unknown_entities"), 0);
  const auto logs = call(monitor, "GET", "/api/v1/logs?device=" + name, nullptr, 200);
  ASSERT_EQ(logs.at("items").size(), 1U);
  EXPECT_EQ(logs.at("items")[0].at("known_device"), true);
}

TEST(KpiApi, ReportsOfHsnsdBecomeKpiSeriesOfTheHostsPorts) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto agent = agg.client(kAgentToken);
  auto reg = agent.put("/api/v1/hosts/node-1",
                       R"({"npus":[{"index":0,"netdev":"ens0f0np0","mac":"02:00:00:00:00:01"}]})");
  ASSERT_TRUE(reg && reg->status == 201);
  auto report = sample_report(1, 2, 2);
  const auto ts = now_ms() - 10'000;
  report.ts_ms = report.counters->ts_ms = report.optics->ts_ms = ts;
  auto r = agent.request("POST", "/api/v1/agents/node-1/reports",
                         proto::encode(report, proto::Encoding::cbor), "application/vnd.hsns.report.v1+cbor");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;

  auto viewer = agg.client(kViewerToken);
  const auto list = call(viewer, "GET", "/api/v1/kpis/series?entity=node-1/ens0f0np0", nullptr, 200);
  std::vector<std::string> metrics;
  for (const auto& s : list.at("items")) metrics.push_back(s.at("metric"));
  EXPECT_EQ(metrics, (std::vector<std::string>{
                         "lane1_bias_amperes", "lane1_rx_power_watts", "lane1_tx_power_watts",
                         "module_temperature_celsius", "module_voltage_volts", "np_cnp_sent_per_s",
                         "pfc_prio3_rx_pause_per_s", "pfc_prio3_rx_pause_us_per_s",
                         "pfc_prio3_tx_pause_per_s", "pfc_prio3_tx_pause_us_per_s", "port_rcv_data_per_s",
                         "port_xmit_data_per_s", "rx_bytes_per_s"}));
  const auto cnp =
      call(viewer, "GET", "/api/v1/kpis?entity=node-1/ens0f0np0&metric=np_cnp_sent_per_s", nullptr, 200);
  ASSERT_EQ(cnp.at("points").size(), 1U);
  EXPECT_EQ(cnp.at("points")[0].at("ts_ms"), ts);
  EXPECT_EQ(cnp.at("points")[0].at("last"), 102.0);  // sample_counter(0 + 2)'s rate
  const auto rx =
      call(viewer, "GET", "/api/v1/kpis?entity=node-1/ens0f0np0&metric=lane1_rx_power_watts", nullptr, 200);
  ASSERT_EQ(rx.at("points").size(), 1U);
  EXPECT_DOUBLE_EQ(rx.at("points")[0].at("last").get<double>(), 0.0011);
  // The second port's series too; a resent batch (same seq) adds nothing.
  EXPECT_EQ(
      call(viewer, "GET", "/api/v1/kpis/series?entity=node-1/ens1f0np0", nullptr, 200).at("items").size(),
      8U);
  const auto raw_rows = count(agg, "SELECT COUNT(*) FROM kpi_raw");
  r = agent.request("POST", "/api/v1/agents/node-1/reports", proto::encode(report, proto::Encoding::cbor),
                    "application/vnd.hsns.report.v1+cbor");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_raw"), raw_rows);
  EXPECT_EQ(metric(agg, R"(hsns_kpi_samples_total{source="report",result="accepted"})"),
            static_cast<double>(raw_rows));

  // A snapshot without an interval (the first after hsnsd starts) has no rates: only the optics' samples.
  auto restarted = sample_report(2, 2, 2);
  restarted.ts_ms = restarted.counters->ts_ms = restarted.optics->ts_ms = ts + 5'000;
  restarted.counters->interval_ms = 0;
  r = agent.request("POST", "/api/v1/agents/node-1/reports", proto::encode(restarted, proto::Encoding::cbor),
                    "application/vnd.hsns.report.v1+cbor");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(count(agg, "SELECT COUNT(*) FROM kpi_raw"), raw_rows + 5);
}

}  // namespace
}  // namespace hsns::testing
