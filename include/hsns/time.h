// Timestamps as the REST API, the stores and hsnsd write them.
//
// Contract: format_rfc3339_utc() writes RFC 3339 in UTC with whole seconds and a "Z" suffix
// ("2026-11-29T16:47:53Z"); the fraction of a second is dropped (not rounded). Every timestamp the
// aggregator stores or answers and every one hsnsd reports goes through it, so they compare as text.
// Pure; thread-safe (gmtime_r).
#pragma once

#include <chrono>
#include <string>

namespace hsns {

std::string format_rfc3339_utc(std::chrono::system_clock::time_point t);

}  // namespace hsns
