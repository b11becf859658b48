#include "ingest/prometheus_source.h"

#include <chrono>
#include <cstdio>
#include <optional>

#include "hsns/http_client.h"
#include "hsns/log.h"

namespace hsns::ingest {
namespace {

using Clock = std::chrono::steady_clock;

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Prometheus takes a time as Unix seconds with a fraction; milliseconds are what the KPI store keeps.
std::string time_param(double unix_seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", unix_seconds);
  return buf;
}

const char* reason_of(PrometheusError::Kind kind) {
  switch (kind) {
    case PrometheusError::Kind::error_status:
      return "error_status";
    case PrometheusError::Kind::malformed:
    case PrometheusError::Kind::too_large:
      return "malformed";
  }
  return "malformed";
}

}  // namespace

struct PrometheusSources::Source {
  PrometheusSourceConfig config;
  std::optional<HttpClient> client;     // made by start(), then used by the source's thread only
  std::vector<CounterStates> counters;  // per query
  PrometheusSourceStatus status;
};

PrometheusSourceMetrics::PrometheusSourceMetrics(prometheus::Registry& registry)
    : queries_(prometheus::BuildCounter()
                   .Name("hsns_prometheus_source_queries_total")
                   .Help("Instant queries sent to a Prometheus source")
                   .Register(registry)),
      failures_(prometheus::BuildCounter()
                    .Name("hsns_prometheus_source_failures_total")
                    .Help("Queries of a Prometheus source that failed, per reason")
                    .Register(registry)),
      samples_(prometheus::BuildCounter()
                   .Name("hsns_prometheus_source_samples_total")
                   .Help("KPI samples mapped from a Prometheus source's answers")
                   .Register(registry)),
      skipped_(prometheus::BuildCounter()
                   .Name("hsns_prometheus_source_skipped_series_total")
                   .Help("Series of a Prometheus source's answers not stored, per reason")
                   .Register(registry)),
      resets_(prometheus::BuildCounter()
                  .Name("hsns_prometheus_source_counter_resets_total")
                  .Help("Counter series of a Prometheus source that went back (no rate for that sample)")
                  .Register(registry)),
      last_success_(prometheus::BuildGauge()
                        .Name("hsns_prometheus_source_last_success_timestamp_seconds")
                        .Help("Unix time of the source's latest successful query")
                        .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("hsns_prometheus_source_query_duration_seconds")
                    .Help("Time from sending a query to its samples in the sink")
                    .Register(registry)) {}

void PrometheusSourceMetrics::query(const std::string& source, double seconds) {
  queries_.Add({{"source", source}}).Increment();
  duration_
      .Add({{"source", source}}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                         0.5, 1, 2.5, 5, 10, 30})
      .Observe(seconds);
}

void PrometheusSourceMetrics::declare(const std::string& source) {
  for (const char* reason : {"transport", "timeout", "http_status", "malformed", "error_status", "sink"})
    failures_.Add({{"source", source}, {"reason", reason}});
  queries_.Add({{"source", source}});
  samples_.Add({{"source", source}});
}

void PrometheusSourceMetrics::failure(const std::string& source, std::string_view reason) {
  failures_.Add({{"source", source}, {"reason", std::string(reason)}}).Increment();
}

void PrometheusSourceMetrics::mapped(const std::string& source, const MappedSamples& m) {
  samples_.Add({{"source", source}}).Increment(static_cast<double>(m.samples.size()));
  for (const auto& [reason, n] :
       {std::pair{"unmapped", m.unmapped}, std::pair{"invalid_value", m.invalid_value},
        std::pair{"over_limit", m.over_limit}}) {
    if (n > 0) skipped_.Add({{"source", source}, {"reason", reason}}).Increment(static_cast<double>(n));
  }
  if (m.counter_resets > 0)
    resets_.Add({{"source", source}}).Increment(static_cast<double>(m.counter_resets));
}

void PrometheusSourceMetrics::success(const std::string& source, double unix_seconds) {
  last_success_.Add({{"source", source}}).Set(unix_seconds);
}

PrometheusSources::PrometheusSources(const PrometheusSourcesConfig& config, KpiSink& sink,
                                     PrometheusSourceMetrics& metrics)
    : sink_(sink), metrics_(metrics) {
  for (const auto& c : config.sources) {
    auto s = std::make_unique<Source>();
    s->config = c;
    s->counters.resize(c.queries.size());
    // Every failure reason at 0 from the start, so a rate over the counter sees the first failure.
    metrics_.declare(c.name);
    sources_.push_back(std::move(s));
  }
}

PrometheusSources::~PrometheusSources() {
  stop();
}

void PrometheusSources::start() {
  const std::lock_guard lock(lifecycle_);
  if (!threads_.empty()) return;
  for (auto& s : sources_) {
    HttpClient::Options options;
    options.bearer_token = s->config.bearer_token;
    options.ca_file = s->config.ca_file;
    options.timeout = s->config.timeout;
    options.user_agent = "hsns-aggregator prometheus source";
    auto client = HttpClient::make(s->config.url, options);
    if (!client) {
      // The configuration check accepted the URL's scheme; a URL the client still refuses is logged and the
      // source stays idle rather than stopping the aggregator.
      HSNS_LOG(error) << "prometheus source " << s->config.name << ": " << client.error();
      continue;
    }
    s->client.emplace(std::move(*client));
    // Paced from each poll's start: a poll that overruns the interval is followed by the next at once.
    threads_.push_back(std::make_unique<PeriodicThread>(
        "prometheus source " + s->config.name,
        PeriodicThread::Options{.period = s->config.interval, .pacing = PeriodicThread::Pacing::from_start},
        [this, source = s.get()](const std::stop_token& stop) { poll(*source, stop); }));
  }
}

void PrometheusSources::stop() {
  const std::lock_guard lock(lifecycle_);
  // Every thread asked first, then waited for: the ones in a request end together, within one timeout.
  for (auto& t : threads_) t->request_stop();
  threads_.clear();
}

PrometheusSourceStatus PrometheusSources::status(const std::string& source) const {
  const std::lock_guard lock(mutex_);
  for (const auto& s : sources_) {
    if (s->config.name == source) return s->status;
  }
  return {};
}

void PrometheusSources::poll(Source& source, const std::stop_token& stop) {
  const auto& name = source.config.name;
  const std::string time = time_param(unix_seconds_now());
  for (std::size_t i = 0; i < source.config.queries.size(); ++i) {
    if (stop.stop_requested()) return;
    const auto& q = source.config.queries[i];
    const auto started = Clock::now();
    std::string failure;
    std::string reason;
    std::uint64_t stored = 0;
    auto answer = source.client->get("/api/v1/query?query=" + encode_query_value(q.query) + "&time=" + time);
    if (!answer) {
      const bool timeout = answer.error().find("timed out") != std::string::npos;
      reason = timeout ? "timeout" : "transport";
      failure = answer.error();
    } else if (answer->status != 200 && answer->status != 400 && answer->status != 422) {
      // Prometheus answers a bad query 400 and an unexecutable one 422 with its error document.
      reason = "http_status";
      failure = "HTTP " + std::to_string(answer->status);
    } else {
      auto parsed = parse_prometheus_response(answer->body);
      if (parsed.error) {
        reason = reason_of(parsed.error->kind);
        failure = parsed.error->detail;
      } else if (answer->status != 200) {
        reason = "http_status";
        failure = "HTTP " + std::to_string(answer->status);
      } else {
        CounterStates counters = source.counters[i];
        auto mapped = map_series(q, parsed.series, counters);
        metrics_.mapped(name, mapped);
        if (!mapped.samples.empty() && !sink_.append(mapped.samples)) {
          reason = "sink";
          failure = "the KPI store did not take " + std::to_string(mapped.samples.size()) + " samples";
        } else {
          source.counters[i] = std::move(counters);
          stored = mapped.samples.size();
        }
      }
    }
    metrics_.query(name, std::chrono::duration<double>(Clock::now() - started).count());
    const std::lock_guard lock(mutex_);
    ++source.status.queries;
    source.status.samples += stored;
    if (reason.empty()) {
      metrics_.success(name, unix_seconds_now());
    } else {
      ++source.status.failures;
      // Logged when the reason changes, not at every interval of a lasting failure.
      const bool changed = source.status.last_failure.rfind(reason + ":", 0) != 0;
      source.status.last_failure = reason;
      source.status.last_failure.append(": ").append(failure);
      metrics_.failure(name, reason);
      if (changed)
        HSNS_LOG(warning) << "prometheus source " << name << " query " << i << ": " << reason << ": "
                          << failure;
    }
  }
  const std::lock_guard lock(mutex_);
  ++source.status.polls;
}

}  // namespace hsns::ingest
