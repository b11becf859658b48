// Unit tests of hsnsd's pure parts: configuration, desired-state parsing, the state file (atomic write,
// corrupt file set aside), the reconciler's plan, inventory and QoS conformance on recorded sysfs fixtures.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backoff.h"
#include "config.h"
#include "desired_state.h"
#include "inventory.h"
#include "plan.h"
#include "qos.h"
#include "state_store.h"
#include "support/aggregator_process.h"

namespace hsns::daemon {
namespace {

using hsns::testing::TempDir;

std::string write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}

std::string fixture_root() {
  return hsns::testing::source_path("tests/fixtures/daemon/sysfs-roce").string();
}

// ---- backoff ----

TEST(Backoff, GrowsExponentiallyWithJitterUpToTheCap) {
  using std::chrono::milliseconds;
  Backoff b(milliseconds(100), milliseconds(1000), 42);
  const long ceilings[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (long ceiling : ceilings) {
    const auto d = b.next().count();
    EXPECT_GE(d, 0);
    EXPECT_LE(d, ceiling);
  }
  // Full jitter: the delays spread over the whole window [0, ceiling], not only its upper half.
  Backoff wide(milliseconds(1000), milliseconds(1000), 7);
  int low = 0;
  for (int i = 0; i < 200; ++i) low += wide.next().count() < 500;
  EXPECT_GT(low, 50) << "about half of the delays fall below half the ceiling";
  EXPECT_LT(low, 150);
  b.reset();
  EXPECT_LE(b.next().count(), 100);
  // Jitter: two daemons with different seeds do not retry in lock step.
  Backoff x(milliseconds(1000), milliseconds(60000), 1), y(milliseconds(1000), milliseconds(60000), 2);
  int same = 0;
  for (int i = 0; i < 6; ++i) same += x.next() == y.next();
  EXPECT_LT(same, 6);
}

// ---- configuration ----

TEST(DaemonConfig, DefaultsWhenTheDefaultFileIsMissing) {
  auto c = load_config("/nonexistent/hsnsd.yaml", false);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->state_dir, "/var/lib/hsns");
  EXPECT_EQ(c->metrics_listen, "127.0.0.1:9810");
  EXPECT_EQ(c->table_base, 1000);
  EXPECT_EQ(c->log_level, hsns::log::Level::info);
  EXPECT_EQ(telemetry_interval(*c), c->interval) << "telemetry follows interval_ms unless set";
  EXPECT_FALSE(load_config("/nonexistent/hsnsd.yaml", true));
}

TEST(DaemonConfig, ReadsEverySection) {
  TempDir dir;
  const auto path = write(dir.path() / "c.yaml", R"(
host: node-7
aggregator: {url: "http://198.18.255.1:8080", token_file: /etc/hsns/agent.token, timeout_ms: 2000}
state_dir: /tmp/x
sysfs_root: /fixtures/sys
metrics: {listen: ""}
interval_ms: 500
telemetry_interval_ms: 250
backoff: {initial_ms: 100, max_ms: 5000}
routing: {table_base: 2000, rule_priority_base: 500, protocol: 201}
npus: [{index: 0, netdev: eth2}, {index: 1, netdev: eth3}]
qos: {pfc_priorities: [3], trust: dscp, ecn_priorities: [3]}
isolation: {enabled: false}
log_level: warning
)");
  auto c = load_config(path, true);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->host, "node-7");
  EXPECT_EQ(c->aggregator_url, "http://198.18.255.1:8080");
  EXPECT_EQ(c->request_timeout.count(), 2000);
  EXPECT_EQ(c->interval.count(), 500);
  EXPECT_EQ(telemetry_interval(*c).count(), 250);
  EXPECT_EQ(c->table_base, 2000);
  EXPECT_EQ(c->route_protocol, 201);
  EXPECT_EQ(c->metrics_listen, "");
  ASSERT_EQ(c->npus.size(), 2u);
  EXPECT_EQ(c->npus.at(1), "eth3");
  EXPECT_TRUE(c->qos.enabled);
  EXPECT_EQ(c->qos.pfc_priorities, std::vector<int>{3});
  EXPECT_EQ(c->log_level, hsns::log::Level::warning);
}

TEST(DaemonConfig, BadInputIsAnErrorNamingTheKey) {
  TempDir dir;
  struct Case {
    const char* yaml;
    const char* expect;
  };
  const Case cases[] = {
      {"colour: blue\n", "unknown key 'colour'"},
      {"aggregator: {url: ftp://x}\n", "aggregator.url"},
      {"interval_ms: ten\n", "interval_ms: wrong type"},
      {"interval_ms: 5\n", "interval_ms"},
      {"telemetry_interval_ms: 50\n", "telemetry_interval_ms must be between 100 and 3600000"},
      {"telemetry_interval_ms: soon\n", "telemetry_interval_ms: wrong type"},
      {"routing: {table_base: 254}\n", "table_base"},
      {"routing: {protocol: 2}\n", "protocol"},
      {"npus: [{index: 0, netdev: eth0}, {index: 0, netdev: eth1}]\n", "listed twice"},
      {"npus: [{index: 0, netdev: \"a/b\"}]\n", "not a valid netdev name"},
      {"qos: {pfc_priorities: [9]}\n", "pfc_priorities"},
      {"qos: {trust: vlan}\n", "trust"},
      {"log_level: loud\n", "log_level: 'loud' is not one of"},
      {"log_level: [info]\n", "log_level: wrong type"},
      {"host: [unclosed\n", "c.yaml"},
  };
  for (const auto& tc : cases) {
    const auto path = write(dir.path() / "c.yaml", tc.yaml);
    auto c = load_config(path, true);
    ASSERT_FALSE(c) << tc.yaml;
    EXPECT_NE(c.error().find(tc.expect), std::string::npos) << tc.yaml << " -> " << c.error();
  }
}

// ---- desired state ----

const char* kDesired = R"({"host":"node-a","generation":7,"ports":[
 {"port_id":"p0","name":"n0","npu":0,"netdev":"eth2","mac":"02:00:00:00:00:01","subnet_id":"s","subnet_name":"a",
  "tenant":"default","address":"198.18.10.11","prefix_length":24,"cidr":"198.18.10.0/24","mtu":9000,
  "gateway_ip":"198.18.10.1","allowed_prefixes":["198.18.10.0/24"]},
 {"port_id":"p1","name":"n1","npu":1,"netdev":null,"mac":null,"subnet_id":"s6","subnet_name":"b",
  "tenant":"default","address":"2001:db8:1::11","prefix_length":64,"cidr":"2001:db8:1::/64","mtu":4200,
  "gateway_ip":null,"allowed_prefixes":["2001:db8:1::/64"]}]})";

TEST(DesiredState, ParsesTheAggregatorDocument) {
  auto s = parse_desired_state(kDesired);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->host, "node-a");
  EXPECT_EQ(s->generation, 7);
  ASSERT_EQ(s->ports.size(), 2u);
  EXPECT_EQ(s->ports[0].address_cidr(), "198.18.10.11/24");
  EXPECT_EQ(s->ports[0].gateway->to_string(), "198.18.10.1");
  EXPECT_FALSE(s->ports[1].netdev);
  EXPECT_EQ(s->ports[1].address_cidr(), "2001:db8:1::11/64");
  // Round trip through the state file's copy.
  auto again = parse_desired_state(desired_state_to_json(*s));
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(desired_state_to_json(*again), desired_state_to_json(*s));
}

TEST(DesiredState, RejectsMalformedDocumentsWithTheField) {
  auto mutate = [](const std::string& from, const std::string& to) {
    std::string d = kDesired;
    d.replace(d.find(from), from.size(), to);
    return d;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not valid JSON"},
      {"[]", "not a JSON object"},
      {mutate(R"("generation":7)", R"("generation":"7")"), "generation: must be an integer"},
      {mutate(R"("address":"198.18.10.11")", R"("address":"198.18.99.11")"),
       "ports[0].address: outside cidr"},
      {mutate(R"("mtu":9000)", R"("mtu":20)"), "ports[0].mtu"},
      {mutate(R"("cidr":"198.18.10.0/24")", R"("cidr":"198.18.10.1/24")"), "ports[0].cidr"},
      {mutate(R"("netdev":null)", R"("netdev":"eth2")"), "used by two ports"},
      {mutate(R"("prefix_length":24)", R"("prefix_length":16)"), "prefix_length"},
      {mutate(R"("port_id":"p0",)", ""), "ports[0].port_id: is required"},
  };
  for (const auto& [doc, expect] : cases) {
    auto s = parse_desired_state(doc);
    ASSERT_FALSE(s) << doc;
    EXPECT_NE(s.error().find(expect), std::string::npos) << s.error();
  }
}

// ---- state file ----

TEST(StateStore, SavesAtomicallyAndLoadsBack) {
  TempDir dir;
  StateStore store(dir.path().string());
  auto empty = store.load();
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->state.owned.empty());
  PersistentState s;
  s.desired_json = R"({"host":"h","generation":1,"ports":[]})";
  s.etag = "\"abc\"";
  s.owned["eth2"].npu = 0;
  s.owned["eth2"].addresses = {"198.18.10.11/24"};
  ASSERT_TRUE(store.save(s));
  auto back = store.load();
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->set_aside);
  EXPECT_EQ(back->state.etag, "\"abc\"");
  EXPECT_EQ(back->state.owned.at("eth2").addresses, std::set<std::string>{"198.18.10.11/24"});
  EXPECT_EQ(nlohmann::json::parse(back->state.desired_json), nlohmann::json::parse(s.desired_json));
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename(), "state.json") << "temporary file left behind";
}

TEST(StateStore, CorruptFileIsSetAsideNotLost) {
  TempDir dir;
  StateStore store(dir.path().string());
  for (const char* garbage :
       {"{\"version\":1, truncated", "", "{\"version\":99,\"etag\":\"\",\"owned\":{}}"}) {
    write(dir.path() / "state.json", garbage);
    auto r = store.load();
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(r->set_aside);
    EXPECT_TRUE(r->state.owned.empty());
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "state.json"));
    std::ifstream in(*r->set_aside);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), garbage) << "the corrupt content must be kept for inspection";
    std::filesystem::remove(*r->set_aside);
  }
}

// ---- plan ----

struct PlanFixture : ::testing::Test {
  DesiredState desired = *parse_desired_state(kDesired);
  Observation o;
  std::map<std::string, OwnedPort> owned;
  RoutingParams r{1000, 1000, 200};

  void SetUp() override {
    desired.ports[1].netdev = "eth3";
    o.links["lo"] = {1, "lo", 65536, true};
    o.links["eth2"] = {5, "eth2", 1500, false};
    o.links["eth3"] = {6, "eth3", 4200, true};
  }
  // Apply a plan to the observation as the kernel would.
  void apply(const Plan& plan) {
    auto one = [this](const Action& a) {
      switch (a.kind) {
        case ActionKind::set_mtu:
          o.links[a.netdev].mtu = a.mtu;
          break;
        case ActionKind::set_up:
          o.links[a.netdev].up = true;
          break;
        case ActionKind::add_address:
          o.addresses.push_back({a.ifindex, a.address, a.label});
          owned[a.netdev].addresses.insert(a.address);
          break;
        case ActionKind::del_address:
          std::erase_if(o.addresses, [&](const ObservedAddress& x) { return x.cidr == a.address; });
          owned[a.netdev].addresses.erase(a.address);
          break;
        case ActionKind::add_route:
          o.routes.push_back(a.route);
          break;
        case ActionKind::del_route:
          std::erase(o.routes, a.route);
          break;
        case ActionKind::add_rule:
          o.rules.push_back(a.rule);
          break;
        case ActionKind::del_rule:
          std::erase(o.rules, a.rule);
          break;
      }
    };
    for (const auto& a : plan.cleanup) one(a);
    for (const auto& p : plan.ports)
      for (const auto& a : p.actions) one(a);
  }
  static std::size_t count(const Plan& p) {
    std::size_t n = p.cleanup.size();
    for (const auto& port : p.ports) n += port.actions.size();
    return n;
  }
};

TEST_F(PlanFixture, ConvergesFromEmptyAndThenDoesNothing) {
  const Plan first = make_plan(desired, o, owned, r);
  ASSERT_EQ(first.ports.size(), 2u);
  EXPECT_FALSE(first.ports[0].failure);
  std::vector<std::string> d0;
  for (const auto& a : first.ports[0].actions) d0.push_back(a.describe());
  const std::vector<std::string> want0 = {"mtu of eth2 set to 9000",
                                          "link eth2 set up",
                                          "address 198.18.10.11/24 added on eth2",
                                          "route 198.18.10.0/24 table 1000 added",
                                          "route 0.0.0.0/0 via 198.18.10.1 table 1000 added",
                                          "rule from 198.18.10.11/32 table 1000 added"};
  EXPECT_EQ(d0, want0);
  EXPECT_EQ(first.ports[0].actions[2].label, "eth2:hsns");
  std::vector<std::string> d1;
  for (const auto& a : first.ports[1].actions) d1.push_back(a.describe());
  const std::vector<std::string> want1 = {
      "address 2001:db8:1::11/64 added on eth3", "route 2001:db8:1::/64 table 1001 added",
      "route unreachable ::/0 table 1001 added", "rule from 2001:db8:1::11/128 table 1001 added"};
  EXPECT_EQ(d1, want1);
  const auto& rule1 = first.ports[1].actions.back().rule;
  EXPECT_EQ(rule1.family, AF_INET6);
  EXPECT_EQ(rule1.from, "2001:db8:1::11/128");
  EXPECT_EQ(rule1.table, 1001u);
  EXPECT_EQ(rule1.priority, 1001u);
  apply(first);
  EXPECT_EQ(count(make_plan(desired, o, owned, r)), 0u) << "second pass must change nothing";
}

TEST_F(PlanFixture, RepairsOnlyWhatDrifted) {
  apply(make_plan(desired, o, owned, r));
  std::erase_if(o.addresses, [](const ObservedAddress& a) { return a.cidr == "198.18.10.11/24"; });
  o.links["eth3"].mtu = 1500;
  const Plan p = make_plan(desired, o, owned, r);
  ASSERT_EQ(p.ports[0].actions.size(), 1u);
  EXPECT_EQ(p.ports[0].actions[0].describe(), "address 198.18.10.11/24 added on eth2");
  ASSERT_EQ(p.ports[1].actions.size(), 1u);
  EXPECT_EQ(p.ports[1].actions[0].describe(), "mtu of eth3 set to 4200");
}

TEST_F(PlanFixture, FailedPortsDoNotStopTheOthers) {
  desired.ports[1].netdev = "eth9";                     // missing
  o.addresses.push_back({1, "198.18.10.11/32", "lo"});  // conflict for port 0
  Plan p = make_plan(desired, o, owned, r);
  ASSERT_TRUE(p.ports[0].failure);
  EXPECT_NE(p.ports[0].failure->find("address conflict: 198.18.10.11 is already configured on lo"),
            std::string::npos);
  EXPECT_TRUE(p.ports[0].actions.empty());
  ASSERT_TRUE(p.ports[1].failure);
  EXPECT_EQ(*p.ports[1].failure, "netdev eth9 does not exist");
  desired.ports[1].netdev = "eth3";
  p = make_plan(desired, o, owned, r);
  EXPECT_FALSE(p.ports[1].failure);
  EXPECT_FALSE(p.ports[1].actions.empty());
  desired.ports[1].netdev.reset();
  p = make_plan(desired, o, owned, r);
  EXPECT_NE(p.ports[1].failure->find("no registered netdev"), std::string::npos);
}

TEST_F(PlanFixture, RemovesOnlyWhatHsnsdAdded) {
  apply(make_plan(desired, o, owned, r));
  // Foreign things: an address on a managed port, an address elsewhere, a rule/route outside the range.
  o.addresses.push_back({5, "198.18.10.200/24", ""});
  o.addresses.push_back({1, "198.18.99.1/32", ""});
  o.routes.push_back({254, "198.18.77.0/24", "", 5, ""});  // main table; observe() would not list it anyway
  // Port 0 leaves the desired state; port 1 changes address.
  desired.ports.erase(desired.ports.begin());
  desired.ports[0].address = *IpAddress::parse("2001:db8:1::12");
  const Plan p = make_plan(desired, o, owned, r);
  std::vector<std::string> cleanup;
  for (const auto& a : p.cleanup) cleanup.push_back(a.describe());
  const std::vector<std::string> want = {
      "address 198.18.10.11/24 removed from eth2",          "rule from 198.18.10.11/32 table 1000 removed",
      "rule from 2001:db8:1::11/128 table 1001 removed",    "route 198.18.10.0/24 table 1000 removed",
      "route 0.0.0.0/0 via 198.18.10.1 table 1000 removed", "route 2001:db8:1::/64 table 1001 removed"};
  EXPECT_EQ(cleanup, want);
  std::vector<std::string> port;
  for (const auto& a : p.ports[0].actions) port.push_back(a.describe());
  EXPECT_EQ(port.front(), "address 2001:db8:1::11/64 removed from eth3");
  apply(p);
  auto has = [&](const std::string& cidr) {
    return std::any_of(o.addresses.begin(), o.addresses.end(), [&](const auto& a) { return a.cidr == cidr; });
  };
  EXPECT_TRUE(has("198.18.10.200/24"));
  EXPECT_TRUE(has("198.18.99.1/32"));
  EXPECT_EQ(std::count(o.routes.begin(), o.routes.end(), RouteSpec{254, "198.18.77.0/24", "", 5, ""}), 1);
}

// A port without a gateway: its table ends in an unreachable default route, so a packet sourced from the
// port's address that matches no route there stops instead of falling through to the main table (and out of
// a port in another subnet).
TEST_F(PlanFixture, ATableWithoutGatewayEndsInAnUnreachableDefault) {
  desired.ports[0].gateway.reset();
  const Plan first = make_plan(desired, o, owned, r);
  auto unreachable_of = [](const PortPlan& p) {
    std::vector<RouteSpec> out;
    for (const auto& a : p.actions)
      if (a.kind == ActionKind::add_route && a.route.dst.ends_with("/0")) out.push_back(a.route);
    return out;
  };
  const auto r0 = unreachable_of(first.ports[0]);
  ASSERT_EQ(r0.size(), 1u);
  EXPECT_EQ(r0[0], (RouteSpec{1000, "0.0.0.0/0", "", 0, "", true}));
  const auto r1 = unreachable_of(first.ports[1]);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0], (RouteSpec{1001, "::/0", "", 0, "", true}));
  // Before the rule, so the rule never points at a table that lets packets fall through.
  EXPECT_EQ(first.ports[0].actions.back().kind, ActionKind::add_rule);
  EXPECT_EQ(first.ports[0].actions[first.ports[0].actions.size() - 2].describe(),
            "route unreachable 0.0.0.0/0 table 1000 added");
  apply(first);
  EXPECT_EQ(count(make_plan(desired, o, owned, r)), 0u) << "second pass must change nothing";

  // Deleted by hand: put back (drift).
  std::erase(o.routes, r0[0]);
  Plan p = make_plan(desired, o, owned, r);
  ASSERT_EQ(p.ports[0].actions.size(), 1u);
  EXPECT_EQ(p.ports[0].actions[0].describe(), "route unreachable 0.0.0.0/0 table 1000 added");
  apply(p);

  // A gateway arrives: the default via it replaces the unreachable one (removed first, in the cleanup).
  desired.ports[0].gateway = *IpAddress::parse("198.18.10.1");
  p = make_plan(desired, o, owned, r);
  ASSERT_EQ(p.cleanup.size(), 1u);
  EXPECT_EQ(p.cleanup[0].describe(), "route unreachable 0.0.0.0/0 table 1000 removed");
  ASSERT_EQ(p.ports[0].actions.size(), 1u);
  EXPECT_EQ(p.ports[0].actions[0].describe(), "route 0.0.0.0/0 via 198.18.10.1 table 1000 added");
  apply(p);
  EXPECT_EQ(count(make_plan(desired, o, owned, r)), 0u);

  // The port goes: its unreachable route goes with its other routes and its rule.
  desired.ports.pop_back();
  p = make_plan(desired, o, owned, r);
  std::vector<std::string> cleanup;
  for (const auto& a : p.cleanup) cleanup.push_back(a.describe());
  const std::vector<std::string> want = {
      "address 2001:db8:1::11/64 removed from eth3", "rule from 2001:db8:1::11/128 table 1001 removed",
      "route 2001:db8:1::/64 table 1001 removed", "route unreachable ::/0 table 1001 removed"};
  EXPECT_EQ(cleanup, want);
  apply(p);
  EXPECT_EQ(std::count_if(o.routes.begin(), o.routes.end(), [](const RouteSpec& x) { return x.unreachable; }),
            0);
  EXPECT_EQ(count(make_plan(desired, o, owned, r)), 0u);
}

TEST_F(PlanFixture, AnAdoptedAddressIsNeverRemoved) {
  // The desired address was already configured by hand: hsnsd uses it but does not own it.
  o.addresses.push_back({5, "198.18.10.11/24", ""});
  apply(make_plan(desired, o, owned, r));
  EXPECT_FALSE(owned["eth2"].addresses.count("198.18.10.11/24"));
  desired.ports.erase(desired.ports.begin());
  const Plan p = make_plan(desired, o, owned, r);
  for (const auto& a : p.cleanup) EXPECT_NE(a.kind, ActionKind::del_address) << a.describe();
}

// ---- inventory and QoS on recorded sysfs ----

TEST(Inventory, MapsRdmaDevicesToNetdevsFromSysfs) {
  DaemonConfig c;
  c.sysfs_root = fixture_root();
  c.npus = {{0, "ens1f0np0"}, {1, "ens1f1np1"}, {2, "missing0"}};
  const auto inv = discover(c);
  ASSERT_EQ(inv.rdma.size(), 1u);
  EXPECT_EQ(inv.rdma[0].device, "mlx5_0");
  EXPECT_EQ(inv.rdma[0].state, "ACTIVE");
  EXPECT_EQ(inv.rdma[0].link_layer, "Ethernet");
  EXPECT_EQ(inv.rdma[0].rate_mbps, 100000);
  EXPECT_EQ(inv.rdma[0].netdev, "ens1f0np0");
  const std::vector<std::string> gids = {"fe80:0000:0000:0000:0ec4:7aff:fe12:3456",
                                         "0000:0000:0000:0000:0000:ffff:c612:0a0b"};
  EXPECT_EQ(inv.rdma[0].rocev2_gids, gids);  // GID index order
  ASSERT_EQ(inv.npus.size(), 3u);
  EXPECT_EQ(inv.npus[0].rdma_device, "mlx5_0");
  EXPECT_EQ(inv.npus[0].mac, "0c:c4:7a:12:34:56");
  EXPECT_EQ(inv.npus[0].link_speed_mbps, 100000);
  EXPECT_EQ(inv.npus[1].rdma_device, "");
  EXPECT_FALSE(inv.npus[2].present);
  EXPECT_EQ(inv.npus[2].mac, "00:00:00:00:00:00");
  const auto body = registration_body(inv);
  EXPECT_NE(body.find(R"("rdma_device":"mlx5_0")"), std::string::npos) << body;
}

TEST(Inventory, AHostWithoutRdmaIsNormal) {
  TempDir dir;
  DaemonConfig c;
  c.sysfs_root = dir.path().string();
  const auto inv = discover(c);
  EXPECT_TRUE(inv.rdma.empty());
  EXPECT_EQ(registration_body(inv), R"({"npus":[]})");
}

// The first line of an attribute, trimmed; nullopt for what cannot be read (missing, a directory, empty).
TEST(Inventory, ReadSysfsLineTakesTheFirstLineTrimmed) {
  TempDir dir;
  const auto put = [&](const char* name, const std::string& text) {
    std::ofstream(dir.path() / name) << text;
    return dir.path() / name;
  };
  EXPECT_EQ(read_sysfs_line(put("plain", "up\n")), "up");
  EXPECT_EQ(read_sysfs_line(put("trailing", "25000 \r\n")), "25000");
  EXPECT_EQ(read_sysfs_line(put("no_newline", "4: ACTIVE")), "4: ACTIVE");
  EXPECT_EQ(read_sysfs_line(put("two_lines", "first\nsecond\n")), "first");
  EXPECT_EQ(read_sysfs_line(put("blank_line", "\nsecond\n")), "");
  EXPECT_EQ(read_sysfs_line(put("long", std::string(5000, 'x'))), std::string(4096, 'x'));
  EXPECT_EQ(read_sysfs_line(put("empty", "")), std::nullopt);
  EXPECT_EQ(read_sysfs_line(dir.path() / "missing"), std::nullopt);
  EXPECT_EQ(read_sysfs_line(dir.path()), std::nullopt);
}

TEST(Qos, ConformantDriftAndUnknown) {
  QosProfile profile{true, {3}, "dscp", {3}};
  const auto ok = check_qos(fixture_root(), "ens1f0np0", profile);
  EXPECT_EQ(ok.state, "conformant");
  EXPECT_TRUE(ok.findings.empty());
  const auto bad = check_qos(fixture_root(), "ens1f1np1", profile);
  EXPECT_EQ(bad.state, "drift");
  const std::vector<std::string> want = {"pfc enabled on priorities {}, expected {3}",
                                         "trust mode pcp, expected dscp",
                                         "ecn roce_np priority 3 disabled, expected enabled",
                                         "ecn roce_rp priority 3 disabled, expected enabled"};
  EXPECT_EQ(bad.findings, want);
  EXPECT_EQ(check_qos(fixture_root(), "eth9", profile).state, "unknown");
  EXPECT_EQ(check_qos(fixture_root(), "nosuch", profile).state, "unknown");
}

}  // namespace
}  // namespace hsns::daemon
