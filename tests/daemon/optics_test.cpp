// Optical-module diagnostics (daemon/optics): the three decoders on EEPROM images built here byte by byte,
// with every expected value computed by hand in the comments; corrupt, short and mislabelled pages; the
// reader's plan; the optics-report wire section (strict reader, JSON and CBOR round trips); the genetlink
// reply parser; the real ethtool netlink path on a veth and lo in a network namespace this test creates
// (no module there: counted, never a crash); and the optics component's metrics, checked by promtool.
#include "hsns/proto/optics.h"

#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "eeprom.h"
#include "module_reader.h"
#include "optics_component.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::optics {
namespace {

using proto::Measure;
using proto::ModuleStatus;
using Bytes = std::vector<std::uint8_t>;

constexpr auto kTemp = static_cast<std::size_t>(Measure::temperature);
constexpr auto kVcc = static_cast<std::size_t>(Measure::voltage);
constexpr auto kBias = static_cast<std::size_t>(Measure::bias);
constexpr auto kTx = static_cast<std::size_t>(Measure::tx_power);
constexpr auto kRx = static_cast<std::size_t>(Measure::rx_power);

// One 128-byte page written by the standards' byte addresses (base 128 for an upper page).
class PageImage {
 public:
  explicit PageImage(bool upper = false) : base_(upper ? 128 : 0) {}
  PageImage& u8(std::size_t at, std::uint8_t v) {
    bytes_.at(at - base_) = v;
    return *this;
  }
  PageImage& u16(std::size_t at, std::uint16_t v) {
    return u8(at, static_cast<std::uint8_t>(v >> 8)).u8(at + 1, static_cast<std::uint8_t>(v & 0xFF));
  }
  PageImage& f32(std::size_t at, float f) {
    const auto v = std::bit_cast<std::uint32_t>(f);
    return u16(at, static_cast<std::uint16_t>(v >> 16)).u16(at + 2, static_cast<std::uint16_t>(v & 0xFFFF));
  }
  // Four thresholds: high alarm, low alarm, high warning, low warning.
  PageImage& levels(std::size_t at, std::uint16_t ha, std::uint16_t la, std::uint16_t hw, std::uint16_t lw) {
    return u16(at, ha).u16(at + 2, la).u16(at + 4, hw).u16(at + 6, lw);
  }
  PageImage& text(std::size_t at, std::size_t length, const std::string& s) {
    for (std::size_t i = 0; i < length; ++i) u8(at + i, i < s.size() ? static_cast<std::uint8_t>(s[i]) : ' ');
    return *this;
  }
  Bytes bytes() const { return bytes_; }

 private:
  std::size_t base_;
  Bytes bytes_ = Bytes(kPageSize, 0);
};

constexpr PageAddress kA2{kAddressA2, 0, 0, false};

// ---- SFF-8472: an SFP+ SR, internally calibrated ----
PageImage sfp_a0() {
  PageImage a0;
  a0.u8(0, 0x03)                    // SFP
      .text(20, 16, "ACME OPTICS")  // vendor
      .text(40, 16, "SFP-10G-SR")   // part
      .text(56, 4, "A1")            // revision
      .text(68, 16, "SN12345")      // serial
      .u8(92, 0x68)                 // DDM (bit 6), internally calibrated (bit 5), average Rx power (bit 3)
      .u8(93, 0x80)                 // alarm/warning flags implemented
      .u8(94, 0x08);                // SFF-8472 rev 12.3
  return a0;
}

PageImage sfp_a2() {
  PageImage a2;
  a2.levels(0, 0x5000, 0xF600, 0x4B00, 0xFB00)  // temperature: 80.0, -10.0, 75.0, -5.0 °C (/256)
      .levels(8, 36000, 30000, 35000, 31000)    // Vcc: 3.6, 3.0, 3.5, 3.1 V (x 100 µV)
      .levels(16, 15000, 500, 13000, 1000)      // bias: 30, 1, 26, 2 mA (x 2 µA)
      .levels(24, 20000, 100, 16000, 200)       // Tx: 2 mW, 10 µW, 1.6 mW, 20 µW (x 0.1 µW)
      .levels(32, 20000, 100, 16000, 200)       // Rx: the same
      .u16(96, 0x1A80)                          // 6784 / 256 = 26.5 °C
      .u16(98, 33076)                           // 3.3076 V
      .u16(100, 6000)                           // 12 mA
      .u16(102, 5000)                           // 0.5 mW
      .u16(104, 4000)                           // 0.4 mW
      .u8(110, 0x02)                            // Rx LOS
      .u8(112, 0x80)                            // temperature high alarm
      .u8(113, 0x40)                            // Rx power low alarm
      .u8(116, 0xA0)                            // temperature high warning (bit 7), Vcc high warning (5)
      .u8(117, 0x40);                           // Rx power low warning
  return a2;
}

EepromPages sfp_pages() {
  return {{kLowerPage, sfp_a0().bytes()}, {kA2, sfp_a2().bytes()}};
}

TEST(Sff8472, InternallyCalibratedModule) {
  const auto m = decode_module("eth0", sfp_pages());
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->netdev, "eth0");
  EXPECT_EQ(m->status, ModuleStatus::ok);
  EXPECT_EQ(m->standard, proto::ModuleStandard::sff8472);
  EXPECT_EQ(m->identifier, 0x03);
  EXPECT_EQ(m->revision, "12.3");
  EXPECT_EQ(m->vendor, "ACME OPTICS");
  EXPECT_EQ(m->part_number, "SFP-10G-SR");
  EXPECT_EQ(m->vendor_revision, "A1");
  EXPECT_EQ(m->serial, "SN12345");
  EXPECT_DOUBLE_EQ(m->temperature_celsius.value(), 26.5);
  EXPECT_DOUBLE_EQ(m->voltage_volts.value(), 3.3076);
  EXPECT_EQ(m->thresholds[kTemp].value(), (proto::AlarmThresholds{80.0, -10.0, 75.0, -5.0}));
  const auto& vcc = m->thresholds[kVcc].value();
  EXPECT_DOUBLE_EQ(vcc[0], 3.6);
  EXPECT_DOUBLE_EQ(vcc[1], 3.0);
  EXPECT_DOUBLE_EQ(vcc[2], 3.5);
  EXPECT_DOUBLE_EQ(vcc[3], 3.1);
  EXPECT_DOUBLE_EQ((m->thresholds[kBias].value())[0], 0.030);
  EXPECT_DOUBLE_EQ((m->thresholds[kBias].value())[1], 0.001);
  EXPECT_DOUBLE_EQ((m->thresholds[kTx].value())[0], 0.002);
  EXPECT_DOUBLE_EQ((m->thresholds[kTx].value())[3], 20e-6);
  EXPECT_DOUBLE_EQ((m->thresholds[kRx].value())[2], 0.0016);
  ASSERT_EQ(m->lanes.size(), 1u);
  const auto& lane = m->lanes[0];
  EXPECT_EQ(lane.lane, 1u);
  EXPECT_DOUBLE_EQ(lane.bias_amperes.value(), 0.012);
  EXPECT_DOUBLE_EQ(lane.tx_power_watts.value(), 0.0005);
  EXPECT_DOUBLE_EQ(lane.rx_power_watts.value(), 0.0004);
  EXPECT_EQ(lane.rx_los, true);
  EXPECT_EQ(lane.tx_fault, false);
  EXPECT_EQ(lane.tx_disabled, false);
  EXPECT_FALSE(lane.tx_los);  // SFF-8472 has no Tx LOS
  EXPECT_EQ(m->flags[kTemp].value(), (proto::AlarmFlags{true, false, true, false}));
  EXPECT_EQ(m->flags[kVcc].value(), (proto::AlarmFlags{false, false, true, false}));
  EXPECT_EQ(lane.flags[kRx].value(), (proto::AlarmFlags{false, true, false, true}));
  EXPECT_EQ(lane.flags[kBias].value(), (proto::AlarmFlags{}));
  EXPECT_FALSE(m->flags[kBias]);
  EXPECT_FALSE(lane.flags[kTemp]);
}

TEST(Sff8472, ExternalCalibrationAppliesSlopesOffsetsAndTheRxPolynomial) {
  auto a0 = sfp_a0();
  a0.u8(92, 0x58);  // DDM, externally calibrated (bit 4), average Rx power
  auto a2 = sfp_a2();
  a2.f32(56, 0.0F)             // Rx_PWR(4)
      .f32(60, 0.0F)           // Rx_PWR(3)
      .f32(64, 0.0009765625F)  // Rx_PWR(2) = 2^-10
      .f32(68, 2.0F)           // Rx_PWR(1)
      .f32(72, -100.0F)        // Rx_PWR(0)
      .u16(76, 0x0080)         // bias slope 0.5
      .u16(78, 0)              // bias offset 0
      .u16(80, 0x0100)         // Tx slope 1.0
      .u16(82, 0xFF9C)         // Tx offset -100
      .u16(84, 0x0200)         // temperature slope 2.0
      .u16(86, 0xFF00)         // temperature offset -256
      .u16(88, 0x0100)         // Vcc slope 1.0
      .u16(90, 100);           // Vcc offset +100
  const auto m = decode_module("eth0", {{kLowerPage, a0.bytes()}, {kA2, a2.bytes()}});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_DOUBLE_EQ(m->temperature_celsius.value(), 52.0);         // (2 * 6784 - 256) / 256
  EXPECT_DOUBLE_EQ(m->voltage_volts.value(), 3.3176);             // (33076 + 100) x 100 µV
  EXPECT_DOUBLE_EQ(m->lanes[0].bias_amperes.value(), 0.006);      // 0.5 * 6000 x 2 µA
  EXPECT_DOUBLE_EQ(m->lanes[0].tx_power_watts.value(), 0.00049);  // (5000 - 100) x 0.1 µW
  // 4000^2 / 1024 + 2 * 4000 - 100 = 15625 + 7900 = 23525 x 0.1 µW = 2.3525 mW
  EXPECT_DOUBLE_EQ(m->lanes[0].rx_power_watts.value(), 0.0023525);
  // Thresholds are calibrated the same way: temperature high alarm (2 * 20480 - 256) / 256 = 159 °C.
  EXPECT_DOUBLE_EQ((m->thresholds[kTemp].value())[0], 159.0);
  // Rx low alarm: 100^2/1024 + 200 - 100 = 109.765625 x 0.1 µW
  EXPECT_DOUBLE_EQ((m->thresholds[kRx].value())[1], 109.765625 * 0.1e-6);
}

TEST(Sff8472, NonFiniteCalibrationLeavesTheValuesOut) {
  auto a0 = sfp_a0();
  a0.u8(92, 0x58);
  auto a2 = sfp_a2();
  a2.f32(72, std::numeric_limits<float>::quiet_NaN())
      .u16(84, 0x0100)
      .u16(88, 0x0100)
      .u16(76, 0x0100)
      .u16(80, 0x0100);
  const auto m = decode_module("eth0", {{kLowerPage, a0.bytes()}, {kA2, a2.bytes()}});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_FALSE(m->lanes[0].rx_power_watts);
  EXPECT_FALSE(m->thresholds[kRx]);
  EXPECT_DOUBLE_EQ(m->temperature_celsius.value(), 26.5);
}

TEST(Sff8472, CopperAndNoDdmAreNoDiagnosticsWithTheReason) {
  auto a0 = sfp_a0();
  a0.u8(92, 0x00).u8(8, 0x04);  // passive copper cable, no DDM
  auto m = decode_module("eth0", {{kLowerPage, a0.bytes()}});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(m->reason, "passive copper cable without diagnostics (A0h byte 8)");
  EXPECT_EQ(m->vendor, "ACME OPTICS");
  EXPECT_TRUE(m->lanes.empty());
  a0.u8(8, 0x00);
  m = decode_module("eth0", {{kLowerPage, a0.bytes()}});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->reason, "no digital diagnostics (A0h byte 92 bit 6 clear)");
  // Without DDM the A2h page is never asked for.
  EXPECT_TRUE(pages_to_read({{kLowerPage, a0.bytes()}}).empty());
}

TEST(Sff8472, MissingOrShortA2IsAnErrorNamingIt) {
  auto m = decode_module("eth0", {{kLowerPage, sfp_a0().bytes()}});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "A2h lower: missing");
  Bytes short_a2 = sfp_a2().bytes();
  short_a2.resize(40);
  m = decode_module("eth0", {{kLowerPage, sfp_a0().bytes()}, {kA2, short_a2}});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "A2h lower: 40 bytes, expected 128");
}

// ---- SFF-8636: a QSFP28 SR4 ----
PageImage qsfp_lower() {
  PageImage p;
  p.u8(0, 0x11)         // QSFP28
      .u8(1, 0x08)      // SFF-8636 rev 2.8
      .u8(3, 0x21)      // Rx LOS lane 1 (bit 0), Tx LOS lane 2 (bit 5)
      .u8(4, 0x08)      // Tx fault lane 4
      .u8(6, 0x80)      // temperature high alarm
      .u8(7, 0x10)      // Vcc low warning
      .u8(9, 0x40)      // Rx power lane 1 low alarm (high nibble, bit 2 of it)
      .u8(10, 0x02)     // Rx power lane 4 high warning (low nibble, bit 1)
      .u8(14, 0x01)     // Tx power lane 4 low warning
      .u16(22, 0x1A80)  // 26.5 °C
      .u16(26, 33000)   // 3.3 V
      .u16(34, 10000)
      .u16(36, 8000)
      .u16(38, 0)
      .u16(40, 1000)  // Rx: 1 mW, 0.8 mW, 0, 0.1 mW
      .u16(42, 7000)
      .u16(44, 6000)
      .u16(46, 4000)
      .u16(48, 2000)  // bias: 14, 12, 8, 4 mA
      .u16(50, 9000)
      .u16(52, 9000)
      .u16(54, 9000)
      .u16(56, 9000)  // Tx: 0.9 mW each
      .u8(86, 0x04);  // Tx disabled on lane 3
  return p;
}

PageImage qsfp_page00() {
  PageImage p(true);
  p.u8(128, 0x11)
      .u8(147, 0x00)  // 850 nm VCSEL
      .text(148, 16, "QSFP VENDOR")
      .text(168, 16, "QSFP28-100G-SR4")
      .text(184, 2, "B0")
      .text(196, 16, "QSN0001")
      .u8(220, 0x0C);  // average Rx power, Tx power supported
  return p;
}

PageImage qsfp_page03() {
  PageImage p(true);
  p.levels(128, 0x4B00, 0xFB00, 0x4600, 0x0000)  // 75, -5, 70, 0 °C
      .levels(144, 36000, 30000, 35000, 31000)   // 3.6, 3.0, 3.5, 3.1 V
      .levels(176, 35000, 50, 28000, 100)        // Rx: 3.5 mW, 5 µW, 2.8 mW, 10 µW
      .levels(184, 20000, 0, 17500, 0)           // bias: 40, 0, 35, 0 mA
      .levels(192, 35000, 50, 28000, 100);       // Tx: as Rx
  return p;
}

EepromPages qsfp_pages() {
  return {{kLowerPage, qsfp_lower().bytes()},
          {upper_page(0x00), qsfp_page00().bytes()},
          {upper_page(0x03), qsfp_page03().bytes()}};
}

TEST(Sff8636, FourLanesThresholdsAndLatchedFlags) {
  const auto m = decode_module("swp1", qsfp_pages());
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::ok);
  EXPECT_EQ(m->standard, proto::ModuleStandard::sff8636);
  EXPECT_EQ(m->revision, "2.8");
  EXPECT_EQ(m->vendor, "QSFP VENDOR");
  EXPECT_EQ(m->part_number, "QSFP28-100G-SR4");
  EXPECT_EQ(m->serial, "QSN0001");
  EXPECT_EQ(m->vendor_revision, "B0");
  EXPECT_DOUBLE_EQ(m->temperature_celsius.value(), 26.5);
  EXPECT_DOUBLE_EQ(m->voltage_volts.value(), 3.3);
  EXPECT_EQ(m->thresholds[kTemp].value(), (proto::AlarmThresholds{75.0, -5.0, 70.0, 0.0}));
  EXPECT_DOUBLE_EQ((m->thresholds[kRx].value())[0], 0.0035);
  EXPECT_DOUBLE_EQ((m->thresholds[kRx].value())[1], 5e-6);
  EXPECT_DOUBLE_EQ((m->thresholds[kBias].value())[2], 0.035);
  EXPECT_DOUBLE_EQ((m->thresholds[kTx].value())[3], 10e-6);
  EXPECT_EQ(m->flags[kTemp].value(), (proto::AlarmFlags{true, false, false, false}));
  EXPECT_EQ(m->flags[kVcc].value(), (proto::AlarmFlags{false, false, false, true}));
  ASSERT_EQ(m->lanes.size(), 4u);
  const double rx[] = {0.001, 0.0008, 0.0, 0.0001};
  const double bias[] = {0.014, 0.012, 0.008, 0.004};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& l = m->lanes[i];
    EXPECT_EQ(l.lane, i + 1);
    EXPECT_DOUBLE_EQ(l.rx_power_watts.value(), rx[i]) << i;
    EXPECT_DOUBLE_EQ(l.bias_amperes.value(), bias[i]) << i;
    EXPECT_DOUBLE_EQ(l.tx_power_watts.value(), 0.0009) << i;
    EXPECT_EQ(l.rx_los, i == 0) << i;
    EXPECT_EQ(l.tx_los, i == 1) << i;
    EXPECT_EQ(l.tx_fault, i == 3) << i;
    EXPECT_EQ(l.tx_disabled, i == 2) << i;
  }
  EXPECT_EQ(m->lanes[0].flags[kRx].value(), (proto::AlarmFlags{false, true, false, false}));
  EXPECT_EQ(m->lanes[1].flags[kRx].value(), (proto::AlarmFlags{}));
  EXPECT_EQ(m->lanes[3].flags[kRx].value(), (proto::AlarmFlags{false, false, true, false}));
  EXPECT_EQ(m->lanes[3].flags[kTx].value(), (proto::AlarmFlags{false, false, false, true}));
  EXPECT_EQ(m->lanes[2].flags[kBias].value(), (proto::AlarmFlags{}));
}

TEST(Sff8636, NoTxPowerMonitorLeavesItOut) {
  auto pages = qsfp_pages();
  pages[upper_page(0x00)] = qsfp_page00().u8(220, 0x08).bytes();
  const auto m = decode_module("swp1", pages);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_FALSE(m->lanes[0].tx_power_watts);
  EXPECT_FALSE(m->lanes[0].flags[kTx]);
  EXPECT_FALSE(m->thresholds[kTx]);
  EXPECT_TRUE(m->lanes[0].rx_power_watts);
}

TEST(Sff8636, CopperAndFlatMemoryAreNoDiagnostics) {
  auto pages = qsfp_pages();
  pages[upper_page(0x00)] = qsfp_page00().u8(147, 0xA0).bytes();  // copper cable, unequalized
  auto m = decode_module("swp1", pages);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(m->reason, "copper cable (page 00h byte 147: transmitter technology 0x0A)");
  EXPECT_EQ(m->part_number, "QSFP28-100G-SR4");

  const EepromPages flat{{kLowerPage, qsfp_lower().u8(2, 0x04).bytes()},
                         {upper_page(0x00), qsfp_page00().bytes()}};
  EXPECT_EQ(pages_to_read(flat), std::vector<PageAddress>{});  // no page 03h for flat memory
  m = decode_module("swp1", flat);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(m->reason, "flat memory (lower page byte 2 bit 2)");
}

TEST(Sff8636, WrongIdentifierAndShortPageAreErrors) {
  auto pages = qsfp_pages();
  pages[upper_page(0x00)] = qsfp_page00().u8(128, 0x0D).bytes();
  auto m = decode_module("swp1", pages);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "page 00h: byte 128: identifier 0x0D differs from the lower page's 0x11");

  pages = qsfp_pages();
  pages[upper_page(0x03)].resize(100);
  m = decode_module("swp1", pages);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "page 03h: 100 bytes, expected 128");

  pages = qsfp_pages();
  pages[kLowerPage] = qsfp_lower().u8(0, 0x00).bytes();
  m = decode_module("swp1", pages);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(),
            "lower page: byte 0: identifier 0x00 is not an SFF-8472, SFF-8636 or CMIS module");
  EXPECT_FALSE(decode_module("swp1", {}));
  EXPECT_FALSE(decode_module("swp1", {{kLowerPage, Bytes(3, 0x11)}}));
}

// ---- CMIS 5.0: a QSFP-DD with two lane banks ----
PageImage cmis_lower() {
  PageImage p;
  p.u8(0, 0x18)         // QSFP-DD
      .u8(1, 0x50)      // CMIS 5.0
      .u8(9, 0x11)      // temperature high alarm (bit 0), Vcc high alarm (bit 4)
      .u16(14, 0x1A80)  // 26.5 °C
      .u16(16, 33000)   // 3.3 V
      .u8(85, 0x02);    // single-mode fibre
  return p;
}

PageImage cmis_page00() {
  PageImage p(true);
  p.u8(128, 0x18)
      .text(129, 16, "CMIS VENDOR")
      .text(148, 16, "QDD-400G-DR4")
      .text(164, 2, "01")
      .text(166, 16, "CSN42");
  return p;
}

PageImage cmis_page01(std::uint8_t banks_code = 0x01) {
  PageImage p(true);
  p.u8(142, banks_code)  // 1: banks 0 and 1
      .u8(160, 0x03)     // temperature and Vcc monitors
      .u8(161, 0x0F);    // bias, Tx power, Rx power monitors; bias multiplier code 1 (x2)
  return p;
}

PageImage cmis_page02() {
  PageImage p(true);
  p.levels(128, 0x4B00, 0xFB00, 0x4600, 0x0000)  // 75, -5, 70, 0 °C
      .levels(136, 36000, 30000, 35000, 31000)   // 3.6, 3.0, 3.5, 3.1 V
      .levels(176, 30000, 500, 25000, 1000)      // Tx: 3 mW, 50 µW, 2.5 mW, 100 µW
      .levels(184, 10000, 0, 9000, 0)            // bias: 10000 x 2 µA x 2 = 40 mA, 0, 36 mA, 0
      .levels(192, 30000, 500, 25000, 1000);     // Rx: as Tx
  return p;
}

PageImage cmis_page11(std::uint16_t tx_base, std::uint16_t bias, std::uint16_t rx) {
  PageImage p(true);
  for (std::size_t i = 0; i < 8; ++i)
    p.u16(154 + 2 * i, static_cast<std::uint16_t>(tx_base + 100 * i))
        .u16(170 + 2 * i, bias)
        .u16(186 + 2 * i, rx);
  return p;
}

EepromPages cmis_pages() {
  EepromPages pages{{kLowerPage, cmis_lower().bytes()},
                    {upper_page(0x00), cmis_page00().bytes()},
                    {upper_page(0x01), cmis_page01().bytes()},
                    {upper_page(0x02), cmis_page02().bytes()},
                    {upper_page(0x10, 0), PageImage(true).u8(130, 0x80).bytes()},  // lane 8 Tx disabled
                    {upper_page(0x10, 1), PageImage(true).bytes()}};
  // Bank 0: Tx 5000 + 100 i (0.5 mW + 10 µW per lane), bias 3000 (x 2 µA x 2 = 12 mA), Rx 4000 (0.4 mW);
  // Tx LOS lane 2, Tx power high alarm lane 1, Rx LOS lane 3, Rx power low warning lane 8.
  pages[upper_page(0x11, 0)] =
      cmis_page11(5000, 3000, 4000).u8(136, 0x02).u8(139, 0x01).u8(147, 0x04).u8(152, 0x80).bytes();
  // Bank 1 (lanes 9-16): Tx 6000 + 100 i, bias 2500 (10 mA), Rx 0; Rx power high alarm lane 9; Rx LOS all.
  pages[upper_page(0x11, 1)] = cmis_page11(6000, 2500, 0).u8(149, 0x01).u8(147, 0xFF).u8(135, 0x10).bytes();
  // Bank 2 is not advertised (page 01h byte 142 says banks 0-1): its page is never read nor decoded.
  pages[upper_page(0x11, 2)] = cmis_page11(9999, 9999, 9999).bytes();
  return pages;
}

TEST(Cmis, AllAdvertisedBanksAndNothingElse) {
  const auto m = decode_module("swp2", cmis_pages());
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::ok);
  EXPECT_EQ(m->standard, proto::ModuleStandard::cmis);
  EXPECT_EQ(m->revision, "5.0");
  EXPECT_EQ(m->vendor, "CMIS VENDOR");
  EXPECT_EQ(m->part_number, "QDD-400G-DR4");
  EXPECT_EQ(m->serial, "CSN42");
  EXPECT_EQ(m->banks, 2u);
  EXPECT_DOUBLE_EQ(m->temperature_celsius.value(), 26.5);
  EXPECT_DOUBLE_EQ(m->voltage_volts.value(), 3.3);
  EXPECT_EQ(m->flags[kTemp].value(), (proto::AlarmFlags{true, false, false, false}));
  EXPECT_EQ(m->flags[kVcc].value(), (proto::AlarmFlags{true, false, false, false}));
  EXPECT_EQ(m->thresholds[kTemp].value(), (proto::AlarmThresholds{75.0, -5.0, 70.0, 0.0}));
  EXPECT_DOUBLE_EQ((m->thresholds[kBias].value())[0], 0.040);
  EXPECT_DOUBLE_EQ((m->thresholds[kBias].value())[2], 0.036);
  EXPECT_DOUBLE_EQ((m->thresholds[kTx].value())[1], 50e-6);
  EXPECT_DOUBLE_EQ((m->thresholds[kRx].value())[3], 100e-6);
  ASSERT_EQ(m->lanes.size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    const auto& l = m->lanes[i];
    const std::size_t in_bank = i % 8;
    EXPECT_EQ(l.lane, i + 1);
    if (i < 8) {
      EXPECT_DOUBLE_EQ(l.tx_power_watts.value(), (5000 + 100.0 * in_bank) * 0.1e-6) << i;
      EXPECT_DOUBLE_EQ(l.bias_amperes.value(), 0.012) << i;
      EXPECT_DOUBLE_EQ(l.rx_power_watts.value(), 0.0004) << i;
      EXPECT_EQ(l.tx_los, i == 1) << i;
      EXPECT_EQ(l.rx_los, i == 2) << i;
      EXPECT_EQ(l.tx_disabled, i == 7) << i;
      EXPECT_EQ(l.tx_fault, false) << i;
    } else {
      EXPECT_DOUBLE_EQ(l.tx_power_watts.value(), (6000 + 100.0 * in_bank) * 0.1e-6) << i;
      EXPECT_DOUBLE_EQ(l.bias_amperes.value(), 0.010) << i;
      EXPECT_DOUBLE_EQ(l.rx_power_watts.value(), 0.0) << i;
      EXPECT_EQ(l.rx_los, true) << i;
      EXPECT_EQ(l.tx_fault, i == 12) << i;  // byte 135 bit 4 of bank 1: lane 13
    }
  }
  EXPECT_EQ(m->lanes[0].flags[kTx].value(), (proto::AlarmFlags{true, false, false, false}));
  EXPECT_EQ(m->lanes[1].flags[kTx].value(), (proto::AlarmFlags{}));
  EXPECT_EQ(m->lanes[7].flags[kRx].value(), (proto::AlarmFlags{false, false, false, true}));
  EXPECT_EQ(m->lanes[8].flags[kRx].value(), (proto::AlarmFlags{true, false, false, false}));
  EXPECT_EQ(m->lanes[9].flags[kRx].value(), (proto::AlarmFlags{}));
}

TEST(Cmis, PlanFollowsWhatThePagesAdvertise) {
  EXPECT_EQ(pages_to_read({}), std::vector<PageAddress>{kLowerPage});
  EepromPages pages{{kLowerPage, cmis_lower().bytes()}};
  EXPECT_EQ(pages_to_read(pages),
            (std::vector<PageAddress>{upper_page(0x00), upper_page(0x01), upper_page(0x02)}));
  pages[upper_page(0x00)] = cmis_page00().bytes();
  pages[upper_page(0x01)] = cmis_page01().bytes();
  pages[upper_page(0x02)] = cmis_page02().bytes();
  EXPECT_EQ(pages_to_read(pages), (std::vector<PageAddress>{upper_page(0x10, 0), upper_page(0x11, 0),
                                                            upper_page(0x10, 1), upper_page(0x11, 1)}));
  pages[upper_page(0x01)] = cmis_page01(0x02).bytes();  // banks 0-3
  EXPECT_EQ(pages_to_read(pages).size(), 8u);
  pages[upper_page(0x01)] = cmis_page01(0x00).bytes();  // bank 0 only
  EXPECT_EQ(pages_to_read(pages).size(), 2u);
  // The whole CMIS dump: nothing more to read, bank 2's page is not asked for.
  EXPECT_TRUE(pages_to_read(cmis_pages()).empty());
  // SFF-8472 with DDM: A2h; SFF-8636: page 00h and 03h.
  EXPECT_EQ(pages_to_read({{kLowerPage, sfp_a0().bytes()}}), std::vector<PageAddress>{kA2});
  EXPECT_EQ(pages_to_read({{kLowerPage, qsfp_lower().bytes()}}),
            (std::vector<PageAddress>{upper_page(0x00), upper_page(0x03)}));
  EXPECT_EQ(page_name(upper_page(0x11, 3)), "page 11h bank 3");
  EXPECT_EQ(page_name(kA2), "A2h lower");
}

TEST(Cmis, OneBankAndTheBiasMultiplier) {
  auto pages = cmis_pages();
  pages[upper_page(0x01)] = cmis_page01(0x00).u8(161, 0x17).bytes();  // bank 0 only, multiplier code 2 (x4)
  const auto m = decode_module("swp2", pages);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->banks, 1u);
  ASSERT_EQ(m->lanes.size(), 8u);
  EXPECT_DOUBLE_EQ(m->lanes[0].bias_amperes.value(), 0.024);  // 3000 x 2 µA x 4
}

TEST(Cmis, FlatCopperNoMonitorsAndMissingBank) {
  EepromPages flat{{kLowerPage, cmis_lower().u8(2, 0x80).bytes()}, {upper_page(0x00), cmis_page00().bytes()}};
  EXPECT_TRUE(pages_to_read(flat).empty());
  auto m = decode_module("swp2", flat);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(m->reason, "flat memory (lower page byte 2 bit 7)");

  auto pages = cmis_pages();
  pages[kLowerPage] = cmis_lower().u8(85, 0x03).bytes();  // passive copper
  m = decode_module("swp2", pages);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(m->reason, "copper cable (lower page byte 85, page 00h byte 212)");

  pages = cmis_pages();
  pages[upper_page(0x01)] = cmis_page01().u8(160, 0).u8(161, 0).bytes();
  m = decode_module("swp2", pages);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->reason, "no monitors advertised (page 01h bytes 160-161)");

  pages = cmis_pages();
  pages.erase(upper_page(0x11, 1));
  m = decode_module("swp2", pages);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "page 11h bank 1: missing");

  pages = cmis_pages();
  pages[upper_page(0x01)] = cmis_page01(0x03).bytes();
  m = decode_module("swp2", pages);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "page 01h: byte 142: bank count code 3 is reserved");
}

// ---- the wire section ----

proto::OpticsReport sample_report() {
  proto::OpticsReport r;
  r.host = "node-1";
  r.ts_ms = 1700000000123;
  r.modules.push_back(*decode_module("p0", sfp_pages()));
  r.modules.push_back(*decode_module("p1", qsfp_pages()));
  r.modules.push_back(*decode_module("p2", cmis_pages()));
  proto::ModuleDiagnostics none;
  none.netdev = "p3";
  none.status = ModuleStatus::no_module;
  none.reason = "p3: ETHTOOL_GMODULEINFO: Operation not supported";
  r.modules.push_back(none);
  return r;
}

TEST(OpticsProto, RoundTripsInBothEncodings) {
  const auto report = sample_report();
  for (const auto encoding : {proto::Encoding::json, proto::Encoding::cbor}) {
    const auto bytes = proto::encode(report, encoding);
    const auto back = proto::decode<proto::OpticsReport>(bytes, encoding);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, report);
    for (const auto& m : report.modules) {
      const auto one = proto::decode<proto::ModuleDiagnostics>(proto::encode(m, encoding), encoding);
      ASSERT_TRUE(one) << one.error().message();
      EXPECT_EQ(*one, m);
    }
  }
  const auto doc = proto::to_json(report);
  EXPECT_EQ(doc["modules"][0]["temperature_celsius"], 26.5);
  EXPECT_EQ(doc["modules"][0]["lanes"][0]["flags"]["rx_power"]["low_alarm"], true);
  EXPECT_EQ(doc["modules"][1]["thresholds"]["temperature"]["high_alarm"], 75.0);
  EXPECT_EQ(doc["modules"][2]["lanes"].size(), 16u);
  EXPECT_EQ(doc["modules"][3]["status"], "no_module");
  EXPECT_FALSE(doc["modules"][3].contains("lanes"));
  EXPECT_EQ(proto::media_type(proto::Kind<proto::OpticsReport>::kName, proto::Encoding::cbor),
            "application/vnd.hsns.optics-report.v1+cbor");
}

TEST(OpticsProto, StrictReaderNamesEveryBadField) {
  auto doc = proto::to_json(sample_report());
  doc["modules"][0]["colour"] = "blue";
  doc["modules"][0]["lanes"][0]["lane"] = 0;
  doc["modules"][1]["lanes"][1]["lane"] = 1;  // not above lane 1 before it
  doc["modules"][1]["lanes"][0]["flags"]["temperature"] = {
      {"high_alarm", true}, {"low_alarm", false}, {"high_warning", false}, {"low_warning", false}};
  doc["modules"][2]["status"] = "fine";
  doc["modules"][2]["thresholds"]["bias"].erase("low_warning");
  doc["modules"][0]["reason"] = "ok modules have no reason";
  const auto r = proto::read_optics_report(doc);
  ASSERT_FALSE(r);
  std::vector<std::string> fields;
  for (const auto& f : r.error().fields) fields.push_back(f.field);
  const std::vector<std::string> expected{"modules[0].reason",
                                          "modules[0].lanes[0].lane",
                                          "modules[0].colour",
                                          "modules[1].lanes[0].flags.temperature",
                                          "modules[1].lanes[1].lane",
                                          "modules[2].status",
                                          "modules[2].thresholds.bias.low_warning"};
  for (const auto& e : expected)
    EXPECT_NE(std::find(fields.begin(), fields.end(), e), fields.end()) << e << " in " << r.error().message();
  // Non-finite numbers cannot even be written as JSON; CBOR can carry them and the reader refuses them.
  auto cbor_doc = proto::to_json(sample_report());
  cbor_doc["modules"][0]["temperature_celsius"] = std::numeric_limits<double>::infinity();
  const auto bytes = proto::encode_document(cbor_doc, proto::Encoding::cbor);
  const auto refused = proto::decode<proto::OpticsReport>(bytes, proto::Encoding::cbor);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().field(), "modules[0].temperature_celsius");
}

// ---- the genetlink reply parser ----

Bytes genl_message(std::uint16_t type, std::uint32_t seq, const Bytes& attrs) {
  Bytes b(NLMSG_HDRLEN + GENL_HDRLEN);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(b.size() + attrs.size());
  h.nlmsg_type = type;
  h.nlmsg_seq = seq;
  std::memcpy(b.data(), &h, sizeof h);
  b.insert(b.end(), attrs.begin(), attrs.end());
  return b;
}

Bytes attribute(std::uint16_t type, const Bytes& payload) {
  Bytes b(NLA_ALIGN(NLA_HDRLEN + payload.size()));
  nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + payload.size()), type};
  std::memcpy(b.data(), &a, sizeof a);
  std::copy(payload.begin(), payload.end(), b.begin() + NLA_HDRLEN);
  return b;
}

TEST(GenlReply, AttributesErrorsAndTruncation) {
  auto msg = genl_message(30, 7, attribute(1, {9, 9}));
  const auto data = attribute(6, {1, 2, 3});
  msg.insert(msg.end(), data.begin(), data.end());
  reinterpret_cast<nlmsghdr*>(msg.data())->nlmsg_len = static_cast<std::uint32_t>(msg.size());
  auto r = genl_reply_attribute(msg, 7, 6);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Bytes{1, 2, 3}));
  EXPECT_EQ(genl_reply_attribute(msg, 8, 6).error(), ENOMSG);  // answers another request
  EXPECT_EQ(genl_reply_attribute(msg, 7, 5).error(), EPROTO);  // our answer, without the attribute

  Bytes cut(msg.begin(), msg.end() - 2);  // the attribute runs past the message
  reinterpret_cast<nlmsghdr*>(cut.data())->nlmsg_len = static_cast<std::uint32_t>(cut.size());
  EXPECT_EQ(genl_reply_attribute(cut, 7, 6).error(), EPROTO);
  Bytes longer = msg;
  reinterpret_cast<nlmsghdr*>(longer.data())->nlmsg_len = static_cast<std::uint32_t>(msg.size() + 4);
  EXPECT_EQ(genl_reply_attribute(longer, 7, 6).error(), EPROTO);

  Bytes err(NLMSG_HDRLEN + sizeof(nlmsgerr));
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(err.size());
  h.nlmsg_type = NLMSG_ERROR;
  h.nlmsg_seq = 3;
  std::memcpy(err.data(), &h, sizeof h);
  const int code = -EOPNOTSUPP;
  std::memcpy(err.data() + NLMSG_HDRLEN, &code, sizeof code);
  EXPECT_EQ(genl_reply_attribute(err, 3, 6).error(), EOPNOTSUPP);
  EXPECT_EQ(genl_reply_attribute(Bytes{1, 2, 3}, 3, 6).error(), ENOMSG);
}

// ---- the real kernel path ----

TEST(ModuleReader, VethAndLoHaveNoModuleUnknownNetdevIsNamed) {
  ASSERT_EQ(geteuid(), 0u) << "the reader test needs root to make a network namespace";
  hsns::testing::run_in_fresh_netns([] {
    const auto add = hsns::testing::sh("ip link add hsnsopt0 type veth peer name hsnsopt1");
    ASSERT_TRUE(add.ok()) << add;
    for (const char* dev : {"hsnsopt0", "hsnsopt1", "lo"}) {
      const auto r = read_module_pages(dev);
      ASSERT_FALSE(r) << dev;
      EXPECT_EQ(r.error().reason, ReadFailure::no_module) << r.error().message;
      EXPECT_NE(r.error().message.find(dev), std::string::npos) << r.error().message;
    }
    const auto missing = read_module_pages("nosuch0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().reason, ReadFailure::no_such_netdev) << missing.error().message;
    const auto bad = read_module_pages("abcdefghijklmnopq");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "abcdefghijklmnopq: invalid netdev name");
    EXPECT_EQ(read_module_pages("").error().reason, ReadFailure::no_such_netdev);
  });
}

// ---- the component ----

using daemon::DaemonConfig;
using daemon::EepromSource;
using daemon::OpticsComponent;

std::string scrape(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

void expect_promtool_clean(const std::string& text) {
  const hsns::testing::TempDir dir;
  const auto path = dir.path() / "metrics.txt";
  std::ofstream(path) << text;
  const auto lint = hsns::testing::sh("promtool check metrics < " + path.string());
  EXPECT_EQ(lint.status, 0) << lint;
  EXPECT_EQ(lint.output, "") << "promtool reported lint problems";
}

DaemonConfig ports(std::map<int, std::string> npus) {
  DaemonConfig c;
  c.npus = std::move(npus);
  c.interval = std::chrono::milliseconds(1000);
  return c;
}

// Canned modules by netdev: p0 SFP, p1 QSFP28, p2 QSFP-DD, p3 a corrupt page 03h, p4 a copper QSFP,
// p5 an I/O error; anything else has no module.
tl::expected<EepromPages, ReadError> canned(const std::string& netdev) {
  if (netdev == "p0") return sfp_pages();
  if (netdev == "p1") return qsfp_pages();
  if (netdev == "p2") return cmis_pages();
  if (netdev == "p3") {
    auto pages = qsfp_pages();
    pages[upper_page(0x03)].resize(12);
    return pages;
  }
  if (netdev == "p4") {
    auto pages = qsfp_pages();
    pages[upper_page(0x00)] = qsfp_page00().u8(147, 0xB0).bytes();
    return pages;
  }
  if (netdev == "p5")
    return tl::unexpected(ReadError{ReadFailure::io_error, "p5: lower page: Input/output error"});
  return tl::unexpected(ReadError{ReadFailure::no_module, netdev + ": no module"});
}

// A sample's value (NaN when absent, which no comparison accepts).
double value(const hsns::testing::Exposition& e, const std::string& selector) {
  return e.find(selector).value_or(std::numeric_limits<double>::quiet_NaN());
}

TEST(OpticsComponent, CannedModulesOnMetricsAndInTheReport) {
  prometheus::Registry registry;
  OpticsComponent c(ports({{0, "p0"}, {1, "p1"}, {2, "p2"}, {3, "p3"}, {4, "p4"}, {5, "p5"}, {6, "p6"}}),
                    registry, canned);
  ASSERT_TRUE(c.start());
  EXPECT_TRUE(c.ready());
  EXPECT_EQ(c.name(), "optics");
  const auto t0 = OpticsComponent::Clock::now();
  EXPECT_EQ(c.tick(t0), t0 + std::chrono::milliseconds(1000));
  EXPECT_EQ(c.tick(t0 + std::chrono::milliseconds(10)), t0 + std::chrono::milliseconds(1000));  // not due

  const auto& modules = c.modules();
  ASSERT_EQ(modules.size(), 7u);
  EXPECT_EQ(modules.at("p0").status, ModuleStatus::ok);
  EXPECT_EQ(modules.at("p2").lanes.size(), 16u);
  EXPECT_EQ(modules.at("p3").status, ModuleStatus::error);
  EXPECT_EQ(modules.at("p3").reason, "corrupt EEPROM: page 03h: 12 bytes, expected 128");
  EXPECT_EQ(modules.at("p4").status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(modules.at("p5").status, ModuleStatus::error);
  EXPECT_EQ(modules.at("p6").status, ModuleStatus::no_module);
  EXPECT_EQ(modules.at("p6").reason, "p6: no module");

  const auto text = scrape(registry);
  const auto e = hsns::testing::Exposition::parse(text);
  EXPECT_EQ(e.find(R"(hsns_module_temperature_celsius{netdev="p0"})"), 26.5);
  EXPECT_DOUBLE_EQ(value(e, R"(hsns_module_voltage_volts{netdev="p1"})"), 3.3);
  EXPECT_DOUBLE_EQ(value(e, R"(hsns_module_tx_power_watts{netdev="p0",lane="1"})"), 0.0005);
  EXPECT_DOUBLE_EQ(value(e, R"(hsns_module_rx_power_watts{netdev="p1",lane="2"})"), 0.0008);
  EXPECT_DOUBLE_EQ(value(e, R"(hsns_module_bias_current_amperes{netdev="p2",lane="16"})"), 0.010);
  EXPECT_FALSE(e.find(R"(hsns_module_bias_current_amperes{netdev="p2",lane="17"})"));
  EXPECT_EQ(e.find(R"(hsns_module_threshold_temperature_celsius{netdev="p1",level="high_alarm"})"), 75.0);
  EXPECT_DOUBLE_EQ(
      value(e, R"(hsns_module_threshold_bias_current_amperes{netdev="p2",level="high_warning"})"), 0.036);
  EXPECT_EQ(e.find(R"(hsns_module_alarm{netdev="p0",lane="",kind="temperature",level="high_alarm"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_alarm{netdev="p0",lane="1",kind="rx_power",level="low_alarm"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_alarm{netdev="p0",lane="1",kind="rx_power",level="high_alarm"})"), 0.0);
  EXPECT_EQ(e.find(R"(hsns_module_alarm{netdev="p2",lane="9",kind="rx_power",level="high_alarm"})"), 1.0);
  EXPECT_EQ(e.find("hsns_module_info", {{"netdev", "p1"},
                                        {"standard", "sff-8636"},
                                        {"vendor", "QSFP VENDOR"},
                                        {"part_number", "QSFP28-100G-SR4"},
                                        {"serial", "QSN0001"}}),
            1.0);
  EXPECT_EQ(e.find(R"(hsns_module_status{netdev="p4",status="no_diagnostics"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_status{netdev="p6",status="no_module"})"), 1.0);
  EXPECT_EQ(e.find("hsns_module_reads_total"), 7.0);
  EXPECT_EQ(e.find("hsns_module_no_diagnostics_total"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_read_errors_total{reason="corrupt"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_read_errors_total{reason="io_error"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_read_errors_total{reason="no_module"})"), 1.0);
  EXPECT_EQ(e.find(R"(hsns_module_read_errors_total{reason="netlink"})"), 0.0);
  expect_promtool_clean(text);

  // The report section: every port, in netdev order, and it survives the wire.
  const auto report = c.report("node-1", 42);
  ASSERT_EQ(report.modules.size(), 7u);
  EXPECT_EQ(report.modules[0].netdev, "p0");
  const auto back =
      proto::decode<proto::OpticsReport>(proto::encode(report, proto::Encoding::cbor), proto::Encoding::cbor);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, report);

  // Reload without p0 and p2: their series go; trigger() reads at the next tick.
  c.reload(ports({{1, "p1"}, {3, "p3"}}));
  c.trigger();
  c.tick(t0 + std::chrono::milliseconds(20));
  EXPECT_EQ(c.modules().size(), 2u);
  const auto after = hsns::testing::Exposition::parse(scrape(registry));
  EXPECT_FALSE(after.find(R"(hsns_module_temperature_celsius{netdev="p0"})"));
  EXPECT_TRUE(after.all("hsns_module_tx_power_watts").size() == 4u);
  EXPECT_EQ(after.find("hsns_module_reads_total"), 9.0);
  EXPECT_EQ(after.find(R"(hsns_module_read_errors_total{reason="corrupt"})"), 2.0);
}

// The real reader inside the component: a veth has no module, counted as no_module, on metrics that
// promtool accepts.
TEST(OpticsComponent, RealReaderOnVethReportsNoModule) {
  ASSERT_EQ(geteuid(), 0u) << "the component test needs root to make a network namespace";
  hsns::testing::run_in_fresh_netns([] {
    const auto add = hsns::testing::sh("ip link add hsnsopt2 type veth peer name hsnsopt3");
    ASSERT_TRUE(add.ok()) << add;
    prometheus::Registry registry;
    OpticsComponent c(ports({{0, "hsnsopt2"}, {1, "hsnsopt3"}, {2, "gone0"}}), registry);
    c.read_all();
    EXPECT_EQ(c.modules().at("hsnsopt2").status, ModuleStatus::no_module);
    EXPECT_EQ(c.modules().at("hsnsopt3").status, ModuleStatus::no_module);
    EXPECT_EQ(c.modules().at("gone0").status, ModuleStatus::error);
    const auto text = scrape(registry);
    EXPECT_EQ(hsns::testing::metric_value(text, R"(hsns_module_read_errors_total{reason="no_module"})"), 2.0);
    EXPECT_EQ(hsns::testing::metric_value(text, R"(hsns_module_read_errors_total{reason="no_such_netdev"})"),
              1.0);
    EXPECT_EQ(
        hsns::testing::metric_value(text, R"(hsns_module_status{netdev="hsnsopt2",status="no_module"})"),
        1.0);
    expect_promtool_clean(text);
  });
}

}  // namespace
}  // namespace hsns::optics
