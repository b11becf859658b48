#include "report_encoding.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "hsns/proto/codec.h"

namespace hsns::daemon::report {
namespace {

// RFC 8949 major types used here.
constexpr unsigned kUnsigned = 0;
constexpr unsigned kNegative = 1;
constexpr unsigned kText = 3;
constexpr unsigned kArray = 4;
constexpr unsigned kMap = 5;

// A data item's head in its shortest form (what nlohmann's to_cbor writes too).
void put_head(std::string& out, unsigned major, std::uint64_t value) {
  const auto type = static_cast<char>(major << 5);
  const auto put_be = [&out](std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  if (value < 24) {
    out.push_back(static_cast<char>(type | static_cast<char>(value)));
  } else if (value <= 0xff) {
    out.push_back(static_cast<char>(type | 24));
    put_be(value, 1);
  } else if (value <= 0xffff) {
    out.push_back(static_cast<char>(type | 25));
    put_be(value, 2);
  } else if (value <= 0xffffffffULL) {
    out.push_back(static_cast<char>(type | 26));
    put_be(value, 4);
  } else {
    out.push_back(static_cast<char>(type | 27));
    put_be(value, 8);
  }
}

void put_text(std::string& out, std::string_view text) {
  put_head(out, kText, text.size());
  out.append(text);
}

void put_int(std::string& out, std::int64_t value) {
  if (value >= 0) {
    put_head(out, kUnsigned, static_cast<std::uint64_t>(value));
  } else {
    put_head(out, kNegative, static_cast<std::uint64_t>(-(value + 1)));
  }
}

}  // namespace

std::string encode_telemetry_report(const proto::Report& report) {
  return proto::encode<proto::Report>(report, proto::Encoding::cbor);
}

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at) {
  std::string out;
  put_head(out, kMap, 3);
  put_text(out, "flows");
  put_head(out, kArray, 1);
  put_head(out, kMap, 2);
  put_text(out, "epoch");
  put_head(out, kUnsigned, epoch);
  put_text(out, "records");
  put_head(out, kArray, count);
  for (std::size_t i = 0; i < count; ++i) nlohmann::json::to_cbor(proto::to_json(record_at(i)), out);
  put_text(out, "seq");
  put_head(out, kUnsigned, seq);
  put_text(out, "ts_ms");
  put_int(out, ts_ms);
  return out;
}

}  // namespace hsns::daemon::report
