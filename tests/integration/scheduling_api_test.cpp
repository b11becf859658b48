// Topology search and job scheduling over REST against the real aggregator: generate a cluster, give its
// NPUs addresses through the network API, search, schedule the best candidate, see its NPUs allocated for
// later searches and schedules, conflicts, validation naming the field, a concurrent schedule race, the
// jobs surviving a restart, DELETE releasing the NPUs, and the choice of NPU addresses over several subnets
// with the refusal of schedules whose pairs share no subnet.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

// 8 hosts x 4 NPUs, 4 hosts per SU (2 SUs), 2 spines: host001..host008.
const json kCluster = {{"hosts", 8}, {"npus_per_host", 4}, {"hosts_per_su", 4}, {"spines_per_plane", 2}};

json model() {
  return {{"parameters", 1000000000}, {"layers", 8},      {"hidden", 2048},    {"heads", 16},
          {"seq_len", 2048},          {"micro_batch", 1}, {"global_batch", 64}};
}

// 8 ranks: two hosts of 4 NPUs.
json parallel() {
  return {{"tp", 4}, {"dp", 2}};
}

json search_body(int answers = 10) {
  return {{"model", model()}, {"parallel", parallel()}, {"answers", answers}};
}

json schedule_body(const std::string& name, const std::vector<std::string>& hosts) {
  return {{"job_name", name},        {"hosts", hosts},      {"model", model()}, {"parallel", parallel()},
          {"framework", "megatron"}, {"algorithm", "ring"}, {"ecmp_seeds", 2}};
}

HttpClient::Response post(HttpClient& c, const std::string& target, const json& body) {
  auto r = c.post(target, body.dump());
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : HttpClient::Response{};
}

json body_of(const HttpClient::Response& r) {
  return json::parse(r.body, nullptr, false);
}

// The first invalid_params name of a problem ("" when none).
std::string problem_field(const HttpClient::Response& r) {
  const auto j = body_of(r);
  if (!r.is_problem() || !j.contains("invalid_params") || j["invalid_params"].empty()) return "";
  return j["invalid_params"][0].value("name", "");
}

std::string host_name(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "host%03d", i);
  return buf;
}

// Generates the cluster and registers its hosts' NPUs, without ports.
void set_up_hosts(HttpClient& ops) {
  auto gen = post(ops, "/api/v1/topology/generate", kCluster);
  ASSERT_EQ(gen.status, 200) << gen.body;
  for (int h = 1; h <= 8; ++h) {
    json npus = json::array();
    for (int n = 0; n < 4; ++n) {
      char mac[32];
      std::snprintf(mac, sizeof mac, "02:00:00:00:%02x:%02x", h, n);
      npus.push_back({{"index", n}, {"netdev", "eth" + std::to_string(n)}, {"mac", mac}});
    }
    auto put = ops.put("/api/v1/hosts/" + host_name(h), json({{"npus", npus}}).dump());
    ASSERT_TRUE(put.has_value());
    ASSERT_EQ(put->status, 201) << put->body;
  }
}

// Generates the cluster and gives every NPU but host008's NPU 3 an address in 198.18.0.0/24.
void set_up_cluster(HttpClient& ops) {
  set_up_hosts(ops);
  if (::testing::Test::HasFatalFailure()) return;
  auto subnet = post(ops, "/api/v1/subnets", {{"name", "rdma"}, {"cidr", "198.18.0.0/24"}});
  ASSERT_EQ(subnet.status, 201) << subnet.body;
  const std::string subnet_id = body_of(subnet)["id"];
  for (int h = 1; h <= 8; ++h) {
    for (int n = 0; n < 4; ++n) {
      if (h == 8 && n == 3) continue;
      auto port = post(ops, "/api/v1/ports", {{"subnet_id", subnet_id}, {"host", host_name(h)}, {"npu", n}});
      ASSERT_EQ(port.status, 201) << port.body;
    }
  }
}

std::vector<std::string> candidate_hosts(const json& candidate) {
  std::vector<std::string> out;
  for (const auto& h : candidate["hosts"]) out.push_back(h["name"]);
  return out;
}

std::set<std::string> hosts_in_any_candidate(const json& result) {
  std::set<std::string> out;
  for (const auto& c : result["candidates"]) {
    for (const auto& h : c["hosts"]) out.insert(h["name"].get<std::string>());
  }
  return out;
}

json jobs_list(HttpClient& c) {
  auto r = c.get("/api/v1/jobs");
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  return body_of(*r);
}

TEST(SchedulingApi, SearchScheduleConflictDeleteAndRestart) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto viewer = agg.client(kViewerToken);
  auto sched = agg.client(kSchedulerToken);

  // No topology yet: 404 for search and schedule.
  EXPECT_EQ(post(sched, "/api/v1/topology/search", search_body()).status, 404);
  EXPECT_EQ(post(sched, "/api/v1/schedule", schedule_body("early", {"host001"})).status, 404);

  set_up_cluster(ops);

  // Search needs scheduler or operator (a POST; viewer and agent may only read).
  EXPECT_EQ(post(viewer, "/api/v1/topology/search", search_body()).status, 403);
  auto agent = agg.client(kAgentToken);
  EXPECT_EQ(post(agent, "/api/v1/topology/search", search_body()).status, 403);
  auto found = post(sched, "/api/v1/topology/search", search_body());
  ASSERT_EQ(found.status, 200) << found.body;
  const json result = body_of(found);
  EXPECT_EQ(result["hosts_needed"], 2);
  EXPECT_EQ(result["npus_per_host_used"], 4);
  EXPECT_EQ(result["usable_hosts"], 8);
  ASSERT_FALSE(result["candidates"].empty());
  const json best = result["candidates"][0];
  EXPECT_EQ(best["rank"], 1);
  EXPECT_EQ(best["hosts"].size(), 2u);
  EXPECT_EQ(best["hosts"][0]["npus"], json::array({0, 1, 2, 3}));
  EXPECT_EQ(best["job_span"], "leaf");
  EXPECT_GT(best["total_seconds"].get<double>(), 0);
  for (const char* d : {"tp", "pp", "dp", "ep", "cp"}) {
    EXPECT_TRUE(best["dimension_seconds"].contains(d)) << d;
    EXPECT_TRUE(best["span"].contains(d)) << d;
  }
  EXPECT_TRUE(best["fragmentation"].contains("stranded_free_npus"));
  EXPECT_FALSE(best["explanation"].get<std::string>().empty());
  const auto job_hosts = candidate_hosts(best);

  // Schedule needs scheduler or operator.
  EXPECT_EQ(post(viewer, "/api/v1/schedule", schedule_body("train-a", job_hosts)).status, 403);

  auto scheduled = post(sched, "/api/v1/schedule", schedule_body("train-a", job_hosts));
  ASSERT_EQ(scheduled.status, 201) << scheduled.body;
  EXPECT_EQ(scheduled.location, "/api/v1/jobs/train-a");
  const json s = body_of(scheduled);
  EXPECT_EQ(s["job_name"], "train-a");
  EXPECT_EQ(s["world_size"], 8);
  EXPECT_EQ(s["npus_per_host"], 4);
  ASSERT_EQ(s["placement"]["ranks"].size(), 8u);
  std::set<std::string> ips;
  for (const auto& r : s["placement"]["ranks"]) {
    const std::string ip = r["ip"];
    EXPECT_EQ(ip.rfind("198.18.0.", 0), 0u) << ip;
    ips.insert(ip);
  }
  EXPECT_EQ(ips.size(), 8u);
  EXPECT_TRUE(s["hccl_json"].is_object());
  EXPECT_EQ(s["hccl_json"]["server_count"], "2");
  EXPECT_NE(s["hostfile"].get<std::string>().find("slots=4"), std::string::npos);
  ASSERT_EQ(s["torchrun"].size(), 2u);
  EXPECT_NE(s["torchrun"][0]["env"].get<std::string>().find("WORLD_SIZE=8"), std::string::npos);
  EXPECT_TRUE(s["placement"]["groups"].contains("tp"));
  EXPECT_EQ(s["placement"]["widest_span"]["tp"], "host");
  const auto& plan = s["route_plan"];
  EXPECT_TRUE(plan["modelled"].is_boolean());
  EXPECT_TRUE(plan["predicted_seconds"].contains("ecmp_mean"));
  EXPECT_EQ(plan["multiqp_cfg"].get<std::string>().empty(), plan["pairs"].empty());

  // The job is registered.
  const json jobs = jobs_list(viewer);
  ASSERT_EQ(jobs["items"].size(), 1u);
  EXPECT_EQ(jobs["items"][0]["name"], "train-a");
  EXPECT_EQ(jobs["items"][0]["npus"], 8);
  auto job = viewer.get("/api/v1/jobs/train-a");
  ASSERT_EQ(job->status, 200) << job->body;
  const json j = body_of(*job);
  ASSERT_EQ(j["ranks"].size(), 8u);
  EXPECT_EQ(j["ranks"][0]["rank"], 0);
  EXPECT_EQ(j["request"]["job_name"], "train-a");
  EXPECT_EQ(j["schedule"]["world_size"], 8);

  // Later searches never offer the allocated hosts.
  auto again = post(sched, "/api/v1/topology/search", search_body(50));
  ASSERT_EQ(again.status, 200) << again.body;
  const json again_result = body_of(again);
  EXPECT_EQ(again_result["usable_hosts"], 6);
  const auto offered = hosts_in_any_candidate(again_result);
  EXPECT_FALSE(offered.empty());
  for (const auto& h : job_hosts) EXPECT_FALSE(offered.contains(h)) << h;
  // Nor does a named resource list.
  auto named =
      post(sched, "/api/v1/topology/search",
           json({{"model", model()}, {"parallel", parallel()}, {"resources", {{"hosts", job_hosts}}}}));
  EXPECT_EQ(named.status, 422) << named.body;
  EXPECT_EQ(problem_field(named).rfind("resources", 0), 0u) << named.body;

  // Overlap: 409 naming the host; a taken name: 409 on job_name.
  std::vector<std::string> other;
  for (int h = 1; h <= 8 && other.size() < 2; ++h) {
    if (std::find(job_hosts.begin(), job_hosts.end(), host_name(h)) == job_hosts.end() && h != 8) {
      other.push_back(host_name(h));
    }
  }
  auto overlap = post(sched, "/api/v1/schedule", schedule_body("train-b", {other[0], job_hosts[1]}));
  EXPECT_EQ(overlap.status, 409) << overlap.body;
  EXPECT_EQ(problem_field(overlap), "hosts[1]") << overlap.body;
  EXPECT_NE(body_of(overlap)["detail"].get<std::string>().find("train-a"), std::string::npos);
  auto taken = post(ops, "/api/v1/schedule", schedule_body("train-a", other));
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(problem_field(taken), "job_name");

  // A used NPU without a port address: 422 naming it as the library does.
  const std::string free_host = other[0];
  auto no_ip = post(sched, "/api/v1/schedule", schedule_body("train-c", {free_host, "host008"}));
  EXPECT_EQ(no_ip.status, 422) << no_ip.body;
  EXPECT_EQ(problem_field(no_ip), "npu_ips[host008:3]") << no_ip.body;

  // Library rules: 422 naming the field.
  json bad_tp = schedule_body("train-d", other);
  bad_tp["parallel"] = {{"tp", 8}};
  auto tp422 = post(sched, "/api/v1/schedule", bad_tp);
  EXPECT_EQ(tp422.status, 422) << tp422.body;
  EXPECT_FALSE(problem_field(tp422).empty()) << tp422.body;
  json bad_search = search_body();
  bad_search["npus"] = 12;
  auto s422 = post(sched, "/api/v1/topology/search", bad_search);
  EXPECT_EQ(s422.status, 422) << s422.body;
  EXPECT_EQ(problem_field(s422), "npus") << s422.body;

  // Stateless validation: 400 naming the field.
  struct Bad {
    std::string target;
    json body;
    std::string field;
  };
  json unknown = schedule_body("x", other);
  unknown["colour"] = "red";
  json heads = search_body();
  heads["model"]["heads"] = "16";
  json tp0 = search_body();
  tp0["parallel"]["tp"] = 0;
  json tier = search_body();
  tier["constraints"] = {{"max_tier", "rack"}};
  json bad_name = schedule_body("-bad/name", other);
  json algo = schedule_body("y", other);
  algo["algorithm"] = "butterfly";
  json hash = schedule_body("z", other);
  hash["ecmp_hash"] = {{"fields", {"src_ip", "vlan"}}};
  json twice = schedule_body("w", {other[0], other[0]});
  json missing = search_body();
  missing["model"].erase("layers");
  const std::vector<Bad> bad = {
      {"/api/v1/schedule", unknown, "colour"},
      {"/api/v1/topology/search", heads, "model.heads"},
      {"/api/v1/topology/search", tp0, "parallel.tp"},
      {"/api/v1/topology/search", tier, "constraints.max_tier"},
      {"/api/v1/schedule", bad_name, "job_name"},
      {"/api/v1/schedule", algo, "algorithm"},
      {"/api/v1/schedule", hash, "ecmp_hash.fields[1]"},
      {"/api/v1/schedule", twice, "hosts[1]"},
      {"/api/v1/topology/search", missing, "model.layers"},
  };
  for (const auto& b : bad) {
    auto r = post(sched, b.target, b.body);
    EXPECT_EQ(r.status, 400) << b.field << ": " << r.body;
    EXPECT_EQ(problem_field(r), b.field) << r.body;
  }
  auto not_json = sched.request("POST", "/api/v1/schedule", "{", "application/json");
  EXPECT_EQ(not_json->status, 400);
  auto bad_path = sched.del("/api/v1/jobs/bad%2Fname");
  EXPECT_EQ(bad_path->status, 400);
  EXPECT_EQ(problem_field(*bad_path), "name");

  // Nothing of the rejected requests was stored.
  EXPECT_EQ(jobs_list(viewer)["items"].size(), 1u);

  // Restart keeps the job and its allocation.
  ASSERT_EQ(agg.stop(), 0);
  agg.start();
  auto viewer2 = agg.client(kViewerToken);
  auto sched2 = agg.client(kSchedulerToken);

  auto kept = viewer2.get("/api/v1/jobs/train-a");
  ASSERT_EQ(kept->status, 200) << kept->body;
  EXPECT_EQ(body_of(*kept)["ranks"], j["ranks"]);
  auto after = post(sched2, "/api/v1/topology/search", search_body(50));
  ASSERT_EQ(after.status, 200);
  for (const auto& h : job_hosts) EXPECT_FALSE(hosts_in_any_candidate(body_of(after)).contains(h)) << h;

  // DELETE releases the NPUs: the same search ranks the same best candidate again.
  EXPECT_EQ(viewer2.del("/api/v1/jobs/train-a")->status, 403);
  auto deleted = sched2.del("/api/v1/jobs/train-a");
  EXPECT_EQ(deleted->status, 204) << deleted->body;
  EXPECT_EQ(sched2.del("/api/v1/jobs/train-a")->status, 404);
  EXPECT_EQ(viewer2.get("/api/v1/jobs/train-a")->status, 404);
  EXPECT_TRUE(jobs_list(viewer2)["items"].empty());
  auto freed = post(sched2, "/api/v1/topology/search", search_body());
  ASSERT_EQ(freed.status, 200);
  EXPECT_EQ(body_of(freed)["usable_hosts"], 8);
  EXPECT_EQ(candidate_hosts(body_of(freed)["candidates"][0]), job_hosts);
  // And the hosts can be scheduled again.
  auto reuse = post(sched2, "/api/v1/schedule", schedule_body("train-e", job_hosts));
  EXPECT_EQ(reuse.status, 201) << reuse.body;
}

TEST(SchedulingApi, PartialHostsShareAndConcurrentSchedulesNeverShareAnNpu) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  set_up_cluster(ops);

  // Two NPUs per host: two jobs can share host001/host002, a third cannot.
  auto half = [](const std::string& name) {
    json b = schedule_body(name, {"host001", "host002"});
    b["npus_per_host"] = 2;
    b["parallel"] = {{"tp", 2}, {"dp", 2}};
    return b;
  };
  auto a = post(ops, "/api/v1/schedule", half("half-a"));
  ASSERT_EQ(a.status, 201) << a.body;
  auto b = post(ops, "/api/v1/schedule", half("half-b"));
  ASSERT_EQ(b.status, 201) << b.body;
  EXPECT_EQ(body_of(a)["placement"]["hosts"][0]["npus"], json::array({0, 1}));
  EXPECT_EQ(body_of(b)["placement"]["hosts"][0]["npus"], json::array({2, 3}));
  auto c = post(ops, "/api/v1/schedule", half("half-c"));
  EXPECT_EQ(c.status, 409) << c.body;
  EXPECT_EQ(problem_field(c), "hosts[0]");
  // npus_per_host 0 (every free NPU) on a host a job uses: 409.
  auto all = post(ops, "/api/v1/schedule", schedule_body("all", {"host001", "host003"}));
  EXPECT_EQ(all.status, 409) << all.body;

  // Race: 8 clients schedule different jobs on the same two free hosts at once; exactly one wins.
  constexpr int kClients = 8;
  std::vector<int> status(kClients, 0);
  std::vector<std::string> fields(kClients);
  {
    std::vector<std::thread> threads;
    threads.reserve(kClients);
    std::atomic<int> ready{0};
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        auto client = agg.client(kSchedulerToken);
        ready.fetch_add(1);
        while (ready.load() < kClients) std::this_thread::yield();
        auto r = client.post("/api/v1/schedule",
                             schedule_body("race-" + std::to_string(i), {"host005", "host006"}).dump());
        if (r) {
          status[i] = r->status;
          fields[i] = problem_field(*r);
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  int won = 0;
  for (int i = 0; i < kClients; ++i) {
    if (status[i] == 201) {
      ++won;
    } else {
      EXPECT_EQ(status[i], 409) << i;
      EXPECT_TRUE(fields[i] == "hosts[0]" || fields[i] == "hosts[1]") << fields[i];
    }
  }
  EXPECT_EQ(won, 1);

  // The store holds every NPU at most once.
  std::map<std::pair<std::string, int>, std::string> holder;
  const json all_jobs = jobs_list(ops);
  for (const auto& item : all_jobs["items"]) {
    auto job = ops.get("/api/v1/jobs/" + item["name"].get<std::string>());
    ASSERT_EQ(job->status, 200);
    const json job_body = body_of(*job);
    for (const auto& r : job_body["ranks"]) {
      auto [it, inserted] = holder.emplace(std::make_pair(r["host"].get<std::string>(), r["npu"].get<int>()),
                                           item["name"].get<std::string>());
      EXPECT_TRUE(inserted) << r.dump() << " also held by " << it->second;
    }
  }
  EXPECT_EQ(holder.size(), 4u + 4u + 8u);
}

// ---------------------------------------------------------------------------------------------------
// Subnets and reachability: NPU addresses are chosen so that the job's pairs share a subnet where the
// ports allow it; a schedule whose pairs cannot reach each other is refused unless allow_unreachable.

std::string create_subnet(HttpClient& ops, const std::string& name, const std::string& cidr) {
  auto subnet = post(ops, "/api/v1/subnets", {{"name", name}, {"cidr", cidr}});
  EXPECT_EQ(subnet.status, 201) << subnet.body;
  return body_of(subnet).value("id", "");
}

void create_port(HttpClient& ops, const std::string& subnet_id, int host, int npu) {
  auto port = post(ops, "/api/v1/ports", {{"subnet_id", subnet_id}, {"host", host_name(host)}, {"npu", npu}});
  EXPECT_EQ(port.status, 201) << port.body;
}

// As scripts/demo.sh: even NPUs of every host in rail-even (198.18.0.0/24), odd ones in rail-odd
// (198.18.1.0/24).
void create_rail_subnets(HttpClient& ops) {
  const std::string even = create_subnet(ops, "rail-even", "198.18.0.0/24");
  const std::string odd = create_subnet(ops, "rail-odd", "198.18.1.0/24");
  for (int h = 1; h <= 8; ++h) {
    for (int n = 0; n < 4; ++n) create_port(ops, n % 2 == 0 ? even : odd, h, n);
  }
}

json job_body(const std::string& name, const std::vector<std::string>& hosts, const json& par,
              const std::string& algorithm) {
  json b = schedule_body(name, hosts);
  b["parallel"] = par;
  b["algorithm"] = algorithm;
  return b;
}

// rank -> ip of a Schedule answer.
std::vector<std::string> rank_ips(const json& schedule) {
  std::vector<std::string> out;
  for (const auto& r : schedule["placement"]["ranks"]) out.push_back(r["ip"]);
  return out;
}

std::vector<std::string> param_names(const json& problem) {
  std::vector<std::string> out;
  for (const auto& p : problem.value("invalid_params", json::array())) out.push_back(p.value("name", ""));
  return out;
}

std::string param_reason(const json& problem, const std::string& name) {
  for (const auto& p : problem.value("invalid_params", json::array())) {
    if (p.value("name", "") == name) return p.value("reason", "");
  }
  return "";
}

TEST(SchedulingApi, RailSubnetsAcceptRailAlignedJobsAndRefuseCrossRailPairs) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto sched = agg.client(kSchedulerToken);
  set_up_hosts(ops);
  create_rail_subnets(ops);

  // TP inside each host, DP (halving-doubling) and PP across hosts: every inter-host pair joins NPUs of
  // one local position, i.e. of one rail subnet.
  auto aligned = post(sched, "/api/v1/schedule",
                      job_body("aligned", {"host001", "host002", "host003", "host004"},
                               {{"tp", 4}, {"dp", 2}, {"pp", 2}}, "halving-doubling"));
  ASSERT_EQ(aligned.status, 201) << aligned.body;
  const json a = body_of(aligned);
  EXPECT_EQ(a["route_plan"]["unreachable_pairs"], 0);
  EXPECT_FALSE(a["route_plan"]["pairs"].empty());
  for (const auto& r : a["placement"]["ranks"]) {
    const std::string want = r["npu"].get<int>() % 2 == 0 ? "198.18.0." : "198.18.1.";
    EXPECT_EQ(r["ip"].get<std::string>().rfind(want, 0), 0u) << r.dump();
  }

  // A ring over every NPU of two hosts (tp 1) joins local rank 3 of one host to local rank 0 of the
  // next: rail-odd to rail-even.
  auto ring = post(sched, "/api/v1/schedule", job_body("ring", {"host007", "host008"}, {{"dp", 8}}, "ring"));
  ASSERT_EQ(ring.status, 422) << ring.body;
  const json rp = body_of(ring);
  EXPECT_EQ(problem_field(ring), "hosts") << ring.body;
  EXPECT_EQ(param_names(rp), (std::vector<std::string>{"hosts", "ranks[0,7]", "ranks[3,4]"})) << ring.body;
  EXPECT_NE(rp["detail"].get<std::string>().find("2 of the route plan's 2 inter-host NPU pairs"),
            std::string::npos)
      << ring.body;

  // Halving-doubling DP across hosts whose used NPUs sit on different rails: a one-NPU job holds NPU 0 of
  // host006, so host006 runs the job on NPUs 1 and 2 (odd, even) while host005 uses 0 and 1 (even, odd);
  // the DP partners (rank r and r xor 2) are on different rails.
  auto pin = post(sched, "/api/v1/schedule", [] {
    json b = job_body("pin", {"host006"}, {{"tp", 1}}, "ring");
    b["npus_per_host"] = 1;
    return b;
  }());
  ASSERT_EQ(pin.status, 201) << pin.body;
  EXPECT_EQ(body_of(pin)["route_plan"]["unreachable_pairs"], 0);
  json hd = job_body("hd", {"host005", "host006"}, {{"dp", 4}}, "halving-doubling");
  hd["npus_per_host"] = 2;
  auto refused = post(sched, "/api/v1/schedule", hd);
  ASSERT_EQ(refused.status, 422) << refused.body;
  const json p = body_of(refused);
  EXPECT_EQ(problem_field(refused), "hosts");
  EXPECT_EQ(param_names(p), (std::vector<std::string>{"hosts", "ranks[0,2]", "ranks[1,3]"})) << refused.body;
  const std::string detail = p["detail"];
  EXPECT_NE(detail.find("4 of the route plan's 4 inter-host NPU pairs"), std::string::npos) << detail;
  EXPECT_NE(detail.find("allow_unreachable"), std::string::npos) << detail;
  const std::string why = param_reason(p, "ranks[0,2]");
  EXPECT_NE(why.find("rank 0 (host005 NPU 0, 198.18.0."), std::string::npos) << why;
  EXPECT_NE(why.find("subnet rail-even) and rank 2 (host006 NPU 1, 198.18.1."), std::string::npos) << why;
  EXPECT_NE(why.find("subnet rail-odd) exchange DP traffic"), std::string::npos) << why;

  // Nothing of the refused requests was registered.
  std::vector<std::string> names;
  const json registered = jobs_list(sched);
  for (const auto& j : registered["items"]) names.push_back(j["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"aligned", "pin"}));

  // allow_unreachable registers it anyway and says how many pairs cannot reach each other.
  hd["allow_unreachable"] = true;
  auto allowed = post(sched, "/api/v1/schedule", hd);
  ASSERT_EQ(allowed.status, 201) << allowed.body;
  const json h = body_of(allowed);
  EXPECT_EQ(h["route_plan"]["unreachable_pairs"], 4);
  EXPECT_EQ(h["route_plan"]["pairs"].size(), 4u);
  EXPECT_EQ(h["placement"]["hosts"][1]["npus"], json::array({1, 2}));
  auto job = sched.get("/api/v1/jobs/hd");
  ASSERT_EQ(job->status, 200) << job->body;
  EXPECT_EQ(body_of(*job)["request"]["allow_unreachable"], true);
  auto bad = post(sched, "/api/v1/schedule", [&] {
    json b = hd;
    b["job_name"] = "hd2";
    b["allow_unreachable"] = "yes";
    return b;
  }());
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(problem_field(bad), "allow_unreachable");
}

TEST(SchedulingApi, SubnetsSpanningTheJobOrItsRailsAreChosen) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto sched = agg.client(kSchedulerToken);
  set_up_hosts(ops);
  create_rail_subnets(ops);
  // tenant-all holds a port of every NPU of host001..host004; its name sorts after the rail subnets.
  const std::string all = create_subnet(ops, "tenant-all", "198.19.0.0/24");
  for (int h = 1; h <= 4; ++h) {
    for (int n = 0; n < 4; ++n) create_port(ops, all, h, n);
  }
  // a-partial holds host005's NPUs only; its name sorts first.
  const std::string partial = create_subnet(ops, "a-partial", "198.20.0.0/24");
  for (int n = 0; n < 4; ++n) create_port(ops, partial, 5, n);

  // A ring with cross-rail pairs (as in the test above), on hosts tenant-all spans: every address is
  // tenant-all's, so every pair reaches its partner.
  auto spanned =
      post(sched, "/api/v1/schedule", job_body("spanned", {"host001", "host002"}, {{"dp", 8}}, "ring"));
  ASSERT_EQ(spanned.status, 201) << spanned.body;
  const json s = body_of(spanned);
  EXPECT_EQ(s["route_plan"]["unreachable_pairs"], 0);
  for (const auto& ip : rank_ips(s)) EXPECT_EQ(ip.rfind("198.19.0.", 0), 0u) << ip;
  for (const auto& pair : s["route_plan"]["pairs"]) {
    EXPECT_EQ(pair["src_ip"].get<std::string>().rfind("198.19.0.", 0), 0u) << pair.dump();
  }

  // host005 and host006 share no subnet but each rail's: rail-even for local ranks 0 and 2, rail-odd for
  // 1 and 3 (the first subnet by name would give host005 a-partial addresses nothing else reaches).
  auto railed = post(sched, "/api/v1/schedule",
                     job_body("railed", {"host005", "host006"}, {{"tp", 4}, {"dp", 2}}, "ring"));
  ASSERT_EQ(railed.status, 201) << railed.body;
  const json r = body_of(railed);
  EXPECT_EQ(r["route_plan"]["unreachable_pairs"], 0);
  for (const auto& rank : r["placement"]["ranks"]) {
    const std::string want = rank["npu"].get<int>() % 2 == 0 ? "198.18.0." : "198.18.1.";
    EXPECT_EQ(rank["ip"].get<std::string>().rfind(want, 0), 0u) << rank.dump();
  }

  // tenant-all does not span host007: the rails are used, and the ring's cross-rail pairs are refused.
  auto mixed =
      post(sched, "/api/v1/schedule", job_body("mixed", {"host003", "host007"}, {{"dp", 8}}, "ring"));
  ASSERT_EQ(mixed.status, 422) << mixed.body;
  EXPECT_EQ(problem_field(mixed), "hosts");
  // host004 is in tenant-all, host007 is not: the rails again, and a rail-aligned job is accepted.
  auto other = post(sched, "/api/v1/schedule",
                    job_body("other", {"host004", "host007"}, {{"tp", 4}, {"dp", 2}}, "ring"));
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(body_of(other)["route_plan"]["unreachable_pairs"], 0);
  for (const auto& ip : rank_ips(body_of(other))) EXPECT_EQ(ip.rfind("198.18.", 0), 0u) << ip;
}

TEST(SchedulingApi, UnreachableRankPairsAreListedUpToEight) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  set_up_hosts(ops);
  create_rail_subnets(ops);
  // One-NPU jobs on host002, host003, host006 and host007 shift those hosts' local ranks by one rail.
  for (const char* host : {"host002", "host003", "host006", "host007"}) {
    json pin = job_body(std::string("pin-") + host, {host}, {{"tp", 1}}, "ring");
    pin["npus_per_host"] = 1;
    auto r = post(ops, "/api/v1/schedule", pin);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Halving-doubling over 8 hosts x 2 NPUs: of the 48 inter-host ordered pairs (partners r xor 2, 4, 8),
  // those between a shifted and an unshifted host (r xor 2 and r xor 4) cross rails: 32 ordered pairs,
  // 16 rank pairs, of which the first 8 are listed.
  std::vector<std::string> hosts;
  for (int h = 1; h <= 8; ++h) hosts.push_back(host_name(h));
  json hd = job_body("wide", hosts, {{"dp", 16}}, "halving-doubling");
  hd["npus_per_host"] = 2;
  auto refused = post(ops, "/api/v1/schedule", hd);
  ASSERT_EQ(refused.status, 422) << refused.body;
  const json p = body_of(refused);
  EXPECT_EQ(param_names(p),
            (std::vector<std::string>{"hosts", "ranks[0,2]", "ranks[0,4]", "ranks[1,3]", "ranks[1,5]",
                                      "ranks[2,6]", "ranks[3,7]", "ranks[4,6]", "ranks[5,7]"}))
      << refused.body;
  const std::string detail = p["detail"];
  EXPECT_NE(detail.find("32 of the route plan's 48 inter-host NPU pairs"), std::string::npos) << detail;
  EXPECT_NE(detail.find("invalid_params lists 8 of the 16 rank pairs"), std::string::npos) << detail;
  EXPECT_EQ(jobs_list(ops)["items"].size(), 4u);
}

// Search honours switch states set through PATCH /api/v1/topology/devices (a host behind an allocated leaf
// is never offered, and explain says why), takes a calibration, and runs one algorithm per dimension or
// falls back (and says so) where an algorithm cannot run an operation.
TEST(SchedulingApi, SearchHonoursSwitchStatesExplainsAndTakesCalibrationAndAlgorithms) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto sched = agg.client(kSchedulerToken);
  set_up_hosts(ops);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  // leaf002: rail 2 of SU 0 (host001..host004).
  auto patched = ops.patch("/api/v1/topology/devices/leaf002", R"({"state":"allocated"})");
  ASSERT_TRUE(patched.has_value());
  ASSERT_EQ(patched->status, 200) << patched->body;
  json body = search_body(50);
  body["explain"] = true;
  auto found = post(sched, "/api/v1/topology/search", body);
  ASSERT_EQ(found.status, 200) << found.body;
  const json result = body_of(found);
  EXPECT_EQ(result["usable_hosts"], 4);
  ASSERT_FALSE(result["candidates"].empty());
  for (const auto& h : hosts_in_any_candidate(result)) EXPECT_GE(h, "host005") << h;
  ASSERT_TRUE(result.contains("left_out")) << result.dump();
  EXPECT_EQ(result["left_out"]["counts"]["switch_state"], 4);
  EXPECT_EQ(result["left_out"]["counts"]["host_state"], 0);
  ASSERT_EQ(result["left_out"]["examples"].size(), 4u);
  EXPECT_EQ(result["left_out"]["examples"][0],
            json({{"host", "host001"}, {"kind", "switch_state"}, {"reason", "leaf leaf002 is allocated"}}));
  // Without explain, no report.
  auto plain = post(sched, "/api/v1/topology/search", search_body());
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_FALSE(body_of(plain).contains("left_out"));
  // Healthy again: the hosts come back.
  ASSERT_EQ(ops.patch("/api/v1/topology/devices/leaf002", R"({"state":"healthy"})")->status, 200);
  auto back = post(sched, "/api/v1/topology/search", search_body());
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(body_of(back)["usable_hosts"], 8);
  const double default_seconds = body_of(back)["candidates"][0]["total_seconds"];

  // calibration: the documented field, as the library takes it; slower tiers, a slower answer.
  json slow = search_body();
  slow["calibration"] = {
      {"tiers",
       {{{"name", "host"}, {"alpha_us", 2.0}, {"bandwidth_gbps", 800}},
        {{"name", "leaf"}, {"alpha_us", 5.0}, {"bandwidth_gbps", 100}},
        {{"name", "spine"}, {"alpha_us", 8.0}, {"bandwidth_gbps", 100}, {"oversubscription", 2}}}}};
  auto calibrated = post(sched, "/api/v1/topology/search", slow);
  ASSERT_EQ(calibrated.status, 200) << calibrated.body;
  EXPECT_GT(body_of(calibrated)["candidates"][0]["total_seconds"].get<double>(), default_seconds);
  json bad_cal = search_body();
  bad_cal["calibration"] = {{"tiers", {{{"name", "host"}, {"alpha_us", 1.0}, {"bandwidth_gbps", 0}}}}};
  auto refused = post(sched, "/api/v1/topology/search", bad_cal);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(problem_field(refused), "calibration.tiers[0].bandwidth_gbps") << refused.body;

  // tree cannot run sequence parallel's all-gather / reduce-scatter: those operations fall back, the
  // search answers and says so; one algorithm per dimension needs no fallback.
  json sp = search_body();
  sp["parallel"]["sequence_parallel"] = true;
  sp["algorithm"] = "tree";
  auto tree = post(sched, "/api/v1/topology/search", sp);
  ASSERT_EQ(tree.status, 200) << tree.body;
  ASSERT_FALSE(body_of(tree)["algorithm_notes"].empty()) << tree.body;
  EXPECT_NE(body_of(tree)["algorithm_notes"][0].get<std::string>().find("tree cannot run it"),
            std::string::npos);
  sp["algorithm"] = {{"tp", "ring"}, {"dp", "tree"}};
  auto per_dim = post(sched, "/api/v1/topology/search", sp);
  ASSERT_EQ(per_dim.status, 200) << per_dim.body;
  EXPECT_TRUE(body_of(per_dim)["algorithm_notes"].empty()) << per_dim.body;
  sp["algorithm"] = {{"xx", "ring"}};
  auto unknown = post(sched, "/api/v1/topology/search", sp);
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(problem_field(unknown), "algorithm.xx") << unknown.body;
}

}  // namespace
}  // namespace hsns::testing
