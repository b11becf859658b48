// Standard error (file descriptor 2) pointed at a fresh file for the lifetime of one object, so a test can
// read back what the code under test logged (hsns::log writes there); the previous stderr is restored on
// destruction and the file removed.
//
// Contract: the constructor throws std::system_error when the file cannot be made or stderr not
// redirected. output() is everything written to stderr since construction. Restoring never throws.
#pragma once

#include <filesystem>
#include <string>

namespace hsns::testing {

class StderrCapture {
 public:
  // name: part of the file's name (a test's name: for a file left behind by a crash).
  explicit StderrCapture(const std::string& name);
  ~StderrCapture();
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string output() const;

 private:
  std::filesystem::path path_;
  int saved_stderr_ = -1;
};

}  // namespace hsns::testing
