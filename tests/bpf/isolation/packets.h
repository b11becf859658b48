// Raw Ethernet frames for the isolation fixtures and the benchmark: Ethernet, up to N VLAN tags, an IPv4
// or IPv6 header with a UDP header and payload. Checksums are not filled in (the program ignores them).
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hsns::test {

using Frame = std::vector<std::uint8_t>;

inline void put16(Frame& f, std::uint16_t v) {
  f.push_back(static_cast<std::uint8_t>(v >> 8));
  f.push_back(static_cast<std::uint8_t>(v));
}

// Ethernet header; each entry of vlan_tpids adds one tag (TPID, TCI 100) before the final ethertype.
inline Frame ethernet(std::uint16_t ethertype, const std::vector<std::uint16_t>& vlan_tpids = {}) {
  Frame f = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
  for (std::uint16_t tpid : vlan_tpids) {
    put16(f, tpid);
    put16(f, 100);
  }
  put16(f, ethertype);
  return f;
}

inline Frame ipv4_udp(const std::string& dst, const std::vector<std::uint16_t>& vlan_tpids = {},
                      std::size_t payload = 18) {
  Frame f = ethernet(0x0800, vlan_tpids);
  std::uint8_t src[4];
  std::uint8_t daddr[4];
  inet_pton(AF_INET, "198.18.1.1", src);
  inet_pton(AF_INET, dst.c_str(), daddr);
  const auto total = static_cast<std::uint16_t>(20 + 8 + payload);
  f.insert(f.end(), {0x45, 0x00});
  put16(f, total);
  f.insert(f.end(), {0, 0, 0x40, 0, 64, 17, 0, 0});
  f.insert(f.end(), src, src + 4);
  f.insert(f.end(), daddr, daddr + 4);
  put16(f, 49152);
  put16(f, 4791);
  put16(f, static_cast<std::uint16_t>(8 + payload));
  put16(f, 0);
  f.insert(f.end(), payload, 0xab);
  return f;
}

inline Frame ipv6_udp(const std::string& dst, const std::vector<std::uint16_t>& vlan_tpids = {},
                      std::size_t payload = 18) {
  Frame f = ethernet(0x86DD, vlan_tpids);
  std::uint8_t src[16];
  std::uint8_t daddr[16];
  inet_pton(AF_INET6, "2001:db8:1::1", src);
  inet_pton(AF_INET6, dst.c_str(), daddr);
  f.insert(f.end(), {0x60, 0, 0, 0});
  put16(f, static_cast<std::uint16_t>(8 + payload));
  f.insert(f.end(), {17, 64});
  f.insert(f.end(), src, src + 16);
  f.insert(f.end(), daddr, daddr + 16);
  put16(f, 49152);
  put16(f, 4791);
  put16(f, static_cast<std::uint16_t>(8 + payload));
  put16(f, 0);
  f.insert(f.end(), payload, 0xab);
  return f;
}

// An ARP request (who-has 198.18.1.2).
inline Frame arp() {
  Frame f = ethernet(0x0806);
  f.insert(f.end(), {0,   1,  0x08, 0, 6, 4, 0, 1, 0x02, 0x02, 0,   0,  0, 1,
                     198, 18, 1,    1, 0, 0, 0, 0, 0,    0,    198, 18, 1, 2});
  return f;
}

}  // namespace hsns::test
