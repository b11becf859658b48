#include "report_encoding.h"

#include <algorithm>
#include <array>
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

// Output of the writer: bytes appended to a string, or only counted (the size pass).
struct StringOut {
  std::string& s;
  void put(char c) { s.push_back(c); }
  void append(const char* p, std::size_t n) { s.append(p, n); }
};
struct CountOut {
  std::uint64_t n = 0;
  void put(char) { ++n; }
  void append(const char*, std::size_t k) { n += k; }
};

// A data item's head in its shortest form (what nlohmann's to_cbor writes too).
template <class Out>
void put_head(Out& out, unsigned major, std::uint64_t value) {
  const auto type = static_cast<unsigned char>(major << 5);
  char buf[9];
  std::size_t n = 0;
  const auto be = [&](int bytes) {
    for (int i = bytes - 1; i >= 0; --i) buf[n++] = static_cast<char>((value >> (8 * i)) & 0xff);
  };
  if (value < 24) {
    buf[n++] = static_cast<char>(type | value);
  } else if (value <= 0xff) {
    buf[n++] = static_cast<char>(type | 24);
    be(1);
  } else if (value <= 0xffff) {
    buf[n++] = static_cast<char>(type | 25);
    be(2);
  } else if (value <= 0xffffffffULL) {
    buf[n++] = static_cast<char>(type | 26);
    be(4);
  } else {
    buf[n++] = static_cast<char>(type | 27);
    be(8);
  }
  out.append(buf, n);
}

template <class Out>
void put_text(Out& out, std::string_view text) {
  put_head(out, kText, text.size());
  out.append(text.data(), text.size());
}

template <class Out>
void put_int(Out& out, std::int64_t value) {
  if (value >= 0) {
    put_head(out, kUnsigned, static_cast<std::uint64_t>(value));
  } else {
    put_head(out, kNegative, static_cast<std::uint64_t>(-(value + 1)));
  }
}

// The indexes of `names` in byte order of the names: the order of an object's keys in nlohmann's CBOR.
template <std::size_t N>
std::array<std::size_t, N> sorted_order(const std::array<const char*, N>& names) {
  std::array<std::size_t, N> order{};
  for (std::size_t i = 0; i < N; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::string_view(names[a]) < std::string_view(names[b]);
  });
  return order;
}

template <class Out, std::size_t N>
void put_counts(Out& out, const std::array<const char*, N>& names, const std::array<std::size_t, N>& order,
                const std::array<std::uint64_t, N>& values) {
  put_head(out, kMap, N);
  for (const std::size_t i : order) {
    put_text(out, names[i]);
    put_head(out, kUnsigned, values[i]);
  }
}

// proto::to_json(FlowRecord) as CBOR: its keys in byte order (nlohmann's objects are sorted maps).
template <class Out>
void put_flow_record(Out& out, const proto::FlowRecord& f) {
  static const auto op_order = sorted_order(proto::kOpClassNames);
  static const auto nak_order = sorted_order(proto::kNakNames);
  put_head(out, kMap, 20 + (f.psn ? 3 : 0) + (f.epoch ? 1 : 0));  // the 20 keys every record has
  put_text(out, "bytes");
  put_head(out, kUnsigned, f.bytes);
  put_text(out, "ce");
  put_head(out, kUnsigned, f.ce);
  put_text(out, "cnp");
  put_head(out, kUnsigned, f.cnp);
  put_text(out, "dest_qp");
  put_head(out, kUnsigned, f.dest_qp);
  put_text(out, "direction");
  put_text(out, proto::to_string(f.direction));
  put_text(out, "dst");
  put_text(out, f.dst);
  put_text(out, "ect");
  put_head(out, kUnsigned, f.ect);
  if (f.epoch) {
    put_text(out, "epoch");
    put_head(out, kUnsigned, *f.epoch);
  }
  put_text(out, "family");
  put_int(out, f.family);
  put_text(out, "first_ns");
  put_int(out, f.first_ns);
  if (f.psn) {
    put_text(out, "first_psn");
    put_head(out, kUnsigned, f.psn->first);
  }
  put_text(out, "host");
  put_text(out, f.host);
  put_text(out, "ifindex");
  put_head(out, kUnsigned, f.ifindex);
  put_text(out, "ifname");
  put_text(out, f.ifname);
  put_text(out, "last_ns");
  put_int(out, f.last_ns);
  if (f.psn) {
    put_text(out, "last_psn");
    put_head(out, kUnsigned, f.psn->last);
    put_text(out, "max_psn");
    put_head(out, kUnsigned, f.psn->max);
  }
  put_text(out, "nak");
  put_counts(out, proto::kNakNames, nak_order, f.nak);
  put_text(out, "op");
  put_counts(out, proto::kOpClassNames, op_order, f.op);
  put_text(out, "packets");
  put_head(out, kUnsigned, f.packets);
  put_text(out, "psn_regressions");
  put_head(out, kUnsigned, f.psn_regressions);
  put_text(out, "sport");
  put_head(out, kUnsigned, f.sport);
  put_text(out, "src");
  put_text(out, f.src);
  put_text(out, "type");
  put_text(out, "flow");
}

// The report's bytes before the records, and after them (the seq's length varies with its value).
template <class Out>
void put_prefix(Out& out, std::uint64_t epoch, std::size_t count) {
  put_head(out, kMap, 3);
  put_text(out, "flows");
  put_head(out, kArray, 1);
  put_head(out, kMap, 2);
  put_text(out, "epoch");
  put_head(out, kUnsigned, epoch);
  put_text(out, "records");
  put_head(out, kArray, count);
}

template <class Out>
void put_suffix(Out& out, std::uint64_t seq, std::int64_t ts_ms) {
  put_text(out, "seq");
  put_head(out, kUnsigned, seq);
  put_text(out, "ts_ms");
  put_int(out, ts_ms);
}

}  // namespace

std::string encode_telemetry_report(const proto::Report& report) {
  return proto::encode<proto::Report>(report, proto::Encoding::cbor);
}

void append_flow_record_cbor(std::string& out, const proto::FlowRecord& record) {
  StringOut o{out};
  put_flow_record(o, record);
}

std::uint64_t FlowReportEncoder::size(std::uint64_t seq) {
  if (!records_bytes_) {
    CountOut c;
    for (std::size_t i = 0; i < count_; ++i) {
      fill_(i, record_);
      put_flow_record(c, record_);
    }
    records_bytes_ = c.n;
  }
  CountOut c;
  put_prefix(c, epoch_, count_);
  put_suffix(c, seq, ts_ms_);
  return c.n + *records_bytes_;
}

Result<void> FlowReportEncoder::write(std::uint64_t seq,
                                      const std::function<Result<void>(std::string_view)>& out) {
  std::string buf;
  buf.reserve(kFlowReportChunk + 4096);
  StringOut o{buf};
  put_prefix(o, epoch_, count_);
  for (std::size_t i = 0; i < count_; ++i) {
    fill_(i, record_);
    put_flow_record(o, record_);
    if (buf.size() >= kFlowReportChunk) {
      if (auto r = out(buf); !r) return r;
      buf.clear();
    }
  }
  put_suffix(o, seq, ts_ms_);
  return out(buf);
}

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at) {
  std::string out;
  StringOut o{out};
  put_prefix(o, epoch, count);
  for (std::size_t i = 0; i < count; ++i) put_flow_record(o, record_at(i));
  put_suffix(o, seq, ts_ms);
  return out;
}

}  // namespace hsns::daemon::report
