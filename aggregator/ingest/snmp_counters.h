// From two walks of a switch's IF-MIB to KPI samples: counter deltas with wrap and reset handling, agent
// restarts, and the samples (pure; no I/O; docs/brain.md, "SNMP polling").
//
// Contract:
// - A poll is what one walk of ifXTable/ifTable read: sysUpTime, the local monotonic and wall times of the
//   walk's first answer, and per ifIndex the interface's ifName, ifHCInOctets/ifHCOutOctets (Counter64),
//   in/out errors and discards (Counter32), ifOperStatus and ifCounterDiscontinuityTime.
// - derive_samples(prev, cur) answers, per interface of cur, `if_oper_status` (its IF-MIB value: 1 up,
//   2 down, ...) and, when prev has the same interface (same ifIndex and ifName), one rate per second for
//   each counter both polls have: if_in_octets_per_s, if_out_octets_per_s, if_in_errors_per_s,
//   if_out_errors_per_s, if_in_discards_per_s, if_out_discards_per_s; all stamped with cur.ts_ms, entity
//   "<device>/<ifName>" (interface_entity). The rate is delta / (cur.steady_ms - prev.steady_ms).
// - No rate (the poll is a new baseline) when: there is no prev; the agent restarted (sysUpTime did not
//   advance by about the local elapsed time: it went back, or jumped; agent_restarted, counted once);
//   the interface's ifCounterDiscontinuityTime changed (counted per interface); a Counter64 went back
//   (a reset: 2^64 octets take years at any link speed, so it is no wrap; counted per counter). A Counter32
//   that went back wrapped once (delta through 2^32; counted per counter).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/kpi_store.h"

namespace hsns::ingest {

// One sample of the KPI store's shape (docs/brain.md): what the poller hands its sink.
// The KPI store's sample (store/kpi_store.h): what the poller produces is stored as it is.
using KpiSample = store::KpiSample;

inline constexpr const char* kIfOperStatus = "if_oper_status";
inline constexpr const char* kIfInOctetsRate = "if_in_octets_per_s";
inline constexpr const char* kIfOutOctetsRate = "if_out_octets_per_s";
inline constexpr const char* kIfInErrorsRate = "if_in_errors_per_s";
inline constexpr const char* kIfOutErrorsRate = "if_out_errors_per_s";
inline constexpr const char* kIfInDiscardsRate = "if_in_discards_per_s";
inline constexpr const char* kIfOutDiscardsRate = "if_out_discards_per_s";

struct SnmpInterface {
  std::string name;                         // ifName (ifXTable)
  std::optional<std::uint64_t> in_octets;   // ifHCInOctets
  std::optional<std::uint64_t> out_octets;  // ifHCOutOctets
  std::optional<std::uint32_t> in_errors;   // ifInErrors
  std::optional<std::uint32_t> out_errors;  // ifOutErrors
  std::optional<std::uint32_t> in_discards;
  std::optional<std::uint32_t> out_discards;
  std::optional<std::int32_t> oper_status;          // ifOperStatus
  std::optional<std::uint32_t> discontinuity_time;  // ifCounterDiscontinuityTime (TimeTicks)
};

struct SnmpPoll {
  std::uint32_t uptime_cs = 0;                        // sysUpTime (hundredths of a second)
  std::int64_t steady_ms = 0;                         // local monotonic time of the walk's first answer
  std::int64_t ts_ms = 0;                             // Unix time of the same moment (the samples' timestamp)
  std::map<std::uint32_t, SnmpInterface> interfaces;  // by ifIndex
  bool truncated = false;                             // the switch has more than max_interfaces rows
};

struct CounterEvents {
  bool agent_restart = false;
  std::size_t counter_resets = 0;   // a Counter64 went back
  std::size_t counter_wraps = 0;    // a Counter32 went through 2^32
  std::size_t discontinuities = 0;  // ifCounterDiscontinuityTime changed
};

// The increase of a Counter64, nullopt when it went back (a reset).
std::optional<std::uint64_t> counter64_delta(std::uint64_t prev, std::uint64_t cur);
// The increase of a Counter32; `wrapped` says it went through 2^32.
std::uint64_t counter32_delta(std::uint32_t prev, std::uint32_t cur, bool& wrapped);
// True when sysUpTime moved from prev_cs to cur_cs (modulo 2^32: a sysUpTime wrap after 497 days is no
// restart) by more than max(elapsed/2, 10 s) away from the local elapsed time.
bool agent_restarted(std::uint32_t prev_cs, std::uint32_t cur_cs, std::int64_t elapsed_ms);
// "<device>/<ifName>"; bytes of ifName outside printable ASCII, space and '/' become '_'; an empty ifName
// gives "if<ifIndex>". At most 256 characters (the KPI store's bound).
std::string interface_entity(std::string_view device, std::uint32_t if_index, std::string_view if_name);

std::vector<KpiSample> derive_samples(std::string_view device, const SnmpPoll* prev, const SnmpPoll& cur,
                                      CounterEvents& events);

}  // namespace hsns::ingest
