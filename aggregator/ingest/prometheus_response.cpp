#include "ingest/prometheus_response.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "hsns/json_fields.h"

namespace hsns::ingest {
namespace {

using nlohmann::json;

PrometheusResult fail(std::string detail) {
  PrometheusResult r;
  r.error = PrometheusError{PrometheusError::Kind::malformed, std::move(detail)};
  return r;
}

// Prometheus writes sample values as strings: a Go float ("1.5e+06", "NaN", "+Inf", "-Inf").
std::optional<double> parse_value(const std::string& text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  if (text.empty() || text.size() > 64) return std::nullopt;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return std::nullopt;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// [<unix seconds>, "<value>"] into `out`; the reason otherwise.
std::optional<std::string> read_pair(const json& pair, PrometheusPoint& out) {
  if (!pair.is_array() || pair.size() != 2) return "must be [<time>, \"<value>\"]";
  if (!pair[0].is_number()) return "[0] must be a number of seconds";
  const double ts = pair[0].get<double>();
  if (!std::isfinite(ts) || ts < 0 || ts > static_cast<double>(store::kMaxKpiTimestampMs) / 1000.0)
    return "[0] must be a time from 1970 to 9999";
  if (!pair[1].is_string()) return "[1] must be a string";
  const auto value = parse_value(pair[1].get<std::string>());
  if (!value) return "[1] must be a number";
  out.ts_seconds = ts;
  out.value = *value;
  return std::nullopt;
}

bool is_label_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool is_label_char(char c) {
  return is_label_start(c) || (c >= '0' && c <= '9');
}

std::string sanitise_entity(std::string text) {
  for (char& c : text) {
    if (c <= ' ' || c > '~') c = '_';
  }
  return text;
}

}  // namespace

PrometheusResult parse_prometheus_response(std::string_view body) {
  if (body.size() > kMaxPrometheusResponseBytes) {
    PrometheusResult r;
    r.error = PrometheusError{PrometheusError::Kind::too_large,
                              "the answer has " + std::to_string(body.size()) + " bytes, at most " +
                                  std::to_string(kMaxPrometheusResponseBytes)};
    return r;
  }
  auto parsed = parse_json_strict(body);
  if (!parsed) return fail("not JSON: " + parsed.error().detail);
  const json& doc = *parsed;
  if (!doc.is_object()) return fail("the answer must be a JSON object");
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_string()) return fail("status: must be a string");
  if (*status == "error") {
    PrometheusResult r;
    const auto type = doc.find("errorType");
    const auto error = doc.find("error");
    r.error = PrometheusError{
        PrometheusError::Kind::error_status,
        (type != doc.end() && type->is_string() ? type->get<std::string>() : std::string("error")) + ": " +
            (error != doc.end() && error->is_string() ? error->get<std::string>()
                                                      : std::string("(no detail)"))};
    return r;
  }
  if (*status != "success") return fail("status: must be success or error");
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) return fail("data: must be an object");
  const auto type = data->find("resultType");
  const auto result = data->find("result");
  if (type == data->end() || !type->is_string()) return fail("data.resultType: must be a string");
  if (result == data->end()) return fail("data.result: is missing");

  PrometheusResult out;
  if (*type == "scalar") {
    PrometheusSeries s;
    s.points.emplace_back();
    if (auto why = read_pair(*result, s.points.back())) return fail("data.result" + *why);
    out.series.push_back(std::move(s));
    return out;
  }
  const bool matrix = *type == "matrix";
  if (!matrix && *type != "vector") {
    return fail("data.resultType: " + type->get<std::string>() + " is not one of vector, matrix, scalar");
  }
  std::size_t points = 0;
  if (!result->is_array()) return fail("data.result: must be an array");
  out.series.reserve(result->size());
  for (std::size_t i = 0; i < result->size(); ++i) {
    const auto& element = (*result)[i];
    const std::string at = "data.result[" + std::to_string(i) + "]";
    if (!element.is_object()) return fail(at + ": must be an object");
    PrometheusSeries s;
    const auto metric = element.find("metric");
    if (metric != element.end()) {
      if (!metric->is_object()) return fail(at + ".metric: must be an object");
      for (const auto& [k, v] : metric->items()) {
        if (!v.is_string())
          return fail(std::string(at).append(".metric.").append(k).append(": must be a string"));
        s.labels.emplace(k, v.get<std::string>());
      }
    }
    if (matrix) {
      const auto values = element.find("values");
      if (values == element.end() || !values->is_array()) return fail(at + ".values: must be an array");
      for (std::size_t k = 0; k < values->size(); ++k) {
        if (++points > kMaxPrometheusPoints)
          return fail(at + ".values: more than " + std::to_string(kMaxPrometheusPoints) +
                      " points in the answer");
        s.points.emplace_back();
        if (auto why = read_pair((*values)[k], s.points.back()))
          return fail(at + ".values[" + std::to_string(k) + "]" + *why);
      }
    } else {
      const auto value = element.find("value");
      if (value == element.end()) return fail(at + ".value: is missing");
      if (++points > kMaxPrometheusPoints)
        return fail(at + ".value: more than " + std::to_string(kMaxPrometheusPoints) +
                    " points in the answer");
      s.points.emplace_back();
      if (auto why = read_pair(*value, s.points.back())) return fail(at + ".value" + *why);
    }
    out.series.push_back(std::move(s));
  }
  return out;
}

std::optional<std::string> render_template(std::string_view tmpl,
                                           const std::map<std::string, std::string>& labels) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      out.push_back(c);
      ++i;
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    const auto close = tmpl.find('}', i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string name(tmpl.substr(i + 1, close - i - 1));
    const auto it = labels.find(name);
    if (it == labels.end()) return std::nullopt;
    out += it->second;
    i = close;
  }
  return out;
}

MappedSamples map_series(const PrometheusQueryConfig& query, const std::vector<PrometheusSeries>& series,
                         CounterStates& counters) {
  MappedSamples out;
  CounterStates next;
  std::size_t taken = 0;
  for (const auto& s : series) {
    if (taken == query.max_series) {
      ++out.over_limit;
      continue;
    }
    ++taken;
    auto entity = render_template(query.entity, s.labels);
    auto metric = render_template(query.metric, s.labels);
    if (!entity || !metric) {
      ++out.unmapped;
      continue;
    }
    *entity = sanitise_entity(std::move(*entity));
    if (!store::is_kpi_entity(*entity) || !store::is_kpi_metric(*metric)) {
      ++out.unmapped;
      continue;
    }
    auto key = std::make_pair(*entity, *metric);
    std::optional<CounterState> prev;
    if (const auto it = counters.find(key); it != counters.end()) prev = it->second;
    if (const auto it = next.find(key); it != next.end()) prev = it->second;  // a series repeated
    for (const auto& p : s.points) {
      if (!std::isfinite(p.value)) {
        ++out.invalid_value;
        continue;
      }
      const auto ts_ms = static_cast<std::int64_t>(std::llround(p.ts_seconds * 1000.0));
      if (query.type == PrometheusSeriesType::gauge) {
        out.samples.push_back({*entity, *metric, ts_ms, p.value});
        continue;
      }
      if (!prev) {
        ++out.counter_baselines;
      } else if (ts_ms <= prev->ts_ms) {
        ++out.not_newer;
        continue;
      } else if (p.value < prev->value) {
        ++out.counter_resets;
      } else {
        const double seconds = static_cast<double>(ts_ms - prev->ts_ms) / 1000.0;
        out.samples.push_back({*entity, *metric, ts_ms, (p.value - prev->value) / seconds});
      }
      prev = CounterState{ts_ms, p.value};
    }
    if (prev && query.type == PrometheusSeriesType::counter) next.insert_or_assign(std::move(key), *prev);
  }
  if (query.type == PrometheusSeriesType::counter) counters = std::move(next);
  return out;
}

bool valid_template(std::string_view tmpl) {
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      ++i;
      continue;
    }
    if (c == '}') return false;
    if (c != '{') continue;
    const auto close = tmpl.find('}', i + 1);
    if (close == std::string_view::npos || close == i + 1) return false;
    if (!is_label_start(tmpl[i + 1])) return false;
    for (std::size_t k = i + 1; k < close; ++k) {
      if (!is_label_char(tmpl[k])) return false;
    }
    i = close;
  }
  return true;
}

}  // namespace hsns::ingest
