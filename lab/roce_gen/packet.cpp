#include "packet.h"

#include <arpa/inet.h>

#include <cstring>

namespace hsns::roce_gen {

namespace {

void put16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}

void put24(Bytes& b, std::uint32_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 16));
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}

void put32(Bytes& b, std::uint32_t v) {
  put16(b, static_cast<std::uint16_t>(v >> 16));
  put16(b, static_cast<std::uint16_t>(v));
}

std::uint16_t ipv4_checksum(const std::uint8_t* h, std::size_t len) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < len; i += 2) sum += (static_cast<std::uint32_t>(h[i]) << 8) | h[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

Bytes ipv4(const std::uint8_t* src, const std::uint8_t* dst, std::uint8_t tos, std::uint8_t proto,
           const Bytes& payload) {
  Bytes b;
  b.push_back(0x45);
  b.push_back(tos);
  put16(b, static_cast<std::uint16_t>(20 + payload.size()));
  put16(b, 0);       // id
  put16(b, 0x4000);  // DF
  b.push_back(64);
  b.push_back(proto);
  put16(b, 0);
  b.insert(b.end(), src, src + 4);
  b.insert(b.end(), dst, dst + 4);
  const std::uint16_t csum = ipv4_checksum(b.data(), 20);
  b[10] = static_cast<std::uint8_t>(csum >> 8);
  b[11] = static_cast<std::uint8_t>(csum);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

}  // namespace

std::size_t extra_header_len(std::uint8_t opcode) {
  const std::uint8_t op = opcode & 0x1F;
  if (opcode == 0x81) return 16;                          // CNP: 16 reserved bytes
  if (op == 0x11) return 4;                               // AETH
  if (op == 0x12) return 4 + 8;                           // AETH + AtomicAckETH
  if (op == 0x06 || op == 0x0A || op == 0x0B) return 16;  // RETH (WRITE first/only)
  if (op == 0x0C) return 16;                              // RETH (READ request)
  if (op == 0x0D || op == 0x0F || op == 0x10) return 4;   // AETH (READ response first/last/only)
  if (op == 0x13 || op == 0x14) return 28;                // AtomicETH
  return 0;
}

Bytes roce_udp_payload(const PacketSpec& spec) {
  Bytes b;
  b.push_back(spec.opcode);
  b.push_back(0x00);  // SE=0 M=0 Pad=0 TVer=0
  put16(b, 0xFFFF);   // P_Key
  b.push_back(0x00);
  put24(b, spec.dest_qp);
  b.push_back(0x80);  // AckReq
  put24(b, spec.psn);
  const std::size_t extra = extra_header_len(spec.opcode);
  const std::size_t start = b.size();
  b.resize(start + extra, 0);
  if ((spec.opcode & 0x1F) == 0x11 && spec.opcode != 0x81) b[start] = spec.syndrome;
  for (std::size_t i = 0; i < spec.payload; ++i) b.push_back(static_cast<std::uint8_t>(i * 7 + 1));
  b.resize(b.size() + 4, 0);  // ICRC
  return b;
}

Bytes ip_packet(const PacketSpec& spec) {
  const Bytes roce = roce_udp_payload(spec);
  Bytes udp;
  put16(udp, spec.sport);
  put16(udp, 4791);
  put16(udp, static_cast<std::uint16_t>(8 + roce.size()));
  put16(udp, 0);  // checksum 0 (allowed for IPv4; RoCEv2 over IPv6 also sends 0)
  udp.insert(udp.end(), roce.begin(), roce.end());
  if (spec.family == 4) return ipv4(spec.src.data(), spec.dst.data(), spec.ecn, 17, udp);
  Bytes b;
  put32(b, (6u << 28) | (static_cast<std::uint32_t>(spec.ecn) << 20));
  put16(b, static_cast<std::uint16_t>(udp.size()));
  b.push_back(17);
  b.push_back(64);
  b.insert(b.end(), spec.src.begin(), spec.src.end());
  b.insert(b.end(), spec.dst.begin(), spec.dst.end());
  b.insert(b.end(), udp.begin(), udp.end());
  return b;
}

std::uint32_t ip_length(const PacketSpec& spec) {
  const auto roce = static_cast<std::uint32_t>(12 + extra_header_len(spec.opcode) + spec.payload + 4);
  return (spec.family == 4 ? 20u : 40u) + 8u + roce;
}

Bytes ethernet(const Mac& dst, const Mac& src, std::uint16_t ethertype, const Bytes& payload) {
  Bytes b(dst.begin(), dst.end());
  b.insert(b.end(), src.begin(), src.end());
  put16(b, ethertype);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes frame(const PacketSpec& spec, const FrameSpec& fs) {
  const Bytes ip = ip_packet(spec);
  const std::uint16_t type = spec.family == 4 ? 0x0800 : 0x86DD;
  switch (fs.encap) {
    case Encap::none:
      return ethernet(fs.dst_mac, fs.src_mac, type, ip);
    case Encap::vlan: {
      Bytes tag;
      put16(tag, fs.vlan);
      put16(tag, type);
      tag.insert(tag.end(), ip.begin(), ip.end());
      return ethernet(fs.dst_mac, fs.src_mac, 0x8100, tag);
    }
    case Encap::qinq: {
      Bytes tag;
      put16(tag, fs.outer_vlan);
      put16(tag, 0x8100);
      put16(tag, fs.vlan);
      put16(tag, type);
      tag.insert(tag.end(), ip.begin(), ip.end());
      return ethernet(fs.dst_mac, fs.src_mac, 0x88A8, tag);
    }
    case Encap::erspan2:
    case Encap::erspan3: {
      const Bytes inner = ethernet(fs.dst_mac, fs.src_mac, type, ip);
      Bytes gre;
      const bool v3 = fs.encap == Encap::erspan3;
      put16(gre, 0x1000);  // S bit: sequence number present
      put16(gre, v3 ? 0x22EB : 0x88BE);
      put32(gre, 1);  // sequence
      if (!v3) {
        // Ver=1, VLAN=0 | COS=0 En=0 T=0 Session | Reserved | Index
        put16(gre, 0x1000);
        put16(gre, fs.erspan_session & 0x3FF);
        put32(gre, 0);
      } else {
        put16(gre, 0x2000);  // Ver=2
        put16(gre, fs.erspan_session & 0x3FF);
        put32(gre, 0x12345678);  // timestamp
        put16(gre, 0);           // SGT
        put16(gre, 0);           // P FT HW ID D Gra O=0
      }
      gre.insert(gre.end(), inner.begin(), inner.end());
      const Mac outer_src{0x02, 0, 0, 0, 0xEE, 1};
      const Mac outer_dst{0x02, 0, 0, 0, 0xEE, 2};
      return ethernet(outer_dst, outer_src, 0x0800,
                      ipv4(fs.outer_src.data(), fs.outer_dst.data(), 0, 47, gre));
    }
  }
  return {};
}

int parse_address(const std::string& text, std::array<std::uint8_t, 16>& out) {
  out.fill(0);
  if (inet_pton(AF_INET, text.c_str(), out.data()) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), out.data()) == 1) return 6;
  return 0;
}

std::string format_address(int family, const std::uint8_t* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof(buf));
  return buf;
}

}  // namespace hsns::roce_gen
