#include "optics_component.h"

#include "eeprom.h"
#include "hsns/log.h"
#include "metrics.h"

namespace hsns::daemon {
namespace {

prometheus::Family<prometheus::Gauge>& gauge_family(prometheus::Registry& r, const std::string& name,
                                                    const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

// The metric name part of each measure: "bias" reads better as what it is, a current.
constexpr std::array<const char*, proto::kMeasures> kMetricMeasure = {
    "temperature_celsius", "voltage_volts", "bias_current_amperes", "tx_power_watts", "rx_power_watts"};

std::string describe(const proto::ModuleDiagnostics& m) {
  std::string s = proto::kModuleStatusNames[static_cast<std::size_t>(m.status)];
  if (m.standard) s += std::string(" ") + proto::kModuleStandardNames[static_cast<std::size_t>(*m.standard)];
  if (!m.vendor.empty() || !m.part_number.empty()) s += " " + m.vendor + " " + m.part_number;
  if (!m.reason.empty()) s += ": " + m.reason;
  return s;
}

}  // namespace

OpticsMetrics::OpticsMetrics(prometheus::Registry& r)
    : reads(add_counter(r, "hsns_module_reads_total", "Module EEPROM reads (one per port and interval)")),
      no_diagnostics(
          add_counter(r, "hsns_module_no_diagnostics_total",
                      "Module reads of a module without diagnostics (flat memory, copper, no DDM)")),
      read_errors_(prometheus::BuildCounter()
                       .Name("hsns_module_read_errors_total")
                       .Help("Module EEPROM reads that failed, by reason (no_module, no_such_netdev, "
                             "permission, io_error, netlink, corrupt)")
                       .Register(r)),
      temperature_(gauge_family(r, "hsns_module_temperature_celsius", "Module temperature")),
      voltage_(gauge_family(r, "hsns_module_voltage_volts", "Module supply voltage")),
      bias_(gauge_family(r, "hsns_module_bias_current_amperes", "Laser bias current per lane")),
      tx_power_(gauge_family(r, "hsns_module_tx_power_watts", "Transmitted optical power per lane")),
      rx_power_(gauge_family(r, "hsns_module_rx_power_watts", "Received optical power per lane")),
      alarm_(gauge_family(r, "hsns_module_alarm",
                          "1 while the module's alarm or warning flag is set (kind: measure; level: "
                          "high_alarm, low_alarm, high_warning, low_warning)")),
      info_(gauge_family(r, "hsns_module_info", "The module's identity (always 1)")),
      status_(gauge_family(r, "hsns_module_status",
                           "1 for the port's module status (ok, no_diagnostics, no_module, error)")) {
  for (std::size_t k = 0; k < proto::kMeasures; ++k)
    thresholds_[k] = &gauge_family(
        r, std::string("hsns_module_threshold_") + kMetricMeasure[k],
        std::string("The module's own ") + proto::kMeasureNames[k] + " alarm and warning thresholds");
  for (const char* reason : {"no_module", "no_such_netdev", "permission", "io_error", "netlink", "corrupt"})
    read_error(reason);  // every reason exported from the start, at 0
}

prometheus::Counter& OpticsMetrics::read_error(const std::string& reason) {
  return read_errors_.Add({{"reason", reason}});
}

void OpticsMetrics::add(const std::string& netdev, prometheus::Family<prometheus::Gauge>& family,
                        const std::map<std::string, std::string>& labels, double value) {
  auto& g = family.Add(labels);
  g.Set(value);
  series_[netdev].push_back(Series{&family, &g});
}

void OpticsMetrics::forget(const std::string& netdev) {
  const auto it = series_.find(netdev);
  if (it == series_.end()) return;
  for (const auto& s : it->second) s.family->Remove(s.metric);
  series_.erase(it);
}

void OpticsMetrics::set(const proto::ModuleDiagnostics& m) {
  forget(m.netdev);
  const std::string& nd = m.netdev;
  add(nd, status_,
      {{"netdev", nd}, {"status", proto::kModuleStatusNames[static_cast<std::size_t>(m.status)]}}, 1);
  if (m.standard)
    add(nd, info_,
        {{"netdev", nd},
         {"standard", proto::kModuleStandardNames[static_cast<std::size_t>(*m.standard)]},
         {"vendor", m.vendor},
         {"part_number", m.part_number},
         {"serial", m.serial}},
        1);
  if (m.temperature_celsius) add(nd, temperature_, {{"netdev", nd}}, *m.temperature_celsius);
  if (m.voltage_volts) add(nd, voltage_, {{"netdev", nd}}, *m.voltage_volts);
  for (std::size_t k = 0; k < proto::kMeasures; ++k) {
    const auto& levels = m.thresholds[k];
    if (!levels) continue;
    for (std::size_t l = 0; l < proto::kAlarmLevels; ++l)
      add(nd, *thresholds_[k], {{"netdev", nd}, {"level", proto::kAlarmLevelNames[l]}}, (*levels)[l]);
  }
  auto flags = [&](const std::string& lane,
                   const std::array<std::optional<proto::AlarmFlags>, proto::kMeasures>& f) {
    for (std::size_t k = 0; k < proto::kMeasures; ++k) {
      const auto& set = f[k];
      if (!set) continue;
      for (std::size_t l = 0; l < proto::kAlarmLevels; ++l)
        add(nd, alarm_,
            {{"netdev", nd},
             {"lane", lane},
             {"kind", proto::kMeasureNames[k]},
             {"level", proto::kAlarmLevelNames[l]}},
            (*set)[l] ? 1 : 0);
    }
  };
  flags("", m.flags);
  for (const auto& lane : m.lanes) {
    const std::map<std::string, std::string> labels{{"netdev", nd}, {"lane", std::to_string(lane.lane)}};
    if (lane.bias_amperes) add(nd, bias_, labels, *lane.bias_amperes);
    if (lane.tx_power_watts) add(nd, tx_power_, labels, *lane.tx_power_watts);
    if (lane.rx_power_watts) add(nd, rx_power_, labels, *lane.rx_power_watts);
    flags(std::to_string(lane.lane), lane.flags);
  }
}

OpticsComponent::OpticsComponent(const DaemonConfig& config, prometheus::Registry& registry,
                                 EepromSource source)
    : interval_(telemetry_interval(config)),
      source_(source ? std::move(source) : EepromSource(optics::read_module_pages)),
      metrics_(registry) {
  set_ports(config);
}

void OpticsComponent::set_ports(const DaemonConfig& config) {
  ports_.clear();
  for (const auto& [index, netdev] : config.npus) ports_.push_back(netdev);
  interval_ = telemetry_interval(config);
  for (auto it = modules_.begin(); it != modules_.end();) {
    if (std::find(ports_.begin(), ports_.end(), it->first) == ports_.end()) {
      metrics_.forget(it->first);
      logged_.erase(it->first);
      it = modules_.erase(it);
    } else {
      ++it;
    }
  }
}

void OpticsComponent::reload(const DaemonConfig& config) {
  set_ports(config);
}

Component::Clock::time_point OpticsComponent::tick(Clock::time_point now) {
  if (now >= next_read_) {
    read_all();
    next_read_ = now + interval_;
  }
  return next_read_;
}

void OpticsComponent::read_all() {
  for (const auto& netdev : ports_) {
    auto m = read_port(netdev);
    metrics_.set(m);
    const std::string outcome = describe(m);
    if (logged_[netdev] != outcome) {
      // Logged when the outcome changes: a port without a module is not a message every interval.
      if (m.status == proto::ModuleStatus::error)
        HSNS_LOG(warning) << "optics " << netdev << ": " << outcome;
      else
        HSNS_LOG(info) << "optics " << netdev << ": " << outcome;
      logged_[netdev] = outcome;
    }
    modules_[netdev] = std::move(m);
  }
}

proto::ModuleDiagnostics OpticsComponent::read_port(const std::string& netdev) {
  metrics_.reads.Increment();
  proto::ModuleDiagnostics m;
  m.netdev = netdev;
  auto pages = source_(netdev);
  if (!pages) {
    metrics_.read_error(optics::to_string(pages.error().reason)).Increment();
    m.status = pages.error().reason == optics::ReadFailure::no_module ? proto::ModuleStatus::no_module
                                                                      : proto::ModuleStatus::error;
    m.reason = pages.error().message;
    return m;
  }
  auto decoded = optics::decode_module(netdev, *pages);
  if (!decoded) {
    metrics_.read_error("corrupt").Increment();
    m.status = proto::ModuleStatus::error;
    m.reason = "corrupt EEPROM: " + decoded.error().message();
    return m;
  }
  if (decoded->status == proto::ModuleStatus::no_diagnostics) metrics_.no_diagnostics.Increment();
  return std::move(*decoded);
}

proto::OpticsReport OpticsComponent::report(const std::string& host, std::int64_t ts_ms) const {
  proto::OpticsReport r;
  r.host = host;
  r.ts_ms = ts_ms;
  for (const auto& [netdev, m] : modules_) r.modules.push_back(m);
  return r;
}

}  // namespace hsns::daemon
