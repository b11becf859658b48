// Optical-module diagnostics as an hsnsd component ("optics", daemon/core/component.h): every interval it
// reads the module EEPROM of each parameter-plane port (the NPUs' netdevs of the configuration) through
// module_reader.h, decodes it (eeprom.h), keeps the last result of each port for the report to the
// aggregator (report()) and exports it on /metrics.
//
// Contract:
// - start() always succeeds and reads nothing; ready() at once (diagnostics never hold READY=1 back).
//   tick() reads every port when due (then every `interval` of the configuration, on the main thread: a
//   page read waits at most 2 s for the kernel), trigger() makes the next tick read, reload() takes the new
//   port list and interval (ports no longer configured are forgotten, their series removed).
// - A port's outcome is one ModuleDiagnostics: ok, no_diagnostics (flat memory, copper, no DDM: with the
//   reason), no_module (the driver has no module access) or error (the reason: the read failure or the
//   decoder's finding on a corrupt page). Nothing a module or the kernel sends stops hsnsd.
// - Metrics (base units; the series of a port are replaced on every read, so a lane or threshold that
//   disappeared disappears):
//     hsns_module_temperature_celsius{netdev}, hsns_module_voltage_volts{netdev},
//     hsns_module_bias_current_amperes{netdev,lane}, hsns_module_tx_power_watts{netdev,lane},
//     hsns_module_rx_power_watts{netdev,lane},
//     hsns_module_threshold_<measure>_<unit>{netdev,level} (temperature_celsius, voltage_volts,
//       bias_current_amperes, tx_power_watts, rx_power_watts; level high_alarm, low_alarm, high_warning,
//       low_warning),
//     hsns_module_alarm{netdev,lane,kind,level} 1 while the flag is set (lane "" for temperature and
//       voltage; SFF-8636 and CMIS flags are latched: set since the previous read),
//     hsns_module_info{netdev,standard,vendor,part_number,serial} 1,
//     hsns_module_status{netdev,status} 1 for the port's current status,
//     hsns_module_reads_total (one per port read), hsns_module_read_errors_total{reason} (no_module,
//       no_such_netdev, permission, io_error, netlink, corrupt),
//     hsns_module_no_diagnostics_total (reads of a module without diagnostics).
// - The EEPROM source is injectable (tests give canned dumps); the default is read_module_pages().
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "component.h"
#include "hsns/proto/optics.h"
#include "module_reader.h"

namespace hsns::daemon {

using EepromSource = std::function<tl::expected<optics::EepromPages, optics::ReadError>(const std::string&)>;

class OpticsMetrics {
 public:
  explicit OpticsMetrics(prometheus::Registry& registry);
  // Replaces every series of m.netdev with what m says.
  void set(const proto::ModuleDiagnostics& m);
  // Removes every series of the netdev.
  void forget(const std::string& netdev);
  prometheus::Counter& reads;
  prometheus::Counter& no_diagnostics;
  prometheus::Counter& read_error(const std::string& reason);

 private:
  struct Series {
    prometheus::Family<prometheus::Gauge>* family;
    prometheus::Gauge* metric;
  };
  void add(const std::string& netdev, prometheus::Family<prometheus::Gauge>& family,
           const std::map<std::string, std::string>& labels, double value);

  prometheus::Family<prometheus::Counter>& read_errors_;
  prometheus::Family<prometheus::Gauge>& temperature_;
  prometheus::Family<prometheus::Gauge>& voltage_;
  prometheus::Family<prometheus::Gauge>& bias_;
  prometheus::Family<prometheus::Gauge>& tx_power_;
  prometheus::Family<prometheus::Gauge>& rx_power_;
  std::array<prometheus::Family<prometheus::Gauge>*, proto::kMeasures> thresholds_{};
  prometheus::Family<prometheus::Gauge>& alarm_;
  prometheus::Family<prometheus::Gauge>& info_;
  prometheus::Family<prometheus::Gauge>& status_;
  std::map<std::string, std::vector<Series>> series_;  // by netdev
};

class OpticsComponent final : public Component {
 public:
  OpticsComponent(const DaemonConfig& config, prometheus::Registry& registry, EepromSource source = {});

  std::string_view name() const override { return "optics"; }
  tl::expected<void, std::string> start() override { return {}; }
  Clock::time_point tick(Clock::time_point now) override;
  void reload(const DaemonConfig& config) override;
  void trigger() override { next_read_ = Clock::time_point::min(); }
  bool ready() const override { return true; }

  // Reads every port now (what tick() does when due).
  void read_all();
  // The last outcome of each configured port, by netdev.
  const std::map<std::string, proto::ModuleDiagnostics>& modules() const { return modules_; }
  // The report section: every port's last outcome, in netdev order.
  proto::OpticsReport report(const std::string& host, std::int64_t ts_ms) const;

 private:
  proto::ModuleDiagnostics read_port(const std::string& netdev);
  void set_ports(const DaemonConfig& config);

  std::vector<std::string> ports_;
  std::chrono::milliseconds interval_;
  EepromSource source_;
  OpticsMetrics metrics_;
  std::map<std::string, proto::ModuleDiagnostics> modules_;
  std::map<std::string, std::string> logged_;  // last logged outcome per port: log changes only
  Clock::time_point next_read_ = Clock::time_point::min();
};

}  // namespace hsns::daemon
