// RoCEv2 packet crafting for the traffic generator, the fixture tests and the benchmark.
//
// Contract:
// - PacketSpec describes one RoCEv2 packet: addresses (IPv4 in the first 4 bytes of src/dst), UDP source
//   port, ECN bits, BTH opcode / destination QP / PSN, the AETH syndrome (used for opcode 0x11 only) and
//   the payload length after BTH (+AETH, +RETH / AtomicETH where the opcode has one). Every built packet
//   ends with a 4-byte ICRC (zero: nothing checks it on this path).
// - roce_udp_payload() returns the UDP payload (BTH ...), ip_packet() the IP packet, frame() a full
//   Ethernet frame with the chosen encapsulation. ip_length() is the IP packet length the probe accounts.
// - Pure functions, no I/O; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hsns::roce_gen {

using Bytes = std::vector<std::uint8_t>;
using Mac = std::array<std::uint8_t, 6>;

struct PacketSpec {
  int family = 4;
  std::array<std::uint8_t, 16> src{};
  std::array<std::uint8_t, 16> dst{};
  std::uint16_t sport = 0xC000;
  std::uint8_t ecn = 0;
  std::uint8_t opcode = 0x04;
  std::uint32_t dest_qp = 0;
  std::uint32_t psn = 0;
  std::uint8_t syndrome = 0;
  std::uint16_t payload = 0;
};

enum class Encap { none, vlan, qinq, erspan2, erspan3 };

struct FrameSpec {
  Encap encap = Encap::none;
  Mac src_mac{0x02, 0, 0, 0, 0, 1};
  Mac dst_mac{0x02, 0, 0, 0, 0, 2};
  std::uint16_t vlan = 100;
  std::uint16_t outer_vlan = 200;
  // ERSPAN outer IPv4 addresses (network order bytes).
  std::array<std::uint8_t, 4> outer_src{198, 18, 255, 1};
  std::array<std::uint8_t, 4> outer_dst{198, 18, 255, 2};
  std::uint16_t erspan_session = 7;
};

std::size_t extra_header_len(std::uint8_t opcode);
Bytes roce_udp_payload(const PacketSpec& spec);
Bytes ip_packet(const PacketSpec& spec);
std::uint32_t ip_length(const PacketSpec& spec);
Bytes ethernet(const Mac& dst, const Mac& src, std::uint16_t ethertype, const Bytes& payload);
Bytes frame(const PacketSpec& spec, const FrameSpec& fs);

// Parses "198.18.0.1" or "2001:db8::1" into spec-style 16 bytes; returns the family (4/6) or 0.
int parse_address(const std::string& text, std::array<std::uint8_t, 16>& out);
std::string format_address(int family, const std::uint8_t* bytes);

}  // namespace hsns::roce_gen
