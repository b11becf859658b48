// Throughput of the network brain's detectors: rounds of one sample per series through a DetectorBank of
// HOSTS x 8 ports (default 10,000 hosts: 80,000 series) with every detector on (a counter: rate with wrap
// detection, robust baseline, rate of change, level shift, burst, threshold), beside a same-run baseline
// that builds the same key and stores the sample into a hash map. Prints ns per sample for both, their
// ratio, the thread's CPU time and the resident memory per series.
//
// Usage: hsns_bench_brain_detectors [HOSTS] [TIMED ROUNDS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bench_timing.h"
#include "brain/bank.h"

namespace {

using hsns::bench::Clock;

constexpr int kPorts = 8;
constexpr std::int64_t kPollMs = 10'000;
constexpr std::string_view kMetric = "port_rcv_data_all";
// The first sample of a counter gives no rate, then 64 rates fill the baseline window (the longest).
constexpr int kFillRounds = 1 + 64 + 1;

long rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

hsns::brain::BrainConfig all_detectors() {
  using namespace hsns::brain;
  BrainConfig b;
  DetectorConfig c;
  c.type = SeriesType::counter;
  c.baseline.enabled = true;  // window 64
  c.rate.enabled = true;
  c.rate.max_per_s = 1e12;
  c.level_shift.enabled = true;  // window 16
  c.burst.enabled = true;
  c.burst.rate_per_s = 1e12;
  c.threshold = {.enabled = true, .bound = 1e12, .bound_given = true, .for_s = 30};
  b.metrics.emplace(std::string(kMetric), c);
  return b;
}

struct Timing {
  double wall_ms = 0;
  double cpu_ms = 0;
};

// Runs kFillRounds + `rounds` rounds of one sample per series through `feed`. The first round creates
// every series (timed apart); the rounds until every detector's window is full are not timed, so the
// timed rounds do the full work of every detector.
template <typename Feed>
std::pair<Timing, Timing> run(const std::vector<std::string>& entities, const std::vector<double>& increments,
                              int rounds, Feed&& feed) {
  std::vector<double> counters(entities.size(), 0);
  Timing warm;
  Timing steady;
  for (int round = 0; round < kFillRounds + rounds; ++round) {
    const auto wall0 = Clock::now();
    const double cpu0 = hsns::bench::thread_cpu_ms();
    const std::int64_t t = 1'700'000'000'000 + round * kPollMs;
    for (std::size_t i = 0; i < entities.size(); ++i) {
      counters[i] += increments[(i * 31 + static_cast<std::size_t>(round)) % increments.size()];
      feed(hsns::brain::Sample{entities[i], kMetric, t, counters[i]});
    }
    if (round > 0 && round < kFillRounds) continue;
    Timing& into = round == 0 ? warm : steady;
    into.wall_ms += hsns::bench::ms_since(wall0);
    into.cpu_ms += hsns::bench::thread_cpu_ms() - cpu0;
  }
  return {warm, steady};
}

// Transparent hashing so a lookup by string_view allocates nothing, as in the bank.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

int main(int argc, char** argv) {
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 10'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 30;
  if (hosts <= 0 || rounds < 1) {
    std::fprintf(stderr, "usage: %s [HOSTS > 0] [TIMED ROUNDS >= 1]\n", argv[0]);
    return 64;
  }
  std::vector<std::string> entities;
  for (int h = 0; h < hosts; ++h) {
    for (int p = 0; p < kPorts; ++p) {
      char name[64];
      std::snprintf(name, sizeof name, "host%05d/mlx5_%d/1", h, p);
      entities.emplace_back(name);
    }
  }
  // About 12.5 GB/s per port in 10 s polls, with 5 % noise.
  std::mt19937_64 rng(1);
  std::normal_distribution<double> bytes(1.25e11, 6e9);
  std::vector<double> increments(4093);
  for (double& v : increments) v = std::max(0.0, bytes(rng));

  // Baseline: the same key into a hash map, the sample stored.
  struct Stored {
    std::int64_t t;
    double v;
  };
  const long rss_start = rss_kb();
  std::unordered_map<std::string, Stored, KeyHash, std::equal_to<>> stored;
  stored.reserve(entities.size());
  std::string key;
  const auto [map_warm, map_steady] = run(entities, increments, rounds, [&](const hsns::brain::Sample& s) {
    key.assign(s.entity);
    key.push_back('\0');
    key.append(s.metric);
    if (auto it = stored.find(std::string_view(key)); it != stored.end()) {
      it->second = {s.timestamp_ms, s.value};
    } else {
      stored.emplace(key, Stored{s.timestamp_ms, s.value});
    }
  });
  const long rss_map = rss_kb();
  stored = {};

  const long rss_before_bank = rss_kb();
  hsns::brain::DetectorBank bank(all_detectors(), {.max_series = entities.size()});
  std::vector<hsns::brain::AnomalyEvent> events;
  const auto [bank_warm, bank_steady] =
      run(entities, increments, rounds, [&](const hsns::brain::Sample& s) { bank.observe(s, events); });
  const long rss_bank = rss_kb();

  const double steady_samples = static_cast<double>(entities.size()) * rounds;
  const double n = static_cast<double>(entities.size());
  const auto ns = [](double ms, double samples) { return ms * 1e6 / samples; };
  std::printf(
      "series: %zu (%d hosts x %d ports), all detectors on; %d timed rounds after %d that fill the windows\n",
      entities.size(), hosts, kPorts, rounds, kFillRounds);
  std::printf("%-36s %12s %12s %12s\n", "", "wall ns/smp", "cpu ns/smp", "first round");
  std::printf("%-36s %12.1f %12.1f %9.1f ns\n", "hash map store (baseline)",
              ns(map_steady.wall_ms, steady_samples), ns(map_steady.cpu_ms, steady_samples),
              ns(map_warm.wall_ms, n));
  std::printf("%-36s %12.1f %12.1f %9.1f ns\n", "DetectorBank, all detectors",
              ns(bank_steady.wall_ms, steady_samples), ns(bank_steady.cpu_ms, steady_samples),
              ns(bank_warm.wall_ms, n));
  std::printf("ratio bank / baseline: %.1f (wall), %.1f (cpu)\n", bank_steady.wall_ms / map_steady.wall_ms,
              bank_steady.cpu_ms / map_steady.cpu_ms);
  std::printf("bank throughput: %.2f M samples/s (cpu)\n", steady_samples / bank_steady.cpu_ms / 1e3);
  std::printf("resident memory: map %.0f B/series, bank %.0f B/series\n",
              static_cast<double>(rss_map - rss_start) * 1024 / n,
              static_cast<double>(rss_bank - rss_before_bank) * 1024 / n);
  std::printf("events: %zu, accepted: %llu, series: %zu\n", events.size(),
              static_cast<unsigned long long>(bank.stats().accepted), bank.series_count());
  return 0;
}
