// The spool payloads hsnsd's reporter sends: each spool record is one telemetry report batch
// (hsns/proto/report.h) in CBOR whose seq is the record's spool seq.
//
// Contract:
// - encode_telemetry_report(report): proto::encode<Report> in CBOR (the canonical document).
// - encode_flow_report(seq, ts_ms, epoch, count, record_at): the report {seq, ts_ms, flows: [{epoch,
//   records: [record_at(0) .. record_at(count - 1)]}]} in CBOR, written record by record: the bytes decode
//   (decode<Report>, Encoding::cbor) to exactly the Report that encode<Report> would have written for the
//   same values, but only one record's DOM exists at a time, so a 100,000-flow harvest costs its encoded
//   bytes and not a DOM of the whole batch. count must be 1..kMaxFlowBatchRecords (the caller checks).
// Values only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "hsns/proto/report.h"

namespace hsns::daemon::report {

std::string encode_telemetry_report(const proto::Report& report);

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at);

}  // namespace hsns::daemon::report
