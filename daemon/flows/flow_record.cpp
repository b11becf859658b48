#include "flow_record.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace hsns::daemon {

// The contract names the opcode classes, NAK kinds and directions in the kernel's order.
static_assert(ROCE_OP_CLASSES == proto::kOpClasses && ROCE_NAK_KINDS == proto::kNakKinds);
static_assert(static_cast<int>(proto::FlowDirection::ingress) == ROCE_DIR_INGRESS &&
              static_cast<int>(proto::FlowDirection::egress) == ROCE_DIR_EGRESS &&
              static_cast<int>(proto::FlowDirection::xdp) == ROCE_DIR_XDP);

const char* op_class_name(int c) {
  return c >= 0 && c < ROCE_OP_CLASSES ? proto::kOpClassNames[c] : "?";
}
const char* nak_name(int n) {
  return n >= 0 && n < ROCE_NAK_KINDS ? proto::kNakNames[n] : "?";
}
const char* direction_name(int d) {
  return d >= 0 && d < 3 ? proto::to_string(static_cast<proto::FlowDirection>(d)) : "?";
}

namespace {

// Decimal of one byte, no leading zeros.
char* put_byte_decimal(char* p, unsigned v) {
  if (v >= 100) {
    *p++ = static_cast<char>('0' + v / 100);
    v %= 100;
    *p++ = static_cast<char>('0' + v / 10);
  } else if (v >= 10) {
    *p++ = static_cast<char>('0' + v / 10);
  }
  *p++ = static_cast<char>('0' + v % 10);
  return p;
}

char* put_ipv4(char* p, const __u8* b) {
  for (int i = 0; i < 4; ++i) {
    if (i > 0) *p++ = '.';
    p = put_byte_decimal(p, b[i]);
  }
  return p;
}

// Lowercase hex of a 16-bit word, no leading zeros ("%x").
char* put_word_hex(char* p, unsigned w) {
  static constexpr char kHex[] = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned d = (w >> shift) & 0xF;
    if (d != 0 || started || shift == 0) {
      *p++ = kHex[d];
      started = true;
    }
  }
  return p;
}

}  // namespace

std::size_t format_flow_address(int family, const __u8* b, char* out) {
  char* p = out;
  if (family == 4) return static_cast<std::size_t>(put_ipv4(p, b) - out);
  // glibc's inet_ntop6: the first longest run of two or more zero words becomes "::"; an address whose
  // first six words are zero, or the first five zero and the sixth ffff, ends in dotted-quad form.
  unsigned words[8];
  for (std::size_t i = 0; i < 8; ++i) words[i] = (unsigned{b[2 * i]} << 8) | b[2 * i + 1];
  int best = -1;
  int best_len = 0;
  for (int i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  if (best_len < 2) best = -1;
  for (int i = 0; i < 8; ++i) {
    if (best >= 0 && i >= best && i < best + best_len) {
      if (i == best) *p++ = ':';
      continue;
    }
    if (i != 0) *p++ = ':';
    if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && words[5] == 0xffff))) {
      p = put_ipv4(p, b + 12);
      return static_cast<std::size_t>(p - out);
    }
    p = put_word_hex(p, words[i]);
  }
  if (best >= 0 && best + best_len == 8) *p++ = ':';
  return static_cast<std::size_t>(p - out);
}

void fill_contract(const FlowRecord& r, const std::string& host, proto::FlowRecord& f) {
  const auto& k = r.key;
  const auto& s = r.stats;
  const auto set_addr = [&](std::string& out, const __u8* bytes) {
    char buf[kFlowAddressMax];
    out.assign(buf, format_flow_address(k.family, bytes, buf));
  };
  f.host.assign(host);
  f.ifindex = k.ifindex;
  f.ifname.assign(r.ifname);
  f.direction = static_cast<proto::FlowDirection>(k.direction);
  f.family = k.family;
  set_addr(f.src, k.src);
  set_addr(f.dst, k.dst);
  f.sport = k.sport;
  f.dest_qp = k.dest_qp;
  f.packets = s.packets;
  f.bytes = s.bytes;
  f.first_ns = r.first_unix_ns;
  f.last_ns = r.last_unix_ns;
  for (std::size_t i = 0; i < proto::kOpClasses; ++i) f.op[i] = s.op[i];
  f.ect = s.ect;
  f.ce = s.ce;
  f.cnp = s.cnp;
  for (std::size_t i = 0; i < proto::kNakKinds; ++i) f.nak[i] = s.nak[i];
  f.psn_regressions = s.psn_regressions;
  if (s.has_psn) {
    f.psn = proto::FlowPsn{s.first_psn, s.last_psn, s.max_psn};
  } else {
    f.psn.reset();
  }
  f.epoch.reset();
}

proto::FlowRecord to_contract(const FlowRecord& r, const std::string& host) {
  proto::FlowRecord f;
  fill_contract(r, host, f);
  return f;
}

namespace {

void json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void json_key(std::string& out, const char* key) {
  out.push_back('"');
  out += key;
  out += "\":";
}

template <class T>
void json_number(std::string& out, T value) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, r.ptr);
}

template <std::size_t N>
std::array<std::size_t, N> sorted_order(const std::array<const char*, N>& names) {
  std::array<std::size_t, N> order{};
  for (std::size_t i = 0; i < N; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::string_view(names[a]) < std::string_view(names[b]);
  });
  return order;
}

template <std::size_t N>
void json_counts(std::string& out, const std::array<const char*, N>& names,
                 const std::array<std::size_t, N>& order, const std::array<std::uint64_t, N>& values) {
  out.push_back('{');
  bool first = true;
  for (const std::size_t i : order) {
    if (!first) out.push_back(',');
    first = false;
    json_key(out, names[i]);
    json_number(out, values[i]);
  }
  out.push_back('}');
}

}  // namespace

void append_flow_record_json(std::string& out, const proto::FlowRecord& f) {
  // The keys in byte order, as nlohmann's sorted objects dump them.
  static const auto op_order = sorted_order(proto::kOpClassNames);
  static const auto nak_order = sorted_order(proto::kNakNames);
  const auto num = [&](const char* key, auto value) {
    json_key(out, key);
    json_number(out, value);
    out.push_back(',');
  };
  const auto str = [&](const char* key, std::string_view value) {
    json_key(out, key);
    json_string(out, value);
    out.push_back(',');
  };
  out.push_back('{');
  num("bytes", f.bytes);
  num("ce", f.ce);
  num("cnp", f.cnp);
  num("dest_qp", f.dest_qp);
  str("direction", proto::to_string(f.direction));
  str("dst", f.dst);
  num("ect", f.ect);
  if (f.epoch) num("epoch", *f.epoch);
  num("family", f.family);
  num("first_ns", f.first_ns);
  if (f.psn) num("first_psn", f.psn->first);
  str("host", f.host);
  num("ifindex", f.ifindex);
  str("ifname", f.ifname);
  num("last_ns", f.last_ns);
  if (f.psn) {
    num("last_psn", f.psn->last);
    num("max_psn", f.psn->max);
  }
  json_key(out, "nak");
  json_counts(out, proto::kNakNames, nak_order, f.nak);
  out.push_back(',');
  json_key(out, "op");
  json_counts(out, proto::kOpClassNames, op_order, f.op);
  out.push_back(',');
  num("packets", f.packets);
  num("psn_regressions", f.psn_regressions);
  num("sport", f.sport);
  str("src", f.src);
  json_key(out, "type");
  out += "\"flow\"}";
}

nlohmann::json to_json(const FlowRecord& record, const std::string& host) {
  return proto::to_json(to_contract(record, host));
}

tl::expected<FlowRecord, std::string> flow_record_from_json(const nlohmann::json& j) {
  const auto read = proto::read_flow_record(j);
  if (!read) return tl::unexpected("flow record: " + read.error().message());
  const auto& f = *read;
  FlowRecord r;
  auto& k = r.key;
  auto& s = r.stats;
  k.ifindex = f.ifindex;
  r.ifname = f.ifname;
  k.direction = static_cast<__u8>(f.direction);
  k.family = static_cast<__u8>(f.family);
  // The contract checked both addresses against the family.
  const int af = f.family == 4 ? AF_INET : AF_INET6;
  inet_pton(af, f.src.c_str(), k.src);
  inet_pton(af, f.dst.c_str(), k.dst);
  k.sport = f.sport;
  k.dest_qp = f.dest_qp;
  s.packets = f.packets;
  s.bytes = f.bytes;
  r.first_unix_ns = f.first_ns;
  r.last_unix_ns = f.last_ns;
  for (std::size_t i = 0; i < proto::kOpClasses; ++i) s.op[i] = f.op[i];
  s.ect = f.ect;
  s.ce = f.ce;
  s.cnp = f.cnp;
  for (std::size_t i = 0; i < proto::kNakKinds; ++i) s.nak[i] = f.nak[i];
  s.psn_regressions = f.psn_regressions;
  if (f.psn) {
    s.has_psn = 1;
    s.first_psn = f.psn->first;
    s.last_psn = f.psn->last;
    s.max_psn = f.psn->max;
  }
  return r;
}

}  // namespace hsns::daemon
