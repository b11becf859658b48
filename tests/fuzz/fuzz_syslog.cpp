// The syslog parser and the RFC 6587 stream framing (aggregator/ingest/syslog_parser.h, syslog_framing.h):
// any bytes as one message, and as a TCP stream cut at a point the input chooses. Checks: no crash, no
// read past the input; an accepted message has its fields within the limits and severity/facility in range;
// the framer never buffers more than one frame and its prefix.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hsns/utf8.h"
#include "ingest/syslog_framing.h"
#include "ingest/syslog_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hsns::ingest;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const SyslogContext context{utc_civil_to_ms(2026, 12, 2, 5, 7, 56), "192.0.2.1",
                              SyslogLimits{.max_line = 2048}};
  const auto check = [&](std::string_view line) {
    const auto m = parse_syslog(line, context);
    if (!m) {
      if (m.error().detail.empty()) __builtin_trap();
      return;
    }
    if (m->severity < 0 || m->severity > 7 || m->facility < 0 || m->facility > 23) __builtin_trap();
    if (m->hostname.size() > kMaxHostname || m->app.size() > kMaxAppName || m->procid.size() > kMaxProcId ||
        m->msgid.size() > kMaxMsgId) {
      __builtin_trap();
    }
    if (!hsns::valid_utf8(m->message)) __builtin_trap();
    for (const auto& e : m->structured_data) {
      for (const auto& p : e.params) {
        if (!hsns::valid_utf8(p.value)) __builtin_trap();
      }
    }
  };
  check(input);
  SyslogStreamFramer framer(512);
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  for (const auto part : {input.substr(0, cut), input.substr(cut)}) {
    if (!framer.feed(part, check)) break;
    if (framer.buffered() > 512 + 10) __builtin_trap();
  }
  return 0;
}
