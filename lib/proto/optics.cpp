#include "hsns/proto/optics.h"

#include <limits>

#include "hsns/json_fields.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr double kNumberMax = std::numeric_limits<double>::max();
constexpr std::size_t kMaxText = 64;
constexpr std::size_t kMaxReason = 512;
constexpr std::array<Measure, 2> kModuleFlagMeasures = {Measure::temperature, Measure::voltage};
constexpr std::array<Measure, 3> kLaneFlagMeasures = {Measure::bias, Measure::tx_power, Measure::rx_power};

std::size_t index(Measure m) {
  return static_cast<std::size_t>(m);
}

json levels_to_json(const AlarmThresholds& t) {
  json j = json::object();
  for (std::size_t i = 0; i < kAlarmLevels; ++i) j[kAlarmLevelNames[i]] = t[i];
  return j;
}

json levels_to_json(const AlarmFlags& f) {
  json j = json::object();
  for (std::size_t i = 0; i < kAlarmLevels; ++i) j[kAlarmLevelNames[i]] = f[i];
  return j;
}

// The flags object of a module or lane: the measures `allowed` may appear, each with all four levels.
template <std::size_t N>
void read_flags(FieldReader& r, const std::array<Measure, N>& allowed,
                std::array<std::optional<AlarmFlags>, kMeasures>& out) {
  const auto* obj = r.object("flags", false);
  if (!obj) return;
  FieldReader fr = r.child(*obj, r.field_path("flags"));
  for (const Measure m : allowed) {
    const char* name = kMeasureNames[index(m)];
    const auto* levels = fr.object(name, false);
    if (!levels) continue;
    FieldReader lr = fr.child(*levels, fr.field_path(name));
    AlarmFlags flags{};
    bool ok = true;
    for (std::size_t i = 0; i < kAlarmLevels; ++i) {
      if (auto b = lr.boolean(kAlarmLevelNames[i], true))
        flags[i] = *b;
      else
        ok = false;
    }
    lr.report_unknown();
    if (ok) out[index(m)] = flags;
  }
  fr.report_unknown();
}

template <std::size_t N>
void write_flags(json& j, const std::array<Measure, N>& allowed,
                 const std::array<std::optional<AlarmFlags>, kMeasures>& flags) {
  json out = json::object();
  for (const Measure m : allowed) {
    const auto& set = flags[index(m)];
    if (set) out[kMeasureNames[index(m)]] = levels_to_json(*set);
  }
  if (!out.empty()) j["flags"] = std::move(out);
}

std::optional<double> read_number(FieldReader& r, std::string_view name) {
  return r.number(name, false, -kNumberMax, kNumberMax);
}

void read_lane(FieldReader& r, LaneDiagnostics& lane) {
  if (auto n = r.unsigned_integer("lane", true, kMaxModuleLanes); n && *n == 0)
    r.fail("lane", "must be 1 to " + std::to_string(kMaxModuleLanes));
  else if (n)
    lane.lane = static_cast<std::uint32_t>(*n);
  lane.bias_amperes = read_number(r, "bias_amperes");
  lane.tx_power_watts = read_number(r, "tx_power_watts");
  lane.rx_power_watts = read_number(r, "rx_power_watts");
  read_flags(r, kLaneFlagMeasures, lane.flags);
  lane.tx_los = r.boolean("tx_los", false);
  lane.rx_los = r.boolean("rx_los", false);
  lane.tx_fault = r.boolean("tx_fault", false);
  lane.tx_disabled = r.boolean("tx_disabled", false);
}

json lane_to_json(const LaneDiagnostics& l) {
  json j;
  j["lane"] = l.lane;
  if (l.bias_amperes) j["bias_amperes"] = *l.bias_amperes;
  if (l.tx_power_watts) j["tx_power_watts"] = *l.tx_power_watts;
  if (l.rx_power_watts) j["rx_power_watts"] = *l.rx_power_watts;
  write_flags(j, kLaneFlagMeasures, l.flags);
  if (l.tx_los) j["tx_los"] = *l.tx_los;
  if (l.rx_los) j["rx_los"] = *l.rx_los;
  if (l.tx_fault) j["tx_fault"] = *l.tx_fault;
  if (l.tx_disabled) j["tx_disabled"] = *l.tx_disabled;
  return j;
}

void read_thresholds(FieldReader& r, ModuleDiagnostics& m) {
  const auto* obj = r.object("thresholds", false);
  if (!obj) return;
  FieldReader tr = r.child(*obj, r.field_path("thresholds"));
  for (std::size_t k = 0; k < kMeasures; ++k) {
    const auto* levels = tr.object(kMeasureNames[k], false);
    if (!levels) continue;
    FieldReader lr = tr.child(*levels, tr.field_path(kMeasureNames[k]));
    AlarmThresholds t{};
    bool ok = true;
    for (std::size_t i = 0; i < kAlarmLevels; ++i) {
      if (auto v = lr.number(kAlarmLevelNames[i], true, -kNumberMax, kNumberMax))
        t[i] = *v;
      else
        ok = false;
    }
    lr.report_unknown();
    if (ok) m.thresholds[k] = t;
  }
  tr.report_unknown();
}

std::optional<ModuleDiagnostics> read_module_fields(FieldReader& r) {
  ModuleDiagnostics m;
  auto netdev = r.sized_string("netdev", true, 1, 15);
  auto status = r.one_of("status", true, {"ok", "no_diagnostics", "no_module", "error"});
  m.reason = r.string("reason", false, kMaxReason).value_or("");
  if (status && *status == 0 && !m.reason.empty()) r.fail("reason", "must be absent when status is ok");
  if (auto s = r.one_of("standard", false, {"sff-8472", "sff-8636", "cmis"}))
    m.standard = static_cast<ModuleStandard>(*s);
  if (auto id = r.unsigned_integer("identifier", false, 255)) m.identifier = static_cast<std::uint8_t>(*id);
  m.revision = r.string("revision", false, 16).value_or("");
  m.vendor = r.string("vendor", false, kMaxText).value_or("");
  m.part_number = r.string("part_number", false, kMaxText).value_or("");
  m.serial = r.string("serial", false, kMaxText).value_or("");
  m.vendor_revision = r.string("vendor_revision", false, kMaxText).value_or("");
  m.banks = static_cast<std::uint32_t>(r.unsigned_integer("banks", false, kMaxModuleBanks).value_or(0));
  m.temperature_celsius = read_number(r, "temperature_celsius");
  m.voltage_volts = read_number(r, "voltage_volts");
  read_thresholds(r, m);
  read_flags(r, kModuleFlagMeasures, m.flags);
  r.objects("lanes", false, kMaxModuleLanes, [&m](FieldReader& lr, std::size_t i) {
    LaneDiagnostics lane;
    read_lane(lr, lane);
    if (i > 0 && !m.lanes.empty() && lane.lane <= m.lanes.back().lane)
      lr.fail("lane", "must be greater than the lane before it");
    m.lanes.push_back(lane);
  });
  if (!netdev || !status || !r.ok()) return std::nullopt;
  m.netdev = std::move(*netdev);
  m.status = static_cast<ModuleStatus>(*status);
  return m;
}

}  // namespace

Result<ModuleDiagnostics> read_module_diagnostics(const json& document) {
  FieldReader r(document);
  auto m = read_module_fields(r);
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  return std::move(*m);
}

json to_json(const ModuleDiagnostics& m) {
  json j;
  j["netdev"] = m.netdev;
  j["status"] = kModuleStatusNames[static_cast<std::size_t>(m.status)];
  if (!m.reason.empty()) j["reason"] = m.reason;
  if (m.standard) j["standard"] = kModuleStandardNames[static_cast<std::size_t>(*m.standard)];
  if (m.identifier) j["identifier"] = *m.identifier;
  if (!m.revision.empty()) j["revision"] = m.revision;
  if (!m.vendor.empty()) j["vendor"] = m.vendor;
  if (!m.part_number.empty()) j["part_number"] = m.part_number;
  if (!m.serial.empty()) j["serial"] = m.serial;
  if (!m.vendor_revision.empty()) j["vendor_revision"] = m.vendor_revision;
  if (m.banks != 0) j["banks"] = m.banks;
  if (m.temperature_celsius) j["temperature_celsius"] = *m.temperature_celsius;
  if (m.voltage_volts) j["voltage_volts"] = *m.voltage_volts;
  json thresholds = json::object();
  for (std::size_t k = 0; k < kMeasures; ++k) {
    const auto& levels = m.thresholds[k];
    if (levels) thresholds[kMeasureNames[k]] = levels_to_json(*levels);
  }
  if (!thresholds.empty()) j["thresholds"] = std::move(thresholds);
  write_flags(j, kModuleFlagMeasures, m.flags);
  if (!m.lanes.empty()) {
    json lanes = json::array();
    for (const auto& l : m.lanes) lanes.push_back(lane_to_json(l));
    j["lanes"] = std::move(lanes);
  }
  return j;
}

Result<OpticsReport> read_optics_report(const json& document) {
  FieldReader r(document);
  OpticsReport report;
  auto host = r.string("host", true, 253);
  auto ts_ms = r.integer("ts_ms", true, 0, std::numeric_limits<std::int64_t>::max());
  r.objects("modules", true, kMaxOpticsModules, [&report](FieldReader& mr, std::size_t) {
    if (auto m = read_module_fields(mr)) report.modules.push_back(std::move(*m));
  });
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  report.host = std::move(*host);
  report.ts_ms = *ts_ms;
  return report;
}

json to_json(const OpticsReport& report) {
  json modules = json::array();
  for (const auto& m : report.modules) modules.push_back(to_json(m));
  return json{{"host", report.host}, {"ts_ms", report.ts_ms}, {"modules", std::move(modules)}};
}

}  // namespace hsns::proto
