// One RoCEv2 flow record: the counts of one flow (bpf/roce_flow.h key) during one harvest interval.
//
// Contract: `stats` holds deltas since the previous harvest batch (the kernel table is cleared once each
// batch is committed, FlowProbe::commit), with first/last seen converted to Unix time (ns). The record's
// document is the wire contract's flow record (hsns/proto/flows.h): to_contract()/to_json() render it,
// flow_record_from_json() reads it back strictly (hsnsctl flows, tests) and returns an error message
// naming the field for a line that is not a valid flow record.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <tl/expected.hpp>

#include "hsns/proto/flows.h"
#include "roce_flow.h"

namespace hsns::daemon {

struct FlowRecord {
  roce_flow_key key{};
  roce_flow_stats stats{};
  std::string ifname;
  std::int64_t first_unix_ns = 0;
  std::int64_t last_unix_ns = 0;
};

// The text of a flow key's address exactly as glibc's inet_ntop writes it (family 4: the dotted quad of the
// first 4 bytes; any other family: the IPv6 text, with glibc's embedded-IPv4 forms "::a.b.c.d" and
// "::ffff:a.b.c.d"), straight into `out` (room for kFlowAddressMax bytes, no terminating NUL); returns the
// length. No allocation and no locale: the harvester writes two for each of 10,000 records a second.
inline constexpr std::size_t kFlowAddressMax = 46;
std::size_t format_flow_address(int family, const __u8* bytes, char* out);

proto::FlowRecord to_contract(const FlowRecord& record, const std::string& host);
// The same into an existing record: its strings keep their capacity (no allocation per record when the
// harvester fills one record over and over for the streamed encoder).
void fill_contract(const FlowRecord& record, const std::string& host, proto::FlowRecord& out);
nlohmann::json to_json(const FlowRecord& record, const std::string& host);
// Appends proto::to_json(record) as nlohmann's dump() writes it (sorted keys, compact), without building the
// document: the JSON-lines sink writes 10,000 records a second this way.
void append_flow_record_json(std::string& out, const proto::FlowRecord& record);
tl::expected<FlowRecord, std::string> flow_record_from_json(const nlohmann::json& j);

const char* op_class_name(int op_class);
const char* nak_name(int nak);
const char* direction_name(int direction);

}  // namespace hsns::daemon
