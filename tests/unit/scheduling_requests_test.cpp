// Parsing of the search and schedule request bodies (aggregator/api/scheduling/requests.h) and the SQLite job
// store (store/job_store.h): defaults, every field path in errors, NPU exclusivity under concurrency.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "api/scheduling/requests.h"
#include "store/database.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_topology_store.h"
#include "support/temp_dir.h"

namespace hsns::scheduling_api {
namespace {

using nlohmann::json;

json model() {
  return {{"parameters", 1000000000}, {"layers", 8},      {"hidden", 2048},    {"heads", 16},
          {"seq_len", 2048},          {"micro_batch", 1}, {"global_batch", 64}};
}

std::vector<std::string> field_names(const Problem& p) {
  std::vector<std::string> out;
  for (const auto& i : p.invalid_params) out.push_back(i.name);
  return out;
}

TEST(SearchRequestParse, MinimalBodyGetsTheLibraryDefaults) {
  auto r = parse_search_request({{"model", model()}, {"parallel", json::object()}});
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->model.parameters, 1000000000u);
  EXPECT_EQ(r->model.hidden, 2048u);
  EXPECT_EQ(r->model.seq_len, 2048u);
  EXPECT_EQ(r->model.dtype_bytes, 2u);
  EXPECT_EQ(r->parallel.tp, 1u);
  EXPECT_EQ(r->parallel.virtual_stages, 1u);
  EXPECT_EQ(r->npus, 0u);
  EXPECT_EQ(r->answers, 3u);
  EXPECT_EQ(r->constraints.max_tier, search::Tier::kCore);
  EXPECT_EQ(r->algorithm, cost::Algorithm::automatic);
}

TEST(SearchRequestParse, EveryFieldIsRead) {
  json m = model();
  m["kv_heads"] = 4;
  m["dtype_bytes"] = 4;
  m["moe_experts"] = 8;
  m["moe_top_k"] = 2;
  const json body = {{"model", m},
                     {"parallel",
                      {{"tp", 2},
                       {"pp", 2},
                       {"dp", 4},
                       {"cp", 1},
                       {"ep", 2},
                       {"zero_stage", 1},
                       {"sequence_parallel", true},
                       {"virtual_stages", 2}}},
                     {"npus", 16},
                     {"npus_per_host", 8},
                     {"resources", {{"hosts", {"a", "b"}}}},
                     {"constraints", {{"max_tier", "spine"}, {"exclude_hosts", {"c"}}}},
                     {"answers", 7},
                     {"algorithm", "halving-doubling"}};
  auto r = parse_search_request(body);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->model.kv_heads, 4u);
  EXPECT_EQ(r->model.dtype_bytes, 4u);
  EXPECT_EQ(r->model.moe_top_k, 2u);
  EXPECT_EQ(r->parallel.ep, 2u);
  EXPECT_EQ(r->parallel.zero_stage, 1);
  EXPECT_TRUE(r->parallel.sequence_parallel);
  EXPECT_EQ(r->parallel.virtual_stages, 2u);
  EXPECT_EQ(r->npus, 16u);
  EXPECT_EQ(r->npus_per_host, 8u);
  EXPECT_EQ(r->resources.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->constraints.max_tier, search::Tier::kSpine);
  EXPECT_EQ(r->constraints.exclude_hosts, (std::vector<std::string>{"c"}));
  EXPECT_EQ(r->answers, 7u);
  EXPECT_EQ(r->algorithm, cost::Algorithm::halving_doubling);
}

TEST(SearchRequestParse, EveryBadFieldIsNamedWithItsPath) {
  json m = model();
  m["heads"] = 1.5;
  m.erase("layers");
  m["dtype_bytes"] = 3;
  m["color"] = 1;
  const json body = {{"model", m},
                     {"parallel", {{"tp", 0}, {"zero_stage", 4}, {"sequence_parallel", 1}}},
                     {"answers", 0},
                     {"constraints", {{"max_tier", "rack"}, {"exclude_hosts", {"a", 3, "a", ""}}}},
                     {"resources", {{"hosts", "a"}}},
                     {"algorithm", "butterfly"},
                     {"extra", true}};
  auto r = parse_search_request(body);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().status, 400);
  const auto names = field_names(r.error());
  for (const char* want :
       {"model.heads", "model.layers", "model.dtype_bytes", "model.color", "parallel.tp",
        "parallel.zero_stage", "parallel.sequence_parallel", "answers", "constraints.max_tier",
        "constraints.exclude_hosts[1]", "constraints.exclude_hosts[2]", "constraints.exclude_hosts[3]",
        "resources.hosts", "algorithm", "extra"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want << " in " << r.error().detail;
  }
}

TEST(SearchRequestParse, MissingModelAndWrongTypes) {
  auto r = parse_search_request({{"parallel", 3}});
  ASSERT_FALSE(r.has_value());
  const auto names = field_names(r.error());
  EXPECT_EQ(names, (std::vector<std::string>{"model", "parallel"}));
  auto big = parse_search_request({{"model", model()}, {"parallel", {{"tp", 1u << 21}}}});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(field_names(big.error()), (std::vector<std::string>{"parallel.tp"}));
  auto negative = parse_search_request({{"model", model()}, {"parallel", json::object()}, {"npus", -1}});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(field_names(negative.error()), (std::vector<std::string>{"npus"}));
}

json schedule_body() {
  return {{"job_name", "train-1"},
          {"hosts", {"host002", "host001"}},
          {"model", model()},
          {"parallel", {{"tp", 4}}}};
}

TEST(ScheduleRequestParse, DefaultsAndEveryField) {
  auto d = parse_schedule_request(schedule_body());
  ASSERT_TRUE(d.has_value()) << d.error().detail;
  EXPECT_EQ(d->job_name, "train-1");
  EXPECT_EQ(d->hosts, (std::vector<std::string>{"host002", "host001"}));
  EXPECT_EQ(d->framework, placement::Framework::megatron);
  EXPECT_EQ(d->algorithm, cost::Algorithm::automatic);
  EXPECT_EQ(d->qps_per_pair, 1u);
  EXPECT_EQ(d->ecmp_seeds, 10u);
  EXPECT_EQ(d->master_port, 29500);
  EXPECT_EQ(d->source_ports.first, 0xC000);
  EXPECT_EQ(d->source_ports.last, 0xFFFF);
  EXPECT_EQ(d->rank_table_version, placement::RankTableVersion::automatic);
  EXPECT_TRUE(d->ecmp_hash.fields.protocol);
  EXPECT_TRUE(d->npu_ips.empty());
  EXPECT_FALSE(d->allow_unreachable);

  json b = schedule_body();
  b["npus_per_host"] = 4;
  b["algorithm"] = "hierarchical";
  b["framework"] = "deepspeed";
  b["ecmp_hash"] = {{"fields", {"src_port", "dst_ip"}}, {"function", "crc32c"}, {"seed", 4294967295u}};
  b["source_ports"] = {{"first", 50000}, {"last", 50010}};
  b["qps_per_pair"] = 2;
  b["ecmp_seeds"] = 3;
  b["master_port"] = 1234;
  b["rank_table_version"] = "1.2";
  b["allow_unreachable"] = true;
  auto r = parse_schedule_request(b);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->npus_per_host, 4u);
  EXPECT_EQ(r->algorithm, cost::Algorithm::hierarchical);
  EXPECT_EQ(r->framework, placement::Framework::deepspeed);
  EXPECT_TRUE(r->ecmp_hash.fields.src_port);
  EXPECT_TRUE(r->ecmp_hash.fields.dst_ip);
  EXPECT_FALSE(r->ecmp_hash.fields.src_ip);
  EXPECT_FALSE(r->ecmp_hash.fields.protocol);
  EXPECT_EQ(r->ecmp_hash.function, cost::HashFunction::crc32c);
  EXPECT_EQ(r->ecmp_hash.seed, 4294967295u);
  EXPECT_EQ(r->source_ports.first, 50000);
  EXPECT_EQ(r->source_ports.last, 50010);
  EXPECT_EQ(r->qps_per_pair, 2u);
  EXPECT_EQ(r->ecmp_seeds, 3u);
  EXPECT_EQ(r->master_port, 1234);
  EXPECT_EQ(r->rank_table_version, placement::RankTableVersion::v1_2);
  EXPECT_TRUE(r->allow_unreachable);
}

TEST(ScheduleRequestParse, AllowUnreachableMustBeABoolean) {
  json off = schedule_body();
  off["allow_unreachable"] = false;
  auto o = parse_schedule_request(off);
  ASSERT_TRUE(o.has_value()) << o.error().detail;
  EXPECT_FALSE(o->allow_unreachable);
  for (const json& bad : {json("true"), json(1), json::array({true})}) {
    json b = schedule_body();
    b["allow_unreachable"] = bad;
    auto r = parse_schedule_request(b);
    ASSERT_FALSE(r.has_value()) << bad.dump();
    EXPECT_EQ(r.error().status, 400);
    EXPECT_EQ(field_names(r.error()), (std::vector<std::string>{"allow_unreachable"})) << bad.dump();
  }
}

TEST(ScheduleRequestParse, EveryBadFieldIsNamedWithItsPath) {
  json b = schedule_body();
  b["job_name"] = "bad name";
  b["hosts"] = json::array();
  b["framework"] = "jax";
  b["ecmp_hash"] = {{"fields", {"src_ip", "src_ip", "vlan"}}, {"function", "md5"}, {"seed", -1}, {"x", 1}};
  b["source_ports"] = {{"first", 70000}};
  b["qps_per_pair"] = 0;
  b["ecmp_seeds"] = 101;
  b["master_port"] = 0;
  b["rank_table_version"] = "2.0";
  b["npu_ips"] = json::object();
  auto r = parse_schedule_request(b);
  ASSERT_FALSE(r.has_value());
  const auto names = field_names(r.error());
  for (const char* want :
       {"job_name", "hosts", "framework", "ecmp_hash.fields[1]", "ecmp_hash.fields[2]", "ecmp_hash.function",
        "ecmp_hash.seed", "ecmp_hash.x", "source_ports.first", "source_ports.last", "qps_per_pair",
        "ecmp_seeds", "master_port", "rank_table_version", "npu_ips"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want << " in " << r.error().detail;
  }
  json reversed = schedule_body();
  reversed["source_ports"] = {{"first", 9}, {"last", 8}};
  auto rev = parse_schedule_request(reversed);
  ASSERT_FALSE(rev.has_value());
  EXPECT_EQ(field_names(rev.error()), (std::vector<std::string>{"source_ports.last"}));
  json no_fields = schedule_body();
  no_fields["ecmp_hash"] = {{"fields", json::array()}};
  auto nf = parse_schedule_request(no_fields);
  ASSERT_FALSE(nf.has_value());
  EXPECT_EQ(field_names(nf.error()), (std::vector<std::string>{"ecmp_hash.fields"}));
}

TEST(ScheduleRequestParse, JobNames) {
  EXPECT_TRUE(valid_job_name("a"));
  EXPECT_TRUE(valid_job_name("Train_1.v2-final"));
  EXPECT_TRUE(valid_job_name(std::string(63, 'x')));
  EXPECT_FALSE(valid_job_name(std::string(64, 'x')));
  EXPECT_FALSE(valid_job_name(""));
  EXPECT_FALSE(valid_job_name("-a"));
  EXPECT_FALSE(valid_job_name(".a"));
  EXPECT_FALSE(valid_job_name("a/b"));
  EXPECT_FALSE(valid_job_name("a b"));
  EXPECT_FALSE(valid_job_name("a%2F"));
}

// ---------------------------------------------------------------------------------------------------
// SqliteJobStore

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    open();
    // The job store checks the topology revision: store one.
    store::SqliteTopologyStore topo(*db_);
    ASSERT_TRUE(topo.write_topology(0, std::string("version: 1\n"), "import", {}).has_value());
  }
  void TearDown() override {
    jobs_.reset();
    db_.reset();
  }
  void open() {
    jobs_.reset();
    db_.reset();
    store::DatabaseOptions o;
    o.path = (dir_ / "db.sqlite").string();
    db_ = std::make_unique<store::Database>(o);
    jobs_ = std::make_unique<store::SqliteJobStore>(*db_);
  }
  static store::JobRecord job(const std::string& name, const std::vector<std::pair<std::string, int>>& npus) {
    store::JobRecord r;
    r.name = name;
    r.topology_revision = 1;
    r.request = R"({"job_name":")" + name + R"("})";
    r.summary = R"({"framework":"megatron"})";
    std::uint32_t rank = 0;
    for (const auto& [host, npu] : npus) {
      r.ranks.push_back({rank, host, static_cast<std::uint32_t>(npu), "10.0.0." + std::to_string(rank + 1)});
      ++rank;
    }
    return r;
  }

  hsns::testing::TempDir tmp_{"hsns-jobs"};
  std::filesystem::path dir_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<store::SqliteJobStore> jobs_;
};

TEST_F(JobStoreTest, CreateGetListDeleteAndRevision) {
  EXPECT_EQ(*jobs_->jobs_revision(), 0);
  auto a = jobs_->create_job(job("a", {{"h1", 0}, {"h1", 1}, {"h2", 0}, {"h2", 1}}));
  ASSERT_TRUE(a.has_value()) << a.error().detail;
  EXPECT_FALSE(a->created_at.empty());
  EXPECT_EQ(*jobs_->jobs_revision(), 1);
  auto got = jobs_->get_job("a");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->hosts(), (std::vector<std::string>{"h1", "h2"}));
  ASSERT_EQ(got->ranks.size(), 4u);
  EXPECT_EQ(got->ranks[3].ip, "10.0.0.4");
  EXPECT_EQ(got->request, R"({"job_name":"a"})");
  EXPECT_EQ(got->topology_revision, 1);

  auto held = jobs_->allocations();
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->revision, 1);
  ASSERT_EQ(held->npus.size(), 4u);
  EXPECT_EQ(held->npus[0].job, "a");

  // Name taken, NPU held, topology moved: conflicts naming the field; nothing stored.
  auto dup = jobs_->create_job(job("a", {{"h9", 0}}));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().field(), "job_name");
  auto overlap = jobs_->create_job(job("b", {{"h3", 0}, {"h2", 1}}));
  ASSERT_FALSE(overlap.has_value());
  EXPECT_EQ(overlap.error().kind, store::StoreError::Kind::conflict);
  EXPECT_EQ(overlap.error().field(), "npus[h2:1]");
  EXPECT_NE(overlap.error().detail.find("'a'"), std::string::npos);
  auto stale = job("c", {{"h3", 0}});
  stale.topology_revision = 7;
  auto moved = jobs_->create_job(stale);
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().field(), "topology");
  EXPECT_EQ(jobs_->list_jobs()->size(), 1u);
  EXPECT_EQ(*jobs_->jobs_revision(), 1);

  ASSERT_TRUE(jobs_->create_job(job("b", {{"h3", 0}})).has_value());
  auto list = jobs_->list_jobs();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "a");
  EXPECT_EQ((*list)[1].ranks.size(), 1u);

  // Survives reopening.
  open();
  EXPECT_EQ(jobs_->list_jobs()->size(), 2u);
  EXPECT_EQ(*jobs_->jobs_revision(), 2);

  ASSERT_TRUE(jobs_->delete_job("a").has_value());
  EXPECT_EQ(jobs_->delete_job("a").error().kind, store::StoreError::Kind::not_found);
  EXPECT_EQ(jobs_->get_job("a").error().kind, store::StoreError::Kind::not_found);
  EXPECT_EQ(*jobs_->jobs_revision(), 3);
  EXPECT_EQ(jobs_->allocations()->npus.size(), 1u);
  // The released NPUs can be taken again.
  EXPECT_TRUE(jobs_->create_job(job("d", {{"h2", 1}})).has_value());
}

TEST_F(JobStoreTest, ConcurrentCreatesNeverShareAnNpu) {
  constexpr int kThreads = 8;
  std::atomic<int> ok{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      // Every job wants NPU 0 of h1 plus one NPU of its own.
      auto r =
          jobs_->create_job(job("j" + std::to_string(i), {{"h" + std::to_string(10 + i), 0}, {"h1", 0}}));
      if (r) {
        ok.fetch_add(1);
      } else if (r.error().kind == store::StoreError::Kind::conflict) {
        conflicts.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflicts.load(), kThreads - 1);
  EXPECT_EQ(jobs_->allocations()->npus.size(), 2u);
}

}  // namespace
}  // namespace hsns::scheduling_api
