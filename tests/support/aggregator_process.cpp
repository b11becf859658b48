#include "support/aggregator_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "support/netns.h"

namespace hsns::testing {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

}  // namespace

std::filesystem::path build_path(const std::string& relative) {
  return std::filesystem::path(env_or("HSNS_BUILD_DIR", HSNS_TEST_BUILD_DIR)) / relative;
}

std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(env_or("HSNS_SOURCE_DIR", HSNS_TEST_SOURCE_DIR)) / relative;
}

AggregatorProcess::AggregatorProcess(std::filesystem::path workdir, std::vector<std::string> extra_args)
    : workdir_(std::move(workdir)), extra_args_(std::move(extra_args)) {
  std::ofstream tokens(workdir_ / "tokens.yaml");
  tokens << "tokens:\n"
         << "  - {name: ops, role: operator, token: " << kOperatorToken << "}\n"
         << "  - {name: dashboard, role: viewer, token: " << kViewerToken << "}\n"
         << "  - {name: hsnsd, role: agent, token: " << kAgentToken << "}\n"
         << "  - {name: slurm, role: scheduler, token: " << kSchedulerToken << "}\n"
         << "  - {name: hsnsd-node-1, role: agent, host: " << kBoundAgentHost
         << ", token: " << kBoundAgentToken << "}\n";
  for (const auto& a : extra_args_) {
    if (a == "--tls-cert") scheme_ = "https";
  }
}

AggregatorProcess::~AggregatorProcess() = default;  // ~Process kills a still running aggregator

void AggregatorProcess::start() {
  const auto ready = workdir_ / "ready";
  std::filesystem::remove(ready);
  std::vector<std::string> args = {build_path("aggregator/hsns-aggregator").string(),
                                   "run",
                                   "--config",
                                   (workdir_ / "no-such-config.yaml").string(),
                                   "--listen",
                                   host_ + ":" + std::to_string(listen_port_),
                                   "--database",
                                   database().string(),
                                   "--tokens-file",
                                   (workdir_ / "tokens.yaml").string(),
                                   "--ready-file",
                                   ready.string(),
                                   "--threads",
                                   "2"};
  std::ofstream(workdir_ / "no-such-config.yaml") << config_yaml_;
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  if (!netns_.empty()) args = Namespaces::in(netns_, args);
  ProcessOptions options;
  options.stdout_path = workdir_ / "aggregator.log";
  options.max_open_files = descriptor_limit_;
  process_ = Process(args, options);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (read_file(ready).empty()) {
    if (!process_.running()) FAIL() << "hsns-aggregator exited during start-up:\n" << log();
    if (std::chrono::steady_clock::now() > deadline)
      FAIL() << "hsns-aggregator not ready in 20 s:\n" << log();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::istringstream in(read_file(ready));
  std::string address;
  in >> address >> port_;
  ASSERT_GT(port_, 0);
}

int AggregatorProcess::stop() {
  if (process_.pid() <= 0) return -1;
  return process_.stop().shell();
}

void AggregatorProcess::kill9() {
  process_.kill();
}

std::string AggregatorProcess::url() const {
  return scheme_ + "://" + host_ + ":" + std::to_string(port_);
}

HttpClient AggregatorProcess::client(const std::string& token) const {
  HttpClient::Options o;
  o.bearer_token = token;
  o.timeout = std::chrono::seconds(30);
  if (scheme_ == "https") o.ca_file = (workdir_ / "ca.pem").string();
  return HttpClient(url(), o);
}

std::string AggregatorProcess::log() const {
  return read_file(workdir_ / "aggregator.log");
}

std::string generate_small_fabric_leaf(const AggregatorProcess& aggregator) {
  auto gen = aggregator.client().post(
      "/api/v1/topology/generate",
      R"({"hosts": 4, "npus_per_host": 2, "hosts_per_su": 2, "spines_per_plane": 2, "name": "cluster-a"})");
  EXPECT_TRUE(gen && gen->status == 200) << (gen ? gen->body : gen.error());
  auto exported = aggregator.client().get("/api/v1/topology/export?format=json");
  EXPECT_TRUE(exported && exported->status == 200);
  if (!exported || exported->status != 200) return "";
  std::smatch leaf;
  const bool found = std::regex_search(exported->body, leaf, std::regex("\"(leaf[A-Za-z0-9_-]*[0-9])\""));
  EXPECT_TRUE(found) << exported->body;
  return found ? leaf[1].str() : "";
}

}  // namespace hsns::testing
