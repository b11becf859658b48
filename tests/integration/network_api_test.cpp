// End-to-end tests of network management: the real aggregator binary, a real SQLite file, real HTTP
// over loopback.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

json body_of(const tl::expected<HttpResponse, std::string>& r) {
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  if (!r || r->body.empty()) return json();
  return json::parse(r->body);
}

json host_body(int npus, int first_mac_byte = 1) {
  json arr = json::array();
  for (int i = 0; i < npus; ++i) {
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:00:%02x:%02x", first_mac_byte & 0xFF, i);
    arr.push_back({{"index", i},
                   {"netdev", "eth" + std::to_string(i + 2)},
                   {"mac", mac},
                   {"rdma_device", "mlx5_" + std::to_string(i)},
                   {"link_speed_mbps", 200000}});
  }
  return {{"npus", arr}};
}

// Everything the API can show, for before/after comparisons.
json snapshot(HttpClient& c) {
  json s;
  s["hosts"] = body_of(c.get("/api/v1/hosts"));
  s["subnets"] = body_of(c.get("/api/v1/subnets"));
  s["ports"] = body_of(c.get("/api/v1/ports"));
  for (const auto& h : s["hosts"]["items"]) {
    const std::string name = h["name"];
    s["desired"][name] = body_of(c.get("/api/v1/agents/" + name + "/desired"));
  }
  return s;
}

class NetworkApi : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
  }
  void TearDown() override {
    if (agg_->running()) {
      EXPECT_EQ(agg_->stop(), 0) << agg_->log();
    }
  }
  std::string create_subnet(HttpClient& c, const json& body) {
    auto r = c.post("/api/v1/subnets", body.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : r.error());
    return body_of(r)["id"];
  }

  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
};

TEST_F(NetworkApi, ObjectsSurviveRestartAndCrash) {
  auto c = agg_->client();
  const auto a =
      create_subnet(c, {{"name", "rail-a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.1"}});
  const auto b = create_subnet(
      c, {{"name", "rail-b"}, {"cidr", "2001:db8:1::/64"}, {"tenant", "team-b"}, {"mtu", 4200}});
  for (int h = 0; h < 4; ++h) {
    auto r = c.put("/api/v1/hosts/host-" + std::to_string(h), host_body(4, h).dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error());
    for (int npu = 0; npu < 4; ++npu) {
      const json port = {{"subnet_id", npu < 2 ? a : b}, {"host", "host-" + std::to_string(h)}, {"npu", npu}};
      auto p = c.post("/api/v1/ports", port.dump());
      ASSERT_TRUE(p && p->status == 201) << (p ? p->body : p.error());
    }
  }
  const json before = snapshot(c);
  ASSERT_EQ(before["subnets"]["items"].size(), 2u);
  ASSERT_EQ(before["ports"]["items"].size(), 16u);
  ASSERT_EQ(before["hosts"]["items"].size(), 4u);

  // Clean restart.
  ASSERT_EQ(agg_->stop(), 0) << agg_->log();
  EXPECT_NE(agg_->log().find("stopped"), std::string::npos);
  agg_->start();
  auto c2 = agg_->client();
  EXPECT_EQ(snapshot(c2), before);

  // Crash (SIGKILL) and restart: WAL recovery keeps every committed object.
  agg_->kill9();
  agg_->start();
  auto c3 = agg_->client();
  EXPECT_EQ(snapshot(c3), before);
}

TEST_F(NetworkApi, ConcurrentAllocationNeverDuplicatesAddresses) {
  auto c = agg_->client();
  const auto id = create_subnet(
      c, {{"name", "pool60"},
          {"cidr", "198.18.4.0/24"},
          {"allocation_pools", json::array({{{"start", "198.18.4.10"}, {"end", "198.18.4.69"}}})}});
  ASSERT_EQ(c.put("/api/v1/hosts/big", host_body(64).dump())->status, 201);

  constexpr int kClients = 64;
  std::vector<int> status(kClients, 0);
  std::vector<std::string> address(kClients), detail(kClients);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto client = agg_->client();
      ready.fetch_add(1);
      while (ready.load() < kClients) std::this_thread::yield();  // start together
      auto r = client.post("/api/v1/ports", json({{"subnet_id", id}, {"host", "big"}, {"npu", i}}).dump());
      if (!r) return;
      status[static_cast<std::size_t>(i)] = r->status;
      auto j = json::parse(r->body);
      if (r->status == 201) address[static_cast<std::size_t>(i)] = j["ip_address"];
      if (r->status == 409) detail[static_cast<std::size_t>(i)] = j["detail"];
    });
  }
  for (auto& t : threads) t.join();
  int created = 0, conflicts = 0;
  std::set<std::string> distinct;
  for (int i = 0; i < kClients; ++i) {
    if (status[static_cast<std::size_t>(i)] == 201) {
      ++created;
      distinct.insert(address[static_cast<std::size_t>(i)]);
    } else {
      EXPECT_EQ(status[static_cast<std::size_t>(i)], 409);
      EXPECT_NE(detail[static_cast<std::size_t>(i)].find("exhausted"), std::string::npos)
          << detail[static_cast<std::size_t>(i)];
      ++conflicts;
    }
  }
  EXPECT_EQ(created, 60);
  EXPECT_EQ(conflicts, 4);
  EXPECT_EQ(distinct.size(), 60u);
  const auto list = body_of(c.get("/api/v1/ports?subnet_id=" + id));
  EXPECT_EQ(list["items"].size(), 60u);
  for (const auto& p : list["items"]) EXPECT_TRUE(distinct.contains(p["ip_address"].get<std::string>()));
}

struct BadCase {
  const char* what;
  const char* method;
  std::string target;
  std::string body;
  int status;
  const char* field;  // expected in invalid_params (or nullptr)
  const char* content_type = "application/json";
};

TEST_F(NetworkApi, BadInputIsRejectedAndChangesNothing) {
  auto c = agg_->client();
  const auto a =
      create_subnet(c, {{"name", "rail-a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.1"}});
  ASSERT_EQ(c.put("/api/v1/hosts/h1", host_body(2).dump())->status, 201);
  auto port = body_of(c.post("/api/v1/ports", json({{"subnet_id", a}, {"host", "h1"}, {"npu", 0}}).dump()));
  const std::string taken = port["ip_address"];
  const json before = snapshot(c);

  const std::vector<BadCase> cases = {
      {"malformed JSON", "POST", "/api/v1/subnets", R"({"name": "x", )", 400, nullptr},
      {"not an object", "POST", "/api/v1/subnets", R"([1,2])", 400, nullptr},
      {"unknown field", "POST", "/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24","colour":"red"})",
       400, "colour"},
      {"wrong type", "POST", "/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24","mtu":"9000"})", 400,
       "mtu"},
      {"host bits set", "POST", "/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.1/24"})", 400, "cidr"},
      {"overlapping subnet", "POST", "/api/v1/subnets", R"({"name":"x","cidr":"198.18.0.128/25"})", 409,
       "cidr"},
      {"duplicate name", "POST", "/api/v1/subnets", R"({"name":"rail-a","cidr":"198.18.9.0/24"})", 409,
       "name"},
      {"gateway inside pool", "POST", "/api/v1/subnets",
       R"({"name":"x","cidr":"198.18.9.0/24","gateway_ip":"198.18.9.5",)"
       R"("allocation_pools":[{"start":"198.18.9.2","end":"198.18.9.20"}]})",
       400, "allocation_pools[0]"},
      {"fixed IP outside subnet", "POST", "/api/v1/ports",
       json({{"subnet_id", a}, {"host", "h1"}, {"npu", 1}, {"ip_address", "198.18.7.7"}}).dump(), 400,
       "ip_address"},
      {"fixed IP taken", "POST", "/api/v1/ports",
       json({{"subnet_id", a}, {"host", "h1"}, {"npu", 1}, {"ip_address", taken}}).dump(), 409, "ip_address"},
      {"second port for host+npu+subnet", "POST", "/api/v1/ports",
       json({{"subnet_id", a}, {"host", "h1"}, {"npu", 0}}).dump(), 409, "npu"},
      {"unregistered host", "POST", "/api/v1/ports",
       json({{"subnet_id", a}, {"host", "nope"}, {"npu", 0}}).dump(), 422, "host"},
      {"NPU missing on host", "POST", "/api/v1/ports",
       json({{"subnet_id", a}, {"host", "h1"}, {"npu", 7}}).dump(), 422, "npu"},
      {"unknown subnet", "POST", "/api/v1/ports",
       json({{"subnet_id", "00000000-0000-4000-8000-000000000000"}, {"host", "h1"}, {"npu", 1}}).dump(), 404,
       nullptr},
      {"delete subnet with ports", "DELETE", "/api/v1/subnets/" + a, "", 409, nullptr},
      {"bad MAC", "PUT", "/api/v1/hosts/h2", R"({"npus":[{"index":0,"netdev":"eth2","mac":"zz"}]})", 400,
       "npus[0].mac"},
      {"wrong media type", "POST", "/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24"})", 415, nullptr,
       "text/plain"},
      {"body over the limit", "POST", "/api/v1/subnets", std::string(2 * 1024 * 1024, ' '), 413, nullptr},
      {"unknown query parameter", "GET", "/api/v1/ports?colour=red", "", 400, "colour"},
      {"reachability without ports", "GET", "/api/v1/reachability", "", 400, "src_port"},
  };
  for (const auto& bc : cases) {
    SCOPED_TRACE(bc.what);
    auto client = agg_->client();  // a fresh connection: 413 closes the connection
    auto r = client.request(bc.method, bc.target, bc.body, bc.content_type);
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_EQ(r->status, bc.status) << r->body;
    EXPECT_TRUE(r->is_problem()) << r->content_type;
    const auto p = json::parse(r->body);
    EXPECT_EQ(p["status"], bc.status);
    EXPECT_TRUE(p.contains("title") && p.contains("type"));
    if (bc.field) {
      bool named = false;
      for (const auto& ip : p["invalid_params"]) named = named || ip["name"] == bc.field;
      EXPECT_TRUE(named) << p.dump();
      EXPECT_NE(p["detail"].get<std::string>().find(bc.field), std::string::npos) << p.dump();
    }
  }
  auto c2 = agg_->client();
  EXPECT_EQ(snapshot(c2), before);
}

TEST_F(NetworkApi, AuthenticationAndRoles) {
  auto anonymous = agg_->client("");
  auto r = anonymous.get("/api/v1/subnets");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->www_authenticate.find("Bearer"), std::string::npos);
  EXPECT_EQ(agg_->client("not-a-valid-token-at-all").get("/api/v1/subnets")->status, 401);
  for (const char* open : {"/healthz", "/readyz", "/metrics", "/api/v1/openapi.json"}) {
    EXPECT_EQ(anonymous.get(open)->status, 200) << open;
  }
  auto viewer = agg_->client(kViewerToken);
  EXPECT_EQ(viewer.get("/api/v1/subnets")->status, 200);
  EXPECT_EQ(viewer.post("/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24"})")->status, 403);
  auto agent = agg_->client(kAgentToken);
  EXPECT_EQ(agent.put("/api/v1/hosts/h1", host_body(1).dump())->status, 201);
  EXPECT_EQ(agent.post("/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24"})")->status, 403);
  auto scheduler = agg_->client(kSchedulerToken);
  EXPECT_EQ(scheduler.get("/api/v1/hosts")->status, 200);
  EXPECT_EQ(scheduler.post("/api/v1/ports", "{}")->status, 403);
  EXPECT_EQ(agg_->client().post("/api/v1/subnets", R"({"name":"x","cidr":"198.18.9.0/24"})")->status, 201);
}

TEST_F(NetworkApi, DesiredStateFollowsChangesWithEtags) {
  auto c = agg_->client();
  const auto a = create_subnet(
      c, {{"name", "rail-a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.1"}, {"mtu", 4200}});
  const auto b = create_subnet(c, {{"name", "rail-b"}, {"cidr", "198.18.1.0/24"}});
  ASSERT_EQ(c.put("/api/v1/hosts/h1", host_body(2).dump())->status, 201);
  EXPECT_EQ(c.get("/api/v1/agents/nope/desired")->status, 404);

  auto agent = agg_->client(kAgentToken);
  auto first = agent.get("/api/v1/agents/h1/desired");
  ASSERT_EQ(first->status, 200);
  ASSERT_FALSE(first->etag.empty());
  EXPECT_EQ(body_of(first)["ports"].size(), 0u);
  EXPECT_EQ(agent.get("/api/v1/agents/h1/desired", {{"If-None-Match", first->etag}})->status, 304);

  auto p0 = body_of(c.post("/api/v1/ports", json({{"subnet_id", a}, {"host", "h1"}, {"npu", 0}}).dump()));
  auto p1 = body_of(
      c.post("/api/v1/ports",
             json({{"subnet_id", b}, {"host", "h1"}, {"npu", 1}, {"ip_address", "198.18.1.77"}}).dump()));
  auto second = agent.get("/api/v1/agents/h1/desired", {{"If-None-Match", first->etag}});
  ASSERT_EQ(second->status, 200);
  EXPECT_NE(second->etag, first->etag);
  const auto d = body_of(second);
  EXPECT_GT(d["generation"].get<int>(), body_of(first)["generation"].get<int>());
  ASSERT_EQ(d["ports"].size(), 2u);
  const auto& dp0 = d["ports"][0]["npu"] == 0 ? d["ports"][0] : d["ports"][1];
  const auto& dp1 = d["ports"][0]["npu"] == 0 ? d["ports"][1] : d["ports"][0];
  EXPECT_EQ(dp0["netdev"], "eth2");
  EXPECT_EQ(dp0["address"], p0["ip_address"]);
  EXPECT_EQ(dp0["address"], "198.18.0.2");  // lowest free, the gateway .1 excluded
  EXPECT_EQ(dp0["prefix_length"], 24);
  EXPECT_EQ(dp0["mtu"], 4200);
  EXPECT_EQ(dp0["gateway_ip"], "198.18.0.1");
  EXPECT_EQ(dp0["allowed_prefixes"], json::array({"198.18.0.0/24"}));
  EXPECT_EQ(dp1["address"], "198.18.1.77");
  EXPECT_EQ(dp1["allowed_prefixes"], json::array({"198.18.1.0/24"}));

  // Deleting a port frees its address and changes the desired state again.
  EXPECT_EQ(c.del("/api/v1/ports/" + p0["id"].get<std::string>())->status, 204);
  auto third = agent.get("/api/v1/agents/h1/desired", {{"If-None-Match", second->etag}});
  EXPECT_EQ(third->status, 200);
  EXPECT_EQ(body_of(third)["ports"].size(), 1u);
  auto again = body_of(c.post("/api/v1/ports", json({{"subnet_id", a}, {"host", "h1"}, {"npu", 0}}).dump()));
  EXPECT_EQ(again["ip_address"], "198.18.0.2");
}

TEST_F(NetworkApi, ReachabilityExplainsItsAnswer) {
  auto c = agg_->client();
  const auto a = create_subnet(c, {{"name", "rail-a"}, {"cidr", "198.18.0.0/24"}});
  const auto b = create_subnet(c, {{"name", "rail-b"}, {"cidr", "198.18.1.0/24"}});
  ASSERT_EQ(c.put("/api/v1/hosts/h1", host_body(2).dump())->status, 201);
  ASSERT_EQ(c.put("/api/v1/hosts/h2", host_body(2, 2).dump())->status, 201);
  auto port = [&](const std::string& subnet, const std::string& host, int npu) {
    return body_of(c.post("/api/v1/ports",
                          json({{"subnet_id", subnet}, {"host", host}, {"npu", npu}}).dump()))["id"]
        .get<std::string>();
  };
  const auto h1a = port(a, "h1", 0), h2a = port(a, "h2", 0), h2b = port(b, "h2", 1);
  auto same = body_of(c.get("/api/v1/reachability?src_port=" + h1a + "&dst_port=" + h2a));
  EXPECT_EQ(same["reachable"], true);
  EXPECT_NE(same["reason"].get<std::string>().find("rail-a"), std::string::npos);
  auto diff = body_of(c.get("/api/v1/reachability?src_port=" + h1a + "&dst_port=" + h2b));
  EXPECT_EQ(diff["reachable"], false);
  EXPECT_NE(diff["reason"].get<std::string>().find("different subnets"), std::string::npos);
  EXPECT_EQ(c.get("/api/v1/reachability?src_port=" + h1a + "&dst_port=nope")->status, 404);
}

TEST_F(NetworkApi, SubnetUpdateAndDelete) {
  auto c = agg_->client();
  const auto a =
      create_subnet(c, {{"name", "rail-a"}, {"cidr", "198.18.0.0/24"}, {"gateway_ip", "198.18.0.1"}});
  auto r =
      c.patch("/api/v1/subnets/" + a,
              R"({"name":"rail-a2","allocation_pools":[{"start":"198.18.0.100","end":"198.18.0.110"}]})");
  ASSERT_EQ(r->status, 200) << r->body;
  auto s = body_of(r);
  EXPECT_EQ(s["name"], "rail-a2");
  EXPECT_EQ(s["allocation_pools"], json::parse(R"([{"start":"198.18.0.100","end":"198.18.0.110"}])"));
  EXPECT_EQ(
      c.patch("/api/v1/subnets/" + a, R"({"allocation_pools":[{"start":"198.18.0.1","end":"198.18.0.9"}]})")
          ->status,
      400);  // contains the gateway
  EXPECT_EQ(c.del("/api/v1/subnets/" + a)->status, 204);
  EXPECT_EQ(c.get("/api/v1/subnets/" + a)->status, 404);
  EXPECT_EQ(c.del("/api/v1/subnets/" + a)->status, 404);
  EXPECT_EQ(c.request("PUT", "/api/v1/subnets/" + a, "{}")->status, 405);
  EXPECT_EQ(c.get("/api/v1/nothing-here")->status, 404);
}

// The problem names `field` in invalid_params and in detail.
::testing::AssertionResult names_field(const json& problem, const std::string& field) {
  bool named = false;
  for (const auto& ip : problem.value("invalid_params", json::array())) named = named || ip["name"] == field;
  if (!named)
    return ::testing::AssertionFailure() << "no invalid_param " << field << " in " << problem.dump();
  if (problem.value("detail", "").find("'" + field + "'") == std::string::npos)
    return ::testing::AssertionFailure() << "detail does not name " << field << ": " << problem.dump();
  return ::testing::AssertionSuccess();
}

TEST_F(NetworkApi, DuplicateKeysAreRefusedNamingTheKey) {
  auto c = agg_->client();
  ASSERT_EQ(c.put("/api/v1/hosts/h1", host_body(2).dump())->status, 201);
  const json before = snapshot(c);
  struct Case {
    const char* what;
    const char* method;
    const char* target;
    const char* body;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"top level", "POST", "/api/v1/subnets",
       R"({"name": "x", "cidr": "198.18.9.0/24", "cidr": "224.0.0.0/24"})", "cidr"},
      {"in an array of objects", "POST", "/api/v1/subnets",
       R"({"name": "x", "cidr": "198.18.9.0/24", "allocation_pools": [{"start": "198.18.9.2", "end": "198.18.9.9"},
          {"start": "198.18.9.20", "end": "198.18.9.29", "start": "198.18.9.21"}]})",
       "allocation_pools[1].start"},
      {"host registration", "PUT", "/api/v1/hosts/h2",
       R"({"npus": [{"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01", "mac": "02:00:00:00:00:02"}]})",
       "npus[0].mac"},
      {"port", "POST", "/api/v1/ports", R"({"subnet_id": "s", "host": "h1", "npu": 0, "npu": 1})", "npu"},
      {"subnet update", "PATCH", "/api/v1/subnets/00000000-0000-4000-8000-000000000000",
       R"({"name": "a", "name": "b"})", "name"},
      {"agent report, nested", "PUT", "/api/v1/agents/h1/status",
       R"({"applied_generation": 1, "daemon": {"version": "1", "version": "2"}})", "daemon.version"},
  };
  for (const auto& bc : cases) {
    SCOPED_TRACE(bc.what);
    auto r = c.request(bc.method, bc.target, bc.body);
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_TRUE(r->is_problem());
    const auto p = json::parse(r->body);
    EXPECT_EQ(p["type"], "urn:hsns:problem:invalid-request");
    EXPECT_TRUE(names_field(p, bc.field));
    EXPECT_NE(p["detail"].get<std::string>().find("more than once"), std::string::npos) << p.dump();
  }
  auto agent = agg_->client(kAgentToken);
  EXPECT_EQ(agent.get("/api/v1/agents/h1/status")->status, 404);  // the report was not stored
  EXPECT_EQ(snapshot(c), before);
}

TEST_F(NetworkApi, SpecialPurposeSubnetsAreRefused) {
  auto c = agg_->client();
  const json before = snapshot(c);
  for (const char* cidr :
       {"::ffff:0:0/96", "::ffff:10.10.0.0/120", "224.0.0.0/24", "239.0.0.0/8", "127.0.0.0/8",
        "169.254.0.0/16", "0.0.0.0/8", "0.0.0.0/0", "240.0.0.0/4", "255.255.255.0/24", "::/96", "::/0",
        "fe80::/64", "ff02::/64", "fec0::/64", "64:ff9b::/96", "2002::/64", "2001::/64"}) {
    SCOPED_TRACE(cidr);
    auto r = c.post("/api/v1/subnets", json({{"name", "bad"}, {"cidr", cidr}}).dump());
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_TRUE(names_field(json::parse(r->body), "cidr"));
  }
  EXPECT_EQ(snapshot(c), before);
  // The ranges the project uses, private and documentation ranges stay allowed.
  int n = 0;
  for (const char* cidr : {"198.18.0.0/24", "198.19.0.0/16", "10.0.0.0/24", "2001:db8::/64", "fd00::/64",
                           "192.0.2.0/24", "100.64.0.0/24"}) {
    auto r = c.post("/api/v1/subnets", json({{"name", "ok" + std::to_string(n++)}, {"cidr", cidr}}).dump());
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_EQ(r->status, 201) << cidr << ": " << r->body;
  }
}

TEST_F(NetworkApi, FixedIpMustBeAHostAddressOfTheSubnet) {
  auto c = agg_->client();
  const auto v6 = create_subnet(c, {{"name", "v6"}, {"cidr", "2001:db8:1::/64"}});
  const auto v4 = create_subnet(c, {{"name", "v4"}, {"cidr", "198.18.0.0/24"}});
  ASSERT_EQ(c.put("/api/v1/hosts/h1", host_body(2).dump())->status, 201);
  const json before = snapshot(c);
  struct Case {
    const std::string& subnet;
    const char* ip;
    const char* reason;
  };
  for (const auto& bc : std::vector<Case>{{v6, "2001:db8:1::", "Subnet-Router anycast"},
                                          {v4, "198.18.0.0", "network address"},
                                          {v4, "198.18.0.255", "broadcast address"},
                                          {v4, "224.0.0.1", "multicast"},
                                          {v6, "::ffff:198.18.0.5", "IPv4-mapped"}}) {
    SCOPED_TRACE(bc.ip);
    auto r =
        c.post("/api/v1/ports",
               json({{"subnet_id", bc.subnet}, {"host", "h1"}, {"npu", 0}, {"ip_address", bc.ip}}).dump());
    ASSERT_TRUE(r.has_value()) << r.error();
    EXPECT_TRUE(r->status == 400 || r->status == 422) << r->status << " " << r->body;
    const auto p = json::parse(r->body);
    EXPECT_TRUE(names_field(p, "ip_address"));
    EXPECT_NE(p["detail"].get<std::string>().find(bc.reason), std::string::npos) << p.dump();
  }
  EXPECT_EQ(snapshot(c), before);
  // The allocator starts after the anycast address, and the next address may be asked for.
  auto first = body_of(c.post("/api/v1/ports", json({{"subnet_id", v6}, {"host", "h1"}, {"npu", 0}}).dump()));
  EXPECT_EQ(first["ip_address"], "2001:db8:1::1");
  auto fixed =
      c.post("/api/v1/ports",
             json({{"subnet_id", v6}, {"host", "h1"}, {"npu", 1}, {"ip_address", "2001:db8:1::2"}}).dump());
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->status, 201) << fixed->body;
}

// Twenty identical first registrations of one host at once, each on its own connection: the creation is
// decided inside the store's write transaction, so exactly one answers 201 and the rest 200.
TEST_F(NetworkApi, ConcurrentHostRegistrationCreatesExactlyOnce) {
  constexpr int kClients = 20;
  for (int round = 0; round < 3; ++round) {
    const std::string host = "race-" + std::to_string(round);
    const std::string body = host_body(4, round).dump();
    std::vector<int> status(kClients, 0);
    std::vector<json> answer(kClients);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        auto client = agg_->client(i % 2 == 0 ? kAgentToken : kOperatorToken);
        (void)client.get("/healthz");  // connect before the start line
        ready.fetch_add(1);
        while (ready.load() < kClients) std::this_thread::yield();
        auto r = client.put("/api/v1/hosts/" + host, body);
        if (!r) return;
        status[static_cast<std::size_t>(i)] = r->status;
        answer[static_cast<std::size_t>(i)] = json::parse(r->body, nullptr, false);
      });
    }
    for (auto& t : threads) t.join();
    int created = 0, replaced = 0;
    for (int i = 0; i < kClients; ++i) {
      const int st = status[static_cast<std::size_t>(i)];
      if (st == 201) ++created;
      if (st == 200) ++replaced;
      if (st == 200 || st == 201) {
        EXPECT_EQ(answer[static_cast<std::size_t>(i)]["generation"], 1);
        EXPECT_EQ(answer[static_cast<std::size_t>(i)]["npus"], json::parse(body)["npus"]);
      }
    }
    EXPECT_EQ(created, 1) << host;
    EXPECT_EQ(replaced, kClients - 1) << host;
    auto c = agg_->client();
    const auto stored = body_of(c.get("/api/v1/hosts/" + host));
    EXPECT_EQ(stored["name"], host);
    EXPECT_EQ(stored["generation"], 1);
    EXPECT_EQ(stored["npus"], json::parse(body)["npus"]);
    EXPECT_EQ(stored["created_at"], stored["updated_at"]);
  }
  auto c = agg_->client();
  EXPECT_EQ(body_of(c.get("/api/v1/hosts"))["items"].size(), 3u);
}

}  // namespace
}  // namespace hsns::testing
