// Optical-module diagnostics: what hsnsd's optics component (daemon/optics) reads from the module EEPROM
// of each parameter-plane port and sends to the aggregator as one section of its report (docs/hsnsd.md).
//
// Two kinds: ModuleDiagnostics (one port's module, kind "module-diagnostics") and OpticsReport (every
// port of a host at one time, kind "optics-report": {"host","ts_ms","modules":[...]}).
// A module document:
//   {"netdev":"eth0","status":"ok"|"no_diagnostics"|"no_module"|"error", "reason":"..." (not with ok),
//    "standard":"sff-8472"|"sff-8636"|"cmis", "identifier":0..255, "revision":"5.0", "vendor":"...",
//    "part_number":"...", "serial":"...", "vendor_revision":"...", "banks":0..4,
//    "temperature_celsius":x, "voltage_volts":x,
//    "thresholds":{"<measure>":{"high_alarm":x,"low_alarm":x,"high_warning":x,"low_warning":x},...},
//    "flags":{"temperature"|"voltage":{"high_alarm":b,"low_alarm":b,"high_warning":b,"low_warning":b}},
//    "lanes":[{"lane":1..32,"tx_power_watts":x,"rx_power_watts":x,"bias_amperes":x,
//              "flags":{"tx_power"|"rx_power"|"bias":{...}},"tx_los":b,"rx_los":b,"tx_fault":b,
//              "tx_disabled":b},...]}
// Every member but netdev and status is optional (absent = the module does not report it). Units are
// base units: °C, V, W, A (thresholds in the unit of their measure). Measures: temperature, voltage, bias,
// tx_power, rx_power; module flags are temperature and voltage, lane flags bias, tx_power and rx_power.
// Contract: the rules of hsns/proto/codec.h (strict readers, unknown members refused, numbers finite,
// lanes in increasing order without repeats). Values only; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

enum class Measure { temperature = 0, voltage = 1, bias = 2, tx_power = 3, rx_power = 4 };
inline constexpr std::size_t kMeasures = 5;
inline constexpr std::array<const char*, kMeasures> kMeasureNames = {"temperature", "voltage", "bias",
                                                                     "tx_power", "rx_power"};
// The base unit of each measure, as metric names and docs spell it.
inline constexpr std::array<const char*, kMeasures> kMeasureUnits = {"celsius", "volts", "amperes", "watts",
                                                                     "watts"};
inline constexpr std::size_t kAlarmLevels = 4;
inline constexpr std::array<const char*, kAlarmLevels> kAlarmLevelNames = {"high_alarm", "low_alarm",
                                                                           "high_warning", "low_warning"};
inline constexpr std::size_t kMaxModuleLanes = 32;  // CMIS: 4 banks of 8 lanes
inline constexpr std::size_t kMaxModuleBanks = 4;

// Thresholds of one measure, in kAlarmLevelNames order.
using AlarmThresholds = std::array<double, kAlarmLevels>;
// Flags of one measure (SFF-8636 and CMIS: latched, cleared by reading; SFF-8472: current state).
using AlarmFlags = std::array<bool, kAlarmLevels>;

enum class ModuleStatus { ok = 0, no_diagnostics = 1, no_module = 2, error = 3 };
inline constexpr std::array<const char*, 4> kModuleStatusNames = {"ok", "no_diagnostics", "no_module",
                                                                  "error"};
enum class ModuleStandard { sff8472 = 0, sff8636 = 1, cmis = 2 };
inline constexpr std::array<const char*, 3> kModuleStandardNames = {"sff-8472", "sff-8636", "cmis"};

struct LaneDiagnostics {
  std::uint32_t lane = 1;  // 1-based; CMIS bank b lane i (0-based) is b*8+i+1
  std::optional<double> bias_amperes;
  std::optional<double> tx_power_watts;
  std::optional<double> rx_power_watts;
  // Indexed by Measure: only bias, tx_power and rx_power are used.
  std::array<std::optional<AlarmFlags>, kMeasures> flags{};
  std::optional<bool> tx_los;
  std::optional<bool> rx_los;
  std::optional<bool> tx_fault;
  std::optional<bool> tx_disabled;
  bool operator==(const LaneDiagnostics&) const = default;
};

struct ModuleDiagnostics {
  std::string netdev;
  ModuleStatus status = ModuleStatus::ok;
  std::string reason;  // why not ok ("" with ok)
  std::optional<ModuleStandard> standard;
  std::optional<std::uint8_t> identifier;  // SFF-8024 identifier byte
  std::string revision;                    // the standard's revision the module claims ("" = not said)
  std::string vendor;
  std::string part_number;
  std::string serial;
  std::string vendor_revision;
  std::uint32_t banks = 0;  // CMIS lane banks read (0 for the other standards)
  std::optional<double> temperature_celsius;
  std::optional<double> voltage_volts;
  std::array<std::optional<AlarmThresholds>, kMeasures> thresholds{};
  // Indexed by Measure: only temperature and voltage are used.
  std::array<std::optional<AlarmFlags>, kMeasures> flags{};
  std::vector<LaneDiagnostics> lanes;
  bool operator==(const ModuleDiagnostics&) const = default;
};

inline constexpr std::size_t kMaxOpticsModules = 1024;

struct OpticsReport {
  std::string host;
  std::int64_t ts_ms = 0;
  std::vector<ModuleDiagnostics> modules;
  bool operator==(const OpticsReport&) const = default;
};

Result<ModuleDiagnostics> read_module_diagnostics(const nlohmann::json& document);
nlohmann::json to_json(const ModuleDiagnostics& module);
Result<OpticsReport> read_optics_report(const nlohmann::json& document);
nlohmann::json to_json(const OpticsReport& report);

template <>
struct Kind<ModuleDiagnostics> {
  static constexpr const char* kName = "module-diagnostics";
  static constexpr std::size_t kMaxBytes = 64 << 10;
  static Result<ModuleDiagnostics> read(const nlohmann::json& d) { return read_module_diagnostics(d); }
  static nlohmann::json write(const ModuleDiagnostics& v) { return to_json(v); }
};

template <>
struct Kind<OpticsReport> {
  static constexpr const char* kName = "optics-report";
  static constexpr std::size_t kMaxBytes = 16 << 20;
  static Result<OpticsReport> read(const nlohmann::json& d) { return read_optics_report(d); }
  static nlohmann::json write(const OpticsReport& v) { return to_json(v); }
};

}  // namespace hsns::proto
