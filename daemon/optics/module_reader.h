// Reading a port's module EEPROM from the kernel: ethtool netlink ETHTOOL_MSG_MODULE_EEPROM_GET (Linux
// 5.13+) over generic netlink, page by page as eeprom.h's pages_to_read() plans them; the legacy
// ETHTOOL_GMODULEINFO / ETHTOOL_GMODULEEEPROM ioctl when the kernel has no such netlink message.
//
// Netlink: CTRL_CMD_GETFAMILY resolves the "ethtool" family; each page is one request
//   {ETHTOOL_A_MODULE_EEPROM_HEADER {DEV_NAME}, OFFSET (0 or 128), LENGTH 128, PAGE, BANK, I2C_ADDRESS}
// answered by ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY {HEADER, DATA} or NLMSG_ERROR (-errno).
// The ioctl reads the module's linear dump: SFF-8079 (256 bytes: A0h), SFF-8472 (512: A0h then A2h),
// SFF-8436/8636 (256 or 640: lower page, page 00h, then pages 01h-03h); CMIS banks are not reachable there.
//
// Contract:
// - read_module_pages() opens its own sockets (closed before it returns), waits at most 2 s for any one
//   answer, never throws, and is thread-safe. It runs in the network namespace of the calling thread.
// - Errors carry a reason for metrics: no_module (the driver has no module access, EOPNOTSUPP: veth, lo,
//   a port without a cage), no_such_netdev (ENODEV, or a name the kernel could never have), permission
//   (EPERM/EACCES), io_error (anything else the driver or module answered: EIO, EREMOTEIO, ETIMEDOUT,
//   EINVAL for a page the module lacks, ...; the errno text in the message) and netlink (a reply that is
//   truncated or malformed, or no answer in time).
// - The reply parsers are pure and length-checked (fuzzed through the decoders' pages only).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "eeprom.h"

namespace hsns::optics {

enum class ReadFailure { no_module, no_such_netdev, permission, io_error, netlink };
inline constexpr std::size_t kReadFailures = 5;
const char* to_string(ReadFailure failure);

struct ReadError {
  ReadFailure reason = ReadFailure::io_error;
  std::string message;  // "eth0: page 11h bank 1: Input/output error"
};

tl::expected<EepromPages, ReadError> read_module_pages(const std::string& netdev);

// The attribute `attr` of the generic netlink message answering request `seq` in `buffer` (one recv):
// the attribute's payload; a positive errno from NLMSG_ERROR; ENOMSG when no message in the buffer answers
// `seq` (read again); EPROTO when a message or attribute runs past its length, or the answer lacks `attr`.
tl::expected<std::vector<std::uint8_t>, int> genl_reply_attribute(std::span<const std::uint8_t> buffer,
                                                                  std::uint32_t seq, std::uint16_t attr);

}  // namespace hsns::optics
