// Alarms end to end over loopback with real peers:
// - the aggregator's HTTP server and service in this process (its library, hsns_aggregator_core) with the
//   alarm service on a real SQLite file, fed by a real PatternMatcher over the shipped pattern library
//   (SONiC link down/up lines): REST list, get with history, acknowledgement (one and a group, roles),
//   silences, bad input answered 400 naming the field, the WebSocket stream read by a real Beast client,
//   /metrics, and Debian's prometheus-alertmanager receiving the pushed alerts (checked through its API:
//   the raised alarm arrives, the resolved and the silenced ones end);
// - then the real hsns-aggregator binary on the same database: the alarms, acknowledgement and silence
//   survived the restart, its WebSocket route upgrades, and deleting the silence (operator) unsuppresses
//   the alarm, which the binary pushes to Alertmanager again.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/alarms/routes.h"
#include "brain/alarm_service.h"
#include "brain/alertmanager_push.h"
#include "brain/patterns.h"
#include "hsns/http_client.h"
#include "hsns/time.h"
#include "http/auth.h"
#include "http/server.h"
#include "http/service.h"
#include "metrics.h"
#include "store/factory.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/websocket_client.h"

namespace hsns {
namespace {

namespace net = boost::asio;
using json = nlohmann::json;
using namespace std::chrono_literals;

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 20s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return pred();
}

int free_port() {
  net::io_context ioc;
  net::ip::tcp::acceptor a(ioc, {net::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

// prometheus-alertmanager on loopback with its own configuration and storage in a temporary directory
// (no cluster peers).
class Alertmanager {
 public:
  explicit Alertmanager(const std::filesystem::path& dir) : port_(free_port()) {
    std::filesystem::create_directories(dir / "am-data");
    std::ofstream(dir / "alertmanager.yml")
        << "route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n";
    process_ = testing::Process(
        {"prometheus-alertmanager", "--config.file=" + (dir / "alertmanager.yml").string(),
         "--storage.path=" + (dir / "am-data").string(),
         "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--cluster.listen-address="},
        testing::log_to(dir / "alertmanager.log"));
    client_ = std::make_unique<HttpClient>(url());
    ready_ = eventually([this] {
      auto r = client_->get("/-/ready");
      return r && r->status == 200;
    });
  }
  bool ready() const { return ready_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The alerts Alertmanager holds as active (resolved ones are not listed).
  json alerts() {
    auto r = client_->get("/api/v2/alerts");
    if (!r || r->status != 200) return json::array();
    return json::parse(r->body);
  }
  std::optional<json> alert_of(const std::string& alarm_id) {
    for (const auto& a : alerts()) {
      if (a["labels"].value("alarm_id", "") == alarm_id) return a;
    }
    return std::nullopt;
  }

 private:
  int port_;
  testing::Process process_;
  std::unique_ptr<HttpClient> client_;
  bool ready_ = false;
};

// A WebSocket client whose reads give up after a deadline, so a missing message fails the test instead of
// hanging it.
using StreamClient = testing::WebSocketTestClient;

// The aggregator's server, service and alarm service in this process, on the database at `db`.
class InProcessAggregator {
 public:
  InProcessAggregator(const std::filesystem::path& db, const std::string& alertmanager_url) {
    auto stores = store::open_stores({db.string(), 2});
    if (!stores) throw std::runtime_error(stores.error().detail);
    stores_ = std::move(*stores);
    auto auth = TokenAuthenticator::load_yaml(
        std::string("tokens:\n  - {name: ops, role: operator, token: ") + testing::kOperatorToken +
        "}\n  - {name: dashboard, role: viewer, token: " + testing::kViewerToken + "}\n");
    if (!auth) throw std::runtime_error(auth.error());
    service_ = std::make_unique<AggregatorService>(metrics_, std::move(*auth), nullptr);
    alarms::AlarmServiceOptions options;
    options.engine.update_interval_ms = 0;
    alarms_ = std::make_unique<alarms::AlarmService>(stores_->alarms(), metrics_.registry(), options);
    if (auto loaded = alarms_->load(unix_now_ms()); !loaded) throw std::runtime_error(loaded.error().detail);
    alarms_api::register_alarm_routes(service_->router(), *alarms_, service_->hub());
    alarms::AlertmanagerConfig am;
    am.urls = {alertmanager_url};
    am.external_url = "http://127.0.0.1:1";
    am.resend_interval = 1s;
    am.backoff_min = 100ms;
    am.backoff_max = 1s;
    push_ = std::make_unique<alarms::AlertmanagerPush>(am, metrics_.registry());
    alarms_->add_listener([this](std::span<const brain::AlarmChange> c) { push_->on_changes(c); });
    push_->start();
    alarms_->start();  // ticks: gauges, silence expiry
    server_ = std::make_unique<http::HttpServer>(
        ioc_, nullptr, http::ServerLimits{},
        [this](http::Request&& req, const http::Peer& peer, http::Respond respond) {
          service_->handle(std::move(req), peer, std::move(respond));
        },
        http::ServerObserver{});
    server_->set_upgrade_handler(
        [this](const http::Request& req, const http::Peer& peer) { return service_->upgrade(req, peer); });
    server_->listen({net::ip::make_address("127.0.0.1"), 0});
    server_->start();
    service_->set_ready(true);
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  ~InProcessAggregator() {
    auto done = std::make_shared<std::promise<void>>();
    auto drained = done->get_future();
    server_->shutdown([done] { done->set_value(); });
    drained.wait_for(15s);
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
    alarms_->stop();
    push_->stop();
    (void)stores_->close();
  }

  int port() const { return server_->local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  alarms::AlarmService& alarms() { return *alarms_; }
  alarms::AlertmanagerPush& push() { return *push_; }

 private:
  std::unique_ptr<store::Stores> stores_;
  Metrics metrics_;
  std::unique_ptr<AggregatorService> service_;
  std::unique_ptr<alarms::AlarmService> alarms_;
  std::unique_ptr<alarms::AlertmanagerPush> push_;
  net::io_context ioc_;
  net::executor_work_guard<net::io_context::executor_type> work_ = net::make_work_guard(ioc_);
  std::unique_ptr<http::HttpServer> server_;
  std::vector<std::thread> threads_;
};

// SONiC's orchagent line for a port going down (up = false: coming back).
std::vector<brain::FaultMatch> sonic_port(brain::PatternMatcher& matcher, const std::string& device, int port,
                                          bool up, std::int64_t ts) {
  const std::string message = "updatePortOperStatus: Port Ethernet" + std::to_string(port) +
                              (up ? " oper state set from down to up" : " oper state set from up to down");
  brain::LogEvent e;
  e.entity = device;
  e.timestamp_ms = ts;
  e.message = message;
  e.app = "swss#orchagent";
  e.hostname = device;
  e.severity = 5;
  std::vector<brain::FaultMatch> out;
  matcher.observe(e, out);
  return out;
}

std::string field_of(const HttpResponse& r) {
  const auto body = json::parse(r.body, nullptr, false);
  if (!body.is_object() || !body.contains("invalid_params") || body["invalid_params"].empty()) return "";
  return body["invalid_params"][0].value("name", "");
}

TEST(AlarmsApi, FaultsReachRestWebSocketAndAlertmanagerAndSurviveARestart) {
  testing::TempDir dir;
  Alertmanager am(dir.path());
  ASSERT_TRUE(am.ready()) << "prometheus-alertmanager did not become ready";
  auto library = brain::load_pattern_library(testing::source_path("patterns").string());
  ASSERT_TRUE(library) << library.error().message();
  brain::PatternMatcher matcher(*library, [](std::string_view) { return std::nullopt; });
  const std::int64_t t0 = unix_now_ms() - 60'000;

  std::filesystem::create_directories(dir.path() / "binary");
  testing::AggregatorProcess binary(dir.path() / "binary");
  std::string first;
  std::string second;
  std::string silence_id;
  {
    InProcessAggregator agg(binary.database(), am.url());
    HttpClient ops(agg.url(), testing::kOperatorToken);
    HttpClient viewer(agg.url(), testing::kViewerToken);
    StreamClient stream;
    ASSERT_EQ(stream.open(agg.port(), "/api/v1/alarms/stream", testing::kViewerToken), 101);

    // Port Ethernet1 of leaf01 goes down: one alarm, on the stream, over REST, in Alertmanager.
    auto down = sonic_port(matcher, "leaf01", 1, false, t0);
    ASSERT_EQ(down.size(), 1U);
    agg.alarms().on_faults(down);
    const json raised = stream.next_change("raised");
    ASSERT_FALSE(raised.is_null());
    EXPECT_EQ(raised["kind"], "alarm");
    EXPECT_EQ(raised["item"]["entity"], "leaf01/Ethernet1");
    EXPECT_EQ(raised["item"]["type"], "link-down-sonic");
    EXPECT_EQ(raised["item"]["fault"], "link_down");
    EXPECT_EQ(raised["item"]["severity"], "major");
    first = raised["item"]["id"];

    auto list = viewer.get("/api/v1/alarms");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->status, 200) << list->body;
    json body = json::parse(list->body);
    EXPECT_EQ(body["total"], 1);
    ASSERT_EQ(body["items"].size(), 1U);
    EXPECT_EQ(body["items"][0]["id"], first);
    EXPECT_EQ(body["items"][0]["state"], "raised");
    EXPECT_EQ(body["items"][0]["first_seen_ms"], t0);
    EXPECT_EQ(body["items"][0]["suppressed"], false);

    ASSERT_TRUE(eventually([&] { return am.alert_of(first).has_value(); })) << am.alerts().dump();
    const json alert = *am.alert_of(first);
    EXPECT_EQ(alert["labels"]["alertname"], "link-down-sonic");
    EXPECT_EQ(alert["labels"]["severity"], "major");
    EXPECT_EQ(alert["labels"]["entity"], "leaf01/Ethernet1");
    EXPECT_EQ(alert["labels"]["root_cause"], "leaf01/Ethernet1");
    EXPECT_EQ(alert["generatorURL"], "http://127.0.0.1:1/api/v1/alarms/" + first);

    // Bad queries: 400 naming the parameter.
    for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
             {"state=bogus", "state"},
             {"severity=huge", "severity"},
             {"limit=0", "limit"},
             {"limit=1001", "limit"},
             {"offset=-1", "offset"},
             {"suppressed=yes", "suppressed"},
             {"since=yesterday", "since"},
             {"since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", "until"}}) {
      auto r = viewer.get("/api/v1/alarms?" + query);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << query;
      EXPECT_TRUE(r->is_problem());
      EXPECT_EQ(field_of(*r), field) << query << ": " << r->body;
    }
    auto unknown_param = viewer.get("/api/v1/alarms?colour=red");
    ASSERT_TRUE(unknown_param);
    EXPECT_EQ(unknown_param->status, 400);
    auto filtered =
        viewer.get("/api/v1/alarms?state=raised&severity=major&entity=leaf01%2FEthernet1&type=link_down");
    ASSERT_TRUE(filtered);
    EXPECT_EQ(json::parse(filtered->body)["total"], 1) << filtered->body;
    auto none = viewer.get("/api/v1/alarms?state=cleared");
    EXPECT_EQ(json::parse(none->body)["total"], 0);

    // Acknowledgement: the viewer may not; the operator may, named by the token.
    auto refused = viewer.post("/api/v1/alarms/" + first + "/ack", R"({"comment":"mine"})");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 403);
    auto bad_body = ops.post("/api/v1/alarms/" + first + "/ack", R"({"comment":5})");
    EXPECT_EQ(bad_body->status, 400);
    EXPECT_EQ(field_of(*bad_body), "comment");
    auto extra = ops.post("/api/v1/alarms/" + first + "/ack", R"({"comment":"x","colour":"red"})");
    EXPECT_EQ(extra->status, 400);
    EXPECT_EQ(field_of(*extra), "colour");
    auto acked = ops.post("/api/v1/alarms/" + first + "/ack", R"({"comment":"replacing the cable"})");
    ASSERT_TRUE(acked);
    ASSERT_EQ(acked->status, 200) << acked->body;
    EXPECT_EQ(json::parse(acked->body)["state"], "acknowledged");
    EXPECT_EQ(json::parse(acked->body)["acknowledged_by"], "ops");
    const json ack_event = stream.next_change("acknowledged");
    ASSERT_FALSE(ack_event.is_null());
    EXPECT_EQ(ack_event["actor"], "ops");
    EXPECT_EQ(ack_event["item"]["comment"], "replacing the cable");
    auto missing = ops.post("/api/v1/alarms/0000000000000000-1/ack", "");
    EXPECT_EQ(missing->status, 404);

    // A second port: a group acknowledgement with one unknown id acknowledges nothing.
    agg.alarms().on_faults(sonic_port(matcher, "leaf01", 2, false, t0 + 1'000));
    second = stream.next_change("raised")["item"]["id"];
    ASSERT_FALSE(second.empty());
    auto group_bad = ops.post("/api/v1/alarms/ack", R"({"ids":[")" + second + R"(","0000000000000000-1"]})");
    ASSERT_TRUE(group_bad);
    EXPECT_EQ(group_bad->status, 404);
    EXPECT_NE(json::parse(group_bad->body).value("detail", "").find("ids[1]"), std::string::npos)
        << group_bad->body;
    EXPECT_EQ(json::parse(ops.get("/api/v1/alarms/" + second)->body)["state"], "raised");
    auto group_empty = ops.post("/api/v1/alarms/ack", R"({"ids":[]})");
    EXPECT_EQ(group_empty->status, 400);
    EXPECT_EQ(field_of(*group_empty), "ids");
    auto group = ops.post("/api/v1/alarms/ack", R"({"ids":[")" + second + R"("],"comment":"both"})");
    ASSERT_EQ(group->status, 200) << group->body;
    EXPECT_EQ(json::parse(group->body)["items"][0]["state"], "acknowledged");
    ASSERT_TRUE(eventually([&] { return am.alert_of(second).has_value(); }));

    // Silences: bad rules refused naming the field; a good one suppresses the second alarm, which ends in
    // Alertmanager while staying listed.
    for (const auto& [rule, field] : std::vector<std::pair<std::string, std::string>>{
             {R"({"reason":"x"})", "entity"},
             {R"({"entity":"leaf01/*"})", "reason"},
             {R"({"regex":"(open","reason":"x"})", "regex"},
             {R"({"entity":"leaf01/*","reason":"x","expires":"2001-01-01T00:00:00Z"})", "expires"},
             {R"({"entity":"leaf01/*","reason":"x","expires":"soon"})", "expires"},
             {R"({"entity":"leaf01/*","reason":"x","colour":"red"})", "colour"}}) {
      auto r = ops.post("/api/v1/silences", rule);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << rule << ": " << r->body;
      EXPECT_EQ(field_of(*r), field) << rule << ": " << r->body;
    }
    EXPECT_EQ(viewer.post("/api/v1/silences", R"({"entity":"leaf01/*","reason":"x"})")->status, 403);
    const std::string expires = alarms::format_time_ms(unix_now_ms() + 3'600'000);
    auto silenced =
        ops.post("/api/v1/silences",
                 R"({"entity":"leaf01/Ethernet2","reason":"cable swap","expires":")" + expires + "\"}");
    ASSERT_TRUE(silenced);
    ASSERT_EQ(silenced->status, 201) << silenced->body;
    const json silence = json::parse(silenced->body);
    silence_id = silence["id"];
    EXPECT_EQ(silence["creator"], "ops");
    EXPECT_EQ(silenced->location, "/api/v1/silences/" + silence_id);
    EXPECT_EQ(json::parse(viewer.get("/api/v1/silences/" + silence_id)->body)["reason"], "cable swap");
    const json suppressed_event = stream.next_change("suppressed");
    ASSERT_FALSE(suppressed_event.is_null());
    EXPECT_EQ(suppressed_event["item"]["id"], second);
    EXPECT_EQ(suppressed_event["item"]["silence_id"], silence_id);
    const json second_now = json::parse(viewer.get("/api/v1/alarms/" + second)->body);
    EXPECT_EQ(second_now["suppressed"], true);
    EXPECT_EQ(json::parse(viewer.get("/api/v1/alarms?suppressed=true")->body)["total"], 1);
    ASSERT_TRUE(eventually([&] { return !am.alert_of(second).has_value(); })) << am.alerts().dump();

    // Ethernet1 comes back: the recovery notice on the stream, the alert resolved in Alertmanager, the
    // history complete.
    agg.alarms().on_faults(sonic_port(matcher, "leaf01", 1, true, t0 + 5'000));
    const json cleared = stream.next_change("cleared");
    ASSERT_FALSE(cleared.is_null());
    EXPECT_EQ(cleared["item"]["id"], first);
    EXPECT_EQ(cleared["item"]["state"], "cleared");
    ASSERT_TRUE(eventually([&] { return !am.alert_of(first).has_value(); })) << am.alerts().dump();
    const json with_history = json::parse(viewer.get("/api/v1/alarms/" + first)->body);
    ASSERT_EQ(with_history["history"].size(), 3U) << with_history.dump();
    EXPECT_EQ(with_history["history"][0]["change"], "raised");
    EXPECT_EQ(with_history["history"][1]["change"], "acknowledged");
    EXPECT_EQ(with_history["history"][1]["actor"], "ops");
    EXPECT_EQ(with_history["history"][1]["comment"], "replacing the cable");
    EXPECT_EQ(with_history["history"][2]["change"], "cleared");
    EXPECT_EQ(viewer.get("/api/v1/alarms/0000000000000000-1")->status, 404);

    // Gauges follow within a tick.
    EXPECT_TRUE(eventually([&] {
      return testing::metric_value(viewer.get("/metrics")->body, "hsns_alarms_active{severity=\"major\"}") ==
             1;
    }));
    const auto metrics = viewer.get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(testing::metric_value(metrics->body, "hsns_alarms_raised_total"), 2);
    EXPECT_EQ(testing::metric_value(metrics->body, "hsns_alarms_cleared_total"), 1);
    EXPECT_EQ(testing::metric_value(metrics->body, "hsns_alarms_silences"), 1);
    EXPECT_EQ(testing::metric_value(metrics->body, "hsns_alarms_suppressed"), 1);
    EXPECT_EQ(testing::metric_value(metrics->body, "hsns_alarms_active{severity=\"major\"}"), 1);
    EXPECT_GE(testing::metric_value(metrics->body, "hsns_alarms_alertmanager_sent_total").value_or(0), 3);
  }

  // The real binary on the same database, pushing to the same Alertmanager.
  binary.set_config("alertmanager:\n  urls: [\"" + am.url() + "\"]\n  resend_interval_ms: 1000\n");
  binary.start();
  HttpClient ops = binary.client();
  HttpClient viewer = binary.client(testing::kViewerToken);
  const json active = json::parse(viewer.get("/api/v1/alarms?state=acknowledged")->body);
  ASSERT_EQ(active["total"], 1) << active.dump();
  EXPECT_EQ(active["items"][0]["id"], second);
  EXPECT_EQ(active["items"][0]["suppressed"], true);
  EXPECT_EQ(active["items"][0]["acknowledged_by"], "ops");
  EXPECT_EQ(json::parse(viewer.get("/api/v1/alarms/" + first)->body)["state"], "cleared");
  const json silences = json::parse(viewer.get("/api/v1/silences")->body);
  ASSERT_EQ(silences["items"].size(), 1U);
  EXPECT_EQ(silences["items"][0]["id"], silence_id);

  StreamClient stream;
  ASSERT_EQ(stream.open(binary.port(), "/api/v1/alarms/stream", testing::kViewerToken), 101);
  EXPECT_EQ(viewer.del("/api/v1/silences/" + silence_id)->status, 403);
  auto removed = ops.del("/api/v1/silences/" + silence_id);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->status, 204) << removed->body;
  EXPECT_EQ(ops.del("/api/v1/silences/" + silence_id)->status, 404);
  const json unsuppressed = stream.next_change("unsuppressed");
  ASSERT_FALSE(unsuppressed.is_null());
  EXPECT_EQ(unsuppressed["item"]["id"], second);
  EXPECT_EQ(json::parse(viewer.get("/api/v1/alarms/" + second)->body)["suppressed"], false);
  ASSERT_TRUE(eventually([&] { return am.alert_of(second).has_value(); }))
      << am.alerts().dump() << binary.log();
  EXPECT_EQ(binary.stop(), 0) << binary.log();
}

TEST(AlarmsApi, AlertmanagerAwayIsRetriedAndAFullQueueCountsDrops) {
  // An Alertmanager URL nobody listens on: every POST fails, the queue holds at most queue_max alerts.
  Metrics metrics;
  alarms::AlertmanagerConfig config;
  config.urls = {"http://127.0.0.1:" + std::to_string(free_port())};
  config.queue_max = 2;
  config.backoff_min = 20ms;
  config.backoff_max = 40ms;
  config.timeout = 1s;
  alarms::AlertmanagerPush push(config, metrics.registry());
  push.start();
  std::vector<brain::AlarmChange> changes;
  for (int i = 0; i < 5; ++i) {
    brain::AlarmChange c;
    c.id = brain::alarm_id(static_cast<std::uint64_t>(i) + 1, 1'000);
    c.type = "t";
    c.first_ms = 1'000;
    c.change = brain::AlarmChangeKind::raised;
    changes.push_back(c);
  }
  push.on_changes(changes);
  EXPECT_TRUE(eventually([&] { return push.stats().failures >= 3; }));
  const auto stats = push.stats();
  EXPECT_EQ(stats.dropped, 3U);
  EXPECT_EQ(stats.queued, 2U);
  EXPECT_EQ(stats.sent, 0U);
  EXPECT_EQ(stats.active, 5U);
  push.stop();
}

}  // namespace
}  // namespace hsns
