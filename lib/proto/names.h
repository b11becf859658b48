// Name rules the wire contract's readers share (lib/proto only, not part of the public headers).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hsns::proto::detail {

inline constexpr std::size_t kMaxNetdevLength = 15;  // IFNAMSIZ - 1

// The kernel's dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':', whitespace or NUL.
bool valid_netdev(std::string_view s);
// A MAC as six colon-separated hex octets; returned lower-case.
std::optional<std::string> normalise_mac(std::string_view s);

}  // namespace hsns::proto::detail
