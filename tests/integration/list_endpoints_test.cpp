// List endpoints and desired state over real HTTP: the real aggregator binary, a real SQLite file,
// loopback. ETag on every list, If-None-Match answered 304, gzip when asked for, invalidation by a write
// (and not by a refused one), tags that survive a restart, filters with their own tags, and the desired
// state of every host touched by one subnet change.
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

std::string gunzip(const std::string& data) {
  z_stream z{};
  constexpr int kGzipWindowBits = 15 + 16;
  EXPECT_EQ(inflateInit2(&z, kGzipWindowBits), Z_OK);
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[65536];
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  EXPECT_EQ(rc, Z_STREAM_END) << "not a complete gzip stream";
  return out;
}

json host_body(int npus) {
  json arr = json::array();
  for (int i = 0; i < npus; ++i) {
    arr.push_back({{"index", i},
                   {"netdev", "eth" + std::to_string(i)},
                   {"mac", "02:00:00:00:01:0" + std::to_string(i)},
                   {"rdma_device", "mlx5_" + std::to_string(i)},
                   {"link_speed_mbps", 400000}});
  }
  return {{"npus", arr}};
}

class ListEndpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
    auto c = agg_->client();
    for (int s = 0; s < 2; ++s) {
      auto r = c.post("/api/v1/subnets", json({{"name", "rail-" + std::to_string(s)},
                                               {"cidr", "198.18." + std::to_string(s) + ".0/24"}})
                                             .dump());
      ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error());
      subnets_.push_back(json::parse(r->body)["id"]);
    }
    for (int h = 0; h < kHosts; ++h) {
      const auto name = "h" + std::to_string(h);
      ASSERT_EQ(c.put("/api/v1/hosts/" + name, host_body(2).dump())->status, 201);
      // Every host has a port in rail-0; only the even ones in rail-1.
      for (int s = 0; s < (h % 2 == 0 ? 2 : 1); ++s) {
        auto p = c.post(
            "/api/v1/ports",
            json({{"subnet_id", subnets_[static_cast<std::size_t>(s)]}, {"host", name}, {"npu", s}}).dump());
        ASSERT_TRUE(p && p->status == 201) << (p ? p->body : p.error());
      }
    }
  }
  void TearDown() override {
    if (agg_->running()) {
      EXPECT_EQ(agg_->stop(), 0) << agg_->log();
    }
  }

  static constexpr int kHosts = 12;
  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
  std::vector<std::string> subnets_;
};

TEST_F(ListEndpoints, EveryListAnswersETagAnd304AndTheBodyIsTheCanonicalDump) {
  auto c = agg_->client();
  for (const std::string list :
       {"/api/v1/ports", "/api/v1/hosts", "/api/v1/subnets", "/api/v1/agents", "/api/v1/topology/lldp",
        "/api/v1/ports?host=h3", "/api/v1/subnets?tenant=default"}) {
    auto first = c.get(list);
    ASSERT_TRUE(first && first->status == 200) << list;
    ASSERT_FALSE(first->etag.empty()) << list;
    EXPECT_EQ(first->header("Vary"), "Accept-Encoding") << list;
    EXPECT_EQ(first->content_type, "application/json") << list;
    EXPECT_EQ(json::parse(first->body).dump(), first->body) << list;
    auto again = c.get(list, {{"If-None-Match", first->etag}});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 304) << list;
    EXPECT_TRUE(again->body.empty());
    EXPECT_EQ(again->etag, first->etag);
    EXPECT_EQ(c.get(list, {{"If-None-Match", "\"something-else\""}})->status, 200) << list;
  }
  // Each item is what the single-object route answers, byte for byte.
  const auto ports = json::parse(c.get("/api/v1/ports")->body)["items"];
  ASSERT_EQ(ports.size(), 18U);
  for (const auto& p : ports) {
    EXPECT_EQ(c.get("/api/v1/ports/" + p["id"].get<std::string>())->body, p.dump());
  }
  // Filters have their own tags; the order of the parameters does not matter.
  const auto all = c.get("/api/v1/ports")->etag;
  const auto h3 = c.get("/api/v1/ports?host=h3&tenant=default");
  EXPECT_NE(h3->etag, all);
  EXPECT_EQ(json::parse(h3->body)["items"].size(), 1U);
  EXPECT_EQ(c.get("/api/v1/ports?tenant=default&host=h3")->etag, h3->etag);
  EXPECT_EQ(c.get("/api/v1/ports?tenant=default&host=h3", {{"If-None-Match", all}})->status, 200);
}

TEST_F(ListEndpoints, GzipWhenAskedTheSameDocumentAndValidatedByEitherTag) {
  auto c = agg_->client();
  const auto plain = c.get("/api/v1/ports");
  EXPECT_TRUE(plain->header("Content-Encoding").empty());
  const auto zipped = c.get("/api/v1/ports", {{"Accept-Encoding", "br;q=1, gzip;q=0.8"}});
  ASSERT_EQ(zipped->status, 200);
  EXPECT_EQ(zipped->header("Content-Encoding"), "gzip");
  EXPECT_EQ(zipped->header("Vary"), "Accept-Encoding");
  EXPECT_NE(zipped->etag, plain->etag);
  EXPECT_LT(zipped->body.size(), plain->body.size());
  EXPECT_EQ(gunzip(zipped->body), plain->body);
  EXPECT_EQ(c.get("/api/v1/ports", {{"Accept-Encoding", "gzip"}, {"If-None-Match", zipped->etag}})->status,
            304);
  EXPECT_EQ(c.get("/api/v1/ports", {{"Accept-Encoding", "gzip"}, {"If-None-Match", plain->etag}})->status,
            304);
  EXPECT_EQ(c.get("/api/v1/ports", {{"If-None-Match", zipped->etag}})->status, 304);
  EXPECT_TRUE(c.get("/api/v1/ports", {{"Accept-Encoding", "gzip;q=0, identity"}})
                  ->header("Content-Encoding")
                  .empty());
}

TEST_F(ListEndpoints, AWriteInvalidatesARefusedOneDoesNotAndTagsSurviveARestart) {
  auto c = agg_->client();
  const auto before = c.get("/api/v1/ports");
  const auto subnets_before = c.get("/api/v1/subnets");
  // Refused (the NPU already has a port in this subnet): nothing stored, the tag stands.
  auto dup = c.post("/api/v1/ports", json({{"subnet_id", subnets_[0]}, {"host", "h0"}, {"npu", 0}}).dump());
  EXPECT_EQ(dup->status, 409);
  EXPECT_EQ(c.get("/api/v1/ports", {{"If-None-Match", before->etag}})->status, 304);

  ASSERT_EQ(agg_->stop(), 0) << agg_->log();
  agg_->start();
  c = agg_->client();
  EXPECT_EQ(c.get("/api/v1/ports", {{"If-None-Match", before->etag}})->status, 304);

  auto created =
      c.post("/api/v1/ports", json({{"subnet_id", subnets_[1]}, {"host", "h1"}, {"npu", 1}}).dump());
  ASSERT_EQ(created->status, 201);
  const auto after = c.get("/api/v1/ports", {{"If-None-Match", before->etag}});
  ASSERT_EQ(after->status, 200);
  EXPECT_NE(after->etag, before->etag);
  EXPECT_EQ(json::parse(after->body)["items"].size(), json::parse(before->body)["items"].size() + 1);
  EXPECT_NE(after->body.find(json::parse(created->body)["id"].get<std::string>()), std::string::npos);
  // port_count of the subnet changed too.
  EXPECT_EQ(c.get("/api/v1/subnets", {{"If-None-Match", subnets_before->etag}})->status, 200);
}

TEST_F(ListEndpoints, OneSubnetChangeReachesEveryAffectedHostAndOnlyThem) {
  auto agent = agg_->client(kAgentToken);
  std::vector<std::string> tags;
  for (int h = 0; h < kHosts; ++h) {
    auto d = agent.get("/api/v1/agents/h" + std::to_string(h) + "/desired");
    ASSERT_EQ(d->status, 200);
    tags.push_back(d->etag);
    EXPECT_EQ(
        agent.get("/api/v1/agents/h" + std::to_string(h) + "/desired", {{"If-None-Match", d->etag}})->status,
        304);
  }
  // rail-1 holds ports of the even hosts only.
  auto c = agg_->client();
  ASSERT_EQ(c.patch("/api/v1/subnets/" + subnets_[1], R"({"name":"rail-1-renamed"})")->status, 200);
  for (int h = 0; h < kHosts; ++h) {
    auto d = agent.get("/api/v1/agents/h" + std::to_string(h) + "/desired",
                       {{"If-None-Match", tags[static_cast<std::size_t>(h)]}});
    if (h % 2 == 0) {
      ASSERT_EQ(d->status, 200) << h;
      EXPECT_NE(d->etag, tags[static_cast<std::size_t>(h)]);
      EXPECT_NE(d->body.find("rail-1-renamed"), std::string::npos);
    } else {
      EXPECT_EQ(d->status, 304) << h;
    }
  }
  EXPECT_EQ(agent.get("/api/v1/agents/nobody/desired", {{"If-None-Match", tags[0]}})->status, 404);
}

}  // namespace
}  // namespace hsns::testing
