// The kernel's RoCEv2 UDP source-port formula and the ECMP hash model.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string_view>
#include <vector>

#include "scheduling/cost/ecmp_hash.h"
#include "scheduling/cost/roce_sport.h"

namespace hsns::cost {
namespace {

struct SportCase {
  std::uint32_t lqpn;
  std::uint32_t rqpn;
  std::uint32_t flow_label;
  std::uint16_t sport;
};

// Hand-computed with the kernel's steps, e.g. 0x123 * 0x456 = 0x4EDC2 (< 2^20, no fold);
// low 14 bits 0x2DC2 ^ (0x4C000 >> 14 = 0x13) = 0x2DD1, | 0xC000 = 0xEDD1. For 0x800000^2 = 2^46:
// v ^= v >> 20 adds 2^26, v ^= v >> 40 adds 2^6, & 0xFFFFF leaves 0x40.
TEST(RoceSport, MatchesTheKernelFormula) {
  const SportCase cases[] = {
      {1, 1, 0x1, 0xC001},
      {2, 3, 0x6, 0xC006},
      {0x4000, 1, 0x4000, 0xC001},  // bit 14 folds onto bit 0
      {0x100000, 1, 0x1, 0xC001},   // bit 20 folds by >> 20
      {0x123, 0x456, 0x4EDC2, 0xEDD1},
      {0x12345, 0x6789A, 0x5FA4F, 0xFA58},
      {0xFFFFFF, 0xFFFFFF, 0xFFF1E, 0xFF21},
      {0x11, 0x1A2B3C, 0xCDEE7, 0xDED4},
      {0x800000, 0x800000, 0x40, 0xC040},  // the >> 40 fold matters
  };
  for (const auto& c : cases) {
    EXPECT_EQ(roce_flow_label(c.lqpn, c.rqpn), c.flow_label) << std::hex << c.lqpn << "," << c.rqpn;
    EXPECT_EQ(roce_udp_sport(c.lqpn, c.rqpn), c.sport) << std::hex << c.lqpn << "," << c.rqpn;
    EXPECT_EQ(roce_udp_sport(c.rqpn, c.lqpn), c.sport) << "symmetric";
  }
}

TEST(RoceSport, ExplicitFlowLabelWinsAndPortsStayInTheRoceRange) {
  EXPECT_EQ(roce_udp_sport(1, 1, 0x4EDC2), 0xEDD1);
  EXPECT_EQ(roce_udp_sport_from_flow_label(0), 0xC000);
  EXPECT_EQ(roce_udp_sport_from_flow_label(0xFFFFF), 0xC000 | (0x3FFF ^ 0x3F));
  for (std::uint32_t q = 1; q < 5000; q += 7) EXPECT_GE(roce_udp_sport(q, q + 3), 0xC000);
}

std::vector<std::uint8_t> bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

TEST(EcmpHash, CrcFunctionsHaveTheirStandardCheckValues) {
  const auto check = bytes("123456789");
  EXPECT_EQ(crc32_ieee(check), 0xCBF43926u);
  EXPECT_EQ(crc32c(check), 0xE3069283u);
  EXPECT_EQ(crc32_bzip2(check), 0xFC891918u);
  EXPECT_NE(crc32_ieee(check, 1), 0xCBF43926u);  // the seed changes the result
}

TEST(EcmpHash, XorFoldHandComputed) {
  // Words 0x01020304 ^ 0x05000000 = 0x04020304; fold 0x0402 ^ 0x0304 = 0x0706.
  const std::array<std::uint8_t, 5> in{1, 2, 3, 4, 5};
  EXPECT_EQ(xor_fold16(in), 0x0706u);
  // Seed 0x00010000 flips the high half: 0x0403 ^ 0x0304 = 0x0707.
  EXPECT_EQ(xor_fold16(in, 0x00010000), 0x0707u);
}

TEST(EcmpHash, SerialisesTheSelectedFieldsInOrder) {
  const FiveTuple t{*IpAddress::parse("198.18.0.1"), *IpAddress::parse("198.18.1.2"), 0xC001, 4791, 17};
  EcmpHashModel all;
  const std::vector<std::uint8_t> full{198, 18, 0, 1, 198, 18, 1, 2, 0xC0, 0x01, 0x12, 0xB7, 17};
  EXPECT_EQ(ecmp_hash(all, t), crc32_ieee(full));
  EcmpHashModel port_only{{false, false, true, false, false}, HashFunction::crc32c, 7};
  const std::vector<std::uint8_t> port{0xC0, 0x01};
  EXPECT_EQ(ecmp_hash(port_only, t), crc32c(port, 7));
  EcmpHashModel xf{{false, false, true, false, false}, HashFunction::xor_fold, 0};
  EXPECT_EQ(ecmp_hash(xf, t), 0xC001u);  // 0xC0010000 folded
  const FiveTuple v6{*IpAddress::parse("2001:db8::1"), *IpAddress::parse("2001:db8::2"), 1, 4791, 17};
  std::vector<std::uint8_t> v6bytes{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EcmpHashModel src_only{{true, false, false, false, false}, HashFunction::crc32, 0};
  EXPECT_EQ(ecmp_hash(src_only, v6), crc32_ieee(v6bytes));
}

TEST(EcmpHash, ChooseUplinkIsModuloAndRejectsZero) {
  EXPECT_EQ(*choose_uplink(10, 4), 2u);
  EXPECT_EQ(*choose_uplink(0xFFFFFFFFu, 7), 0xFFFFFFFFu % 7);
  auto bad = choose_uplink(1, 0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("uplinks must be >= 1"), std::string::npos);
}

TEST(EcmpHash, ParsesModelsStrictly) {
  auto m = parse_ecmp_hash_model(R"({"fields": ["src_ip", "src_port"], "function": "crc32c", "seed": 42})");
  ASSERT_TRUE(m) << m.error();
  EXPECT_TRUE(m->fields.src_ip);
  EXPECT_FALSE(m->fields.dst_ip);
  EXPECT_TRUE(m->fields.src_port);
  EXPECT_FALSE(m->fields.protocol);
  EXPECT_EQ(m->function, HashFunction::crc32c);
  EXPECT_EQ(m->seed, 42u);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"fields": []})", "at least one field"},
      {R"({"fields": ["vlan"]})", "unknown field"},
      {R"({"function": "md5"})", "unknown hash function"},
      {R"({"seed": -1})", "seed"},
      {R"({"salt": 1})", "unknown field"},
      {"[]", "JSON object"},
  };
  for (const auto& [doc, message] : bad) {
    auto r = parse_ecmp_hash_model(doc);
    ASSERT_FALSE(r) << doc;
    EXPECT_NE(r.error().find(message), std::string::npos) << doc << " -> " << r.error();
  }
}

// SourcePortHasher relies on every hash function being affine over GF(2) for a fixed input length: it must
// give ecmp_hash() exactly, for every function, field selection, seed and address family.
TEST(EcmpHash, SourcePortHasherEqualsTheFullHash) {
  std::mt19937_64 rng(42);
  int checked = 0;
  for (auto fn :
       {HashFunction::crc32, HashFunction::crc32c, HashFunction::crc32_bzip2, HashFunction::xor_fold}) {
    for (unsigned mask = 1; mask < 32; ++mask) {
      EcmpHashModel m;
      m.function = fn;
      m.seed = static_cast<std::uint32_t>(rng());
      m.fields = {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0, (mask & 8) != 0, (mask & 16) != 0};
      for (auto family : {IpFamily::v4, IpFamily::v6}) {
        const SourcePortHasher hasher(m, family);
        EXPECT_EQ(hasher.family(), family);
        for (int n = 0; n < 8; ++n) {
          const uint128 wide = (static_cast<uint128>(rng()) << 64) | rng();
          const uint128 value = family == IpFamily::v4 ? static_cast<std::uint32_t>(rng()) : wide;
          const uint128 other = family == IpFamily::v4 ? static_cast<std::uint32_t>(rng()) : value ^ wide;
          FiveTuple t{IpAddress(family, value), IpAddress(family, other), 0,
                      static_cast<std::uint16_t>(rng()), static_cast<std::uint8_t>(rng())};
          const std::uint32_t base = hasher.base(t);
          for (int k = 0; k < 16; ++k) {
            t.src_port = static_cast<std::uint16_t>(k < 2 ? k * 0xFFFF : rng());
            ASSERT_EQ(hasher.with_port(base, t.src_port), ecmp_hash(m, t))
                << to_string(fn) << " fields " << mask << " port " << t.src_port;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * 31 * 2 * 8 * 16);
}

}  // namespace
}  // namespace hsns::cost
