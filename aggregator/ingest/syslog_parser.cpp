#include "ingest/syslog_parser.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "hsns/utf8.h"

namespace hsns::ingest {
namespace {

using Fail = tl::unexpected<SyslogParseError>;

Fail fail(SyslogFault fault, std::size_t offset, std::string what) {
  return Fail(SyslogParseError{fault, std::string(fault_name(fault)) + " at offset " +
                                          std::to_string(offset) + ": " + std::move(what)});
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
// PRINTUSASCII of RFC 5424: %d33-126.
bool is_print(char c) {
  return c >= 33 && c <= 126;
}

// Reads `count` digits at s[pos]; nullopt when they are not all there.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t count) {
  if (pos + count > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!is_digit(s[pos + i])) return std::nullopt;
    v = v * 10 + (s[pos + i] - '0');
  }
  return v;
}

// Ill-formed UTF-8 becomes U+FFFD, so that every text field can be written as JSON.
std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// A time of day with an optional fraction: "hh:mm:ss[.f{1,6}]"; pos moves past it.
struct TimeOfDay {
  int hour = 0;
  int minute = 0;
  int second = 0;
  int millis = 0;
};
std::optional<TimeOfDay> read_time_of_day(std::string_view s, std::size_t& pos) {
  const auto h = digits(s, pos, 2);
  const auto m = digits(s, pos + 3, 2);
  const auto sec = digits(s, pos + 6, 2);
  if (!h || !m || !sec || s[pos + 2] != ':' || s[pos + 5] != ':') return std::nullopt;
  if (*h > 23 || *m > 59 || *sec > 59) return std::nullopt;  // RFC 5424 forbids leap seconds
  TimeOfDay t{*h, *m, *sec, 0};
  pos += 8;
  if (pos < s.size() && s[pos] == '.') {
    std::size_t n = 0;
    int scaled = 0;
    while (pos + 1 + n < s.size() && is_digit(s[pos + 1 + n])) {
      if (n < 3) scaled = scaled * 10 + (s[pos + 1 + n] - '0');
      ++n;
    }
    if (n == 0 || n > 6) return std::nullopt;
    for (std::size_t i = n; i < 3; ++i) scaled *= 10;
    t.millis = scaled;
    pos += 1 + n;
  }
  return t;
}

bool civil_ok(int year, unsigned month, unsigned day) {
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month},
                                         std::chrono::day{day}};
  return year >= 1970 && year <= 9999 && date.ok();
}

// "YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm|-hh:mm)" at s[pos..]; without an offset (allowed only when
// offset_optional) the time is UTC. pos moves past it.
std::optional<std::int64_t> read_rfc3339(std::string_view s, std::size_t& pos, bool offset_optional) {
  const auto y = digits(s, pos, 4);
  const auto mo = digits(s, pos + 5, 2);
  const auto d = digits(s, pos + 8, 2);
  if (!y || !mo || !d || s[pos + 4] != '-' || s[pos + 7] != '-' || pos + 10 >= s.size() ||
      s[pos + 10] != 'T') {
    return std::nullopt;
  }
  if (!civil_ok(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d))) return std::nullopt;
  std::size_t p = pos + 11;
  const auto t = read_time_of_day(s, p);
  if (!t) return std::nullopt;
  std::int64_t offset_minutes = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const auto oh = digits(s, p + 1, 2);
    const auto om = digits(s, p + 4, 2);
    if (!oh || !om || s[p + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset_minutes = std::int64_t{s[p] == '-' ? -1 : 1} * (*oh * 60 + *om);
    p += 6;
  } else if (!offset_optional) {
    return std::nullopt;
  }
  pos = p;
  return utc_civil_to_ms(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d), t->hour, t->minute,
                         t->second) +
         t->millis - offset_minutes * 60'000;
}

// "<PRI>": 1 to 3 digits without a leading zero (but "<0>"), at most 191.
tl::expected<int, SyslogParseError> read_pri(std::string_view s, std::size_t& pos) {
  if (s.empty() || s[0] != '<') return fail(SyslogFault::bad_pri, 0, "the line does not start with '<'");
  std::size_t n = 0;
  int value = 0;
  while (1 + n < s.size() && is_digit(s[1 + n]) && n < 4) {
    value = value * 10 + (s[1 + n] - '0');
    ++n;
  }
  if (n == 0 || n > 3 || 1 + n >= s.size() || s[1 + n] != '>') {
    return fail(SyslogFault::bad_pri, 1, "PRI is not 1 to 3 digits closed by '>'");
  }
  if (n > 1 && s[1] == '0') return fail(SyslogFault::bad_pri, 1, "PRI has a leading zero");
  if (value > 191) return fail(SyslogFault::bad_pri, 1, "PRI " + std::to_string(value) + " is above 191");
  pos = n + 2;
  return value;
}

// The next header field of an RFC 5424 line: printable ASCII up to SP or the end, 1 to `max` octets;
// "-" is the empty value. pos moves past the field and the SP after it.
tl::expected<std::string, SyslogParseError> read_field(std::string_view s, std::size_t& pos,
                                                       SyslogFault fault, std::string_view name,
                                                       std::size_t max) {
  if (pos >= s.size()) return fail(fault, pos, "the line ends before " + std::string(name));
  const std::size_t start = pos;
  while (pos < s.size() && s[pos] != ' ') {
    if (!is_print(s[pos]))
      return fail(fault, pos, std::string(name) + " has a character that is not printable ASCII");
    ++pos;
  }
  const auto value = s.substr(start, pos - start);
  if (value.empty()) return fail(fault, start, std::string(name) + " is empty");
  if (value.size() > max) {
    return fail(fault, start, std::string(name) + " is longer than " + std::to_string(max) + " octets");
  }
  if (pos < s.size()) ++pos;  // the SP
  if (value == "-") return std::string();
  return std::string(value);
}

// One SD-NAME (SD-ID or PARAM-NAME): printable ASCII but '=', SP, ']' and '"', 1 to 32 octets.
tl::expected<std::string, SyslogParseError> read_sd_name(std::string_view s, std::size_t& pos,
                                                         std::string_view what) {
  const std::size_t start = pos;
  while (pos < s.size() && is_print(s[pos]) && s[pos] != '=' && s[pos] != ']' && s[pos] != '"') ++pos;
  if (pos == start || pos - start > kMaxSdName) {
    return fail(SyslogFault::bad_structured_data, start,
                std::string(what) + " is not 1 to 32 printable octets");
  }
  return std::string(s.substr(start, pos - start));
}

// STRUCTURED-DATA: "-" or one or more "[SD-ID *(SP NAME="VALUE")]"; pos moves past it.
tl::expected<std::vector<SdElement>, SyslogParseError> read_structured_data(std::string_view s,
                                                                            std::size_t& pos,
                                                                            const SyslogLimits& limits) {
  std::vector<SdElement> elements;
  if (pos >= s.size())
    return fail(SyslogFault::bad_structured_data, pos, "the line ends before STRUCTURED-DATA");
  if (s[pos] == '-') {
    ++pos;
    return elements;
  }
  if (s[pos] != '[')
    return fail(SyslogFault::bad_structured_data, pos, "STRUCTURED-DATA is neither '-' nor '['");
  while (pos < s.size() && s[pos] == '[') {
    if (elements.size() == limits.max_sd_elements) {
      return fail(SyslogFault::bad_structured_data, pos,
                  "more than " + std::to_string(limits.max_sd_elements) + " SD-ELEMENTs");
    }
    ++pos;
    SdElement element;
    auto id = read_sd_name(s, pos, "SD-ID");
    if (!id) return tl::unexpected(std::move(id.error()));
    element.id = std::move(*id);
    while (pos < s.size() && s[pos] == ' ') {
      ++pos;
      if (element.params.size() == limits.max_sd_params) {
        return fail(SyslogFault::bad_structured_data, pos,
                    "more than " + std::to_string(limits.max_sd_params) + " SD-PARAMs in one element");
      }
      auto name = read_sd_name(s, pos, "PARAM-NAME");
      if (!name) return tl::unexpected(std::move(name.error()));
      if (pos + 1 >= s.size() || s[pos] != '=' || s[pos + 1] != '"') {
        return fail(SyslogFault::bad_structured_data, pos, "PARAM-NAME is not followed by '=\"'");
      }
      pos += 2;
      std::string value;
      bool closed = false;
      while (pos < s.size()) {
        const char c = s[pos];
        if (c == '"') {
          closed = true;
          ++pos;
          break;
        }
        // Only \" \\ and \] are escapes; a backslash before anything else is itself (RFC 5424 6.3.3).
        if (c == '\\' && pos + 1 < s.size() &&
            (s[pos + 1] == '"' || s[pos + 1] == '\\' || s[pos + 1] == ']')) {
          value += s[pos + 1];
          pos += 2;
          continue;
        }
        value += c;
        ++pos;
      }
      if (!closed) return fail(SyslogFault::bad_structured_data, pos, "PARAM-VALUE is not closed by '\"'");
      element.params.push_back({std::move(*name), sanitize_utf8(value)});
    }
    if (pos >= s.size() || s[pos] != ']') {
      return fail(SyslogFault::bad_structured_data, pos, "SD-ELEMENT is not closed by ']'");
    }
    ++pos;
    elements.push_back(std::move(element));
  }
  return elements;
}

// MSG: an optional BOM, after which the text must be UTF-8; ill-formed bytes of a message without one
// become U+FFFD.
tl::expected<std::string, SyslogParseError> read_msg(std::string_view s, std::size_t pos) {
  auto msg = s.substr(std::min(pos, s.size()));
  if (msg.starts_with(kBom)) {
    msg.remove_prefix(kBom.size());
    if (!valid_utf8(msg))
      return fail(SyslogFault::bad_utf8, pos, "MSG has a BOM but is not well-formed UTF-8");
    return std::string(msg);
  }
  return sanitize_utf8(msg);
}

tl::expected<SyslogMessage, SyslogParseError> parse_5424(std::string_view s, std::size_t pos, SyslogMessage m,
                                                         const SyslogContext& context) {
  if (pos >= s.size()) return fail(SyslogFault::bad_header, pos, "the line ends before TIMESTAMP");
  if (s[pos] == '-') {
    m.timestamp_ms = context.receive_time_ms;
    m.timestamp_from_receipt = true;
    ++pos;
  } else {
    const std::size_t start = pos;
    const auto t = read_rfc3339(s, pos, false);
    if (!t)
      return fail(SyslogFault::bad_timestamp, start, "TIMESTAMP is not an RFC 3339 time with an offset");
    m.timestamp_ms = *t;
  }
  if (pos >= s.size() || s[pos] != ' ')
    return fail(SyslogFault::bad_timestamp, pos, "TIMESTAMP is not followed by SP");
  ++pos;
  auto host = read_field(s, pos, SyslogFault::bad_hostname, "HOSTNAME", kMaxHostname);
  if (!host) return tl::unexpected(std::move(host.error()));
  auto app = read_field(s, pos, SyslogFault::bad_app_name, "APP-NAME", kMaxAppName);
  if (!app) return tl::unexpected(std::move(app.error()));
  auto procid = read_field(s, pos, SyslogFault::bad_procid, "PROCID", kMaxProcId);
  if (!procid) return tl::unexpected(std::move(procid.error()));
  auto msgid = read_field(s, pos, SyslogFault::bad_msgid, "MSGID", kMaxMsgId);
  if (!msgid) return tl::unexpected(std::move(msgid.error()));
  if (s[pos - 1] != ' ') return fail(SyslogFault::bad_header, pos, "the line ends before STRUCTURED-DATA");
  auto sd = read_structured_data(s, pos, context.limits);
  if (!sd) return tl::unexpected(std::move(sd.error()));
  if (pos < s.size()) {
    if (s[pos] != ' ')
      return fail(SyslogFault::bad_structured_data, pos, "STRUCTURED-DATA is not followed by SP");
    auto msg = read_msg(s, pos + 1);
    if (!msg) return tl::unexpected(std::move(msg.error()));
    m.message = std::move(*msg);
  }
  m.hostname = std::move(*host);
  m.app = std::move(*app);
  m.procid = std::move(*procid);
  m.msgid = std::move(*msgid);
  m.structured_data = std::move(*sd);
  return m;
}

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// 1..12 for a month abbreviation at s[pos] followed by SP, 0 otherwise.
unsigned month_at(std::string_view s, std::size_t pos) {
  if (pos + 4 > s.size() || s[pos + 3] != ' ') return 0;
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (s.substr(pos, 3) == kMonths[i]) return static_cast<unsigned>(i + 1);
  }
  return 0;
}

// The latest year (of the receive year, one before and one after) that puts a yearless time no more than a
// day after the receive time: a sender's clock may run a little ahead, but a log line is not from the future
// (received on 2 December, "Dec 31" is last year's; received on 31 December, "Jan  1" is next year's).
std::optional<std::int64_t> closest_year(unsigned month, unsigned day, const TimeOfDay& t,
                                         std::int64_t receive_ms) {
  using namespace std::chrono;
  const auto receive_day = floor<days>(sys_time<milliseconds>(milliseconds(receive_ms)));
  const int receive_year = static_cast<int>(year_month_day(receive_day).year());
  constexpr std::int64_t kSkewMs = 86'400'000;
  for (int y = receive_year + 1; y >= receive_year - 1; --y) {
    if (!civil_ok(y, month, day)) continue;
    const auto ms = utc_civil_to_ms(y, month, day, t.hour, t.minute, t.second) + t.millis;
    if (ms <= receive_ms + kSkewMs) return ms;
  }
  return std::nullopt;
}

// "+hh:mm", "-hh:mm", "+hhmm" or "-hhmm" at s[pos], followed by the end, SP or ':': the offset in minutes
// east of UTC, pos moved past it; nullopt (pos unchanged) when there is none.
std::optional<std::int64_t> read_zone_offset(std::string_view s, std::size_t& pos) {
  if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) return std::nullopt;
  const auto hours = digits(s, pos + 1, 2);
  if (!hours || *hours > 23) return std::nullopt;
  std::size_t p = pos + 3;
  if (p < s.size() && s[p] == ':') ++p;
  const auto minutes = digits(s, p, 2);
  if (!minutes || *minutes > 59) return std::nullopt;
  p += 2;
  if (p < s.size() && s[p] != ' ' && s[p] != ':') return std::nullopt;
  const std::int64_t sign = s[pos] == '-' ? -1 : 1;
  pos = p;
  return sign * (*hours * 60 + *minutes);
}

// The BSD timestamp variants at s[pos] (see the header). nullopt with pos unchanged: no timestamp there;
// an error: one started but is not valid.
tl::expected<std::optional<std::int64_t>, SyslogParseError> read_bsd_timestamp(std::string_view s,
                                                                               std::size_t& pos,
                                                                               const SyslogContext& context) {
  const std::size_t start = pos;
  std::size_t p = pos;
  if (p < s.size() && (s[p] == '*' || s[p] == '.')) ++p;  // Cisco: clock not synchronised / lost sync
  std::optional<int> year;
  unsigned month = 0;
  if (const auto y = digits(s, p, 4); y && p + 4 < s.size() && s[p + 4] == '-') {
    std::size_t q = p;
    const auto t = read_rfc3339(s, q, true);
    if (!t) return fail(SyslogFault::bad_timestamp, start, "the ISO 8601 timestamp is not valid");
    pos = q;
    return std::optional<std::int64_t>(*t);
  } else if (y && p + 4 < s.size() && s[p + 4] == ' ' && month_at(s, p + 5) != 0) {
    year = *y;  // NX-OS: "2023 Oct 12 09:15:02"
    p += 5;
  }
  month = month_at(s, p);
  if (month == 0) {
    if (year) return fail(SyslogFault::bad_timestamp, start, "a year is not followed by a month");
    return std::optional<std::int64_t>();
  }
  p += 4;
  if (p < s.size() && s[p] == ' ') ++p;  // space-padded day: "Oct  2"
  std::optional<int> day = digits(s, p, 2);
  if (day) {
    p += 2;
  } else if ((day = digits(s, p, 1))) {
    p += 1;
  }
  if (!day || p >= s.size() || s[p] != ' ')
    return fail(SyslogFault::bad_timestamp, start, "no day after the month");
  ++p;
  if (!year) {
    if (const auto y = digits(s, p, 4); y && p + 4 < s.size() && s[p + 4] == ' ') {
      year = *y;  // Huawei, IOS with "year": "Oct 12 2023 09:15:02"
      p += 5;
    }
  }
  const auto t = read_time_of_day(s, p);
  if (!t) return fail(SyslogFault::bad_timestamp, start, "no hh:mm:ss time of day");
  for (const std::string_view zone : {" UTC", " GMT", " Z"}) {
    if (s.substr(p).starts_with(zone) &&
        (p + zone.size() == s.size() || s[p + zone.size()] == ' ' || s[p + zone.size()] == ':')) {
      p += zone.size();
      break;
    }
  }
  // A numeric zone offset right after the time (Huawei VRP: "18:00:00+08:00", optionally " DST" after it):
  // the time is local, the offset gives UTC.
  std::int64_t offset_minutes = 0;
  if (const auto offset = read_zone_offset(s, p)) {
    offset_minutes = *offset;
    if (s.substr(p).starts_with(" DST") && (p + 4 == s.size() || s[p + 4] == ' ')) p += 4;
  }
  if (p < s.size() && s[p] == ':') ++p;  // Cisco ends the timestamp with ':'
  const auto m = static_cast<unsigned>(month);
  const auto d = static_cast<unsigned>(*day);
  std::optional<std::int64_t> ms;
  if (year) {
    if (civil_ok(*year, m, d)) ms = utc_civil_to_ms(*year, m, d, t->hour, t->minute, t->second) + t->millis;
  } else {
    ms = closest_year(m, d, *t, context.receive_time_ms);
  }
  if (!ms) return fail(SyslogFault::bad_timestamp, start, "the date does not exist");
  pos = p;
  return *ms - offset_minutes * 60'000;
}

// A TAG at s[pos]: 1 to 48 printable octets but '[' and ':', an optional "[PID]", then ':'. On success pos
// moves past the ':' and one SP after it.
bool read_tag(std::string_view s, std::size_t& pos, std::string& tag, std::string& pid) {
  std::size_t p = pos;
  while (p < s.size() && is_print(s[p]) && s[p] != '[' && s[p] != ':') ++p;
  if (p == pos || p - pos > kMaxAppName || p >= s.size()) return false;
  std::string_view found_pid;
  if (s[p] == '[') {
    const auto close = s.find(']', p + 1);
    if (close == std::string_view::npos || close == p + 1 || close - p - 1 > kMaxProcId) return false;
    found_pid = s.substr(p + 1, close - p - 1);
    for (const char c : found_pid) {
      if (!is_print(c)) return false;
    }
  }
  const auto name = s.substr(pos, p - pos);
  if (!found_pid.empty()) p += found_pid.size() + 2;
  if (p >= s.size() || s[p] != ':') return false;
  tag.assign(name);
  pid.assign(found_pid);
  ++p;
  if (p < s.size() && s[p] == ' ') ++p;
  pos = p;
  return true;
}

// A vendor's message mnemonic starts here: "%FACILITY-SEVERITY-MNEMONIC" (IOS, NX-OS, EOS) or "%%01..."
// (Huawei VRP).
bool starts_mnemonic(std::string_view s, std::size_t pos) {
  return pos + 1 < s.size() && s[pos] == '%' &&
         (s[pos + 1] == '%' || (s[pos + 1] >= 'A' && s[pos + 1] <= 'Z'));
}

bool is_level_word(std::string_view w) {
  for (const std::string_view level :
       {"EMERG", "ALERT", "CRIT", "ERR", "ERROR", "WARNING", "WARN", "NOTICE", "INFO", "DEBUG"}) {
    if (w == level) return true;
  }
  return false;
}

tl::expected<SyslogMessage, SyslogParseError> parse_3164(std::string_view s, std::size_t pos, SyslogMessage m,
                                                         const SyslogContext& context) {
  m.format = SyslogFormat::rfc3164;
  // Cisco IOS sequence number: "<189>123: Oct 12 ..."
  {
    std::size_t p = pos;
    while (p < s.size() && is_digit(s[p]) && p - pos < 10) ++p;
    // NX-OS without sequence numbers still writes the ": " ("<189>: 2026 Dec  7 ...").
    if (p + 1 < s.size() && s[p] == ':' && s[p + 1] == ' ') pos = p + 2;
  }
  auto ts = read_bsd_timestamp(s, pos, context);
  if (!ts) return tl::unexpected(std::move(ts.error()));
  if (*ts) {
    m.timestamp_ms = **ts;
    if (pos < s.size() && s[pos] == ' ') ++pos;
  } else {
    m.timestamp_ms = context.receive_time_ms;
    m.timestamp_from_receipt = true;
  }
  // A line with a timestamp has a HOSTNAME unless the first word is already a TAG or a message mnemonic
  // ("%ETHPORT-5-IF_DOWN_LINK_FAILURE:", Huawei "%%01IFNET/4/LINK_STATE(l)[12]:"): NX-OS's default header
  // has no hostname, and the mnemonic stays in the message, where the vendors' catalogues put it.
  if (*ts && starts_mnemonic(s, pos)) {
    // no hostname, no tag
  } else if (*ts && !read_tag(s, pos, m.app, m.procid)) {
    const std::size_t start = pos;
    while (pos < s.size() && s[pos] != ' ') {
      if (!is_print(s[pos]))
        return fail(SyslogFault::bad_hostname, pos, "HOSTNAME has a character that is not printable ASCII");
      ++pos;
    }
    if (pos - start > kMaxHostname) {
      return fail(SyslogFault::bad_hostname, start,
                  "HOSTNAME is longer than " + std::to_string(kMaxHostname) + " octets");
    }
    m.hostname.assign(s.substr(start, pos - start));
    if (pos < s.size()) ++pos;
    std::size_t after_level = pos;
    while (after_level < s.size() && s[after_level] != ' ') ++after_level;
    if (after_level < s.size() && is_level_word(s.substr(pos, after_level - pos))) {
      std::size_t p = after_level + 1;
      if (read_tag(s, p, m.app, m.procid)) pos = p;
    }
    if (m.app.empty() && !starts_mnemonic(s, pos)) read_tag(s, pos, m.app, m.procid);
  } else if (!*ts && !starts_mnemonic(s, pos)) {
    read_tag(s, pos, m.app, m.procid);
  }
  auto msg = read_msg(s, pos);
  if (!msg) return tl::unexpected(std::move(msg.error()));
  m.message = std::move(*msg);
  return m;
}

}  // namespace

std::string_view to_string(SyslogFormat format) {
  switch (format) {
    case SyslogFormat::rfc5424:
      return "rfc5424";
    case SyslogFormat::rfc3164:
      return "rfc3164";
    case SyslogFormat::api:
      return "api";
  }
  return "rfc5424";
}

std::string_view fault_name(SyslogFault fault) {
  switch (fault) {
    case SyslogFault::empty:
      return "empty";
    case SyslogFault::too_long:
      return "too_long";
    case SyslogFault::bad_pri:
      return "bad_pri";
    case SyslogFault::unsupported_version:
      return "unsupported_version";
    case SyslogFault::bad_timestamp:
      return "bad_timestamp";
    case SyslogFault::bad_hostname:
      return "bad_hostname";
    case SyslogFault::bad_app_name:
      return "bad_app_name";
    case SyslogFault::bad_procid:
      return "bad_procid";
    case SyslogFault::bad_msgid:
      return "bad_msgid";
    case SyslogFault::bad_structured_data:
      return "bad_structured_data";
    case SyslogFault::bad_utf8:
      return "bad_utf8";
    case SyslogFault::bad_header:
      return "bad_header";
  }
  return "bad_header";
}

std::int64_t utc_civil_to_ms(int year, unsigned month, unsigned day, int hour, int minute, int second) {
  using namespace std::chrono;
  const sys_days date = std::chrono::year{year} / std::chrono::month{month} / std::chrono::day{day};
  return duration_cast<milliseconds>(date.time_since_epoch()).count() +
         ((static_cast<std::int64_t>(hour) * 60 + minute) * 60 + second) * 1000;
}

std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text) {
  std::size_t pos = 0;
  auto ms = read_rfc3339(text, pos, false);
  if (!ms || pos != text.size()) return std::nullopt;
  return ms;
}

tl::expected<SyslogMessage, SyslogParseError> parse_syslog(std::string_view line,
                                                           const SyslogContext& context) {
  if (line.size() > context.limits.max_line) {
    return fail(SyslogFault::too_long, context.limits.max_line,
                "the message is longer than " + std::to_string(context.limits.max_line) + " octets");
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == '\0'))
    line.remove_suffix(1);
  if (line.empty()) return fail(SyslogFault::empty, 0, "the message is empty");
  std::size_t pos = 0;
  const auto pri = read_pri(line, pos);
  if (!pri) return tl::unexpected(pri.error());
  SyslogMessage m;
  m.facility = *pri / 8;
  m.severity = *pri % 8;
  m.source.assign(context.source);
  // VERSION: NONZERO-DIGIT 0*2DIGIT followed by SP.
  std::size_t v = pos;
  while (v < line.size() && is_digit(line[v]) && v - pos < 4) ++v;
  if (v > pos && v - pos <= 3 && line[pos] != '0' && v < line.size() && line[v] == ' ') {
    if (line.substr(pos, v - pos) != "1") {
      return fail(SyslogFault::unsupported_version, pos,
                  "VERSION " + std::string(line.substr(pos, v - pos)) + " is not 1");
    }
    return parse_5424(line, v + 1, std::move(m), context);
  }
  return parse_3164(line, pos, std::move(m), context);
}

}  // namespace hsns::ingest
