// Hand-built LLDP frames for the LLDP tests: TLVs written byte by byte, so each test says exactly what
// is on the wire.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace hsns::testing::lldp_frames {

using Bytes = std::vector<std::uint8_t>;

inline Bytes tlv(std::uint8_t type, const Bytes& value) {
  Bytes out{static_cast<std::uint8_t>((type << 1) | ((value.size() >> 8) & 1)),
            static_cast<std::uint8_t>(value.size() & 0xff)};
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

inline Bytes text(std::uint8_t first, std::string_view s) {
  Bytes out{first};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

inline Bytes text(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline Bytes chassis_mac() {
  return tlv(1, {4, 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30});
}
inline Bytes port_ifname(std::string_view name) {
  return tlv(2, text(5, name));
}
inline Bytes ttl(std::uint16_t seconds) {
  return tlv(3, {static_cast<std::uint8_t>(seconds >> 8), static_cast<std::uint8_t>(seconds)});
}
inline Bytes end() {
  return tlv(0, {});
}
// Management address 198.18.7.1, ifIndex numbering, interface 7, no OID.
inline Bytes management_ipv4() {
  return tlv(8, {5, 1, 198, 18, 7, 1, 2, 0, 0, 0, 7, 0});
}

// The smallest valid LLDPDU with the mandatory TLVs and an End TLV.
inline Bytes minimal(std::uint16_t ttl_s = 120) {
  return cat({chassis_mac(), port_ifname("swp1"), ttl(ttl_s), end()});
}

// An Ethernet frame to 01:80:c2:00:00:0e from `source` carrying `lldpdu`, padded to 60 bytes.
inline Bytes frame(const Bytes& lldpdu, const Bytes& source = {0x02, 0x00, 0x5e, 0x10, 0x20, 0x30}) {
  Bytes out{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
  out.insert(out.end(), source.begin(), source.end());
  out.push_back(0x88);
  out.push_back(0xcc);
  out.insert(out.end(), lldpdu.begin(), lldpdu.end());
  if (out.size() < 60) out.resize(60, 0);
  return out;
}

}  // namespace hsns::testing::lldp_frames
