// The telemetry query routes and hsnsctl's telemetry commands against the real aggregator over loopback:
// real CBOR report batches posted through POST /api/v1/agents/{host}/reports, read back through
// GET /api/v1/flows and /api/v1/hosts/{host}/counters|optics|lldp|qps. Covers both directions of a QP
// pair joined into one row with the processes of both ends, the job filter (a job scheduled on generated
// hosts whose NPUs got ports), the port and host filters, time ranges, paging, and bad parameters
// answered 400 naming the parameter.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hsns/proto/report.h"
#include "hsns/time.h"
#include "support/aggregator_process.h"
#include "support/report_sample.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

constexpr const char* kCbor = "application/vnd.hsns.report.v1+cbor";
constexpr std::int64_t kT1 = 1'764'640'000'000;  // 2025-12-02T01:46:40Z
constexpr std::int64_t kT2 = kT1 + 10'000;

std::string rfc3339(std::int64_t ms) {
  return format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

json body_of(const HttpClient::Response& r) {
  return json::parse(r.body, nullptr, false);
}

HttpClient::Response get(HttpClient& c, const std::string& target) {
  auto r = c.get(target);
  if (!r) throw std::runtime_error(r.error());
  return *r;
}

json get_ok(HttpClient& c, const std::string& target) {
  const auto r = get(c, target);
  EXPECT_EQ(r.status, 200) << target << ": " << r.body;
  return body_of(r);
}

HttpClient::Response post(HttpClient& c, const std::string& target, const json& body) {
  auto r = c.post(target, body.dump());
  if (!r) throw std::runtime_error(r.error());
  return *r;
}

// Every invalid_params name of a problem.
std::set<std::string> problem_fields(const HttpClient::Response& r) {
  std::set<std::string> out;
  const auto j = body_of(r);
  if (!r.is_problem() || !j.contains("invalid_params")) return out;
  for (const auto& p : j["invalid_params"]) out.insert(p.value("name", ""));
  return out;
}

proto::FlowRecord flow(const std::string& host, proto::FlowDirection direction, const std::string& src,
                       const std::string& dst, std::uint16_t sport, std::uint32_t dest_qp,
                       std::uint64_t packets) {
  proto::FlowRecord f = hsns::testing::flow_between(host, direction, src, dst, sport);
  f.dest_qp = dest_qp;
  f.packets = packets;
  f.bytes = packets * 100;
  f.first_ns = kT1 * 1'000'000;
  f.last_ns = f.first_ns + 1000;
  f.ce = 1;
  f.nak[0] = 2;
  return f;
}

proto::QpRecord qp(std::uint32_t lqpn, std::uint32_t rqpn, const std::string& src, const std::string& dst,
                   std::uint32_t pid, const std::string& comm) {
  proto::QpRecord q;
  q.device = "mlx5_0";
  q.port = 1;
  q.lqpn = lqpn;
  q.rqpn = rqpn;
  q.type = "RC";
  q.state = "RTS";
  q.pid = pid;
  q.comm = comm;
  q.addresses = proto::QpAddresses{4, src, dst};
  return q;
}

// A report of `host` at `ts` with the given flow records and QP records (no section when empty).
proto::Report report(const std::string& host, std::uint64_t seq, std::int64_t ts,
                     std::vector<proto::FlowRecord> flows, std::vector<proto::QpRecord> qps) {
  proto::Report r;
  r.seq = seq;
  r.ts_ms = ts;
  if (!flows.empty()) {
    for (auto& f : flows) f.epoch = seq;
    r.flows.push_back({seq, std::move(flows)});
  }
  if (!qps.empty()) r.qp = proto::QpInventory{host, ts, std::move(qps)};
  return r;
}

void send(HttpClient& agent, const std::string& host, const proto::Report& r) {
  auto res = agent.request("POST", "/api/v1/agents/" + host + "/reports",
                           proto::encode(r, proto::Encoding::cbor), kCbor);
  ASSERT_TRUE(res.has_value());
  ASSERT_EQ(res->status, 200) << res->body;
}

// 4 generated hosts x 2 NPUs with an address each; job "train-a" scheduled on host001 and host002.
class TelemetryQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
    ops_ = std::make_unique<HttpClient>(agg_->client());
    agent_ = std::make_unique<HttpClient>(agg_->client(kAgentToken));
    auto gen = post(*ops_, "/api/v1/topology/generate",
                    {{"hosts", 4}, {"npus_per_host", 2}, {"hosts_per_su", 4}, {"spines_per_plane", 1}});
    ASSERT_EQ(gen.status, 200) << gen.body;
    auto subnet = post(*ops_, "/api/v1/subnets", {{"name", "rdma"}, {"cidr", "198.18.0.0/24"}});
    ASSERT_EQ(subnet.status, 201) << subnet.body;
    for (int h = 1; h <= 4; ++h) {
      const std::string host = "host00" + std::to_string(h);
      json npus = json::array();
      for (int n = 0; n < 2; ++n)
        npus.push_back({{"index", n},
                        {"netdev", "eth" + std::to_string(n)},
                        {"mac", "02:00:00:00:0" + std::to_string(h) + ":0" + std::to_string(n)}});
      auto put = ops_->put("/api/v1/hosts/" + host, json({{"npus", npus}}).dump());
      ASSERT_TRUE(put.has_value());
      ASSERT_EQ(put->status, 201) << put->body;
      for (int n = 0; n < 2; ++n) {
        auto port =
            post(*ops_, "/api/v1/ports", {{"subnet_id", body_of(subnet)["id"]}, {"host", host}, {"npu", n}});
        ASSERT_EQ(port.status, 201) << port.body;
        const auto p = body_of(port);
        if (n == 0) {
          address_[host] = p["ip_address"];
          port_id_[host] = p["id"];
        }
      }
    }
    const json model = {{"parameters", 1000000000}, {"layers", 8},      {"hidden", 2048},    {"heads", 16},
                        {"seq_len", 2048},          {"micro_batch", 1}, {"global_batch", 64}};
    auto job = post(*ops_, "/api/v1/schedule",
                    {{"job_name", "train-a"},
                     {"hosts", {"host001", "host002"}},
                     {"model", model},
                     {"parallel", {{"tp", 2}, {"dp", 2}}},
                     {"framework", "megatron"},
                     {"algorithm", "ring"}});
    ASSERT_EQ(job.status, 201) << job.body;
  }

  // host001 (a) and host002 (b) run one QP pair: a's QP 0x101 <-> b's QP 0x202. host001 reports both
  // directions at T1 and T2 and its QP; host002 reports its QP and its egress at T1; host003 (c) sends
  // to host004 (d) with no QP inventory anywhere.
  void post_reports() {
    const auto& a = address_["host001"];
    const auto& b = address_["host002"];
    const auto& c = address_["host003"];
    const auto& d = address_["host004"];
    using proto::FlowDirection;
    auto r1 = report("host001", 1, kT1,
                     {flow("host001", FlowDirection::egress, a, b, 0xC001, 0x202, 10),
                      flow("host001", FlowDirection::ingress, b, a, 0xC002, 0x101, 5)},
                     {qp(0x101, 0x202, a, b, 111, "trainer-a")});
    const auto sample = sample_report(1, 0, 2);
    r1.counters = sample.counters;
    r1.counters->ts_ms = kT1;
    r1.optics = sample.optics;
    r1.optics->host = "host001";
    r1.optics->ts_ms = kT1;
    r1.optics->modules[0].thresholds[0] = proto::AlarmThresholds{75, -5, 70, 0};
    r1.optics->modules[0].flags[0] = proto::AlarmFlags{false, false, true, false};
    r1.lldp = sample.lldp;
    r1.lldp->host = "host001";
    send(*agent_, "host001", r1);
    auto r2 = report("host001", 2, kT2,
                     {flow("host001", FlowDirection::egress, a, b, 0xC001, 0x202, 20),
                      flow("host001", FlowDirection::ingress, b, a, 0xC002, 0x101, 6)},
                     {qp(0x101, 0x202, a, b, 111, "trainer-a")});
    r2.counters = sample.counters;
    r2.counters->ts_ms = kT2;
    send(*agent_, "host001", r2);
    send(*agent_, "host002",
         report("host002", 1, kT1, {flow("host002", FlowDirection::egress, b, a, 0xC002, 0x101, 7)},
                {qp(0x202, 0x101, b, a, 222, "trainer-b")}));
    send(*agent_, "host003",
         report("host003", 1, kT1, {flow("host003", FlowDirection::egress, c, d, 0xC003, 0x303, 1)}, {}));
  }

  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
  std::unique_ptr<HttpClient> ops_;
  std::unique_ptr<HttpClient> agent_;
  std::map<std::string, std::string> address_;  // host -> its NPU 0 port's address
  std::map<std::string, std::string> port_id_;  // host -> its NPU 0 port's id
};

TEST_F(TelemetryQuery, FlowsJoinBothDirectionsAndTheProcessesOfBothEnds) {
  post_reports();
  const auto& a = address_["host001"];
  const auto& b = address_["host002"];
  const json rows = get_ok(*ops_, "/api/v1/flows?host=host001")["items"];
  ASSERT_EQ(rows.size(), 1u) << rows.dump();
  const json& row = rows[0];
  EXPECT_EQ(row["host"], "host001");
  ASSERT_TRUE(row["forward"].is_object() && row["reverse"].is_object()) << row.dump();
  EXPECT_EQ(row["packets"], 10 + 5 + 20 + 6);
  EXPECT_EQ(row["bytes"], (10 + 5 + 20 + 6) * 100);
  // The forward direction is the smaller (src, dst): a's or b's, the row's ends follow it.
  const bool a_first = a < b;
  EXPECT_EQ(row["src"], a_first ? a : b);
  EXPECT_EQ(row["dst"], a_first ? b : a);
  EXPECT_EQ(row["src_qp"], a_first ? 0x101 : 0x202);
  EXPECT_EQ(row["dst_qp"], a_first ? 0x202 : 0x101);
  EXPECT_EQ(row["forward"]["packets"], a_first ? 30 : 11);
  EXPECT_EQ(row["reverse"]["packets"], a_first ? 11 : 30);
  EXPECT_EQ(row["forward"]["records"], 2);
  EXPECT_EQ(row["forward"]["naks"], 4);
  EXPECT_EQ(row["forward"]["ce"], 2);
  // The process of each end from the QP inventory of its own host.
  const json& pa = a_first ? row["src_process"] : row["dst_process"];
  const json& pb = a_first ? row["dst_process"] : row["src_process"];
  EXPECT_EQ(pa["pid"], 111);
  EXPECT_EQ(pa["comm"], "trainer-a");
  EXPECT_EQ(pa["host"], "host001");
  EXPECT_EQ(pb["pid"], 222);
  EXPECT_EQ(pb["comm"], "trainer-b");
  EXPECT_EQ(pb["host"], "host002");
  EXPECT_TRUE(get_ok(*ops_, "/api/v1/flows?host=host001")["next_offset"].is_null());

  // host002 saw only b -> a: one direction, its processes from both inventories all the same.
  const json b_rows = get_ok(*ops_, "/api/v1/flows?host=host002")["items"];
  ASSERT_EQ(b_rows.size(), 1u);
  EXPECT_TRUE(b_rows[0]["reverse"].is_null());
  EXPECT_EQ(b_rows[0]["src"], b);
  EXPECT_EQ(b_rows[0]["src_qp"], 0x202);
  EXPECT_EQ(b_rows[0]["src_process"]["pid"], 222);
  EXPECT_EQ(b_rows[0]["dst_process"]["pid"], 111);

  // No QP record for c -> d: one direction, source QP and processes unknown.
  const json c_rows = get_ok(*ops_, "/api/v1/flows?host=host003")["items"];
  ASSERT_EQ(c_rows.size(), 1u);
  EXPECT_TRUE(c_rows[0]["src_qp"].is_null());
  EXPECT_TRUE(c_rows[0]["src_process"].is_null());
  EXPECT_TRUE(c_rows[0]["dst_process"].is_null());
  EXPECT_EQ(c_rows[0]["dst_qp"], 0x303);

  // Everything: three rows, most bytes first; paging by offset.
  const json all = get_ok(*ops_, "/api/v1/flows")["items"];
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]["host"], "host001");
  EXPECT_EQ(all[2]["host"], "host003");
  const json first = get_ok(*ops_, "/api/v1/flows?limit=2");
  EXPECT_EQ(first["items"].size(), 2u);
  EXPECT_EQ(first["next_offset"], 2);
  const json rest = get_ok(*ops_, "/api/v1/flows?limit=2&offset=2");
  ASSERT_EQ(rest["items"].size(), 1u);
  EXPECT_EQ(rest["items"][0], all[2]);
  EXPECT_TRUE(rest["next_offset"].is_null());
}

TEST_F(TelemetryQuery, FlowsByJobPortAndTimeRange) {
  post_reports();
  // The job holds host001 and host002: their flows, not host003's.
  const json job_rows = get_ok(*ops_, "/api/v1/flows?job=train-a")["items"];
  std::set<std::string> hosts;
  for (const auto& r : job_rows) hosts.insert(r["host"].get<std::string>());
  EXPECT_EQ(hosts, (std::set<std::string>{"host001", "host002"}));
  // A port: flows from or to its address.
  const json port_rows = get_ok(*ops_, "/api/v1/flows?port=" + port_id_["host004"])["items"];
  ASSERT_EQ(port_rows.size(), 1u);
  EXPECT_EQ(port_rows[0]["dst"], address_["host004"]);
  EXPECT_TRUE(get_ok(*ops_, "/api/v1/flows?port=" + port_id_["host004"] + "&job=train-a")["items"].empty());

  // Time ranges over the batches' times: since inclusive, until exclusive.
  const json late = get_ok(*ops_, "/api/v1/flows?host=host001&since=" + rfc3339(kT2))["items"];
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0]["packets"], 20 + 6);
  const json early = get_ok(*ops_, "/api/v1/flows?host=host001&until=" + rfc3339(kT2))["items"];
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0]["packets"], 10 + 5);
  EXPECT_TRUE(get_ok(*ops_, "/api/v1/flows?since=" + rfc3339(kT2 + 1000))["items"].empty());

  // Unknown job or port: 404.
  EXPECT_EQ(get(*ops_, "/api/v1/flows?job=nope").status, 404);
  EXPECT_EQ(get(*ops_, "/api/v1/flows?port=00000000-0000-4000-8000-000000000000").status, 404);
}

TEST_F(TelemetryQuery, HostCountersOpticsLldpAndQps) {
  post_reports();
  auto viewer = agg_->client(kViewerToken);
  // Counters: the newest snapshot (T2), with deltas, rates and the reading's time.
  const json latest = get_ok(viewer, "/api/v1/hosts/host001/counters")["items"];
  ASSERT_FALSE(latest.empty());
  for (const auto& c : latest) {
    EXPECT_EQ(c["ts_ms"], kT2) << c.dump();
    EXPECT_EQ(c["time"], rfc3339(kT2));
  }
  const json xmit =
      get_ok(viewer, "/api/v1/hosts/host001/counters?port=mlx5_0/1&counter=port_xmit_data")["items"];
  ASSERT_EQ(xmit.size(), 1u);
  EXPECT_EQ(xmit[0]["source"], "rdma");
  EXPECT_EQ(xmit[0]["value"], 1'000'000);
  EXPECT_EQ(xmit[0]["delta"], 1000);
  EXPECT_EQ(xmit[0]["rate"], 100.0);
  // A series: every reading in the range, in time order.
  const json series = get_ok(
      viewer, "/api/v1/hosts/host001/counters?port=mlx5_0/1&counter=port_xmit_data&since=" + rfc3339(kT1) +
                  "&until=" + rfc3339(kT2 + 1000))["items"];
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0]["ts_ms"], kT1);
  EXPECT_EQ(series[1]["ts_ms"], kT2);
  const json paged = get_ok(viewer, "/api/v1/hosts/host001/counters?limit=1");
  EXPECT_EQ(paged["items"].size(), 1u);
  EXPECT_EQ(paged["next_offset"], 1);

  // Optics: the module document with thresholds and flags, and when it was read.
  const json modules = get_ok(viewer, "/api/v1/hosts/host001/optics")["items"];
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_EQ(modules[0]["netdev"], "ens0f0np0");
  EXPECT_EQ(modules[0]["thresholds"]["temperature"]["high_alarm"], 75.0);
  EXPECT_EQ(modules[0]["flags"]["temperature"]["high_warning"], true);
  EXPECT_EQ(modules[0]["ts_ms"], kT1);
  EXPECT_TRUE(get_ok(viewer, "/api/v1/hosts/host001/optics?netdev=eth9")["items"].empty());

  const json neighbors = get_ok(viewer, "/api/v1/hosts/host001/lldp")["items"];
  ASSERT_EQ(neighbors.size(), 1u);
  EXPECT_EQ(neighbors[0]["system_name"], "leaf-3");
  EXPECT_EQ(neighbors[0]["port_id"], "swp12");

  // QPs: host001's newest inventory (T2).
  const json qps = get_ok(viewer, "/api/v1/hosts/host001/qps")["items"];
  ASSERT_EQ(qps.size(), 1u);
  EXPECT_EQ(qps[0]["lqpn"], 0x101);
  EXPECT_EQ(qps[0]["pid"], 111);
  EXPECT_EQ(qps[0]["ts_ms"], kT2);

  // A registered host without reports: empty; an unregistered one: 404.
  EXPECT_TRUE(get_ok(viewer, "/api/v1/hosts/host004/qps")["items"].empty());
  EXPECT_EQ(get(viewer, "/api/v1/hosts/host009/counters").status, 404);
  EXPECT_EQ(get(viewer, "/api/v1/hosts/host009/optics").status, 404);
  // Reading needs a token.
  auto anonymous = agg_->client("");
  EXPECT_EQ(get(anonymous, "/api/v1/flows").status, 401);
}

TEST_F(TelemetryQuery, BadParametersAreRefusedNamingTheParameter) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/api/v1/flows?limit=0", "limit"},
      {"/api/v1/flows?limit=10001", "limit"},
      {"/api/v1/flows?offset=-1", "offset"},
      {"/api/v1/flows?since=yesterday", "since"},
      {"/api/v1/flows?until=2026-13-01T00:00:00Z", "until"},
      {"/api/v1/flows?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", "until"},
      {"/api/v1/flows?host=bad%20host", "host"},
      {"/api/v1/flows?job=", "job"},
      {"/api/v1/flows?colour=red", "colour"},
      {"/api/v1/hosts/host001/counters?since=x", "since"},
      {"/api/v1/hosts/host001/counters?limit=x", "limit"},
      {"/api/v1/hosts/host001/counters?netdev=eth0", "netdev"},
      {"/api/v1/hosts/host001/optics?port=1", "port"},
      {"/api/v1/hosts/host001/lldp?offset=1e3", "offset"},
      {"/api/v1/hosts/host001/qps?limit=", "limit"},
  };
  for (const auto& [target, field] : cases) {
    const auto r = get(*ops_, target);
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
    EXPECT_TRUE(r.is_problem()) << target;
    EXPECT_EQ(problem_fields(r).count(field), 1u) << target << ": " << r.body;
  }
}

TEST_F(TelemetryQuery, HsnsctlTelemetryCommands) {
  post_reports();
  std::ofstream(dir_.path() / "token") << kOperatorToken << "\n";
  const auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {
        build_path("cli/hsnsctl").string(), "--server", agg_->url(), "--token-file",
        (dir_.path() / "token").string(),   "telemetry"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  };
  auto flows = ctl({"flows", "--job", "train-a"});
  ASSERT_EQ(flows.status, 0) << flows.output;
  EXPECT_NE(flows.output.find("SRC_PROCESS"), std::string::npos) << flows.output;
  EXPECT_NE(flows.output.find("trainer-a/111@host001"), std::string::npos) << flows.output;
  EXPECT_NE(flows.output.find("trainer-b/222@host002"), std::string::npos) << flows.output;
  EXPECT_EQ(flows.output.find(address_["host004"]), std::string::npos) << flows.output;

  auto paged = ctl({"flows", "--limit", "1"});
  ASSERT_EQ(paged.status, 0) << paged.output;
  EXPECT_NE(paged.output.find("(more: --offset 1)"), std::string::npos) << paged.output;

  auto json_out = ctl({"-o", "json", "counters", "host001", "--port", "mlx5_0/1", "--since", rfc3339(kT1)});
  ASSERT_EQ(json_out.status, 0) << json_out.output;
  const auto counters = json::parse(json_out.output);
  EXPECT_FALSE(counters["items"].empty());
  for (const auto& c : counters["items"]) EXPECT_EQ(c["port"], "mlx5_0/1");

  auto optics = ctl({"optics", "host001"});
  ASSERT_EQ(optics.status, 0) << optics.output;
  EXPECT_NE(optics.output.find("temperature.high_warning"), std::string::npos) << optics.output;
  auto lldp = ctl({"lldp", "host001"});
  ASSERT_EQ(lldp.status, 0) << lldp.output;
  EXPECT_NE(lldp.output.find("leaf-3"), std::string::npos) << lldp.output;
  auto qps = ctl({"qps", "host002"});
  ASSERT_EQ(qps.status, 0) << qps.output;
  EXPECT_NE(qps.output.find("trainer-b"), std::string::npos) << qps.output;

  // A refused parameter: exit 1 with the problem naming it.
  auto bad = ctl({"flows", "--since", "yesterday"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("since"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace hsns::testing
