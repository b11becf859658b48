// The security suite of issue 31 against the real hsns-aggregator over loopback, one test per class of
// defect the outside attack suite found: memory bounded by bytes before decoding (a request that does not
// fit the budget is refused before its body is read; a document that would decode too large is refused
// before it is built), data time clamped to a window around the receive time (a sample or a line dated
// in year 9000 moves no clock and blocks no series), host-bound agent tokens held to their host by the
// entities in the body, fair shares of the TCP syslog slots (per source, idle senders evicted, half-sent
// frames cut; failed logins throttled per address; browser sessions and WebSocket streams shared per
// token), and aggregates that stay numbers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "hsns/time.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/raw_connection.h"
#include "support/shell.h"
#include "support/temp_dir.h"
#include "support/websocket_client.h"

namespace hsns::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The aggregator's peak resident set (VmHWM) in bytes.
std::size_t peak_rss(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  }
  return 0;
}

class Security : public ::testing::Test {
 protected:
  void start(const std::string& config = "{}\n") {
    aggregator_.set_config(config);
    aggregator_.start();
  }

  // Logs in with `token` (POST /api/v1/session) and answers the session cookie's value.
  std::string login_cookie(const char* token) {
    auto r = aggregator_.client("").post("/api/v1/session", json{{"token", token}}.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : r.error());
    std::smatch m;
    const std::string cookie = r ? r->header("Set-Cookie") : "";
    EXPECT_TRUE(std::regex_search(cookie, m, std::regex("hsns_session=([^;]+)"))) << cookie;
    return m.size() > 1 ? m[1].str() : std::string();
  }

  bool session_alive(const std::string& cookie) {
    auto r = aggregator_.client("").request("GET", "/api/v1/session", "", "",
                                            {{"Cookie", "hsns_session=" + cookie}});
    return r && r->status == 200 && json::parse(r->body)["authenticated"] == true;
  }

  double metric(const std::string& selector) {
    auto r = aggregator_.client().get("/metrics");
    EXPECT_TRUE(r && r->status == 200);
    return r ? metric_value(r->body, selector).value_or(-1) : -1;
  }

  TempDir dir_{"hsns-security"};
  AggregatorProcess aggregator_{dir_.path()};
};

// Class 1: two concurrent 64 MiB reports ended the aggregator with bad_alloc. A body whose cost (itself
// and what may be decoded from it) does not fit the budget is answered 503 before one byte of it is read.
TEST_F(Security, ARequestBeyondTheMemoryBudgetIsRefusedBeforeItsBodyIsRead) {
  start("ingest:\n  memory_budget_bytes: 67108864\n");
  RawConnection c(aggregator_.port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send(std::string("POST /api/v1/agents/node-1/reports HTTP/1.1\r\nHost: x\r\n") +
                     "Authorization: Bearer " + kAgentToken +
                     "\r\nContent-Type: application/cbor\r\nContent-Length: 33554432\r\n\r\n"));
  bool closed = false;
  const auto answer = c.read_until_close(5s, &closed);  // no body sent: only a refusal can come back
  EXPECT_NE(answer.find("HTTP/1.1 503"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Retry-After: 1"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
  EXPECT_EQ(metric("hsns_memory_budget_refusals_total"), 1);
  EXPECT_EQ(metric("hsns_memory_budget_used_bytes"), 0);
  EXPECT_EQ(metric("hsns_memory_budget_limit_bytes"), 67108864);
  // Small requests never draw on the budget.
  auto health = aggregator_.client("").get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Class 1: one 58 MB report was refused with 400 only after costing +1.6 GB. A document of ten million
// one-byte CBOR values (10 MB) would decode to ~320 MB: refused with 413 while it is checked, before
// anything is built.
TEST_F(Security, ADocumentThatWouldDecodeTooLargeIsRefusedBeforeItIsBuilt) {
  start();
  const std::size_t values = 10'000'000;
  std::string cbor =
      "\xa1\x65"
      "flows"
      "\x9a";  // {"flows": [ 4-byte length
  for (int shift = 24; shift >= 0; shift -= 8) cbor.push_back(static_cast<char>((values >> shift) & 0xff));
  cbor.append(values, '\0');
  const auto before = peak_rss(aggregator_.pid());
  auto r = aggregator_.client(kAgentToken)
               .request("POST", "/api/v1/agents/node-1/reports", cbor, "application/cbor");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->status, 413) << r->body;
  EXPECT_NE(r->body.find("decoded"), std::string::npos) << r->body;
  const auto grown = peak_rss(aggregator_.pid()) - before;
  // The body itself (10 MB, held by the parser and the request) and the sanitizer's shadow of it.
  EXPECT_LT(grown, std::size_t{200} << 20) << "peak RSS grew by " << (grown >> 20) << " MiB";
}

// Class 2: one KPI sample dated year 9000 made every later real sample of its series "rejected".
TEST_F(Security, AKpiSampleDatedFarInTheFutureIsRefusedAndBlocksNothing) {
  start();
  const auto year_9000 = std::int64_t{221'845'392'000'000};
  const auto push = [&](std::int64_t ts) {
    auto r = aggregator_.client(kAgentToken)
                 .post("/api/v1/kpis", json{{"samples",
                                             {{{"entity", "leaf01/Ethernet1"},
                                               {"metric", "rx_power_dbm"},
                                               {"ts", ts},
                                               {"value", -3.0}}}}}
                                           .dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : r.error());
    return r && r->status == 200 ? json::parse(r->body) : json::object();
  };
  EXPECT_EQ(push(year_9000)["rejected"], 1);
  const auto now = push(unix_now_ms());
  EXPECT_EQ(now["accepted"], 1);
  EXPECT_EQ(now["rejected"], 0);
  EXPECT_EQ(metric(R"(hsns_ingest_data_time_outside_window_total{source="kpis",direction="future"})"), 1);
  EXPECT_EQ(metric(R"(hsns_kpi_samples_total{source="push",result="future"})"), 1);
}

// Class 2: one unauthenticated syslog line dated 9999-12-31 moved the alarm engine's clock. The line is
// kept with its receive time as its time.
TEST_F(Security, ASyslogLineDatedFarInTheFutureTakesItsReceiveTime) {
  const int port = free_loopback_port(SOCK_STREAM);
  start("syslog:\n  tcp_listen: \"127.0.0.1:" + std::to_string(port) + "\"\n");
  RawConnection c(port);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("<14>1 9999-12-31T23:59:59Z ghost01 app - - - from the far future\n"));
  json found;
  ASSERT_TRUE(wait_for(
      [&] {
        auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?limit=10");
        if (!r || r->status != 200) return false;
        const auto page = json::parse(r->body);
        for (const auto& item : page["items"]) {
          if (item["message"] == "from the far future") found = item;
        }
        return !found.is_null();
      },
      10s));
  EXPECT_EQ(found["timestamp"], found["received_at"]);
  EXPECT_EQ(metric(R"(hsns_ingest_data_time_outside_window_total{source="syslog",direction="future"})"), 1);
}

// Class 3: an agent token bound to one host spoke for others on POST /api/v1/kpis, /events and
// /topology/lldp. Each refuses the whole body with 403 naming every foreign entity, and stores nothing.
TEST_F(Security, AHostBoundTokenSpeaksOnlyForItsHostInEveryBody) {
  start();
  auto bound = aggregator_.client(kBoundAgentToken);
  const std::string own = std::string(kBoundAgentHost) + "/eth0";
  const auto refused = [](const tl::expected<HttpClient::Response, std::string>& r,
                          const std::string& field) {
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->status, 403) << r->body;
    const auto body = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(body.contains("invalid_params")) << r->body;
    ASSERT_EQ(body["invalid_params"].size(), 1U) << r->body;
    EXPECT_EQ(body["invalid_params"][0]["name"], field);
  };
  const auto sample = [&](const std::string& entity) {
    return json{{"entity", entity}, {"metric", "rx_power_dbm"}, {"ts", unix_now_ms()}, {"value", -3.0}};
  };
  refused(bound.post("/api/v1/kpis", json{{"samples", {sample(own), sample("node-2/eth0")}}}.dump()),
          "samples[1].entity");
  auto series = aggregator_.client(kViewerToken).get("/api/v1/kpis/series?entity=" + own);
  ASSERT_TRUE(series && series->status == 200);
  EXPECT_TRUE(json::parse(series->body)["items"].empty()) << "a refused batch stored a sample";
  auto ok = bound.post("/api/v1/kpis", json{{"samples", {sample(own)}}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;

  const auto event = [](const std::string& entity) {
    return json{{"entity", entity}, {"type", "link_flap"}, {"severity", "warning"}, {"message", "flap"}};
  };
  refused(bound.post("/api/v1/events", json{{"events", {event("node-2/eth0"), event(own)}}}.dump()),
          "events[0].entity");
  ok = bound.post("/api/v1/events", json{{"events", {event(own)}}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;

  refused(bound.post("/api/v1/topology/lldp", json{{"observations",
                                                    {{{"host", "node-2"},
                                                      {"port", "eth0"},
                                                      {"neighbor_system", "leaf01"},
                                                      {"neighbor_port", "Ethernet1"}}}}}
                                                  .dump()),
          "observations[0].host");
  // An unbound agent token keeps acting for every host.
  ok =
      aggregator_.client(kAgentToken).post("/api/v1/kpis", json{{"samples", {sample("node-2/eth0")}}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

// Class 4: 64 half-sent TCP syslog frames held every connection slot for 300 s. Slots are shared: a
// per-source cap, a deadline for a frame once begun, and a newcomer at the cap takes the slot of the
// sender idle the longest.
TEST_F(Security, TcpSyslogSlotsAreSharedFairly) {
  const int port = free_loopback_port(SOCK_STREAM);
  start("syslog:\n  tcp_listen: \"127.0.0.1:" + std::to_string(port) +
        "\"\n  max_connections: 4\n  max_connections_per_source: 2\n  tcp_frame_timeout_ms: 500\n");
  const auto closed_soon = [](RawConnection& c, std::chrono::milliseconds within) {
    bool closed = false;
    c.read_until_close(within, &closed);
    return closed;
  };
  // Per source: a third connection from 127.0.0.1 is closed at once; the first two stay.
  RawConnection a1(port, "127.0.0.1");
  RawConnection a2(port, "127.0.0.1");
  ASSERT_TRUE(a1.connected() && a2.connected());
  RawConnection a3(port, "127.0.0.1");
  ASSERT_TRUE(a3.connected());
  EXPECT_TRUE(closed_soon(a3, 3s));
  EXPECT_FALSE(closed_soon(a1, 200ms));
  EXPECT_EQ(metric(R"(hsns_syslog_dropped_total{reason="source_connection_limit"})"), 1);

  // A frame begun and not finished is cut at the frame deadline, however slowly its bytes keep coming.
  RawConnection slow(port, "127.0.0.2");
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.send("100 <14>1 - "));
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(150ms);
    slow.send("x");
  }
  EXPECT_TRUE(closed_soon(slow, 3s));
  EXPECT_GE(metric(R"(hsns_syslog_dropped_total{reason="frame_timeout"})"), 1);

  // At the cap (4: a1, a2 and two more), a newcomer takes the slot of the longest idle sender.
  RawConnection b1(port, "127.0.0.3");
  RawConnection b2(port, "127.0.0.3");
  ASSERT_TRUE(b1.connected() && b2.connected());
  std::this_thread::sleep_for(1200ms);  // every one idle for more than the 1 s an eviction needs
  RawConnection newcomer(port, "127.0.0.4");
  ASSERT_TRUE(newcomer.connected());
  ASSERT_TRUE(newcomer.send("<14>1 - ghost02 app - - - a newcomer is heard\n"));
  ASSERT_TRUE(
      wait_for([&] { return metric(R"(hsns_syslog_dropped_total{reason="idle_evicted"})") >= 1; }, 5s));
  EXPECT_FALSE(closed_soon(newcomer, 300ms));
  ASSERT_TRUE(wait_for(
      [&] {
        auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?limit=10");
        return r && r->status == 200 && r->body.find("a newcomer is heard") != std::string::npos;
      },
      5s));
}

// Class 4: 1,500 wrong logins in 0.1 s all got 401. Failed authentications are throttled per client
// address: beyond the burst the address gets 429 with Retry-After (even with a good token, which it is not
// allowed to try), and every other address logs in as before.
TEST_F(Security, FailedLoginsAreThrottledPerAddress) {
  start("http:\n  auth_failure_burst: 5\n  auth_failure_refill_ms: 60000\n");
  const auto login = [&](const std::string& token, const std::string& source) {
    RawConnection c(aggregator_.port(), source);
    EXPECT_TRUE(c.connected());
    const std::string body = json{{"token", token}}.dump();
    EXPECT_TRUE(
        c.send("POST /api/v1/session HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               "Content-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body));
    return c.read_until_close(5s);
  };
  const auto status_of = [](const std::string& answer) { return answer.substr(9, 3); };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(status_of(login("wrong-token-0123456789", "127.0.0.1")), "401");
  const auto throttled = login("wrong-token-0123456789", "127.0.0.1");
  EXPECT_EQ(status_of(throttled), "429") << throttled;
  EXPECT_NE(throttled.find("Retry-After: "), std::string::npos) << throttled;
  EXPECT_EQ(status_of(login(kOperatorToken, "127.0.0.1")), "429");
  // The bearer token of any route from that address waits too.
  auto bearer = aggregator_.client("wrong-token-0123456789").get("/api/v1/hosts");
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 429);
  // Another address is not affected.
  EXPECT_EQ(status_of(login("wrong-token-0123456789", "127.0.0.2")), "401");
  EXPECT_EQ(status_of(login(kOperatorToken, "127.0.0.2")), "201");
  EXPECT_GE(metric(R"(hsns_http_auth_failures_total{reason="throttled"})"), 3);
}

// Class 4: with max_sessions 50, fifty viewer logins ended the operator's session. A full table is
// relieved by the token holding the most sessions; a token may also be held to sessions_per_user.
TEST_F(Security, ViewerLoginsNeverEndTheOperatorsSession) {
  start("http:\n  max_sessions: 5\n");
  const auto operator_session = login_cookie(kOperatorToken);
  std::vector<std::string> viewer(50);
  for (auto& cookie : viewer) cookie = login_cookie(kViewerToken);
  EXPECT_TRUE(session_alive(operator_session));
  EXPECT_TRUE(session_alive(viewer[49]));
  EXPECT_TRUE(session_alive(viewer[46]));
  EXPECT_FALSE(session_alive(viewer[45]));  // the viewer's oldest went, four of five places are its own
  const auto scheduler_session = login_cookie(kSchedulerToken);
  EXPECT_TRUE(session_alive(operator_session));
  EXPECT_TRUE(session_alive(scheduler_session));
  EXPECT_FALSE(session_alive(viewer[46]));  // the viewer, holding the most, made room
}

TEST_F(Security, ATokenMayBeHeldToItsOwnShareOfSessions) {
  start("http:\n  sessions_per_user: 2\n");
  const auto first = login_cookie(kViewerToken);
  const auto second = login_cookie(kViewerToken);
  const auto third = login_cookie(kViewerToken);
  EXPECT_FALSE(session_alive(first));
  EXPECT_TRUE(session_alive(second));
  EXPECT_TRUE(session_alive(third));
}

// Class 4: one viewer token opened 192 WebSocket sessions and /healthz and the operator got 503. One token
// holds at most websocket_streams_per_user streams; another token still opens its own.
TEST_F(Security, OneTokenCannotHoldEveryStream) {
  start("http:\n  websocket_streams_per_user: 2\n");
  std::vector<std::unique_ptr<WebSocketTestClient>> streams;
  for (int i = 0; i < 2; ++i) {
    streams.push_back(std::make_unique<WebSocketTestClient>());
    EXPECT_EQ(streams.back()->open(aggregator_.port(), "/api/v1/alarms/stream", kViewerToken), 101);
  }
  WebSocketTestClient third;
  EXPECT_EQ(third.open(aggregator_.port(), "/api/v1/alarms/stream", kViewerToken), 429);
  WebSocketTestClient operators;
  EXPECT_EQ(operators.open(aggregator_.port(), "/api/v1/alarms/stream", kOperatorToken), 101);
  auto health = aggregator_.client("").get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  // A stream that ends gives its slot back.
  streams.pop_back();
  std::unique_ptr<WebSocketTestClient> again;
  EXPECT_TRUE(wait_for(
      [&] {
        again = std::make_unique<WebSocketTestClient>();
        return again->open(aggregator_.port(), "/api/v1/alarms/stream", kViewerToken) == 101;
      },
      5s));
}

// Class 7: three samples of 1.7e308 in one minute made the minute's average null. Values are bounded so
// that no bucket's sum overflows.
TEST_F(Security, KpiValuesBeyondTheDocumentedRangeAreRefusedByName) {
  start();
  auto r = aggregator_.client(kAgentToken)
               .post("/api/v1/kpis", json{{"samples",
                                           {{{"entity", "leaf01/Ethernet1"},
                                             {"metric", "rx_bytes_per_s"},
                                             {"ts", unix_now_ms()},
                                             {"value", 1.7e308}}}}}
                                         .dump());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("samples[0].value"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace hsns::testing
