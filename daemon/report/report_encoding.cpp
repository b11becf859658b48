#include "report_encoding.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string_view>

#include "hsns/proto/codec.h"

namespace hsns::daemon::report {
namespace {

// RFC 8949 major types used here.
constexpr unsigned kUnsigned = 0;
constexpr unsigned kNegative = 1;
constexpr unsigned kBytes = 2;
constexpr unsigned kText = 3;
constexpr unsigned kArray = 4;
constexpr unsigned kMap = 5;
constexpr unsigned char kNull = 0xf6;

// The writer: bytes stored through a raw pointer into room made beforehand (room_for), one store per byte
// instead of a push_back and its capacity check.
struct PtrOut {
  char* p;
  void put(unsigned char c) { *p++ = static_cast<char>(c); }
  void append(const char* s, std::size_t n) {
    std::memcpy(p, s, n);
    p += n;
  }
};

// Room for `n` more bytes after the first `used` of `buf`, which grows geometrically and never shrinks (a
// buffer reused across harvests stops allocating once it has grown).
char* room_for(std::string& buf, std::size_t used, std::size_t n) {
  if (buf.size() < used + n) buf.resize(std::max(buf.size() * 2, used + n));
  return buf.data() + used;
}

// A data item's head in its shortest form (what nlohmann's to_cbor writes too). Inlined: a record has about
// 60 of them, most of one byte.
[[gnu::always_inline]] inline void put_head(PtrOut& out, unsigned major, std::uint64_t value) {
  const auto type = static_cast<unsigned char>(major << 5);
  if (value < 24) {
    out.put(static_cast<unsigned char>(type | value));
    return;
  }
  int bytes = 8;
  unsigned char info = 27;
  if (value <= 0xff) {
    bytes = 1;
    info = 24;
  } else if (value <= 0xffff) {
    bytes = 2;
    info = 25;
  } else if (value <= 0xffffffffULL) {
    bytes = 4;
    info = 26;
  }
  out.put(static_cast<unsigned char>(type | info));
  for (int i = bytes - 1; i >= 0; --i) out.put(static_cast<unsigned char>((value >> (8 * i)) & 0xff));
}

[[gnu::always_inline]] inline void put_text(PtrOut& out, std::string_view text) {
  put_head(out, kText, text.size());
  out.append(text.data(), text.size());
}

// A text known at compile time and shorter than 24 bytes: a one-byte head and a fixed-size copy.
template <std::size_t N>
[[gnu::always_inline]] inline void put_key(PtrOut& out, const char (&key)[N]) {
  static_assert(N >= 1 && N - 1 < 24);
  out.put(static_cast<unsigned char>((kText << 5) | (N - 1)));
  out.append(key, N - 1);
}

[[gnu::always_inline]] inline void put_int(PtrOut& out, std::int64_t value) {
  if (value >= 0) {
    put_head(out, kUnsigned, static_cast<std::uint64_t>(value));
  } else {
    put_head(out, kNegative, static_cast<std::uint64_t>(-(value + 1)));
  }
}

// The most a row's CBOR takes (32 values of at most 9 bytes, two addresses of 17, a name of 16, heads), with
// room to spare: room_for() makes this room per row.
constexpr std::size_t kRowMax = 512;

[[gnu::always_inline]] inline void put_address(PtrOut& out, int family,
                                               const std::array<unsigned char, 16>& a) {
  const std::size_t n = family == 4 ? 4 : 16;
  put_head(out, kBytes, n);
  out.append(reinterpret_cast<const char*>(a.data()), n);
}

// One row: the values of proto::kFlowRowFields in that order. `out` has kRowMax bytes of room.
void put_flow_row(PtrOut& out, const FlowRow& r) {
  put_head(out, kArray, proto::kFlowRowWidth);
  put_head(out, kUnsigned, r.ifindex);
  put_text(out, r.ifname());
  put_head(out, kUnsigned, static_cast<std::uint64_t>(r.direction));
  put_address(out, r.family, r.src);
  put_address(out, r.family, r.dst);
  put_head(out, kUnsigned, r.sport);
  put_head(out, kUnsigned, r.dest_qp);
  put_head(out, kUnsigned, r.packets);
  put_head(out, kUnsigned, r.bytes);
  put_int(out, r.first_ns);
  put_int(out, r.last_ns);
  for (const auto v : r.op) put_head(out, kUnsigned, v);
  put_head(out, kUnsigned, r.ect);
  put_head(out, kUnsigned, r.ce);
  put_head(out, kUnsigned, r.cnp);
  for (const auto v : r.nak) put_head(out, kUnsigned, v);
  put_head(out, kUnsigned, r.psn_regressions);
  if (r.psn) {
    put_head(out, kUnsigned, r.psn->first);
    put_head(out, kUnsigned, r.psn->last);
    put_head(out, kUnsigned, r.psn->max);
  } else {
    for (int i = 0; i < 3; ++i) out.put(kNull);
  }
}

// Appends one row at `used` in `buf`; returns the new length.
std::size_t append_row(std::string& buf, std::size_t used, const FlowRow& r) {
  PtrOut o{room_for(buf, used, kRowMax)};
  char* const start = o.p;
  put_flow_row(o, r);
  return used + static_cast<std::size_t>(o.p - start);
}

// The report's bytes before the rows (the field names included), and after them (the seq's length varies
// with its value).
constexpr std::size_t kPrefixMax = 1024;
constexpr std::size_t kSuffixMax = 64;

std::size_t put_prefix(char* buf, std::uint64_t epoch, std::size_t count) {
  PtrOut out{buf};
  put_head(out, kMap, 3);
  put_key(out, "flows");
  put_head(out, kArray, 1);
  put_head(out, kMap, 3);
  put_key(out, "epoch");
  put_head(out, kUnsigned, epoch);
  put_key(out, "fields");
  put_head(out, kArray, proto::kFlowRowWidth);
  for (const char* name : proto::kFlowRowFields) put_text(out, name);
  put_key(out, "rows");
  put_head(out, kArray, count);
  return static_cast<std::size_t>(out.p - buf);
}

std::size_t put_suffix(char* buf, std::uint64_t seq, std::int64_t ts_ms) {
  PtrOut out{buf};
  put_key(out, "seq");
  put_head(out, kUnsigned, seq);
  put_key(out, "ts_ms");
  put_int(out, ts_ms);
  return static_cast<std::size_t>(out.p - buf);
}

std::uint64_t next_encoder_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// The values a row and a contract record hold alike (same names, same types), from one to the other.
template <typename From, typename To>
void copy_flow_values(const From& a, To& b) {
  b.ifindex = a.ifindex;
  b.direction = a.direction;
  b.family = a.family;
  b.sport = a.sport;
  b.dest_qp = a.dest_qp;
  b.packets = a.packets;
  b.bytes = a.bytes;
  b.first_ns = a.first_ns;
  b.last_ns = a.last_ns;
  b.op = a.op;
  b.ect = a.ect;
  b.ce = a.ce;
  b.cnp = a.cnp;
  b.nak = a.nak;
  b.psn_regressions = a.psn_regressions;
  b.psn = a.psn;
}

}  // namespace

std::string encode_telemetry_report(nlohmann::json& document, std::uint64_t seq) {
  document["seq"] = seq;
  return proto::encode_document(document, proto::Encoding::cbor);
}

FlowRow flow_row_of(const proto::FlowRecord& f) {
  FlowRow r;
  copy_flow_values(f, r);
  r.set_ifname(f.ifname);
  const int af = f.family == 4 ? AF_INET : AF_INET6;
  if (inet_pton(af, f.src.c_str(), r.src.data()) != 1) r.src.fill(0);
  if (inet_pton(af, f.dst.c_str(), r.dst.data()) != 1) r.dst.fill(0);
  return r;
}

proto::FlowRecord flow_record_of(const FlowRow& r, std::uint64_t epoch) {
  proto::FlowRecord f;
  copy_flow_values(r, f);
  f.ifname = r.ifname();
  char text[INET6_ADDRSTRLEN];
  const int af = r.family == 4 ? AF_INET : AF_INET6;
  f.src = inet_ntop(af, r.src.data(), text, sizeof text);
  f.dst = inet_ntop(af, r.dst.data(), text, sizeof text);
  f.epoch = epoch;
  return f;
}

FlowReportEncoder::FlowReportEncoder(std::int64_t ts_ms, std::uint64_t epoch, std::size_t count, Fill fill,
                                     FlowReportBytes* keep)
    : ts_ms_(ts_ms),
      epoch_(epoch),
      count_(count),
      fill_(std::move(fill)),
      keep_(keep),
      id_(next_encoder_id()) {}

void FlowReportEncoder::encode_into(FlowReportBytes& bytes) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    fill_(i, row_);
    used = append_row(bytes.buf_, used, row_);
  }
  bytes.used_ = used;
  bytes.owner_ = id_;
  records_bytes_ = used;
}

std::uint64_t FlowReportEncoder::size(std::uint64_t seq) {
  if (!records_bytes_) {
    if (keep_ != nullptr) {
      encode_into(*keep_);
    } else {
      // Measured in pieces, so that no more than a piece is ever in memory; write() encodes again.
      std::string piece;
      std::size_t used = 0;
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < count_; ++i) {
        fill_(i, row_);
        used = append_row(piece, used, row_);
        if (used >= kFlowReportChunk) {
          total += used;
          used = 0;
        }
      }
      records_bytes_ = total + used;
    }
  }
  char prefix[kPrefixMax];
  char suffix[kSuffixMax];
  return put_prefix(prefix, epoch_, count_) + *records_bytes_ + put_suffix(suffix, seq, ts_ms_);
}

Result<void> FlowReportEncoder::write(std::uint64_t seq,
                                      const std::function<Result<void>(std::string_view)>& out) {
  if (keep_ != nullptr) {
    if (keep_->owner_ != id_) encode_into(*keep_);  // another encoder's rows took the bytes since size()
    char prefix[kPrefixMax];
    if (auto r = out(std::string_view(prefix, put_prefix(prefix, epoch_, count_))); !r) return r;
    const std::string_view records(keep_->buf_.data(), keep_->used_);
    for (std::size_t at = 0; at < records.size(); at += kFlowReportChunk)
      if (auto r = out(records.substr(at, kFlowReportChunk)); !r) return r;
    char suffix[kSuffixMax];
    return out(std::string_view(suffix, put_suffix(suffix, seq, ts_ms_)));
  }
  std::string buf;
  buf.reserve(kFlowReportChunk + 4096);
  std::size_t used = put_prefix(room_for(buf, 0, kPrefixMax), epoch_, count_);
  for (std::size_t i = 0; i < count_; ++i) {
    fill_(i, row_);
    used = append_row(buf, used, row_);
    if (used >= kFlowReportChunk) {
      if (auto r = out(std::string_view(buf.data(), used)); !r) return r;
      used = 0;
    }
  }
  used += put_suffix(room_for(buf, used, kSuffixMax), seq, ts_ms_);
  return out(std::string_view(buf.data(), used));
}

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<FlowRow(std::size_t)>& row_at) {
  std::string out;
  std::size_t used = put_prefix(room_for(out, 0, kPrefixMax), epoch, count);
  for (std::size_t i = 0; i < count; ++i) used = append_row(out, used, row_at(i));
  used += put_suffix(room_for(out, used, kSuffixMax), seq, ts_ms);
  out.resize(used);
  return out;
}

}  // namespace hsns::daemon::report
