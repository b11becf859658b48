#include "hsns/time.h"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using std::chrono::system_clock;

TEST(Rfc3339, FormatsUtcSeconds) {
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::seconds(1795970873))),
            "2026-11-29T16:47:53Z");
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::seconds(0))),
            "1970-01-01T00:00:00Z");
}

TEST(Rfc3339, DropsTheFractionOfASecond) {
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::milliseconds(999))),
            "1970-01-01T00:00:00Z");
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::milliseconds(1795970873999))),
            "2026-11-29T16:47:53Z");
}

TEST(Rfc3339, PadsEveryFieldAndHandlesLeapDays) {
  // 2024-02-29T01:02:03Z: a leap day, single-digit hour, minute and second.
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::seconds(1709168523))),
            "2024-02-29T01:02:03Z");
  // The last second of a year.
  EXPECT_EQ(hsns::format_rfc3339_utc(system_clock::time_point(std::chrono::seconds(1767225599))),
            "2025-12-31T23:59:59Z");
}

TEST(UnixNowMs, IsTheSystemClockInMilliseconds) {
  const auto ms = [](system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  };
  const auto before = ms(system_clock::now());
  const auto now = hsns::unix_now_ms();
  const auto after = ms(system_clock::now());
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

}  // namespace
