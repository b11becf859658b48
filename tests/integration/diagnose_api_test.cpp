// Full-path diagnosis over REST against the real aggregator (api/diagnose/routes.h): a generated cluster,
// a job registered through the scheduling API, KPIs pushed with POST /api/v1/kpis so that one hop of the
// job's paths is degraded and another faulty; GET /api/v1/diagnose/path and /diagnose/job/{id} answer every
// hop with its KPIs and the verdicts the rules give, the planned paths of the job's pairs, ECMP candidates
// for NPUs outside it, and problems naming the parameter. The job's pairs carry the bytes of the flows its
// ranks' hosts reported (report batches posted through POST /api/v1/agents/{host}/reports) in the window.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "hsns/proto/report.h"
#include "support/aggregator_process.h"
#include "support/report_sample.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

std::string host_name(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "host%03d", i);
  return buf;
}

json body_of(const HttpClient::Response& r) {
  return json::parse(r.body, nullptr, false);
}

HttpClient::Response must(const tl::expected<HttpClient::Response, std::string>& r) {
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : HttpClient::Response{};
}

std::string problem_field(const HttpClient::Response& r) {
  const auto j = body_of(r);
  if (!j.contains("invalid_params") || j["invalid_params"].empty()) return "";
  return j["invalid_params"][0].value("name", "");
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 8 hosts x 4 NPUs, 4 hosts per SU (2 SUs), 2 spines; every NPU an address in one subnet; a job over
// host001 and host005 (different SUs: its DP pairs cross the spines).
void set_up(HttpClient& ops, HttpClient& sched) {
  auto gen = must(ops.post(
      "/api/v1/topology/generate",
      json({{"hosts", 8}, {"npus_per_host", 4}, {"hosts_per_su", 4}, {"spines_per_plane", 2}}).dump()));
  ASSERT_EQ(gen.status, 200) << gen.body;
  auto subnet = must(ops.post("/api/v1/subnets", json({{"name", "rdma"}, {"cidr", "198.18.0.0/24"}}).dump()));
  ASSERT_EQ(subnet.status, 201) << subnet.body;
  const std::string subnet_id = body_of(subnet)["id"];
  for (int h = 1; h <= 8; ++h) {
    json npus = json::array();
    for (int n = 0; n < 4; ++n) {
      char mac[32];
      std::snprintf(mac, sizeof mac, "02:00:00:00:%02x:%02x", h, n);
      npus.push_back({{"index", n}, {"netdev", "eth" + std::to_string(n)}, {"mac", mac}});
    }
    auto put = must(ops.put("/api/v1/hosts/" + host_name(h), json({{"npus", npus}}).dump()));
    ASSERT_EQ(put.status, 201) << put.body;
    for (int n = 0; n < 4; ++n) {
      auto port = must(ops.post("/api/v1/ports",
                                json({{"subnet_id", subnet_id}, {"host", host_name(h)}, {"npu", n}}).dump()));
      ASSERT_EQ(port.status, 201) << port.body;
    }
  }
  const json job = {{"job_name", "train-d"},
                    {"hosts", {"host001", "host005"}},
                    {"model",
                     {{"parameters", 1000000000},
                      {"layers", 8},
                      {"hidden", 2048},
                      {"heads", 16},
                      {"seq_len", 2048},
                      {"micro_batch", 1},
                      {"global_batch", 64}}},
                    {"parallel", {{"tp", 4}, {"dp", 2}}},
                    {"algorithm", "ring"},
                    {"qps_per_pair", 2},
                    {"ecmp_seeds", 2}};
  auto scheduled = must(sched.post("/api/v1/schedule", job.dump()));
  ASSERT_EQ(scheduled.status, 201) << scheduled.body;
}

json get_json(HttpClient& c, const std::string& target, int status = 200) {
  auto r = must(c.get(target));
  EXPECT_EQ(r.status, status) << target << ": " << r.body;
  return body_of(r);
}

// Pushes samples [(entity, metric, value)] stamped now.
void push(HttpClient& agent, const std::vector<std::tuple<std::string, std::string, double>>& samples) {
  json body = {{"samples", json::array()}};
  const auto ts = now_ms();
  for (const auto& [entity, metric, value] : samples)
    body["samples"].push_back({{"entity", entity}, {"metric", metric}, {"ts", ts}, {"value", value}});
  auto r = must(agent.post("/api/v1/kpis", body.dump()));
  ASSERT_EQ(r.status, 200) << r.body;
}

const json* hop_by_id(const json& doc, const std::string& id) {
  for (const auto& h : doc["hops"])
    if (h["id"] == id) return &h;
  return nullptr;
}

TEST(DiagnoseApi, JobAndPathVerdictsFollowPushedKpis) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto viewer = agg.client(kViewerToken);
  auto sched = agg.client(kSchedulerToken);
  auto agent = agg.client(kAgentToken);

  // No topology yet.
  EXPECT_EQ(must(viewer.get("/api/v1/diagnose/path?src=host001/eth0&dst=host005/eth0")).status, 404);
  set_up(ops, sched);
  if (HasFatalFailure()) return;

  // Before any KPI: every link hop unknown, the switches ok (healthy, no alarm).
  json job = get_json(viewer, "/api/v1/diagnose/job/train-d");
  EXPECT_EQ(job["job"], "train-d");
  EXPECT_EQ(job["ranks"], 8);
  EXPECT_TRUE(job["route_plan"]["used"].get<bool>()) << job["route_plan"].dump();
  EXPECT_EQ(job["verdict"], "unknown");
  // DP ring over two hosts: local rank i of host001 and of host005 exchange both ways.
  ASSERT_EQ(job["summary"]["pairs"], 8);
  EXPECT_FALSE(job["summary"]["pairs_truncated"].get<bool>());
  std::set<std::string> link_ends;
  for (const auto& h : job["hops"]) {
    if (h["kind"] == "link") {
      EXPECT_EQ(h["verdict"], "unknown") << h.dump();
      link_ends.insert(h["entities"][0].get<std::string>());
      link_ends.insert(h["entities"][1].get<std::string>());
    } else {
      EXPECT_EQ(h["verdict"], "ok") << h.dump();
    }
  }
  for (const auto& p : job["pairs"]) {
    EXPECT_TRUE(p["planned"].get<bool>()) << p.dump();
    EXPECT_GE(p["paths"].get<int>(), 1);
    EXPECT_LE(p["paths"].get<int>(), 2);  // 2 QPs per pair
  }
  ASSERT_TRUE(link_ends.count("host001/eth0"));
  ASSERT_TRUE(link_ends.count("leaf000/Eth1/1"));

  // Quiet KPIs on every port of the job's paths, then errors on host001 NPU 0's leaf port.
  std::vector<std::tuple<std::string, std::string, double>> samples;
  for (const auto& e : link_ends) {
    samples.emplace_back(e, "rx_errors_per_s", 0.0);
    samples.emplace_back(e, "rx_bytes_per_s", 1e9);
  }
  push(agent, samples);
  push(agent, {{"leaf000/Eth1/1", "if_in_errors_per_s", 12.5}});
  job = get_json(viewer, "/api/v1/diagnose/job/train-d");
  EXPECT_EQ(job["verdict"], "degraded");
  ASSERT_FALSE(job["hops"].empty());
  const json& worst = job["hops"][0];
  EXPECT_EQ(worst["id"], "link:host001/eth0|leaf000/Eth1/1");
  EXPECT_EQ(worst["verdict"], "degraded");
  EXPECT_EQ(worst["tier"], "host-leaf");
  ASSERT_EQ(worst["reasons"].size(), 1U);
  EXPECT_EQ(worst["reasons"][0], "leaf000/Eth1/1 if_in_errors_per_s 12.5 above 0 (errors)");
  // host001 NPU 0 (rank 0) sends to host005 NPU 0 (rank 4) and receives from it: two pairs cross the hop.
  EXPECT_EQ(worst["pairs"], 2);
  bool found = false;
  for (const auto& k : worst["kpis"]) {
    if (k["metric"] == "if_in_errors_per_s") {
      found = true;
      EXPECT_EQ(k["value"], 12.5);
      EXPECT_TRUE(k["fresh"].get<bool>());
      EXPECT_GE(k["age_ms"].get<std::int64_t>(), 0);
    }
  }
  EXPECT_TRUE(found) << worst.dump();
  EXPECT_EQ(job["summary"]["hop_verdicts"]["degraded"], 1);
  EXPECT_EQ(job["summary"]["hop_verdicts"]["unknown"], 0);
  EXPECT_EQ(job["summary"]["pair_verdicts"]["degraded"], 2);
  EXPECT_EQ(job["summary"]["pair_verdicts"]["ok"], 6);
  EXPECT_EQ(job["pairs"][0]["verdict"], "degraded");
  EXPECT_EQ(job["summary"]["worst"][0]["id"], "link:host001/eth0|leaf000/Eth1/1");

  // The pair's path: planned, through leaf000, a spine, leaf004.
  json path = get_json(viewer, "/api/v1/diagnose/path?src=host001/eth0&dst=host005/0");
  EXPECT_EQ(path["route"]["source"], "plan") << path["route"].dump();
  EXPECT_EQ(path["route"]["job"], "train-d");
  EXPECT_EQ(path["src"]["entity"], "host001/eth0");
  EXPECT_EQ(path["dst"]["entity"], "host005/eth0");
  EXPECT_EQ(path["verdict"], "degraded");
  EXPECT_EQ(path["worst_hops"], json::array({"link:host001/eth0|leaf000/Eth1/1"}));
  ASSERT_GE(path["paths"].size(), 1U);
  for (const auto& p : path["paths"]) {
    ASSERT_EQ(p["hops"].size(), 7U);
    EXPECT_EQ(p["hops"][1], "device:leaf000");
    EXPECT_EQ(p["hops"][5], "device:leaf004");
    EXPECT_EQ(p["verdict"], "degraded");
  }

  // A spine port down: the path's spine hop becomes faulty on the paths through it.
  const json first = path["paths"][0]["hops"];  // a copy: path is reassigned below
  const json* uplink = hop_by_id(path, first[2].get<std::string>());
  ASSERT_NE(uplink, nullptr);
  const std::string spine_port = (*uplink)["entities"][1];
  push(agent, {{spine_port, "if_oper_status", 2}});
  path = get_json(viewer, "/api/v1/diagnose/path?src=host001/eth0&dst=host005/eth0");
  EXPECT_EQ(path["verdict"], "faulty");
  EXPECT_EQ(path["paths"][0]["verdict"], "faulty");
  EXPECT_EQ((*hop_by_id(path, first[2].get<std::string>()))["verdict"], "faulty");

  // hsnsctl's view of the same: the job's hops worst first, the path's verdict and route.
  std::ofstream(dir.path() / "token") << kViewerToken << "\n";
  const auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {
        build_path("cli/hsnsctl").string(), "--server", agg.url(), "--token-file",
        (dir.path() / "token").string(),    "diagnose"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  };
  auto ctl_job = ctl({"job", "train-d"});
  ASSERT_EQ(ctl_job.status, 0) << ctl_job.output;
  EXPECT_NE(ctl_job.output.find("job train-d: faulty, 8 pairs"), std::string::npos) << ctl_job.output;
  const auto table = ctl_job.output.find("VERDICT");
  ASSERT_NE(table, std::string::npos) << ctl_job.output;
  EXPECT_EQ(ctl_job.output.find("faulty", table), ctl_job.output.find('\n', table) + 1) << ctl_job.output;
  auto ctl_path = ctl({"path", "host001/eth0", "host005/eth0", "--max-paths", "4"});
  ASSERT_EQ(ctl_path.status, 0) << ctl_path.output;
  EXPECT_NE(ctl_path.output.find("verdict: faulty\nroute: plan (job train-d)"), std::string::npos)
      << ctl_path.output;
  EXPECT_NE(ctl_path.output.find("leaf000/Eth1/1 if_in_errors_per_s 12.5 above 0 (errors)"),
            std::string::npos)
      << ctl_path.output;
  auto ctl_missing = ctl({"job", "train-x"});
  EXPECT_EQ(ctl_missing.status, 1) << ctl_missing.output;

  // NPUs outside any job: every ECMP candidate (2 spines), a bound on them, and a same-leaf pair.
  json ecmp = get_json(viewer, "/api/v1/diagnose/path?src=host002/eth1&dst=host006/eth1");
  EXPECT_EQ(ecmp["route"]["source"], "ecmp");
  EXPECT_EQ(ecmp["route"]["job"], nullptr);
  EXPECT_EQ(ecmp["paths"].size(), 2U);
  EXPECT_FALSE(ecmp["truncated"].get<bool>());
  EXPECT_EQ(ecmp["verdict"], "unknown");  // no KPI on these ports
  json one = get_json(viewer, "/api/v1/diagnose/path?src=host002/eth1&dst=host006/eth1&max_paths=1");
  EXPECT_EQ(one["paths"].size(), 1U);
  EXPECT_TRUE(one["truncated"].get<bool>());
  json leaf = get_json(viewer, "/api/v1/diagnose/path?src=host002/eth1&dst=host003/eth1");
  ASSERT_EQ(leaf["paths"].size(), 1U);
  EXPECT_EQ(leaf["paths"][0]["hops"].size(), 3U);
  json host = get_json(viewer, "/api/v1/diagnose/path?src=host002/eth1&dst=host002/eth2");
  EXPECT_EQ(host["route"]["source"], "host");
  EXPECT_TRUE(host["hops"].empty());
  EXPECT_EQ(host["verdict"], "ok");

  // Problems naming the parameter.
  auto missing = must(viewer.get("/api/v1/diagnose/path?src=host001/eth0"));
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(problem_field(missing), "dst");
  auto bad_max = must(viewer.get("/api/v1/diagnose/path?src=host001/eth0&dst=host005/eth0&max_paths=0"));
  EXPECT_EQ(bad_max.status, 400);
  EXPECT_EQ(problem_field(bad_max), "max_paths");
  auto malformed = must(viewer.get("/api/v1/diagnose/path?src=host001&dst=host005/eth0"));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(problem_field(malformed), "src");
  auto unknown_host = must(viewer.get("/api/v1/diagnose/path?src=host001/eth0&dst=host099/eth0"));
  EXPECT_EQ(unknown_host.status, 404);
  EXPECT_NE(body_of(unknown_host)["detail"].get<std::string>().find("dst: no host 'host099'"),
            std::string::npos);
  auto unknown_npu = must(viewer.get("/api/v1/diagnose/path?src=host001/eth9&dst=host005/eth0"));
  EXPECT_EQ(unknown_npu.status, 404);
  EXPECT_NE(body_of(unknown_npu)["detail"].get<std::string>().find("src: host 'host001' has no NPU 'eth9'"),
            std::string::npos);
  auto unknown_param = must(viewer.get("/api/v1/diagnose/job/train-d?colour=red"));
  EXPECT_EQ(unknown_param.status, 400);
  EXPECT_EQ(problem_field(unknown_param), "colour");
  auto no_job = must(viewer.get("/api/v1/diagnose/job/train-x"));
  EXPECT_EQ(no_job.status, 404);
  EXPECT_NE(body_of(no_job)["detail"].get<std::string>().find("id: no job named 'train-x'"),
            std::string::npos);
  auto bad_id = must(viewer.get("/api/v1/diagnose/job/-bad"));
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_EQ(problem_field(bad_id), "id");
  EXPECT_EQ(must(agg.client("").get("/api/v1/diagnose/job/train-d")).status, 401);
}

// A flow record of `host` from src to dst, `bytes` in 1,000 packets.
proto::FlowRecord flow(const std::string& host, proto::FlowDirection direction, const std::string& src,
                       const std::string& dst, std::uint16_t sport, std::uint64_t bytes) {
  proto::FlowRecord f = hsns::testing::flow_between(host, direction, src, dst, sport);
  f.dest_qp = 0x101;
  f.packets = 1000;
  f.bytes = bytes;
  f.first_ns = now_ms() * 1'000'000;
  f.last_ns = f.first_ns + 1000;
  return f;
}

void report(HttpClient& agent, const std::string& host, std::uint64_t seq, std::int64_t ts,
            std::vector<proto::FlowRecord> flows) {
  proto::Report r;
  r.seq = seq;
  r.ts_ms = ts;
  for (auto& f : flows) f.epoch = seq;
  r.flows.push_back({seq, std::move(flows)});
  auto res = agent.request("POST", "/api/v1/agents/" + host + "/reports",
                           proto::encode(r, proto::Encoding::cbor), "application/vnd.hsns.report.v1+cbor");
  ASSERT_TRUE(res.has_value()) << res.error();
  ASSERT_EQ(res->status, 200) << res->body;
}

TEST(DiagnoseApi, JobPairsCarryTheBytesTheirReportedFlowsCarried) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto sched = agg.client(kSchedulerToken);
  auto agent = agg.client(kAgentToken);
  auto viewer = agg.client(kViewerToken);
  set_up(ops, sched);
  if (HasFatalFailure()) return;

  // Without any flow record: every pair "no flow data" (null), volumes available.
  json job = get_json(viewer, "/api/v1/diagnose/job/train-d");
  EXPECT_TRUE(job["traffic"]["available"].get<bool>()) << job["traffic"].dump();
  EXPECT_EQ(job["traffic"]["window_s"], 900);
  EXPECT_EQ(job["traffic"]["flows"], 0);
  for (const auto& p : job["pairs"]) EXPECT_TRUE(p["traffic"].is_null()) << p.dump();

  std::map<int, std::string> ip;  // rank -> the address it was scheduled with
  const json registered = get_json(viewer, "/api/v1/jobs/train-d");
  for (const auto& r : registered["ranks"]) ip[r["rank"]] = r["ip"];
  ASSERT_EQ(ip.size(), 8U);
  // The DP pairs: rank i on host001 <-> rank i + 4 on host005. Rank 0 -> 4: one flow seen by both ends
  // (host001's egress, host005's ingress: counted once, the larger report) and a second flow; rank 4 -> 0:
  // one flow; rank 0 to an address outside the job: not a pair's; rank 1 -> 5: two hours ago only.
  const auto now = now_ms();
  using D = proto::FlowDirection;
  report(agent, "host001", 1, now - std::int64_t{2} * 3'600'000,
         {flow("host001", D::egress, ip[1], ip[5], 0xC001, 7777)});
  report(agent, "host001", 2, now - 60'000,
         {flow("host001", D::egress, ip[0], ip[4], 0xC000, 1'000'000),
          flow("host001", D::egress, ip[0], ip[4], 0xC002, 500),
          flow("host001", D::egress, ip[0], "198.18.0.250", 0xC003, 123'456)});
  report(agent, "host005", 1, now - 50'000,
         {flow("host005", D::ingress, ip[0], ip[4], 0xC000, 990'000),
          flow("host005", D::egress, ip[4], ip[0], 0xC004, 2000)});
  if (HasFatalFailure()) return;

  const auto traffic_of = [](const json& answer, int src, int dst) {
    for (const auto& p : answer["pairs"])
      if (p["src_rank"] == src && p["dst_rank"] == dst) return p["traffic"];
    ADD_FAILURE() << "no pair " << src << " -> " << dst;
    return json();
  };
  job = get_json(viewer, "/api/v1/diagnose/job/train-d");
  EXPECT_TRUE(job["traffic"]["available"].get<bool>());
  EXPECT_EQ(job["traffic"]["flows"], 3);
  EXPECT_EQ(traffic_of(job, 0, 4), json({{"bytes", 1'000'500}, {"packets", 2000}, {"flows", 2}}));
  EXPECT_EQ(traffic_of(job, 4, 0), json({{"bytes", 2000}, {"packets", 1000}, {"flows", 1}}));
  EXPECT_TRUE(traffic_of(job, 1, 5).is_null());  // before the window
  EXPECT_TRUE(traffic_of(job, 5, 1).is_null());
  EXPECT_TRUE(traffic_of(job, 2, 6).is_null());

  // A window of three hours reaches the old batch.
  job = get_json(viewer, "/api/v1/diagnose/job/train-d?traffic_window_s=10800");
  EXPECT_EQ(job["traffic"]["window_s"], 10800);
  EXPECT_EQ(traffic_of(job, 1, 5), json({{"bytes", 7777}, {"packets", 1000}, {"flows", 1}}));
  EXPECT_EQ(traffic_of(job, 0, 4)["bytes"], 1'000'500);

  for (const char* bad : {"0", "604801", "15m"}) {
    auto r = must(viewer.get(std::string("/api/v1/diagnose/job/train-d?traffic_window_s=") + bad));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(problem_field(r), "traffic_window_s") << r.body;
  }
}

TEST(DiagnoseApi, AJobWhoseTopologyChangedFallsBackToTheRingWithTheReason) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto sched = agg.client(kSchedulerToken);
  set_up(ops, sched);
  if (HasFatalFailure()) return;
  // host001 isolated after scheduling: scheduling the job again refuses the host, so the plan cannot be
  // reproduced; the pairs are the ring over the ranks with their ECMP candidates.
  auto patch = must(ops.patch("/api/v1/topology/devices/host001", json({{"state", "isolated"}}).dump()));
  ASSERT_EQ(patch.status, 200) << patch.body;
  json job = get_json(ops, "/api/v1/diagnose/job/train-d");
  EXPECT_FALSE(job["route_plan"]["used"].get<bool>());
  EXPECT_NE(job["route_plan"]["note"].get<std::string>().find("scheduling the job again fails now"),
            std::string::npos)
      << job["route_plan"].dump();
  // Ranks 0..3 on host001, 4..7 on host005: the ring's inter-host neighbours are 3 -> 4 and 7 -> 0.
  ASSERT_EQ(job["summary"]["pairs"], 2);
  std::set<std::pair<int, int>> pairs;
  for (const auto& p : job["pairs"]) {
    pairs.insert({p["src_rank"].get<int>(), p["dst_rank"].get<int>()});
    EXPECT_FALSE(p["planned"].get<bool>());
    EXPECT_EQ(p["paths"], 2);  // both spines
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{3, 4}, {7, 0}}));
}

}  // namespace
}  // namespace hsns::testing
