#include "lldpdu.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <array>
#include <utility>

#include "hsns/proto/lldp.h"

namespace hsns::lldp {

namespace {

using Bytes = std::span<const std::uint8_t>;

enum TlvType : std::uint8_t {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
  kSystemDescription = 6,
  kCapabilities = 7,
  kManagementAddress = 8,
  kOrgSpecific = 127,
};

constexpr std::size_t kEthernetHeader = 14;
constexpr std::size_t kVlanTag = 4;
constexpr std::uint16_t kEtherTypeVlan = 0x8100;
constexpr std::uint8_t kFamilyIpv4 = 1;
constexpr std::uint8_t kFamilyIpv6 = 2;

const char* tlv_name(std::uint8_t type) {
  switch (type) {
    case kEnd:
      return "End";
    case kChassisId:
      return "Chassis ID";
    case kPortId:
      return "Port ID";
    case kTtl:
      return "Time To Live";
    case kPortDescription:
      return "Port Description";
    case kSystemName:
      return "System Name";
    case kSystemDescription:
      return "System Description";
    case kCapabilities:
      return "System Capabilities";
    case kManagementAddress:
      return "Management Address";
    case kOrgSpecific:
      return "Organizationally Specific";
    default:
      return "reserved";
  }
}

tl::unexpected<ParseFailure> fail(ParseError reason, std::uint8_t type, std::size_t offset,
                                  const std::string& what) {
  return tl::unexpected(ParseFailure{
      reason, std::string(tlv_name(type)) + " TLV at offset " + std::to_string(offset) + ": " + what});
}

std::uint16_t be16(Bytes b) {
  return static_cast<std::uint16_t>((b[0] << 8) | b[1]);
}
std::uint32_t be32(Bytes b) {
  return (static_cast<std::uint32_t>(b[0]) << 24) | (static_cast<std::uint32_t>(b[1]) << 16) |
         (static_cast<std::uint32_t>(b[2]) << 8) | b[3];
}

std::string hex(Bytes bytes) {
  static constexpr std::array<char, 16> kDigits = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                   '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const auto b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

// An address of an IANA family: its text when IPv4/IPv6 of the right size, nullopt when the size is
// wrong for the family, "family-N:<hex>" for other families.
std::optional<std::string> address_text(std::uint8_t family, Bytes address) {
  if (family == kFamilyIpv4 || family == kFamilyIpv6) {
    const bool v4 = family == kFamilyIpv4;
    if (address.size() != (v4 ? 4U : 16U)) return std::nullopt;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (inet_ntop(v4 ? AF_INET : AF_INET6, address.data(), text.data(), text.size()) == nullptr)
      return std::nullopt;
    return std::string(text.data());
  }
  // IANA address family 0 is reserved: no address is written in it (and the wire contract refuses it).
  if (address.empty() || family == 0) return std::nullopt;
  return "family-" + std::to_string(family) + ":" + hex(address);
}

struct Tlv {
  std::uint8_t type = 0;
  Bytes value;
  std::size_t offset = 0;
};

// Reads the TLV at `offset`; the failure when its header or value runs past the bytes.
tl::expected<Tlv, ParseFailure> next_tlv(Bytes bytes, std::size_t offset) {
  if (bytes.size() - offset < 2)
    return tl::unexpected(
        ParseFailure{ParseError::truncated_tlv, "TLV header at offset " + std::to_string(offset) + ": " +
                                                    std::to_string(bytes.size() - offset) + " byte(s) left"});
  const std::uint16_t header = be16(bytes.subspan(offset, 2));
  const auto type = static_cast<std::uint8_t>(header >> 9);
  const std::size_t length = header & 0x1ff;
  if (bytes.size() - offset - 2 < length)
    return fail(ParseError::tlv_beyond_frame, type, offset,
                "length " + std::to_string(length) + " runs past the end (" +
                    std::to_string(bytes.size() - offset - 2) + " byte(s) left)");
  return Tlv{type, bytes.subspan(offset + 2, length), offset};
}

// Which subtypes of an ID TLV hold a MAC address, a network address or an agent circuit ID (0: none);
// the others hold text.
struct IdSubtypes {
  std::uint8_t mac;
  std::uint8_t network;
  std::uint8_t circuit;
};

// The subtype and value of a Chassis ID or Port ID TLV (subtype 1..7, value 1..255 bytes), the value as
// text; `bad` when the subtype is reserved or the value does not fit it.
tl::expected<std::pair<std::uint8_t, std::string>, ParseFailure> read_id(const Tlv& t, ParseError bad,
                                                                         IdSubtypes kinds) {
  if (t.value.size() < 2 || t.value.size() > 256)
    return fail(ParseError::bad_length, t.type, t.offset,
                "length " + std::to_string(t.value.size()) + " is outside 2..256");
  const std::uint8_t subtype = t.value[0];
  if (subtype < 1 || subtype > 7)
    return fail(bad, t.type, t.offset, "subtype " + std::to_string(subtype) + " is reserved");
  const Bytes value = t.value.subspan(1);
  std::optional<std::string> text;
  if (subtype == kinds.mac) {
    if (value.size() == 6) text = format_mac(value.first<6>());
  } else if (subtype == kinds.network) {
    if (value.size() >= 2) text = address_text(value[0], value.subspan(1));
  } else if (subtype == kinds.circuit) {
    text = hex(value);
  } else {
    text = escape_text(value);
  }
  if (!text) return fail(bad, t.type, t.offset, "the value does not fit subtype " + std::to_string(subtype));
  return std::pair{subtype, std::move(*text)};
}

tl::expected<void, ParseFailure> read_chassis_id(const Tlv& t, Lldpdu& out) {
  auto id = read_id(t, ParseError::bad_chassis_id, {4, 5, 0});
  if (!id) return tl::unexpected(std::move(id.error()));
  out.chassis_id_subtype = static_cast<ChassisIdSubtype>(id->first);
  out.chassis_id = std::move(id->second);
  return {};
}

tl::expected<void, ParseFailure> read_port_id(const Tlv& t, Lldpdu& out) {
  auto id = read_id(t, ParseError::bad_port_id, {3, 4, 6});
  if (!id) return tl::unexpected(std::move(id.error()));
  out.port_id_subtype = static_cast<PortIdSubtype>(id->first);
  out.port_id = std::move(id->second);
  return {};
}

// Management Address TLV: address string length (1 + address, 2..32), address subtype, address,
// interface numbering subtype, interface number (4), OID string length (0..128), OID.
tl::expected<void, ParseFailure> read_management_address(const Tlv& t, Lldpdu& out) {
  const Bytes v = t.value;
  if (v.size() < 9 || v.size() > 167)
    return fail(ParseError::bad_length, t.type, t.offset,
                "length " + std::to_string(v.size()) + " is outside 9..167");
  const std::size_t string_length = v[0];
  if (string_length < 2 || string_length > 32 || 1 + string_length + 6 > v.size())
    return fail(
        ParseError::bad_management_address, t.type, t.offset,
        "address string length " + std::to_string(string_length) + " is outside 2..32 or runs past the TLV");
  auto address = address_text(v[1], v.subspan(2, string_length - 1));
  if (!address)
    return fail(ParseError::bad_management_address, t.type, t.offset,
                "the address does not fit family " + std::to_string(v[1]));
  const std::size_t after = 1 + string_length;
  const std::uint8_t interface_subtype = v[after];
  const std::size_t oid_length = v[after + 5];
  if (oid_length > 128 || after + 6 + oid_length != v.size())
    return fail(ParseError::bad_management_address, t.type, t.offset,
                "OID string length " + std::to_string(oid_length) + " does not match the TLV's length");
  if (out.management_addresses.size() < kMaxManagementAddresses)
    out.management_addresses.push_back(
        ManagementAddress{v[1], std::move(*address), interface_subtype, be32(v.subspan(after + 1, 4))});
  return {};
}

// A TLV that may appear once: its text (at most 255 bytes, escaped).
tl::expected<void, ParseFailure> read_text(const Tlv& t, std::optional<std::string>& field) {
  if (field) return fail(ParseError::duplicate_tlv, t.type, t.offset, "appears more than once");
  if (t.value.size() > 255)
    return fail(ParseError::bad_length, t.type, t.offset,
                "length " + std::to_string(t.value.size()) + " is over 255");
  field = escape_text(t.value);
  return {};
}

tl::expected<void, ParseFailure> read_optional(const Tlv& t, Lldpdu& out) {
  switch (t.type) {
    case kChassisId:
    case kPortId:
    case kTtl:
      return fail(ParseError::wrong_order, t.type, t.offset, "a mandatory TLV after the first three");
    case kPortDescription:
      return read_text(t, out.port_description);
    case kSystemName:
      return read_text(t, out.system_name);
    case kSystemDescription:
      return read_text(t, out.system_description);
    case kCapabilities:
      if (out.capabilities)
        return fail(ParseError::duplicate_tlv, t.type, t.offset, "appears more than once");
      if (t.value.size() != 4)
        return fail(ParseError::bad_length, t.type, t.offset,
                    "length " + std::to_string(t.value.size()) + " is not 4");
      out.capabilities = Capabilities{be16(t.value.first(2)), be16(t.value.subspan(2, 2))};
      return {};
    case kManagementAddress:
      return read_management_address(t, out);
    case kOrgSpecific:
      if (t.value.size() < 4)
        return fail(ParseError::bad_length, t.type, t.offset,
                    "length " + std::to_string(t.value.size()) + " is under 4 (OUI and subtype)");
      ++out.org_specific_tlvs;
      return {};
    default:
      ++out.reserved_tlvs;
      return {};
  }
}

}  // namespace

const char* reason_name(ParseError error) {
  switch (error) {
    case ParseError::short_frame:
      return "short_frame";
    case ParseError::not_lldp:
      return "not_lldp";
    case ParseError::truncated_tlv:
      return "truncated_tlv";
    case ParseError::tlv_beyond_frame:
      return "tlv_beyond_frame";
    case ParseError::missing_chassis_id:
      return "missing_chassis_id";
    case ParseError::missing_port_id:
      return "missing_port_id";
    case ParseError::missing_ttl:
      return "missing_ttl";
    case ParseError::wrong_order:
      return "wrong_order";
    case ParseError::bad_length:
      return "bad_length";
    case ParseError::bad_chassis_id:
      return "bad_chassis_id";
    case ParseError::bad_port_id:
      return "bad_port_id";
    case ParseError::bad_management_address:
      return "bad_management_address";
    case ParseError::duplicate_tlv:
      return "duplicate_tlv";
  }
  return "unknown";
}

const char* to_string(ChassisIdSubtype subtype) {
  const auto i = static_cast<std::size_t>(subtype);
  return i >= 1 && i <= proto::kLldpChassisIdSubtypes.size() ? proto::kLldpChassisIdSubtypes[i - 1]
                                                             : "reserved";
}

const char* to_string(PortIdSubtype subtype) {
  const auto i = static_cast<std::size_t>(subtype);
  return i >= 1 && i <= proto::kLldpPortIdSubtypes.size() ? proto::kLldpPortIdSubtypes[i - 1] : "reserved";
}

std::string format_mac(std::span<const std::uint8_t, 6> mac) {
  std::string out;
  for (std::size_t i = 0; i < mac.size(); ++i) {
    if (i > 0) out += ':';
    out += hex(Bytes(mac).subspan(i, 1));
  }
  return out;
}

std::string escape_text(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const auto b : bytes) {
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += static_cast<char>(b);
    } else {
      out += "\\x";
      out += hex(Bytes(&b, 1));
    }
  }
  return out;
}

tl::expected<Lldpdu, ParseFailure> parse_lldpdu(std::span<const std::uint8_t> bytes) {
  Lldpdu out;
  std::size_t offset = 0;
  // The three mandatory TLVs, in order.
  struct Mandatory {
    std::uint8_t type;
    ParseError missing;
  };
  static constexpr std::array<Mandatory, 3> kMandatory = {
      Mandatory{kChassisId, ParseError::missing_chassis_id}, Mandatory{kPortId, ParseError::missing_port_id},
      Mandatory{kTtl, ParseError::missing_ttl}};
  for (const auto& m : kMandatory) {
    if (offset == bytes.size())
      return tl::unexpected(ParseFailure{m.missing, std::string(tlv_name(m.type)) +
                                                        " TLV missing at offset " + std::to_string(offset) +
                                                        ": the LLDPDU ended"});
    auto t = next_tlv(bytes, offset);
    if (!t) return tl::unexpected(std::move(t.error()));
    if (t->type != m.type)
      return tl::unexpected(ParseFailure{
          m.missing, std::string(tlv_name(m.type)) + " TLV missing at offset " + std::to_string(offset) +
                         ": found " + tlv_name(t->type) + " (type " + std::to_string(t->type) + ")"});
    tl::expected<void, ParseFailure> r;
    if (m.type == kChassisId) {
      r = read_chassis_id(*t, out);
    } else if (m.type == kPortId) {
      r = read_port_id(*t, out);
    } else if (t->value.size() != 2) {
      r = fail(ParseError::bad_length, t->type, t->offset,
               "length " + std::to_string(t->value.size()) + " is not 2");
    } else {
      out.ttl_s = be16(t->value);
    }
    if (!r) return tl::unexpected(std::move(r.error()));
    offset += 2 + t->value.size();
  }
  while (offset < bytes.size()) {
    auto t = next_tlv(bytes, offset);
    if (!t) return tl::unexpected(std::move(t.error()));
    if (t->type == kEnd) {
      if (!t->value.empty())
        return fail(ParseError::bad_length, t->type, t->offset,
                    "length " + std::to_string(t->value.size()) + " is not 0");
      break;  // what follows is padding
    }
    if (auto r = read_optional(*t, out); !r) return tl::unexpected(std::move(r.error()));
    offset += 2 + t->value.size();
  }
  return out;
}

tl::expected<Frame, ParseFailure> parse_frame(std::span<const std::uint8_t> frame) {
  if (frame.size() < kEthernetHeader)
    return tl::unexpected(ParseFailure{
        ParseError::short_frame, std::to_string(frame.size()) + " bytes: shorter than an Ethernet header"});
  std::size_t header = kEthernetHeader;
  std::uint16_t ether_type = be16(frame.subspan(12, 2));
  if (ether_type == kEtherTypeVlan) {
    if (frame.size() < kEthernetHeader + kVlanTag)
      return tl::unexpected(
          ParseFailure{ParseError::short_frame, std::to_string(frame.size()) + " bytes: a cut 802.1Q tag"});
    ether_type = be16(frame.subspan(16, 2));
    header += kVlanTag;
  }
  if (ether_type != kEtherTypeLldp)
    return tl::unexpected(ParseFailure{
        ParseError::not_lldp, "EtherType 0x" + hex(frame.subspan(header - 2, 2)) + " is not LLDP (0x88cc)"});
  auto lldpdu = parse_lldpdu(frame.subspan(header));
  if (!lldpdu) return tl::unexpected(std::move(lldpdu.error()));
  return Frame{format_mac(frame.subspan<6, 6>()), std::move(*lldpdu)};
}

}  // namespace hsns::lldp
