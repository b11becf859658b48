// libFuzzer target over the telemetry report decoder (hsns/proto/report.h: decode<Report>, which reads every
// section with that section's own reader).
//
// Input layout: the first byte selects the encoding ('j' or any even byte: JSON; 'c' or any odd byte:
// CBOR); the rest is the document. The seeds (corpus_report) are the round-trip tests' sample reports
// (tests/unit/report_proto_test.cpp writes them, and checks that the committed ones still read back).
// Invariants (a violation is __builtin_trap()): a refusal is an Error with a detail or at least one named
// field, and a field finding has a reason; an accepted report is written back in both encodings and read
// again to the same value, with a canonical (stable) encoding; its limits hold. Nothing throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hsns/proto/report.h"

namespace {

using hsns::proto::Encoding;
namespace proto = hsns::proto;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_round_trip(const proto::Report& report, Encoding encoding) {
  const std::string bytes = proto::encode(report, encoding);
  auto back = proto::decode<proto::Report>(bytes, encoding);
  check(back.has_value());
  check(*back == report);
  check(proto::encode(*back, encoding) == bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Encoding encoding = (data[0] & 1U) != 0 ? Encoding::cbor : Encoding::json;
  const std::string_view document(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto report = proto::decode<proto::Report>(document, encoding);
  if (!report) {
    const auto& e = report.error();
    check(!e.detail.empty() || !e.fields.empty());
    for (const auto& f : e.fields) check(!f.reason.empty());
    return 0;
  }
  check(report->seq >= 1);
  check(report->flows.size() <= proto::kMaxReportFlowBatches);
  check(report->flow_records() <= proto::kMaxReportFlowRecords);
  check(report->ports.size() <= proto::kMaxReportPortStates);
  for (const auto& batch : report->flows) check(!batch.records.empty());
  check_round_trip(*report, Encoding::json);
  check_round_trip(*report, Encoding::cbor);
  return 0;
}
