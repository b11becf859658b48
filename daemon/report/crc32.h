// CRC-32 of the report spool (the zlib / IEEE 802.3 checksum: reflected, polynomial 0x04C11DB7, initial
// and final value inverted), faster than zlib's table-driven code on large buffers.
//
// Contract:
// - crc32_update(crc, p, n) == zlib's crc32_z(crc, p, n) for every crc, buffer, length and alignment:
//   chains exactly like it (crc32_update(crc32_update(c, a), b) is the checksum of a then b), and starts
//   from 0. Buffers of 64 bytes and more are folded 64 bytes at a time with carry-less multiplication
//   (PCLMULQDQ, when the CPU has it: checked once at run time), the rest goes through zlib; the spool
//   checksums every record it writes and again every record before it is sent (several MB a second at
//   10,000 flows a second), where zlib's code cost as much as encoding the records.
// - crc32_accelerated(): whether the folding is used on this CPU (tests run both paths where they can).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hsns::daemon::report {

std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* p, std::size_t n);
// The zlib path only, whatever the CPU (tests compare the two).
std::uint32_t crc32_portable(std::uint32_t crc, const unsigned char* p, std::size_t n);
bool crc32_accelerated();

}  // namespace hsns::daemon::report
