// The telemetry report batch: what hsnsd's reporter sends to the aggregator (POST
// /api/v1/agents/{host}/reports), one sequence-numbered batch of the daemon's telemetry sections.
//
// Document kind "report" (application/vnd.hsns.report.v1+cbor, the form hsnsd sends, and +json):
//   {"seq": 42, "ts_ms": 1764640000000,
//    "counters": {...counters document (hsns/proto/counters.h)...},
//    "qp":       {...qp-inventory document (hsns/proto/qp.h)...},
//    "optics":   {...optics-report document (hsns/proto/optics.h)...},
//    "lldp":     {...lldp-neighbors document (hsns/proto/lldp.h)...},
//    "flows":    [{"epoch": 7, "fields": [...], "rows": [[...values of one flow record...], ...]}, ...],
//    "ports":    [{"name": "ens1f0np0", "oper_state": "up", "speed_mbps": 100000}, ...]}
//
// Contract: the rules of hsns/proto/codec.h (strict: unknown members refused, JSON and CBOR, limits
// below and Kind<Report>::kMaxBytes checked before decoding).
// - seq is the batch's sequence number, >= 1, increasing per host; the aggregator acknowledges it and
//   stores a batch of one (host, seq) once. ts_ms is the Unix time the batch was closed.
// - Sections are present only when there is something in them: every section is optional, and "flows"
//   and "ports", when present, are non-empty lists (an empty list is refused: omit the member). A report
//   with no section at all is valid (a heartbeat).
// - Each section is read by that section's own reader (read_counters_snapshot, read_qp_inventory,
//   read_optics_report, read_lldp_neighbors, read_flow_record); a finding inside a section is named
//   with the section's member as prefix ("qp.qps[3].lqpn", "flows[0].rows[12].sport").
// - A flow batch is one harvest of the flow probe: its epoch and its records, in one of two forms: "rows"
//   with "fields" (the rows form of flows.h: what hsnsd sends) or "records", a flow record document each
//   (what earlier hsnsd sent, still in their spools; the records' own "epoch" member, when present, must
//   equal the batch's). Both read into the same ReportFlowBatch; to_json writes "records" (the
//   canonical, readable form). Records per batch at most kMaxFlowBatchRecords
//   (flows.h), batches per report at most kMaxReportFlowBatches, records per report at most
//   kMaxReportFlowRecords.
// - ports: one entry per parameter-plane netdev, names unique, oper_state one of kPortOperStates (the
//   kernel's operstate words), speed_mbps optional (absent when the link reports none), at most
//   kMaxReportPortStates entries.
// - encode<Report>() writes the canonical document; decode<Report>(encode<Report>(r)) == r.
// Values only; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/codec.h"
#include "hsns/proto/counters.h"
#include "hsns/proto/flows.h"
#include "hsns/proto/lldp.h"
#include "hsns/proto/optics.h"
#include "hsns/proto/qp.h"

namespace hsns::proto {

inline constexpr std::size_t kMaxReportFlowBatches = 64;
inline constexpr std::size_t kMaxReportFlowRecords = std::size_t{1} << 18;
inline constexpr std::size_t kMaxReportPortStates = 1024;
inline constexpr std::uint32_t kMaxPortSpeedMbps = 10'000'000;  // 10 Tb/s: room for every link to come

// /sys/class/net/<netdev>/operstate (RFC 2863 IF-MIB ifOperStatus words as the kernel prints them).
inline constexpr std::array<const char*, 7> kPortOperStates = {
    "unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"};

struct ReportFlowBatch {
  std::uint64_t epoch = 0;
  std::vector<FlowRecord> records;  // 1..kMaxFlowBatchRecords
  bool operator==(const ReportFlowBatch&) const = default;
};

struct PortOperState {
  std::string name;                         // the netdev
  std::string oper_state = "unknown";       // one of kPortOperStates
  std::optional<std::uint32_t> speed_mbps;  // absent when the link reports no speed
  bool operator==(const PortOperState&) const = default;
};

struct Report {
  std::uint64_t seq = 1;
  std::int64_t ts_ms = 0;
  std::optional<CountersSnapshot> counters;
  std::optional<QpInventory> qp;
  std::optional<OpticsReport> optics;
  std::optional<LldpNeighbors> lldp;
  std::vector<ReportFlowBatch> flows;  // empty: the section is absent
  std::vector<PortOperState> ports;    // empty: the section is absent
  bool operator==(const Report&) const = default;

  // Flow records of every batch (for limits, metrics and the benchmark).
  std::size_t flow_records() const;
};

Result<Report> read_report(const nlohmann::json& document);
nlohmann::json to_json(const Report& report);

template <>
struct Kind<Report> {
  static constexpr const char* kName = "report";
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  static Result<Report> read(const nlohmann::json& d) { return read_report(d); }
  static nlohmann::json write(const Report& v) { return to_json(v); }
};

}  // namespace hsns::proto
