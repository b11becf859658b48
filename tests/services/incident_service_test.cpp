// The incident store (store/sqlite_incident_store.h) on a real SQLite file, and the incident service
// (aggregator/brain/incident_service.h) over the real stores: incidents opened, ranked, stored, published
// on the hub's "incidents" topic and resolved; affected jobs from the job store; a restart restores the
// open incidents with their ids and continues the sequence.
#include "brain/incident_service.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "services/topology_cache.h"
#include "services/topology_service.h"
#include "store/database.h"
#include "store/sqlite_incident_store.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_topology_store.h"

namespace hsns::brain_service {
namespace {

using brain::IncidentInput;
using nlohmann::json;

// A hub subscriber that keeps what it is sent.
class RecordingChannel final : public http::WebSocketChannel {
 public:
  bool send(std::shared_ptr<const std::string> message, bool, http::MessageKind) override {
    std::lock_guard lock(mu);
    messages.push_back(json::parse(*message));
    return true;
  }
  void on_message(MessageHandler) override {}
  void on_closed(std::function<void()>) override {}
  void close(std::uint16_t, std::string) override {}
  std::uint64_t id() const override { return 7; }
  std::mutex mu;
  std::vector<json> messages;
};

store::IncidentRecord record(std::uint64_t seq, std::string state) {
  store::IncidentRecord r;
  r.id = "inc-" + std::to_string(seq);
  r.sequence = seq;
  r.state = std::move(state);
  r.first_ms = static_cast<std::int64_t>(seq) * 1000;
  r.last_ms = r.first_ms + 5;
  r.document = json{{"id", r.id}}.dump();
  r.alarms = "[]";
  return r;
}

class IncidentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hsns-incidents-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    open();
  }
  void TearDown() override {
    close();
    std::filesystem::remove_all(dir_);
  }
  void open(store::IncidentStoreOptions options = {}) {
    store::DatabaseOptions o;
    o.path = (dir_ / "db.sqlite").string();
    db_ = std::make_unique<store::Database>(o);
    topology_store_ = std::make_unique<store::SqliteTopologyStore>(*db_);
    job_store_ = std::make_unique<store::SqliteJobStore>(*db_);
    incidents_ = std::make_unique<store::SqliteIncidentStore>(*db_, options);
    cache_ = std::make_shared<services::TopologyCache>(*topology_store_);
  }
  void close() {
    cache_.reset();
    incidents_.reset();
    job_store_.reset();
    topology_store_.reset();
    db_.reset();
  }
  // 16 hosts x 4 NPUs, SUs of 8 (8 leaves), 2 spines: host001..host016.
  void generate() {
    topology::ClosParams p;
    p.hosts = 16;
    p.npus_per_host = 4;
    p.hosts_per_su = 8;
    p.spines_per_plane = 2;
    services::TopologyService topology(cache_);
    ASSERT_TRUE(topology.generate(p).has_value());
  }
  void add_job(const std::string& name, const std::vector<std::string>& hosts) {
    store::JobRecord job;
    job.name = name;
    std::uint32_t r = 0;
    for (const auto& h : hosts) {
      for (std::uint32_t n = 0; n < 4; ++n) job.ranks.push_back({r++, h, n, "10.0.0." + std::to_string(r)});
    }
    job.request = "{}";
    job.summary = "{}";
    job.topology_revision = *topology_store_->topology_revision();
    ASSERT_TRUE(job_store_->create_job(job).has_value());
  }
  std::unique_ptr<IncidentService> service(http::WebSocketHub* hub = nullptr) {
    IncidentServiceOptions o;
    o.correlator.confirm_ms = 0;
    o.correlator.window_ms = 10'000;
    o.correlator.hold_ms = 30'000;
    o.tick = std::chrono::milliseconds(0);  // the test moves event time itself
    return std::make_unique<IncidentService>(*cache_, *job_store_, *incidents_, hub, registry_, o);
  }

  static IncidentInput alarm(std::string id, std::string type, std::string entity, std::int64_t t,
                             IncidentInput::State state = IncidentInput::State::raised) {
    IncidentInput a;
    a.alarm_id = std::move(id);
    a.fingerprint = "fp-" + a.alarm_id;
    a.fault_type = std::move(type);
    a.entity = std::move(entity);
    a.first_ms = t;
    a.last_ms = t;
    a.state = state;
    a.detail = "seen";
    return a;
  }
  // host's NPU n port as the generator names it ("eth<n>").
  static std::string port(int h, int n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "host%03d/eth%d", h, n);
    return buf;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<store::SqliteTopologyStore> topology_store_;
  std::unique_ptr<store::SqliteJobStore> job_store_;
  std::unique_ptr<store::SqliteIncidentStore> incidents_;
  std::shared_ptr<services::TopologyCache> cache_;
  prometheus::Registry registry_;
};

TEST_F(IncidentTest, StoreSavesListsPagesAndSurvivesAReopen) {
  std::vector<store::IncidentRecord> rs = {record(1, "resolved"), record(2, "open"), record(3, "open"),
                                           record(4, "resolved")};
  ASSERT_TRUE(incidents_->save(rs, {}).has_value());
  auto all = incidents_->list({});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->total, 4u);
  ASSERT_EQ(all->items.size(), 4u);
  EXPECT_EQ(all->items[0].id, "inc-4");  // newest first
  auto page = incidents_->list({.state = "open", .limit = 1, .offset = 1});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->total, 2u);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, "inc-2");
  auto one = incidents_->get("inc-3");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->state, "open");
  EXPECT_EQ(one->first_ms, 3000);
  EXPECT_EQ(one->last_ms, 3005);
  EXPECT_EQ(one->document, R"({"id":"inc-3"})");
  EXPECT_EQ(incidents_->get("inc-9").error().kind, Error::Kind::not_found);
  // Update and remove in one save.
  auto resolved3 = record(3, "resolved");
  std::vector<std::string> gone = {"inc-2"};
  ASSERT_TRUE(incidents_->save(std::vector{resolved3}, gone).has_value());
  EXPECT_EQ(incidents_->get("inc-3")->state, "resolved");
  EXPECT_EQ(incidents_->get("inc-2").error().kind, Error::Kind::not_found);
  // A bad record stores nothing of its batch.
  auto bad = record(5, "pending");
  EXPECT_FALSE(incidents_->save(std::vector{record(6, "open"), bad}, {}).has_value());
  EXPECT_EQ(incidents_->get("inc-6").error().kind, Error::Kind::not_found);
  EXPECT_EQ(*incidents_->max_sequence(), 4u);
  close();
  open({.keep_resolved = 2});
  EXPECT_EQ(incidents_->list({})->total, 3u);
  EXPECT_EQ(db_->schema_version(), store::builtin_migrations().back().version);
  // Pruning keeps the newest resolved ones (and with them the highest sequence: ids are never reused).
  ASSERT_TRUE(incidents_->save(std::vector{record(7, "resolved")}, {}).has_value());
  auto left = incidents_->list({.state = "resolved"});
  ASSERT_EQ(left->items.size(), 2u);
  EXPECT_EQ(left->items[0].id, "inc-7");
  EXPECT_EQ(left->items[1].id, "inc-4");
  EXPECT_EQ(*incidents_->max_sequence(), 7u);
  ASSERT_EQ(incidents_->open_incidents()->size(), 0u);
}

TEST_F(IncidentTest, ServiceOpensRanksStoresPublishesAndResolves) {
  generate();
  add_job("train", {"host001", "host002"});
  add_job("other", {"host009"});
  http::WebSocketHub hub;
  auto channel = std::make_shared<RecordingChannel>();
  hub.subscribe(kIncidentsTopic, channel);
  auto svc = service(&hub);
  ASSERT_TRUE(svc->start().has_value());
  std::vector<IncidentInput> in;
  in.reserve(4);
  for (int n = 0; n < 4; ++n)
    in.push_back(alarm("a" + std::to_string(n), "link_down", port(2, n), 100'000 + n));
  svc->on_alarms(in);
  auto page = svc->list({.state = "open"});
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->total, 1u);
  const auto doc = json::parse(page->items[0].document);
  EXPECT_EQ(doc["id"], "inc-1");
  EXPECT_EQ(doc["state"], "open");
  EXPECT_EQ(doc["alarm_count"], 4);
  EXPECT_EQ(doc["first_seen"], "1970-01-01T00:01:40.000Z");
  EXPECT_EQ(doc["first_seen_ms"], 100'000);
  EXPECT_EQ(doc["last_seen"], "1970-01-01T00:01:40.003Z");
  EXPECT_EQ(doc["root_causes"][0]["rank"], 1);
  EXPECT_EQ(doc["root_causes"][0]["entity"], "host002");
  EXPECT_EQ(doc["root_causes"][0]["kind"], "host_nic");
  EXPECT_EQ(doc["root_causes"][0]["fault_type"], "link_down");
  EXPECT_EQ(doc["root_causes"][0]["symptoms"], json({"a0", "a1", "a2", "a3"}));
  EXPECT_EQ(doc["affected_jobs"], json::parse(R"([{"job_id":"train","name":"train","ranks":[4,5,6,7]}])"));
  EXPECT_EQ(doc["alarms"], json({"a0", "a1", "a2", "a3"}));
  EXPECT_FALSE(doc["recommended_action"].get<std::string>().empty());
  {
    std::lock_guard lock(channel->mu);
    ASSERT_EQ(channel->messages.size(), 1u);
    EXPECT_EQ(channel->messages[0]["kind"], "incident");
    EXPECT_EQ(channel->messages[0]["change"], "opened");
    EXPECT_EQ(channel->messages[0]["item"], doc);
  }
  // All cleared, then the hold passes (event time).
  std::vector<IncidentInput> clears;
  for (auto a : in) {
    a.state = IncidentInput::State::cleared;
    a.last_ms = 110'000;
    clears.push_back(a);
  }
  svc->on_alarms(clears);
  EXPECT_EQ(svc->list({.state = "open"})->total, 1u);
  svc->advance(140'000);
  EXPECT_EQ(svc->list({.state = "open"})->total, 0u);
  auto resolved = svc->get("inc-1");
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->state, "resolved");
  EXPECT_EQ(json::parse(resolved->document)["state"], "resolved");
  EXPECT_EQ(svc->live_incidents(), 0u);
  std::lock_guard lock(channel->mu);
  ASSERT_EQ(channel->messages.size(), 3u);
  EXPECT_EQ(channel->messages[1]["change"], "updated");
  EXPECT_EQ(channel->messages[2]["change"], "resolved");
}

TEST_F(IncidentTest, RestartRestoresOpenIncidentsAndTheSequence) {
  generate();
  {
    auto svc = service();
    ASSERT_TRUE(svc->start().has_value());
    svc->on_alarms(std::vector{alarm("x", "crc_errors", port(3, 1), 5000)});
    svc->on_alarms(std::vector{alarm("y", "crc_errors", port(12, 0), 5000)});
    EXPECT_EQ(svc->list({})->total, 2u);
  }
  close();
  open();
  auto svc = service();
  ASSERT_TRUE(svc->start().has_value());
  EXPECT_EQ(svc->live_incidents(), 2u);
  // The far end of host003/eth1 joins the restored incident inc-1: now both ends of the link.
  svc->on_alarms(std::vector{alarm("z", "crc_errors", "leaf001/Eth1/3", 6000)});
  const auto doc = json::parse(svc->get("inc-1")->document);
  EXPECT_EQ(doc["alarm_count"], 2);
  EXPECT_EQ(doc["root_causes"][0]["kind"], "link");
  EXPECT_EQ(doc["root_causes"][0]["entity"], "link:host003/eth1|leaf001/Eth1/3");
  // A new unrelated fault continues the sequence.
  svc->on_alarms(std::vector{alarm("w", "crc_errors", port(16, 3), 6000)});
  EXPECT_TRUE(svc->get("inc-3").has_value());
}

TEST_F(IncidentTest, NewJobsRescoreOpenIncidents) {
  generate();
  auto svc = service();
  ASSERT_TRUE(svc->start().has_value());
  svc->on_alarms(std::vector{alarm("x", "crc_errors", port(5, 2), 5000),
                             alarm("y", "crc_errors", "leaf002/Eth1/5", 5000)});
  EXPECT_EQ(json::parse(svc->get("inc-1")->document)["affected_jobs"], json::array());
  add_job("late", {"host004", "host005"});
  std::this_thread::sleep_for(
      std::chrono::milliseconds(1100));  // the revision check runs at most once a second
  svc->advance(6000);
  EXPECT_EQ(json::parse(svc->get("inc-1")->document)["affected_jobs"],
            json::parse(R"([{"job_id":"late","name":"late","ranks":[6]}])"));
}

TEST_F(IncidentTest, AlarmJsonRoundTripsAndNamesBadFields) {
  auto a = alarm("id1", "crc_errors", "leaf001/Eth1/3", 5);
  a.severity = brain::FaultSeverity::critical;
  a.role = brain::RootCauseRole::host_nic;
  a.state = IncidentInput::State::acknowledged;
  a.suppressed = true;
  a.count = 9;
  a.action = "fix it";
  auto back = alarm_input_from_json(alarm_input_json(a));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(alarm_input_json(*back), alarm_input_json(a));
  auto j = alarm_input_json(a);
  j["severity"] = "loud";
  EXPECT_EQ(alarm_input_from_json(j).error().fields.at(0).field, "severity");
  j = alarm_input_json(a);
  j["count"] = -1;
  EXPECT_EQ(alarm_input_from_json(j).error().fields.at(0).field, "count");
  EXPECT_EQ(format_ms_utc(1'764'651'476'123), "2025-12-02T04:57:56.123Z");
}

}  // namespace
}  // namespace hsns::brain_service
