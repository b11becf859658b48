// The dashboard's server side on the real hsns-aggregator binary over loopback (docs/dashboard.md):
// - static assets: content types, ETag and 304, the security headers (CSP without inline script, nosniff),
//   path traversal refused (encoded dots and slashes, dot files, a symlink out of the web root, unknown
//   types), a missing web root answered 404 without stopping the API;
// - browser sessions: login answers an HttpOnly, SameSite=Strict cookie (Secure only under TLS: checked
//   in-process) and a CSRF token; the cookie authenticates like the bearer token with the token's role;
//   a write with the cookie but without the right X-CSRF-Token is refused 403 and stores nothing; logout;
//   expiry after session_ttl_s; the table bounded by max_sessions (the oldest session goes); a bearer
//   token is unaffected by any cookie;
// - GET /api/v1/topology/layout: groups, expansion, located hosts, bad input named, 404 before a topology.
// - GET /api/v1/topology/links: the export's devices and links in compact columns, the upper filter, bad
//   input named.
// - GET /api/v1/overlays: the overlays with the thresholds of the configuration's `overlays:` section and
//   describe texts stating them, to any role; a bad section stops the aggregator before it listens.
// - GET /api/v1/overlays/{id}/grades and its stream: the metric overlays graded by the aggregator from the
//   KPIs pushed, index-aligned with /topology/links, at a past time, bad input named; the stream's full
//   set at open, then a delta naming only the link a KPI changed, and nothing when nothing changed; each
//   stream session graded with its own max_age_s, a bad one closing it with 1008.
// - GET /api/v1/overlays/summary: each layout group's worst active alarm and p95 utilisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "hsns/time.h"
#include "http/service.h"
#include "metrics.h"
#include "support/aggregator_process.h"
#include "support/temp_dir.h"
#include "support/websocket_client.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

HttpResponse ok(tl::expected<HttpResponse, std::string> r) {
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : HttpResponse{};
}

// A web root with the dashboard's file types, a dot file, and (beside it) a secret a traversal would hit.
fs::path make_web_root(const fs::path& dir) {
  auto root = dir / "web";
  fs::create_directories(root);
  std::ofstream(root / "index.html")
      << "<!doctype html><title>hsns</title><script type=module src=/ui/app.js></script>";
  std::ofstream(root / "app.js") << "console.log('hsns');\n";
  std::ofstream(root / "app.css") << "body{}\n";
  std::ofstream(root / ".hidden.txt") << "hidden\n";
  std::ofstream(root / "notes.exe") << "not an asset type\n";
  std::ofstream(dir / "secret.txt") << "SECRET\n";
  fs::create_symlink(dir / "secret.txt", root / "link.txt");
  return root;
}

class Dashboard : public ::testing::Test {
 protected:
  void start(const std::string& config = "{}\n") {
    web_root_ = make_web_root(dir_.path());
    server_ = std::make_unique<AggregatorProcess>(dir_.path(),
                                                  std::vector<std::string>{"--web-root", web_root_.string()});
    server_->set_config(config);
    server_->start();
  }
  HttpClient anonymous() const { return server_->client(""); }
  // Logs in with `token`; answers the cookie ("hsns_session=...") and the CSRF token.
  std::pair<std::string, std::string> login(const std::string& token) {
    auto c = anonymous();
    const auto r = ok(c.post("/api/v1/session", json{{"token", token}}.dump()));
    EXPECT_EQ(r.status, 201) << r.body;
    const auto set_cookie = r.header("Set-Cookie");
    const auto cookie = set_cookie.substr(0, set_cookie.find(';'));
    return {cookie, json::parse(r.body).value("csrf_token", "")};
  }

  TempDir dir_{"hsns-dashboard"};
  fs::path web_root_;
  std::unique_ptr<AggregatorProcess> server_;
};

TEST_F(Dashboard, ServesTheAssetsWithTypesValidatorsAndSecurityHeaders) {
  start();
  auto c = anonymous();
  const auto index = ok(c.get("/"));
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("/ui/app.js"), std::string::npos);
  const auto csp = index.header("Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("script-src 'self' 'unsafe-inline'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(index.header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(index.header("Cache-Control"), "no-cache");
  ASSERT_FALSE(index.etag.empty());

  const auto again = ok(c.get("/", {{"If-None-Match", index.etag}}));
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.header("X-Content-Type-Options"), "nosniff");

  const auto js = ok(c.get("/ui/app.js"));
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.body, "console.log('hsns');\n");
  EXPECT_EQ(ok(c.get("/ui/app.css")).content_type, "text/css; charset=utf-8");
  const auto head = ok(c.request("HEAD", "/ui/app.js", "", ""));
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("Content-Length"), std::to_string(js.body.size()));

  // A rebuilt asset gets a new ETag at once (no restart).
  std::ofstream(web_root_ / "app.js") << "console.log('rebuilt, longer');\n";
  const auto rebuilt = ok(c.get("/ui/app.js", {{"If-None-Match", js.etag}}));
  EXPECT_EQ(rebuilt.status, 200);
  EXPECT_NE(rebuilt.etag, js.etag);
}

TEST_F(Dashboard, RefusesEveryPathOutOfTheWebRoot) {
  start();
  auto c = anonymous();
  for (const char* target :
       {"/ui/..%2Fsecret.txt", "/ui/%2e%2e%2fsecret.txt", "/ui/%2E%2E%2Fsecret.txt", "/ui/../secret.txt",
        "/ui/..%5Csecret.txt", "/ui/link.txt", "/ui/.hidden.txt", "/ui/notes.exe", "/ui/%2Fetc%2Fpasswd",
        "/ui/app.js%00.txt", "/ui/web%2Findex.html", "/ui/", "/ui/missing.js"}) {
    const auto r = ok(c.get(target));
    EXPECT_EQ(r.status, 404) << target << ": " << r.body;
    EXPECT_EQ(r.body.find("SECRET"), std::string::npos) << target;
  }
}

TEST_F(Dashboard, AMissingWebRootAnswers404AndTheApiKeepsWorking) {
  server_ = std::make_unique<AggregatorProcess>(
      dir_.path(), std::vector<std::string>{"--web-root", (dir_.path() / "nowhere").string()});
  server_->start();
  const auto r = ok(anonymous().get("/"));
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("web_root"), std::string::npos) << r.body;
  EXPECT_EQ(ok(server_->client(kViewerToken).get("/api/v1/subnets")).status, 200);
}

TEST_F(Dashboard, LoginAnswersAnHttpOnlyStrictCookieAndACsrfToken) {
  start();
  auto c = anonymous();
  const auto r = ok(c.post("/api/v1/session", json{{"token", kViewerToken}}.dump()));
  ASSERT_EQ(r.status, 201) << r.body;
  const auto cookie = r.header("Set-Cookie");
  EXPECT_EQ(cookie.rfind("hsns_session=", 0), 0U) << cookie;
  EXPECT_NE(cookie.find("; HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Path=/"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Max-Age=43200"), std::string::npos) << cookie;
  EXPECT_EQ(cookie.find("Secure"), std::string::npos) << "no TLS, no Secure: " << cookie;
  EXPECT_EQ(r.header("Cache-Control"), "no-store");
  const auto body = json::parse(r.body);
  EXPECT_EQ(body["name"], "dashboard");  // the viewer token's name in the launcher's tokens file
  EXPECT_EQ(body["role"], "viewer");
  EXPECT_EQ(body["authenticated"], true);
  EXPECT_GE(body["csrf_token"].get<std::string>().size(), 40U);
  // The token is not the cookie, and the cookie is not the token.
  EXPECT_EQ(cookie.find(kViewerToken), std::string::npos);

  const auto wrong = ok(c.post("/api/v1/session", json{{"token", "not-a-token-of-this-server"}}.dump()));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_TRUE(wrong.header("Set-Cookie").empty());
  const auto missing = ok(c.post("/api/v1/session", "{}"));
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.body.find("token"), std::string::npos);
  const auto agent = ok(c.post("/api/v1/session", json{{"token", kAgentToken}}.dump()));
  EXPECT_EQ(agent.status, 403) << "agent tokens open no browser session";
  EXPECT_EQ(r.location, "/api/v1/session");
  const auto extra = ok(c.post("/api/v1/session", json{{"token", kViewerToken}, {"remember", true}}.dump()));
  EXPECT_EQ(extra.status, 400);
  EXPECT_NE(extra.body.find("remember"), std::string::npos);
}

TEST_F(Dashboard, TheCookieAuthenticatesWithTheTokensRole) {
  start();
  auto c = anonymous();
  EXPECT_EQ(ok(c.get("/api/v1/subnets")).status, 401);
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", "hsns_session=forged"}})).status, 401);
  const auto [cookie, csrf] = login(kViewerToken);
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", "theme=dark; " + cookie}})).status, 200);
  const auto session = ok(c.get("/api/v1/session", {{"Cookie", cookie}}));
  ASSERT_EQ(session.status, 200);
  EXPECT_EQ(json::parse(session.body)["csrf_token"], csrf);
  EXPECT_EQ(json::parse(session.body)["name"], "dashboard");
  const auto nobody = ok(c.get("/api/v1/session"));
  EXPECT_EQ(json::parse(nobody.body)["authenticated"], false);
  // A viewer session may not write, even with its CSRF token.
  const auto write =
      ok(c.request("POST", "/api/v1/subnets", R"({"name":"a","cidr":"198.18.0.0/24","tenant":"t"})",
                   "application/json", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}));
  EXPECT_EQ(write.status, 403) << write.body;
  // A bearer token wins over any cookie: API clients are unchanged.
  EXPECT_EQ(
      ok(server_->client(kViewerToken).get("/api/v1/subnets", {{"Cookie", "hsns_session=forged"}})).status,
      200);
}

TEST_F(Dashboard, WritesWithTheCookieNeedTheCsrfToken) {
  start();
  auto c = anonymous();
  const auto [cookie, csrf] = login(kOperatorToken);
  const std::string subnet = R"({"name":"rdma-a","cidr":"198.18.0.0/24","tenant":"team-a"})";
  const auto none =
      ok(c.request("POST", "/api/v1/subnets", subnet, "application/json", {{"Cookie", cookie}}));
  EXPECT_EQ(none.status, 403) << none.body;
  EXPECT_NE(none.body.find("X-CSRF-Token"), std::string::npos) << none.body;
  auto wrong_token = csrf;
  wrong_token.back() = wrong_token.back() == 'A' ? 'B' : 'A';
  const auto wrong = ok(c.request("POST", "/api/v1/subnets", subnet, "application/json",
                                  {{"Cookie", cookie}, {"X-CSRF-Token", wrong_token}}));
  EXPECT_EQ(wrong.status, 403);
  const auto list = json::parse(ok(server_->client(kViewerToken).get("/api/v1/subnets")).body);
  EXPECT_TRUE(list["items"].empty()) << "a refused write stored something";

  const auto made = ok(c.request("POST", "/api/v1/subnets", subnet, "application/json",
                                 {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}));
  ASSERT_EQ(made.status, 201) << made.body;
  const auto id = json::parse(made.body)["id"].get<std::string>();
  EXPECT_EQ(ok(c.request("DELETE", "/api/v1/subnets/" + id, "", "", {{"Cookie", cookie}})).status, 403);
  EXPECT_EQ(
      ok(c.request("DELETE", "/api/v1/subnets/" + id, "", "", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}))
          .status,
      204);

  // Logout is a write too: CSRF first, then the cookie is cleared and no longer works.
  EXPECT_EQ(ok(c.request("DELETE", "/api/v1/session", "", "", {{"Cookie", cookie}})).status, 403);
  const auto out =
      ok(c.request("DELETE", "/api/v1/session", "", "", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}));
  EXPECT_EQ(out.status, 204);
  EXPECT_NE(out.header("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", cookie}})).status, 401);
  // GET /api/v1/session and DELETE with a bearer token: no session to show or end.
  EXPECT_EQ(ok(server_->client(kViewerToken).del("/api/v1/session")).status, 404);
}

TEST_F(Dashboard, SessionsExpire) {
  start("http:\n  session_ttl_s: 1\n");
  auto c = anonymous();
  const auto [cookie, csrf] = login(kViewerToken);
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", cookie}})).status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto late = ok(c.get("/api/v1/subnets", {{"Cookie", cookie}}));
  EXPECT_EQ(late.status, 401);
  EXPECT_NE(late.body.find("expired"), std::string::npos) << late.body;
  EXPECT_EQ(json::parse(ok(c.get("/api/v1/session", {{"Cookie", cookie}})).body)["authenticated"], false);
}

TEST_F(Dashboard, TheSessionTableIsBounded) {
  start("http:\n  max_sessions: 2\n");
  auto c = anonymous();
  const auto first = login(kViewerToken).first;
  const auto second = login(kViewerToken).first;
  const auto third = login(kViewerToken).first;
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", first}})).status, 401) << "the oldest session must go";
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", second}})).status, 200);
  EXPECT_EQ(ok(c.get("/api/v1/subnets", {{"Cookie", third}})).status, 200);
}

TEST_F(Dashboard, TheLayoutGroupsTheFabricAndExpandsOnRequest) {
  start();
  auto viewer = server_->client(kViewerToken);
  EXPECT_EQ(ok(viewer.get("/api/v1/topology/layout")).status, 404);
  const auto gen =
      ok(server_->client(kOperatorToken)
             .post("/api/v1/topology/generate",
                   R"({"hosts":8,"npus_per_host":2,"hosts_per_su":4,"spines_per_plane":2,"name":"c"})"));
  ASSERT_EQ(gen.status, 200) << gen.body;
  const auto grouped = json::parse(ok(viewer.get("/api/v1/topology/layout")).body);
  EXPECT_EQ(grouped["hosts"], 8);
  std::set<std::string> ids;
  for (const auto& g : grouped["groups"]) ids.insert(g["id"].get<std::string>());
  EXPECT_TRUE(ids.contains("su:0") && ids.contains("su:1") && ids.contains("spines:0"))
      << grouped["groups"].dump();
  EXPECT_TRUE(grouped["nodes"].empty());
  EXPECT_FALSE(grouped["edges"].empty());
  EXPECT_EQ(grouped["rails"].size(), 2U) << "one rail per NPU index";
  for (const auto& e : grouped["edges"]) EXPECT_NE(e["source"], e["target"]);

  const auto one =
      json::parse(ok(viewer.get("/api/v1/topology/layout?expand=su:0&locate=host001,host008")).body);
  int hosts = 0;
  for (const auto& n : one["nodes"]) {
    EXPECT_EQ(n["group"], "su:0");
    if (n["tier"] == "host") ++hosts;
  }
  EXPECT_EQ(hosts, 4);
  ASSERT_TRUE(one.contains("located")) << one.dump();
  EXPECT_EQ(one["located"].value("host001", ""), "su:0");  // generated hosts are numbered from 1
  EXPECT_EQ(one["located"].value("host008", ""), "su:1");
  const auto all = json::parse(ok(viewer.get("/api/v1/topology/layout?expand=all")).body);
  EXPECT_GE(all["nodes"].size(), 8U + 2U);

  const auto bad = ok(viewer.get("/api/v1/topology/layout?expand=su:99"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("expand"), std::string::npos);
  EXPECT_EQ(ok(viewer.get("/api/v1/topology/layout?locate=leaf000")).status, 400);
  EXPECT_EQ(ok(viewer.get("/api/v1/topology/layout?colour=red")).status, 400);
  EXPECT_EQ(ok(anonymous().get("/api/v1/topology/layout")).status, 401);
}

// GET /api/v1/topology/links: every link of the export in compact columns, devices placed in SUs and
// super-pods, the `upper` filter, bad input named.
TEST_F(Dashboard, TheLayoutLinksAreTheExportInCompactColumns) {
  start();
  auto viewer = server_->client(kViewerToken);
  EXPECT_EQ(ok(viewer.get("/api/v1/topology/links")).status, 404);
  const auto gen =
      ok(server_->client(kOperatorToken)
             .post("/api/v1/topology/generate",
                   R"({"hosts":8,"npus_per_host":2,"hosts_per_su":4,"spines_per_plane":2,"name":"c"})"));
  ASSERT_EQ(gen.status, 200) << gen.body;
  const auto exported = json::parse(ok(viewer.get("/api/v1/topology/export?format=json")).body);
  const auto answer = ok(viewer.get("/api/v1/topology/links"));
  ASSERT_EQ(answer.status, 200) << answer.body;
  const auto c = json::parse(answer.body);
  EXPECT_LT(answer.body.size() * 2, exported.dump().size()) << "not compact";
  const auto& devices = c["devices"];
  ASSERT_EQ(devices["name"].size(), exported["nodes"].size());
  std::map<std::string, std::int64_t> su_of;
  for (const auto& n : exported["nodes"]) {
    const auto id = n["id"].get<std::size_t>();
    EXPECT_EQ(devices["name"][id], n["name"]);
    EXPECT_EQ(c["tiers"][devices["tier"][id].get<std::size_t>()], n["tier"]);
    EXPECT_EQ(c["states"][devices["state"][id].get<std::size_t>()], n["state"]);
    if (n["tier"] == "host") {
      EXPECT_EQ(devices["su"][id], n["scalable_unit"]) << n.dump();
      EXPECT_EQ(devices["pod"][id], n["superpod"]) << n.dump();
      su_of[n["name"].get<std::string>()] = n["scalable_unit"].get<std::int64_t>();
    }
  }
  const auto& links = c["links"];
  ASSERT_EQ(links["lower"].size(), exported["links"].size());
  EXPECT_EQ(c["total_links"], exported["links"].size());
  for (std::size_t i = 0; i < exported["links"].size(); ++i) {
    const auto& l = exported["links"][i];
    EXPECT_EQ(links["lower"][i], l["source"]);
    EXPECT_EQ(links["upper"][i], l["target"]);
    EXPECT_EQ(c["ports"][links["lower_port"][i].get<std::size_t>()], l["source_port"]);
    EXPECT_EQ(c["ports"][links["upper_port"][i].get<std::size_t>()], l["target_port"]);
    EXPECT_EQ(links["gbps"][i], l["bandwidth_gbps"]);
    EXPECT_EQ(c["states"][links["state"][i].get<std::size_t>()], l["state"]);
    EXPECT_EQ(links["npu"][i], l.value("npu", -1));
    // A leaf is in its hosts' SU.
    const auto lower = exported["nodes"][l["source"].get<std::size_t>()];
    if (lower["tier"] == "host") {
      EXPECT_EQ(devices["su"][l["target"].get<std::size_t>()], su_of.at(lower["name"].get<std::string>()));
    }
  }

  const auto npu_links = json::parse(ok(viewer.get("/api/v1/topology/links?upper=leaf")).body);
  EXPECT_EQ(npu_links["links"]["lower"].size(), 16U) << "8 hosts x 2 NPUs";
  for (const auto& n : npu_links["links"]["npu"]) EXPECT_GE(n.get<int>(), 0);
  const auto both = json::parse(ok(viewer.get("/api/v1/topology/links?upper=leaf,spine")).body);
  EXPECT_EQ(both["links"]["lower"].size(), exported["links"].size());
  for (const auto* bad : {"/api/v1/topology/links?upper=host",
                          "/api/v1/topology/links?upper=", "/api/v1/topology/links?upper=leaf,,spine"}) {
    const auto r = ok(viewer.get(bad));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("upper"), std::string::npos) << r.body;
  }
  EXPECT_EQ(ok(viewer.get("/api/v1/topology/links?format=json")).status, 400);
  EXPECT_EQ(ok(anonymous().get("/api/v1/topology/links")).status, 401);
}

// GET /api/v1/topology/stream: the revision at open, then a message naming the new revision after each
// committed topology write (a device state change here), and nothing while nothing is written; the links
// route answers the same revision with the changed state. Any role may follow it; no token: 401.
TEST_F(Dashboard, TheTopologyStreamNamesEachNewRevision) {
  start();
  WebSocketTestClient before_topology;
  ASSERT_EQ(before_topology.open(server_->port(), "/api/v1/topology/stream", kViewerToken), 101);
  EXPECT_EQ(before_topology.next(), (json{{"kind", "topology"}, {"revision", 0}}));
  auto ops = server_->client(kOperatorToken);
  ASSERT_EQ(ok(ops.post("/api/v1/topology/generate",
                        R"({"hosts":4,"npus_per_host":2,"hosts_per_su":4,"spines_per_plane":1,"name":"s"})"))
                .status,
            200);
  const json generated = before_topology.next();
  EXPECT_EQ(generated.value("kind", ""), "topology") << generated.dump();
  auto viewer = server_->client(kViewerToken);
  const auto first = json::parse(ok(viewer.get("/api/v1/topology/links")).body);
  EXPECT_EQ(generated["revision"], first["revision"]);

  WebSocketTestClient stream;
  ASSERT_EQ(stream.open(server_->port(), "/api/v1/topology/stream", kViewerToken), 101);
  EXPECT_EQ(stream.next(), (json{{"kind", "topology"}, {"revision", first["revision"]}}));
  const auto patched = ok(ops.patch("/api/v1/topology/devices/host001", R"({"state":"isolated"})"));
  ASSERT_EQ(patched.status, 200) << patched.body;
  const json changed = stream.next();
  ASSERT_EQ(changed.value("kind", ""), "topology") << changed.dump();
  EXPECT_GT(changed["revision"].get<std::int64_t>(), first["revision"].get<std::int64_t>());
  const auto second = json::parse(ok(viewer.get("/api/v1/topology/links")).body);
  EXPECT_EQ(changed["revision"], second["revision"]);
  const auto& names = second["devices"]["name"];
  const auto host =
      static_cast<std::size_t>(std::find(names.begin(), names.end(), "host001") - names.begin());
  ASSERT_LT(host, names.size());
  EXPECT_EQ(second["states"][second["devices"]["state"][host].get<std::size_t>()], "isolated");
  // A write that changes nothing stores no revision and sends nothing.
  ASSERT_EQ(ok(ops.patch("/api/v1/topology/devices/host001", R"({"state":"isolated"})")).status, 200);
  EXPECT_TRUE(stream.next(std::chrono::milliseconds(1500)).is_null()) << "a message without a new revision";

  WebSocketTestClient anonymous_stream;
  EXPECT_EQ(anonymous_stream.open(server_->port(), "/api/v1/topology/stream", ""), 401);
}

// In-process: under TLS the cookie is marked Secure (the service is told so by main.cpp).
TEST_F(Dashboard, TheOverlaysCarryTheConfiguredThresholds) {
  start("overlays:\n  util: {warn: 40, bad: 60}\n  optics: {bad_low: -12}\n");
  auto viewer = server_->client(kViewerToken);
  const auto r = ok(viewer.get("/api/v1/overlays"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto items = json::parse(r.body)["items"];
  std::map<std::string, json> by_id;
  std::vector<std::string> order;
  for (const auto& o : items) {
    order.push_back(o["id"]);
    by_id[o["id"]] = o;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"state", "alarms", "util", "pfc", "ecn", "drops", "fec",
                                             "optics", "flaps"}));
  EXPECT_EQ(by_id["util"]["thresholds"], json({{"warn", 40}, {"bad", 60}}));
  EXPECT_EQ(by_id["util"]["unit"], "%");
  EXPECT_EQ(by_id["util"]["grading"], "at_least");
  EXPECT_NE(by_id["util"]["describe"].get<std::string>().find("warning from 40 %, bad from 60 %"),
            std::string::npos)
      << by_id["util"]["describe"];
  // The others keep their defaults; optics keeps the fields not set.
  EXPECT_EQ(by_id["pfc"]["thresholds"], json({{"warn", 1}, {"bad", 1000}}));
  EXPECT_EQ(by_id["optics"]["thresholds"],
            json({{"warn_low", -8}, {"bad_low", -12}, {"warn_high", 3}, {"bad_high", 4}}));
  EXPECT_TRUE(by_id["state"]["thresholds"].is_null());
  EXPECT_EQ(by_id["alarms"]["kind"], "alarms");
  // Read access like every other read; a query parameter is refused by name.
  EXPECT_EQ(ok(anonymous().get("/api/v1/overlays")).status, 401);
  const auto bad = ok(viewer.get("/api/v1/overlays?id=util"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"id\""), std::string::npos) << bad.body;
}

// Generates a 4-host topology (one SU) and answers the compact NPU links (upper=leaf).
json npu_links(AggregatorProcess& server) {
  auto ops = server.client(kOperatorToken);
  EXPECT_EQ(ok(ops.post("/api/v1/topology/generate",
                        R"({"hosts":4,"npus_per_host":2,"hosts_per_su":4,"spines_per_plane":1,"name":"g"})"))
                .status,
            200);
  return json::parse(ok(server.client(kViewerToken).get("/api/v1/topology/links?upper=leaf")).body);
}

// The index of `host`'s link of NPU `npu` in a compact links answer, and its host port's entity.
std::pair<std::size_t, std::string> link_of(const json& links, const std::string& host, int npu) {
  const auto& names = links["devices"]["name"];
  for (std::size_t i = 0; i < links["links"]["lower"].size(); ++i) {
    if (names[links["links"]["lower"][i].get<std::size_t>()] == host && links["links"]["npu"][i] == npu) {
      return {i, host + "/" +
                     links["ports"][links["links"]["lower_port"][i].get<std::size_t>()].get<std::string>()};
    }
  }
  ADD_FAILURE() << "no link of " << host << " NPU " << npu;
  return {0, ""};
}

void push_kpi(AggregatorProcess& server, const std::string& entity, const std::string& metric,
              std::int64_t ts, double value) {
  const auto r = ok(
      server.client(kOperatorToken)
          .post("/api/v1/kpis",
                json{{"samples", json::array({json{
                                     {"entity", entity}, {"metric", metric}, {"ts", ts}, {"value", value}}})}}
                    .dump()));
  ASSERT_EQ(r.status, 200) << r.body;
}

// GET /api/v1/overlays/{id}/grades: the aggregator folds and grades the KPIs; links in the order of
// /topology/links with the same `upper`, of its revision; devices and groups their worst link; at a past
// time the readings then; bad input named.
TEST_F(Dashboard, TheAggregatorGradesTheMetricOverlays) {
  start();
  const auto links = npu_links(*server_);
  const auto [index, entity] = link_of(links, "host002", 1);
  const auto now = unix_now_ms();
  push_kpi(*server_, entity, "pfc_prio3_rx_pause_per_s", now - 10'000, 4000);
  push_kpi(*server_, entity, "pfc_prio5_tx_pause_per_s", now - 10'000, 1000);
  auto viewer = server_->client(kViewerToken);
  const auto r = ok(viewer.get("/api/v1/overlays/pfc/grades?upper=leaf"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto g = json::parse(r.body);
  EXPECT_EQ(g["revision"], links["revision"]);
  EXPECT_EQ(g["overlay"], "pfc");
  EXPECT_EQ(g["unit"], "/s");
  ASSERT_EQ(g["links"]["grade"].size(), links["links"]["lower"].size());
  for (std::size_t i = 0; i < g["links"]["grade"].size(); ++i) {
    if (i == index) continue;
    EXPECT_EQ(g["links"]["grade"][i], -1) << i;
    EXPECT_TRUE(g["links"]["value"][i].is_null()) << i;
  }
  EXPECT_EQ(g["links"]["grade"][index], 2);  // 5,000 pause frames/s: bad from 1,000
  EXPECT_EQ(g["links"]["value"][index], 5000.0);
  const auto& names = links["devices"]["name"];
  const auto host =
      static_cast<std::size_t>(std::find(names.begin(), names.end(), "host002") - names.begin());
  EXPECT_EQ(g["devices"]["grade"][host], 2);
  EXPECT_EQ(g["groups"]["id"][0], "su:0");
  EXPECT_EQ(g["groups"]["grade"][0], 2);
  // Other overlays see nothing of it; a past time (before the samples) has no data.
  const auto util = json::parse(ok(viewer.get("/api/v1/overlays/util/grades?upper=leaf")).body);
  EXPECT_EQ(util["links"]["grade"][index], -1);
  const auto past = json::parse(
      ok(viewer.get("/api/v1/overlays/pfc/grades?upper=leaf&at=" + std::to_string(now - 60'000))).body);
  EXPECT_EQ(past["links"]["grade"][index], -1);
  EXPECT_EQ(past["at_ms"], now - 60'000);
  // Every link (no upper): more links, the same grade for the NPU link at its place in that order.
  const auto all = json::parse(ok(viewer.get("/api/v1/overlays/pfc/grades")).body);
  EXPECT_GT(all["links"]["grade"].size(), g["links"]["grade"].size());
  // Bad input named; not a metric overlay: 404; no token: 401.
  EXPECT_EQ(ok(viewer.get("/api/v1/overlays/state/grades")).status, 404);
  EXPECT_EQ(ok(viewer.get("/api/v1/overlays/nope/grades")).status, 404);
  for (const auto* q : {"upper=host", "max_age_s=0", "at=yesterday", "metric=x"}) {
    const auto bad = ok(viewer.get(std::string("/api/v1/overlays/pfc/grades?") + q));
    EXPECT_EQ(bad.status, 400) << q;
    EXPECT_NE(bad.body.find(std::string(q).substr(0, std::string(q).find('='))), std::string::npos)
        << bad.body;
  }
  EXPECT_EQ(ok(anonymous().get("/api/v1/overlays/pfc/grades")).status, 401);
}

// GET /api/v1/overlays/summary: each layout group's worst active alarm (made by the real brain from a log
// line the shipped nic-link-down pattern matches) and the 95th percentile of its links' utilisation (from
// a pushed KPI); bad input named.
TEST_F(Dashboard, TheSummaryNamesEachGroupsWorstAlarmAndItsUtilisation) {
  start("brain:\n  patterns_dir: \"" + source_path("patterns").string() + "\"\n");
  const auto links = npu_links(*server_);
  const auto [index, entity] = link_of(links, "host002", 1);
  const double gbps = links["links"]["gbps"][index];
  const auto now = unix_now_ms();
  push_kpi(*server_, entity, "tx_bytes_per_s", now - 5'000, gbps * 1e9 / 8 * 0.42);  // 42 % of capacity
  auto ops = server_->client(kOperatorToken);
  const json line = {{"entity", "host001"},
                     {"type", "kernel"},
                     {"severity", "error"},
                     {"ts", now - 2'000},
                     {"message", "mlx5_core 0000:3b:00.0 eth0: Link down"}};
  ASSERT_EQ(ok(ops.post("/api/v1/events", json{{"events", json::array({line})}}.dump())).status, 200);
  auto viewer = server_->client(kViewerToken);
  json alarms;
  for (int i = 0; i < 200; ++i) {
    alarms = json::parse(ok(viewer.get("/api/v1/alarms?state=raised")).body);
    if (!alarms["items"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(alarms["items"].size(), 1U) << alarms.dump();
  EXPECT_EQ(alarms["items"][0]["entity"], "host001/eth0");

  const auto r = ok(viewer.get("/api/v1/overlays/summary"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto s = json::parse(r.body);
  EXPECT_EQ(s["revision"], links["revision"]);
  EXPECT_EQ(s["util_thresholds"]["bad"], 90.0);
  const auto& ids = s["groups"]["id"];
  const auto su0 = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), "su:0") - ids.begin());
  const auto spines = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), "spines:0") - ids.begin());
  ASSERT_LT(su0, ids.size());
  ASSERT_LT(spines, ids.size());
  EXPECT_EQ(s["groups"]["worst_alarm"][su0], alarms["items"][0]["severity"]);
  EXPECT_EQ(s["groups"]["active_alarms"][su0], 1);
  EXPECT_EQ(s["groups"]["util_p95"][su0], 42.0);
  EXPECT_EQ(s["groups"]["util_grade"][su0], 0);
  EXPECT_EQ(s["groups"]["util_links"][su0], 1);
  EXPECT_TRUE(s["groups"]["worst_alarm"][spines].is_null());
  EXPECT_EQ(s["groups"]["active_alarms"][spines], 0);
  EXPECT_TRUE(s["groups"]["util_p95"][spines].is_null());
  EXPECT_EQ(s["groups"]["util_grade"][spines], -1);
  const auto bad = ok(viewer.get("/api/v1/overlays/summary?at=1"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"at\""), std::string::npos) << bad.body;
  EXPECT_EQ(ok(anonymous().get("/api/v1/overlays/summary")).status, 401);
}

// GET /api/v1/overlays/{id}/stream: the groups and the full grade set at open, then a delta naming only
// the link whose KPI changed its grade; a KPI write that changes no grade or value sends nothing.
TEST_F(Dashboard, TheGradeStreamSendsOnlyWhatAKpiChanged) {
  start();
  const auto links = npu_links(*server_);
  const auto [index, entity] = link_of(links, "host003", 0);
  const auto now = unix_now_ms();
  push_kpi(*server_, entity, "symbol_error_per_s", now - 20'000, 0);
  WebSocketTestClient stream;
  ASSERT_EQ(stream.open(server_->port(), "/api/v1/overlays/fec/stream?upper=leaf", kViewerToken), 101);
  const json groups = stream.next();
  ASSERT_EQ(groups.value("kind", ""), "groups") << groups.dump();
  EXPECT_EQ(groups["revision"], links["revision"]);
  const json full = stream.next();
  ASSERT_EQ(full.value("kind", ""), "grades") << full.dump();
  ASSERT_EQ(full["links"]["grade"].size(), links["links"]["lower"].size());
  EXPECT_EQ(full["links"]["grade"][index], 0);
  // 20 symbol errors/s: bad (above 1/s).
  push_kpi(*server_, entity, "symbol_error_per_s", now - 10'000, 20);
  const json delta = stream.next();
  ASSERT_EQ(delta.value("kind", ""), "changes") << delta.dump();
  EXPECT_EQ(delta["links"]["index"], json::array({index}));
  EXPECT_EQ(delta["links"]["grade"], json::array({2}));
  EXPECT_EQ(delta["links"]["value"], json::array({20.0}));
  EXPECT_EQ(delta["groups"]["id"], json::array({"su:0"}));
  // The REST answer agrees.
  const auto now_graded =
      json::parse(ok(server_->client(kViewerToken).get("/api/v1/overlays/fec/grades?upper=leaf")).body);
  EXPECT_EQ(now_graded["links"]["grade"][index], 2);
  // The same reading again (a new sample, the same value), and another overlay's metric: nothing to send.
  push_kpi(*server_, entity, "symbol_error_per_s", now - 5'000, 20);
  push_kpi(*server_, entity, "rx_bytes_per_s", now - 5'000, 1e6);
  EXPECT_TRUE(stream.next(std::chrono::milliseconds(2000)).is_null()) << "a message without a change";

  // Not a metric overlay: the session is closed at once (1008), nothing sent. No token: 401.
  WebSocketTestClient wrong;
  ASSERT_EQ(wrong.open(server_->port(), "/api/v1/overlays/state/stream", kViewerToken), 101);
  EXPECT_TRUE(wrong.next(std::chrono::milliseconds(2000)).is_null());
  EXPECT_EQ(wrong.close_reason().first, 1008);
  // The server lives on (a close before the handshake completed waits for it).
  EXPECT_EQ(ok(server_->client(kViewerToken).get("/api/v1/overlays")).status, 200);
  WebSocketTestClient anonymous_stream;
  EXPECT_EQ(anonymous_stream.open(server_->port(), "/api/v1/overlays/fec/stream", ""), 401);
}

// A stream message's kind, or how the session was closed when none came.
std::string kind_of(const json& m, const WebSocketTestClient& stream) {
  if (m.is_object()) return m.value("kind", "");
  const auto [code, reason] = stream.close_reason();
  return "none (closed " + std::to_string(code) + " " + reason + ")";
}

// A full grade set larger than a session's whole byte bound (websocket_queue_bytes) is a starting state:
// the stream opens with it, a change follows behind it, and a new topology revision's set is sent too,
// where an update that large would close the session as a slow consumer (1013).
TEST_F(Dashboard, AGradeSetLargerThanTheSessionQueueStillOpensTheStream) {
  start("http:\n  websocket_queue_bytes: 1024\n");
  auto ops = server_->client(kOperatorToken);
  ASSERT_EQ(
      ok(ops.post("/api/v1/topology/generate",
                  R"({"hosts":64,"npus_per_host":8,"hosts_per_su":32,"spines_per_plane":2,"name":"big"})"))
          .status,
      200);
  WebSocketTestClient stream;
  ASSERT_EQ(stream.open(server_->port(), "/api/v1/overlays/fec/stream", kViewerToken), 101);
  const json groups = stream.next();
  ASSERT_EQ(kind_of(groups, stream), "groups");
  const json full = stream.next();
  ASSERT_EQ(kind_of(full, stream), "grades");
  EXPECT_GT(full.dump().size(), 1024U * 4) << "the set is not larger than the session's byte bound";
  push_kpi(*server_, "host010/eth3", "symbol_error_per_s", unix_now_ms() - 1'000, 20);
  const json delta = stream.next();
  ASSERT_EQ(kind_of(delta, stream), "changes");
  EXPECT_EQ(delta["links"]["grade"], json::array({2}));
  // A new revision: its groups and its full set again.
  ASSERT_EQ(ok(ops.patch("/api/v1/topology/devices/host001", R"({"state":"isolated"})")).status, 200);
  const json regrouped = stream.next();
  ASSERT_EQ(kind_of(regrouped, stream), "groups");
  EXPECT_GT(regrouped["revision"].get<std::int64_t>(), full["revision"].get<std::int64_t>());
  const json again = stream.next();
  ASSERT_EQ(kind_of(again, stream), "grades");
  EXPECT_EQ(again["revision"], regrouped["revision"]);
}

// The stream's max_age_s: each session is graded with its own max age (a reading older than a short one is
// no data there while the default grades it), a short one's readings age out without a write, and a bad
// value closes the session with 1008 naming it.
TEST_F(Dashboard, EachGradeStreamGradesWithItsOwnMaxAge) {
  start();
  const auto links = npu_links(*server_);
  const auto [old_index, old_entity] = link_of(links, "host001", 0);
  const auto [new_index, new_entity] = link_of(links, "host002", 0);
  const auto now = unix_now_ms();
  push_kpi(*server_, old_entity, "symbol_error_per_s", now - 20'000, 20);
  push_kpi(*server_, new_entity, "symbol_error_per_s", now - 1'000, 20);
  WebSocketTestClient standard;
  ASSERT_EQ(standard.open(server_->port(), "/api/v1/overlays/fec/stream?upper=leaf", kViewerToken), 101);
  ASSERT_EQ(kind_of(standard.next(), standard), "groups");
  const json full = standard.next();
  ASSERT_EQ(kind_of(full, standard), "grades") << full.dump();
  EXPECT_EQ(full["links"]["grade"][old_index], 2);
  EXPECT_EQ(full["links"]["grade"][new_index], 2);
  WebSocketTestClient brief;
  ASSERT_EQ(brief.open(server_->port(), "/api/v1/overlays/fec/stream?upper=leaf&max_age_s=3", kViewerToken),
            101);
  ASSERT_EQ(kind_of(brief.next(), brief), "groups");
  const json short_full = brief.next();
  ASSERT_EQ(kind_of(short_full, brief), "grades") << short_full.dump();
  EXPECT_EQ(short_full["links"]["grade"][old_index], -1) << "20 s old: older than 3 s";
  EXPECT_TRUE(short_full["links"]["value"][old_index].is_null());
  EXPECT_EQ(short_full["links"]["grade"][new_index], 2);
  EXPECT_GE(short_full["since_ms"].get<std::int64_t>(), now - 3'000);
  // Without a write, the 1 s old reading ages out of 3 s: regraded within the max age, not 30 s.
  const json aged = brief.next();
  ASSERT_EQ(kind_of(aged, brief), "changes") << aged.dump();
  EXPECT_EQ(aged["links"]["index"], json::array({new_index}));
  EXPECT_EQ(aged["links"]["grade"], json::array({-1}));
  // A new reading reaches both, each against the grades of its own max age.
  push_kpi(*server_, old_entity, "symbol_error_per_s", unix_now_ms(), 0);
  const json on_standard = standard.next();
  ASSERT_EQ(kind_of(on_standard, standard), "changes") << on_standard.dump();
  EXPECT_EQ(on_standard["links"]["index"], json::array({old_index}));
  EXPECT_EQ(on_standard["links"]["grade"], json::array({0}));
  const json on_brief = brief.next();
  ASSERT_EQ(kind_of(on_brief, brief), "changes") << on_brief.dump();
  EXPECT_EQ(on_brief["links"]["index"], json::array({old_index}));
  EXPECT_EQ(on_brief["links"]["grade"], json::array({0}));
  // Bad values: the REST route's bounds, the session closed with 1008 naming the parameter.
  for (const auto* q : {"max_age_s=0", "max_age_s=604801", "max_age_s=ten", "max_age_s=5s"}) {
    WebSocketTestClient bad;
    ASSERT_EQ(bad.open(server_->port(), std::string("/api/v1/overlays/fec/stream?") + q, kViewerToken), 101);
    EXPECT_TRUE(bad.next(std::chrono::milliseconds(2000)).is_null()) << q;
    const auto [code, reason] = bad.close_reason();
    EXPECT_EQ(code, 1008) << q;
    EXPECT_EQ(reason, "max_age_s: must be an integer from 1 to 604800") << q;
  }
  EXPECT_EQ(ok(server_->client(kViewerToken).get("/api/v1/overlays/fec/grades?max_age_s=604801")).status,
            400);
}

TEST(DashboardOverlays, ABadOverlaySectionStopsTheAggregator) {
  TempDir dir;
  const auto bin = build_path("aggregator/hsns-aggregator").string();
  std::ofstream(dir.path() / "a.yaml") << "overlays:\n  pfc: {warn: 2000}\n";
  auto r = run_command({bin, "check-config", "--config", (dir.path() / "a.yaml").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.output.find("overlays.pfc.warn (2,000) and overlays.pfc.bad (1,000)"), std::string::npos)
      << r.output;
  std::ofstream(dir.path() / "b.yaml") << "overlays:\n  util: {warn: 50, worse: 60}\n";
  r = run_command({bin, "check-config", "--config", (dir.path() / "b.yaml").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.output.find("unknown key 'overlays.util.worse'"), std::string::npos) << r.output;
}

TEST(DashboardSessions, TheCookieIsSecureUnderTls) {
  Metrics metrics;
  auto auth =
      TokenAuthenticator::load_yaml("tokens: [{name: ops, role: operator, token: ops-token-0123456789}]");
  ASSERT_TRUE(auth.has_value()) << auth.error();
  AggregatorService service(metrics, std::move(*auth), [] { return std::optional<std::string>(); });
  service.configure_sessions(
      http::SessionLimits{.ttl = std::chrono::seconds(60), .max_sessions = 4, .auth_failures = {}}, true);
  http::Request req{http::bhttp::verb::post, "/api/v1/session", 11};
  req.set(http::bhttp::field::content_type, "application/json");
  req.set(http::bhttp::field::host, "agg.example.com");
  req.body() = R"({"token":"ops-token-0123456789"})";
  req.prepare_payload();
  std::optional<http::Response> answer;
  service.handle(std::move(req), [&](http::Response res) { answer = std::move(res); });
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->result_int(), 201U);
  const auto cookie = std::string((*answer)[http::bhttp::field::set_cookie]);
  EXPECT_NE(cookie.find("; Secure"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Max-Age=60"), std::string::npos) << cookie;
}

}  // namespace
}  // namespace hsns::testing
