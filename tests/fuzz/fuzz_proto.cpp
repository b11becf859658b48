// libFuzzer target over the wire contract's readers (hsns/proto: codec.h, agent.h, flows.h).
//
// Input layout: the first byte selects the reader (taken modulo 11, counted from '0', so the seeds can
// use the characters '0'..':'); the rest is the reader's input:
//   0/1  desired state, JSON / CBOR      2/3  status report, JSON / CBOR
//   4/5  flow record, JSON / CBOR        6/7  flow batch, JSON / CBOR
//   8    read_sink_batches over the text, then read_flow_record on every flow line of a complete batch
//   9/:  host registration, CBOR / JSON (the encoding follows the byte's parity)
// Invariants (a violation is __builtin_trap()): a refusal is an Error with a detail and, when its kind is
// invalid, at least one named field; an accepted document is written back (encode) and read again in
// both encodings to the same value (decode(encode(v)) == v), and its JSON encoding equals its CBOR
// encoding's data model. Nothing throws.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hsns/proto/agent.h"
#include "hsns/proto/codec.h"
#include "hsns/proto/flows.h"

namespace {

using hsns::Error;
using hsns::proto::Encoding;
using nlohmann::json;
namespace proto = hsns::proto;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_refusal(const Error& e) {
  check(!e.detail.empty() || !e.fields.empty());
  if (e.kind == Error::Kind::invalid) {
    check(!e.fields.empty());
    for (const auto& f : e.fields) check(!f.reason.empty());
  }
}

template <typename T>
void round_trip(std::string_view bytes, Encoding encoding) {
  auto value = proto::decode<T>(bytes, encoding);
  if (!value) {
    check_refusal(value.error());
    return;
  }
  const json canonical = proto::Kind<T>::write(*value);
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    const std::string written = proto::encode(*value, enc);
    auto again = proto::decode<T>(written, enc);
    check(again.has_value());
    check(proto::Kind<T>::write(*again) == canonical);
  }
}

void sink(std::string_view text) {
  std::size_t ignored = 0;
  std::size_t malformed = 0;
  const auto batches = proto::read_sink_batches(text, &ignored, &malformed);
  for (const auto& b : batches) {
    check(b.counters.is_object());
    for (const auto& line : b.flows) {
      auto f = proto::read_flow_record(line);
      if (!f) {
        check_refusal(f.error());
        continue;
      }
      auto again = proto::read_flow_record(proto::to_json(*f));
      check(again.has_value() && *again == *f);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Encoding enc = data[0] % 2 == 0 ? Encoding::json : Encoding::cbor;
  switch ((data[0] - '0' + 88) % 11) {
    case 0:
    case 1:
      round_trip<proto::DesiredState>(input, enc);
      break;
    case 2:
    case 3:
      round_trip<proto::StatusReport>(input, enc);
      break;
    case 4:
    case 5:
      round_trip<proto::FlowRecord>(input, enc);
      break;
    case 6:
    case 7:
      round_trip<proto::FlowBatch>(input, enc);
      break;
    case 9:
    case 10:
      round_trip<proto::HostRegistration>(input, enc);
      break;
    default:
      sink(input);
      break;
  }
  return 0;
}
