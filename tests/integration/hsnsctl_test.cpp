// hsnsctl end to end: the real CLI binary against the real aggregator.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

class Hsnsctl : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ = std::make_unique<AggregatorProcess>(dir_.path());
    agg_->start();
    std::ofstream(dir_.path() / "token") << kOperatorToken << "\n";
  }
  void TearDown() override {
    if (agg_->running()) {
      EXPECT_EQ(agg_->stop(), 0) << agg_->log();
    }
  }
  CommandResult ctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {build_path("cli/hsnsctl").string(), "--server", agg_->url(),
                                     "--token-file", (dir_.path() / "token").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  }
  json ctl_json(std::vector<std::string> args) {
    args.insert(args.begin(), {"-o", "json"});
    auto r = ctl(args);
    EXPECT_EQ(r.status, 0) << r.output;
    return json::parse(r.output);
  }

  TempDir dir_;
  std::unique_ptr<AggregatorProcess> agg_;
};

TEST_F(Hsnsctl, ManagesTheWholeNetworkLifecycle) {
  auto subnet = ctl_json({"subnets", "create", "--name", "rail-0", "--cidr", "198.18.0.0/24", "--gateway",
                          "198.18.0.1", "--pool", "198.18.0.10-198.18.0.20", "--mtu", "4200"});
  EXPECT_EQ(subnet["allocation_pools"], json::parse(R"([{"start":"198.18.0.10","end":"198.18.0.20"}])"));
  auto host = ctl_json({"hosts", "register", "host-01", "--npu", "0:eth2:02:00:00:00:01:00:mlx5_0:200000",
                        "--npu", "1:eth3:02:00:00:00:01:01"});
  EXPECT_EQ(host["npus"].size(), 2u);
  EXPECT_EQ(host["npus"][0]["rdma_device"], "mlx5_0");
  // Subnets by name.
  auto p0 = ctl_json({"ports", "create", "--subnet", "rail-0", "--host", "host-01", "--npu", "0"});
  EXPECT_EQ(p0["ip_address"], "198.18.0.10");
  auto p1 = ctl_json(
      {"ports", "create", "--subnet", "rail-0", "--host", "host-01", "--npu", "1", "--ip", "198.18.0.99"});
  EXPECT_EQ(p1["fixed_ip"], true);

  auto table = ctl({"ports", "list", "--host", "host-01"});
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("198.18.0.10"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("198.18.0.99"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("IP"), std::string::npos) << table.output;  // header row

  auto reach = ctl_json({"reachability", p0["id"], p1["id"]});
  EXPECT_EQ(reach["reachable"], true);
  auto desired = ctl_json({"desired", "host-01"});
  EXPECT_EQ(desired["ports"].size(), 2u);

  // A server-side rejection: exit 1, the problem's detail and field on stderr.
  auto dup = ctl({"subnets", "create", "--name", "rail-0", "--cidr", "198.18.1.0/24"});
  EXPECT_EQ(dup.status, 1);
  EXPECT_NE(dup.output.find("409"), std::string::npos) << dup.output;
  EXPECT_NE(dup.output.find("name"), std::string::npos) << dup.output;

  EXPECT_EQ(ctl({"subnets", "delete", "rail-0"}).status, 1);  // ports still there
  EXPECT_EQ(ctl({"ports", "delete", p0["id"]}).status, 0);
  EXPECT_EQ(ctl({"ports", "delete", p1["id"]}).status, 0);
  EXPECT_EQ(ctl({"subnets", "delete", "rail-0"}).status, 0);
  EXPECT_EQ(ctl_json({"subnets", "list"})["items"].size(), 0u);
}

TEST_F(Hsnsctl, ReportsConnectionAndUsageErrors) {
  auto bad = ctl({"hosts", "register", "h", "--npu", "zero:eth2"});
  EXPECT_EQ(bad.status, 64) << bad.output;
  auto r = run_command({build_path("cli/hsnsctl").string(), "--server", "http://127.0.0.1:1", "health"});
  EXPECT_EQ(r.status, 2) << r.output;
  auto health = ctl({"health"});
  EXPECT_EQ(health.status, 0) << health.output;
}

// search -> schedule --best -> jobs, on a generated cluster whose NPUs have ports (the route plan's
// addresses): the launcher files are written, the job's hosts are no longer offered, delete frees them.
TEST_F(Hsnsctl, SearchesSchedulesAndReleasesAJob) {
  auto topo = ctl_json({"topology", "generate", "--hosts", "8", "--npus-per-host", "2", "--hosts-per-su", "4",
                        "--spines", "2", "--name", "ctl-lab"});
  ASSERT_EQ(topo["hosts"], 8);
  ASSERT_EQ(ctl({"subnets", "create", "--name", "rail", "--cidr", "198.18.0.0/24"}).status, 0);
  for (int h = 1; h <= 8; ++h) {
    const std::string host = "host00" + std::to_string(h);
    const std::string mac = "02:00:00:00:0" + std::to_string(h) + ":0";
    auto reg =
        ctl({"hosts", "register", host, "--npu", "0:eth0:" + mac + "0", "--npu", "1:eth1:" + mac + "1"});
    ASSERT_EQ(reg.status, 0) << reg.output;
    for (const char* npu : {"0", "1"}) {
      auto port = ctl({"ports", "create", "--subnet", "rail", "--host", host, "--npu", npu});
      ASSERT_EQ(port.status, 0) << port.output;
    }
  }
  const std::vector<std::string> model = {
      "--parameters",   "1000000000", "--layers",  "8",    "--hidden",      "1024",
      "--heads",        "16",         "--seq-len", "2048", "--micro-batch", "1",
      "--global-batch", "8",          "--tp",      "2",    "--dp",          "4"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };

  auto found = ctl_json(with({"search", "--answers", "2"}, model));
  ASSERT_FALSE(found["candidates"].empty()) << found.dump();
  const auto& best = found["candidates"][0];
  ASSERT_EQ(best["hosts"].size(), 4u) << best.dump();
  auto table = ctl(with({"search"}, model));
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("TOTAL_MS"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("#1 hosts: " + best["hosts"][0]["name"].get<std::string>()), std::string::npos)
      << table.output;

  const auto out = dir_.path() / "launch";
  auto job = ctl_json(
      with({"schedule", "train-a", "--best", "--framework", "pytorch", "--out-dir", out.string()}, model));
  EXPECT_EQ(job["job_name"], "train-a");
  EXPECT_EQ(job["world_size"], 8);
  ASSERT_EQ(job["placement"]["hosts"].size(), 4u);
  std::set<std::string> used;
  for (const auto& h : job["placement"]["hosts"]) used.insert(h["name"].get<std::string>());
  std::set<std::string> searched;
  for (const auto& h : best["hosts"]) searched.insert(h["name"].get<std::string>());
  EXPECT_EQ(used, searched);  // --best took the search's first candidate
  // The launcher files are the answer's.
  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(json::parse(read(out / "hccl.json")), job["hccl_json"]);
  EXPECT_EQ(read(out / "hostfile"), job["hostfile"].get<std::string>());
  EXPECT_EQ(read(out / "MultiQpSrcPort.cfg"), job["route_plan"]["multiqp_cfg"].get<std::string>());
  for (const auto& env : job["torchrun"]) {
    EXPECT_EQ(read(out / "torchrun" / (env["host"].get<std::string>() + ".env")),
              env["env"].get<std::string>());
  }
  EXPECT_EQ(json::parse(read(out / "schedule.json")), job);

  auto listed = ctl({"jobs", "list"});
  ASSERT_EQ(listed.status, 0) << listed.output;
  EXPECT_NE(listed.output.find("train-a"), std::string::npos) << listed.output;
  auto shown = ctl_json({"jobs", "get", "train-a"});
  EXPECT_EQ(shown["ranks"].size(), 8u);

  // The job's hosts are allocated: search no longer offers them; scheduling onto them again is refused.
  auto again = ctl_json(with({"search", "--answers", "5"}, model));
  for (const auto& c : again["candidates"]) {
    for (const auto& h : c["hosts"]) EXPECT_EQ(used.count(h["name"].get<std::string>()), 0u) << c.dump();
  }
  std::string host_list;
  for (const auto& h : used) host_list += (host_list.empty() ? "" : ",") + h;
  auto clash = ctl(with({"schedule", "train-b", "--hosts", host_list}, model));
  EXPECT_EQ(clash.status, 1) << clash.output;
  EXPECT_NE(clash.output.find("409"), std::string::npos) << clash.output;

  // Usage errors never reach the server.
  EXPECT_EQ(ctl(with({"schedule", "train-c"}, model)).status, 64);
  EXPECT_EQ(ctl(with({"schedule", "train-c", "--best", "--source-ports", "9-x"}, model)).status, 64);

  auto deleted = ctl({"jobs", "delete", "train-a"});
  ASSERT_EQ(deleted.status, 0) << deleted.output;
  EXPECT_EQ(ctl_json({"jobs", "list"})["items"].size(), 0u);
  auto freed = ctl_json(with({"search", "--answers", "1", "--hosts", host_list}, model));
  ASSERT_EQ(freed["candidates"].size(), 1u) << freed.dump();
  EXPECT_EQ(ctl({"jobs", "delete", "train-a"}).status, 1);
}

}  // namespace
}  // namespace hsns::testing
