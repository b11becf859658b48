#include "support/stderr_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

namespace hsns::testing {

StderrCapture::StderrCapture(const std::string& name)
    : path_(std::filesystem::temp_directory_path() /
            ("hsns-stderr-" + std::to_string(::getpid()) + "-" + name + ".log")) {
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path_.string());
  saved_stderr_ = ::dup(STDERR_FILENO);
  const bool redirected = saved_stderr_ >= 0 && ::dup2(fd, STDERR_FILENO) == STDERR_FILENO;
  const int error = errno;
  ::close(fd);
  if (!redirected) {
    if (saved_stderr_ >= 0) ::close(saved_stderr_);
    std::filesystem::remove(path_);
    throw std::system_error(error, std::generic_category(), "redirect stderr");
  }
}

StderrCapture::~StderrCapture() {
  ::dup2(saved_stderr_, STDERR_FILENO);
  ::close(saved_stderr_);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::string StderrCapture::output() const {
  std::ifstream in(path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hsns::testing
