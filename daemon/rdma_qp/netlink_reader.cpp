#include "netlink_reader.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace hsns::daemon::rdma {
namespace {

constexpr std::size_t kMessageHeader = sizeof(nlmsghdr);  // 16
constexpr std::size_t kAttrHeader = sizeof(nlattr);       // 4
static_assert(kMessageHeader == 16 && kAttrHeader == 4);

template <typename T>
T load(Bytes b, std::size_t offset) {
  T v{};
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}

std::size_t align4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

tl::unexpected<NlError> fail(std::string reason, std::string detail) {
  return tl::unexpected(NlError{std::move(reason), std::move(detail), 0});
}

std::string attr_where(std::string_view name, const NlAttr& a) {
  return std::string(name) + " (attribute " + std::to_string(a.type) + ")";
}

}  // namespace

tl::expected<std::vector<NlMessage>, NlError> split_messages(Bytes buffer) {
  std::vector<NlMessage> out;
  std::size_t off = 0;
  while (off < buffer.size()) {
    const std::size_t left = buffer.size() - off;
    if (left < kMessageHeader)
      return fail("truncated", std::to_string(left) + " bytes after message " + std::to_string(out.size()) +
                                   ", less than a netlink header");
    const auto len = load<std::uint32_t>(buffer, off);
    if (len < kMessageHeader)
      return fail("bad_length", "message " + std::to_string(out.size()) + ": nlmsg_len " +
                                    std::to_string(len) + " is shorter than its header");
    if (len > left)
      return fail("truncated", "message " + std::to_string(out.size()) + ": nlmsg_len " +
                                   std::to_string(len) + ", only " + std::to_string(left) + " bytes left");
    NlMessage m;
    m.type = load<std::uint16_t>(buffer, off + 4);
    m.flags = load<std::uint16_t>(buffer, off + 6);
    m.seq = load<std::uint32_t>(buffer, off + 8);
    m.port_id = load<std::uint32_t>(buffer, off + 12);
    m.body = buffer.subspan(off + kMessageHeader, len - kMessageHeader);
    out.push_back(m);
    off += std::min(align4(len), left);  // a last message without padding ends the buffer
  }
  return out;
}

tl::expected<std::vector<NlAttr>, NlError> split_attributes(Bytes region, std::string_view where) {
  std::vector<NlAttr> out;
  std::size_t off = 0;
  while (off < region.size()) {
    const std::size_t left = region.size() - off;
    if (left < kAttrHeader)
      return fail("truncated", std::string(where) + ": " + std::to_string(left) + " stray bytes at the end");
    const auto len = load<std::uint16_t>(region, off);
    const auto type = static_cast<std::uint16_t>(load<std::uint16_t>(region, off + 2) & NLA_TYPE_MASK);
    if (len < kAttrHeader)
      return fail("bad_length", std::string(where) + ": attribute " + std::to_string(type) + " has length " +
                                    std::to_string(len));
    if (len > left)
      return fail("truncated", std::string(where) + ": attribute " + std::to_string(type) + " of length " +
                                   std::to_string(len) + " runs past the end (" + std::to_string(left) +
                                   " bytes left)");
    out.push_back({type, region.subspan(off + kAttrHeader, len - kAttrHeader)});
    off += std::min(align4(len), left);
  }
  return out;
}

tl::expected<std::uint8_t, NlError> attr_u8(const NlAttr& a, std::string_view name) {
  if (a.payload.size() != 1)
    return fail("bad_length",
                attr_where(name, a) + ": " + std::to_string(a.payload.size()) + " bytes, expected a u8 (1)");
  return a.payload[0];
}

tl::expected<std::uint32_t, NlError> attr_u32(const NlAttr& a, std::string_view name) {
  if (a.payload.size() != 4)
    return fail("bad_length",
                attr_where(name, a) + ": " + std::to_string(a.payload.size()) + " bytes, expected a u32 (4)");
  return load<std::uint32_t>(a.payload, 0);
}

tl::expected<std::string, NlError> attr_string(const NlAttr& a, std::string_view name, std::size_t max_len) {
  const auto nul = std::find(a.payload.begin(), a.payload.end(), std::uint8_t{0});
  if (nul == a.payload.end()) return fail("malformed", attr_where(name, a) + ": string without its NUL");
  const auto len = static_cast<std::size_t>(nul - a.payload.begin());
  if (len > max_len)
    return fail("malformed", attr_where(name, a) + ": " + std::to_string(len) + " characters, at most " +
                                 std::to_string(max_len));
  return std::string(a.payload.begin(), nul);
}

tl::expected<std::optional<SockAddr>, NlError> attr_sockaddr(const NlAttr& a, std::string_view name) {
  const auto too_short = [&](const char* what) {
    return fail("bad_length",
                attr_where(name, a) + ": " + std::to_string(a.payload.size()) + " bytes, less than " + what);
  };
  if (a.payload.size() < sizeof(sa_family_t)) return too_short("a socket address family");
  const auto family = load<sa_family_t>(a.payload, 0);
  if (family != AF_INET && family != AF_INET6) return std::nullopt;
  const bool v4 = family == AF_INET;
  if (a.payload.size() < (v4 ? sizeof(sockaddr_in) : sizeof(sockaddr_in6)))
    return too_short(v4 ? "a sockaddr_in" : "a sockaddr_in6");
  char text[INET6_ADDRSTRLEN] = {};
  SockAddr out;
  out.family = v4 ? 4 : 6;
  if (v4) {
    const auto sin = load<sockaddr_in>(a.payload, 0);
    inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text);
    out.port = ntohs(sin.sin_port);
  } else {
    const auto sin6 = load<sockaddr_in6>(a.payload, 0);
    inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof text);
    out.port = ntohs(sin6.sin6_port);
  }
  out.address = text;
  return out;
}

}  // namespace hsns::daemon::rdma
