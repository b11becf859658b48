// The LLDP receiver's pure parts: the LLDPDU parser on hand-built frames (every ID subtype, optional TLVs,
// each malformed case with its reason), the neighbour table's TTL rules, and the lldp-neighbors wire
// section (strict reader, JSON and CBOR round trips).
#include "hsns/proto/lldp.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "lldp_frames.h"
#include "lldpdu.h"
#include "neighbor_table.h"

namespace {

using namespace hsns::testing::lldp_frames;
using hsns::lldp::ChassisIdSubtype;
using hsns::lldp::ParseError;
using hsns::lldp::PortIdSubtype;
namespace lldp = hsns::lldp;
namespace proto = hsns::proto;

ParseError reason_of(const Bytes& lldpdu) {
  auto r = lldp::parse_lldpdu(lldpdu);
  EXPECT_FALSE(r.has_value());
  if (r) return ParseError::short_frame;
  EXPECT_FALSE(r.error().detail.empty());
  return r.error().reason;
}

TEST(LldpParse, MandatoryAndOptionalTlvs) {
  const Bytes pdu =
      cat({chassis_mac(), port_ifname("swp12"), ttl(120), tlv(4, text("to h1 npu0")), tlv(5, text("leaf-3")),
           tlv(6, text("Linux leaf")), tlv(7, {0x00, 0x14, 0x00, 0x10}), management_ipv4(),
           tlv(127, {0x00, 0x12, 0x0f, 0x01, 0x03}), tlv(100, {1, 2}), end(), Bytes(20, 0)});
  auto r = lldp::parse_frame(frame(pdu));
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(r->source_mac, "02:00:5e:10:20:30");
  const auto& l = r->lldpdu;
  EXPECT_EQ(l.chassis_id_subtype, ChassisIdSubtype::mac_address);
  EXPECT_EQ(l.chassis_id, "02:00:5e:10:20:30");
  EXPECT_EQ(l.port_id_subtype, PortIdSubtype::interface_name);
  EXPECT_EQ(l.port_id, "swp12");
  EXPECT_EQ(l.ttl_s, 120);
  EXPECT_EQ(l.port_description, "to h1 npu0");
  EXPECT_EQ(l.system_name, "leaf-3");
  EXPECT_EQ(l.system_description, "Linux leaf");
  ASSERT_TRUE(l.capabilities);
  EXPECT_EQ(l.capabilities->system, 0x14);
  EXPECT_EQ(l.capabilities->enabled, 0x10);
  ASSERT_EQ(l.management_addresses.size(), 1U);
  EXPECT_EQ(l.management_addresses[0], (lldp::ManagementAddress{1, "198.18.7.1", 2, 7}));
  EXPECT_EQ(l.org_specific_tlvs, 1U);
  EXPECT_EQ(l.reserved_tlvs, 1U);
}

TEST(LldpParse, EndTlvIsOptionalAndPaddingIgnored) {
  auto r = lldp::parse_lldpdu(cat({chassis_mac(), port_ifname("p"), ttl(5)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ttl_s, 5);
  EXPECT_FALSE(r->system_name);
  // Padding after End: whatever it holds is not read.
  EXPECT_TRUE(lldp::parse_lldpdu(cat({minimal(), Bytes{0xff, 0xff, 0xff}})));
}

TEST(LldpParse, EveryChassisIdSubtype) {
  struct Case {
    Bytes value;
    ChassisIdSubtype subtype;
    std::string text;
  };
  const std::vector<Case> cases = {
      {text(1, "chassis-1"), ChassisIdSubtype::chassis_component, "chassis-1"},
      {text(2, "alias"), ChassisIdSubtype::interface_alias, "alias"},
      {text(3, "slot/3"), ChassisIdSubtype::port_component, "slot/3"},
      {{4, 0xAA, 0xBB, 0xCC, 0x00, 0x01, 0x02}, ChassisIdSubtype::mac_address, "aa:bb:cc:00:01:02"},
      {{5, 1, 198, 18, 0, 9}, ChassisIdSubtype::network_address, "198.18.0.9"},
      {{5, 2, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
       ChassisIdSubtype::network_address,
       "2001:db8::1"},
      {{5, 6, 0xab, 0xcd}, ChassisIdSubtype::network_address, "family-6:abcd"},
      {text(6, "eth0"), ChassisIdSubtype::interface_name, "eth0"},
      {Bytes{7, 'a', 0x00, '\\', 0x7f}, ChassisIdSubtype::locally_assigned, "a\\x00\\x5c\\x7f"},
  };
  for (const auto& c : cases) {
    auto r = lldp::parse_lldpdu(cat({tlv(1, c.value), port_ifname("p"), ttl(1)}));
    ASSERT_TRUE(r) << c.text << ": " << r.error().detail;
    EXPECT_EQ(r->chassis_id_subtype, c.subtype) << c.text;
    EXPECT_EQ(r->chassis_id, c.text);
  }
}

TEST(LldpParse, EveryPortIdSubtype) {
  struct Case {
    Bytes value;
    PortIdSubtype subtype;
    std::string text;
  };
  const std::vector<Case> cases = {
      {text(1, "uplink"), PortIdSubtype::interface_alias, "uplink"},
      {text(2, "1/0/12"), PortIdSubtype::port_component, "1/0/12"},
      {{3, 0x02, 0, 0, 0, 0, 0x0c}, PortIdSubtype::mac_address, "02:00:00:00:00:0c"},
      {{4, 1, 10, 0, 0, 1}, PortIdSubtype::network_address, "10.0.0.1"},
      {text(5, "swp12"), PortIdSubtype::interface_name, "swp12"},
      {{6, 0x01, 0xfe}, PortIdSubtype::agent_circuit_id, "01fe"},
      {text(7, "12"), PortIdSubtype::locally_assigned, "12"},
  };
  for (const auto& c : cases) {
    auto r = lldp::parse_lldpdu(cat({chassis_mac(), tlv(2, c.value), ttl(1)}));
    ASSERT_TRUE(r) << c.text << ": " << r.error().detail;
    EXPECT_EQ(r->port_id_subtype, c.subtype) << c.text;
    EXPECT_EQ(r->port_id, c.text);
    // The subtype's name is one the wire section accepts.
    EXPECT_STREQ(lldp::to_string(c.subtype), proto::kLldpPortIdSubtypes.at(c.value[0] - 1));
  }
}

TEST(LldpParse, MalformedLldpdusNameTheirReason) {
  EXPECT_EQ(reason_of({}), ParseError::missing_chassis_id);
  EXPECT_EQ(reason_of({0x02}), ParseError::truncated_tlv);
  EXPECT_EQ(reason_of(cat({chassis_mac(), Bytes{0x04}})), ParseError::truncated_tlv);
  EXPECT_EQ(reason_of({0x02, 0x07, 4, 1, 2}), ParseError::tlv_beyond_frame);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), Bytes{0x06, 0x02, 0x00}})),
            ParseError::tlv_beyond_frame);
  EXPECT_EQ(reason_of(cat({port_ifname("p"), chassis_mac(), ttl(1)})), ParseError::missing_chassis_id);
  EXPECT_EQ(reason_of(cat({chassis_mac(), ttl(1), port_ifname("p")})), ParseError::missing_port_id);
  EXPECT_EQ(reason_of(chassis_mac()), ParseError::missing_port_id);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p")})), ParseError::missing_ttl);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), tlv(5, text("x"))})), ParseError::missing_ttl);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), chassis_mac()})),
            ParseError::wrong_order);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), ttl(2)})), ParseError::wrong_order);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), tlv(3, {0, 0, 1})})), ParseError::bad_length);
  EXPECT_EQ(reason_of(cat({tlv(1, {4}), port_ifname("p"), ttl(1)})), ParseError::bad_length);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), tlv(0, {0})})), ParseError::bad_length);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), tlv(7, {0, 1, 0})})),
            ParseError::bad_length);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), tlv(127, {0, 1, 2})})),
            ParseError::bad_length);
  EXPECT_EQ(reason_of(cat({chassis_mac(), port_ifname("p"), ttl(1), tlv(5, Bytes(256, 'a'))})),
            ParseError::bad_length);
  // Reserved subtypes and values that do not fit their subtype.
  EXPECT_EQ(reason_of(cat({tlv(1, text(0, "x")), port_ifname("p"), ttl(1)})), ParseError::bad_chassis_id);
  EXPECT_EQ(reason_of(cat({tlv(1, text(8, "x")), port_ifname("p"), ttl(1)})), ParseError::bad_chassis_id);
  EXPECT_EQ(reason_of(cat({tlv(1, {4, 1, 2, 3}), port_ifname("p"), ttl(1)})), ParseError::bad_chassis_id);
  EXPECT_EQ(reason_of(cat({tlv(1, {5, 1, 10, 0, 0}), port_ifname("p"), ttl(1)})), ParseError::bad_chassis_id);
  EXPECT_EQ(reason_of(cat({chassis_mac(), tlv(2, text(9, "x")), ttl(1)})), ParseError::bad_port_id);
  EXPECT_EQ(reason_of(cat({chassis_mac(), tlv(2, {3, 1, 2, 3, 4, 5, 6, 7}), ttl(1)})),
            ParseError::bad_port_id);
  // Management address: string length past the TLV, an IPv4 of 3 bytes, an OID length that disagrees.
  const auto with = [](const Bytes& t) { return cat({chassis_mac(), port_ifname("p"), ttl(1), t}); };
  EXPECT_EQ(reason_of(with(tlv(8, {40, 1, 198, 18, 7, 1, 2, 0, 0, 0, 7, 0}))),
            ParseError::bad_management_address);
  EXPECT_EQ(reason_of(with(tlv(8, {4, 1, 198, 18, 7, 2, 0, 0, 0, 7, 0}))),
            ParseError::bad_management_address);
  EXPECT_EQ(reason_of(with(tlv(8, {5, 1, 198, 18, 7, 1, 2, 0, 0, 0, 7, 3, 1}))),
            ParseError::bad_management_address);
  EXPECT_EQ(reason_of(with(tlv(8, {5, 1, 198, 18, 7}))), ParseError::bad_length);
  // Address family 0 is reserved (found by fuzz_lldp: the neighbour could not be sent on the wire).
  EXPECT_EQ(reason_of(with(tlv(8, {5, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}))),
            ParseError::bad_management_address);
  EXPECT_EQ(reason_of(cat({tlv(1, {5, 0, 10, 0, 0, 1}), port_ifname("p"), ttl(1)})),
            ParseError::bad_chassis_id);
  // Single-instance TLVs twice.
  EXPECT_EQ(reason_of(with(cat({tlv(5, text("a")), tlv(5, text("b"))}))), ParseError::duplicate_tlv);
  EXPECT_EQ(reason_of(with(cat({tlv(7, {0, 4, 0, 4}), tlv(7, {0, 4, 0, 4})}))), ParseError::duplicate_tlv);
  // Every reason has a label name.
  for (std::size_t i = 0; i < lldp::kParseErrors; ++i)
    EXPECT_STRNE(lldp::reason_name(static_cast<ParseError>(i)), "unknown") << i;
}

TEST(LldpParse, FrameHeader) {
  EXPECT_EQ(lldp::parse_frame(Bytes(13, 0)).error().reason, ParseError::short_frame);
  Bytes ipv4 = frame(minimal());
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  EXPECT_EQ(lldp::parse_frame(ipv4).error().reason, ParseError::not_lldp);
  // One 802.1Q tag before the EtherType.
  Bytes tagged = frame(minimal());
  const Bytes tag{0x81, 0x00, 0x00, 0x05};
  tagged.insert(tagged.begin() + 12, tag.begin(), tag.end());
  auto r = lldp::parse_frame(tagged);
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(r->lldpdu.port_id, "swp1");
  EXPECT_EQ(lldp::parse_frame(Bytes(tagged.begin(), tagged.begin() + 16)).error().reason,
            ParseError::short_frame);
  // More management addresses than are kept: the LLDPDU is accepted, the first ones kept.
  Bytes many = cat({chassis_mac(), port_ifname("p"), ttl(1)});
  for (int i = 0; i < 12; ++i) many = cat({many, management_ipv4()});
  EXPECT_EQ(lldp::parse_lldpdu(many)->management_addresses.size(), lldp::kMaxManagementAddresses);
}

lldp::Frame parsed(const Bytes& lldpdu) {
  auto r = lldp::parse_frame(frame(lldpdu));
  EXPECT_TRUE(r);
  return r ? *r : lldp::Frame{};
}

TEST(LldpNeighborTable, TtlExpiryShutdownAndBound) {
  using namespace std::chrono_literals;
  lldp::NeighborTable table;
  const auto t0 = lldp::Clock::time_point{} + 1000s;
  using Update = lldp::NeighborTable::Update;
  EXPECT_EQ(table.update("npu0", parsed(minimal(30)), t0, 1), Update::added);
  EXPECT_EQ(table.update("npu0", parsed(minimal(30)), t0 + 10s, 2), Update::refreshed);
  EXPECT_EQ(table.update("npu1", parsed(cat({chassis_mac(), port_ifname("swp2"), ttl(5)})), t0, 3),
            Update::added);
  EXPECT_EQ(table.size("npu0"), 1U);
  EXPECT_EQ(table.next_expiry(), t0 + 5s);
  EXPECT_TRUE(table.expire(t0 + 4s).empty());
  auto gone = table.expire(t0 + 5s);
  ASSERT_EQ(gone.size(), 1U);
  EXPECT_EQ(gone[0].netdev, "npu1");
  EXPECT_EQ(table.size("npu1"), 0U);
  // The refresh restarted npu0's TTL: 30 s from t0 + 10 s.
  EXPECT_EQ(table.next_expiry(), t0 + 40s);
  EXPECT_EQ(table.ports().at("npu0")[0].last_seen_unix_ms, 2);
  // TTL 0 removes at once; a TTL 0 from an unknown neighbour changes nothing.
  EXPECT_EQ(table.update("npu0", parsed(minimal(0)), t0 + 11s, 4), Update::removed);
  EXPECT_EQ(table.size("npu0"), 0U);
  EXPECT_EQ(table.update("npu0", parsed(minimal(0)), t0 + 11s, 4), Update::unknown_shutdown);
  EXPECT_FALSE(table.next_expiry());
  // At most kMaxNeighborsPerPort per port.
  for (std::size_t i = 0; i < lldp::kMaxNeighborsPerPort; ++i)
    EXPECT_EQ(table.update("npu2", parsed(cat({chassis_mac(), port_ifname("p" + std::to_string(i)), ttl(9)})),
                           t0, 5),
              Update::added);
  EXPECT_EQ(table.update("npu2", parsed(cat({chassis_mac(), port_ifname("extra"), ttl(9)})), t0, 5),
            Update::table_full);
  EXPECT_EQ(table.remove_port("npu2"), lldp::kMaxNeighborsPerPort);
}

proto::LldpNeighbors sample_section() {
  proto::LldpNeighbors s;
  s.host = "h1";
  s.ts_ms = 1700000000123;
  proto::LldpNeighbor full;
  full.netdev = "npu0";
  full.npu = 0;
  full.source_mac = "02:00:5e:10:20:30";
  full.chassis_id_subtype = "mac_address";
  full.chassis_id = "02:00:5e:10:20:30";
  full.port_id_subtype = "locally_assigned";
  full.port_id = "swp12";
  full.ttl_s = 120;
  full.last_seen_ms = 1700000000000;
  full.port_description = "to h1 npu0";
  full.system_name = "leaf-3";
  full.system_description = "";
  full.capabilities = proto::LldpCapabilities{20, 16};
  full.management_addresses = {{1, "198.18.7.1", 2, 7}, {2, "2001:db8::7", 1, 0}};
  proto::LldpNeighbor bare = full;
  bare.netdev = "npu1";
  bare.npu.reset();
  bare.port_description.reset();
  bare.system_name.reset();
  bare.system_description.reset();
  bare.capabilities.reset();
  bare.management_addresses.clear();
  s.neighbors = {full, bare};
  return s;
}

TEST(LldpSection, RoundTripsInJsonAndCbor) {
  const auto s = sample_section();
  for (const auto e : {proto::Encoding::json, proto::Encoding::cbor}) {
    auto back = proto::decode<proto::LldpNeighbors>(proto::encode(s, e), e);
    ASSERT_TRUE(back) << back.error().detail;
    EXPECT_EQ(*back, s);
  }
  const auto doc = proto::to_json(s);
  EXPECT_FALSE(doc["neighbors"][1].contains("npu"));
  EXPECT_FALSE(doc["neighbors"][1].contains("system_name"));
  EXPECT_TRUE(doc["neighbors"][1]["management_addresses"].empty());
  EXPECT_EQ(proto::lldp_observation_system(s.neighbors[0]), "leaf-3");
  EXPECT_EQ(proto::lldp_observation_system(s.neighbors[1]), "02:00:5e:10:20:30");
  EXPECT_EQ(proto::media_type("lldp-neighbors", proto::Encoding::cbor),
            "application/vnd.hsns.lldp-neighbors.v1+cbor");
}

TEST(LldpSection, StrictReaderNamesEveryBadField) {
  auto doc = proto::to_json(sample_section());
  doc["neighbors"][0]["netdev"] = "a/b";
  doc["neighbors"][0]["source_mac"] = "02:00:5E:10:20:30";
  doc["neighbors"][0]["chassis_id_subtype"] = "mac";
  doc["neighbors"][0]["ttl_s"] = 0;
  doc["neighbors"][0]["system_name"] = "tab\there";
  doc["neighbors"][0]["capabilities"]["extra"] = 1;
  doc["neighbors"][0]["management_addresses"][0]["family"] = 0;
  doc["neighbors"][1]["colour"] = "red";
  doc["extra"] = true;
  auto r = proto::read_lldp_neighbors(doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hsns::Error::Kind::invalid);
  std::set<std::string> fields;
  for (const auto& f : r.error().fields) fields.insert(f.field);
  for (const char* f : {"neighbors[0].netdev", "neighbors[0].source_mac", "neighbors[0].chassis_id_subtype",
                        "neighbors[0].ttl_s", "neighbors[0].system_name", "neighbors[0].capabilities.extra",
                        "neighbors[0].management_addresses[0].family", "neighbors[1].colour", "extra"})
    EXPECT_TRUE(fields.contains(f)) << f << " not among " << r.error().fields.size() << " findings";
  // Missing required members.
  auto missing = proto::to_json(sample_section());
  missing["neighbors"][0].erase("port_id");
  missing.erase("ts_ms");
  auto m = proto::read_lldp_neighbors(missing);
  ASSERT_FALSE(m);
  fields.clear();
  for (const auto& f : m.error().fields) fields.insert(f.field);
  EXPECT_TRUE(fields.contains("neighbors[0].port_id"));
  EXPECT_TRUE(fields.contains("ts_ms"));
}

}  // namespace
