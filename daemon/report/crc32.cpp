#include "crc32.h"

#include <isa-l/crc.h>

namespace hsns::daemon::report {

std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  return crc32_gzip_refl(crc, p, n);
}

}  // namespace hsns::daemon::report
