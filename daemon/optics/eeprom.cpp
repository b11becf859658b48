#include "eeprom.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

namespace hsns::optics {
namespace {

using proto::AlarmFlags;
using proto::AlarmThresholds;
using proto::LaneDiagnostics;
using proto::Measure;
using proto::ModuleDiagnostics;
using proto::ModuleStandard;
using proto::ModuleStatus;

// Raw units of the standards' monitors (all three use the same ones).
constexpr double kTemperatureUnit = 1.0 / 256;  // °C per LSB of the signed 16-bit value
constexpr double kVoltageUnit = 100e-6;         // V per LSB
constexpr double kBiasUnit = 2e-6;              // A per LSB
constexpr double kPowerUnit = 0.1e-6;           // W per LSB

constexpr std::size_t kMeasureTemperature = static_cast<std::size_t>(Measure::temperature);
constexpr std::size_t kMeasureVoltage = static_cast<std::size_t>(Measure::voltage);
constexpr std::size_t kMeasureBias = static_cast<std::size_t>(Measure::bias);
constexpr std::size_t kMeasureTxPower = static_cast<std::size_t>(Measure::tx_power);
constexpr std::size_t kMeasureRxPower = static_cast<std::size_t>(Measure::rx_power);

bool bit(std::uint8_t byte, unsigned n) {
  return ((byte >> n) & 1U) != 0;
}

// One 128-byte page, read by the standards' byte addresses (base 0 for a lower page, 128 for an upper).
class Page {
 public:
  Page(const PageAddress& address, const std::vector<std::uint8_t>& bytes)
      : address_(address), bytes_(bytes), base_(address.upper ? kPageSize : 0) {}

  // Bytes outside the page read as 0: every caller asks for constant addresses inside it, this only
  // guarantees that a wrong constant can never read past the page.
  std::uint8_t u8(std::size_t at) const {
    return at >= base_ && at - base_ < bytes_.size() ? bytes_[at - base_] : std::uint8_t{0};
  }
  std::uint16_t u16(std::size_t at) const { return static_cast<std::uint16_t>((u8(at) << 8) | u8(at + 1)); }
  std::int16_t s16(std::size_t at) const { return std::bit_cast<std::int16_t>(u16(at)); }
  float f32(std::size_t at) const {
    const std::uint32_t v = (std::uint32_t{u16(at)} << 16) | u16(at + 2);
    return std::bit_cast<float>(v);
  }
  // An ASCII field: trailing spaces and NULs removed, anything but printable ASCII as '?'.
  std::string text(std::size_t at, std::size_t length) const {
    std::string s;
    for (std::size_t i = 0; i < length; ++i) {
      const std::uint8_t c = u8(at + i);
      s.push_back(c >= 0x20 && c <= 0x7E ? static_cast<char>(c) : '?');
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '?')) {
      // A trailing '?' came from a NUL pad only when the byte was 0.
      if (s.back() == '?' && u8(at + s.size() - 1) != 0) break;
      s.pop_back();
    }
    return s;
  }
  const PageAddress& address() const { return address_; }

 private:
  PageAddress address_;
  const std::vector<std::uint8_t>& bytes_;
  std::size_t base_;
};

Error page_error(const PageAddress& a, std::string reason) {
  return Error::invalid(page_name(a), std::move(reason));
}

// The page at `a`: nullopt when absent and optional; an Error when absent and required, or not 128 bytes.
Result<std::optional<Page>> find_page(const EepromPages& pages, const PageAddress& a, bool required) {
  const auto it = pages.find(a);
  if (it == pages.end()) {
    if (required) return tl::unexpected(page_error(a, "missing"));
    return std::optional<Page>();
  }
  if (it->second.size() != kPageSize)
    return tl::unexpected(
        page_error(a, std::to_string(it->second.size()) + " bytes, expected " + std::to_string(kPageSize)));
  return std::optional<Page>(Page(a, it->second));
}

// A page decoding cannot do without: an Error when absent or not 128 bytes.
Result<Page> require_page(const EepromPages& pages, const PageAddress& a) {
  auto p = find_page(pages, a, true);
  if (!p) return tl::unexpected(std::move(p.error()));
  if (!p->has_value()) return tl::unexpected(page_error(a, "missing"));
  return p->value();
}

std::string hex(unsigned v) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string{'0', 'x', kDigits[(v >> 4) & 0xF], kDigits[v & 0xF]};
}

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<AlarmThresholds> finite_thresholds(const AlarmThresholds& t) {
  for (const double v : t)
    if (!std::isfinite(v)) return std::nullopt;
  return t;
}

// Four 16-bit thresholds (high alarm, low alarm, high warning, low warning) starting at `at`, each
// converted by `convert` from the raw value.
template <typename Convert>
std::optional<AlarmThresholds> thresholds_at(const Page& p, std::size_t at, bool is_signed,
                                             Convert&& convert) {
  AlarmThresholds t{};
  for (std::size_t i = 0; i < proto::kAlarmLevels; ++i) {
    const std::size_t a = at + 2 * i;
    t[i] = convert(is_signed ? static_cast<double>(p.s16(a)) : static_cast<double>(p.u16(a)));
  }
  return finite_thresholds(t);
}

// Four flag bits of one measure: high alarm, low alarm, high warning, low warning at the bit positions
// given.
AlarmFlags flags_of(std::uint8_t byte, unsigned ha, unsigned la, unsigned hw, unsigned lw) {
  return AlarmFlags{bit(byte, ha), bit(byte, la), bit(byte, hw), bit(byte, lw)};
}

// ---------------------------------------------------------------- SFF-8472
// A0h: 0 identifier, 8 SFP+ cable technology (bit 2 passive, bit 3 active), 20-35 vendor, 40-55 part,
// 56-59 revision, 68-83 serial, 92 diagnostic monitoring type (bit 6 DDM, bit 5 internally calibrated,
// bit 4 externally calibrated), 93 enhanced options (bit 7 alarm/warning flags), 94 SFF-8472 compliance.
// A2h: 0-39 thresholds (temperature, Vcc, bias, Tx power, Rx power; each high alarm, low alarm, high
// warning, low warning), 56-75 Rx power polynomial Rx_PWR(4)..Rx_PWR(0) (IEEE 754 floats), 76-91 slope
// (unsigned 8.8) and offset (signed) of bias, Tx power, temperature, Vcc; 96-105 monitors; 110 status
// (bit 7 Tx disabled, bit 2 Tx fault, bit 1 Rx LOS); 112-113 alarm flags, 116-117 warning flags.

constexpr PageAddress kA2Lower{kAddressA2, 0, 0, false};
constexpr std::uint8_t kIdSfp = 0x03;

bool sff8472_has_diagnostics(const Page& a0) {
  return bit(a0.u8(92), 6);
}

std::string sff8472_revision(std::uint8_t code) {
  static constexpr const char* kRevisions[] = {"",     "9.3",  "9.5",  "10.2", "10.4",
                                               "11.0", "11.3", "11.4", "12.3", "12.4"};
  return code < std::size(kRevisions) ? kRevisions[code] : "";
}

// External calibration (A2h 56-91): a linear slope/offset per measure, a 4th-order polynomial for Rx power.
struct Sff8472Calibration {
  bool external = false;
  std::array<float, 5> rx{};  // Rx_PWR(0)..Rx_PWR(4)
  double bias_slope = 1, bias_offset = 0, tx_slope = 1, tx_offset = 0, t_slope = 1, t_offset = 0, v_slope = 1,
         v_offset = 0;

  static Sff8472Calibration from(const Page& a0, const Page& a2) {
    Sff8472Calibration c;
    c.external = bit(a0.u8(92), 4) && !bit(a0.u8(92), 5);
    if (!c.external) return c;
    for (std::size_t i = 0; i < 5; ++i) c.rx[4 - i] = a2.f32(56 + 4 * i);
    auto slope = [&](std::size_t at) { return a2.u16(at) / 256.0; };
    auto offset = [&](std::size_t at) { return static_cast<double>(a2.s16(at)); };
    c.bias_slope = slope(76);
    c.bias_offset = offset(78);
    c.tx_slope = slope(80);
    c.tx_offset = offset(82);
    c.t_slope = slope(84);
    c.t_offset = offset(86);
    c.v_slope = slope(88);
    c.v_offset = offset(90);
    return c;
  }
  double rx_power(double raw) const {
    if (!external) return raw;
    double v = 0;
    for (std::size_t i = 5; i-- > 0;) v = v * raw + static_cast<double>(rx[i]);
    return v;
  }
};

void sff8472_identity(const Page& a0, ModuleDiagnostics& m) {
  m.vendor = a0.text(20, 16);
  m.part_number = a0.text(40, 16);
  m.vendor_revision = a0.text(56, 4);
  m.serial = a0.text(68, 16);
  m.revision = sff8472_revision(a0.u8(94));
}

void sff8472_monitors(const Page& a0, const Page& a2, ModuleDiagnostics& m) {
  const auto c = Sff8472Calibration::from(a0, a2);
  auto temperature = [&](double raw) { return (c.t_slope * raw + c.t_offset) * kTemperatureUnit; };
  auto voltage = [&](double raw) { return (c.v_slope * raw + c.v_offset) * kVoltageUnit; };
  auto bias = [&](double raw) { return (c.bias_slope * raw + c.bias_offset) * kBiasUnit; };
  auto tx = [&](double raw) { return (c.tx_slope * raw + c.tx_offset) * kPowerUnit; };
  auto rx = [&](double raw) { return c.rx_power(raw) * kPowerUnit; };

  m.temperature_celsius = finite(temperature(a2.s16(96)));
  m.voltage_volts = finite(voltage(a2.u16(98)));
  m.thresholds[kMeasureTemperature] = thresholds_at(a2, 0, true, temperature);
  m.thresholds[kMeasureVoltage] = thresholds_at(a2, 8, false, voltage);
  m.thresholds[kMeasureBias] = thresholds_at(a2, 16, false, bias);
  m.thresholds[kMeasureTxPower] = thresholds_at(a2, 24, false, tx);
  m.thresholds[kMeasureRxPower] = thresholds_at(a2, 32, false, rx);

  LaneDiagnostics lane;
  lane.lane = 1;
  lane.bias_amperes = finite(bias(a2.u16(100)));
  lane.tx_power_watts = finite(tx(a2.u16(102)));
  lane.rx_power_watts = finite(rx(a2.u16(104)));
  const std::uint8_t status = a2.u8(110);
  lane.tx_disabled = bit(status, 7);
  lane.tx_fault = bit(status, 2);
  lane.rx_los = bit(status, 1);
  if (bit(a0.u8(93), 7)) {  // alarm and warning flags implemented
    const std::uint8_t a1 = a2.u8(112), a2b = a2.u8(113), w1 = a2.u8(116), w2 = a2.u8(117);
    auto pair = [](std::uint8_t alarms, std::uint8_t warnings, unsigned high, unsigned low) {
      return AlarmFlags{bit(alarms, high), bit(alarms, low), bit(warnings, high), bit(warnings, low)};
    };
    m.flags[kMeasureTemperature] = pair(a1, w1, 7, 6);
    m.flags[kMeasureVoltage] = pair(a1, w1, 5, 4);
    lane.flags[kMeasureBias] = pair(a1, w1, 3, 2);
    lane.flags[kMeasureTxPower] = pair(a1, w1, 1, 0);
    lane.flags[kMeasureRxPower] = pair(a2b, w2, 7, 6);
  }
  m.lanes.push_back(lane);
}

// ---------------------------------------------------------------- SFF-8636
// Lower page: 0 identifier, 1 revision compliance, 2 status (bit 2 flat memory), 3 LOS (bits 0-3 Rx,
// 4-7 Tx), 4 Tx fault (bits 0-3), 6 temperature and 7 Vcc flags (bit 7 high alarm, 6 low alarm, 5 high
// warning, 4 low warning), 9-10 Rx power, 11-12 bias, 13-14 Tx power flags (one nibble per lane, lane 1
// in the high nibble of the first byte), 22 temperature, 26 Vcc, 34 Rx power, 42 bias, 50 Tx power (2
// bytes per lane), 86 Tx disable (bits 0-3). Page 00h: 128 identifier, 147 device technology (bits 7-4,
// 0xA-0xF copper), 148-163 vendor, 168-183 part, 184-185 revision, 196-211 serial, 220 diagnostic
// monitoring type (bit 2 Tx power supported). Page 03h: thresholds of temperature 128, Vcc 144, Rx power
// 176, bias 184, Tx power 192.

constexpr std::size_t kSff8636Lanes = 4;

bool sff8636_flat(const Page& lower) {
  return bit(lower.u8(2), 2);
}

std::string sff8636_revision(std::uint8_t code) {
  static constexpr const char* kRevisions[] = {"", "", "", "1.3", "1.4", "1.5", "2.0", "2.5", "2.8"};
  return code < std::size(kRevisions) ? kRevisions[code] : "";
}

// Lane i's (0-based) flags in the nibble layout of bytes 9-14: high alarm, low alarm, high warning, low
// warning from the high bit down.
AlarmFlags sff8636_lane_flags(const Page& lower, std::size_t first_byte, std::size_t lane) {
  const std::uint8_t byte = lower.u8(first_byte + lane / 2);
  const unsigned shift = lane % 2 == 0 ? 4 : 0;
  return flags_of(byte, shift + 3, shift + 2, shift + 1, shift);
}

// ---------------------------------------------------------------- CMIS
// Lower page: 0 identifier, 1 revision (major.minor nibbles), 2 bit 7 flat memory, 9 module flags
// (bits 0-3 temperature high alarm, low alarm, high warning, low warning; bits 4-7 the same for Vcc),
// 14 temperature, 16 Vcc, 85 media type (0x03 passive copper). Page 00h: 128 identifier, 129-144 vendor,
// 148-163 part, 164-165 revision, 166-181 serial, 212 media interface technology (0xA-0xF copper).
// Page 01h: 142 bits 1-0 banks (0: bank 0, 1: banks 0-1, 2: banks 0-3), 160 module monitors (bit 0
// temperature, bit 1 Vcc), 161 lane monitors (bit 0 bias, bit 1 Tx power, bit 2 Rx power; bits 4-3 bias
// multiplier 1, 2, 4). Page 02h: thresholds of temperature 128, Vcc 136, Tx power 176, bias 184, Rx power
// 192. Page 10h (per bank): 130 Tx output disabled. Page 11h (per bank): 135 Tx fault, 136 Tx LOS, 139-142
// Tx power, 143-146 bias flags (high alarm, low alarm, high warning, low warning), 147 Rx LOS, 149-152 Rx
// power flags, 154 Tx power, 170 bias, 186 Rx power (2 bytes per lane); one bit or value per lane, 8 lanes.

constexpr std::size_t kCmisLanesPerBank = 8;

bool cmis_flat(const Page& lower) {
  return bit(lower.u8(2), 7);
}

// Banks advertised by page 01h byte 142; nullopt for the reserved code.
std::optional<std::size_t> cmis_banks(const Page& page01) {
  switch (page01.u8(142) & 0x03) {
    case 0:
      return 1;
    case 1:
      return 2;
    case 2:
      return 4;
    default:
      return std::nullopt;
  }
}

enum class Family { sff8472, sff8636, cmis, unknown };

Family family_of(std::uint8_t identifier) {
  switch (identifier) {
    case kIdSfp:
      return Family::sff8472;
    case 0x0C:  // QSFP
    case 0x0D:  // QSFP+
    case 0x11:  // QSFP28
      return Family::sff8636;
    case 0x18:  // QSFP-DD
    case 0x19:  // OSFP
    case 0x1E:  // QSFP+ or later with CMIS
      return Family::cmis;
    default:
      return Family::unknown;
  }
}

ModuleDiagnostics start(ModuleStandard standard, std::uint8_t identifier) {
  ModuleDiagnostics m;
  m.standard = standard;
  m.identifier = identifier;
  return m;
}

ModuleDiagnostics no_diagnostics(ModuleDiagnostics m, std::string reason) {
  m.status = ModuleStatus::no_diagnostics;
  m.reason = std::move(reason);
  return m;
}

// Page 00h's identifier must repeat the lower page's (a module answering with another module's bytes, or
// a page select that did not take, is corrupt).
tl::expected<void, Error> same_identifier(const Page& lower, const Page& page00) {
  if (page00.u8(128) != lower.u8(0))
    return tl::unexpected(page_error(page00.address(), "byte 128: identifier " + hex(page00.u8(128)) +
                                                           " differs from the lower page's " +
                                                           hex(lower.u8(0))));
  return {};
}

}  // namespace

std::string page_name(const PageAddress& a) {
  if (a.i2c != kAddressA0)
    return std::string(a.i2c == kAddressA2 ? "A2h" : hex(a.i2c)) + (a.upper ? " upper" : " lower");
  if (!a.upper) return "lower page";
  std::string s = "page " + hex(a.page).substr(2) + "h";
  if (a.bank != 0) s += " bank " + std::to_string(a.bank);
  return s;
}

std::vector<PageAddress> pages_to_read(const EepromPages& pages) {
  std::vector<PageAddress> want;
  auto missing = [&](const PageAddress& a) {
    if (!pages.contains(a)) want.push_back(a);
  };
  const auto lower = require_page(pages, kLowerPage);
  if (!lower) return pages.contains(kLowerPage) ? want : std::vector<PageAddress>{kLowerPage};
  const Page& lp = *lower;
  switch (family_of(lp.u8(0))) {
    case Family::sff8472:
      if (sff8472_has_diagnostics(lp)) missing(kA2Lower);
      break;
    case Family::sff8636:
      missing(upper_page(0x00));
      if (!sff8636_flat(lp)) missing(upper_page(0x03));
      break;
    case Family::cmis: {
      missing(upper_page(0x00));
      if (cmis_flat(lp)) break;
      missing(upper_page(0x01));
      missing(upper_page(0x02));
      const auto p01 = find_page(pages, upper_page(0x01), false);
      if (!p01 || !p01->has_value()) break;
      const auto banks = cmis_banks(p01->value());
      for (std::size_t b = 0; banks && b < *banks; ++b) {
        missing(upper_page(0x10, static_cast<std::uint8_t>(b)));
        missing(upper_page(0x11, static_cast<std::uint8_t>(b)));
      }
      break;
    }
    case Family::unknown:
      break;
  }
  return want;
}

Result<ModuleDiagnostics> decode_sff8472(const EepromPages& pages) {
  auto a0 = require_page(pages, kLowerPage);
  if (!a0) return tl::unexpected(std::move(a0.error()));
  const Page& lp = *a0;
  if (lp.u8(0) != kIdSfp)
    return tl::unexpected(page_error(kLowerPage, "byte 0: identifier " + hex(lp.u8(0)) + " is not an SFP"));
  auto m = start(ModuleStandard::sff8472, lp.u8(0));
  sff8472_identity(lp, m);
  if (!sff8472_has_diagnostics(lp)) {
    const std::uint8_t cable = lp.u8(8);
    if (bit(cable, 2) || bit(cable, 3))
      return no_diagnostics(std::move(m), std::string(bit(cable, 2) ? "passive" : "active") +
                                              " copper cable without diagnostics (A0h byte 8)");
    return no_diagnostics(std::move(m), "no digital diagnostics (A0h byte 92 bit 6 clear)");
  }
  auto a2 = require_page(pages, kA2Lower);
  if (!a2) return tl::unexpected(std::move(a2.error()));
  sff8472_monitors(lp, *a2, m);
  return m;
}

Result<ModuleDiagnostics> decode_sff8636(const EepromPages& pages) {
  auto lower = require_page(pages, kLowerPage);
  if (!lower) return tl::unexpected(std::move(lower.error()));
  const Page& lp = *lower;
  if (family_of(lp.u8(0)) != Family::sff8636)
    return tl::unexpected(page_error(kLowerPage, "byte 0: identifier " + hex(lp.u8(0)) + " is not SFF-8636"));
  auto p00 = require_page(pages, upper_page(0x00));
  if (!p00) return tl::unexpected(std::move(p00.error()));
  const Page& id = *p00;
  if (auto same = same_identifier(lp, id); !same) return tl::unexpected(std::move(same.error()));
  auto m = start(ModuleStandard::sff8636, lp.u8(0));
  m.revision = sff8636_revision(lp.u8(1));
  m.vendor = id.text(148, 16);
  m.part_number = id.text(168, 16);
  m.vendor_revision = id.text(184, 2);
  m.serial = id.text(196, 16);
  const unsigned technology = id.u8(147) >> 4;
  if (technology >= 0xA)
    return no_diagnostics(std::move(m),
                          "copper cable (page 00h byte 147: transmitter technology " + hex(technology) + ")");
  if (sff8636_flat(lp)) return no_diagnostics(std::move(m), "flat memory (lower page byte 2 bit 2)");
  auto p03 = require_page(pages, upper_page(0x03));
  if (!p03) return tl::unexpected(std::move(p03.error()));
  const Page& thr = *p03;
  const bool tx_power = bit(id.u8(220), 2);

  auto temperature = [](double raw) { return raw * kTemperatureUnit; };
  auto voltage = [](double raw) { return raw * kVoltageUnit; };
  auto bias = [](double raw) { return raw * kBiasUnit; };
  auto power = [](double raw) { return raw * kPowerUnit; };
  m.temperature_celsius = temperature(lp.s16(22));
  m.voltage_volts = voltage(lp.u16(26));
  m.flags[kMeasureTemperature] = flags_of(lp.u8(6), 7, 6, 5, 4);
  m.flags[kMeasureVoltage] = flags_of(lp.u8(7), 7, 6, 5, 4);
  m.thresholds[kMeasureTemperature] = thresholds_at(thr, 128, true, temperature);
  m.thresholds[kMeasureVoltage] = thresholds_at(thr, 144, false, voltage);
  m.thresholds[kMeasureRxPower] = thresholds_at(thr, 176, false, power);
  m.thresholds[kMeasureBias] = thresholds_at(thr, 184, false, bias);
  if (tx_power) m.thresholds[kMeasureTxPower] = thresholds_at(thr, 192, false, power);
  for (std::size_t i = 0; i < kSff8636Lanes; ++i) {
    LaneDiagnostics lane;
    lane.lane = static_cast<std::uint32_t>(i + 1);
    lane.rx_power_watts = power(lp.u16(34 + 2 * i));
    lane.bias_amperes = bias(lp.u16(42 + 2 * i));
    lane.flags[kMeasureRxPower] = sff8636_lane_flags(lp, 9, i);
    lane.flags[kMeasureBias] = sff8636_lane_flags(lp, 11, i);
    if (tx_power) {
      lane.tx_power_watts = power(lp.u16(50 + 2 * i));
      lane.flags[kMeasureTxPower] = sff8636_lane_flags(lp, 13, i);
    }
    lane.rx_los = bit(lp.u8(3), static_cast<unsigned>(i));
    lane.tx_los = bit(lp.u8(3), static_cast<unsigned>(i + 4));
    lane.tx_fault = bit(lp.u8(4), static_cast<unsigned>(i));
    lane.tx_disabled = bit(lp.u8(86), static_cast<unsigned>(i));
    m.lanes.push_back(lane);
  }
  return m;
}

Result<ModuleDiagnostics> decode_cmis(const EepromPages& pages) {
  auto lower = require_page(pages, kLowerPage);
  if (!lower) return tl::unexpected(std::move(lower.error()));
  const Page& lp = *lower;
  if (family_of(lp.u8(0)) != Family::cmis)
    return tl::unexpected(page_error(kLowerPage, "byte 0: identifier " + hex(lp.u8(0)) + " is not CMIS"));
  auto p00 = require_page(pages, upper_page(0x00));
  if (!p00) return tl::unexpected(std::move(p00.error()));
  const Page& id = *p00;
  if (auto same = same_identifier(lp, id); !same) return tl::unexpected(std::move(same.error()));
  auto m = start(ModuleStandard::cmis, lp.u8(0));
  m.revision = std::to_string(lp.u8(1) >> 4) + "." + std::to_string(lp.u8(1) & 0x0F);
  m.vendor = id.text(129, 16);
  m.part_number = id.text(148, 16);
  m.vendor_revision = id.text(164, 2);
  m.serial = id.text(166, 16);
  const std::uint8_t technology = id.u8(212);
  if (lp.u8(85) == 0x03 || (technology >= 0x0A && technology <= 0x0F))
    return no_diagnostics(std::move(m), "copper cable (lower page byte 85, page 00h byte 212)");
  if (cmis_flat(lp)) return no_diagnostics(std::move(m), "flat memory (lower page byte 2 bit 7)");
  auto p01 = require_page(pages, upper_page(0x01));
  if (!p01) return tl::unexpected(std::move(p01.error()));
  auto p02 = require_page(pages, upper_page(0x02));
  if (!p02) return tl::unexpected(std::move(p02.error()));
  const Page& adv = *p01;
  const Page& thr = *p02;
  const auto banks = cmis_banks(adv);
  if (!banks) return tl::unexpected(page_error(adv.address(), "byte 142: bank count code 3 is reserved"));
  const std::uint8_t module_monitors = adv.u8(160);
  const std::uint8_t lane_monitors = adv.u8(161);
  if ((module_monitors & 0x03) == 0 && (lane_monitors & 0x07) == 0)
    return no_diagnostics(std::move(m), "no monitors advertised (page 01h bytes 160-161)");
  static constexpr double kBiasMultiplier[] = {1, 2, 4, 1};  // code 3 is reserved: no scaling
  const double multiplier = kBiasMultiplier[(lane_monitors >> 3) & 0x03];

  auto temperature = [](double raw) { return raw * kTemperatureUnit; };
  auto voltage = [](double raw) { return raw * kVoltageUnit; };
  auto bias = [multiplier](double raw) { return raw * kBiasUnit * multiplier; };
  auto power = [](double raw) { return raw * kPowerUnit; };
  const std::uint8_t module_flags = lp.u8(9);
  if (bit(module_monitors, 0)) {
    m.temperature_celsius = temperature(lp.s16(14));
    m.flags[kMeasureTemperature] = flags_of(module_flags, 0, 1, 2, 3);
    m.thresholds[kMeasureTemperature] = thresholds_at(thr, 128, true, temperature);
  }
  if (bit(module_monitors, 1)) {
    m.voltage_volts = voltage(lp.u16(16));
    m.flags[kMeasureVoltage] = flags_of(module_flags, 4, 5, 6, 7);
    m.thresholds[kMeasureVoltage] = thresholds_at(thr, 136, false, voltage);
  }
  const bool has_bias = bit(lane_monitors, 0), has_tx = bit(lane_monitors, 1), has_rx = bit(lane_monitors, 2);
  if (has_tx) m.thresholds[kMeasureTxPower] = thresholds_at(thr, 176, false, power);
  if (has_bias) m.thresholds[kMeasureBias] = thresholds_at(thr, 184, false, bias);
  if (has_rx) m.thresholds[kMeasureRxPower] = thresholds_at(thr, 192, false, power);

  for (std::size_t b = 0; b < *banks; ++b) {
    const auto bank = static_cast<std::uint8_t>(b);
    auto p10 = require_page(pages, upper_page(0x10, bank));
    if (!p10) return tl::unexpected(std::move(p10.error()));
    auto p11 = require_page(pages, upper_page(0x11, bank));
    if (!p11) return tl::unexpected(std::move(p11.error()));
    const Page& control = *p10;
    const Page& status = *p11;
    for (std::size_t i = 0; i < kCmisLanesPerBank; ++i) {
      const auto n = static_cast<unsigned>(i);
      LaneDiagnostics lane;
      lane.lane = static_cast<std::uint32_t>(b * kCmisLanesPerBank + i + 1);
      auto lane_flags = [&](std::size_t at) {
        return AlarmFlags{bit(status.u8(at), n), bit(status.u8(at + 1), n), bit(status.u8(at + 2), n),
                          bit(status.u8(at + 3), n)};
      };
      if (has_tx) {
        lane.tx_power_watts = power(status.u16(154 + 2 * i));
        lane.flags[kMeasureTxPower] = lane_flags(139);
      }
      if (has_bias) {
        lane.bias_amperes = bias(status.u16(170 + 2 * i));
        lane.flags[kMeasureBias] = lane_flags(143);
      }
      if (has_rx) {
        lane.rx_power_watts = power(status.u16(186 + 2 * i));
        lane.flags[kMeasureRxPower] = lane_flags(149);
      }
      lane.tx_fault = bit(status.u8(135), n);
      lane.tx_los = bit(status.u8(136), n);
      lane.rx_los = bit(status.u8(147), n);
      lane.tx_disabled = bit(control.u8(130), n);
      m.lanes.push_back(lane);
    }
  }
  m.banks = static_cast<std::uint32_t>(*banks);
  return m;
}

Result<ModuleDiagnostics> decode_module(const std::string& netdev, const EepromPages& pages) {
  auto lower = require_page(pages, kLowerPage);
  if (!lower) return tl::unexpected(std::move(lower.error()));
  Result<ModuleDiagnostics> m = tl::unexpected(Error::internal("unreachable"));
  const std::uint8_t identifier = (*lower).u8(0);
  switch (family_of(identifier)) {
    case Family::sff8472:
      m = decode_sff8472(pages);
      break;
    case Family::sff8636:
      m = decode_sff8636(pages);
      break;
    case Family::cmis:
      m = decode_cmis(pages);
      break;
    case Family::unknown:
      return tl::unexpected(page_error(kLowerPage, "byte 0: identifier " + hex(identifier) +
                                                       " is not an SFF-8472, SFF-8636 or CMIS module"));
  }
  if (m) m->netdev = netdev;
  return m;
}

}  // namespace hsns::optics
