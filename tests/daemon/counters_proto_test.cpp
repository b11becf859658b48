// The counters section of the wire contract (hsns/proto/counters.h): round trips in JSON and CBOR, the
// media type, and the strict reader's refusals, each naming the field.
#include <gtest/gtest.h>

#include <string>

#include "hsns/proto/counters.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

CountersSnapshot sample_snapshot() {
  CountersSnapshot s;
  s.ts_ms = 1764640000123;
  s.interval_ms = 10000;
  s.resets = 1;
  s.wraps = 2;
  s.read_errors = {{"ethtool", 3}};
  RdmaPortCounters p;
  p.device = "mlx5_0";
  p.port = 1;
  p.netdev = "ens1f0np0";
  p.counters["port_xmit_data"] = {47625249256ULL, 1000, 100};
  p.hw_counters["np_cnp_sent"] = {48313, 100, 10};
  p.hw_counters["rp_cnp_handled"] = {UINT64_MAX, UINT64_MAX, 1.8446744073709552e18};
  s.rdma.push_back(p);
  RdmaPortCounters rxe;
  rxe.device = "rxe0";
  rxe.netdev = "";
  rxe.hw_counters["sent_pkts"] = {5, 5, 0.5};
  s.rdma.push_back(rxe);
  NetdevCounters n;
  n.netdev = "ens1f0np0";
  n.statistics["rx_bytes"] = {30104512340ULL, 12, 1.2};
  n.ethtool["rx_prio3_pause"] = {1830, 310, 31};
  n.pause.push_back({3, {1830, 310, 31}, {2210, 0, 0}, {58311, 10000, 1000}, {70422, 0, 0}});
  s.netdevs.push_back(n);
  return s;
}

TEST(CountersProto, RoundTripsInBothEncodings) {
  const auto s = sample_snapshot();
  for (const auto enc : {Encoding::json, Encoding::cbor}) {
    const auto bytes = encode(s, enc);
    const auto back = decode<CountersSnapshot>(bytes, enc);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, s);
    EXPECT_EQ(encode(*back, enc), bytes);
  }
  const auto empty = decode<CountersSnapshot>(encode(CountersSnapshot{}));
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, CountersSnapshot{});
  EXPECT_EQ(media_type(Kind<CountersSnapshot>::kName, Encoding::cbor),
            "application/vnd.hsns.counters.v1+cbor");
  // The document as docs/hsnsd.md shows it.
  const auto doc = to_json(s);
  EXPECT_EQ(doc["rdma"][0]["counters"]["port_xmit_data"],
            (json{{"value", 47625249256ULL}, {"delta", 1000}, {"rate", 100.0}}));
  EXPECT_EQ(doc["netdevs"][0]["pause"][0]["priority"], 3);
}

std::vector<std::string> refused_fields(const json& doc) {
  const auto r = read_counters_snapshot(doc);
  EXPECT_FALSE(r);
  std::vector<std::string> out;
  if (!r)
    for (const auto& f : r.error().fields) out.push_back(f.field);
  return out;
}

TEST(CountersProto, StrictReaderNamesEveryBadField) {
  auto doc = to_json(sample_snapshot());
  doc["extra"] = 1;
  doc["rdma"][0]["hw_counters"]["np_cnp_sent"]["unit"] = "frames";
  doc["rdma"][0]["counters"]["port_xmit_data"]["rate"] = -1;
  doc["rdma"][1]["port"] = 0;
  doc["netdevs"][0]["ethtool"]["rx prio"] = json{{"value", 1}, {"delta", 0}, {"rate", 0}};
  doc["netdevs"][0]["statistics"]["rx_bytes"].erase("delta");
  doc["netdevs"][0]["pause"].push_back(doc["netdevs"][0]["pause"][0]);
  doc["read_errors"]["ethtool"] = "three";
  EXPECT_EQ(refused_fields(doc),
            (std::vector<std::string>{
                "read_errors.ethtool",
                "rdma[0].counters.port_xmit_data.rate",
                "rdma[0].hw_counters.np_cnp_sent.unit",
                "rdma[1].port",
                "netdevs[0].statistics.rx_bytes.delta",
                "netdevs[0].ethtool.rx prio",  // FieldReader names member keys as they are
                "netdevs[0].pause[1].priority",
                "extra",
            }));
  // Missing members and wrong types at the top.
  EXPECT_EQ(refused_fields(json{{"ts_ms", -1}}),
            (std::vector<std::string>{"ts_ms", "interval_ms", "resets", "wraps", "read_errors", "rdma",
                                      "netdevs"}));
  // Limits: a priority outside 0..7, a netdev name beyond 15 characters, a counter name beyond 64.
  doc = to_json(sample_snapshot());
  doc["netdevs"][0]["pause"][0]["priority"] = 8;
  doc["netdevs"][0]["netdev"] = "a-netdev-name-too-long";
  doc["rdma"][0]["hw_counters"][std::string(65, 'c')] = json{{"value", 1}, {"delta", 0}, {"rate", 0}};
  EXPECT_EQ(refused_fields(doc),
            (std::vector<std::string>{"rdma[0].hw_counters." + std::string(65, 'c'), "netdevs[0].netdev",
                                      "netdevs[0].pause[0].priority"}));
  // Size: the kind's limit is checked before decoding.
  const auto too_big = decode<CountersSnapshot>(std::string(Kind<CountersSnapshot>::kMaxBytes + 1, ' '));
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().kind, Error::Kind::too_large);
  EXPECT_TRUE(is_counter_name("rx_prio3_pause"));
  EXPECT_FALSE(is_counter_name(""));
  EXPECT_FALSE(is_counter_name("a b"));
}

}  // namespace
}  // namespace hsns::proto
