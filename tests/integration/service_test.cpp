// End-to-end tests of the aggregator as a service: metrics (checked by promtool), TLS, configuration
// checks, graceful shutdown, transport limits.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/aggregator_process.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

TEST(AggregatorService, MetricsPassPromtoolAndCountRequests) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto c = agg.client();
  ASSERT_EQ(c.post("/api/v1/subnets", R"({"name":"m","cidr":"198.18.0.0/24"})")->status, 201);
  ASSERT_EQ(c.get("/api/v1/subnets")->status, 200);
  ASSERT_EQ(c.get("/api/v1/ports/does-not-exist")->status, 404);
  ASSERT_EQ(agg.client("").get("/api/v1/ports")->status, 401);
  auto m = c.get("/metrics");
  ASSERT_TRUE(m && m->status == 200);
  EXPECT_NE(m->content_type.find("text/plain"), std::string::npos);
  const auto& text = m->body;
  EXPECT_NE(text.find(R"(hsns_http_requests_total{code="201",method="POST",route="/api/v1/subnets"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(route="/api/v1/ports/{port_id}")"), std::string::npos);
  EXPECT_NE(text.find("hsns_http_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(text.find(R"(hsns_store_operation_duration_seconds_count{operation="create_subnet"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find("hsns_build_info{"), std::string::npos);
  EXPECT_NE(text.find(R"(hsns_http_auth_failures_total{reason="missing_token"} 1)"), std::string::npos);
  const auto promtool = run_command({"promtool", "check", "metrics"}, text);
  EXPECT_EQ(promtool.status, 0) << promtool.output;
  EXPECT_EQ(promtool.output, "") << "promtool reported lint problems";
  EXPECT_EQ(agg.stop(), 0);
}

// The niceness of each thread of a process (field 19 of /proc/<pid>/task/<tid>/stat, after the command).
std::vector<int> thread_niceness(int pid) {
  std::vector<int> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19; ++i) fields >> field;  // state .. nice
    out.push_back(std::stoi(field));
  }
  return out;
}

// Heavy requests run on worker threads at a lower CPU priority (http.worker_nice), the I/O threads not.
TEST(AggregatorService, WorkerThreadsRunHeavyRequestsAtLowerPriority) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.set_config("http:\n  worker_threads: 2\n  worker_nice: 7\n");
  agg.start();
  auto c = agg.client();
  for (int i = 0; i < 4; ++i) {  // a few heavy requests, so that both workers have run one
    auto r = c.post("/api/v1/topology/generate", R"({"hosts":4,"npus_per_host":2,"hosts_per_su":2})");
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : r.error());
  }
  // Relative to the niceness the aggregator was started with (the test command may itself run under nice).
  const int base = ::getpriority(PRIO_PROCESS, 0);
  const int lowered = std::min(19, base + 7);
  const auto nice = thread_niceness(agg.pid());
  EXPECT_GE(std::count(nice.begin(), nice.end(), lowered), 1) << "no worker thread was lowered";
  EXPECT_GE(std::count(nice.begin(), nice.end(), base), 2) << "the main and I/O threads keep their priority";
  EXPECT_EQ(std::count_if(nice.begin(), nice.end(), [&](int n) { return n != base && n != lowered; }), 0);
  EXPECT_EQ(agg.stop(), 0);
}

TEST(AggregatorService, ServesItsOpenApiDocument) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto r = agg.client("").get("/api/v1/openapi.json");
  ASSERT_TRUE(r && r->status == 200);
  const auto doc = json::parse(r->body);
  std::ifstream in(source_path("aggregator/openapi.json"));
  EXPECT_EQ(doc, json::parse(in));
  EXPECT_EQ(agg.stop(), 0);
}

TEST(AggregatorService, ReadinessHeadAndPipelining) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto c = agg.client("");
  auto ready = c.get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(json::parse(ready->body)["status"], "ready");
  auto head = c.request("HEAD", "/healthz", "", "");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  // Many sequential requests on one kept-alive connection.
  for (int i = 0; i < 50; ++i) ASSERT_EQ(c.get("/healthz")->status, 200);
  EXPECT_EQ(c.connections_opened(), 1u);
  EXPECT_EQ(agg.stop(), 0);
}

TEST(AggregatorService, ServesTlsWithAVerifiedCertificate) {
  TempDir dir;
  const auto cert = dir.path() / "ca.pem";
  const auto key = dir.path() / "key.pem";
  const auto gen =
      run_command({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                   "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                   "-keyout", key.string(), "-out", cert.string()});
  ASSERT_EQ(gen.status, 0) << gen.output;
  AggregatorProcess agg(dir.path(), {"--tls-cert", cert.string(), "--tls-key", key.string()});
  agg.start();
  ASSERT_EQ(agg.url().rfind("https://", 0), 0u);
  auto c = agg.client();
  auto r = c.post("/api/v1/subnets", R"({"name":"tls","cidr":"198.18.0.0/24"})");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->status, 201);
  // Plain HTTP to the TLS port does not get an answer.
  HttpClient plain("http://127.0.0.1:" + std::to_string(agg.port()),
                   HttpClient::Options{"", "", std::chrono::seconds(5), ""});
  auto p = plain.get("/healthz");
  EXPECT_TRUE(!p || p->status != 200);
  EXPECT_EQ(agg.stop(), 0);
}

TEST(AggregatorService, RefusesUnsafeConfigurations) {
  TempDir dir;
  const auto bin = build_path("aggregator/hsns-aggregator").string();
  auto r = run_command({bin, "--config", (dir.path() / "absent.yaml").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;

  std::ofstream(dir.path() / "a.yaml") << "listen_address: 0.0.0.0\ninsecure_no_auth: true\n";
  r = run_command({bin, "check-config", "--config", (dir.path() / "a.yaml").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.output.find("loopback"), std::string::npos) << r.output;

  std::ofstream(dir.path() / "b.yaml") << "port: 8080\ncolour: red\n";
  r = run_command({bin, "check-config", "--config", (dir.path() / "b.yaml").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.output.find("colour"), std::string::npos) << r.output;

  std::ofstream(dir.path() / "tokens.yaml")
      << "tokens:\n  - {name: a, role: admin, token: 0123456789abcdef0}\n";
  std::ofstream(dir.path() / "c.yaml") << "tokens_file: " << (dir.path() / "tokens.yaml").string()
                                       << "\ndatabase: " << (dir.path() / "x.db").string() << "\n";
  r = run_command({bin, "check-config", "--config", (dir.path() / "c.yaml").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("tokens[0]: role"), std::string::npos) << r.output;

  std::ofstream(dir.path() / "tokens.yaml")
      << "tokens:\n  - {name: a, role: operator, token: 0123456789abcdef0}\n";
  r = run_command({bin, "check-config", "--config", (dir.path() / "c.yaml").string()});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("configuration OK"), std::string::npos) << r.output;

  r = run_command({bin, "--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("hsns-aggregator"), std::string::npos);
}

TEST(AggregatorService, InsecureModeWorksOnLoopbackWithoutTokens) {
  TempDir dir;
  AggregatorProcess agg(dir.path(), {"--insecure-no-auth"});
  agg.start();
  auto r = agg.client("").post("/api/v1/subnets", R"({"name":"demo","cidr":"198.18.0.0/24"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(agg.stop(), 0);
}

TEST(AggregatorService, IdleConnectionsDoNotDelayShutdown) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  std::vector<HttpClient> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(agg.client(""));
    ASSERT_EQ(idle.back().get("/healthz")->status, 200);  // connection stays open, idle
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(agg.stop(), 0) << agg.log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(agg.log().find("stopped"), std::string::npos);
}

}  // namespace
}  // namespace hsns::testing
