// Throughput of the fault-pattern matcher (lib/brain/patterns.h) with the whole shipped library (patterns/)
// on a mixed stream: syslog lines of SONiC, EOS, Huawei CE, Cumulus, FRR and hosts (about one in ten a fault
// message, the rest everyday noise) and KPI observations of the metrics the patterns name and of others,
// over 2,000 switch ports and 8,000 host ports. Same-run baselines: one RE2 partial match per line (the
// link-down pattern's expression alone) and one hash lookup per observation. Prints ns per event for each,
// their ratios and the events per second of the mixed stream.
//
// Usage: hsns_bench_pattern_match [EVENTS PER KIND] [PATTERN DIR]
#include <re2/re2.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bench_timing.h"
#include "brain/patterns.h"

namespace {

using hsns::bench::Clock;

struct Line {
  std::string entity;
  std::string app;
  std::string message;
};

struct Observation {
  std::string entity;
  std::string metric;
  double value = 0;
  bool burst = false;
};

std::vector<Line> make_lines(std::size_t n, std::mt19937_64& rng) {
  // Fault messages (about 10 %), then everyday noise; '#' stands for a port or sequence number.
  static const char* const kFaults[] = {
      "updatePortOperStatus: Port Ethernet# oper state set from up to down",
      "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet#/1, changed state to down",
      "%%01IFNET/4/IF_STATE(l)[12]:Interface 100GE1/0/# has turned into DOWN state.",
      "sync_port.c:752 swp#: link down",
      "mlx5_core 0000:3b:00.0 ens#f0np0: Link down",
      "PFC Watchdog detected PFC storm on port Ethernet#, queue index 3, queue id 0x15 and port id 0x10.",
      "%ADJCHANGE: neighbor 10.0.0.#(spine01) in vrf default Down BGP Notification received",
      "Ethernet#: RX power low alarm (-14.2 dBm)",
      "Packet[DD]: Neighbor 10.0.0.1 MTU 9216 is larger than [swp#:10.0.0.2]'s MTU 9000",
      "Port Ethernet# oper state set from down to up",
  };
  static const char* const kNoise[] = {
      "Accepted publickey for admin from 10.1.#.7 port 51234 ssh2: ED25519 SHA256:abcdef",
      "pam_unix(sshd:session): session opened for user admin(uid=1000) by (uid=0) #",
      "Started Session # of User admin.",
      "setPortMtu: Set port Ethernet# MTU to 9100",
      "%SYS-5-CONFIG_I: Configured from console by admin on vty#",
      "lldp: neighbor # added on Ethernet12, chassis 7c:fe:90:12:34:56",
      "Counter poll for port # took 12 ms",
      "%%01SHELL/5/CMDRECORD(s)[#]:Recorded command information. (Task=VT0, User=admin, Command=dir)",
      "bgpd: 10.0.0.# rcvd UPDATE w/ attr: nexthop 10.0.0.1, origin i, path 65001",
      "CRON[#]: (root) CMD (/usr/local/bin/logrotate.sh)",
  };
  std::vector<Line> lines;
  lines.reserve(n);
  std::uniform_int_distribution<int> pct(0, 99);
  std::uniform_int_distribution<int> pick(0, 9);
  std::uniform_int_distribution<int> port(0, 63);
  std::uniform_int_distribution<int> device(0, 31);
  for (std::size_t i = 0; i < n; ++i) {
    const bool fault = pct(rng) < 10;
    std::string text = fault ? kFaults[pick(rng)] : kNoise[pick(rng)];
    text.replace(text.find('#'), 1, std::to_string(port(rng)));  // every template has one '#'
    lines.push_back({"leaf" + std::to_string(device(rng)), fault ? "orchagent" : "sshd", std::move(text)});
  }
  return lines;
}

std::vector<Observation> make_observations(std::size_t n, std::mt19937_64& rng) {
  static const char* const kMetrics[] = {"rx_power_dbm",
                                         "tx_power_dbm",
                                         "temperature_celsius",
                                         "symbol_error",
                                         "port_rcv_errors",
                                         "link_downed",
                                         "out_of_sequence",
                                         "rx_prio3_pause_duration",
                                         "tx_prio3_pause_duration",
                                         "np_cnp_sent",
                                         "np_ecn_marked_roce_packets",
                                         "port_xmit_data",
                                         "port_rcv_data",
                                         "rx_bytes_phy",
                                         "rx_fec_uncorrectable_blocks"};
  constexpr std::size_t kMetricCount = sizeof kMetrics / sizeof kMetrics[0];
  std::vector<Observation> out;
  out.reserve(n);
  std::uniform_int_distribution<std::size_t> metric(0, kMetricCount - 1);
  std::uniform_int_distribution<int> entity(0, 9999);
  std::normal_distribution<double> value(0, 1);
  std::uniform_int_distribution<int> pct(0, 999);
  for (std::size_t i = 0; i < n; ++i) {
    const int e = entity(rng);
    std::string name = e < 2000 ? "leaf" + std::to_string(e / 64) + "/Ethernet" + std::to_string(e % 64)
                                : "host" + std::to_string(e / 8) + "/mlx5_" + std::to_string(e % 8) + "/1";
    out.push_back({std::move(name), kMetrics[metric(rng)], value(rng) * 3 - 4, pct(rng) == 0});
  }
  return out;
}

double ns_per(double ms, std::size_t n) {
  return ms * 1e6 / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const long per_kind = argc > 1 ? std::atol(argv[1]) : 400'000;
  const std::string dir = argc > 2 ? argv[2] : HSNS_PATTERNS_DIR;
  if (per_kind <= 0) {
    std::fprintf(stderr, "usage: %s [EVENTS PER KIND > 0] [PATTERN DIR]\n", argv[0]);
    return 64;
  }
  auto library = hsns::brain::load_pattern_library(dir);
  if (!library) {
    std::fprintf(stderr, "%s\n", library.error().message().c_str());
    return 1;
  }
  const auto n = static_cast<std::size_t>(per_kind);
  std::mt19937_64 rng(1);
  const auto lines = make_lines(n, rng);
  const auto observations = make_observations(n, rng);

  // Baselines: one RE2 match per line, one hash lookup (and store) per observation.
  const RE2 one(R"(\bPort (?P<ifname>Ethernet\d+) oper state set from up to down\b)");
  std::size_t hits = 0;
  auto wall0 = Clock::now();
  double cpu0 = hsns::bench::thread_cpu_ms();
  for (const Line& l : lines) hits += RE2::PartialMatch(l.message, one) ? 1 : 0;
  const double re2_cpu = hsns::bench::thread_cpu_ms() - cpu0;
  const double re2_wall = hsns::bench::ms_since(wall0);
  std::unordered_map<std::string, double> last;
  std::string key;
  wall0 = Clock::now();
  cpu0 = hsns::bench::thread_cpu_ms();
  for (const Observation& o : observations) {
    key.assign(o.entity).push_back('\0');
    key.append(o.metric);
    last[key] = o.value;
  }
  const double map_cpu = hsns::bench::thread_cpu_ms() - cpu0;
  const double map_wall = hsns::bench::ms_since(wall0);

  hsns::brain::PatternMatcher matcher(
      *library, [](std::string_view e) -> std::optional<std::string> { return std::string(e) + "/peer"; });
  std::vector<hsns::brain::FaultMatch> out;
  hsns::brain::AnomalyEvent burst;
  burst.kind = hsns::brain::AnomalyKind::burst;
  std::int64_t t_ms = 1'700'000'000'000;
  wall0 = Clock::now();
  cpu0 = hsns::bench::thread_cpu_ms();
  for (const Line& l : lines) {
    t_ms += 10;
    matcher.observe(hsns::brain::LogEvent{.entity = l.entity,
                                          .timestamp_ms = t_ms,
                                          .message = l.message,
                                          .app = l.app,
                                          .hostname = l.entity,
                                          .severity = 5},
                    out);
    if (out.size() > 4096) out.clear();
  }
  const double log_cpu = hsns::bench::thread_cpu_ms() - cpu0;
  const double log_wall = hsns::bench::ms_since(wall0);
  const std::uint64_t log_faults = matcher.stats().raised;
  wall0 = Clock::now();
  cpu0 = hsns::bench::thread_cpu_ms();
  for (const Observation& o : observations) {
    t_ms += 10;
    matcher.observe(hsns::brain::KpiObservation{o.entity, o.metric, t_ms, o.value,
                                                o.burst ? std::span(&burst, 1)
                                                        : std::span<const hsns::brain::AnomalyEvent>()},
                    out);
    if (out.size() > 4096) out.clear();
  }
  const double kpi_cpu = hsns::bench::thread_cpu_ms() - cpu0;
  const double kpi_wall = hsns::bench::ms_since(wall0);

  std::printf(
      "library: %zu patterns from %s; %zu log lines (about 10%% fault messages), %zu KPI observations\n",
      library->size(), dir.c_str(), n, n);
  std::printf("%-44s %12s %12s\n", "", "wall ns/evt", "cpu ns/evt");
  std::printf("%-44s %12.0f %12.0f\n", "one RE2 match per line (baseline)", ns_per(re2_wall, n),
              ns_per(re2_cpu, n));
  std::printf("%-44s %12.0f %12.0f\n", "matcher, whole library, log lines", ns_per(log_wall, n),
              ns_per(log_cpu, n));
  std::printf("%-44s %12.0f %12.0f\n", "hash lookup per observation (baseline)", ns_per(map_wall, n),
              ns_per(map_cpu, n));
  std::printf("%-44s %12.0f %12.0f\n", "matcher, whole library, KPI observations", ns_per(kpi_wall, n),
              ns_per(kpi_cpu, n));
  std::printf("ratio log / one RE2 match: %.1f (cpu); KPI / hash lookup: %.1f (cpu)\n", log_cpu / re2_cpu,
              kpi_cpu / map_cpu);
  std::printf("mixed stream (1:1): %.0f k events/s (cpu)\n",
              2.0 * static_cast<double>(n) / (log_cpu + kpi_cpu));
  std::printf("faults raised: %llu from lines, %llu in all; states %zu; baseline hits %zu\n",
              static_cast<unsigned long long>(log_faults),
              static_cast<unsigned long long>(matcher.stats().raised), matcher.state_count(), hits);
  return 0;
}
