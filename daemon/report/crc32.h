// CRC-32 of the report spool (the zlib / IEEE 802.3 checksum: reflected, polynomial 0x04C11DB7, initial
// and final value inverted), through Intel's ISA-L (libisal: crc32_gzip_refl picks its carry-less
// multiplication or table code for the CPU at run time) rather than zlib's table-driven code: the spool
// checksums every record it writes and again every record before it is sent (several MB a second at
// 10,000 flows a second), where zlib's code cost as much as encoding the records.
//
// Contract:
// - crc32_update(crc, p, n) == zlib's crc32_z(crc, p, n) for every crc, buffer, length and alignment:
//   chains exactly like it (crc32_update(crc32_update(c, a), b) is the checksum of a then b), and starts
//   from 0.
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hsns::daemon::report {

std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* p, std::size_t n);

}  // namespace hsns::daemon::report
