// The spool payloads hsnsd's reporter sends: each spool record is one telemetry report batch
// (hsns/proto/report.h) in CBOR whose seq is the record's spool seq.
//
// Contract:
// - encode_telemetry_report(document, seq): a report's canonical document (proto::to_json(Report)) with
//   its seq set to `seq`, in CBOR: the bytes proto::encode<Report> writes for that report. The reporter
//   builds the document once, checks it against the wire contract and encodes the same DOM.
// - FlowRow: one flow record's values as the harvester holds them (addresses as bytes, no host), what the
//   flow report is written from.
// - encode_flow_report(seq, ts_ms, epoch, count, row_at): the report {seq, ts_ms, flows: [{epoch, fields,
//   rows: [row_at(0) .. row_at(count - 1)]}]} in CBOR, in the rows form of hsns/proto/flows.h (fields
//   proto::kFlowRowFields in that order; addresses as byte strings), written row by row: no DOM of a record
//   or of the batch exists. It decodes (decode<Report>, Encoding::cbor) to the Report whose batch holds
//   each row's record (flow_record_of: no host, the batch's epoch). count must be 1..kMaxFlowBatchRecords
//   (the caller checks).
// - FlowReportEncoder: the same report written without any DOM (each row's CBOR straight from its
//   values through a raw pointer) and streamed: size(seq) is the exact encoded length,
//   write(seq, out) hands the bytes to `out` in pieces of at most about kFlowReportChunk. fill(i, row)
//   sets row i into a FlowRow the encoder reuses. Two ways to hold the rows' bytes:
//     keep == nullptr: size() measures them in pieces and write() encodes them again, so a harvest goes into
//       the spool (SpoolParts) without its encoded form ever being whole in memory (several parts of a
//       large harvest);
//     keep != nullptr: size() encodes them once into *keep and write() sends those bytes (no second
//       encode). *keep is reused across encoders and harvests (its buffer only grows: no allocation per
//       harvest once it is large enough); when another encoder took it between size() and write(), write()
//       encodes again into it. *keep must outlive the encoder's write().
//   encode_flow_report is the same writer into one string.
// - flow_row_of / flow_record_of convert between a FlowRow and the contract's record (text addresses); a
//   record whose address is not of its family gives the zero address.
// Values only; thread-safe (one encoder per thread).
#pragma once

#include <algorithm>
#include <array>
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

struct FlowRow {
  std::uint32_t ifindex = 0;
  // The interface name, at most 15 bytes (IFNAMSIZ - 1; a longer name is cut): held, not referred to.
  void set_ifname(std::string_view name) {
    ifname_size = static_cast<std::uint8_t>(std::min(name.size(), ifname_bytes.size()));
    std::copy_n(name.data(), ifname_size, ifname_bytes.data());
  }
  std::string_view ifname() const { return {ifname_bytes.data(), ifname_size}; }
  std::array<char, 15> ifname_bytes{};
  std::uint8_t ifname_size = 0;
  proto::FlowDirection direction = proto::FlowDirection::ingress;
  int family = 4;                       // 4: the first 4 bytes of src/dst hold the address
  std::array<unsigned char, 16> src{};  // network order
  std::array<unsigned char, 16> dst{};
  std::uint16_t sport = 0;
  std::uint32_t dest_qp = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
  std::array<std::uint64_t, proto::kOpClasses> op{};
  std::uint64_t ect = 0;
  std::uint64_t ce = 0;
  std::uint64_t cnp = 0;
  std::array<std::uint64_t, proto::kNakKinds> nak{};
  std::uint64_t psn_regressions = 0;
  std::optional<proto::FlowPsn> psn;
};

FlowRow flow_row_of(const proto::FlowRecord& record);
proto::FlowRecord flow_record_of(const FlowRow& row, std::uint64_t epoch);

class FlowReportEncoder {
 public:
  using Fill = std::function<void(std::size_t i, FlowRow& row)>;
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
  std::uint64_t id_;  // unique per encoder: which one's rows a FlowReportBytes holds
  FlowRow row_;
  std::optional<std::uint64_t> records_bytes_;
};

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<FlowRow(std::size_t)>& row_at);

}  // namespace hsns::daemon::report
