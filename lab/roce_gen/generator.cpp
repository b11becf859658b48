#include "generator.h"

#include <random>

namespace hsns::roce_gen {

namespace {

constexpr std::uint32_t kPsnMask = 0xFFFFFF;

// Uniform integer in [0, n) from the raw 64-bit engine output (portable across standard libraries).
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t n) {
  return rng() % n;
}

int op_class(std::uint8_t opcode) {
  if (opcode == 0x81) return 6;
  const std::uint8_t t = opcode >> 5;
  const std::uint8_t op = opcode & 0x1F;
  if (t <= 3 || t == 5) {
    if (op <= 0x05 || op == 0x16 || op == 0x17) return 0;
    if (op <= 0x0B) return 1;
    if (op == 0x0C) return 2;
    if (op <= 0x10) return 3;
    if (op == 0x11) return 4;
    if (op <= 0x14) return 5;
  }
  return 7;
}

int nak_kind(std::uint8_t syndrome) {
  if ((syndrome & 0xE0) == 0x20) return 4;
  if ((syndrome & 0xE0) != 0x60) return -1;
  if (syndrome <= 0x63) return syndrome - 0x60;
  return 5;
}

}  // namespace

std::string validate(const MixConfig& c) {
  std::array<std::uint8_t, 16> a{};
  const int fs = parse_address(c.src, a);
  const int fd = parse_address(c.dst, a);
  if (fs == 0) return "bad --src address '" + c.src + "'";
  if (fd == 0) return "bad --dst address '" + c.dst + "'";
  if (fs != fd) return "--src and --dst must be the same family";
  if (c.flows < 1 || c.flows > 4096) return "--flows must be 1..4096";
  if (c.packets_per_flow < 1 || c.packets_per_flow > 10000000) return "--packets must be 1..10000000";
  return {};
}

std::vector<PacketSpec> plan(const MixConfig& c) {
  std::mt19937_64 rng(c.seed);
  PacketSpec base;
  base.family = parse_address(c.src, base.src);
  parse_address(c.dst, base.dst);

  struct State {
    PacketSpec spec;
    std::uint32_t last_psn;
    int left;
  };
  std::vector<State> flows;
  for (int i = 0; i < c.flows; ++i) {
    State s{base, 0, c.packets_per_flow};
    // Several QPs and several source ports per host pair; distinct keys guaranteed by i.
    s.spec.sport = static_cast<std::uint16_t>(
        0xC000 | ((draw(rng, 0x3FFF) + static_cast<std::uint64_t>(i) * 131) & 0x3FFF));
    s.spec.dest_qp = static_cast<std::uint32_t>(
        (0x100 + static_cast<std::uint64_t>(i) * 0x1000 + draw(rng, 0x100)) & kPsnMask);
    s.last_psn = static_cast<std::uint32_t>(draw(rng, kPsnMask + 1));
    flows.push_back(s);
  }
  // Make keys unique even if two flows drew the same sport: dest_qp differs by construction.
  std::vector<PacketSpec> out;
  out.reserve(static_cast<std::size_t>(c.flows) * static_cast<std::size_t>(c.packets_per_flow));
  std::size_t active = flows.size();
  while (active > 0) {
    for (auto& f : flows) {
      if (f.left == 0) continue;
      if (--f.left == 0) --active;
      PacketSpec p = f.spec;
      p.payload = static_cast<std::uint16_t>(draw(rng, 9) * 32);
      const auto e = draw(rng, 1000);
      p.ecn = e < static_cast<std::uint64_t>(c.ce_permille) ? 3
              : e < static_cast<std::uint64_t>(c.ce_permille + c.ect_permille)
                  ? static_cast<std::uint8_t>(1 + draw(rng, 2))
                  : 0;
      const auto kind = draw(rng, 1000);
      if (kind < static_cast<std::uint64_t>(c.cnp_permille)) {
        p.opcode = 0x81;
        p.psn = 0;
        p.payload = 0;
      } else if (kind < 250) {
        p.opcode = 0x11;
        p.payload = 0;
        p.psn = f.last_psn;
        if (draw(rng, 1000) < static_cast<std::uint64_t>(c.nak_permille)) {
          static constexpr std::uint8_t kSyndromes[] = {0x60, 0x61, 0x62, 0x63, 0x20 | 0x0E};
          p.syndrome = kSyndromes[draw(rng, 5)];
        } else {
          p.syndrome = static_cast<std::uint8_t>(draw(rng, 0x20));  // ACK with credit count
        }
      } else {
        static constexpr std::uint8_t kData[] = {0x00, 0x02, 0x04, 0x06, 0x08, 0x0A,
                                                 0x0C, 0x0D, 0x10, 0x12, 0x13, 0x14};
        p.opcode = kData[draw(rng, sizeof(kData))];
        if (draw(rng, 1000) < static_cast<std::uint64_t>(c.retransmit_permille)) {
          p.psn = (f.last_psn - static_cast<std::uint32_t>(draw(rng, 4))) & kPsnMask;  // go back 0..3
        } else {
          p.psn = (f.last_psn + 1) & kPsnMask;
        }
        f.last_psn = p.psn;
      }
      out.push_back(p);
    }
  }
  return out;
}

FlowKey key_of(const PacketSpec& s) {
  FlowKey k;
  k.family = s.family;
  k.src = s.src;
  k.dst = s.dst;
  k.sport = s.sport;
  k.dest_qp = s.dest_qp;
  return k;
}

std::map<FlowKey, FlowCounts> tally(const std::vector<PacketSpec>& packets) {
  std::map<FlowKey, FlowCounts> flows;
  for (const auto& p : packets) {
    auto& f = flows[key_of(p)];
    ++f.packets;
    f.bytes += ip_length(p);
    const int cls = op_class(p.opcode);
    ++f.op[static_cast<std::size_t>(cls)];
    if (p.ecn == 1 || p.ecn == 2) ++f.ect;
    if (p.ecn == 3) ++f.ce;
    if (cls == 6) ++f.cnp;
    if (cls == 4) {
      const int n = nak_kind(p.syndrome);
      if (n >= 0) ++f.nak[static_cast<std::size_t>(n)];
    }
    if (cls != 4 && cls != 6) {
      if (f.has_psn) {
        const std::uint32_t diff = (p.psn - f.last_psn) & kPsnMask;
        if (diff == 0 || diff >= 0x800000) ++f.psn_regressions;
        const std::uint32_t up = (p.psn - f.max_psn) & kPsnMask;
        if (up != 0 && up < 0x800000) f.max_psn = p.psn;
      } else {
        f.has_psn = true;
        f.max_psn = p.psn;
      }
      f.last_psn = p.psn;
    }
  }
  return flows;
}

nlohmann::json to_json(const std::map<FlowKey, FlowCounts>& flows) {
  static constexpr const char* kOps[] = {"send", "write",  "read_req", "read_resp",
                                         "ack",  "atomic", "cnp",      "other"};
  static constexpr const char* kNaks[] = {"psn_seq", "inv_req", "rem_access", "rem_op", "rnr", "other"};
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [k, f] : flows) {
    nlohmann::json j;
    j["src"] = format_address(k.family, k.src.data());
    j["dst"] = format_address(k.family, k.dst.data());
    j["sport"] = k.sport;
    j["dest_qp"] = k.dest_qp;
    j["packets"] = f.packets;
    j["bytes"] = f.bytes;
    for (std::size_t i = 0; i < 8; ++i) j["op"][kOps[i]] = f.op[i];
    j["ect"] = f.ect;
    j["ce"] = f.ce;
    j["cnp"] = f.cnp;
    for (std::size_t i = 0; i < 6; ++i) j["nak"][kNaks[i]] = f.nak[i];
    j["psn_regressions"] = f.psn_regressions;
    if (f.has_psn) j["max_psn"] = f.max_psn;
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace hsns::roce_gen
