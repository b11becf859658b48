// A temporary directory for one test: created empty under the system's temporary directory
// ($TMPDIR, else /tmp) with a unique name, removed with everything in it on destruction.
//
// Contract: the constructor throws std::system_error when no directory can be made. Removal never
// throws. With HSNS_KEEP_TEST_DIRS set in the environment directories are kept (to look at logs and
// databases after a run); their paths appear in the tests' failure messages.
#pragma once

#include <filesystem>
#include <string>

namespace hsns::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "hsns-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string string() const { return path_.string(); }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace hsns::testing
