#include "report_encoding.h"

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
constexpr unsigned kText = 3;
constexpr unsigned kArray = 4;
constexpr unsigned kMap = 5;

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

// The keys of a counts object already encoded, in byte order of the names: the order of an object's keys in
// nlohmann's CBOR (its objects are sorted maps).
template <std::size_t N>
struct SortedKeys {
  std::array<std::size_t, N> order{};
  std::array<std::string, N> encoded{};  // in `order`
};

template <std::size_t N>
SortedKeys<N> sorted_keys(const std::array<const char*, N>& names) {
  SortedKeys<N> k;
  for (std::size_t i = 0; i < N; ++i) k.order[i] = i;
  std::sort(k.order.begin(), k.order.end(), [&](std::size_t a, std::size_t b) {
    return std::string_view(names[a]) < std::string_view(names[b]);
  });
  for (std::size_t i = 0; i < N; ++i) {
    const std::string_view name = names[k.order[i]];
    char buf[32];
    PtrOut o{buf};
    put_text(o, name);
    k.encoded[i].assign(buf, static_cast<std::size_t>(o.p - buf));
  }
  return k;
}

template <std::size_t N>
void put_counts(PtrOut& out, const SortedKeys<N>& keys, const std::array<std::uint64_t, N>& values) {
  put_head(out, kMap, N);
  for (std::size_t i = 0; i < N; ++i) {
    out.append(keys.encoded[i].data(), keys.encoded[i].size());
    put_head(out, kUnsigned, values[keys.order[i]]);
  }
}

// The most a record's CBOR takes besides its four strings: 24 keys and their values, at most 9 bytes a
// number, the counts objects' keys (short names), heads. Generous: room_for() makes this room per record.
constexpr std::size_t kRecordFixedMax = 2048;

std::size_t record_room(const proto::FlowRecord& f) {
  return kRecordFixedMax + f.host.size() + f.ifname.size() + f.src.size() + f.dst.size();
}

// proto::to_json(FlowRecord) as CBOR: its keys in byte order (nlohmann's objects are sorted maps). `out`
// has record_room(f) bytes of room.
void put_flow_record(PtrOut& out, const proto::FlowRecord& f) {
  static const auto op_keys = sorted_keys(proto::kOpClassNames);
  static const auto nak_keys = sorted_keys(proto::kNakNames);
  put_head(out, kMap, 20 + (f.psn ? 3 : 0) + (f.epoch ? 1 : 0));  // the 20 keys every record has
  put_key(out, "bytes");
  put_head(out, kUnsigned, f.bytes);
  put_key(out, "ce");
  put_head(out, kUnsigned, f.ce);
  put_key(out, "cnp");
  put_head(out, kUnsigned, f.cnp);
  put_key(out, "dest_qp");
  put_head(out, kUnsigned, f.dest_qp);
  put_key(out, "direction");
  put_text(out, proto::to_string(f.direction));
  put_key(out, "dst");
  put_text(out, f.dst);
  put_key(out, "ect");
  put_head(out, kUnsigned, f.ect);
  if (f.epoch) {
    put_key(out, "epoch");
    put_head(out, kUnsigned, *f.epoch);
  }
  put_key(out, "family");
  put_int(out, f.family);
  put_key(out, "first_ns");
  put_int(out, f.first_ns);
  if (f.psn) {
    put_key(out, "first_psn");
    put_head(out, kUnsigned, f.psn->first);
  }
  put_key(out, "host");
  put_text(out, f.host);
  put_key(out, "ifindex");
  put_head(out, kUnsigned, f.ifindex);
  put_key(out, "ifname");
  put_text(out, f.ifname);
  put_key(out, "last_ns");
  put_int(out, f.last_ns);
  if (f.psn) {
    put_key(out, "last_psn");
    put_head(out, kUnsigned, f.psn->last);
    put_key(out, "max_psn");
    put_head(out, kUnsigned, f.psn->max);
  }
  put_key(out, "nak");
  put_counts(out, nak_keys, f.nak);
  put_key(out, "op");
  put_counts(out, op_keys, f.op);
  put_key(out, "packets");
  put_head(out, kUnsigned, f.packets);
  put_key(out, "psn_regressions");
  put_head(out, kUnsigned, f.psn_regressions);
  put_key(out, "sport");
  put_head(out, kUnsigned, f.sport);
  put_key(out, "src");
  put_text(out, f.src);
  put_key(out, "type");
  put_key(out, "flow");
}

// Appends one record at `used` in `buf`; returns the new length.
std::size_t append_record(std::string& buf, std::size_t used, const proto::FlowRecord& f) {
  PtrOut o{room_for(buf, used, record_room(f))};
  char* const start = o.p;
  put_flow_record(o, f);
  return used + static_cast<std::size_t>(o.p - start);
}

// The report's bytes before the records, and after them (the seq's length varies with its value).
constexpr std::size_t kAffixMax = 64;

std::size_t put_prefix(char* buf, std::uint64_t epoch, std::size_t count) {
  PtrOut out{buf};
  put_head(out, kMap, 3);
  put_key(out, "flows");
  put_head(out, kArray, 1);
  put_head(out, kMap, 2);
  put_key(out, "epoch");
  put_head(out, kUnsigned, epoch);
  put_key(out, "records");
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

}  // namespace

std::string encode_telemetry_report(nlohmann::json& document, std::uint64_t seq) {
  document["seq"] = seq;
  return proto::encode_document(document, proto::Encoding::cbor);
}

void append_flow_record_cbor(std::string& out, const proto::FlowRecord& record) {
  out.resize(append_record(out, out.size(), record));
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
    fill_(i, record_);
    used = append_record(bytes.buf_, used, record_);
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
        fill_(i, record_);
        used = append_record(piece, used, record_);
        if (used >= kFlowReportChunk) {
          total += used;
          used = 0;
        }
      }
      records_bytes_ = total + used;
    }
  }
  char affix[kAffixMax];
  return put_prefix(affix, epoch_, count_) + *records_bytes_ + put_suffix(affix, seq, ts_ms_);
}

Result<void> FlowReportEncoder::write(std::uint64_t seq,
                                      const std::function<Result<void>(std::string_view)>& out) {
  char affix[kAffixMax];
  if (keep_ != nullptr) {
    if (keep_->owner_ != id_) encode_into(*keep_);  // another encoder's records took the bytes since size()
    if (auto r = out(std::string_view(affix, put_prefix(affix, epoch_, count_))); !r) return r;
    const std::string_view records(keep_->buf_.data(), keep_->used_);
    for (std::size_t at = 0; at < records.size(); at += kFlowReportChunk)
      if (auto r = out(records.substr(at, kFlowReportChunk)); !r) return r;
    return out(std::string_view(affix, put_suffix(affix, seq, ts_ms_)));
  }
  std::string buf;
  buf.reserve(kFlowReportChunk + 4096);
  std::size_t used = put_prefix(room_for(buf, 0, kAffixMax), epoch_, count_);
  for (std::size_t i = 0; i < count_; ++i) {
    fill_(i, record_);
    used = append_record(buf, used, record_);
    if (used >= kFlowReportChunk) {
      if (auto r = out(std::string_view(buf.data(), used)); !r) return r;
      used = 0;
    }
  }
  used += put_suffix(room_for(buf, used, kAffixMax), seq, ts_ms_);
  return out(std::string_view(buf.data(), used));
}

std::string encode_flow_report(std::uint64_t seq, std::int64_t ts_ms, std::uint64_t epoch, std::size_t count,
                               const std::function<proto::FlowRecord(std::size_t)>& record_at) {
  std::string out;
  std::size_t used = put_prefix(room_for(out, 0, kAffixMax), epoch, count);
  for (std::size_t i = 0; i < count; ++i) used = append_record(out, used, record_at(i));
  used += put_suffix(room_for(out, used, kAffixMax), seq, ts_ms);
  out.resize(used);
  return out;
}

}  // namespace hsns::daemon::report
