#include "support/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <system_error>

namespace hsns::testing {

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (std::getenv("HSNS_KEEP_TEST_DIRS") != nullptr) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace hsns::testing
