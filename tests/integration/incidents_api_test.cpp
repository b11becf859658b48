// The incidents REST surface (api/incidents/routes.h) on the real hsns-aggregator binary over loopback.
// Nothing feeds alarms to a running aggregator yet (the alarm service lands separately), so the incidents
// are made by the incident service in-process on the aggregator's own database file (real topology, job
// and incident stores), then the real binary starts on that file: it restores the open incidents (its
// hsns_incidents_open gauge counts them) and answers them, with problem documents for bad requests.
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brain/incident_service.h"
#include "services/topology_cache.h"
#include "services/topology_service.h"
#include "store/database.h"
#include "store/sqlite_incident_store.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_topology_store.h"
#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using brain::IncidentInput;
using nlohmann::json;

IncidentInput alarm(std::string id, std::string type, std::string entity, std::int64_t t) {
  IncidentInput a;
  a.alarm_id = std::move(id);
  a.fingerprint = "fp-" + a.alarm_id;
  a.fault_type = std::move(type);
  a.entity = std::move(entity);
  a.first_ms = t;
  a.last_ms = t;
  return a;
}

// Three incidents on a 16-host cluster with one job: inc-1 (host002's NIC, resolved), inc-2 (a link,
// open, hitting the job), inc-3 (a single port, open).
void seed(const std::filesystem::path& database) {
  store::DatabaseOptions o;
  o.path = database.string();
  store::Database db(o);
  store::SqliteTopologyStore topology_store(db);
  store::SqliteJobStore jobs(db);
  store::SqliteIncidentStore incidents(db);
  auto cache = std::make_shared<services::TopologyCache>(topology_store);
  topology::ClosParams p;
  p.hosts = 16;
  p.npus_per_host = 4;
  p.hosts_per_su = 8;
  p.spines_per_plane = 2;
  ASSERT_TRUE(services::TopologyService(cache).generate(p).has_value());
  store::JobRecord job;
  job.name = "llm";
  for (std::uint32_t r = 0; r < 8; ++r)
    job.ranks.push_back({r, r < 4 ? "host003" : "host004", r % 4, "10.1.0.1"});
  job.request = "{}";
  job.summary = "{}";
  job.topology_revision = *topology_store.topology_revision();
  ASSERT_TRUE(jobs.create_job(job).has_value());

  prometheus::Registry registry;
  brain_service::IncidentServiceOptions options;
  options.correlator.confirm_ms = 0;
  options.correlator.hold_ms = 60'000;
  options.tick = std::chrono::milliseconds(0);
  brain_service::IncidentService service(*cache, jobs, incidents, nullptr, registry, options);
  ASSERT_TRUE(service.start().has_value());
  std::vector<IncidentInput> nic;
  for (int n = 0; n < 4; ++n)
    nic.push_back(alarm("n" + std::to_string(n), "link_down", "host002/eth" + std::to_string(n), 1000));
  service.on_alarms(nic);
  for (auto& a : nic) {
    a.state = IncidentInput::State::cleared;
    a.last_ms = 2000;
  }
  service.on_alarms(nic);
  service.on_alarms(std::vector{alarm("l1", "crc_errors", "host003/eth2", 100'000),
                                alarm("l2", "crc_errors", "leaf002/Eth1/3", 100'100)});
  service.on_alarms(std::vector{alarm("p1", "fec_uncorrectable", "host016/eth0", 100'200)});
  ASSERT_EQ(service.list({})->total, 3u);
  service.stop();
}

TEST(IncidentsApi, RealAggregatorAnswersStoredIncidents) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  seed(agg.database());
  agg.start();
  auto c = agg.client(kViewerToken);

  auto all = c.get("/api/v1/incidents");
  ASSERT_TRUE(all && all->status == 200) << (all ? all->body : all.error());
  auto body = json::parse(all->body);
  EXPECT_EQ(body["total"], 3);
  ASSERT_EQ(body["items"].size(), 3u);
  EXPECT_EQ(body["items"][0]["id"], "inc-3");  // newest first
  EXPECT_EQ(body["items"][2]["id"], "inc-1");

  auto open = json::parse(c.get("/api/v1/incidents?state=open&limit=1&offset=1")->body);
  EXPECT_EQ(open["total"], 2);
  ASSERT_EQ(open["items"].size(), 1u);
  const auto& link = open["items"][0];
  EXPECT_EQ(link["id"], "inc-2");
  EXPECT_EQ(link["state"], "open");
  EXPECT_EQ(link["alarm_count"], 2);
  EXPECT_EQ(link["first_seen"], "1970-01-01T00:01:40.000Z");
  EXPECT_EQ(link["last_seen_ms"], 100'100);
  EXPECT_EQ(link["root_causes"][0]["entity"], "link:host003/eth2|leaf002/Eth1/3");
  EXPECT_EQ(link["root_causes"][0]["kind"], "link");
  EXPECT_EQ(link["root_causes"][0]["symptoms"], json({"l1", "l2"}));
  EXPECT_GT(link["root_causes"][0]["score"].get<double>(), 0.8);
  EXPECT_EQ(link["affected_jobs"], json::parse(R"([{"job_id":"llm","name":"llm","ranks":[2]}])"));

  auto resolved = json::parse(c.get("/api/v1/incidents?state=resolved")->body);
  EXPECT_EQ(resolved["total"], 1);
  EXPECT_EQ(resolved["items"][0]["root_causes"][0]["entity"], "host002");
  EXPECT_EQ(resolved["items"][0]["root_causes"][0]["kind"], "host_nic");
  EXPECT_EQ(resolved["items"][0]["affected_jobs"], json::array());

  auto one = c.get("/api/v1/incidents/inc-2");
  ASSERT_TRUE(one && one->status == 200);
  EXPECT_EQ(json::parse(one->body), link);

  // Problems naming what is wrong.
  auto missing = c.get("/api/v1/incidents/inc-99");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->content_type.find("application/problem+json"), std::string::npos);
  EXPECT_NE(json::parse(missing->body)["detail"].get<std::string>().find("inc-99"), std::string::npos);
  for (const auto& [target, field] :
       std::vector<std::pair<std::string, std::string>>{{"/api/v1/incidents?state=bogus", "state"},
                                                        {"/api/v1/incidents?limit=0", "limit"},
                                                        {"/api/v1/incidents?limit=1001", "limit"},
                                                        {"/api/v1/incidents?offset=-1", "offset"},
                                                        {"/api/v1/incidents?sort=id", "sort"}}) {
    auto r = c.get(target);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << target;
    EXPECT_NE(r->body.find(field), std::string::npos) << target << ": " << r->body;
  }
  EXPECT_EQ(agg.client("").get("/api/v1/incidents")->status, 401);
  EXPECT_EQ(c.get("/api/v1/incidents/stream")->status, 426);  // a WebSocket endpoint

  // The open ones were restored into the running correlator.
  auto metrics = c.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hsns_incidents_open 2"), std::string::npos) << metrics->body;
  EXPECT_EQ(agg.stop(), 0);

  // A restart answers the same.
  agg.start();
  EXPECT_EQ(json::parse(agg.client().get("/api/v1/incidents/inc-2")->body), link);
  EXPECT_EQ(agg.stop(), 0);
}

}  // namespace
}  // namespace hsns::testing
