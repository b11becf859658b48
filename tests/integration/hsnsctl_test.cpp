// hsnsctl end to end: the real CLI binary against the real aggregator.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "aggregator_process.h"

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

}  // namespace
}  // namespace hsns::testing
