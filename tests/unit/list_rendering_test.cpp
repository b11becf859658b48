// The list endpoints' fast path in-process, on a real SQLite file: the streaming JSON writer against
// nlohmann's dump (every byte value, UTF-8, invalid UTF-8), the list bodies of a large store against the
// DOM rendering the routes used before (the reference, kept here only), the response cache, the store
// revisions bumped by writes and untouched by refused writes, and the conditional-request helpers.
#include <gtest/gtest.h>

#include <boost/url/parse.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "api/agents/routes.h"
#include "api/network/routes.h"
#include "http/conditional.h"
#include "http/json_stream.h"
#include "http/response_cache.h"
#include "http/router.h"
#include "model/network.h"
#include "store/database.h"
#include "store/sqlite_agent_store.h"
#include "store/sqlite_network_store.h"
#include "support/temp_dir.h"

namespace hsns {
namespace {

using nlohmann::json;
namespace bhttp = boost::beast::http;

std::string streamed(const std::string& s) {
  std::string out;
  http::append_json_string(out, s);
  return out;
}

TEST(JsonStream, EveryAsciiByteEscapesAsNlohmann) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s(1, static_cast<char>(c));
    EXPECT_EQ(streamed(s), json(s).dump()) << "byte " << c;
  }
  const std::string mixed = "a\"b\\c\n\t\x01\x1f\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 end";
  EXPECT_EQ(streamed(mixed), json(mixed).dump());
}

TEST(JsonStream, InvalidUtf8ThrowsAsNlohmannDoes) {
  for (const std::string bad :
       {"\x80", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x82"}) {
    EXPECT_THROW(json(bad).dump(), json::type_error);
    EXPECT_THROW(streamed(bad), std::invalid_argument);
  }
}

TEST(JsonStream, WriterPlacesCommasAsDump) {
  std::string out;
  http::JsonWriter w(out);
  w.begin_object().key("a").begin_array().integer(-5).boolean(true).null().string("x");
  w.begin_object().end_object().begin_array().end_array().raw(R"({"k":1})").end_array();
  w.key("b").integer(INT64_MAX).end_object();
  const json expected = {{"a", {-5, true, nullptr, "x", json::object(), json::array(), {{"k", 1}}}},
                         {"b", INT64_MAX}};
  EXPECT_EQ(out, expected.dump());
}

TEST(Conditional, IfNoneMatchAndAcceptEncoding) {
  EXPECT_TRUE(http::if_none_match_matches("\"a\"", "\"a\""));
  EXPECT_TRUE(http::if_none_match_matches("\"x\", W/\"a\"", "\"a\""));
  EXPECT_TRUE(http::if_none_match_matches(" * ", "\"a\""));
  EXPECT_FALSE(http::if_none_match_matches("\"ab\"", "\"a\""));
  EXPECT_FALSE(http::if_none_match_matches("", "\"a\""));
  EXPECT_TRUE(http::accepts_gzip("gzip, deflate, br"));
  EXPECT_TRUE(http::accepts_gzip("br;q=1.0, GZIP;q=0.5"));
  EXPECT_TRUE(http::accepts_gzip("*"));
  EXPECT_FALSE(http::accepts_gzip(""));
  EXPECT_FALSE(http::accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(http::accepts_gzip("*, gzip;q=0"));
  EXPECT_FALSE(http::accepts_gzip("identity"));
}

TEST(ResponseCache, KeyedByRevisionAndBounded) {
  http::ResponseCache cache(100);
  EXPECT_EQ(cache.find("k", 1), nullptr);
  cache.put("k", 1, "\"t1\"", std::string(40, 'a'));
  ASSERT_NE(cache.find("k", 1), nullptr);
  EXPECT_EQ(cache.find("k", 2), nullptr);  // a newer revision: stale
  cache.put("k", 2, "\"t2\"", std::string(40, 'b'));
  cache.put("k", 1, "\"t1\"", std::string(40, 'a'));  // a slow renderer of an older revision
  ASSERT_NE(cache.find("k", 2), nullptr);
  EXPECT_EQ(cache.find("k", 2)->body(), std::string(40, 'b'));
  cache.put("j", 2, "\"t\"", std::string(40, 'c'));
  cache.put("i", 2, "\"t\"", std::string(40, 'd'));  // over 100 bytes: the least recently used goes
  EXPECT_EQ(cache.size(), 2U);
  EXPECT_EQ(cache.find("k", 2), nullptr);
  cache.put("huge", 2, "\"t\"", std::string(200, 'e'));  // larger than the bound: not kept
  EXPECT_EQ(cache.find("huge", 2), nullptr);
  EXPECT_FALSE(cache.find("i", 2)->gzipped().empty());
}

// The aggregator's network and agent routes on one database, called in-process.
class ListRendering : public ::testing::Test {
 protected:
  ListRendering()
      : db_(store::DatabaseOptions{(dir_.path() / "lists.db").string()}), network_(db_), agents_(db_) {
    network::register_network_routes(router_, network_);
    network::register_agent_routes(router_, network_, agents_);
  }

  http::Response get(const std::string& target,
                     const std::vector<std::pair<bhttp::field, std::string>>& headers = {}) {
    http::Request req{bhttp::verb::get, target, 11};
    req.set(bhttp::field::host, "localhost");
    for (const auto& [f, v] : headers) req.set(f, v);
    const auto url = boost::urls::parse_origin_form(req.target());
    EXPECT_TRUE(url.has_value());
    auto match = router_.match(bhttp::verb::get, url->encoded_path());
    EXPECT_NE(match.route, nullptr) << target;
    http::RequestContext ctx{req, *url, match.path_params, "", "", ""};
    return match.route->handler(ctx);
  }

  // Hosts h000..h(n-1) with 8 NPUs each, subnets (one with a name needing escapes), a port per NPU.
  void fill(int hosts) {
    std::vector<std::string> subnets;
    for (int s = 0; s < 4; ++s) {
      network::SubnetSpec spec;
      spec.name = s == 3 ? std::string("rail \"3\"\t\xc3\xa9\x01") : "rail-" + std::to_string(s);
      spec.tenant = s % 2 == 0 ? "team-a" : "team-b";
      spec.cidr = *IpPrefix::parse(s == 2 ? "2001:db8:" + std::to_string(s) + "::/64"
                                          : "10." + std::to_string(s) + ".0.0/16");
      if (s == 0) spec.gateway = *IpAddress::parse("10.0.0.1");
      spec.mtu = 4200;
      auto created = network_.create_subnet(spec);
      ASSERT_TRUE(created) << created.error().detail;
      subnets.push_back(created->id);
    }
    char name[16];
    for (int h = 0; h < hosts; ++h) {
      std::snprintf(name, sizeof name, "h%03d", h);
      network::HostRegistration reg{name, {}};
      for (int n = 0; n < 8; ++n) {
        reg.npus.push_back({n, "eth" + std::to_string(n), "02:00:00:00:00:0" + std::to_string(n),
                            "mlx5_" + std::to_string(n), 400000});
      }
      ASSERT_TRUE(network_.put_host(reg));
      for (int n = 0; n < 8; ++n) {
        network::PortSpec p;
        p.subnet_id = subnets[static_cast<std::size_t>(n % 4)];
        p.host = name;
        p.npu = n;
        p.name = n == 5 ? "port \"five\"\n" : "";
        auto port = network_.create_port(p);
        ASSERT_TRUE(port) << port.error().detail;
      }
    }
    subnet_ids_ = subnets;
  }

  template <typename T>
  static std::string reference(const std::vector<T>& items) {
    auto arr = json::array();
    for (const auto& x : items) arr.push_back(network::to_json(x));
    return json{{"items", std::move(arr)}}.dump();
  }

  testing::TempDir dir_;
  store::Database db_;
  store::SqliteNetworkStore network_;
  store::SqliteAgentStore agents_;
  http::Router router_;
  std::vector<std::string> subnet_ids_;
};

TEST_F(ListRendering, LargeStoreStreamedAndCachedBodiesAreTheDomRenderingByteForByte) {
  fill(250);  // 2,000 ports
  const auto ports = network_.list_ports({});
  ASSERT_TRUE(ports);
  ASSERT_EQ(ports->size(), 2000U);
  const auto expected_ports = reference(*ports);
  for (int round = 0; round < 2; ++round) {  // streamed, then from the cache
    auto res = get("/api/v1/ports");
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), expected_ports) << "round " << round;
    EXPECT_FALSE(res[bhttp::field::etag].empty());
  }
  // Served from the cache, the bytes are the cache entry's own: two responses share one body, no copy.
  const auto first = get("/api/v1/ports");
  const auto second = get("/api/v1/ports");
  EXPECT_EQ(first.body().view().data(), second.body().view().data());
  EXPECT_EQ(get("/api/v1/hosts").body(), reference(*network_.list_hosts()));
  EXPECT_EQ(get("/api/v1/subnets").body(), reference(*network_.list_subnets({})));
  // Filters: each combination its own body, and the same body in any parameter order.
  network::PortFilter f;
  f.host = "h007";
  f.subnet_id = subnet_ids_[1];
  EXPECT_EQ(get("/api/v1/ports?host=h007&subnet_id=" + subnet_ids_[1]).body(),
            reference(*network_.list_ports(f)));
  EXPECT_EQ(get("/api/v1/ports?subnet_id=" + subnet_ids_[1] + "&host=h007").body(),
            reference(*network_.list_ports(f)));
  network::PortFilter by_tenant;
  by_tenant.tenant = "team-b";
  EXPECT_EQ(get("/api/v1/ports?tenant=team-b").body(), reference(*network_.list_ports(by_tenant)));
  network::SubnetFilter sf;
  sf.tenant = "team-a";
  EXPECT_EQ(get("/api/v1/subnets?tenant=team-a").body(), reference(*network_.list_subnets(sf)));
  EXPECT_EQ(get("/api/v1/ports?host=nobody").body(), R"({"items":[]})");
  EXPECT_EQ(get("/api/v1/ports?colour=red").result_int(), 400);
}

TEST_F(ListRendering, AgentsListIsTheDomRendering) {
  fill(3);
  ASSERT_TRUE(agents_.put_status("h001", 1, R"({"applied_generation":1,"ports":[{"state":"failed"}]})"));
  const std::string body(get("/api/v1/agents").body().view());
  const auto parsed = json::parse(body);
  EXPECT_EQ(parsed.dump(), body);
  ASSERT_EQ(parsed["items"].size(), 3U);
  EXPECT_EQ(parsed["items"][1]["ports_failed"], 1);
  EXPECT_EQ(parsed["items"][0]["applied_generation"], nullptr);
}

TEST_F(ListRendering, WritesBumpTheRevisionInTheirTransactionAndRefusedWritesDoNot) {
  fill(2);
  const auto before = db_.revision(store::RevisionDomain::network);
  EXPECT_GT(before, 0);
  EXPECT_FALSE(db_.instance().empty());
  const auto etag = std::string(get("/api/v1/ports")[bhttp::field::etag]);
  EXPECT_EQ(get("/api/v1/ports", {{bhttp::field::if_none_match, etag}}).result_int(), 304);

  network::PortSpec dup;  // refused: the NPU already has a port in this subnet
  dup.subnet_id = subnet_ids_[0];
  dup.host = "h000";
  dup.npu = 0;
  EXPECT_FALSE(network_.create_port(dup));
  EXPECT_EQ(db_.revision(store::RevisionDomain::network), before);
  EXPECT_EQ(get("/api/v1/ports", {{bhttp::field::if_none_match, etag}}).result_int(), 304);

  network::SubnetUpdate rename;
  rename.name = "renamed";
  ASSERT_TRUE(network_.update_subnet(subnet_ids_[0], rename));
  EXPECT_GT(db_.revision(store::RevisionDomain::network), before);
  auto fresh = get("/api/v1/ports", {{bhttp::field::if_none_match, etag}});
  EXPECT_EQ(fresh.result_int(), 200);
  EXPECT_NE(fresh[bhttp::field::etag], etag);
  EXPECT_EQ(fresh.body(), reference(*network_.list_ports({})));
  // An agent report is another domain: the ports list stays valid, the agents list does not.
  const auto ports_tag = std::string(fresh[bhttp::field::etag]);
  const auto agents_tag = std::string(get("/api/v1/agents")[bhttp::field::etag]);
  ASSERT_TRUE(agents_.put_status("h000", 1, R"({"applied_generation":1})"));
  EXPECT_EQ(get("/api/v1/ports", {{bhttp::field::if_none_match, ports_tag}}).result_int(), 304);
  EXPECT_EQ(get("/api/v1/agents", {{bhttp::field::if_none_match, agents_tag}}).result_int(), 200);
}

TEST_F(ListRendering, RenamingASubnetChangesTheDesiredTagOfEveryHostWithAPortInIt) {
  fill(20);
  std::vector<std::string> tags;
  for (int h = 0; h < 20; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "h%03d", h);
    auto res = get(std::string("/api/v1/agents/") + name + "/desired");
    ASSERT_EQ(res.result_int(), 200);
    tags.emplace_back(res[bhttp::field::etag]);
    EXPECT_EQ(
        get(std::string("/api/v1/agents/") + name + "/desired", {{bhttp::field::if_none_match, tags.back()}})
            .result_int(),
        304);
  }
  network::SubnetUpdate rename;
  rename.name = "rail-0-renamed";
  ASSERT_TRUE(network_.update_subnet(subnet_ids_[0], rename));
  for (int h = 0; h < 20; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "h%03d", h);
    auto res = get(std::string("/api/v1/agents/") + name + "/desired",
                   {{bhttp::field::if_none_match, tags[static_cast<std::size_t>(h)]}});
    ASSERT_EQ(res.result_int(), 200) << name;
    EXPECT_NE(res.body().view().find("rail-0-renamed"), std::string::npos);
    // The tag names the document: the one served is the one a fresh render gives.
    auto view = network_.host_view(name);
    ASSERT_TRUE(view);
    EXPECT_EQ(res.body(), network::render_desired_state(*view));
    EXPECT_EQ(res[bhttp::field::etag], network::desired_etag(db_.instance(), view->host.generation));
  }
}

}  // namespace
}  // namespace hsns
