#include "scheduling/cost/ecmp_hash.h"

#include <array>
#include <nlohmann/json.hpp>

namespace hsns::cost {

namespace {

using Table = std::array<std::uint32_t, 256>;

constexpr Table reflected_table(std::uint32_t poly) {
  Table t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
    t[i] = c;
  }
  return t;
}

constexpr Table msb_table(std::uint32_t poly) {
  Table t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i << 24;
    for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ poly : c << 1;
    t[i] = c;
  }
  return t;
}

constexpr Table kIeee = reflected_table(0xEDB88320u);
constexpr Table kCastagnoli = reflected_table(0x82F63B78u);
constexpr Table kBzip2 = msb_table(0x04C11DB7u);

std::uint32_t crc_reflected(const Table& t, std::span<const std::uint8_t> data, std::uint32_t seed) {
  std::uint32_t c = 0xFFFFFFFFu ^ seed;
  for (std::uint8_t b : data) c = t[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// The serialised header fields: at most 16 + 16 + 2 + 2 + 1 bytes, on the stack.
struct HashInput {
  std::array<std::uint8_t, 40> bytes{};
  std::size_t size = 0;
  void push(std::uint8_t b) { bytes[size++] = b; }
  std::span<const std::uint8_t> view() const { return {bytes.data(), size}; }
};

void put_ip(HashInput& out, const IpAddress& ip) {
  const int bytes = ip.bits() / 8;
  for (int i = bytes - 1; i >= 0; --i) out.push(static_cast<std::uint8_t>(ip.value() >> (8 * i)));
}

void put16(HashInput& out, std::uint16_t v) {
  out.push(static_cast<std::uint8_t>(v >> 8));
  out.push(static_cast<std::uint8_t>(v));
}

}  // namespace

std::uint32_t crc32_ieee(std::span<const std::uint8_t> data, std::uint32_t seed) {
  return crc_reflected(kIeee, data, seed);
}

std::uint32_t crc32c(std::span<const std::uint8_t> data, std::uint32_t seed) {
  return crc_reflected(kCastagnoli, data, seed);
}

std::uint32_t crc32_bzip2(std::span<const std::uint8_t> data, std::uint32_t seed) {
  std::uint32_t c = 0xFFFFFFFFu ^ seed;
  for (std::uint8_t b : data) c = kBzip2[((c >> 24) ^ b) & 0xFF] ^ (c << 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t xor_fold16(std::span<const std::uint8_t> data, std::uint32_t seed) {
  std::uint32_t h = seed;
  for (std::size_t i = 0; i < data.size(); i += 4) {
    std::uint32_t word = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      word <<= 8;
      if (i + k < data.size()) word |= data[i + k];
    }
    h ^= word;
  }
  return (h >> 16) ^ (h & 0xFFFF);
}

tl::expected<void, std::string> validate(const EcmpHashModel& m) {
  const auto& f = m.fields;
  if (!f.src_ip && !f.dst_ip && !f.src_port && !f.dst_port && !f.protocol) {
    return tl::unexpected(std::string("ecmp hash: at least one field must be selected"));
  }
  return {};
}

std::uint32_t ecmp_hash(const EcmpHashModel& m, const FiveTuple& t) {
  HashInput in;
  if (m.fields.src_ip) put_ip(in, t.src_ip);
  if (m.fields.dst_ip) put_ip(in, t.dst_ip);
  if (m.fields.src_port) put16(in, t.src_port);
  if (m.fields.dst_port) put16(in, t.dst_port);
  if (m.fields.protocol) in.push(t.protocol);
  switch (m.function) {
    case HashFunction::crc32:
      return crc32_ieee(in.view(), m.seed);
    case HashFunction::crc32c:
      return crc32c(in.view(), m.seed);
    case HashFunction::crc32_bzip2:
      return crc32_bzip2(in.view(), m.seed);
    case HashFunction::xor_fold:
      return xor_fold16(in.view(), m.seed);
  }
  return 0;
}

tl::expected<std::uint32_t, std::string> choose_uplink(std::uint32_t hash, std::uint32_t n_uplinks) {
  if (n_uplinks == 0) return tl::unexpected(std::string("choose_uplink: the number of uplinks must be >= 1"));
  return hash % n_uplinks;
}

SourcePortHasher::SourcePortHasher(const EcmpHashModel& model, IpFamily family)
    : model_(model), family_(family) {
  // An all-zero header of the family (destination port and protocol 0 as well): by linearity,
  // hash(zero with port p) ^ hash(zero) is the contribution of p alone, and each byte of p contributes
  // independently.
  FiveTuple zero{IpAddress(family, 0), IpAddress(family, 0), 0, 0, 0};
  const std::uint32_t origin = ecmp_hash(model, zero);
  for (std::uint32_t b = 0; b < 256; ++b) {
    zero.src_port = static_cast<std::uint16_t>(b << 8);
    high_[b] = ecmp_hash(model, zero) ^ origin;
    zero.src_port = static_cast<std::uint16_t>(b);
    low_[b] = ecmp_hash(model, zero) ^ origin;
  }
}

std::uint32_t SourcePortHasher::base(const FiveTuple& tuple) const {
  FiveTuple t = tuple;
  t.src_port = 0;
  return ecmp_hash(model_, t);
}

std::string_view to_string(HashFunction f) {
  switch (f) {
    case HashFunction::crc32:
      return "crc32";
    case HashFunction::crc32c:
      return "crc32c";
    case HashFunction::crc32_bzip2:
      return "crc32_bzip2";
    case HashFunction::xor_fold:
      return "xor_fold";
  }
  return "unknown";
}

tl::expected<EcmpHashModel, std::string> parse_ecmp_hash_model(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return tl::unexpected(std::string("ecmp hash: must be a JSON object"));
  }
  EcmpHashModel m;
  for (const auto& [key, value] : doc.items()) {
    if (key == "fields") {
      if (!value.is_array()) return tl::unexpected(std::string("fields: must be an array of strings"));
      m.fields = HashFields{false, false, false, false, false};
      for (const auto& f : value) {
        const std::string name = f.is_string() ? f.get<std::string>() : "";
        if (name == "src_ip")
          m.fields.src_ip = true;
        else if (name == "dst_ip")
          m.fields.dst_ip = true;
        else if (name == "src_port")
          m.fields.src_port = true;
        else if (name == "dst_port")
          m.fields.dst_port = true;
        else if (name == "protocol")
          m.fields.protocol = true;
        else
          return tl::unexpected("fields: unknown field \"" + f.dump() +
                                "\" (expected src_ip, dst_ip, src_port, dst_port, protocol)");
      }
    } else if (key == "function") {
      const std::string name = value.is_string() ? value.get<std::string>() : "";
      bool found = false;
      for (auto fn :
           {HashFunction::crc32, HashFunction::crc32c, HashFunction::crc32_bzip2, HashFunction::xor_fold}) {
        if (name == to_string(fn)) {
          m.function = fn;
          found = true;
        }
      }
      if (!found) {
        return tl::unexpected("function: unknown hash function " + value.dump() +
                              " (expected crc32, crc32c, crc32_bzip2, xor_fold)");
      }
    } else if (key == "seed") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0xFFFFFFFFu) {
        return tl::unexpected(std::string("seed: must be an integer in 0..4294967295"));
      }
      m.seed = static_cast<std::uint32_t>(value.get<std::uint64_t>());
    } else {
      return tl::unexpected("ecmp hash: unknown field \"" + key + "\"");
    }
  }
  if (auto ok = validate(m); !ok) return tl::unexpected(ok.error());
  return m;
}

}  // namespace hsns::cost
