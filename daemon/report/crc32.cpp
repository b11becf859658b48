#include "crc32.h"

#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hsns::daemon::report {
namespace {

std::uint32_t zlib_crc(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  return static_cast<std::uint32_t>(crc32_z(crc, p, n));
}

#if defined(__x86_64__)

// Polynomials over GF(2) in normal order (bit j: the coefficient of x^j). x^e mod P, P = x^32 + 0x04C11DB7.
constexpr std::uint64_t x_pow_mod(unsigned e) {
  std::uint64_t v = 1;
  for (unsigned i = 0; i < e; ++i) {
    v <<= 1;
    if ((v >> 32) & 1) v ^= 0x104C11DB7ULL;
  }
  return v;
}

constexpr std::uint64_t bit_reverse64(std::uint64_t v) {
  std::uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= ((v >> i) & 1) << (63 - i);
  return r;
}

// A 16-byte block loaded little-endian is the block's polynomial X (degree < 128, its first message bit
// the highest term) reflected: bit i holds the coefficient of x^(127 - i); its low quadword is the first
// 64 terms Xh, its high quadword the last 64, Xl. Carry-less multiplication of two reflected 64-bit values
// gives the reflected 128-bit value of A * B * x. So moving X forward by D bits (X * x^D mod P, to be added
// to the block D bits later) is Xh * (x^(64 + D - 1) mod P) + Xl * (x^(D - 1) mod P), both products of
// degree < 96, each one multiplication with the constant reflected into 64 bits.
struct FoldConstants {
  std::uint64_t for_high;  // multiplies the low quadword (Xh)
  std::uint64_t for_low;   // multiplies the high quadword (Xl)
};

constexpr FoldConstants fold_by(unsigned bits) {
  return {bit_reverse64(x_pow_mod(64 + bits - 1)), bit_reverse64(x_pow_mod(bits - 1))};
}

constexpr FoldConstants kFold512 = fold_by(512);
constexpr FoldConstants kFold128 = fold_by(128);

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

__attribute__((target("pclmul,sse2"))) std::uint32_t clmul_crc(std::uint32_t crc, const unsigned char* p,
                                                               std::size_t n) {
  // n >= 64. The initial register (zlib inverts crc) is added to the first 32 message bits; the message is
  // then folded into one 16-byte block congruent to it, whose checksum from a zero register, continued
  // over the tail, is the checksum of the whole.
  const __m128i k512 =
      _mm_set_epi64x(static_cast<long long>(kFold512.for_low), static_cast<long long>(kFold512.for_high));
  const __m128i k128 =
      _mm_set_epi64x(static_cast<long long>(kFold128.for_low), static_cast<long long>(kFold128.for_high));
  const auto load = [](const unsigned char* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  };
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = load(p + 16);
  __m128i x2 = load(p + 32);
  __m128i x3 = load(p + 48);
  p += 64;
  n -= 64;
  while (n >= 64) {
    x0 = _mm_xor_si128(fold(x0, k512), load(p));
    x1 = _mm_xor_si128(fold(x1, k512), load(p + 16));
    x2 = _mm_xor_si128(fold(x2, k512), load(p + 32));
    x3 = _mm_xor_si128(fold(x3, k512), load(p + 48));
    p += 64;
    n -= 64;
  }
  __m128i x = _mm_xor_si128(fold(x0, k128), x1);
  x = _mm_xor_si128(fold(x, k128), x2);
  x = _mm_xor_si128(fold(x, k128), x3);
  while (n >= 16) {
    x = _mm_xor_si128(fold(x, k128), load(p));
    p += 16;
    n -= 16;
  }
  alignas(16) unsigned char block[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(block), x);
  // zlib from register 0 (its argument is the inverted register) over the block, then over the tail.
  const std::uint32_t folded = zlib_crc(0xFFFFFFFFu, block, sizeof block);
  return n > 0 ? zlib_crc(folded, p, n) : folded;
}

bool has_clmul() {
  static const bool has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
  return has;
}

#endif

}  // namespace

std::uint32_t crc32_portable(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  return zlib_crc(crc, p, n);
}

bool crc32_accelerated() {
#if defined(__x86_64__)
  return has_clmul();
#else
  return false;
#endif
}

std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* p, std::size_t n) {
#if defined(__x86_64__)
  if (n >= 64 && has_clmul()) return clmul_crc(crc, p, n);
#endif
  return zlib_crc(crc, p, n);
}

}  // namespace hsns::daemon::report
