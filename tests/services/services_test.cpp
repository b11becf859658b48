// The aggregator's services (aggregator/services/) called directly, over the real SQLite stores on a
// temporary database file: the topology cache (per-revision parsing, a second cache on the same database,
// the jobs overlay), the topology operations (device state, LLDP merge) and the scheduling orchestration
// (addresses from the network store's ports, held NPUs, reachability, registration, jobs); the store error
// conventions (from_store) and their conversion to problem documents (http::to_problem).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../scheduling/fixtures.h"
#include "http/errors.h"
#include "services/refresh_gate.h"
#include "services/scheduling_service.h"
#include "services/store_errors.h"
#include "services/topology_cache.h"
#include "services/topology_service.h"
#include "store/database.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_network_store.h"
#include "store/sqlite_topology_store.h"

namespace hsns::services {
namespace {

namespace topo = hsns::topology;
using Kind = Error::Kind;

// tp x dp x pp over the given hosts, every NPU of each host.
placement::ScheduleRequest schedule_request(const std::string& name, std::vector<std::string> hosts,
                                            std::uint32_t tp, std::uint32_t dp, std::uint32_t pp) {
  placement::ScheduleRequest r;
  r.job_name = name;
  r.hosts = std::move(hosts);
  r.model = hsns::testing::small_model();
  r.parallel.tp = tp;
  r.parallel.dp = dp;
  r.parallel.pp = pp;
  r.ecmp_seeds = 2;
  return r;
}

std::vector<std::string> field_names(const Error& e) {
  std::vector<std::string> out;
  for (const auto& f : e.fields) out.push_back(f.field);
  return out;
}

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hsns-services-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    store::DatabaseOptions o;
    o.path = (dir_ / "db.sqlite").string();
    db_ = std::make_unique<store::Database>(o);
    topology_store_ = std::make_unique<store::SqliteTopologyStore>(*db_);
    job_store_ = std::make_unique<store::SqliteJobStore>(*db_);
    network_store_ = std::make_unique<store::SqliteNetworkStore>(*db_);
    cache_ = std::make_shared<TopologyCache>(*topology_store_);
    topology_ = std::make_unique<TopologyService>(cache_);
    scheduling_ = std::make_unique<SchedulingService>(cache_, *job_store_, *network_store_);
  }
  void TearDown() override {
    scheduling_.reset();
    topology_.reset();
    cache_.reset();
    network_store_.reset();
    job_store_.reset();
    topology_store_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  void generate() {
    auto generated = topology_->generate(hsns::testing::small_cluster_params());
    ASSERT_TRUE(generated.has_value()) << generated.error().message();
  }

  // Registers host001..host004 with 4 NPUs each.
  void register_hosts() {
    for (int h = 1; h <= 4; ++h) {
      network::HostRegistration reg;
      reg.name = "host00" + std::to_string(h);
      for (int n = 0; n < 4; ++n) {
        reg.npus.push_back({n, "eth" + std::to_string(n),
                            "02:00:00:00:0" + std::to_string(h) + ":0" + std::to_string(n), "", 0});
      }
      ASSERT_TRUE(network_store_->put_host(reg).has_value());
    }
  }

  std::string subnet(const std::string& name, const std::string& cidr) {
    network::SubnetSpec spec;
    spec.name = name;
    spec.tenant = "t1";
    spec.cidr = *IpPrefix::parse(cidr);
    auto created = network_store_->create_subnet(spec);
    EXPECT_TRUE(created.has_value()) << created.error().message();
    return created ? created->id : "";
  }

  void port(const std::string& subnet_id, const std::string& host, int npu) {
    network::PortSpec spec;
    spec.name = host + "-" + std::to_string(npu);
    spec.subnet_id = subnet_id;
    spec.host = host;
    spec.npu = npu;
    auto created = network_store_->create_port(spec);
    ASSERT_TRUE(created.has_value()) << created.error().message();
  }

  // Every NPU of the given hosts gets a port in the subnet.
  void ports_in(const std::string& subnet_id, const std::vector<std::string>& hosts) {
    for (const auto& h : hosts) {
      for (int n = 0; n < 4; ++n) port(subnet_id, h, n);
    }
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<store::SqliteTopologyStore> topology_store_;
  std::unique_ptr<store::SqliteJobStore> job_store_;
  std::unique_ptr<store::SqliteNetworkStore> network_store_;
  std::shared_ptr<TopologyCache> cache_;
  std::unique_ptr<TopologyService> topology_;
  std::unique_ptr<SchedulingService> scheduling_;
};

// ---- topology cache ----

TEST_F(ServicesTest, CacheParsesEachRevisionOnceAndFollowsAnotherWriter) {
  auto none = cache_->current();
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().kind, Kind::not_found);

  generate();
  auto first = cache_->current();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->revision, 1);
  EXPECT_EQ(first->source, "generate");
  EXPECT_EQ(first->topology->hosts().size(), 4u);
  // Same revision: the same parsed model, not a new parse.
  auto again = cache_->current();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->topology.get(), first->topology.get());

  // A second cache on the same database (another process) loads the stored document; its write is
  // seen by the first cache, which then parses the new revision.
  TopologyCache other(*topology_store_);
  auto loaded = other.current();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->revision, 1);
  EXPECT_NE(loaded->topology.get(), first->topology.get());
  EXPECT_EQ(loaded->topology->nodes().size(), first->topology->nodes().size());
  auto host = loaded->topology->find("host002");
  ASSERT_TRUE(host.has_value());
  auto written = other.write("state", true, {}, [&](const topo::Topology* current) {
    topo::Topology next = *current;
    next.set_node_state(*host, topo::DeviceState::kIsolated);
    return Result<std::optional<topo::Topology>>(std::move(next));
  });
  ASSERT_TRUE(written.has_value()) << written.error().message();
  EXPECT_EQ(written->revision, 2);
  auto moved = cache_->current();
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->revision, 2);
  EXPECT_EQ(moved->topology->node(*moved->topology->find("host002")).state, topo::DeviceState::kIsolated);
}

TEST_F(ServicesTest, ChangeErrorsAndNoChangeStoreNothing) {
  generate();
  auto refused =
      cache_->write("state", true, {}, [](const topo::Topology*) -> Result<std::optional<topo::Topology>> {
        return tl::unexpected(Error::invalid("npu", "refused by the change"));
      });
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, Kind::invalid);
  EXPECT_EQ(refused.error().field(), "npu");
  auto unchanged = cache_->write("state", true, {}, [](const topo::Topology*) {
    return Result<std::optional<topo::Topology>>(std::optional<topo::Topology>());
  });
  ASSERT_TRUE(unchanged.has_value());
  EXPECT_EQ(unchanged->revision, 1);
  EXPECT_EQ(*topology_store_->topology_revision(), 1);
}

// ---- topology service ----

TEST_F(ServicesTest, DeviceStateNamesWhatIsWrong) {
  auto missing_topology = topology_->set_device_state("host001", std::nullopt, topo::DeviceState::kIsolated);
  ASSERT_FALSE(missing_topology.has_value());
  EXPECT_EQ(missing_topology.error().kind, Kind::not_found);

  generate();
  auto unknown = topology_->set_device_state("host999", std::nullopt, topo::DeviceState::kIsolated);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().kind, Kind::not_found);
  EXPECT_EQ(unknown.error().detail, "no host or switch named 'host999'");

  auto switch_npu = topology_->set_device_state("leaf000", 0, topo::DeviceState::kIsolated);
  ASSERT_FALSE(switch_npu.has_value());
  EXPECT_EQ(switch_npu.error().kind, Kind::invalid);
  EXPECT_EQ(switch_npu.error().field(), "npu");

  auto no_such_npu = topology_->set_device_state("host001", 9, topo::DeviceState::kIsolated);
  ASSERT_FALSE(no_such_npu.has_value());
  EXPECT_EQ(no_such_npu.error().kind, Kind::unprocessable);
  EXPECT_EQ(no_such_npu.error().field(), "npu");
  EXPECT_EQ(*topology_store_->topology_revision(), 1);

  auto isolated = topology_->set_device_state("host001", 2, topo::DeviceState::kIsolated);
  ASSERT_TRUE(isolated.has_value()) << isolated.error().message();
  EXPECT_EQ(isolated->revision, 2);
  EXPECT_EQ(isolated->tier, topo::Tier::kHost);
  // Already in that state: nothing stored, the current revision answered.
  auto again = topology_->set_device_state("host001", 2, topo::DeviceState::kIsolated);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->revision, 2);
  auto current = topology_->current();
  ASSERT_TRUE(current.has_value());
  const auto* npu = current->topology->npu({*current->topology->find("host001"), 2});
  ASSERT_NE(npu, nullptr);
  EXPECT_EQ(npu->state, topo::DeviceState::kIsolated);
}

TEST_F(ServicesTest, LldpMergeStoresObservationsAndReportsConflicts) {
  auto without = topology_->merge_lldp({{"host001", "eth0", std::nullopt, "leaf000", "Eth1/1"}});
  ASSERT_FALSE(without.has_value());
  EXPECT_EQ(without.error().kind, Kind::not_found);

  generate();
  // host001 NPU 0 links to leaf000 (its SU's rail 0): confirmed; NPU 1 seen on leaf000 is a conflict (rail 1
  // is leaf001); a malformed observation is refused with nothing stored.
  auto bad = topology_->merge_lldp({{"", "", std::nullopt, "leaf0", "x"}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, Kind::invalid);
  EXPECT_EQ(*topology_store_->topology_revision(), 1);
  EXPECT_TRUE(topology_->observations()->empty());
  auto merged = topology_->merge_lldp(
      {{"host001", "eth0", std::nullopt, "leaf000", "Eth1/1"}, {"host001", "", 1u, "leaf000", "Eth1/9"}});
  ASSERT_TRUE(merged.has_value()) << merged.error().message();
  EXPECT_EQ(merged->report.confirmed, 1u);
  ASSERT_EQ(merged->report.conflicts.size(), 1u);
  EXPECT_EQ(merged->report.conflicts[0].observation, 1u);
  // The model did not change: the revision stays, the observations are stored all the same.
  EXPECT_EQ(merged->revision, 1);
  auto stored = topology_->observations();
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->size(), 2u);
  const bool by_npu = (*stored)[0].npu == 1 || (*stored)[1].npu == 1;
  EXPECT_TRUE(by_npu);
}

// ---- scheduling service ----

TEST_F(ServicesTest, SearchSeesRegisteredJobsAsAllocated) {
  search::SearchRequest req;
  req.model = hsns::testing::small_model();
  req.parallel.tp = 4;
  req.parallel.dp = 2;
  auto none = scheduling_->search(req);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().kind, Kind::not_found);

  generate();
  auto found = scheduling_->search(req);
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(found->topology_revision, 1);
  EXPECT_EQ(found->jobs_revision, 0);
  EXPECT_EQ(found->result.hosts_needed, 2u);
  EXPECT_EQ(found->result.usable_hosts, 4u);
  ASSERT_FALSE(found->result.candidates.empty());

  register_hosts();
  ports_in(subnet("all", "10.1.0.0/24"), {"host001", "host002"});
  auto job = scheduling_->schedule(schedule_request("a", {"host001", "host002"}, 4, 2, 1), false, "{}");
  ASSERT_TRUE(job.has_value()) << job.error().message();
  auto after = scheduling_->search(req);
  ASSERT_TRUE(after.has_value()) << after.error().message();
  EXPECT_EQ(after->jobs_revision, 1);
  EXPECT_EQ(after->result.usable_hosts, 2u);
  for (const auto& c : after->result.candidates) {
    EXPECT_EQ(c.hosts, (std::vector<std::string>{"host003", "host004"}));
  }
  // Unsatisfiable: the library's error, naming the field.
  req.parallel.dp = 8;
  auto too_big = scheduling_->search(req);
  ASSERT_FALSE(too_big.has_value());
  EXPECT_EQ(too_big.error().kind, Kind::unprocessable);
  EXPECT_FALSE(too_big.error().field().empty());
}

TEST_F(ServicesTest, ScheduleTakesAddressesFromPortsAndRegistersTheJob) {
  generate();
  register_hosts();
  // No ports: the library names the first used NPU without an address; nothing stored.
  auto no_ports = scheduling_->schedule(schedule_request("a", {"host001", "host002"}, 4, 2, 1), false, "{}");
  ASSERT_FALSE(no_ports.has_value());
  EXPECT_EQ(no_ports.error().kind, Kind::unprocessable);
  EXPECT_EQ(no_ports.error().field().rfind("npu_ips[", 0), 0u) << no_ports.error().field();
  EXPECT_TRUE(job_store_->list_jobs()->empty());

  // Each NPU has a port in "b-other" and one in "a-shared": the subnet holding a port of every used NPU
  // wins even though another sorts first for some NPUs.
  const std::string shared = subnet("a-shared", "10.1.0.0/24");
  const std::string other = subnet("0-other", "10.2.0.0/24");
  ports_in(other, {"host001"});
  ports_in(shared, {"host001", "host002"});
  auto job = scheduling_->schedule(schedule_request("a", {"host001", "host002"}, 4, 2, 1), false,
                                   R"({"job_name":"a"})");
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->npus_per_host, 4u);
  EXPECT_EQ(job->unreachable_pairs, 0u);
  EXPECT_EQ(job->record.topology_revision, 1);
  EXPECT_FALSE(job->record.created_at.empty());
  ASSERT_EQ(job->record.ranks.size(), 8u);
  for (const auto& r : job->record.ranks) EXPECT_EQ(r.ip.rfind("10.1.0.", 0), 0u) << r.ip;

  auto stored = scheduling_->get_job("a");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->request, R"({"job_name":"a"})");
  const auto summary = nlohmann::json::parse(stored->summary);
  EXPECT_EQ(summary["world_size"], 8);
  EXPECT_EQ(summary["npus_per_host"], 4);
  EXPECT_EQ(summary, schedule_summary(job->schedule, 4));

  // The name is taken; the hosts' NPUs are held: conflicts naming the field, nothing stored.
  auto same_name = scheduling_->schedule(schedule_request("a", {"host003"}, 4, 1, 1), false, "{}");
  ASSERT_FALSE(same_name.has_value());
  EXPECT_EQ(same_name.error().kind, Kind::conflict);
  EXPECT_EQ(same_name.error().field(), "job_name");
  auto held = scheduling_->schedule(schedule_request("b", {"host003", "host002"}, 4, 2, 1), false, "{}");
  ASSERT_FALSE(held.has_value());
  EXPECT_EQ(held.error().kind, Kind::conflict);
  EXPECT_EQ(held.error().field(), "hosts[1]");
  EXPECT_NE(held.error().detail.find("held by job 'a'"), std::string::npos) << held.error().detail;
  EXPECT_EQ(scheduling_->list_jobs()->size(), 1u);

  ASSERT_TRUE(scheduling_->delete_job("a").has_value());
  auto gone = scheduling_->delete_job("a");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().kind, Kind::not_found);
  EXPECT_EQ(scheduling_->get_job("a").error().kind, Kind::not_found);
}

TEST_F(ServicesTest, UnreachablePairsAreRefusedUnlessAllowed) {
  generate();
  register_hosts();
  // Each host's NPUs in a subnet of their own: every inter-host pair crosses subnets.
  ports_in(subnet("s1", "10.1.0.0/24"), {"host001"});
  ports_in(subnet("s2", "10.2.0.0/24"), {"host002"});
  auto refused = scheduling_->schedule(schedule_request("a", {"host001", "host002"}, 4, 2, 1), false, "{}");
  ASSERT_FALSE(refused.has_value());
  const Error& e = refused.error();
  EXPECT_EQ(e.kind, Kind::unprocessable);
  EXPECT_EQ(e.field(), "hosts");
  ASSERT_GE(e.fields.size(), 2u);
  // The first field's reason counts the pairs; the detail adds what to do.
  EXPECT_NE(e.fields[0].reason.find("inter-host NPU pairs have addresses in different subnets"),
            std::string::npos);
  EXPECT_NE(e.detail.find("allow_unreachable"), std::string::npos);
  for (std::size_t i = 1; i < e.fields.size(); ++i) EXPECT_EQ(e.fields[i].field.rfind("ranks[", 0), 0u);
  EXPECT_LE(e.fields.size(), 9u);
  EXPECT_TRUE(job_store_->list_jobs()->empty());

  // The API shows every field with its own reason.
  const Problem p = http::to_problem(e);
  EXPECT_EQ(p.status, 422);
  EXPECT_EQ(p.detail, "field 'hosts': " + e.detail);
  ASSERT_EQ(p.invalid_params.size(), e.fields.size());
  EXPECT_EQ(p.invalid_params[0].reason, e.fields[0].reason);
  EXPECT_EQ(p.invalid_params[1].name, e.fields[1].field);

  auto allowed = scheduling_->schedule(schedule_request("a", {"host001", "host002"}, 4, 2, 1), true, "{}");
  ASSERT_TRUE(allowed.has_value()) << allowed.error().message();
  EXPECT_GT(allowed->unreachable_pairs, 0u);
  EXPECT_EQ(job_store_->list_jobs()->size(), 1u);
}

// ---- store error conventions ----

// The first call reads; then a moved mark at once, the same or no mark only once the period passed; force
// always.
TEST(RefreshGate, ReadsWhenTheMarkMovesElseOncePerPeriod) {
  RefreshGate<std::int64_t> gate(std::chrono::seconds(1));
  const auto t0 = RefreshGate<std::int64_t>::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(gate.due(std::int64_t{4}, t0));
  EXPECT_FALSE(gate.due(std::int64_t{4}, t0 + std::chrono::milliseconds(10)));
  EXPECT_TRUE(gate.due(std::int64_t{5}, t0 + std::chrono::milliseconds(20))) << "the mark moved";
  EXPECT_FALSE(gate.due(std::nullopt, t0 + std::chrono::milliseconds(30))) << "no mark is no move";
  EXPECT_TRUE(gate.due(std::int64_t{5}, t0 + std::chrono::milliseconds(30), true)) << "forced";
  EXPECT_FALSE(gate.due(std::int64_t{5}, t0 + std::chrono::milliseconds(1029)));
  EXPECT_TRUE(gate.due(std::int64_t{5}, t0 + std::chrono::milliseconds(1030)))
      << "a period after the last read";
  RefreshGate<std::int64_t> unmarked(std::chrono::seconds(1));
  EXPECT_TRUE(unmarked.due(std::nullopt, t0)) << "the first call reads, mark or not";
  EXPECT_FALSE(unmarked.due(std::nullopt, t0 + std::chrono::milliseconds(999)));
}

TEST(StoreErrors, FromStoreSpeaksOfTheRequest) {
  const Error down = from_store(Error::unavailable("database is locked"));
  EXPECT_EQ(down.kind, Kind::unavailable);
  EXPECT_EQ(down.detail, "store unavailable: database is locked");

  const Error host = from_store(Error::invalid("host", "host h9 is not registered"));
  EXPECT_EQ(host.kind, Kind::unprocessable);
  EXPECT_EQ(host.field(), "host");
  EXPECT_EQ(host.detail, "host h9 is not registered");

  const Error body = from_store(Error::invalid("", "bad"));
  EXPECT_EQ(body.kind, Kind::invalid);
  EXPECT_EQ(field_names(body), (std::vector<std::string>{"body"}));

  const Error cidr = from_store(Error::invalid("cidr", "overlaps"));
  EXPECT_EQ(cidr.kind, Kind::invalid);
  EXPECT_EQ(cidr.field(), "cidr");
  const Error taken = from_store(Error::conflict("name", "exists"));
  EXPECT_EQ(taken.kind, Kind::conflict);
  EXPECT_EQ(taken.field(), "name");
}

TEST(StoreErrors, ProblemDocumentsAreTheOnesTheApiAnswered) {
  // The answers the handlers gave before the stores returned hsns::Error.
  auto same = [](const Problem& a, const Problem& b) { EXPECT_EQ(a.to_json(), b.to_json()); };
  same(http::to_problem(from_store(Error::not_found("no subnet"))), Problem::not_found("no subnet"));
  same(http::to_problem(from_store(Error::conflict("name", "exists"))), Problem::conflict("name", "exists"));
  same(http::to_problem(from_store(Error::conflict("", "constraint violated: x"))),
       Problem::conflict("", "constraint violated: x"));
  same(http::to_problem(from_store(Error::invalid("npu", "no NPU 3"))),
       Problem::unprocessable("npu", "no NPU 3"));
  same(http::to_problem(from_store(Error::invalid("", "bad"))), Problem::invalid("body", "bad"));
  same(http::to_problem(from_store(Error::invalid("ip_address", "in use"))),
       Problem::invalid("ip_address", "in use"));
  same(http::to_problem(from_store(Error::unavailable("disk full"))),
       Problem::unavailable("store unavailable: disk full"));
}

}  // namespace
}  // namespace hsns::services
