// A length-checked reader of netlink messages and attributes (host byte order, as the kernel writes them
// into a socket), for the RDMA netlink replies of the QP inventory (qp_dump.h).
//
// Contract:
// - Pure and bounds-checked: every length is checked against the span it claims to lie in before a byte
//   of it is read; nothing is read past a span. Spans returned point into the caller's buffer.
// - A refusal is an NlError: `reason` is one word of a fixed vocabulary (kNlErrorReasons: the label of
//   hsns_rdma_qp_read_errors_total), `detail` says where and what for a log line.
// - Attribute types are returned without the NLA_F_NESTED / NLA_F_NET_BYTEORDER flags. The last
//   attribute of a region may lack its alignment padding (the kernel pads, libnl tolerates it missing).
// - Thread-safe (no state).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::daemon::rdma {

using Bytes = std::span<const std::uint8_t>;

// truncated:  a header or a payload runs past the bytes that hold it
// bad_length: a length field is impossible (shorter than its own header) or a fixed-size payload has
//             the wrong size
// malformed:  a payload that is not what its type says (a string without NUL, an unknown family)
// kernel:     the kernel answered an error (NLMSG_ERROR, or a negative NLMSG_DONE status)
// unexpected: a message type, sequence or command that is not the answer to the request
// incomplete: the dump ended without NLMSG_DONE
// socket:     the socket could not be opened, written or read (the RDMA core absent is "absent")
// absent:     this kernel has no RDMA netlink (no ib_core)
inline constexpr std::array<std::string_view, 8> kNlErrorReasons = {
    "truncated", "bad_length", "malformed", "kernel", "unexpected", "incomplete", "socket", "absent"};

struct NlError {
  std::string reason;  // one of kNlErrorReasons
  std::string detail;
  int errno_value = 0;  // the kernel's or the socket's errno, when there is one
};

struct NlAttr {
  std::uint16_t type = 0;  // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  Bytes payload;
};

struct NlMessage {
  std::uint16_t type = 0;
  std::uint16_t flags = 0;
  std::uint32_t seq = 0;
  std::uint32_t port_id = 0;
  Bytes body;  // after struct nlmsghdr, nlmsg_len - 16 bytes
};

// The netlink messages of one buffer (one or several datagrams laid end to end), in order.
tl::expected<std::vector<NlMessage>, NlError> split_messages(Bytes buffer);

// The attributes of a region (a message body, or a nest's payload). `where` names the region in details.
tl::expected<std::vector<NlAttr>, NlError> split_attributes(Bytes region, std::string_view where);

// Typed payloads; the size must be exact for integers (the kernel's nla_put_u8/u32 write 1/4 bytes).
tl::expected<std::uint8_t, NlError> attr_u8(const NlAttr& a, std::string_view name);
tl::expected<std::uint32_t, NlError> attr_u32(const NlAttr& a, std::string_view name);
// A NUL-terminated string (nla_put_string); at most max_len characters before the NUL.
tl::expected<std::string, NlError> attr_string(const NlAttr& a, std::string_view name, std::size_t max_len);

// An IP endpoint from a struct sockaddr_storage payload (the kernel sends the whole 128-byte storage;
// shorter payloads are accepted when they hold the family's sockaddr). nullopt for a family that is not
// AF_INET or AF_INET6 (AF_IB of native InfiniBand connections): no IP endpoint, not an error.
struct SockAddr {
  int family = 0;  // 4 or 6
  std::string address;
  std::uint16_t port = 0;
  bool operator==(const SockAddr&) const = default;
};
tl::expected<std::optional<SockAddr>, NlError> attr_sockaddr(const NlAttr& a, std::string_view name);

}  // namespace hsns::daemon::rdma
