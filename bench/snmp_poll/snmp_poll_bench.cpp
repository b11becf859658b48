// Interfaces polled per second of walking: the aggregator's SnmpPoller walking IF-MIB (9 columns of
// ifXTable/ifTable plus sysUpTime, in parallel, GETBULK of 16 rows) against a real snmpd (Debian's net-snmp)
// that sees `interfaces` netdevs (veth pairs), from `switches` sessions at once polling every second (the
// mean walk time of all their walks), beside the same run's baseline: net-snmp's own snmpbulkwalk (-Cr16) of
// the same 9 columns, one process per column, back to back. Both read the same agent.
//
// Everything runs inside a network namespace the benchmark creates and deletes ("hsns-snmpbench-<pid>";
// the process moves into it before it starts any thread), so no packet leaves it. Needs root.
//
// Usage: hsns_bench_snmp_poll [interfaces=256] [switches=1] [seconds=10]
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.h"
#include "ingest/snmp_poller.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
namespace ingest = hsns::ingest;
using namespace std::chrono_literals;

constexpr int kPort = 16161;
constexpr const char* kCommunity = "hsns-bench";
const std::vector<std::string> kColumns = {
    "1.3.6.1.2.1.31.1.1.1.1",  "1.3.6.1.2.1.31.1.1.1.6", "1.3.6.1.2.1.31.1.1.1.10",
    "1.3.6.1.2.1.31.1.1.1.19", "1.3.6.1.2.1.2.2.1.8",    "1.3.6.1.2.1.2.2.1.13",
    "1.3.6.1.2.1.2.2.1.14",    "1.3.6.1.2.1.2.2.1.19",   "1.3.6.1.2.1.2.2.1.20"};

std::string g_namespace;  // deleted on a failure too
pid_t g_snmpd = -1;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "snmp_poll: %s\n", what.c_str());
  if (g_snmpd > 0) ::kill(g_snmpd, SIGKILL);
  if (!g_namespace.empty()) (void)std::system(("ip netns delete " + g_namespace).c_str());
  std::exit(1);
}

int run(const std::string& command) {
  return std::system(command.c_str());
}

class NullSink : public ingest::KpiSink {
 public:
  bool append(std::span<const ingest::KpiSample> samples) override {
    count += samples.size();
    return true;
  }
  std::size_t count = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const int interfaces = (argc > 1 ? std::atoi(argv[1]) : 256) / 2 * 2;
  const int switches = argc > 2 ? std::atoi(argv[2]) : 1;
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 10;
  const std::string ns = "hsns-snmpbench-" + std::to_string(::getpid());
  const auto dir = std::filesystem::temp_directory_path() / ns;
  std::filesystem::create_directories(dir / "persist");
  check(run("ip netns add " + ns) == 0, "ip netns add (root needed)");
  g_namespace = ns;
  // Everything below, snmpd and the poller's thread included, runs in the namespace.
  const int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0, "setns");
  ::close(fd);
  check(run("ip link set lo up") == 0, "lo up");
  {
    std::ofstream batch(dir / "links");
    for (int i = 0; i < interfaces / 2; ++i) {  // veth pairs: this kernel may have no dummy driver
      batch << "link add swp" << i << " type veth peer name hst" << i << "\nlink set swp" << i
            << " up\nlink set hst" << i << " up\n";
    }
  }
  check(run("ip -batch " + (dir / "links").string()) == 0, "dummy interfaces");
  std::ofstream(dir / "snmpd.conf") << "agentaddress udp:127.0.0.1:" << kPort << "\nrocommunity "
                                    << kCommunity << " 127.0.0.1\n";
  const pid_t snmpd = ::fork();
  if (snmpd == 0) {
    ::setenv("SNMP_PERSISTENT_DIR", (dir / "persist").c_str(), 1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execlp("snmpd", "snmpd", "-f", "-C", "-c", (dir / "snmpd.conf").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  g_snmpd = snmpd;
  const std::string agent = "127.0.0.1:" + std::to_string(kPort);
  const std::string quiet = " >/dev/null 2>&1";
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = run(std::string("snmpget -v2c -c ")
                 .append(kCommunity)
                 .append(" ")
                 .append(agent)
                 .append(" 1.3.6.1.2.1.1.3.0")
                 .append(quiet)) == 0;
    if (!up) std::this_thread::sleep_for(100ms);
  }
  check(up, "snmpd did not answer");

  // Baseline: snmpbulkwalk of each column, back to back, for the same time.
  std::size_t walks = 0;
  auto t0 = Clock::now();
  while (ms_since(t0) < seconds * 1000.0) {
    for (const auto& column : kColumns) {
      const auto walk = std::string("snmpbulkwalk -v2c -c ")
                            .append(kCommunity)
                            .append(" -Cr16 -On -Oq ")
                            .append(agent)
                            .append(" ")
                            .append(column)
                            .append(quiet);
      check(run(walk) == 0, "snmpbulkwalk");
    }
    ++walks;
  }
  const double baseline_ms = ms_since(t0);

  // The poller: `switches` sessions to the same agent, each polling as fast as its interval allows.
  prometheus::Registry registry;
  ingest::SnmpMetrics metrics(registry);
  NullSink sink;
  ingest::SnmpConfig config;
  config.max_interfaces = static_cast<std::size_t>(interfaces) + 16;
  for (int i = 0; i < switches; ++i) {
    ingest::SnmpSwitchConfig s;
    s.name = "leaf" + std::to_string(i);
    s.address = "127.0.0.1";
    s.port = kPort;
    s.credentials.community = kCommunity;
    s.interval = 1000ms;
    s.timeout = 300ms;
    s.retries = 1;
    config.switches.push_back(s);
  }
  std::uint64_t polls = 0;
  std::uint64_t failures = 0;
  double walk_ms = 0;
  {
    ingest::SnmpPoller poller(config, nullptr, sink, metrics);
    poller.start();
    // The mean walk time over every poll: sampled after each new success of each switch.
    std::vector<std::uint64_t> seen(config.switches.size(), 0);
    t0 = Clock::now();
    while (ms_since(t0) < seconds * 1000.0) {
      std::this_thread::sleep_for(5ms);
      for (std::size_t i = 0; i < config.switches.size(); ++i) {
        const auto st = poller.status(config.switches[i].name);
        if (st->successes == seen[i]) continue;
        check(st->last->interfaces.size() == static_cast<std::size_t>(interfaces) + 1, "not every interface");
        polls += st->successes - seen[i];
        walk_ms += st->last_walk_ms * static_cast<double>(st->successes - seen[i]);
        seen[i] = st->successes;
      }
    }
    poller.stop();
    for (const auto& s : config.switches) failures += poller.status(s.name)->failures;
  }
  ::kill(snmpd, SIGTERM);
  ::waitpid(snmpd, nullptr, 0);
  run("ip netns delete " + ns);
  std::filesystem::remove_all(dir);

  const double rows = static_cast<double>(interfaces + 1);  // the dummies and lo
  const double baseline_rate = static_cast<double>(walks) * rows * 1000.0 / baseline_ms;
  check(polls > 0, "no poll completed");
  const double poller_rate = rows * 1000.0 / (walk_ms / static_cast<double>(polls));
  std::printf("snmp_poll: %d interfaces, %d switches, %d s each\n", interfaces, switches, seconds);
  std::printf("%-44s %14s %10s %12s\n", "", "interfaces/s", "x baseline", "ms / walk");
  std::printf("%-44s %14.0f %10.2f %12.1f\n", "snmpbulkwalk, 9 columns (baseline)", baseline_rate, 1.0,
              baseline_ms / static_cast<double>(walks));
  std::printf("%-44s %14.0f %10.2f %12.1f\n", "SnmpPoller, one walk of 9 columns", poller_rate,
              poller_rate / baseline_rate, walk_ms / static_cast<double>(polls));
  std::printf("poller: %llu walks, %llu failed polls, %zu samples\n", static_cast<unsigned long long>(polls),
              static_cast<unsigned long long>(failures), sink.count);
  return 0;
}
