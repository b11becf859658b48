// Port-creation latency against a running aggregator, with a same-run baseline.
//
// Loads HOSTS hosts x 8 NPUs into one subnet by creating one port per NPU over a single kept-alive
// connection, timing each POST /api/v1/ports; then times as many GET /healthz on the same connection
// (the baseline: HTTP round trip plus routing, no store). Prints p50/p99/mean of both and their ratio.
// Usage: hsns_bench_port_create URL TOKEN [HOSTS=125]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Summary {
  double p50_us, p99_us, mean_us;
};

Summary summarise(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  auto pct = [&](double p) {
    return us[std::min(us.size() - 1, static_cast<std::size_t>(p * static_cast<double>(us.size())))];
  };
  return {pct(0.50), pct(0.99), sum / static_cast<double>(us.size())};
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "hsns_bench_port_create: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) die("usage: hsns_bench_port_create URL TOKEN [HOSTS]");
  const int hosts = argc > 3 ? std::stoi(argv[3]) : 125;
  hsns::HttpClient c(argv[1], std::string(argv[2]));

  auto subnet = c.post("/api/v1/subnets", R"({"name":"bench","cidr":"198.18.0.0/20","mtu":4200})");
  if (!subnet || subnet->status != 201) die("create subnet: " + (subnet ? subnet->body : subnet.error()));
  const std::string subnet_id = nlohmann::json::parse(subnet->body)["id"];

  std::vector<double> create_us;
  for (int h = 0; h < hosts; ++h) {
    nlohmann::json npus = nlohmann::json::array();
    for (int i = 0; i < 8; ++i) {
      char mac[18];
      std::snprintf(mac, sizeof mac, "02:00:00:%02x:%02x:%02x", (h >> 8) & 0xFF, h & 0xFF, i);
      npus.push_back({{"index", i}, {"netdev", "eth" + std::to_string(i + 2)}, {"mac", mac}});
    }
    const std::string host = "bench-" + std::to_string(h);
    auto r = c.put("/api/v1/hosts/" + host, nlohmann::json({{"npus", npus}}).dump());
    if (!r || r->status >= 300) die("register host: " + (r ? r->body : r.error()));
    for (int i = 0; i < 8; ++i) {
      const auto body = nlohmann::json({{"subnet_id", subnet_id}, {"host", host}, {"npu", i}}).dump();
      const auto t0 = Clock::now();
      auto p = c.post("/api/v1/ports", body);
      const std::chrono::duration<double, std::micro> dt = Clock::now() - t0;
      if (!p || p->status != 201) die("create port: " + (p ? p->body : p.error()));
      create_us.push_back(dt.count());
    }
  }
  std::vector<double> base_us;
  for (std::size_t i = 0; i < create_us.size(); ++i) {
    const auto t0 = Clock::now();
    auto r = c.get("/healthz");
    const std::chrono::duration<double, std::micro> dt = Clock::now() - t0;
    if (!r || r->status != 200) die("healthz");
    base_us.push_back(dt.count());
  }
  const auto cs = summarise(create_us);
  const auto bs = summarise(base_us);
  std::printf("port creation (%zu ports, one connection):  p50 %.0f us  p99 %.0f us  mean %.0f us\n",
              create_us.size(), cs.p50_us, cs.p99_us, cs.mean_us);
  std::printf("baseline GET /healthz (same connection):      p50 %.0f us  p99 %.0f us  mean %.0f us\n",
              bs.p50_us, bs.p99_us, bs.mean_us);
  std::printf("ratio port creation / baseline:                p50 %.1fx  p99 %.1fx\n", cs.p50_us / bs.p50_us,
              cs.p99_us / bs.p99_us);
  return 0;
}
