// LLDPDU parsing (IEEE 802.1AB): the bytes of one received LLDP frame into a neighbour's advertisement.
//
// Contract:
// - parse_frame() takes an Ethernet frame as read from a packet socket (destination, source, EtherType
//   0x88cc, one 802.1Q tag allowed before it) and parses its payload with parse_lldpdu(). Pure functions
//   over bytes: no allocation beyond the result, every length checked against the bytes given, nothing
//   throws; thread-safe.
// - An LLDPDU is a sequence of TLVs (7-bit type, 9-bit length). The first three are the mandatory Chassis
//   ID, Port ID and Time To Live, in that order; then optional TLVs until an End TLV (type 0, length 0) or
//   the end of the bytes (padding after the End TLV is ignored). Port description, system name, system
//   description and system capabilities may appear once each, management addresses any number of times
//   (at most kMaxManagementAddresses kept); organisationally specific TLVs (127) and reserved types
//   (9..126) are skipped and counted.
// - Chassis and port IDs are decoded to text by subtype: MAC addresses "aa:bb:cc:dd:ee:ff", network
//   addresses as IPv4/IPv6 text (other address families "family-N:hex"), text subtypes (interface name
//   and alias, chassis/port component, locally assigned) as their bytes with anything outside printable
//   ASCII (and '\') written as \xNN, agent circuit IDs as hex. The same escaping applies to the text TLVs,
//   so every string of a parsed LLDPDU is printable ASCII (safe in a log line, a label or JSON).
// - A malformed LLDPDU is a ParseFailure: a reason from a fixed set (for counting, reason_name()) and a
//   detail naming the TLV and its offset in the LLDPDU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::lldp {

inline constexpr std::uint16_t kEtherTypeLldp = 0x88cc;
inline constexpr std::size_t kMaxManagementAddresses = 8;

enum class ParseError {
  short_frame,             // shorter than an Ethernet header
  not_lldp,                // EtherType is not 0x88cc
  truncated_tlv,           // fewer than two bytes left for a TLV header
  tlv_beyond_frame,        // a TLV's length runs past the end of the bytes
  missing_chassis_id,      // the first TLV is not a Chassis ID
  missing_port_id,         // the second TLV is not a Port ID
  missing_ttl,             // the third TLV is not a Time To Live
  wrong_order,             // a mandatory TLV again after the first three
  bad_length,              // a TLV whose length is outside what its type allows
  bad_chassis_id,          // reserved subtype, or a value that does not fit its subtype
  bad_port_id,             // likewise
  bad_management_address,  // address string, interface numbering or OID lengths inconsistent
  duplicate_tlv,           // a TLV that may appear once appeared twice
};
inline constexpr std::size_t kParseErrors = 13;
// "short_frame", "not_lldp", ... (the enumerator's name: a metric label).
const char* reason_name(ParseError error);

struct ParseFailure {
  ParseError reason = ParseError::short_frame;
  std::string detail;  // "Port ID TLV at offset 9: subtype 0 is reserved"
};

enum class ChassisIdSubtype : std::uint8_t {
  chassis_component = 1,
  interface_alias = 2,
  port_component = 3,
  mac_address = 4,
  network_address = 5,
  interface_name = 6,
  locally_assigned = 7,
};
enum class PortIdSubtype : std::uint8_t {
  interface_alias = 1,
  port_component = 2,
  mac_address = 3,
  network_address = 4,
  interface_name = 5,
  agent_circuit_id = 6,
  locally_assigned = 7,
};
// "mac_address", "interface_name", ...: the names of the wire document (hsns/proto/lldp.h).
const char* to_string(ChassisIdSubtype subtype);
const char* to_string(PortIdSubtype subtype);

struct Capabilities {
  std::uint16_t system = 0;   // bit 0 other, 1 repeater, 2 bridge, 3 WLAN AP, 4 router, 5 telephone, ...
  std::uint16_t enabled = 0;  // the same bits, those enabled
  bool operator==(const Capabilities&) const = default;
};

struct ManagementAddress {
  std::uint8_t family = 0;             // IANA address family: 1 IPv4, 2 IPv6
  std::string address;                 // text: "198.18.7.1", "2001:db8::1", else "family-N:<hex>"
  std::uint8_t interface_subtype = 0;  // 1 unknown, 2 ifIndex, 3 system port number
  std::uint32_t interface_number = 0;
  bool operator==(const ManagementAddress&) const = default;
};

struct Lldpdu {
  ChassisIdSubtype chassis_id_subtype = ChassisIdSubtype::mac_address;
  std::string chassis_id;
  PortIdSubtype port_id_subtype = PortIdSubtype::interface_name;
  std::string port_id;
  std::uint16_t ttl_s = 0;  // 0: the neighbour is shutting down, forget it at once
  std::optional<std::string> port_description;
  std::optional<std::string> system_name;
  std::optional<std::string> system_description;
  std::optional<Capabilities> capabilities;
  std::vector<ManagementAddress> management_addresses;
  std::size_t org_specific_tlvs = 0;  // type 127, skipped
  std::size_t reserved_tlvs = 0;      // types 9..126, skipped
  bool operator==(const Lldpdu&) const = default;
};

struct Frame {
  std::string source_mac;  // "aa:bb:cc:dd:ee:ff"
  Lldpdu lldpdu;
};

tl::expected<Lldpdu, ParseFailure> parse_lldpdu(std::span<const std::uint8_t> bytes);
tl::expected<Frame, ParseFailure> parse_frame(std::span<const std::uint8_t> frame);

// Helpers the parser uses and the receiver's tests share.
std::string format_mac(std::span<const std::uint8_t, 6> mac);
// Bytes as text: printable ASCII kept, everything else (and '\') as \xNN.
std::string escape_text(std::span<const std::uint8_t> bytes);

}  // namespace hsns::lldp
