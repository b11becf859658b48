// RoCEv2 flow records and harvest batches: what hsnsd's flow probe writes (daemon/flows) and hsnsctl and
// the tests read (docs/flow-probe.md).
//
// Two forms of one record:
// - the JSON-lines sink: one harvest batch (epoch E) is an opening marker {"type":"batch",...}, its flow
//   lines {"type":"flow",...,"epoch":E} and a closing {"type":"counters",...} line; read_sink_batches()
//   is the one reader of that framing (a batch counts only when complete, see its comment);
// - FlowBatch, one document of kind "flow-batch": {"host","epoch","ts_ms","records":[...],"counters":{}}
//   (no sender writes it today: harvests travel to the aggregator inside reports, report.h);
// - the rows form below: how a report's flow batch carries its records (names once, values per record).
// Contract: the rules of hsns/proto/codec.h. A flow record is read strictly (unknown members refused);
// members that sink files of earlier versions lacked (host, ifname, first_ns, last_ns, epoch) are
// optional. Addresses are checked against the record's family. Values only; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsns/error.h"
#include "hsns/json_fields.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

// The same order as enum roce_op_class / roce_nak / roce_direction of bpf/roce_flow.h (the daemon checks).
inline constexpr std::size_t kOpClasses = 8;
inline constexpr std::size_t kNakKinds = 6;
inline constexpr std::array<const char*, kOpClasses> kOpClassNames = {
    "send", "write", "read_req", "read_resp", "ack", "atomic", "cnp", "other"};
inline constexpr std::array<const char*, kNakKinds> kNakNames = {"psn_seq", "inv_req", "rem_access",
                                                                 "rem_op",  "rnr",     "other"};
enum class FlowDirection { ingress = 0, egress = 1, xdp = 2 };
const char* to_string(FlowDirection direction);

struct FlowPsn {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  std::uint32_t max = 0;
  bool operator==(const FlowPsn&) const = default;
};

struct FlowRecord {
  std::string host;
  std::uint32_t ifindex = 0;
  std::string ifname;
  FlowDirection direction = FlowDirection::ingress;
  int family = 4;   // 4 or 6
  std::string src;  // textual address of `family`
  std::string dst;
  std::uint16_t sport = 0;
  std::uint32_t dest_qp = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::int64_t first_ns = 0;  // Unix time
  std::int64_t last_ns = 0;
  std::array<std::uint64_t, kOpClasses> op{};
  std::uint64_t ect = 0;
  std::uint64_t ce = 0;
  std::uint64_t cnp = 0;
  std::array<std::uint64_t, kNakKinds> nak{};
  std::uint64_t psn_regressions = 0;
  std::optional<FlowPsn> psn;
  std::optional<std::uint64_t> epoch;  // sink lines carry their batch's epoch
  bool operator==(const FlowRecord&) const = default;
};

Result<FlowRecord> read_flow_record(const nlohmann::json& document);
nlohmann::json to_json(const FlowRecord& record);

// The rows form of a batch's records (a report's flow batch, report.h): the names of the values once, in
// "fields", then one array of values per record in "rows", so that no record repeats its keys, host or
// type (a row's CBOR is about a quarter of a record's). kFlowRowFields are the names; a batch lists each
// exactly once, in any order, and every row holds exactly as many values, in that order:
// - ifindex (unsigned, 32 bits), ifname (text, at most 15 bytes, may be empty), direction (unsigned: the
//   position in ingress, egress, xdp);
// - src, dst: a byte string of 4 (IPv4) or 16 (IPv6) bytes in network order, or the address's text (JSON
//   has no byte strings); both of one family, which is the record's;
// - sport (16 bits), dest_qp (32 bits), packets, bytes, first_ns and last_ns (signed), op_<class> for each
//   kOpClassNames, ect, ce, cnp, nak_<kind> for each kNakNames, psn_regressions: integers;
// - first_psn, last_psn, max_psn: unsigned 32 bits, or all three null (no PSN seen).
// A row reads into the FlowRecord the records form would carry, without host (the report's host is the
// URL's) and with the batch's epoch; addresses in inet_ntop's text.
inline constexpr std::size_t kFlowRowWidth = 11 + kOpClasses + 3 + kNakKinds + 1 + 3;
inline constexpr std::array<const char*, kFlowRowWidth> kFlowRowFields = {"ifindex",
                                                                          "ifname",
                                                                          "direction",
                                                                          "src",
                                                                          "dst",
                                                                          "sport",
                                                                          "dest_qp",
                                                                          "packets",
                                                                          "bytes",
                                                                          "first_ns",
                                                                          "last_ns",
                                                                          "op_send",
                                                                          "op_write",
                                                                          "op_read_req",
                                                                          "op_read_resp",
                                                                          "op_ack",
                                                                          "op_atomic",
                                                                          "op_cnp",
                                                                          "op_other",
                                                                          "ect",
                                                                          "ce",
                                                                          "cnp",
                                                                          "nak_psn_seq",
                                                                          "nak_inv_req",
                                                                          "nak_rem_access",
                                                                          "nak_rem_op",
                                                                          "nak_rnr",
                                                                          "nak_other",
                                                                          "psn_regressions",
                                                                          "first_psn",
                                                                          "last_psn",
                                                                          "max_psn"};

// Where each of kFlowRowFields stands in a batch's rows.
struct FlowRowLayout {
  std::array<std::size_t, kFlowRowWidth> column{};  // column[k]: the position of kFlowRowFields[k]
};
// Member "fields" of the batch `r` reads: every name of kFlowRowFields once, nothing else.
std::optional<FlowRowLayout> read_flow_row_layout(FieldReader& r);
// Row `row` of the batch `r` reads (named `name`, e.g. "rows[12]"; findings name the value:
// "rows[12].sport"); nullopt after recording the findings in r.
std::optional<FlowRecord> read_flow_row(FieldReader& r, const std::string& name, const nlohmann::json& row,
                                        const FlowRowLayout& layout, std::uint64_t epoch);

inline constexpr std::size_t kMaxFlowBatchRecords = 1 << 18;
inline constexpr std::size_t kMaxFlowCounters = 64;

struct FlowBatch {
  std::string host;
  std::uint64_t epoch = 0;
  std::int64_t ts_ms = 0;
  std::vector<FlowRecord> records;
  std::map<std::string, std::uint64_t> counters;
  bool operator==(const FlowBatch&) const = default;
};

Result<FlowBatch> read_flow_batch(const nlohmann::json& document);
nlohmann::json to_json(const FlowBatch& batch);

template <>
struct Kind<FlowRecord> {
  static constexpr const char* kName = "flow-record";
  static constexpr std::size_t kMaxBytes = 64 << 10;
  static Result<FlowRecord> read(const nlohmann::json& d) { return read_flow_record(d); }
  static nlohmann::json write(const FlowRecord& v) { return to_json(v); }
};

template <>
struct Kind<FlowBatch> {
  static constexpr const char* kName = "flow-batch";
  static constexpr std::size_t kMaxBytes = 256 << 20;
  static Result<FlowBatch> read(const nlohmann::json& d) { return read_flow_batch(d); }
  static nlohmann::json write(const FlowBatch& v) { return to_json(v); }
};

// The complete batches of a sink file's text, in file order: each batch's flow lines (strictly parsed
// JSON objects, read with read_flow_record by the consumer) and its closing counters line. A batch is
// complete when its opening marker, exactly `records` flow lines of its epoch and a closing marker of
// the same epoch and record count follow each other. Lines of a batch that is not complete (torn by a
// crash, or still being written) are left out and counted in *ignored_lines; lines that are not JSON
// objects in *malformed_lines. Files of earlier versions (flow lines without epoch, then a counters
// line) read as complete batches of epoch 0.
struct SinkBatch {
  std::uint64_t epoch = 0;
  std::vector<nlohmann::json> flows;
  nlohmann::json counters;
};
std::vector<SinkBatch> read_sink_batches(std::string_view text, std::size_t* ignored_lines = nullptr,
                                         std::size_t* malformed_lines = nullptr);

}  // namespace hsns::proto
