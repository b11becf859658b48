// Device state updates and a large import against a running aggregator, each beside a same-run baseline.
//
// hsns_bench_topology_update URL TOKEN HOSTS AGGREGATOR_PID
//   1. generates a rail-optimised cluster of HOSTS hosts x 8 NPUs (the library's generator, server model
//      limits) and its import document (the file schema as JSON);
//   2. baseline: the JSON parse alone of that document, in a child process of its own (time and peak RSS);
//   3. PUT /api/v1/topology with it: time, and the aggregator's peak RSS (VmHWM; start it fresh);
//   4. GET /healthz and PATCH /api/v1/topology/devices/{host} (state alternating, so each one stores a
//      change), 200 of each on one kept-alive connection: p50/p99;
//   5. PATCH /api/v1/topology/devices with 1,000 hosts, 10 times (alternating states): p50 and max.
// hsns_bench_topology_update parse FILE: step 2's child (prints "parse_ms peak_rss_mb").
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "hsns/http_client.h"
#include "topology/export.h"
#include "topology/generator.h"

namespace {

namespace topo = hsns::topology;
using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::percentile;
using nlohmann::json;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "hsns_bench_topology_update: %s\n", what.c_str());
  std::exit(1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Peak resident set of a process in MB (VmHWM of /proc/PID/status).
double peak_rss_mb(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

int parse_only(const std::string& path) {
  const std::string text = read_file(path);
  const auto t0 = Clock::now();
  const auto doc = json::parse(text);
  const double ms = ms_since(t0);
  std::printf("%.1f %.1f\n", ms, peak_rss_mb("self"));
  return doc.is_object() ? 0 : 1;
}

topo::ClosParams cluster(std::uint32_t hosts) {
  topo::ClosParams p;
  p.hosts = hosts;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  const std::uint32_t sus = (hosts + 31) / 32;
  p.superpods = std::max<std::uint32_t>(1, std::min<std::uint32_t>(16, sus / 8));
  p.cores = p.superpods > 1 ? 8 : 0;
  p.fabric_link_gbps = 0;
  p.name = "bench";
  return p;
}

struct Timed {
  int status = 0;
  double ms = 0;
};

Timed timed(hsns::HttpClient& c, const char* method, const std::string& target,
            const std::string& body = "") {
  const auto t0 = Clock::now();
  auto r = c.request(method, target, body, body.empty() ? "" : "application/json");
  const double ms = ms_since(t0);
  if (!r) die(std::string(method) + " " + target + ": " + r.error());
  if (r->status != 200)
    die(std::string(method) + " " + target + ": " + std::to_string(r->status) + " " + r->body);
  return {r->status, ms};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "parse") return parse_only(argv[2]);
  if (argc < 5) die("usage: hsns_bench_topology_update URL TOKEN HOSTS AGGREGATOR_PID");
  const auto hosts = static_cast<std::uint32_t>(std::stoul(argv[3]));
  const std::string pid = argv[4];

  auto model = topo::generate_clos(cluster(hosts));
  if (!model) die("generate: " + model.error().message());
  std::string text = topo::export_topology_document(*model).dump();
  std::vector<std::string> names;
  for (auto id : model->hosts()) names.push_back(model->node(id).name);
  std::printf("cluster: %u hosts x 8 NPUs, %zu switches, %zu links; import document %.1f MB\n", hosts,
              model->nodes().size() - names.size(), model->links().size(),
              static_cast<double>(text.size()) / 1e6);
  model = tl::unexpected(hsns::Error::internal("released"));  // free the model before measuring

  // Baseline: the JSON parse alone, in a process of its own.
  const std::string file = "/tmp/hsns_bench_topology_" + std::to_string(getpid()) + ".json";
  std::ofstream(file, std::ios::binary) << text;
  const std::string cmd = std::string("'") + argv[0] + "' parse " + file;
  FILE* child = popen(cmd.c_str(), "r");
  double parse_ms = 0;
  double parse_rss = 0;
  if (child == nullptr || std::fscanf(child, "%lf %lf", &parse_ms, &parse_rss) != 2)
    die("parse child failed");
  pclose(child);
  std::remove(file.c_str());

  hsns::HttpClientOptions options;
  options.bearer_token = argv[2];
  options.timeout = std::chrono::minutes(5);
  hsns::HttpClient c(argv[1], options);
  const double rss_before = peak_rss_mb(pid);
  const auto put = timed(c, "PUT", "/api/v1/topology", text);
  const double rss_after = peak_rss_mb(pid);
  text.clear();
  text.shrink_to_fit();
  std::printf("import PUT /api/v1/topology: %9.0f ms, aggregator peak RSS %6.0f MB (%6.0f MB before)\n",
              put.ms, rss_after, rss_before);
  std::printf("baseline JSON parse alone:    %9.0f ms, peak RSS %6.0f MB       ratio import/parse %5.1f\n",
              parse_ms, parse_rss, put.ms / parse_ms);

  constexpr int kRounds = 200;
  std::vector<double> health;
  std::vector<double> patch;
  for (int i = 0; i < kRounds; ++i) health.push_back(timed(c, "GET", "/healthz").ms);
  for (int i = 0; i < kRounds; ++i) {
    const std::string& host = names[(static_cast<std::size_t>(i) * 7919) % names.size()];
    const std::string state = (i / static_cast<int>(names.size())) % 2 == 0 ? "sub-health" : "healthy";
    patch.push_back(timed(c, "PATCH", "/api/v1/topology/devices/" + host, json{{"state", state}}.dump()).ms);
  }
  const double h50 = percentile(health, 0.5);
  const double h99 = percentile(health, 0.99);
  std::printf("PATCH one device:  p50 %7.2f ms  p99 %7.2f ms   (%d requests)\n", percentile(patch, 0.5),
              percentile(patch, 0.99), kRounds);
  std::printf("GET /healthz:      p50 %7.2f ms  p99 %7.2f ms   ratio p50 %.1f\n", h50, h99,
              percentile(patch, 0.5) / h50);

  std::vector<double> bulk;
  for (int round = 0; round < 10; ++round) {
    json devices = json::array();
    for (std::size_t k = 0; k < 1000; ++k) {
      devices.push_back({{"name", names[(static_cast<std::size_t>(round / 2) * 1000 + k) % names.size()]},
                         {"state", round % 2 == 0 ? "isolated" : "healthy"}});
    }
    bulk.push_back(timed(c, "PATCH", "/api/v1/topology/devices", json{{"devices", devices}}.dump()).ms);
  }
  std::printf("bulk of 1,000:     p50 %7.2f ms  max %7.2f ms   (10 requests)  ratio p50/healthz %.0f\n",
              percentile(bulk, 0.5), *std::max_element(bulk.begin(), bulk.end()),
              percentile(bulk, 0.5) / h50);
  return 0;
}
