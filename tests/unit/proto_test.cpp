// Unit tests for the wire contract (hsns/proto): every document kind round-trips through JSON and CBOR,
// malformed and over-limit inputs are refused with an hsns::Error naming the field, and the JSON written
// is the REST API's document.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/proto/agent.h"
#include "hsns/proto/codec.h"
#include "hsns/proto/flows.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

// The aggregator's desired state for one host, as GET /api/v1/agents/{host}/desired renders it.
const char* kDesired = R"({"host":"node-a","generation":7,"ports":[
 {"port_id":"p0","name":"n0","npu":0,"netdev":"eth2","mac":"02:00:00:00:00:01","subnet_id":"s","subnet_name":"a",
  "tenant":"default","address":"198.18.10.11","prefix_length":24,"cidr":"198.18.10.0/24","mtu":9000,
  "gateway_ip":"198.18.10.1","allowed_prefixes":["198.18.10.0/24"]},
 {"port_id":"p1","name":"n1","npu":1,"netdev":null,"mac":null,"subnet_id":"s6","subnet_name":"b",
  "tenant":"default","address":"2001:db8:1::11","prefix_length":64,"cidr":"2001:db8:1::/64","mtu":4200,
  "gateway_ip":null,"allowed_prefixes":["2001:db8:1::/64"]}]})";

const char* kReport = R"({"applied_generation":3,
  "ports":[{"port_id":"p0","netdev":"eth2","state":"converged","drift":["mtu 1500 -> 9000"],
            "isolation_dropped_packets":12},
           {"port_id":"p1","netdev":null,"state":"failed","reason":"no interface for NPU 1"}],
  "qos":[{"netdev":"eth2","state":"drift","findings":["PFC is not enabled on priority 3"]}],
  "daemon":{"version":"0.1.0","started_at":"2026-11-29T16:50:02Z"}})";

FlowRecord sample_flow() {
  FlowRecord f;
  f.host = "host1";
  f.ifindex = 7;
  f.ifname = "rxe0";
  f.direction = FlowDirection::egress;
  f.family = 6;
  f.src = "2001:db8::1";
  f.dst = "2001:db8::2";
  f.sport = 0xC001;
  f.dest_qp = 0x123456;
  f.packets = 10;
  f.bytes = UINT64_MAX;  // counters use the full unsigned range
  f.first_ns = 1'700'000'000'000'000'000;
  f.last_ns = 1'700'000'000'500'000'000;
  f.op[4] = 3;
  f.op[0] = 7;
  f.nak[4] = 1;
  f.ce = 2;
  f.cnp = 1;
  f.psn_regressions = 4;
  f.psn = FlowPsn{1, 98, 99};
  return f;
}

// True when the error names `field` with a reason containing `part`.
::testing::AssertionResult names(const Error& e, const std::string& field, const std::string& part = "") {
  for (const auto& f : e.fields) {
    if (f.field == field && f.reason.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "no field '" << field << "' with '" << part << "' in: " << e.message();
}

std::string cbor_of(const std::vector<std::uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

std::string mutate(std::string doc, const std::string& from, const std::string& to) {
  const auto at = doc.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) doc.replace(at, from.size(), to);
  return doc;
}

// ---- host registration ----

// hsnsd's registration body (daemon/core/inventory.cpp): every member of every NPU.
const char* kRegistration = R"({"npus":[
 {"index":0,"netdev":"eth2","mac":"02:00:00:00:00:01","rdma_device":"mlx5_0","link_speed_mbps":400000},
 {"index":1,"netdev":"eth3","mac":"02:00:00:00:00:02","rdma_device":"","link_speed_mbps":0}]})";

TEST(ProtoHostRegistration, ReadsTheDaemonsBodyAndWritesItBackUnchanged) {
  auto r = decode<HostRegistration>(kRegistration);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->npus.size(), 2u);
  EXPECT_EQ(r->npus[0], (RegisteredNpu{0, "eth2", "02:00:00:00:00:01", "mlx5_0", 400'000}));
  EXPECT_EQ(r->npus[1], (RegisteredNpu{1, "eth3", "02:00:00:00:00:02", "", 0}));
  EXPECT_EQ(encode(*r), json::parse(kRegistration).dump());
  // No NPU is a valid registration (a host without accelerators yet).
  auto none = decode<HostRegistration>(R"({"npus":[]})");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(encode(*none), R"({"npus":[]})");
}

TEST(ProtoHostRegistration, RoundTripsThroughJsonAndCbor) {
  HostRegistration reg;
  // The most NPUs, in an order other than their indexes' (the order sent is kept).
  for (int i = 0; i < static_cast<int>(kMaxRegisteredNpus); ++i) {
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:00:01:%02x", i);
    reg.npus.push_back(
        {63 - i, "eth" + std::to_string(i), mac, i % 2 == 0 ? "mlx5_" + std::to_string(i) : "", i * 1000});
  }
  reg.npus.back().link_speed_mbps = kMaxLinkSpeedMbps;
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    auto back = decode<HostRegistration>(encode(reg, enc), enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, reg);
  }
  EXPECT_EQ(encode(reg, Encoding::cbor), cbor_of(json::to_cbor(to_json(reg))));
}

TEST(ProtoHostRegistration, OptionalMembersAndMacCase) {
  auto r = decode<HostRegistration>(R"({"npus":[{"index":5,"netdev":"ens1f0","mac":"02:AB:cd:00:00:0F",
    "rdma_device":null,"link_speed_mbps":null}]})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->npus.at(0), (RegisteredNpu{5, "ens1f0", "02:ab:cd:00:00:0f", "", 0}));
}

TEST(ProtoHostRegistration, RefusesBadBodiesNamingEveryField) {
  struct Case {
    std::string doc;
    std::string field;
    std::string reason;
  };
  const std::string d = kRegistration;
  const Case cases[] = {
      {"{}", "npus", "is required"},
      {R"({"npus":{}})", "npus", "must be an array"},
      {R"({"npus":[3]})", "npus[0]", "must be an object"},
      {mutate(d, R"("index":1)", R"("index":64)"), "npus[1].index", "between 0 and 63"},
      {mutate(d, R"("index":1)", R"("index":"1")"), "npus[1].index", "must be an integer"},
      {mutate(d, R"("netdev":"eth3")", R"("netdev":"a/b")"), "npus[1].netdev", "Linux interface name"},
      {mutate(d, R"("netdev":"eth3")", R"("netdev":"sixteen-chars-xx")"), "npus[1].netdev", "at most 15"},
      {mutate(d, R"("mac":"02:00:00:00:00:02")", R"("mac":"02-00-00-00-00-02")"), "npus[1].mac",
       "six colon-separated hex octets"},
      {mutate(d, R"("link_speed_mbps":0)", R"("link_speed_mbps":10000001)"), "npus[1].link_speed_mbps",
       "between 0 and 10000000"},
      {mutate(d, R"("index":1)", R"("index":0)"), "npus[1].index", "NPU index 0 is listed twice"},
      {mutate(d, R"("netdev":"eth3")", R"("netdev":"eth2")"), "npus[1].netdev",
       "netdev eth2 is listed twice"},
      // Unknown members are refused (codec.h): a new member is a new version.
      {mutate(d, R"("index":1,)", R"("index":1,"numa":0,)"), "npus[1].numa", "not a known field"},
      {mutate(d, R"({"npus")", R"({"host":"a","npus")"), "host", "not a known field"},
      {mutate(d, R"("index":0,)", R"("index":0,"index":1,)"), "npus[0].index", "more than once"},
  };
  for (const auto& c : cases) {
    auto r = decode<HostRegistration>(c.doc);
    ASSERT_FALSE(r) << c.doc;
    EXPECT_EQ(r.error().kind, Error::Kind::invalid) << r.error().message();
    EXPECT_TRUE(names(r.error(), c.field, c.reason)) << c.doc;
  }
  // Every bad field is named, in the order the REST API lists them: an NPU's members, its unknown
  // members, its value rules, then the next NPU, then the document's unknown members.
  auto many = decode<HostRegistration>(
      R"({"npus":[{"index":"x","netdev":"a b","mac":"nope","extra":1},{"index":0,"netdev":"e","mac":"02:00:00:00:00:01"},
         {"index":0,"netdev":"e","mac":"02:00:00:00:00:01"}],"colour":"blue"})");
  ASSERT_FALSE(many);
  std::vector<std::string> fields;
  for (const auto& f : many.error().fields) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"npus[0].index", "npus[0].extra", "npus[0].netdev",
                                              "npus[0].mac", "npus[2].index", "npus[2].netdev", "colour"}));
}

TEST(ProtoHostRegistration, LimitsOfNpusAndBytes) {
  json body = {{"npus", json::array()}};
  for (int i = 0; i <= static_cast<int>(kMaxRegisteredNpus); ++i) {
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:00:00:%02x", i);
    body["npus"].push_back({{"index", i % 64}, {"netdev", "eth" + std::to_string(i)}, {"mac", mac}});
  }
  auto over = decode<HostRegistration>(body.dump());
  ASSERT_FALSE(over);
  EXPECT_TRUE(names(over.error(), "npus", "at most 64 items"));
  // The size limit is checked before a byte is parsed.
  const std::string huge = R"({"npus":[]})" + std::string(Kind<HostRegistration>::kMaxBytes, ' ');
  auto too_large = decode<HostRegistration>(huge);
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.error().kind, Error::Kind::too_large);
  EXPECT_EQ(media_type(Kind<HostRegistration>::kName, Encoding::json),
            "application/vnd.hsns.host-registration.v1+json");
}

// ---- desired state ----

TEST(ProtoDesiredState, ReadsTheAggregatorDocumentAndWritesItBackUnchanged) {
  auto s = decode<DesiredState>(kDesired);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->host, "node-a");
  EXPECT_EQ(s->generation, 7);
  ASSERT_EQ(s->ports.size(), 2u);
  EXPECT_EQ(s->ports[0].address_cidr(), "198.18.10.11/24");
  EXPECT_EQ(*s->ports[0].mac, "02:00:00:00:00:01");
  EXPECT_EQ(*s->ports[0].subnet_name, "a");
  EXPECT_FALSE(s->ports[1].netdev);
  EXPECT_FALSE(s->ports[1].gateway);
  // The canonical JSON is the REST API's document, byte for byte (the ETag is a digest of it).
  EXPECT_EQ(encode(*s), json::parse(kDesired).dump());
}

TEST(ProtoDesiredState, RoundTripsThroughJsonAndCbor) {
  const auto s = *decode<DesiredState>(kDesired);
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    const auto bytes = encode(s, enc);
    auto back = decode<DesiredState>(bytes, enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(to_json(*back), to_json(s));
  }
  // CBOR is the same data model: the bytes are nlohmann's to_cbor of the JSON document.
  EXPECT_EQ(encode(s, Encoding::cbor), cbor_of(json::to_cbor(json::parse(kDesired))));
}

TEST(ProtoDesiredState, StateFilesOfEarlierVersionsWithoutSubnetFieldsRead) {
  const json old = {{"host", "h"},
                    {"generation", 1},
                    {"ports",
                     {{{"port_id", "p"},
                       {"name", "p"},
                       {"npu", 0},
                       {"netdev", "eth0"},
                       {"address", "198.18.0.2"},
                       {"prefix_length", 24},
                       {"cidr", "198.18.0.0/24"},
                       {"mtu", 9000},
                       {"gateway_ip", nullptr},
                       {"allowed_prefixes", {"198.18.0.0/24"}}}}}};
  auto s = read_desired_state(old);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_FALSE(s->ports[0].subnet_id);
  EXPECT_EQ(to_json(*s)["ports"][0]["mac"], nullptr);
}

TEST(ProtoDesiredState, RefusesBadDocumentsNamingEveryField) {
  struct Case {
    std::string doc;
    std::string field;
    std::string reason;
  };
  const std::string d = kDesired;
  const Case cases[] = {
      {mutate(d, R"("generation":7)", R"("generation":"7")"), "generation", "must be an integer"},
      {mutate(d, R"("mtu":9000)", R"("mtu":20)"), "ports[0].mtu", "between 68 and 65535"},
      {mutate(d, R"("address":"198.18.10.11")", R"("address":"198.18.99.11")"), "ports[0].address",
       "outside cidr"},
      {mutate(d, R"("gateway_ip":"198.18.10.1")", R"("gateway_ip":"198.18.11.1")"), "ports[0].gateway_ip",
       "outside cidr"},
      {mutate(d, R"("cidr":"198.18.10.0/24")", R"("cidr":"198.18.10.1/24")"), "ports[0].cidr", ""},
      {mutate(d, R"("prefix_length":24)", R"("prefix_length":16)"), "ports[0].prefix_length", "differs"},
      {mutate(d, R"("netdev":null)", R"("netdev":"eth2")"), "ports[1].netdev", "used by two ports"},
      {mutate(d, R"("port_id":"p0",)", ""), "ports[0].port_id", "is required"},
      {mutate(d, R"("allowed_prefixes":["198.18.10.0/24"])", R"("allowed_prefixes":[7])"),
       "ports[0].allowed_prefixes[0]", "must be a string"},
      // Unknown members are refused (codec.h): a new member is a new version.
      {mutate(d, R"("host":"node-a",)", R"("host":"node-a","colour":"blue",)"), "colour",
       "not a known field"},
      {mutate(d, R"("mtu":4200,)", R"("mtu":4200,"vlan":3,)"), "ports[1].vlan", "not a known field"},
      // A repeated key is refused before the document is built (the readers could disagree about it).
      {mutate(d, R"("generation":7,)", R"("generation":7,"generation":8,)"), "generation", "more than once"},
  };
  for (const auto& c : cases) {
    auto s = decode<DesiredState>(c.doc);
    ASSERT_FALSE(s) << c.doc;
    EXPECT_EQ(s.error().kind, Error::Kind::invalid) << s.error().message();
    EXPECT_TRUE(names(s.error(), c.field, c.reason));
  }
  // Every bad field of one document is named, not only the first.
  auto two =
      decode<DesiredState>(mutate(mutate(d, R"("mtu":9000)", R"("mtu":20)"), R"("npu":1)", R"("npu":-1)"));
  ASSERT_FALSE(two);
  EXPECT_TRUE(names(two.error(), "ports[0].mtu"));
  EXPECT_TRUE(names(two.error(), "ports[1].npu"));
}

// ---- status report ----

TEST(ProtoStatusReport, RoundTripsAndWritesTheDaemonsDocument) {
  auto r = decode<StatusReport>(kReport);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->applied_generation, 3);
  ASSERT_EQ(r->ports.size(), 2u);
  EXPECT_EQ(r->ports[0].state, PortState::converged);
  EXPECT_EQ(*r->ports[0].isolation_dropped_packets, 12u);
  EXPECT_EQ(r->ports[1].state, PortState::failed);
  EXPECT_EQ(r->qos.at(0).state, QosState::drift);
  EXPECT_EQ(*r->daemon->version, "0.1.0");
  EXPECT_EQ(to_json(*r), json::parse(kReport));
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    auto back = decode<StatusReport>(encode(*r, enc), enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(to_json(*back), to_json(*r));
  }
}

TEST(ProtoStatusReport, OptionalMembersMayBeNullOrAbsent) {
  auto r = decode<StatusReport>(R"({"applied_generation":0,"ports":null,"qos":null,"daemon":null})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->ports.empty());
  EXPECT_FALSE(r->daemon);
  EXPECT_TRUE(decode<StatusReport>(R"({"applied_generation":5})"));
}

TEST(ProtoStatusReport, RefusesBadReportsNamingTheField) {
  const std::string d = kReport;
  const std::pair<std::string, std::string> cases[] = {
      {mutate(d, R"("state":"converged")", R"("state":"fine")"), "ports[0].state"},
      {mutate(d, R"("applied_generation":3)", R"("applied_generation":-3)"), "applied_generation"},
      {mutate(d, R"("version":"0.1.0")", R"("version":"0.1.0","pid":1)"), "daemon.pid"},
      {mutate(d, R"("findings":["PFC is not enabled on priority 3"])", R"("findings":[1])"),
       "qos[0].findings[0]"},
      {mutate(d, R"("netdev":"eth2","state":"drift")", R"("netdev":"a-name-longer-than-15","state":"drift")"),
       "qos[0].netdev"},
      {R"({"ports":[]})", "applied_generation"},
  };
  for (const auto& [doc, field] : cases) {
    auto r = decode<StatusReport>(doc);
    ASSERT_FALSE(r) << doc;
    EXPECT_TRUE(names(r.error(), field)) << doc;
  }
  auto many = json::parse(kReport);
  for (int i = 0; i < 300; ++i) many["ports"].push_back(many["ports"][0]);
  auto r = read_status_report(many);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "ports", "at most 256"));
}

// ---- flows ----

TEST(ProtoFlows, RecordRoundTripsThroughJsonAndCbor) {
  const auto f = sample_flow();
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    auto back = decode<FlowRecord>(encode(f, enc), enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, f);
  }
  const auto j = to_json(f);
  EXPECT_EQ(j["type"], "flow");
  EXPECT_EQ(j["direction"], "egress");
  EXPECT_EQ(j["op"]["ack"], 3);
  EXPECT_EQ(j["nak"]["rnr"], 1);
  EXPECT_FALSE(j.contains("epoch"));
}

TEST(ProtoFlows, RecordRefusesWrongTypesFamiliesAndUnknownMembers) {
  const auto good = to_json(sample_flow());
  auto with = [&good](const std::string& key, json value) {
    json j = good;
    j[key] = std::move(value);
    return j;
  };
  const std::pair<json, std::string> cases[] = {
      {with("type", "counters"), "type"},
      {with("ifindex", "x"), "ifindex"},
      {with("family", 5), "family"},
      {with("src", "198.18.0.1"), "src"},  // an IPv4 address in an IPv6 record
      {with("sport", 70000), "sport"},
      {with("packets", -1), "packets"},
      {with("direction", "sideways"), "direction"},
      {with("colour", "blue"), "colour"},
      {with("op", json{{"send", 1}}), "op.write"},
  };
  for (const auto& [doc, field] : cases) {
    auto r = read_flow_record(doc);
    ASSERT_FALSE(r) << doc.dump();
    EXPECT_TRUE(names(r.error(), field)) << doc.dump();
  }
}

TEST(ProtoFlows, BatchRoundTripsThroughJsonAndCbor) {
  FlowBatch b;
  b.host = "host1";
  b.epoch = 42;
  b.ts_ms = 1'700'000'000'000;
  b.records = {sample_flow(), sample_flow()};
  b.records[1].family = 4;
  b.records[1].src = "198.18.0.1";
  b.records[1].dst = "198.18.0.2";
  b.records[1].psn.reset();
  b.counters = {{"roce", 12}, {"table_full", 0}};
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    auto back = decode<FlowBatch>(encode(b, enc), enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, b);
  }
  json bad = to_json(b);
  bad["records"][1]["dest_qp"] = "x";
  bad["counters"]["roce"] = -1;
  auto r = read_flow_batch(bad);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "records[1].dest_qp"));
  EXPECT_TRUE(names(r.error(), "counters.roce"));
}

TEST(ProtoFlows, SinkBatchesCountOnlyWhenComplete) {
  auto flow_line = [](std::uint64_t epoch) {
    auto f = sample_flow();
    f.epoch = epoch;
    return to_json(f).dump() + "\n";
  };
  const std::string complete = R"({"type":"batch","host":"h","epoch":1,"records":1})"
                               "\n" +
                               flow_line(1) +
                               R"({"type":"counters","host":"h","epoch":1,"records":1,"counters":{}})"
                               "\n";
  const std::string torn = R"({"type":"batch","host":"h","epoch":2,"records":2})"
                           "\n" +
                           flow_line(2) + "{\"ty";
  std::size_t ignored = 0;
  std::size_t malformed = 0;
  auto batches = read_sink_batches(complete + "not json\n" + torn, &ignored, &malformed);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].epoch, 1u);
  ASSERT_EQ(batches[0].flows.size(), 1u);
  EXPECT_TRUE(read_flow_record(batches[0].flows[0]));
  EXPECT_EQ(malformed, 1u);
  EXPECT_EQ(ignored, 3u);  // the torn batch's marker and flow line, and the partial last line
}

// ---- codec: limits and hostile bytes ----

TEST(ProtoCodec, SizeLimitIsCheckedBeforeDecoding) {
  const std::string huge(Kind<FlowRecord>::kMaxBytes + 1, ' ');
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    auto r = decode<FlowRecord>(huge, enc);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, Error::Kind::too_large) << r.error().message();
  }
}

TEST(ProtoCodec, HostileCborIsRefusedBeforeTheDocumentIsBuilt) {
  using namespace std::string_literals;  // the inputs hold NUL bytes
  const std::pair<std::string, std::string> cases[] = {
      {std::string(100'000, '\x81') + '\x00', "nested deeper"},    // [[[[...]]]]
      {"\x9b\x7f\xff\xff\xff\xff\xff\xff\xff"s, "more elements"},  // an array of 2^63-1 elements
      {"\xbb\x00\x00\x00\x01\x00\x00\x00\x00"s, "more elements"},  // a map of 2^32 entries
      {"\xa1\x61"s + "a", "not valid CBOR"},                       // truncated
      {"\xc0\x61"s + "a", "not valid CBOR"},                       // a tag
      {"\xa1\x01\x02"s, "not valid CBOR"},                         // a non-string key
      {"\xa1\x61"s + "a\x01\xff", "not valid CBOR"},               // trailing bytes
      {"\x83\x01\x02\x03"s, "not a JSON object"},                  // an array document
  };
  for (const auto& [bytes, part] : cases) {
    auto r = decode<StatusReport>(bytes, Encoding::cbor);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, Error::Kind::malformed) << r.error().message();
    EXPECT_NE(r.error().detail.find(part), std::string::npos) << r.error().detail;
  }
  // {"applied_generation":1,"applied_generation":2}: a repeated key names the field, as in JSON.
  const std::string dup =
      "\xa2\x72"
      "applied_generation\x01\x72"
      "applied_generation\x02";
  auto r = decode<StatusReport>(dup, Encoding::cbor);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "applied_generation", "more than once"));
}

TEST(ProtoCodec, MediaTypesCarryTheVersion) {
  EXPECT_EQ(media_type(Kind<StatusReport>::kName, Encoding::json),
            "application/vnd.hsns.status-report.v1+json");
  EXPECT_EQ(media_type(Kind<FlowBatch>::kName, Encoding::cbor), "application/vnd.hsns.flow-batch.v1+cbor");
  EXPECT_EQ(*parse_media_type("application/json; charset=utf-8", "status-report"), Encoding::json);
  EXPECT_EQ(*parse_media_type("Application/VND.hsns.status-report.v1+cbor", "status-report"), Encoding::cbor);
  auto v2 = parse_media_type("application/vnd.hsns.status-report.v2+json", "status-report");
  ASSERT_FALSE(v2);
  EXPECT_EQ(v2.error().field(), "Content-Type");
  EXPECT_FALSE(parse_media_type("application/vnd.hsns.desired-state.v1+json", "status-report"));
}

}  // namespace
}  // namespace hsns::proto
