// Module EEPROM decoders: SFF-8472 (SFP/SFP+), SFF-8636 (QSFP+/QSFP28) and CMIS 4.0/5.x (QSFP-DD, OSFP,
// QSFP with CMIS), from 128-byte pages to hsns::proto::ModuleDiagnostics in base units (°C, V, W, A).
//
// Pages (what ethtool's ETHTOOL_MSG_MODULE_EEPROM_GET reads): a PageAddress names one 128-byte half of a
// 256-byte I2C address space: the lower half (bytes 0-127, always page 0) or the upper half (bytes 128-255)
// of page `page` in bank `bank`. Offsets in the comments of eeprom.cpp are the standards' byte addresses
// (128..255 for an upper page); pages hold them from index 0.
//   SFF-8472:  A0h (i2c 0x50) lower + upper; A2h (i2c 0x51) lower + upper when byte 92 bit 6 says DDM.
//   SFF-8636:  lower page; upper page 00h (identity); page 03h (thresholds) unless flat memory.
//   CMIS:      lower page; page 00h (identity); unless flat memory: 01h (advertising: banks, monitors),
//              02h (thresholds) and, for every bank the module advertises, 10h (Tx disable) and 11h
//              (lane monitors, latched lane flags), 8 lanes per bank.
//
// Contract:
// - Pure: no I/O, no globals, thread-safe. Every read is checked against the page it was given; a page of
//   any length other than 128 bytes is refused (an Error naming it), never read past.
// - pages_to_read(pages) is the reader's plan: the pages that decode_module() would use and that `pages`
//   does not hold yet, given what it holds (the identifier decides the standard, the first pages say
//   whether more exist). Empty when nothing more is needed. The reader calls it until it returns nothing.
// - decode_module(netdev, pages) dispatches on the identifier (lower page byte 0, SFF-8024): 0x03 SFP,
//   0x0C/0x0D/0x11 SFF-8636, 0x18/0x19/0x1E CMIS. It returns status ok with what the module reports, or
//   status no_diagnostics with the reason (flat memory, copper cable, no DDM, no monitors advertised) and
//   the identity. It returns an Error (kind invalid, the page or byte named) for an unknown identifier, a
//   page 00h whose identifier differs from the lower page's, a missing or short required page.
// - Values that would not be finite (an SFF-8472 external calibration with NaN or infinite coefficients)
//   are left out; lanes never exceed 1 (SFF-8472), 4 (SFF-8636) or 8 per bank read (CMIS, banks <= 4).
// - Strings (vendor, part number, serial) are the ASCII fields with trailing spaces and NULs removed and
//   every byte outside 0x20..0x7E replaced by '?', so they are always valid UTF-8.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/optics.h"

namespace hsns::optics {

inline constexpr std::size_t kPageSize = 128;
inline constexpr std::uint8_t kAddressA0 = 0x50;  // the module's EEPROM (and SFF-8636/CMIS pages)
inline constexpr std::uint8_t kAddressA2 = 0x51;  // SFF-8472 diagnostics

struct PageAddress {
  std::uint8_t i2c = kAddressA0;
  std::uint8_t bank = 0;
  std::uint8_t page = 0;
  bool upper = false;  // bytes 128-255 (else 0-127, page and bank 0)
  auto operator<=>(const PageAddress&) const = default;
  bool operator==(const PageAddress&) const = default;
};

inline constexpr PageAddress kLowerPage{};
inline constexpr PageAddress upper_page(std::uint8_t page, std::uint8_t bank = 0) {
  return PageAddress{kAddressA0, bank, page, true};
}

// "A0h lower", "page 11h bank 1", "A2h upper": how errors and logs name a page.
std::string page_name(const PageAddress& address);

using EepromPages = std::map<PageAddress, std::vector<std::uint8_t>>;

std::vector<PageAddress> pages_to_read(const EepromPages& pages);

Result<proto::ModuleDiagnostics> decode_module(const std::string& netdev, const EepromPages& pages);

// The per-standard decoders decode_module() dispatches to (the fuzz target calls them directly too).
Result<proto::ModuleDiagnostics> decode_sff8472(const EepromPages& pages);
Result<proto::ModuleDiagnostics> decode_sff8636(const EepromPages& pages);
Result<proto::ModuleDiagnostics> decode_cmis(const EepromPages& pages);

}  // namespace hsns::optics
