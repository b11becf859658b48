// Desired-state fan-out: HOSTS simulated node daemons polling GET /api/v1/agents/{host}/desired with
// If-None-Match every PERIOD seconds (HOSTS / PERIOD requests/s, nearly all 304), from one load client
// over CONNECTIONS kept-alive connections (one per thread, each thread owning every CONNECTIONS-th host).
//
//  1. setup: one subnet, HOSTS hosts with one NPU and one port each in it (skipped when already there);
//  2. steady state for SECONDS: requests/s achieved, latency p50/p99/max of the 304 answers, and the
//     aggregator's CPU (utime + stime of PID from /proc/PID/stat over the window) as % of one core;
//  3. fan-out: the subnet is renamed (every host's desired state changes) while polling goes on; the time
//     from the rename's answer to the last host getting the new document (and the median host), the
//     latency of those 200s and the aggregator's CPU until the last host had it.
// Usage: hsns_bench_desired_fanout URL TOKEN AGGREGATOR_PID [HOSTS=10000] [PERIOD=5] [SECONDS=20]
//                                  [CONNECTIONS=8]
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.h"
#include "hsns/http_client.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::percentile;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "hsns_bench_desired_fanout: %s\n", what.c_str());
  std::exit(1);
}

// utime + stime of a process in seconds (/proc/PID/stat fields 14 and 15, after the command in parens).
double process_cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) die("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string host_name(int i) {
  return "node-" + std::to_string(i);
}

struct Poller {
  std::vector<int> hosts;
  std::vector<std::string> etags;         // per owned host
  std::vector<double> seen_change_at_ms;  // per owned host: when the renamed document arrived (-1: not yet)
  std::vector<double> not_modified_us;
  std::vector<double> changed_us;  // latency of the 200s that brought the renamed document
  long long requests = 0;
  long long ok_200 = 0;
  long long errors = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4)
    die("usage: hsns_bench_desired_fanout URL TOKEN PID [HOSTS] [PERIOD] [SECONDS] [CONNECTIONS]");
  const std::string url = argv[1];
  const std::string token = argv[2];
  const int pid = std::stoi(argv[3]);
  const int hosts = argc > 4 ? std::stoi(argv[4]) : 10000;
  const double period_s = argc > 5 ? std::stod(argv[5]) : 5.0;
  const double seconds = argc > 6 ? std::stod(argv[6]) : 20.0;
  const int connections = argc > 7 ? std::stoi(argv[7]) : 8;

  // ---- setup ----
  hsns::HttpClient admin(url, token);
  std::string subnet_id;
  if (auto list = admin.get("/api/v1/subnets?name=fanout"); list && list->status == 200) {
    const auto items = nlohmann::json::parse(list->body)["items"];
    if (!items.empty()) subnet_id = items[0]["id"];
  }
  if (subnet_id.empty()) {
    auto s = admin.post("/api/v1/subnets", R"({"name":"fanout","cidr":"10.64.0.0/16","mtu":4200})");
    if (!s || s->status != 201) die("create subnet: " + (s ? s->body : s.error()));
    subnet_id = nlohmann::json::parse(s->body)["id"];
  }
  const auto setup_start = Clock::now();
  {
    constexpr int kSetupConnections = 4;
    std::vector<std::thread> workers;
    workers.reserve(kSetupConnections);
    std::atomic<bool> failed{false};
    for (int t = 0; t < kSetupConnections; ++t) {
      workers.emplace_back([&, t] {
        hsns::HttpClient c(url, token);
        for (int i = t; i < hosts && !failed; i += kSetupConnections) {
          char mac[18];
          std::snprintf(mac, sizeof mac, "02:00:00:%02x:%02x:00", (i >> 8) & 0xFF, i & 0xFF);
          const auto npus = nlohmann::json::array({{{"index", 0}, {"netdev", "eth2"}, {"mac", mac}}});
          auto r = c.put("/api/v1/hosts/" + host_name(i), nlohmann::json({{"npus", npus}}).dump());
          if (!r || r->status >= 300) {
            failed = true;
            std::fprintf(stderr, "register host: %s\n", r ? r->body.c_str() : r.error().c_str());
            return;
          }
          if (r->status == 200) continue;  // registered by an earlier run: its port exists
          auto p =
              c.post("/api/v1/ports",
                     nlohmann::json({{"subnet_id", subnet_id}, {"host", host_name(i)}, {"npu", 0}}).dump());
          if (!p || p->status != 201) {
            failed = true;
            std::fprintf(stderr, "create port: %s\n", p ? p->body.c_str() : p.error().c_str());
            return;
          }
        }
      });
    }
    for (auto& w : workers) w.join();
    if (failed) die("setup failed");
  }
  std::printf("setup: %d hosts with a port each in %.1f s\n", hosts,
              hsns::bench::ms_since(setup_start) / 1e3);

  // ---- polling ----
  std::vector<Poller> pollers(static_cast<std::size_t>(connections));
  for (int i = 0; i < hosts; ++i) pollers[static_cast<std::size_t>(i % connections)].hosts.push_back(i);
  for (auto& p : pollers) {
    p.etags.assign(p.hosts.size(), "");
    p.seen_change_at_ms.assign(p.hosts.size(), -1);
  }
  std::atomic<int> phase{0};  // 0 warm-up (first fetch), 1 measure, 2 fan-out, 3 stop
  std::atomic<double> change_at_ms{-1};
  std::atomic<int> tagged{0};  // hosts holding their tag
  const auto start = Clock::now();
  const double interval_s = period_s * connections / hosts;  // between two requests of one thread

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(connections));
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&, t] {
      auto& me = pollers[static_cast<std::size_t>(t)];
      hsns::HttpClient c(url, token);
      long long n = 0;
      const auto thread_start = Clock::now();
      while (phase.load() != 3) {
        const auto due =
            thread_start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(interval_s * static_cast<double>(n)));
        std::this_thread::sleep_until(due);
        const auto k = static_cast<std::size_t>(n % static_cast<long long>(me.hosts.size()));
        ++n;
        hsns::HttpHeaders headers;
        if (!me.etags[k].empty()) headers.emplace_back("If-None-Match", me.etags[k]);
        const int ph = phase.load();
        const auto t0 = Clock::now();
        auto r = c.get("/api/v1/agents/" + host_name(me.hosts[k]) + "/desired", headers);
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (!r || (r->status != 200 && r->status != 304)) {
          ++me.errors;
          continue;
        }
        if (ph == 1) {
          ++me.requests;
          if (r->status == 304) me.not_modified_us.push_back(us);
        }
        if (r->status == 200) {
          if (ph >= 1) ++me.ok_200;
          if (me.etags[k].empty()) ++tagged;
          me.etags[k] = r->etag;
          const double changed = change_at_ms.load();
          if (changed >= 0 && me.seen_change_at_ms[k] < 0 &&
              r->body.find("fanout-renamed") != std::string::npos) {
            me.seen_change_at_ms[k] = hsns::bench::ms_since(start) - changed;
            me.changed_us.push_back(us);
          }
        }
      }
    });
  }

  // Warm-up: until every host holds its tag (at least one period).
  std::this_thread::sleep_for(std::chrono::duration<double>(period_s));
  while (tagged.load() < hosts) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  phase = 1;
  const double cpu0 = process_cpu_seconds(pid);
  const auto m0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu1 = process_cpu_seconds(pid);
  const double window_s = hsns::bench::ms_since(m0) / 1e3;
  phase = 2;

  long long requests = 0;
  long long ok = 0;
  long long errors = 0;
  std::vector<double> nm;
  for (auto& p : pollers) {
    requests += p.requests;
    ok += p.ok_200;
    errors += p.errors;
    nm.insert(nm.end(), p.not_modified_us.begin(), p.not_modified_us.end());
  }
  std::printf("steady state (%d hosts, every %.1f s, %d connections, %.1f s):\n", hosts, period_s,
              connections, window_s);
  std::printf("  requests/s %.0f (target %.0f), 304 %zu, 200 %lld, errors %lld\n",
              static_cast<double>(requests) / window_s, hosts / period_s, nm.size(), ok, errors);
  std::printf("  304 latency: p50 %.0f us  p99 %.0f us  max %.0f us\n", percentile(nm, 0.5),
              percentile(nm, 0.99), percentile(nm, 1.0));
  std::printf("  aggregator CPU: %.1f %% of one core\n", 100.0 * (cpu1 - cpu0) / window_s);

  // ---- fan-out ----
  auto renamed = admin.patch("/api/v1/subnets/" + subnet_id, R"({"name":"fanout-renamed"})");
  if (!renamed || renamed->status != 200) die("rename: " + (renamed ? renamed->body : renamed.error()));
  change_at_ms = hsns::bench::ms_since(start);
  const double fanout_cpu0 = process_cpu_seconds(pid);
  const auto fanout_start = Clock::now();
  const auto deadline = Clock::now() + std::chrono::duration<double>(4 * period_s + 10);
  std::vector<double> seen;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::size_t done = 0;
    for (auto& p : pollers) {
      for (double v : p.seen_change_at_ms) done += v >= 0 ? 1 : 0;
    }
    if (done == static_cast<std::size_t>(hosts)) break;
  }
  const double fanout_cpu = process_cpu_seconds(pid) - fanout_cpu0;
  const double fanout_s = hsns::bench::ms_since(fanout_start) / 1e3;
  phase = 3;
  for (auto& t : threads) t.join();
  std::vector<double> changed_us;
  for (auto& p : pollers) {
    for (double v : p.seen_change_at_ms) {
      if (v >= 0) seen.push_back(v);
    }
    changed_us.insert(changed_us.end(), p.changed_us.begin(), p.changed_us.end());
  }
  std::printf(
      "fan-out of one subnet rename to %d hosts: %zu saw it; median host %.2f s, last host %.2f s "
      "(poll period %.1f s)\n",
      hosts, seen.size(), percentile(seen, 0.5) / 1e3, percentile(seen, 1.0) / 1e3, period_s);
  std::printf(
      "  200 with the new document: p50 %.0f us  p99 %.0f us  max %.0f us; aggregator CPU %.1f %% of one "
      "core over the %.1f s until the last host had it\n",
      percentile(changed_us, 0.5), percentile(changed_us, 0.99), percentile(changed_us, 1.0),
      100.0 * fanout_cpu / fanout_s, fanout_s);
  // Put the name back, so the bench can run again on the same database.
  (void)admin.patch("/api/v1/subnets/" + subnet_id, R"({"name":"fanout"})");
  return seen.size() == static_cast<std::size_t>(hosts) && errors == 0 ? 0 : 1;
}
