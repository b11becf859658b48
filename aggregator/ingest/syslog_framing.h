// RFC 6587 framing of syslog over TCP: each message is either octet-counted ("LEN SP MSG") or ends with LF
// (non-transparent framing), told apart per message by its first octet (a digit: octet counting; the '<'
// of a PRI or anything else: LF framing).
//
// Contract: feed() appends received bytes and calls on_frame for every complete message, in order (LF
// framing: without the LF; a CR before it stays for the parser to drop). The buffer never holds more than
// one partial message of at most max_frame octets plus its length prefix: a count above max_frame, a count
// that is not 1 to 9 digits without a leading zero followed by SP, or an LF-framed message longer than
// max_frame is an error, after which the stream cannot be resynchronised (the receiver closes it).
// Pure; one object per connection, not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace hsns::ingest {

enum class FrameFault : std::uint8_t { bad_octet_count, frame_too_long };
std::string_view frame_fault_name(FrameFault fault);  // "bad_octet_count", "frame_too_long" (metric labels)

class SyslogStreamFramer {
 public:
  explicit SyslogStreamFramer(std::size_t max_frame) : max_frame_(max_frame) {}

  tl::expected<void, FrameFault> feed(std::string_view bytes,
                                      const std::function<void(std::string_view)>& on_frame);
  std::size_t buffered() const { return buffer_.size(); }

 private:
  std::size_t max_frame_;
  std::string buffer_;
};

}  // namespace hsns::ingest
