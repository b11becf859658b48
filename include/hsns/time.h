// Timestamps as the REST API, the stores and hsnsd write them.
//
// Contract: unix_now_ms() is the system clock now in Unix milliseconds (what the API's `*_ms` fields and
// the stores hold). format_rfc3339_utc() writes RFC 3339 in UTC with whole seconds and a "Z" suffix
// ("2026-11-29T16:47:53Z"); the fraction of a second is dropped (not rounded). Every timestamp the
// aggregator stores or answers and every one hsnsd reports goes through it, so they compare as text.
// Pure; thread-safe (gmtime_r).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hsns {

std::int64_t unix_now_ms();

std::string format_rfc3339_utc(std::chrono::system_clock::time_point t);

}  // namespace hsns
