// Data time against receive time: how far a sender's clock is believed.
//
// Contract: a datum's own time (a syslog line's timestamp, an event's ts, a KPI sample's ts) is inside the
// window when received - max_past <= data <= received + max_future. What happens to one outside is the
// caller's rule, documented in docs/security.md ("Data time"): a log line or event keeps its text and takes
// its receive time as its time (clamped); a KPI sample dated beyond max_future is refused (counted as
// `future`), one in the past is left to the KPI store's own late rule. Either way no clock of the brain,
// the alarms or a series moves on one sender's say-so. max_past = 0 switches the past bound off.
#pragma once

#include <chrono>
#include <cstdint>

namespace hsns::ingest {

struct DataTimeWindow {
  std::chrono::milliseconds max_future{std::chrono::minutes(5)};
  std::chrono::milliseconds max_past{std::chrono::hours(24 * 30)};
};

enum class TimeVerdict : std::uint8_t { inside, future, past };

constexpr TimeVerdict judge_data_time(const DataTimeWindow& window, std::int64_t data_ms,
                                      std::int64_t received_ms) {
  // received_ms is a wall-clock time and both bounds are at most years (configuration), so neither sum
  // overflows whatever data_ms a sender wrote.
  if (data_ms > received_ms + window.max_future.count()) return TimeVerdict::future;
  if (window.max_past.count() > 0 && data_ms < received_ms - window.max_past.count())
    return TimeVerdict::past;
  return TimeVerdict::inside;
}

constexpr const char* to_string(TimeVerdict verdict) {
  switch (verdict) {
    case TimeVerdict::inside:
      return "inside";
    case TimeVerdict::future:
      return "future";
    case TimeVerdict::past:
      return "past";
  }
  return "inside";
}

}  // namespace hsns::ingest
