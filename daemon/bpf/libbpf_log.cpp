#include "libbpf_log.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string_view>

#include "hsns/log.h"

namespace hsns::daemon::bpf {
namespace {

constexpr std::size_t kCaptureLimit = 8192;

thread_local LibbpfLogCapture* t_capture = nullptr;
thread_local std::string* t_capture_text = nullptr;

log::Level level_of(libbpf_print_level level) {
  switch (level) {
    case LIBBPF_WARN:
      return log::Level::warning;
    case LIBBPF_INFO:
      return log::Level::info;
    case LIBBPF_DEBUG:
      return log::Level::debug;
  }
  return log::Level::debug;
}

// fmt is libbpf's own format string (the attribute lets the compiler check the calls against it).
__attribute__((format(printf, 1, 0))) std::string format(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return {};
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, args);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

__attribute__((format(printf, 2, 0))) int print(libbpf_print_level level, const char* fmt, va_list args) {
  if (t_capture_text != nullptr) {
    if (level == LIBBPF_DEBUG) return 0;
    std::string& text = *t_capture_text;
    text += format(fmt, args);
    if (text.size() > kCaptureLimit) text.erase(0, text.size() - kCaptureLimit);
    return 0;
  }
  const log::Level mapped = level_of(level);
  if (!log::enabled(mapped)) return 0;
  // One log line per line of the message (a verifier log is many lines in one call).
  const std::string text = format(fmt, args);
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    if (!line.empty()) log::write(mapped, line);  // libbpf starts its lines with "libbpf: "
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return 0;
}

}  // namespace

void route_libbpf_log() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(print); });
}

LibbpfLogCapture::LibbpfLogCapture() : outer_(t_capture) {
  route_libbpf_log();
  t_capture = this;
  t_capture_text = &text_;
}

LibbpfLogCapture::~LibbpfLogCapture() {
  t_capture = outer_;
  t_capture_text = outer_ != nullptr ? &outer_->text_ : nullptr;
}

std::string LibbpfLogCapture::text() const {
  std::string t = text_;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

}  // namespace hsns::daemon::bpf
