// Desired-state fan-out over real HTTP: the real aggregator binary on a real SQLite file, polled over
// loopback with If-None-Match as node daemons poll. The documents of one network revision are rendered
// from one read of the store (api/network/routes.cpp); these tests hold them to what the per-host read
// gave: after a change touching many hosts every host gets its new document and tag, equal byte for byte
// to render_desired_state(host_view(h)) read from the same file; a host changed alone moves alone; hosts
// added and deleted; polls racing a stream of changes never see a tag naming another body nor a document
// older than the change they were sent after.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/network/routes.h"
#include "store/database.h"
#include "store/sqlite_network_store.h"
#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

constexpr int kHosts = 300;
constexpr int kNpus = 4;

std::string host_name(int h) {
  char name[16];
  std::snprintf(name, sizeof name, "node-%03d", h);
  return name;
}

std::string desired_path(const std::string& host) {
  return "/api/v1/agents/" + host + "/desired";
}

class DesiredFanout : public ::testing::Test {
 protected:
  void SetUp() override {
    // The store is filled in-process on the very file the aggregator then serves (much faster than
    // 1,200 requests); everything after that goes over HTTP.
    fill_store();
    if (HasFatalFailure()) return;
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
  }
  void TearDown() override {
    if (agg_ && agg_->running()) {
      EXPECT_EQ(agg_->stop(), 0) << agg_->log();
    }
  }

  // kHosts hosts with kNpus NPUs; four subnets (two tenants, IPv6, a gateway, a name needing escapes);
  // NPU n of every host has a port in subnet n, except that only every third host has one in subnet 3;
  // every tenth host has no port at all; every seventh was re-registered without NPU 1 after its port
  // there was made (its document names no netdev for that port).
  void fill_store() {
    store::Database db(store::DatabaseOptions{agg_path().string()});
    store::SqliteNetworkStore network(db);
    for (int s = 0; s < 4; ++s) {
      network::SubnetSpec spec;
      spec.name = s == 3 ? std::string("rail \"3\"\t\xc3\xa9") : "rail-" + std::to_string(s);
      spec.tenant = s % 2 == 0 ? "team-a" : "team-b";
      spec.cidr = *IpPrefix::parse(s == 2 ? "2001:db8:2::/64" : "10." + std::to_string(s) + ".0.0/16");
      if (s == 0) spec.gateway = *IpAddress::parse("10.0.0.1");
      spec.mtu = 4200;
      auto created = network.create_subnet(spec);
      ASSERT_TRUE(created) << created.error().detail;
      subnets_.push_back(created->id);
    }
    for (int h = 0; h < kHosts; ++h) {
      network::HostRegistration reg{host_name(h), {}};
      for (int n = 0; n < kNpus; ++n) {
        char mac[18];
        std::snprintf(mac, sizeof mac, "02:00:%02x:%02x:00:%02x", h >> 8, h & 0xFF, n);
        reg.npus.push_back({n, "eth" + std::to_string(n), mac, "mlx5_" + std::to_string(n), 400000});
      }
      ASSERT_TRUE(network.put_host(reg));
      if (h % 10 == 0) continue;
      for (int n = 0; n < kNpus; ++n) {
        if (n == 3 && h % 3 != 0) continue;
        auto port = network.create_port({"", subnets_[static_cast<std::size_t>(n)], host_name(h), n, {}});
        ASSERT_TRUE(port) << port.error().detail;
      }
      if (h % 7 == 0) {
        reg.npus.erase(reg.npus.begin() + 1);
        ASSERT_TRUE(network.put_host(reg));
      }
    }
  }

  std::filesystem::path agg_path() const { return dir_.path() / "aggregator.db"; }

  // What the per-host read gives, from the same file: body and tag of every host, by a second process'
  // connection (the aggregator keeps running).
  std::vector<std::pair<std::string, std::string>> rendered_from_file() {
    store::Database db(store::DatabaseOptions{agg_path().string()});
    store::SqliteNetworkStore network(db);
    std::vector<std::pair<std::string, std::string>> out;
    for (int h = 0; h < kHosts; ++h) {
      auto view = network.host_view(host_name(h));
      EXPECT_TRUE(view) << host_name(h);
      if (!view) return out;
      out.emplace_back(network::render_desired_state(*view),
                       network::desired_etag(db.instance(), view->host.generation));
    }
    return out;
  }

  // Every host's current document over HTTP (no If-None-Match).
  std::vector<HttpResponse> poll_all(HttpClient& agent) {
    std::vector<HttpResponse> out;
    for (int h = 0; h < kHosts; ++h) {
      auto r = agent.get(desired_path(host_name(h)));
      EXPECT_TRUE(r && r->status == 200) << host_name(h);
      out.push_back(r ? *r : HttpResponse{});
    }
    return out;
  }

  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
  std::vector<std::string> subnets_;
};

TEST_F(DesiredFanout, EveryDocumentIsWhatTheHostViewRendersBeforeAndAfterAChangeTouchingManyHosts) {
  auto agent = agg_->client(kAgentToken);
  const auto before = poll_all(agent);
  auto expected = rendered_from_file();
  ASSERT_EQ(expected.size(), before.size());
  for (std::size_t h = 0; h < before.size(); ++h) {
    EXPECT_EQ(before[h].body, expected[h].first) << host_name(static_cast<int>(h));
    EXPECT_EQ(before[h].etag, expected[h].second) << host_name(static_cast<int>(h));
  }
  // Every poll holding its tag is a 304 with that tag.
  for (int h = 0; h < kHosts; h += 7) {
    auto r =
        agent.get(desired_path(host_name(h)), {{"If-None-Match", before[static_cast<std::size_t>(h)].etag}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 304) << host_name(h);
    EXPECT_EQ(r->etag, before[static_cast<std::size_t>(h)].etag);
    EXPECT_TRUE(r->body.empty());
  }

  // Rename rail-1: every host with a port in it (all but every tenth) gets a new document and tag.
  auto admin = agg_->client();
  ASSERT_EQ(admin.patch("/api/v1/subnets/" + subnets_[1], R"({"name":"rail-1-renamed"})")->status, 200);
  expected = rendered_from_file();
  for (int h = 0; h < kHosts; ++h) {
    const auto i = static_cast<std::size_t>(h);
    auto r = agent.get(desired_path(host_name(h)), {{"If-None-Match", before[i].etag}});
    ASSERT_TRUE(r);
    if (h % 10 == 0) {
      EXPECT_EQ(r->status, 304) << host_name(h);
      continue;
    }
    ASSERT_EQ(r->status, 200) << host_name(h);
    EXPECT_NE(r->etag, before[i].etag);
    EXPECT_EQ(r->body, expected[i].first) << host_name(h);
    EXPECT_EQ(r->etag, expected[i].second) << host_name(h);
    EXPECT_NE(r->body.find("rail-1-renamed"), std::string::npos);
  }
}

TEST_F(DesiredFanout, AHostChangedAloneIsTheOnlyOneWhoseTagMoves) {
  auto agent = agg_->client(kAgentToken);
  const auto before = poll_all(agent);
  // node-010 has no port; give it one.
  auto admin = agg_->client();
  auto port = admin.post("/api/v1/ports",
                         json({{"subnet_id", subnets_[2]}, {"host", "node-010"}, {"npu", 2}}).dump());
  ASSERT_TRUE(port && port->status == 201) << (port ? port->body : port.error());
  const auto expected = rendered_from_file();
  for (int h = 0; h < kHosts; ++h) {
    const auto i = static_cast<std::size_t>(h);
    auto r = agent.get(desired_path(host_name(h)), {{"If-None-Match", before[i].etag}});
    ASSERT_TRUE(r);
    if (h != 10) {
      EXPECT_EQ(r->status, 304) << host_name(h);
      EXPECT_EQ(r->etag, before[i].etag);
      continue;
    }
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(r->body, expected[i].first);
    EXPECT_EQ(r->etag, expected[i].second);
    EXPECT_EQ(json::parse(r->body)["ports"].size(), 1U);
  }
}

TEST_F(DesiredFanout, AnAddedHostIsServedADeletedHostIs404) {
  auto agent = agg_->client(kAgentToken);
  EXPECT_EQ(agent.get(desired_path("node-new"))->status, 404);
  auto admin = agg_->client();
  const auto npus = json::array({{{"index", 0}, {"netdev", "eth0"}, {"mac", "02:aa:00:00:00:00"}}});
  ASSERT_EQ(admin.put("/api/v1/hosts/node-new", json({{"npus", npus}}).dump())->status, 201);
  auto added = agent.get(desired_path("node-new"));
  ASSERT_EQ(added->status, 200);
  EXPECT_EQ(json::parse(added->body)["generation"], 1);
  EXPECT_TRUE(json::parse(added->body)["ports"].empty());

  // The API has no host deletion; the row goes by another connection to the file, and the aggregator
  // sees it once it writes itself (store/revision.h: one aggregator per database file).
  const auto held = agent.get(desired_path(host_name(5)));
  ASSERT_EQ(held->status, 200);
  {
    store::Connection other(agg_path().string(), false, std::chrono::milliseconds(5000));
    ASSERT_TRUE(
        other.execute("PRAGMA foreign_keys = ON; DELETE FROM ports WHERE host = 'node-005'; "
                      "DELETE FROM hosts WHERE name = 'node-005';"));
  }
  ASSERT_EQ(admin.put("/api/v1/hosts/node-new-2", json({{"npus", npus}}).dump())->status, 201);
  auto gone = agent.get(desired_path(host_name(5)), {{"If-None-Match", held->etag}});
  ASSERT_EQ(gone->status, 404);
  EXPECT_NE(gone->body.find("host node-005 not found"), std::string::npos) << gone->body;
  EXPECT_EQ(agent.get(desired_path("node-new-2"))->status, 200);
  EXPECT_EQ(agent.get(desired_path(host_name(6)))->status, 200);
}

TEST_F(DesiredFanout, PollsRacingChangesNeverSeeAMismatchedTagOrAnOlderDocument) {
  // A writer renames rail-0 (every host with ports has one there) to "r-<k>" for k = 1.. and publishes k
  // once the rename was answered; pollers read the published k before each request. The document must
  // name r-<j> with j >= k, its tag must name the generation in its body, and a 304 must come only for
  // the tag the poller holds.
  constexpr int kRenames = 20;
  constexpr int kPollers = 4;
  std::atomic<int> renamed{0};
  std::atomic<bool> stop{false};
  std::atomic<long> polls{0};
  std::vector<std::thread> pollers;
  pollers.reserve(kPollers);
  for (int t = 0; t < kPollers; ++t) {
    pollers.emplace_back([&, t] {
      auto agent = agg_->client(kAgentToken);
      std::vector<std::string> tags(kHosts);
      std::vector<std::int64_t> generations(kHosts, 0);
      for (int n = 0; !stop; ++n) {
        const int h = (t + n * kPollers) % kHosts;
        if (h % 10 == 0) continue;  // no port in rail-0
        const auto i = static_cast<std::size_t>(h);
        const int k = renamed.load();
        auto r = tags[i].empty() ? agent.get(desired_path(host_name(h)))
                                 : agent.get(desired_path(host_name(h)), {{"If-None-Match", tags[i]}});
        ASSERT_TRUE(r) << r.error();
        ++polls;
        if (r->status == 304) {
          EXPECT_EQ(r->etag, tags[i]) << host_name(h);
          continue;
        }
        ASSERT_EQ(r->status, 200) << host_name(h) << r->body;
        const auto doc = json::parse(r->body);
        const auto generation = doc["generation"].get<std::int64_t>();
        EXPECT_EQ(r->etag.rfind("\"d" + std::to_string(generation) + "-", 0), 0U)
            << host_name(h) << ": tag " << r->etag << " for a body of generation " << generation;
        EXPECT_GE(generation, generations[i]) << host_name(h) << ": went back";
        std::string rail0;
        for (const auto& p : doc["ports"]) {
          if (p["npu"] == 0) rail0 = p["subnet_name"];
        }
        const int seen = rail0.rfind("r-", 0) == 0 ? std::stoi(rail0.substr(2)) : 0;
        EXPECT_GE(seen, k) << host_name(h) << ": sent after rename " << k << ", got subnet name " << rail0;
        tags[i] = r->etag;
        generations[i] = generation;
      }
    });
  }
  auto admin = agg_->client();
  for (int k = 1; k <= kRenames; ++k) {
    auto r = admin.patch("/api/v1/subnets/" + subnets_[0], json({{"name", "r-" + std::to_string(k)}}).dump());
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error());
    renamed = k;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  for (auto& p : pollers) p.join();
  EXPECT_GT(polls.load(), kRenames);
  // At rest, every host has the last name.
  auto agent = agg_->client(kAgentToken);
  for (int h = 1; h < kHosts; h += 10) {
    auto r = agent.get(desired_path(host_name(h)));
    ASSERT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("\"r-" + std::to_string(kRenames) + "\""), std::string::npos) << host_name(h);
  }
}

}  // namespace
}  // namespace hsns::testing
