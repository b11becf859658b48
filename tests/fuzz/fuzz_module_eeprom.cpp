// libFuzzer target over the module EEPROM decoders (daemon/optics/eeprom.h): SFF-8472, SFF-8636, CMIS.
//
// Input layout: the first byte selects the decoder: bits 1-0 set the lower page's identifier (0: 0x03 SFP,
// 1: 0x11 QSFP28, 2: 0x18 QSFP-DD, 3: as the input has it), bit 2 calls the standard's decoder directly
// instead of decode_module(), bit 3 sends a decoded module through the wire section (JSON and CBOR, the
// slow part, so the decoders alone run several times faster on the other inputs). The rest is a list of
// pages, each [key][length][bytes]: key (modulo 14) 0 lower page, 1 A2h lower, 2-5 pages 00h-03h, 6-13 pages
// 10h and 11h of banks 0-3; length 0 means 128 (a full page), anything else is a page of that length (short
// or long: the decoder must refuse it); the bytes are as many of the following as there are (a truncated
// input makes a short page). Invariants (a violation is __builtin_trap()): nothing throws; pages_to_read()
// never asks for a page it was given; a decoded module has status ok or no_diagnostics, every value finite,
// lanes numbered 1.. in increasing order, at most 1 (SFF-8472), 4 (SFF-8636) or 8 per bank read (CMIS, at
// most 4 banks), and (bit 3) it round-trips through the optics wire section in JSON and CBOR.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "eeprom.h"
#include "hsns/proto/optics.h"

namespace {

namespace optics = hsns::optics;
namespace proto = hsns::proto;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

optics::PageAddress address_of(std::uint8_t key) {
  key %= 14;
  if (key == 0) return optics::kLowerPage;
  if (key == 1) return optics::PageAddress{optics::kAddressA2, 0, 0, false};
  if (key < 6) return optics::upper_page(static_cast<std::uint8_t>(key - 2));
  const auto bank = static_cast<std::uint8_t>((key - 6) / 2);
  return optics::upper_page(static_cast<std::uint8_t>(0x10 + (key - 6) % 2), bank);
}

void check_finite(const std::optional<double>& v) {
  check(!v || std::isfinite(*v));
}

void check_module(const proto::ModuleDiagnostics& m, bool round_trip) {
  check(m.status == proto::ModuleStatus::ok || m.status == proto::ModuleStatus::no_diagnostics);
  check(m.standard.has_value());
  check_finite(m.temperature_celsius);
  check_finite(m.voltage_volts);
  for (const auto& t : m.thresholds)
    if (t)
      for (const double v : *t) check(std::isfinite(v));
  std::size_t max_lanes = 0;
  switch (*m.standard) {
    case proto::ModuleStandard::sff8472:
      max_lanes = 1;
      break;
    case proto::ModuleStandard::sff8636:
      max_lanes = 4;
      break;
    case proto::ModuleStandard::cmis:
      check(m.banks <= proto::kMaxModuleBanks);
      max_lanes = 8 * static_cast<std::size_t>(m.banks);
      break;
  }
  check(m.lanes.size() <= max_lanes);
  std::uint32_t previous = 0;
  for (const auto& l : m.lanes) {
    check(l.lane > previous && l.lane <= max_lanes);
    previous = l.lane;
    check_finite(l.bias_amperes);
    check_finite(l.tx_power_watts);
    check_finite(l.rx_power_watts);
  }
  if (!round_trip) return;
  for (const auto encoding : {proto::Encoding::json, proto::Encoding::cbor}) {
    const auto back = proto::decode<proto::ModuleDiagnostics>(proto::encode(m, encoding), encoding);
    check(back.has_value() && *back == m);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  optics::EepromPages pages;
  std::size_t at = 1;
  while (size - at >= 2) {
    const auto address = address_of(data[at]);
    const std::size_t length = data[at + 1] == 0 ? optics::kPageSize : data[at + 1];
    at += 2;
    const std::size_t take = std::min(length, size - at);
    pages[address] = std::vector<std::uint8_t>(data + at, data + at + take);
    at += take;
  }
  static constexpr std::uint8_t kIdentifiers[] = {0x03, 0x11, 0x18};
  auto lower = pages.find(optics::kLowerPage);
  if ((selector & 3) != 3 && lower != pages.end() && !lower->second.empty())
    lower->second[0] = kIdentifiers[selector & 3];

  for (const auto& a : optics::pages_to_read(pages)) check(!pages.contains(a));

  hsns::Result<proto::ModuleDiagnostics> m = tl::unexpected(hsns::Error::internal(""));
  if ((selector & 4) == 0) {
    m = optics::decode_module("fuzz0", pages);
  } else {
    switch (selector & 3) {
      case 0:
        m = optics::decode_sff8472(pages);
        break;
      case 1:
        m = optics::decode_sff8636(pages);
        break;
      default:
        m = optics::decode_cmis(pages);
        break;
    }
    if (m) m->netdev = "fuzz0";
  }
  if (m)
    check_module(*m, (selector & 8) != 0);
  else
    check(!m.error().message().empty());
  return 0;
}
