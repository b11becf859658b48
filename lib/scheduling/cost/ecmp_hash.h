// A configurable model of a switch's ECMP hash: which header fields it reads, which function, the seed.
//
// Contract:
// - The hash input is the selected fields serialised in this fixed order, big-endian: source IP
//   (4 bytes for IPv4, 16 for IPv6), destination IP, UDP source port (2), UDP destination port (2),
//   IP protocol (1). A model with no field selected is invalid.
// - Functions: crc32 (IEEE 802.3, reflected, poly 0xEDB88320), crc32c (Castagnoli, reflected, poly
//   0x82F63B78), crc32_bzip2 (IEEE poly 0x04C11DB7, not reflected, as many switch ASICs compute it),
//   xor_fold (XOR of the big-endian 32-bit words, zero-padded, then folded to 16 bits: (h >> 16) ^
//   (h & 0xFFFF)). The seed is the CRC's initial register value XOR 0xFFFFFFFF (so seed 0 gives the
//   standard CRC: crc32("123456789") = 0xCBF43926, crc32c = 0xE3069283, crc32_bzip2 = 0xFC891918), and is
//   XORed into the word sum before folding for xor_fold.
// - choose_uplink(hash, n) = hash % n; n = 0 is an error.
// - parse_ecmp_hash_model() reads {"fields": ["src_ip", "dst_ip", "src_port", "dst_port", "protocol"],
//   "function": "crc32|crc32c|crc32_bzip2|xor_fold", "seed": 0} strictly (unknown names are errors).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "hsns/ip.h"

namespace hsns::cost {

enum class HashFunction { crc32, crc32c, crc32_bzip2, xor_fold };

struct HashFields {
  bool src_ip = true;
  bool dst_ip = true;
  bool src_port = true;
  bool dst_port = true;
  bool protocol = true;
};

struct EcmpHashModel {
  HashFields fields;
  HashFunction function = HashFunction::crc32;
  std::uint32_t seed = 0;
};

struct FiveTuple {
  IpAddress src_ip;
  IpAddress dst_ip;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 4791;
  std::uint8_t protocol = 17;
};

std::uint32_t crc32_ieee(std::span<const std::uint8_t> data, std::uint32_t seed = 0);
std::uint32_t crc32c(std::span<const std::uint8_t> data, std::uint32_t seed = 0);
std::uint32_t crc32_bzip2(std::span<const std::uint8_t> data, std::uint32_t seed = 0);
std::uint32_t xor_fold16(std::span<const std::uint8_t> data, std::uint32_t seed = 0);

tl::expected<void, std::string> validate(const EcmpHashModel& model);

// The hash of one packet header under the model (the model is assumed valid).
std::uint32_t ecmp_hash(const EcmpHashModel& model, const FiveTuple& tuple);

tl::expected<std::uint32_t, std::string> choose_uplink(std::uint32_t hash, std::uint32_t n_uplinks);

// ecmp_hash() of one header under many source ports, cheaply. Every supported function is affine over
// GF(2) for a fixed input length (CRCs with a fixed initial register and final XOR; xor_fold), so
//   ecmp_hash(m, t with src_port p) = ecmp_hash(m, t with src_port 0) ^ delta(p),
// where delta(p) depends only on the model and the address family, and is linear in p's two bytes:
// delta(p) = high[p >> 8] ^ low[p & 0xFF]. The constructor computes the two 256-entry tables (512
// hashes of all-zero headers); base() is one ecmp_hash(); with_port() two look-ups. Equal to ecmp_hash()
// for every input (tested). When the model does not read the source port, delta is 0.
class SourcePortHasher {
 public:
  SourcePortHasher(const EcmpHashModel& model, IpFamily family);
  // The hash of `tuple` with its source port set to 0 (the family must be the constructor's).
  std::uint32_t base(const FiveTuple& tuple) const;
  std::uint32_t with_port(std::uint32_t base, std::uint16_t port) const {
    return base ^ high_[port >> 8] ^ low_[port & 0xFF];
  }
  IpFamily family() const { return family_; }

 private:
  EcmpHashModel model_;
  IpFamily family_;
  std::array<std::uint32_t, 256> high_{};
  std::array<std::uint32_t, 256> low_{};
};

std::string_view to_string(HashFunction f);
tl::expected<EcmpHashModel, std::string> parse_ecmp_hash_model(std::string_view json_text);

}  // namespace hsns::cost
