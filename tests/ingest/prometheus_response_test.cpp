// The Prometheus source's pure half (aggregator/ingest/prometheus_response.h, prometheus_config.h): query
// answers of every documented shape and the refusals naming where, templates, the mapping to KPI samples
// (gauges, counter rates across answers, resets, bounds), and the `prometheus_sources:` section's errors.
#include "ingest/prometheus_response.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include "ingest/prometheus_config.h"
#include "support/temp_dir.h"

namespace hsns::ingest {
namespace {

PrometheusQueryConfig query(std::string entity, std::string metric,
                            PrometheusSeriesType type = PrometheusSeriesType::gauge) {
  PrometheusQueryConfig q;
  q.query = "x";
  q.entity = std::move(entity);
  q.metric = std::move(metric);
  q.type = type;
  return q;
}

std::string vector_answer(const std::string& series) {
  return R"({"status":"success","data":{"resultType":"vector","result":[)" + series + "]}}";
}

TEST(PrometheusResponse, VectorMatrixAndScalar) {
  auto v = parse_prometheus_response(vector_answer(
      R"({"metric":{"__name__":"up","instance":"leaf01","ifName":"Ethernet1"},"value":[1764650000.25,"3.5"]},)"
      R"({"metric":{},"value":[1764650000,"NaN"]})"));
  ASSERT_FALSE(v.error) << v.error->detail;
  ASSERT_EQ(v.series.size(), 2U);
  EXPECT_EQ(v.series[0].labels.at("instance"), "leaf01");
  ASSERT_EQ(v.series[0].points.size(), 1U);
  EXPECT_DOUBLE_EQ(v.series[0].points[0].ts_seconds, 1764650000.25);
  EXPECT_DOUBLE_EQ(v.series[0].points[0].value, 3.5);
  EXPECT_TRUE(std::isnan(v.series[1].points[0].value));

  auto m = parse_prometheus_response(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"1"],[2,"+Inf"],[3,"1.5e+03"]]}]}})");
  ASSERT_FALSE(m.error) << m.error->detail;
  ASSERT_EQ(m.series[0].points.size(), 3U);
  EXPECT_TRUE(std::isinf(m.series[0].points[1].value));
  EXPECT_DOUBLE_EQ(m.series[0].points[2].value, 1500);

  auto s = parse_prometheus_response(
      R"({"status":"success","data":{"resultType":"scalar","result":[1764650000.5,"7"]},"warnings":["w"]})");
  ASSERT_FALSE(s.error) << s.error->detail;
  ASSERT_EQ(s.series.size(), 1U);
  EXPECT_TRUE(s.series[0].labels.empty());
  EXPECT_DOUBLE_EQ(s.series[0].points[0].value, 7);
}

TEST(PrometheusResponse, RefusalsNameWhere) {
  auto expect = [](const std::string& body, PrometheusError::Kind kind, const std::string& detail) {
    auto r = parse_prometheus_response(body);
    ASSERT_TRUE(r.error) << body;
    EXPECT_EQ(r.error->kind, kind) << body;
    EXPECT_NE(r.error->detail.find(detail), std::string::npos) << r.error->detail;
  };
  using K = PrometheusError::Kind;
  expect(R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", K::error_status,
         "bad_data: parse error at char 3");
  expect("<html>", K::malformed, "not JSON");
  expect(R"({"status":"success","status":"success"})", K::malformed, "not JSON");  // a repeated key
  expect(R"([1])", K::malformed, "must be a JSON object");
  expect(R"({"status":"success"})", K::malformed, "data: must be an object");
  expect(R"({"status":"success","data":{"resultType":"string","result":[1,"x"]}})", K::malformed,
         "data.resultType: string is not one of vector, matrix, scalar");
  expect(vector_answer(R"({"metric":{},"value":[1,"1"]},{"metric":{"a":1},"value":[1,"1"]})"), K::malformed,
         "data.result[1].metric.a: must be a string");
  expect(vector_answer(R"({"metric":{},"value":[1,2]})"), K::malformed,
         "data.result[0].value[1] must be a string");
  expect(vector_answer(R"({"metric":{},"value":[1,"12abc"]})"), K::malformed,
         "data.result[0].value[1] must be a number");
  expect(vector_answer(R"({"metric":{},"value":[-1,"1"]})"), K::malformed, "[0] must be a time");
  expect(vector_answer(R"({"metric":{}})"), K::malformed, "data.result[0].value: is missing");
  expect(std::string(kMaxPrometheusResponseBytes + 1, ' '), K::too_large, "at most");
  std::string deep(40, '[');
  expect(deep + std::string(40, ']'), K::malformed, "not JSON");
}

TEST(PrometheusTemplates, RenderAndSyntax) {
  const std::map<std::string, std::string> labels = {{"instance", "leaf01:9100"}, {"ifName", "Ethernet1/1"}};
  EXPECT_EQ(render_template("{instance}/{ifName}", labels), "leaf01:9100/Ethernet1/1");
  EXPECT_EQ(render_template("x{{y}}", labels), "x{y}");
  EXPECT_EQ(render_template("{device}", labels), std::nullopt);
  EXPECT_TRUE(valid_template("{instance}/{ifName}"));
  EXPECT_TRUE(valid_template("plain_metric"));
  EXPECT_TRUE(valid_template("{{literal}}"));
  EXPECT_FALSE(valid_template("{instance"));
  EXPECT_FALSE(valid_template("{}"));
  EXPECT_FALSE(valid_template("{1abc}"));
  EXPECT_FALSE(valid_template("a}b"));
  EXPECT_FALSE(valid_template("{a-b}"));
}

TEST(PrometheusMapping, GaugesWithEntitiesSanitisedAndSkipsCounted) {
  auto r = parse_prometheus_response(
      vector_answer(R"({"metric":{"switch":"leaf01","ifName":"Ethernet1"},"value":[1764650000.1234,"3"]},)"
                    R"({"metric":{"switch":"leaf 02","ifName":"Eth\u00e91"},"value":[1764650000,"4"]},)"
                    R"({"metric":{"ifName":"Ethernet3"},"value":[1764650000,"5"]},)"
                    R"({"metric":{"switch":"leaf01","ifName":"Ethernet4"},"value":[1764650000,"NaN"]},)"
                    R"({"metric":{"switch":"leaf01","ifName":"Ethernet5"},"value":[1764650000,"6"]})"));
  ASSERT_FALSE(r.error);
  auto q = query("{switch}/{ifName}", "if_in_errors_per_s");
  q.max_series = 4;
  CounterStates state;
  const auto m = map_series(q, r.series, state);
  ASSERT_EQ(m.samples.size(), 2U);
  EXPECT_EQ(m.samples[0], (store::KpiSample{"leaf01/Ethernet1", "if_in_errors_per_s", 1764650000123, 3}));
  // Space and the two UTF-8 bytes of the é become '_'.
  EXPECT_EQ(m.samples[1].entity, "leaf_02/Eth__1");
  EXPECT_EQ(m.unmapped, 1U);       // no switch label
  EXPECT_EQ(m.invalid_value, 1U);  // NaN
  EXPECT_EQ(m.over_limit, 1U);     // the fifth series
  EXPECT_TRUE(state.empty());      // gauges keep no state

  // A metric template that gives no KPI metric name.
  const auto bad = map_series(query("{switch}", "{switch}-rate"), r.series, state);  // "-": no metric name
  EXPECT_TRUE(bad.samples.empty());
}

TEST(PrometheusMapping, CounterRatesAcrossAnswersResetsAndOverlaps) {
  const auto q = query("{switch}/{ifName}", "if_in_octets_per_s", PrometheusSeriesType::counter);
  auto answer = [](const std::string& values) {
    return parse_prometheus_response(
        R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"switch":"leaf01","ifName":"Ethernet1"},"values":[)" +
        values + "]}]}}");
  };
  CounterStates state;
  auto first = map_series(q, answer(R"([100,"1000"],[101,"3000"],[102.5,"6000"])").series, state);
  EXPECT_EQ(first.counter_baselines, 1U);
  ASSERT_EQ(first.samples.size(), 2U);
  EXPECT_EQ(first.samples[0], (store::KpiSample{"leaf01/Ethernet1", "if_in_octets_per_s", 101000, 2000}));
  EXPECT_EQ(first.samples[1].ts_ms, 102500);
  EXPECT_DOUBLE_EQ(first.samples[1].value, 2000);
  ASSERT_EQ(state.size(), 1U);

  // The next range overlaps the last: the points already seen are skipped, the rate goes on from 102.5.
  auto second = map_series(
      q, answer(R"([101,"3000"],[102.5,"6000"],[104.5,"10000"],[105,"50"],[106,"1050"])").series, state);
  EXPECT_EQ(second.not_newer, 2U);
  EXPECT_EQ(second.counter_resets, 1U);  // 10000 -> 50
  ASSERT_EQ(second.samples.size(), 2U);
  EXPECT_DOUBLE_EQ(second.samples[0].value, 2000);  // 4000 over 2 s
  EXPECT_DOUBLE_EQ(second.samples[1].value, 1000);  // after the reset: 1000 over 1 s

  // A series gone from an answer is forgotten: its next point is a baseline again.
  map_series(q, parse_prometheus_response(vector_answer("")).series, state);
  EXPECT_TRUE(state.empty());
  auto third = map_series(q, answer(R"([200,"5000"])").series, state);
  EXPECT_EQ(third.counter_baselines, 1U);
  EXPECT_TRUE(third.samples.empty());
}

std::string config_error(const std::string& yaml) {
  try {
    PrometheusSourcesConfig c;
    apply_prometheus_sources_yaml(YAML::Load(yaml), c);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(PrometheusConfig, ReadsSourcesAndNamesTheFieldOfEachError) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "token") << "secret-token\n";
  PrometheusSourcesConfig c;
  apply_prometheus_sources_yaml(YAML::Load(R"(
- name: fabric
  url: http://127.0.0.1:9090
  interval_ms: 2000
  timeout_ms: 500
  bearer_token_file: )" + (dir.path() / "token").string() +
                                           R"(
  queries:
    - {query: 'ifHCInOctets[1m]', entity: '{instance}/{ifName}', metric: if_in_octets_per_s, type: counter}
    - {query: 'rx_power', entity: '{host}/{port}', metric: rx_power_dbm, max_series: 50}
)"),
                                c);
  ASSERT_EQ(c.sources.size(), 1U);
  const auto& s = c.sources[0];
  EXPECT_EQ(s.name, "fabric");
  EXPECT_EQ(s.interval.count(), 2000);
  EXPECT_EQ(s.timeout.count(), 500);
  EXPECT_EQ(s.bearer_token, "secret-token");
  ASSERT_EQ(s.queries.size(), 2U);
  EXPECT_EQ(s.queries[0].type, PrometheusSeriesType::counter);
  EXPECT_EQ(s.queries[1].max_series, 50U);
  EXPECT_EQ(s.queries[1].type, PrometheusSeriesType::gauge);

  const std::string ok_query = "queries: [{query: up, entity: '{instance}', metric: up}]";
  EXPECT_EQ(config_error("{}"), "prometheus_sources: must be a list of sources");
  EXPECT_EQ(config_error("- {url: 'http://p:9090', " + ok_query + "}"),
            "prometheus_sources[0].name: is required");
  EXPECT_EQ(config_error("- {name: 'a b', url: 'http://p', " + ok_query + "}"),
            "prometheus_sources[0].name: must be 1 to 64 characters of [A-Za-z0-9_.-]");
  EXPECT_EQ(config_error("- {name: a, url: 'ftp://p', " + ok_query + "}"),
            "prometheus_sources[0].url: must be an http:// or https:// URL");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', interval_ms: 10, " + ok_query + "}"),
            "prometheus_sources[0].interval_ms: must be between 1000 and 86400000");
  EXPECT_EQ(
      config_error("- {name: a, url: 'http://p', interval_ms: 1000, timeout_ms: 1000, " + ok_query + "}"),
      "prometheus_sources[0].timeout_ms: must be below interval_ms");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', colour: red, " + ok_query + "}"),
            "prometheus_sources[0]: unknown key 'colour'");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', queries: []}"),
            "prometheus_sources[0].queries: must be a list of at least one query");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', queries: [{query: up, entity: '{inst', metric: up}]}")
                .rfind("prometheus_sources[0].queries[0].entity: must be a template", 0),
            0U);
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', queries: [{query: up, entity: x, metric: '9up'}]}")
                .rfind("prometheus_sources[0].queries[0].metric: must be 1 to 128 characters", 0),
            0U);
  EXPECT_EQ(
      config_error("- {name: a, url: 'http://p', queries: [{query: up, entity: x, metric: up, type: rate}]}"),
      "prometheus_sources[0].queries[0].type: must be gauge or counter");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', queries: [{entity: x, metric: up}]}"),
            "prometheus_sources[0].queries[0].query: is required");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', bearer_token_file: /nonexistent/t, " + ok_query + "}"),
            "prometheus_sources[0].bearer_token_file: cannot read '/nonexistent/t'");
  EXPECT_EQ(config_error("- {name: a, url: 'http://p', " + ok_query + "}\n- {name: a, url: 'http://q', " +
                         ok_query + "}"),
            "prometheus_sources[1].name: 'a' is used by an earlier source");
}

}  // namespace
}  // namespace hsns::ingest
