// The spool payloads hsnsd's reporter sends: each spool record is one telemetry report batch
// (hsns/proto/report.h) in CBOR whose seq is the record's spool seq.
//
// Contract:
// - encode_telemetry_report(document, seq): a report's canonical document (proto::to_json(Report)) with
//   its seq set to `seq`, in CBOR: the bytes proto::encode<Report> writes for that report. The reporter
//   builds the document once, checks it against the wire contract and encodes the same DOM.
// - encode_flow_report(seq, ts_ms, epoch, count, record_at): the report {seq, ts_ms, flows: [{epoch,
//   records: [record_at(0) .. record_at(count - 1)]}]} in CBOR, written record by record: the bytes decode
//   (decode<Report>, Encoding::cbor) to exactly the Report that encode<Report> would have written for the
//   same values; no DOM of a record or of the batch exists. count must be 1..kMaxFlowBatchRecords (the caller
//   checks).
// - FlowReportEncoder: the same report written without any DOM (each record's CBOR straight from its
//   fields through a raw pointer) and streamed: size(seq) is the exact encoded length,
//   write(seq, out) hands the bytes to `out` in pieces of at most about kFlowReportChunk. fill(i, record)
//   sets record i into a proto::FlowRecord the encoder reuses (no allocation per record once its strings
//   have grown). Two ways to hold the records' bytes:
//     keep == nullptr: size() measures them in pieces and write() encodes them again, so a harvest goes into
//       the spool (SpoolParts) without its encoded form ever being whole in memory (several parts of a
//       large harvest);
//     keep != nullptr: size() encodes them once into *keep and write() sends those bytes (no second
//       encode). *keep is reused across encoders and harvests (its buffer only grows: no allocation per
//       harvest once it is large enough); when another encoder took it between size() and write(), write()
//       encodes again into it. *keep must outlive the encoder's write().
//   encode_flow_report is the same writer into one string.
// Values only; thread-safe (one encoder per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "hsns/error.h"
#include "hsns/proto/report.h"

namespace hsns::daemon::report {

std::string encode_telemetry_report(nlohmann::json& document, std::uint64_t seq);

inline constexpr std::size_t kFlowReportChunk = std::size_t{256} * 1024;

// The records' bytes a FlowReportEncoder keeps between size() and write(); see above.
class FlowReportBytes {
 public:
  std::size_t capacity() const { return buf_.size(); }
  // Gives the memory back (the next size() grows it again).
  void release() {
    std::string().swap(buf_);
    used_ = 0;
    owner_ = 0;
  }

 private:
  friend class FlowReportEncoder;
  std::string buf_;  // [0, used_) are the records of encoder owner_
  std::size_t used_ = 0;
  std::uint64_t owner_ = 0;  // FlowReportEncoder::id_ (0: none)
};

class FlowReportEncoder {
 public:
  using Fill = std::function<void(std::size_t i, proto::FlowRecord& record)>;
  FlowReportEncoder(std::int64_t ts_ms, std::uint64_t epoch, std::size_t count, Fill fill,
                    FlowReportBytes* keep = nullptr);
  std::uint64_t size(std::uint64_t seq);
  Result<void> write(std::uint64_t seq, const std::function<Result<void>(std::string_view)>& out);

 private:
  void encode_into(FlowReportBytes& bytes);

  std::int64_t ts_ms_;
  std::uint64_t epoch_;
  std::size_t count_;
  Fill fill_;
  FlowReportBytes* keep_;
  std::uint64_t id_;  // unique per encoder: which one's records a FlowReportBytes holds
  proto::FlowRecord record_;
  std::optional<std::uint64_t> records_bytes_;
};

// The CBOR of one flow record, exactly as nlohmann::json::to_cbor(proto::to_json(record)) writes it.
void append_flow_record_cbor(std::string& out, const proto::FlowRecord& record);

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at);

}  // namespace hsns::daemon::report
