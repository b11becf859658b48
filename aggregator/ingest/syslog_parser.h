// Syslog messages as switches send them: RFC 5424 and RFC 3164 (BSD) lines parsed into one typed message.
//
// Contract:
// - parse_syslog(line, context) reads one message (the payload of one UDP datagram or one TCP frame, without
//   framing; a trailing LF, CR LF or NUL is dropped). It never throws and never reads past the line; every
//   field has the length limit below, the line as a whole at most limits.max_line octets.
// - The format is told by the header: "<PRI>1 " is RFC 5424 (any other VERSION is unsupported_version);
//   anything else after "<PRI>" is read as RFC 3164.
// - RFC 5424: PRI, VERSION, TIMESTAMP (RFC 3339 with up to 6 fraction digits and "Z" or "+hh:mm"; "-" is
//   the receive time), HOSTNAME, APP-NAME, PROCID, MSGID ("-" is empty), STRUCTURED-DATA with the escapes
//   \" \\ \] in values (a backslash before anything else stays), MSG with an optional UTF-8 BOM (after a
//   BOM the message must be well-formed UTF-8; without one, ill-formed bytes become U+FFFD).
// - RFC 3164 and the variants switches send: an optional Cisco sequence number ("123: ", or NX-OS's bare
//   ": ") and an optional "*" or "." sync mark before the timestamp; the timestamp as "Mmm dd hh:mm:ss",
//   "Mmm dd yyyy hh:mm:ss", "yyyy Mmm dd hh:mm:ss" (each with an optional fraction, an optional
//   "UTC"/"GMT"/"Z" zone or a numeric offset "+08:00"/"-0500" (Huawei; an optional " DST" after it), and
//   ":") or RFC 3339; no timestamp at all (the receive time). Then an optional HOSTNAME (missing when the
//   first word is already a TAG: "tag:" or "tag[pid]:", or a vendor mnemonic: "%ETHPORT-5-IF_UP:",
//   "%%01IFNET/4/LINK_STATE(l)[3]:", which stays the start of the message), an optional level word (SONiC:
//   "INFO"), TAG[PID]: and the MSG.
//   A line without a TAG keeps everything after the hostname as the message. A timestamp without a year
//   takes the latest year that puts it at most a day after the receive time; one without a zone is UTC.
// - The result is a SyslogMessage (UTC milliseconds; text fields are well-formed UTF-8 so they can be
//   written as JSON) or a SyslogParseError naming the fault (a fixed set: fault_name() is a metric label)
//   and, in detail, what was wrong at which offset.
// Pure, no I/O; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::ingest {

// api: an event pushed through POST /api/v1/events (api/kpis/events.h), kept beside the syslog messages.
enum class SyslogFormat : std::uint8_t { rfc5424, rfc3164, api };
std::string_view to_string(SyslogFormat format);  // "rfc5424", "rfc3164", "api"

struct SdParam {
  std::string name;
  std::string value;  // unescaped
};

struct SdElement {
  std::string id;
  std::vector<SdParam> params;
};

struct SyslogMessage {
  SyslogFormat format = SyslogFormat::rfc5424;
  int facility = 0;                     // 0..23
  int severity = 0;                     // 0 (emergency) .. 7 (debug)
  std::int64_t timestamp_ms = 0;        // UTC milliseconds since the epoch
  bool timestamp_from_receipt = false;  // the line had no timestamp ("-" or none): receive time
  std::string hostname;                 // "" when the line has none
  std::string app;                      // APP-NAME or TAG
  std::string procid;                   // PROCID or the TAG's [PID]
  std::string msgid;
  std::vector<SdElement> structured_data;
  std::string message;
  std::string source;  // the sender's address, as the receiver gave it
};

// Why a line was refused. The names are metric labels: the set is fixed.
enum class SyslogFault : std::uint8_t {
  empty,
  too_long,
  bad_pri,
  unsupported_version,
  bad_timestamp,
  bad_hostname,
  bad_app_name,
  bad_procid,
  bad_msgid,
  bad_structured_data,
  bad_utf8,
  bad_header,
};
inline constexpr std::size_t kSyslogFaultCount = 12;
std::string_view fault_name(SyslogFault fault);

struct SyslogParseError {
  SyslogFault fault = SyslogFault::bad_header;
  std::string detail;  // what was wrong and where ("TIMESTAMP at offset 7: month 13")
};

struct SyslogLimits {
  std::size_t max_line = 8192;  // octets of one message (RFC 5424 asks receivers for at least 2048)
  std::size_t max_sd_elements = 32;
  std::size_t max_sd_params = 64;  // per element
};

// Field limits of RFC 5424 section 6 (RFC 3164 lines get the same ones).
inline constexpr std::size_t kMaxHostname = 255;
inline constexpr std::size_t kMaxAppName = 48;
inline constexpr std::size_t kMaxProcId = 128;
inline constexpr std::size_t kMaxMsgId = 32;
inline constexpr std::size_t kMaxSdName = 32;

struct SyslogContext {
  std::int64_t receive_time_ms = 0;  // UTC milliseconds; stands in for missing timestamp parts
  std::string_view source;           // copied into SyslogMessage::source
  SyslogLimits limits;
};

tl::expected<SyslogMessage, SyslogParseError> parse_syslog(std::string_view line,
                                                           const SyslogContext& context);

// An RFC 3339 timestamp with an offset ("2026-12-02T05:07:56.123Z"), as the whole text, in UTC
// milliseconds; nullopt when it is not one (the same rules as an RFC 5424 TIMESTAMP).
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);

// Milliseconds since the epoch of a UTC civil time (the caller checks the ranges).
std::int64_t utc_civil_to_ms(int year, unsigned month, unsigned day, int hour, int minute, int second);

}  // namespace hsns::ingest
