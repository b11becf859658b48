#include "ingest/syslog_framing.h"

namespace hsns::ingest {

std::string_view frame_fault_name(FrameFault fault) {
  return fault == FrameFault::bad_octet_count ? "bad_octet_count" : "frame_too_long";
}

tl::expected<void, FrameFault> SyslogStreamFramer::feed(
    std::string_view bytes, const std::function<void(std::string_view)>& on_frame) {
  buffer_.append(bytes);
  std::size_t pos = 0;
  const auto fail = [&](FrameFault f) {
    buffer_.clear();
    return tl::unexpected(f);
  };
  while (pos < buffer_.size()) {
    const std::string_view rest = std::string_view(buffer_).substr(pos);
    if (rest[0] >= '0' && rest[0] <= '9') {
      std::size_t n = 0;
      std::size_t count = 0;
      while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') {
        if (n == 9) return fail(FrameFault::bad_octet_count);
        count = count * 10 + static_cast<std::size_t>(rest[n] - '0');
        ++n;
      }
      if (n == rest.size()) break;  // the count goes on in the next read
      if (rest[0] == '0' || rest[n] != ' ') return fail(FrameFault::bad_octet_count);
      if (count > max_frame_) return fail(FrameFault::frame_too_long);
      if (rest.size() < n + 1 + count) break;
      on_frame(rest.substr(n + 1, count));
      pos += n + 1 + count;
    } else {
      const auto lf = rest.find('\n');
      if (lf == std::string_view::npos) {
        if (rest.size() > max_frame_) return fail(FrameFault::frame_too_long);
        break;
      }
      if (lf > max_frame_) return fail(FrameFault::frame_too_long);
      if (lf > 0) on_frame(rest.substr(0, lf));  // empty lines between messages are not messages
      pos += lf + 1;
    }
  }
  buffer_.erase(0, pos);
  return {};
}

}  // namespace hsns::ingest
