#include "api/kpis/report_kpis.h"

#include <algorithm>
#include <string_view>

#include "hsns/log.h"

namespace hsns::kpis_api {
namespace {

template <std::size_t N>
bool listed(const std::array<const char*, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class SampleList {
 public:
  explicit SampleList(std::vector<store::KpiSample>& out) : out_(out) {}

  void add(const std::string& entity, std::string metric, std::int64_t ts_ms, double value) {
    store::KpiSample s{entity, std::move(metric), ts_ms, value};
    if (store::validate_kpi_samples(std::span(&s, 1)).empty()) out_.push_back(std::move(s));
  }

  template <std::size_t N>
  void rates(const std::string& entity, const proto::CounterSet& set, const std::array<const char*, N>& names,
             std::int64_t ts_ms) {
    for (const auto& [name, sample] : set) {
      if (listed(names, name)) add(entity, name + "_per_s", ts_ms, sample.rate);
    }
  }

 private:
  std::vector<store::KpiSample>& out_;
};

void add_counters(SampleList& list, const std::string& host, const proto::CountersSnapshot& c) {
  if (c.interval_ms == 0) return;
  for (const auto& port : c.rdma) {
    const std::string entity =
        host + "/" + (port.netdev.empty() ? port.device + "/" + std::to_string(port.port) : port.netdev);
    list.rates(entity, port.counters, kRdmaRateCounters, c.ts_ms);
    list.rates(entity, port.hw_counters, kRdmaRateCounters, c.ts_ms);
  }
  for (const auto& netdev : c.netdevs) {
    const std::string entity = host + "/" + netdev.netdev;
    list.rates(entity, netdev.statistics, kNetdevRateCounters, c.ts_ms);
    for (const auto& p : netdev.pause) {
      const std::string prefix = "pfc_prio" + std::to_string(p.priority) + "_";
      list.add(entity, prefix + "rx_pause_per_s", c.ts_ms, p.rx_frames.rate);
      list.add(entity, prefix + "tx_pause_per_s", c.ts_ms, p.tx_frames.rate);
      list.add(entity, prefix + "rx_pause_us_per_s", c.ts_ms, p.rx_duration_us.rate);
      list.add(entity, prefix + "tx_pause_us_per_s", c.ts_ms, p.tx_duration_us.rate);
    }
  }
}

void add_optics(SampleList& list, const std::string& host, const proto::OpticsReport& optics) {
  for (const auto& m : optics.modules) {
    if (m.status != proto::ModuleStatus::ok) continue;
    const std::string entity = host + "/" + m.netdev;
    if (m.temperature_celsius)
      list.add(entity, "module_temperature_celsius", optics.ts_ms, *m.temperature_celsius);
    if (m.voltage_volts) list.add(entity, "module_voltage_volts", optics.ts_ms, *m.voltage_volts);
    for (const auto& lane : m.lanes) {
      const std::string prefix = "lane" + std::to_string(lane.lane) + "_";
      if (lane.tx_power_watts)
        list.add(entity, prefix + "tx_power_watts", optics.ts_ms, *lane.tx_power_watts);
      if (lane.rx_power_watts)
        list.add(entity, prefix + "rx_power_watts", optics.ts_ms, *lane.rx_power_watts);
      if (lane.bias_amperes) list.add(entity, prefix + "bias_amperes", optics.ts_ms, *lane.bias_amperes);
    }
  }
}

}  // namespace

std::vector<store::KpiSample> report_kpi_samples(const std::string& host, const proto::Report& report) {
  std::vector<store::KpiSample> out;
  SampleList list(out);
  if (report.counters) add_counters(list, host, *report.counters);
  if (report.optics) add_optics(list, host, *report.optics);
  return out;
}

void ReportKpiRecorder::operator()(const std::string& host, const proto::Report& report) const {
  const auto samples = report_kpi_samples(host, report);
  if (samples.empty()) return;
  auto appended = sink_.append(samples);
  if (!appended) {
    metrics_.observe_append_failure(KpiSource::report);
    HSNS_LOG(warning) << "KPI samples of " << host << "'s report " << report.seq
                      << " not stored: " << appended.error().message();
    return;
  }
  metrics_.observe_append(KpiSource::report, *appended, 0);
}

}  // namespace hsns::kpis_api
