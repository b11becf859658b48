// The counters section of hsnsd's telemetry: one snapshot of the parameter-plane ports' RDMA counters
// (sysfs counters/ and hw_counters/) and netdev counters (sysfs statistics/, the driver's ethtool
// statistics, PFC pause per priority), each with its value, its increase over the interval and that
// increase per second. Written by hsnsd's counters component (daemon/counters, docs/hsnsd.md "Counters");
// a later step sends it to the aggregator in the report batch with the other telemetry sections.
//
// Document kind "counters" (application/vnd.hsns.counters.v1+json / +cbor):
//   {"ts_ms": 1764640000000, "interval_ms": 10000, "resets": 0, "wraps": 0,
//    "read_errors": {"ethtool": 1},
//    "rdma": [{"device": "mlx5_0", "port": 1, "netdev": "ens1f0np0",
//              "counters": {"port_xmit_data": {"value": 4096, "delta": 400, "rate": 40.0}, ...},
//              "hw_counters": {"np_cnp_sent": {...}, ...}}],
//    "netdevs": [{"netdev": "ens1f0np0", "statistics": {...}, "ethtool": {...},
//                 "pause": [{"priority": 3, "rx_frames": {...}, "tx_frames": {...},
//                            "rx_duration_us": {...}, "tx_duration_us": {...}}]}]}
//
// Contract: the rules of hsns/proto/codec.h (strict: unknown members refused, every member required,
// limits below; JSON and CBOR). Units: port_xmit_data and port_rcv_data are bytes (the kernel's 4-byte
// words already multiplied), pause durations microseconds (as mlx5 reports them), everything else the
// count the file or statistic names. A counter name is 1 to kMaxCounterNameLength printable ASCII
// characters without space; a rate is a finite number >= 0; no priority (0..7) twice in one `pause`.
// interval_ms is 0 in the first snapshot (no previous reading: every delta and rate is 0).
// Values only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

inline constexpr std::size_t kMaxCounterPorts = 256;      // rdma entries, and netdev entries
inline constexpr std::size_t kMaxCountersPerSet = 8192;   // mlx5 ethtool -S with many channels: thousands
inline constexpr std::size_t kMaxCounterNameLength = 64;  // sysfs names are short; ETH_GSTRING_LEN is 32
inline constexpr std::size_t kMaxReadErrorSources = 16;

struct CounterSample {
  std::uint64_t value = 0;  // the counter now (in the unit above)
  std::uint64_t delta = 0;  // its increase over the interval, resets and wraps accounted for
  double rate = 0;          // delta per second of the interval
  bool operator==(const CounterSample&) const = default;
};

// Counters by name (sysfs file name or ethtool statistic name).
using CounterSet = std::map<std::string, CounterSample>;

struct RdmaPortCounters {
  std::string device;  // "mlx5_0", "rxe0"
  int port = 1;        // 1..255
  std::string netdev;  // "" when sysfs names none
  CounterSet counters;
  CounterSet hw_counters;
  bool operator==(const RdmaPortCounters&) const = default;
};

// PFC pause of one priority, from the driver's per-priority statistics (mlx5: rx_prio<N>_pause, ...).
struct PriorityPause {
  int priority = 0;  // 0..7
  CounterSample rx_frames;
  CounterSample tx_frames;
  CounterSample rx_duration_us;
  CounterSample tx_duration_us;
  bool operator==(const PriorityPause&) const = default;
};

struct NetdevCounters {
  std::string netdev;
  CounterSet statistics;             // /sys/class/net/<netdev>/statistics
  CounterSet ethtool;                // ETHTOOL_GSTATS, every statistic by its name
  std::vector<PriorityPause> pause;  // by priority, the priorities the driver reports
  bool operator==(const NetdevCounters&) const = default;
};

struct CountersSnapshot {
  std::int64_t ts_ms = 0;         // Unix time of the reading
  std::uint64_t interval_ms = 0;  // since the previous reading; 0 for the first
  std::uint64_t resets = 0;       // counters that went down in this interval and were taken as reset
  std::uint64_t wraps = 0;        // counters that wrapped in this interval
  std::map<std::string, std::uint64_t> read_errors;  // by source, in this interval (docs/hsnsd.md)
  std::vector<RdmaPortCounters> rdma;
  std::vector<NetdevCounters> netdevs;
  bool operator==(const CountersSnapshot&) const = default;
};

// 1 to kMaxCounterNameLength printable ASCII characters without space: what a set may hold.
bool is_counter_name(std::string_view name);

Result<CountersSnapshot> read_counters_snapshot(const nlohmann::json& document);
nlohmann::json to_json(const CountersSnapshot& snapshot);

template <>
struct Kind<CountersSnapshot> {
  static constexpr const char* kName = "counters";
  static constexpr std::size_t kMaxBytes = 32 << 20;
  static Result<CountersSnapshot> read(const nlohmann::json& d) { return read_counters_snapshot(d); }
  static nlohmann::json write(const CountersSnapshot& v) { return to_json(v); }
};

}  // namespace hsns::proto
