// Unit tests for aggregator/api/network/requests.h: every validation rule of the network-management
// request bodies, with the exact values parsed from good bodies.
#include "api/network/requests.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/json_fields.h"
#include "model/network.h"
#include "services/ipam.h"

namespace hsns::network {
namespace {

using nlohmann::json;

// A body as the HTTP layer reads it (strictly: duplicate keys are refused there).
json body(std::string_view text) {
  auto j = parse_json_object(text);
  if (!j) {
    ADD_FAILURE() << "test body rejected: " << j.error().detail;
    return json();
  }
  return *j;
}

IpAddress addr(std::string_view text) {
  return IpAddress::parse(text).value();
}
IpPrefix prefix(std::string_view text) {
  return IpPrefix::parse(text).value();
}

std::string str(const IpRange& r) {
  return r.first.to_string() + "-" + r.last.to_string();
}
std::vector<std::string> str(const std::vector<IpRange>& pools) {
  std::vector<std::string> out;
  for (const auto& p : pools) out.push_back(str(p));
  return out;
}

// The result is a 400 Problem whose invalid_params name `field` with a reason containing `reason_part`.
template <class T>
::testing::AssertionResult rejects(const tl::expected<T, Problem>& r, const std::string& field,
                                   const std::string& reason_part = "") {
  if (r.has_value()) return ::testing::AssertionFailure() << "was accepted";
  const Problem& p = r.error();
  if (p.status != 400) return ::testing::AssertionFailure() << "status " << p.status;
  if (p.slug != "invalid-request") return ::testing::AssertionFailure() << "slug " << p.slug;
  if (p.detail.find("field '") != 0) return ::testing::AssertionFailure() << "detail '" << p.detail << "'";
  for (const auto& ip : p.invalid_params) {
    if (ip.name == field && ip.reason.find(reason_part) != std::string::npos)
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no invalid_param '" << field << "' with reason containing '"
                                       << reason_part << "' in " << p.to_json().dump();
}

// ---------------------------------------------------------------------------------------------------
// Names

TEST(Names, CheckName) {
  for (const char* good : {"a", "train-a", "Tenant_1", "x.y-z_0", "0abc"}) {
    EXPECT_FALSE(check_name(good).has_value()) << good;
  }
  EXPECT_FALSE(check_name(std::string(64, 'a')).has_value());
  EXPECT_TRUE(check_name(std::string(65, 'a')).has_value());
  for (const char* bad : {"", "-a", ".a", "_a", "a b", "a/b", "a:b", "caf\xc3\xa9", "a\tb", "a\nb", "a@b"}) {
    EXPECT_TRUE(check_name(bad).has_value()) << bad;
  }
  EXPECT_TRUE(check_name(std::string("a\0b", 3)).has_value());
}

TEST(Names, CheckHostName) {
  EXPECT_FALSE(check_host_name("node-01.cluster.example").has_value());
  EXPECT_FALSE(check_host_name(std::string(253, 'n')).has_value());
  EXPECT_TRUE(check_host_name(std::string(254, 'n')).has_value());
  for (const char* bad : {"", "-node", "node 1", "node/1", "node:1", "n\xc3\xb6"}) {
    EXPECT_TRUE(check_host_name(bad).has_value()) << bad;
  }
}

// ---------------------------------------------------------------------------------------------------
// parse_host_registration

TEST(HostRegistration, GoodBodyParsedExactly) {
  const auto r = parse_host_registration("node-01.cluster", body(R"({"npus": [
      {"index": 1, "netdev": "eth3", "mac": "02:AA:bb:CC:dd:01", "rdma_device": "mlx5_1",
       "link_speed_mbps": 400000},
      {"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:00"}]})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ(r->name, "node-01.cluster");
  ASSERT_EQ(r->npus.size(), 2u);
  // Sorted by index; MACs lower-cased; optional fields defaulted.
  EXPECT_EQ(r->npus[0].index, 0);
  EXPECT_EQ(r->npus[0].netdev, "eth2");
  EXPECT_EQ(r->npus[0].mac, "02:00:00:00:00:00");
  EXPECT_EQ(r->npus[0].rdma_device, "");
  EXPECT_EQ(r->npus[0].link_speed_mbps, 0);
  EXPECT_EQ(r->npus[1].index, 1);
  EXPECT_EQ(r->npus[1].netdev, "eth3");
  EXPECT_EQ(r->npus[1].mac, "02:aa:bb:cc:dd:01");
  EXPECT_EQ(r->npus[1].rdma_device, "mlx5_1");
  EXPECT_EQ(r->npus[1].link_speed_mbps, 400000);
}

TEST(HostRegistration, EmptyNpuListAndLimits) {
  const auto empty = parse_host_registration("node-02", body(R"({"npus": []})"));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->npus.empty());

  json many = {{"npus", json::array()}};
  for (int i = 0; i < kMaxNpusPerHost; ++i) {
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:00:00:%02x", i);
    many["npus"].push_back({{"index", i}, {"netdev", "eth" + std::to_string(i)}, {"mac", mac}});
  }
  const auto full = parse_host_registration("node-03", many);
  ASSERT_TRUE(full.has_value()) << full.error().detail;
  EXPECT_EQ(full->npus.size(), static_cast<std::size_t>(kMaxNpusPerHost));
  EXPECT_EQ(full->npus.back().index, kMaxNpusPerHost - 1);
  EXPECT_EQ(full->npus.back().link_speed_mbps, 0);

  many["npus"].push_back({{"index", 0}, {"netdev", "eth99"}, {"mac", "02:00:00:00:01:00"}});
  EXPECT_TRUE(rejects(parse_host_registration("node-03", many), "npus", "at most 64"));
}

TEST(HostRegistration, BadHostName) {
  const json ok = body(R"({"npus": []})");
  for (const std::string& host : std::vector<std::string>{"", "-node", "node 1", "node/1", "../etc",
                                                          "n\xc3\xb6"
                                                          "de",
                                                          std::string(254, 'n'), std::string("n\0de", 4)}) {
    EXPECT_TRUE(rejects(parse_host_registration(host, ok), "host")) << host;
  }
}

TEST(HostRegistration, NpusShape) {
  EXPECT_TRUE(rejects(parse_host_registration("n1", body("{}")), "npus", "is required"));
  EXPECT_TRUE(rejects(parse_host_registration("n1", body(R"({"npus": null})")), "npus", "is required"));
  EXPECT_TRUE(rejects(parse_host_registration("n1", body(R"({"npus": {}})")), "npus", "must be an array"));
  EXPECT_TRUE(rejects(parse_host_registration("n1", body(R"({"npus": [], "extra": 1})")), "extra",
                      "not a known field"));
  const auto r = parse_host_registration(
      "n1", body(R"({"npus": [{"index": 0, "netdev": "eth0", "mac": "02:00:00:00:00:01"}, 5, "x"]})"));
  EXPECT_TRUE(rejects(r, "npus[1]", "must be an object"));
  EXPECT_TRUE(rejects(r, "npus[2]", "must be an object"));
  EXPECT_EQ(r.error().invalid_params.size(), 2u);
}

json one_npu(const json& overrides) {
  json npu = {{"index", 0}, {"netdev", "eth0"}, {"mac", "02:00:00:00:00:01"}};
  for (const auto& [k, v] : overrides.items()) {
    if (v.is_string() && v.get<std::string>() == "<absent>") {
      npu.erase(k);
    } else {
      npu[k] = v;
    }
  }
  return {{"npus", json::array({npu})}};
}

TEST(HostRegistration, NpuFields) {
  struct Case {
    json overrides;
    const char* field;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {{{"index", "<absent>"}}, "npus[0].index", "is required"},
      {{{"index", -1}}, "npus[0].index", "between 0 and 63"},
      {{{"index", 64}}, "npus[0].index", "between 0 and 63"},
      {{{"index", "0"}}, "npus[0].index", "must be an integer"},
      {{{"index", 1.5}}, "npus[0].index", "must be an integer"},
      {{{"netdev", "<absent>"}}, "npus[0].netdev", "is required"},
      {{{"netdev", nullptr}}, "npus[0].netdev", "is required"},
      {{{"netdev", 0}}, "npus[0].netdev", "must be a string"},
      {{{"netdev", ""}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth/0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth:0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth 0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth\t0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth\n0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "eth\v0"}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", std::string("eth\0"
                               "0",
                               5)}},
       "npus[0].netdev",
       "Linux interface name"},
      {{{"netdev", "."}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", ".."}}, "npus[0].netdev", "Linux interface name"},
      {{{"netdev", "abcdefghijklmnop"}}, "npus[0].netdev", "at most 15"},
      {{{"mac", "<absent>"}}, "npus[0].mac", "is required"},
      {{{"mac", "02:00:00:00:00:0g"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "02-00-00-00-00-01"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "0200.0000.0001"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "02:00:00:00:00"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "02:00:00:00:00:01:"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "2:0:0:0:0:1"}}, "npus[0].mac", "hex octets"},
      {{{"mac", "020:00:00:00:00:1"}}, "npus[0].mac", "hex octets"},
      {{{"mac", ""}}, "npus[0].mac", "hex octets"},
      {{{"mac", 2}}, "npus[0].mac", "must be a string"},
      {{{"rdma_device", 5}}, "npus[0].rdma_device", "must be a string"},
      {{{"rdma_device", std::string(65, 'm')}}, "npus[0].rdma_device", "at most 64"},
      {{{"link_speed_mbps", -1}}, "npus[0].link_speed_mbps", "between 0 and 10000000"},
      {{{"link_speed_mbps", 10'000'001}}, "npus[0].link_speed_mbps", "between 0 and 10000000"},
      {{{"link_speed_mbps", "100G"}}, "npus[0].link_speed_mbps", "must be an integer"},
      {{{"speed", 100}}, "npus[0].speed", "not a known field"},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(rejects(parse_host_registration("n1", one_npu(c.overrides)), c.field, c.reason))
        << c.overrides.dump();
  }
  // The boundaries themselves are fine.
  for (const json& good :
       {json{{"index", 63}}, json{{"netdev", "abcdefghijklmno"}}, json{{"netdev", "eth0.100"}},
        json{{"netdev", "..."}}, json{{"mac", "FF:ff:00:00:00:00"}}, json{{"link_speed_mbps", 10'000'000}},
        json{{"rdma_device", nullptr}}, json{{"link_speed_mbps", nullptr}}, json{{"rdma_device", ""}}}) {
    const auto r = parse_host_registration("n1", one_npu(good));
    EXPECT_TRUE(r.has_value()) << good.dump() << " -> " << r.error().detail;
  }
}

TEST(HostRegistration, DuplicateIndexAndNetdev) {
  const auto dup_index = parse_host_registration("n1", body(R"({"npus": [
      {"index": 3, "netdev": "eth0", "mac": "02:00:00:00:00:01"},
      {"index": 3, "netdev": "eth1", "mac": "02:00:00:00:00:02"}]})"));
  EXPECT_TRUE(rejects(dup_index, "npus[1].index", "listed twice"));
  EXPECT_EQ(dup_index.error().invalid_params.size(), 1u);

  const auto dup_netdev = parse_host_registration("n1", body(R"({"npus": [
      {"index": 0, "netdev": "eth0", "mac": "02:00:00:00:00:01"},
      {"index": 1, "netdev": "eth1", "mac": "02:00:00:00:00:02"},
      {"index": 2, "netdev": "eth0", "mac": "02:00:00:00:00:03"}]})"));
  EXPECT_TRUE(rejects(dup_netdev, "npus[2].netdev", "listed twice"));
  EXPECT_EQ(dup_netdev.error().invalid_params.size(), 1u);

  const auto both = parse_host_registration("n1", body(R"({"npus": [
      {"index": 0, "netdev": "eth0", "mac": "02:00:00:00:00:01"},
      {"index": 0, "netdev": "eth0", "mac": "02:00:00:00:00:01"}]})"));
  EXPECT_TRUE(rejects(both, "npus[1].index", "listed twice"));
  EXPECT_TRUE(rejects(both, "npus[1].netdev", "listed twice"));
}

TEST(HostRegistration, EveryBadFieldIsListed) {
  const auto r = parse_host_registration("n1", body(R"({"npus": [
      {"index": 99, "netdev": "eth0", "mac": "bad"},
      {"index": 1, "netdev": "a b", "mac": "02:00:00:00:00:01", "x": 1}], "y": 2})"));
  EXPECT_TRUE(rejects(r, "npus[0].index"));
  EXPECT_TRUE(rejects(r, "npus[0].mac"));
  EXPECT_TRUE(rejects(r, "npus[1].netdev"));
  EXPECT_TRUE(rejects(r, "npus[1].x"));
  EXPECT_TRUE(rejects(r, "y"));
  EXPECT_EQ(r.error().invalid_params.size(), 5u);
  EXPECT_NE(r.error().detail.find("(and 4 more in invalid_params)"), std::string::npos) << r.error().detail;
}

// ---------------------------------------------------------------------------------------------------
// parse_subnet_create

TEST(SubnetCreate, MinimalBodyGetsDefaults) {
  const auto r = parse_subnet_create(body(R"({"name": "train-a", "cidr": "10.20.0.0/24"})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ(r->name, "train-a");
  EXPECT_EQ(r->tenant, "default");
  EXPECT_EQ(r->cidr.to_string(), "10.20.0.0/24");
  EXPECT_FALSE(r->gateway.has_value());
  EXPECT_TRUE(r->allocation_pools.empty());
  EXPECT_EQ(r->mtu, 9000);
  EXPECT_EQ(str(ipam::default_pools(r->cidr, r->gateway)),
            (std::vector<std::string>{"10.20.0.1-10.20.0.254"}));
}

TEST(SubnetCreate, NullOptionalFieldsAreDefaults) {
  const auto r = parse_subnet_create(body(
      R"({"name": "a", "cidr": "10.0.0.0/16", "tenant": null, "gateway_ip": null, "mtu": null,
          "allocation_pools": null})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ(r->tenant, "default");
  EXPECT_FALSE(r->gateway.has_value());
  EXPECT_EQ(r->mtu, 9000);
  EXPECT_TRUE(r->allocation_pools.empty());
}

TEST(SubnetCreate, FullIpv4Body) {
  const auto r = parse_subnet_create(body(R"({"name": "train.b_2", "tenant": "team-1", "cidr": "10.20.0.0/24",
      "gateway_ip": "10.20.0.1", "mtu": 4200, "allocation_pools": [
        {"start": "10.20.0.200", "end": "10.20.0.250"}, {"start": "10.20.0.10", "end": "10.20.0.100"},
        {"start": "10.20.0.254", "end": "10.20.0.254"}]})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ(r->name, "train.b_2");
  EXPECT_EQ(r->tenant, "team-1");
  EXPECT_EQ(r->cidr, prefix("10.20.0.0/24"));
  ASSERT_TRUE(r->gateway.has_value());
  EXPECT_EQ(*r->gateway, addr("10.20.0.1"));
  EXPECT_EQ(r->mtu, 4200);
  // Pools are kept in the order given.
  EXPECT_EQ(str(r->allocation_pools),
            (std::vector<std::string>{"10.20.0.200-10.20.0.250", "10.20.0.10-10.20.0.100",
                                      "10.20.0.254-10.20.0.254"}));
}

TEST(SubnetCreate, Ipv6Body) {
  const auto r =
      parse_subnet_create(body(R"({"name": "v6", "cidr": "FD00:1:0:0::/64", "gateway_ip": "fd00:1::1",
      "mtu": 1280, "allocation_pools": [{"start": "fd00:1::100", "end": "fd00:1::1ff"},
                                        {"start": "fd00:1::ffff:ffff:ffff:0", "end": "fd00:1::ffff:ffff:ffff:ffff"}]})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ(r->cidr.to_string(), "fd00:1::/64");
  EXPECT_EQ(r->gateway->to_string(), "fd00:1::1");
  EXPECT_EQ(r->mtu, 1280);
  EXPECT_EQ(str(r->allocation_pools),
            (std::vector<std::string>{"fd00:1::100-fd00:1::1ff",
                                      "fd00:1::ffff:ffff:ffff:0-fd00:1::ffff:ffff:ffff:ffff"}));
  // A /126 is the smallest IPv6 subnet; a /30 the smallest IPv4 one.
  EXPECT_TRUE(parse_subnet_create(body(R"({"name": "p2p6", "cidr": "fd00::/126"})")).has_value());
  EXPECT_TRUE(parse_subnet_create(body(R"({"name": "p2p4", "cidr": "10.0.0.4/30"})")).has_value());
}

TEST(SubnetCreate, RequiredFieldsAndTypes) {
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"cidr": "10.0.0.0/24"})")), "name", "is required"));
  EXPECT_TRUE(
      rejects(parse_subnet_create(body(R"({"name": null, "cidr": "10.0.0.0/24"})")), "name", "is required"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a"})")), "cidr", "is required"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": 7, "cidr": "10.0.0.0/24"})")), "name",
                      "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": 10})")), "cidr", "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": ["10.0.0.0/24"]})")), "cidr",
                      "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "gateway_ip": 1})")),
                      "gateway_ip", "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "tenant": true})")),
                      "tenant", "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "mtu": "9000"})")),
                      "mtu", "must be an integer"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "mtu": 1500.0})")),
                      "mtu", "must be an integer"));
  EXPECT_TRUE(
      rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "allocation_pools": {}})")),
              "allocation_pools", "must be an array"));
  const auto both = parse_subnet_create(body("{}"));
  EXPECT_TRUE(rejects(both, "name", "is required"));
  EXPECT_TRUE(rejects(both, "cidr", "is required"));
  EXPECT_EQ(both.error().invalid_params.size(), 2u);
}

TEST(SubnetCreate, NamesAndTenants) {
  for (const char* bad : {"", "bad name", "-a", "a/b", "a:b", "caf\xc3\xa9"}) {
    json b = {{"name", bad}, {"cidr", "10.0.0.0/24"}};
    EXPECT_TRUE(rejects(parse_subnet_create(b), "name")) << bad;
    b = {{"name", "ok"}, {"tenant", bad}, {"cidr", "10.0.0.0/24"}};
    EXPECT_TRUE(rejects(parse_subnet_create(b), "tenant")) << bad;
  }
  EXPECT_TRUE(rejects(parse_subnet_create({{"name", std::string(65, 'a')}, {"cidr", "10.0.0.0/24"}}), "name",
                      "at most 64"));
  EXPECT_TRUE(parse_subnet_create({{"name", std::string(64, 'a')}, {"cidr", "10.0.0.0/24"}}).has_value());
}

TEST(SubnetCreate, CidrRules) {
  const auto host_bits = parse_subnet_create(body(R"({"name": "a", "cidr": "198.18.0.1/24"})"));
  EXPECT_TRUE(rejects(host_bits, "cidr", "did you mean 198.18.0.0/24?"));
  EXPECT_EQ(host_bits.error().detail,
            "field 'cidr': '198.18.0.1/24' has host bits set (did you mean 198.18.0.0/24?)");
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "fd00::1/64"})")), "cidr",
                      "did you mean fd00::/64?"));
  EXPECT_TRUE(
      rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0"})")), "cidr", "no prefix length"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/33"})")), "cidr", "0..32"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/-8"})")), "cidr", "0..32"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0/24"})")), "cidr"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": ""})")), "cidr"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/31"})")), "cidr",
                      "/30 or shorter"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.1/32"})")), "cidr",
                      "/30 or shorter"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "fd00::/127"})")), "cidr",
                      "/126 or shorter"));
  EXPECT_TRUE(rejects(parse_subnet_create(body(R"({"name": "a", "cidr": "fd00::1/128"})")), "cidr",
                      "/126 or shorter"));
  EXPECT_TRUE(rejects(parse_subnet_create({{"name", "a"}, {"cidr", "10.0.0.0/" + std::string(70, '1')}}),
                      "cidr", "at most 64"));
}

json subnet_with_pools(const char* cidr, const char* gateway, const json& pools) {
  json b = {{"name", "a"}, {"cidr", cidr}, {"allocation_pools", pools}};
  if (gateway) b["gateway_ip"] = gateway;
  return b;
}

// Each refused range answers 400 naming cidr with the range and the reason.
TEST(SubnetCreate, SpecialPurposeRangesAreRefused) {
  struct Case {
    const char* cidr;
    const char* reason;
  };
  for (const Case& c : std::vector<Case>{{"224.0.0.0/24", "multicast"},
                                         {"239.255.0.0/16", "multicast"},
                                         {"127.0.0.0/8", "loopback"},
                                         {"127.0.1.0/24", "loopback"},
                                         {"169.254.0.0/16", "link-local"},
                                         {"0.0.0.0/8", "this network"},
                                         {"0.0.0.0/24", "this network"},
                                         {"0.0.0.0/0", "overlaps 0.0.0.0/8"},
                                         {"240.0.0.0/4", "reserved for future use"},
                                         {"240.0.0.0/24", "reserved for future use"},
                                         {"255.255.255.0/24", "reserved for future use"},
                                         {"192.0.0.0/24", "IETF protocol assignments"},
                                         {"192.88.99.0/24", "6to4 relay anycast"},
                                         {"::ffff:0:0/96", "IPv4-mapped"},
                                         {"::ffff:10.10.0.0/120", "IPv4-mapped"},
                                         {"::/96", "IPv4-compatible"},
                                         {"::/120", "IPv4-compatible"},
                                         {"::/0", "overlaps ::/128"},
                                         {"fe80::/64", "link-local"},
                                         {"fec0::/64", "site-local"},
                                         {"ff00::/64", "multicast"},
                                         {"ff02::/120", "multicast"},
                                         {"64:ff9b::/96", "NAT64"},
                                         {"100::/64", "discard-only"},
                                         {"2001::/64", "Teredo"},
                                         {"2002::/64", "6to4"},
                                         {"4000::/64", "2000::/3"}}) {
    SCOPED_TRACE(c.cidr);
    const auto r = parse_subnet_create({{"name", "a"}, {"cidr", c.cidr}});
    EXPECT_TRUE(rejects(r, "cidr", c.reason));
    if (!r) {
      EXPECT_EQ(r.error().invalid_params.size(), 1u);
      EXPECT_EQ(r.error().detail.find("field 'cidr': "), 0u) << r.error().detail;
    }
    // A gateway and pools do not hide the reason, nor add errors of their own.
    const auto with_more =
        parse_subnet_create({{"name", "a"}, {"cidr", c.cidr}, {"gateway_ip", "224.0.0.1"}, {"mtu", 1500}});
    EXPECT_TRUE(rejects(with_more, "cidr", c.reason));
  }
}

TEST(SubnetCreate, ProjectAndPrivateRangesStayAllowed) {
  for (const char* cidr :
       {"198.18.0.0/15", "198.18.0.0/24", "198.19.4.0/22", "10.0.0.0/8", "10.20.0.0/24", "172.16.0.0/12",
        "192.168.0.0/16", "100.64.0.0/10", "192.0.2.0/24", "203.0.113.0/24", "8.8.8.0/24", "2001:db8::/32",
        "2001:db8:1::/64", "3fff::/64", "fd00::/64", "fd00:1::/126", "2001:2::/64", "2a00:1450::/64"}) {
    const auto r = parse_subnet_create({{"name", "a"}, {"cidr", cidr}});
    EXPECT_TRUE(r.has_value()) << cidr << ": " << r.error().detail;
  }
}

TEST(SubnetCreate, RouterAnycastNetworkAndBroadcastAreNoHostAddresses) {
  // IPv6: the Subnet-Router anycast address (host bits all zero) is neither a gateway nor a pool bound.
  auto r = parse_subnet_create({{"name", "a"}, {"cidr", "2001:db8:1::/64"}, {"gateway_ip", "2001:db8:1::"}});
  EXPECT_TRUE(rejects(r, "gateway_ip", "Subnet-Router anycast"));
  r = parse_subnet_create(
      subnet_with_pools("2001:db8:1::/64", nullptr, {{{"start", "2001:db8:1::"}, {"end", "2001:db8:1::9"}}}));
  EXPECT_TRUE(rejects(r, "allocation_pools[0].start", "Subnet-Router anycast"));
  // IPv4: network and broadcast addresses, named as such.
  r = parse_subnet_create({{"name", "a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.0"}});
  EXPECT_TRUE(rejects(r, "gateway_ip", "network address"));
  r = parse_subnet_create({{"name", "a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.255"}});
  EXPECT_TRUE(rejects(r, "gateway_ip", "broadcast address"));
  r = parse_subnet_create(
      subnet_with_pools("198.18.0.0/24", nullptr, {{{"start", "198.18.0.10"}, {"end", "198.18.0.255"}}}));
  EXPECT_TRUE(rejects(r, "allocation_pools[0].end", "broadcast address"));
  // The addresses next to them are fine.
  EXPECT_TRUE(
      parse_subnet_create({{"name", "a"}, {"cidr", "2001:db8:1::/64"}, {"gateway_ip", "2001:db8:1::1"}})
          .has_value());
  EXPECT_TRUE(parse_subnet_create({{"name", "a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.254"}})
                  .has_value());
}

TEST(SubnetCreate, GatewayRules) {
  auto with_gateway = [](const char* cidr, const char* gw) {
    return parse_subnet_create({{"name", "a"}, {"cidr", cidr}, {"gateway_ip", gw}});
  };
  EXPECT_TRUE(rejects(with_gateway("10.20.0.0/24", "10.21.0.1"), "gateway_ip", "is outside 10.20.0.0/24"));
  EXPECT_TRUE(rejects(with_gateway("10.20.0.0/24", "10.20.0.0"), "gateway_ip", "not a usable host address"));
  EXPECT_TRUE(
      rejects(with_gateway("10.20.0.0/24", "10.20.0.255"), "gateway_ip", "not a usable host address"));
  EXPECT_TRUE(rejects(with_gateway("10.20.0.0/24", "fd00::1"), "gateway_ip", "is outside"));
  EXPECT_TRUE(rejects(with_gateway("fd00::/64", "10.20.0.1"), "gateway_ip", "is outside"));
  EXPECT_TRUE(rejects(with_gateway("fd00::/64", "fd00::"), "gateway_ip", "not a usable host address"));
  EXPECT_TRUE(
      rejects(with_gateway("10.20.0.0/24", "10.20.0.256"), "gateway_ip", "not an IPv4 or IPv6 address"));
  EXPECT_TRUE(rejects(with_gateway("10.20.0.0/24", "10.20.0.1/24"), "gateway_ip"));
  EXPECT_TRUE(rejects(with_gateway("10.20.0.0/24", ""), "gateway_ip"));
  // Usable addresses at either end are fine; IPv6 has no broadcast address.
  EXPECT_TRUE(with_gateway("10.20.0.0/24", "10.20.0.254").has_value());
  EXPECT_TRUE(with_gateway("10.20.0.0/24", "10.20.0.1").has_value());
  EXPECT_TRUE(with_gateway("fd00::/64", "fd00::ffff:ffff:ffff:ffff").has_value());
  EXPECT_TRUE(with_gateway("10.20.0.0/30", "10.20.0.2").has_value());
}

TEST(SubnetCreate, PoolRules) {
  const char* cidr = "10.20.0.0/24";
  auto pools = [&](const json& p, const char* gw = nullptr) {
    return parse_subnet_create(subnet_with_pools(cidr, gw, p));
  };

  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.21.0.10", "end": "10.21.0.20"}])")),
                      "allocation_pools[0].start", "is outside 10.20.0.0/24"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.10", "end": "10.20.1.20"}])")),
                      "allocation_pools[0].end", "is outside 10.20.0.0/24"));
  // Network and broadcast addresses are not usable host addresses.
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.0", "end": "10.20.0.20"}])")),
                      "allocation_pools[0].start", "not a usable host address"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.10", "end": "10.20.0.255"}])")),
                      "allocation_pools[0].end", "not a usable host address"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.10", "end": "10.20.0.20"},
                                            {"start": "10.20.0.20", "end": "10.20.0.30"}])")),
                      "allocation_pools[1]", "overlaps allocation_pools[0]"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.10", "end": "10.20.0.20"},
                                            {"start": "10.20.0.100", "end": "10.20.0.110"},
                                            {"start": "10.20.0.1", "end": "10.20.0.200"}])")),
                      "allocation_pools[2]", "overlaps allocation_pools[0]"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.10", "end": "10.20.0.20"}])"), "10.20.0.15"),
                      "allocation_pools[0]", "contains the gateway 10.20.0.15"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.1", "end": "10.20.0.20"}])"), "10.20.0.1"),
                      "allocation_pools[0]", "contains the gateway"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.20", "end": "10.20.0.10"}])")),
                      "allocation_pools[0].end", "must not be lower than start"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.2", "end": "10.20.0.3"},
                                            {"start": "10.20.0.10", "end": "fd00::1"}])")),
                      "allocation_pools[1].end", "same IP version"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "fd00::1", "end": "fd00::2"}])")),
                      "allocation_pools[0].start", "is outside"));
  EXPECT_TRUE(
      rejects(pools(json::parse(R"([{"start": "10.20.0.10"}])")), "allocation_pools[0].end", "is required"));
  EXPECT_TRUE(
      rejects(pools(json::parse(R"([{"end": "10.20.0.10"}])")), "allocation_pools[0].start", "is required"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": 10, "end": "10.20.0.10"}])")),
                      "allocation_pools[0].start", "must be a string"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.x", "end": "10.20.0.10"}])")),
                      "allocation_pools[0].start", "not an IPv4 or IPv6 address"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.20.0.2", "end": "10.20.0.10", "size": 9}])")),
                      "allocation_pools[0].size", "not a known field"));
  EXPECT_TRUE(
      rejects(pools(json::parse(R"([{"start": "10.20.0.2", "end": "10.20.0.10"}, "10.20.0.20-10.20.0.30"])")),
              "allocation_pools[1]", "must be an object"));

  json too_many = json::array();
  for (int i = 0; i < 65; ++i) {
    too_many.push_back(
        {{"start", "10.20.0." + std::to_string(i + 1)}, {"end", "10.20.0." + std::to_string(i + 1)}});
  }
  EXPECT_TRUE(rejects(pools(too_many), "allocation_pools", "at most 64"));
  too_many.erase(too_many.size() - 1);
  EXPECT_TRUE(pools(too_many).has_value());

  // The brief's favourite: an error in the second pool is named by index.
  const auto second = pools(json::parse(R"([{"start": "10.20.0.2", "end": "10.20.0.10"},
                                            {"start": "10.20.0.50", "end": "10.20.0.40"}])"));
  EXPECT_TRUE(rejects(second, "allocation_pools[1].end", "must not be lower than start"));
  EXPECT_EQ(second.error().invalid_params.size(), 1u);
  EXPECT_EQ(second.error().detail, "field 'allocation_pools[1].end': must not be lower than start");
}

TEST(SubnetCreate, Ipv6PoolRules) {
  auto pools = [](const json& p) {
    return parse_subnet_create(subnet_with_pools("fd00:1::/64", "fd00:1::1", p));
  };
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "fd00:1::", "end": "fd00:1::9"}])")),
                      "allocation_pools[0].start", "not a usable host address"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "fd00:2::1", "end": "fd00:2::9"}])")),
                      "allocation_pools[0].start", "is outside fd00:1::/64"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "10.0.0.1", "end": "10.0.0.9"}])")),
                      "allocation_pools[0].start", "is outside"));
  EXPECT_TRUE(rejects(pools(json::parse(R"([{"start": "fd00:1::1", "end": "fd00:1::9"}])")),
                      "allocation_pools[0]", "contains the gateway fd00:1::1"));
  EXPECT_TRUE(
      pools(json::parse(R"([{"start": "fd00:1::2", "end": "fd00:1::ffff:ffff:ffff:ffff"}])")).has_value());
}

TEST(SubnetCreate, MtuBounds) {
  auto mtu = [](const char* cidr, const json& m) {
    return parse_subnet_create({{"name", "a"}, {"cidr", cidr}, {"mtu", m}});
  };
  EXPECT_TRUE(rejects(mtu("10.0.0.0/24", 575), "mtu", "between 576 and 9216"));
  EXPECT_TRUE(rejects(mtu("10.0.0.0/24", 9217), "mtu", "between 576 and 9216"));
  EXPECT_TRUE(rejects(mtu("10.0.0.0/24", -1), "mtu", "between 576 and 9216"));
  EXPECT_TRUE(rejects(mtu("10.0.0.0/24", 0), "mtu"));
  EXPECT_EQ(mtu("10.0.0.0/24", 576)->mtu, 576);
  EXPECT_EQ(mtu("10.0.0.0/24", 1279)->mtu, 1279);
  EXPECT_EQ(mtu("10.0.0.0/24", 9216)->mtu, 9216);
  // IPv6 needs at least 1280 (RFC 8200).
  EXPECT_TRUE(rejects(mtu("fd00::/64", 1279), "mtu", "at least 1280"));
  EXPECT_TRUE(rejects(mtu("fd00::/64", 576), "mtu", "at least 1280"));
  EXPECT_TRUE(rejects(mtu("fd00::/64", 9217), "mtu", "between 576 and 9216"));
  EXPECT_EQ(mtu("fd00::/64", 1280)->mtu, 1280);
  EXPECT_EQ(mtu("fd00::/64", 9216)->mtu, 9216);
}

TEST(SubnetCreate, UnknownFields) {
  const auto r = parse_subnet_create(body(R"({"name": "a", "cidr": "10.0.0.0/24", "gateway": "10.0.0.1",
                                              "enable_dhcp": true})"));
  EXPECT_TRUE(rejects(r, "gateway", "not a known field"));
  EXPECT_TRUE(rejects(r, "enable_dhcp", "not a known field"));
  EXPECT_EQ(r.error().invalid_params.size(), 2u);
}

TEST(SubnetCreate, CrossFieldErrorsAreAllListed) {
  const auto r =
      parse_subnet_create(body(R"({"name": "a", "cidr": "fd00::/64", "gateway_ip": "fd01::1", "mtu": 1000,
      "allocation_pools": [{"start": "fd00::10", "end": "fd00::20"}, {"start": "fd00::15", "end": "fd00::30"}]})"));
  EXPECT_TRUE(rejects(r, "mtu", "at least 1280"));
  EXPECT_TRUE(rejects(r, "gateway_ip", "is outside"));
  EXPECT_TRUE(rejects(r, "allocation_pools[1]", "overlaps allocation_pools[0]"));
  EXPECT_EQ(r.error().invalid_params.size(), 3u);
}

TEST(SubnetCreate, NotAnObjectDoesNotThrow) {
  tl::expected<SubnetSpec, Problem> r;
  EXPECT_NO_THROW(r = parse_subnet_create(json::array({1, 2})));
  EXPECT_TRUE(rejects(r, "name", "is required"));
  EXPECT_NO_THROW(r = parse_subnet_create(json("text")));
  EXPECT_TRUE(rejects(r, "cidr", "is required"));
}

// ---------------------------------------------------------------------------------------------------
// parse_subnet_update

TEST(SubnetUpdate, GoodBodies) {
  const auto name_only = parse_subnet_update(body(R"({"name": "renamed"})"));
  ASSERT_TRUE(name_only.has_value());
  EXPECT_EQ(name_only->name, "renamed");
  EXPECT_FALSE(name_only->allocation_pools.has_value());

  const auto pools_only =
      parse_subnet_update(body(R"({"allocation_pools": [{"start": "10.0.0.5", "end": "10.0.0.9"},
                                                        {"start": "10.0.0.20", "end": "10.0.0.20"}]})"));
  ASSERT_TRUE(pools_only.has_value()) << pools_only.error().detail;
  EXPECT_FALSE(pools_only->name.has_value());
  ASSERT_TRUE(pools_only->allocation_pools.has_value());
  EXPECT_EQ(str(*pools_only->allocation_pools),
            (std::vector<std::string>{"10.0.0.5-10.0.0.9", "10.0.0.20-10.0.0.20"}));

  const auto both = parse_subnet_update(
      body(R"({"name": "n2", "allocation_pools": [{"start": "fd00::a", "end": "fd00::b"}]})"));
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->name, "n2");
  EXPECT_EQ(str(*both->allocation_pools), (std::vector<std::string>{"fd00::a-fd00::b"}));
}

TEST(SubnetUpdate, Errors) {
  EXPECT_TRUE(rejects(parse_subnet_update(body("{}")), "name", "nothing to update"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"name": null})")), "name", "nothing to update"));
  EXPECT_TRUE(
      rejects(parse_subnet_update(body(R"({"allocation_pools": []})")), "allocation_pools", "at least one"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"allocation_pools": "10.0.0.5-10.0.0.9"})")),
                      "allocation_pools", "must be an array"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"name": "bad name"})")), "name"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"name": 5})")), "name", "must be a string"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"name": "x", "cidr": "10.0.0.0/16"})")), "cidr",
                      "not a known field"));
  EXPECT_TRUE(
      rejects(parse_subnet_update(body(R"({"name": "x", "mtu": 1500})")), "mtu", "not a known field"));
  EXPECT_TRUE(rejects(
      parse_subnet_update(body(R"({"allocation_pools": [{"start": "10.0.0.9", "end": "10.0.0.5"}]})")),
      "allocation_pools[0].end", "must not be lower than start"));
  EXPECT_TRUE(
      rejects(parse_subnet_update(body(R"({"allocation_pools": [{"start": "10.0.0.1", "end": "fd00::1"}]})")),
              "allocation_pools[0].end", "same IP version"));
  EXPECT_TRUE(
      rejects(parse_subnet_update(body(R"({"allocation_pools": [{"start": "10.0.0.1", "end": "10.0.0.2"},
                                                                        {"start": "nope", "end": "10.0.0.9"}]})")),
              "allocation_pools[1].start", "not an IPv4 or IPv6 address"));
  EXPECT_TRUE(rejects(parse_subnet_update(body(R"({"allocation_pools": [7]})")), "allocation_pools[0]",
                      "must be an object"));
}

// ---------------------------------------------------------------------------------------------------
// parse_port_create

TEST(PortCreate, GoodBodies) {
  const auto minimal = parse_port_create(body(R"({"subnet_id": "3f0e8f5e-2f6b-4d8e-9a41-1b2c3d4e5f60",
                                                 "host": "node-01", "npu": 3})"));
  ASSERT_TRUE(minimal.has_value()) << minimal.error().detail;
  EXPECT_EQ(minimal->subnet_id, "3f0e8f5e-2f6b-4d8e-9a41-1b2c3d4e5f60");
  EXPECT_EQ(minimal->host, "node-01");
  EXPECT_EQ(minimal->npu, 3);
  EXPECT_FALSE(minimal->ip_address.has_value());
  EXPECT_EQ(minimal->name, "");

  const auto full = parse_port_create(body(R"({"subnet_id": "s1", "host": "node-02.rack7", "npu": 63,
                                              "ip_address": "FD00:1::0:10", "name": "rank-7"})"));
  ASSERT_TRUE(full.has_value()) << full.error().detail;
  EXPECT_EQ(full->npu, 63);
  ASSERT_TRUE(full->ip_address.has_value());
  EXPECT_EQ(full->ip_address->to_string(), "fd00:1::10");
  EXPECT_EQ(full->name, "rank-7");

  const auto v4 =
      parse_port_create(body(R"({"subnet_id": "s1", "host": "n", "npu": 0, "ip_address": "10.0.0.8",
                                            "name": ""})"));
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->ip_address->to_string(), "10.0.0.8");
  EXPECT_EQ(v4->name, "");
  EXPECT_EQ(v4->npu, 0);
  // A repeated key never reaches the parser: the strict read refuses it, naming it.
  const auto twice = parse_json_object(
      R"({"subnet_id": "s1", "host": "n", "npu": 0, "ip_address": "10.0.0.7", "ip_address": "10.0.0.8"})");
  EXPECT_TRUE(rejects(twice, "ip_address", "more than once"));

  const auto null_opt =
      parse_port_create(body(R"({"subnet_id": "s1", "host": "n", "npu": 0, "ip_address": null,
                                                  "name": null})"));
  ASSERT_TRUE(null_opt.has_value());
  EXPECT_FALSE(null_opt->ip_address.has_value());
}

TEST(PortCreate, Errors) {
  auto port = [](json overrides) {
    json b = {{"subnet_id", "s1"}, {"host", "node-01"}, {"npu", 0}};
    for (const auto& [k, v] : overrides.items()) {
      if (v.is_string() && v.get<std::string>() == "<absent>") {
        b.erase(k);
      } else {
        b[k] = v;
      }
    }
    return parse_port_create(b);
  };
  EXPECT_TRUE(port({}).has_value());
  EXPECT_TRUE(rejects(port({{"subnet_id", "<absent>"}}), "subnet_id", "is required"));
  EXPECT_TRUE(rejects(port({{"subnet_id", ""}}), "subnet_id", "must not be empty"));
  EXPECT_TRUE(rejects(port({{"subnet_id", 5}}), "subnet_id", "must be a string"));
  EXPECT_TRUE(rejects(port({{"subnet_id", std::string(65, 'a')}}), "subnet_id", "at most 64"));
  EXPECT_TRUE(rejects(port({{"host", "<absent>"}}), "host", "is required"));
  EXPECT_TRUE(rejects(port({{"host", "node 01"}}), "host"));
  EXPECT_TRUE(rejects(port({{"host", ""}}), "host"));
  EXPECT_TRUE(rejects(port({{"host", "-node"}}), "host"));
  EXPECT_TRUE(rejects(port({{"host", std::string(254, 'h')}}), "host", "at most 253"));
  EXPECT_TRUE(port({{"host", std::string(253, 'h')}}).has_value());
  EXPECT_TRUE(rejects(port({{"npu", "<absent>"}}), "npu", "is required"));
  EXPECT_TRUE(rejects(port({{"npu", nullptr}}), "npu", "is required"));
  EXPECT_TRUE(rejects(port({{"npu", -1}}), "npu", "between 0 and 63"));
  EXPECT_TRUE(rejects(port({{"npu", 64}}), "npu", "between 0 and 63"));
  EXPECT_TRUE(rejects(port({{"npu", "1"}}), "npu", "must be an integer"));
  EXPECT_TRUE(rejects(port({{"npu", 1.5}}), "npu", "must be an integer"));
  EXPECT_TRUE(rejects(port({{"ip_address", "10.0.0.256"}}), "ip_address", "not an IPv4 or IPv6 address"));
  EXPECT_TRUE(rejects(port({{"ip_address", "10.0.0.0/24"}}), "ip_address"));
  EXPECT_TRUE(rejects(port({{"ip_address", "fe80::1%eth0"}}), "ip_address", "zone"));
  EXPECT_TRUE(rejects(port({{"ip_address", std::string("10.0.0.5\0", 9)}}), "ip_address"));
  EXPECT_TRUE(rejects(port({{"ip_address", 167772165}}), "ip_address", "must be a string"));
  // Addresses no host may have, whatever the subnet, are refused before the store is asked.
  for (const char* special :
       {"224.0.0.1", "127.0.0.1", "169.254.0.1", "0.0.0.0", "255.255.255.255", "240.0.0.1", "::", "::1",
        "::ffff:10.10.0.1", "::10.0.0.1", "fe80::1", "ff02::1"}) {
    EXPECT_TRUE(rejects(port({{"ip_address", special}}), "ip_address", "is inside")) << special;
  }
  EXPECT_TRUE(rejects(port({{"ip_address", "4000::1"}}), "ip_address", "2000::/3"));
  for (const char* fine : {"198.18.0.10", "10.0.0.5", "2001:db8::10", "fd00::5", "100.64.0.1"}) {
    EXPECT_TRUE(port({{"ip_address", fine}}).has_value()) << fine;
  }
  EXPECT_TRUE(rejects(port({{"name", "bad name"}}), "name"));
  EXPECT_TRUE(rejects(port({{"name", "-x"}}), "name"));
  EXPECT_TRUE(rejects(port({{"name", 1}}), "name", "must be a string"));
  EXPECT_TRUE(rejects(port({{"mac", "02:00:00:00:00:01"}}), "mac", "not a known field"));
  const auto all =
      port({{"subnet_id", ""}, {"host", "a b"}, {"npu", 99}, {"ip_address", "x"}, {"name", "/"}});
  for (const char* f : {"subnet_id", "host", "npu", "ip_address", "name"}) EXPECT_TRUE(rejects(all, f)) << f;
  EXPECT_EQ(all.error().invalid_params.size(), 5u);
}

TEST(Parsers, NonObjectBodiesDoNotThrow) {
  for (const json& j : {json::array(), json(nullptr), json(5), json("s"), json::array({json::object()})}) {
    EXPECT_NO_THROW({
      EXPECT_FALSE(parse_host_registration("h", j).has_value());
      EXPECT_FALSE(parse_subnet_create(j).has_value());
      EXPECT_FALSE(parse_subnet_update(j).has_value());
      EXPECT_FALSE(parse_port_create(j).has_value());
    }) << j.dump();
  }
}

// The parsed values serialise to the documented wire shape.
TEST(Model, ToJson) {
  const auto reg = parse_host_registration(
      "n1",
      body(R"({"npus": [{"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01", "rdma_device": "mlx5_0",
                              "link_speed_mbps": 200000}]})"));
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(to_json(reg->npus[0]), json::parse(R"({"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01",
                                                   "rdma_device": "mlx5_0", "link_speed_mbps": 200000})"));
  const auto spec =
      parse_subnet_create(body(R"({"name": "a", "cidr": "fd00::/64", "gateway_ip": "fd00::1"})"));
  ASSERT_TRUE(spec.has_value());
  Subnet s;
  s.id = "id";
  s.name = spec->name;
  s.tenant = spec->tenant;
  s.cidr = spec->cidr;
  s.gateway = spec->gateway;
  s.allocation_pools = ipam::default_pools(spec->cidr, spec->gateway);
  s.mtu = spec->mtu;
  const json j = to_json(s);
  EXPECT_EQ(j["cidr"], "fd00::/64");
  EXPECT_EQ(j["ip_version"], 6);
  EXPECT_EQ(j["gateway_ip"], "fd00::1");
  EXPECT_EQ(j["tenant"], "default");
  EXPECT_EQ(j["mtu"], 9000);
  EXPECT_EQ(j["allocation_pools"],
            json::parse(R"([{"start": "fd00::2", "end": "fd00::ffff:ffff:ffff:ffff"}])"));
  s.gateway.reset();
  EXPECT_TRUE(to_json(s)["gateway_ip"].is_null());
}

}  // namespace
}  // namespace hsns::network
