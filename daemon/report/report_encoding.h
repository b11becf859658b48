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
// - FlowReportEncoder: the same report written without any DOM (each record's CBOR straight from its
//   fields, ~0.2 us a record) and streamed: size(seq) is the exact encoded length (records measured once),
//   write(seq, out) hands the bytes to `out` in pieces of about kFlowReportChunk, so a harvest goes into the
//   spool (SpoolParts) without its encoded form ever being whole in memory. fill(i, record) sets record i
//   into a proto::FlowRecord the encoder reuses (no allocation per record once its strings have grown).
//   encode_flow_report is this encoder writing into one string.
// Values only; thread-safe (one encoder per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hsns/error.h"
#include "hsns/proto/report.h"

namespace hsns::daemon::report {

std::string encode_telemetry_report(const proto::Report& report);

inline constexpr std::size_t kFlowReportChunk = 256 * 1024;

class FlowReportEncoder {
 public:
  using Fill = std::function<void(std::size_t i, proto::FlowRecord& record)>;
  FlowReportEncoder(std::int64_t ts_ms, std::uint64_t epoch, std::size_t count, Fill fill)
      : ts_ms_(ts_ms), epoch_(epoch), count_(count), fill_(std::move(fill)) {}
  std::uint64_t size(std::uint64_t seq);
  Result<void> write(std::uint64_t seq, const std::function<Result<void>(std::string_view)>& out);

 private:
  std::int64_t ts_ms_;
  std::uint64_t epoch_;
  std::size_t count_;
  Fill fill_;
  proto::FlowRecord record_;
  std::optional<std::uint64_t> records_bytes_;
};

// The CBOR of one flow record, exactly as nlohmann::json::to_cbor(proto::to_json(record)) writes it.
void append_flow_record_cbor(std::string& out, const proto::FlowRecord& record);

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at);

}  // namespace hsns::daemon::report
