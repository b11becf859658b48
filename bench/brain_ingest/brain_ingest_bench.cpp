// The brain pipeline (aggregator/brain/engine.h) under the load: 10,000 hosts x 8 ports of KPIs
// every second (80,000 samples/s), each host's 8 samples one submit (one report), spread evenly over the
// second, with a stream of faults injected (link-down syslog lines, symbol-error bursts on new ports) to
// measure the lag from a sample's arrival to its fault, its alarm and its incident. The fleet is a
// generated Clos fabric of that many hosts x 8 NPUs (the entities are its NPU ports, so that link peers
// and the correlator's topology are the real ones). Downstream of the engine, on its thread as in the
// aggregator's fault hand-over, run the alarm engine (lib/brain/alarms.h: dedupe, flap damping) and the
// root-cause correlator (lib/brain/correlate.h) over the same topology; their stores and HTTP are not
// part of it. Two engines in the same run:
//   off: the same queue and thread, a detector configuration that tracks nothing and an empty pattern
//        library (the pipeline's own cost: copy, queue, hand-over);
//   on:  the built-in detector defaults and the shipped patterns/ library, alarms and correlation.
// Printed per mode: samples offered and dropped, the engine thread's CPU per sample and share of one core
// (alarms and correlation included), the processing lag (arrival -> processed), the fault lag (arrival ->
// fault handed over), the alarm lag (arrival -> alarm raised) and the incident lag (arrival -> the
// correlator has taken the alarm: an incident opened or updated, or the alarm pending its confirmation)
// p50/p99, and the samples/s it sustains when fed as fast as possible. Run by hand (never by ctest);
// figures in docs/performance.md, "Brain pipeline".
//   hsns_bench_brain_ingest [seconds=20] [hosts=10000]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.h"
#include "brain/alarms.h"
#include "brain/correlate.h"
#include "brain/engine.h"
#include "topology/generator.h"

namespace {

using hsns::bench::Clock;
using hsns::brain_pipeline::BrainEngine;
using hsns::brain_pipeline::EngineOptions;
using hsns::brain_pipeline::EngineStatus;
using hsns::brain_pipeline::LogInput;
using hsns::store::KpiSample;

constexpr int kPorts = 8;
constexpr std::int64_t kStartMs = 1'764'651'276'000;

// One metric per port, as hsnsd reports and the store keeps them: gauges, counter rates the engine
// integrates, rates only the patterns look at.
const char* const kMetrics[kPorts] = {"rx_power_dbm",          "symbol_error_per_s",
                                      "port_rcv_data_per_s",   "port_rcv_errors_per_s",
                                      "np_cnp_sent_per_s",     "pfc_prio3_tx_pause_us_per_s",
                                      "out_of_sequence_per_s", "module_temperature_celsius"};

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The fabric: hosts x 8 NPUs, 32 hosts per SU (rail-aligned leaves), spines per plane and super-pods as
// the root-cause bench's 10,000-host fabric. entities[host * kPorts + npu]: that NPU port's
// "<host>/<netdev>", as hsnsd's reports name it.
struct Fleet {
  int hosts;
  std::shared_ptr<const hsns::brain::LocatedTopology> topology;
  std::vector<std::string> entities;
  explicit Fleet(int n) : hosts(n) {
    hsns::topology::ClosParams p;
    p.hosts = static_cast<std::uint32_t>(n);
    p.npus_per_host = kPorts;
    p.hosts_per_su = 32;
    p.spines_per_plane = 8;
    p.superpods = static_cast<std::uint32_t>(std::max(1, n / 1000));
    p.cores = p.superpods > 1 ? 16 : 0;
    auto topo = hsns::topology::generate_clos(p);
    if (!topo) {
      std::fprintf(stderr, "generate: %s\n", topo.error().message().c_str());
      std::exit(1);
    }
    topology = std::make_shared<const hsns::brain::LocatedTopology>(
        std::make_shared<hsns::topology::Topology>(std::move(*topo)));
    const auto& t = topology->topology();
    entities.resize(static_cast<std::size_t>(n) * kPorts);
    std::size_t named = 0;
    for (const auto& node : t.nodes()) {
      for (const auto l : node.uplinks) {
        const auto& link = t.links()[l];
        if (!link.npu || named >= entities.size()) continue;
        entities[named++] = topology->end_entity(l, false);
      }
    }
    if (named != entities.size()) {
      std::fprintf(stderr, "generate: %zu NPU ports for %zu entities\n", named, entities.size());
      std::exit(1);
    }
  }
};

// What the aggregator does with the engine's faults, on the engine thread: the alarm engine, then the
// correlator over the fleet's topology; lags measured from the arrival of the item that raised the faults.
class Downstream {
 public:
  explicit Downstream(const Fleet& fleet) : correlator_(fleet.topology) {}
  void bind(const BrainEngine* engine) { engine_ = engine; }
  void handle(std::span<const hsns::brain::FaultMatch> faults) {
    faults_ += faults.size();
    const auto arrival = engine_->delivering_arrival();
    changes_.clear();
    alarms_.observe(faults, changes_);
    if (changes_.empty()) return;
    const double alarm_lag = hsns::bench::ms_since(arrival);
    inputs_.clear();
    for (const auto& c : changes_) {
      if (c.change == hsns::brain::AlarmChangeKind::raised) alarm_lag_.push_back(alarm_lag);
      inputs_.push_back(hsns::brain::to_incident_input(c));
    }
    const auto incident_changes = correlator_.apply(inputs_);
    auto advanced = correlator_.advance(alarms_.now_ms());
    const double incident_lag = hsns::bench::ms_since(arrival);
    for (const auto& c : changes_) {
      if (c.change == hsns::brain::AlarmChangeKind::raised) incident_lag_.push_back(incident_lag);
    }
    incident_changes_ += incident_changes.size() + advanced.size();
  }
  std::uint64_t faults() const { return faults_; }
  std::size_t alarms_raised() const { return alarm_lag_.size(); }
  std::uint64_t incident_changes() const { return incident_changes_; }
  std::size_t incidents_opened() const { return correlator_.stats().opened; }
  const std::vector<double>& alarm_lag() const { return alarm_lag_; }
  const std::vector<double>& incident_lag() const { return incident_lag_; }

 private:
  const BrainEngine* engine_ = nullptr;
  hsns::brain::AlarmEngine alarms_;
  hsns::brain::Correlator correlator_;
  std::vector<hsns::brain::AlarmChange> changes_;
  std::vector<hsns::brain::IncidentInput> inputs_;
  std::uint64_t faults_ = 0;
  std::uint64_t incident_changes_ = 0;
  std::vector<double> alarm_lag_;
  std::vector<double> incident_lag_;
};

// The value of (host, port)'s metric at second `s`: steady, noisy readings; 20 hosts a second get one
// second of symbol errors and of receive errors (the bank's burst detectors raise; crc-errors-port turns the
// receive-error burst into a fault; without a topology the both-ends symbol pattern stays unpaired).
double value_at(int host, int port, int s, std::uint32_t& rng) {
  rng = rng * 1'664'525u + 1'013'904'223u;
  const double noise = static_cast<double>(rng >> 8) / static_cast<double>(1u << 24) - 0.5;
  switch (port) {
    case 0:
      return -3.0 + 0.2 * noise;
    case 1:
      return (s >= 3 && host % 500 == s % 500) ? 500.0 : 0.0;  // ~20 bursts per second
    case 2:
      return 4.0e9 + 1.0e8 * noise;
    case 3:
      return (s >= 3 && host % 500 == (s + 250) % 500) ? 300.0 : 0.0;
    case 4:
      return 1000 + 100 * noise;
    case 5:
      return 2000 + 500 * noise;
    case 6:
      return 0;
    default:
      return 45 + noise;
  }
}

struct Run {
  std::uint64_t offered = 0;
  double wall_ms = 0;
  double engine_cpu_ms = 0;
  EngineStatus status;
};

// Paced: `seconds` seconds of event time at one event second per wall second, each host's batch at its
// slot in the second.
Run paced(BrainEngine& engine, const Fleet& fleet, int seconds, bool faults) {
  Run run;
  engine.start();
  std::uint32_t rng = 12345;
  std::vector<KpiSample> batch(kPorts);
  const double cpu0 = process_cpu_ms();
  const double me0 = hsns::bench::thread_cpu_ms();
  const auto t0 = Clock::now();
  constexpr int kSlices = 100;  // submits every 10 ms
  for (int s = 0; s < seconds; ++s) {
    const std::int64_t ts = kStartMs + std::int64_t{s} * 1000;
    for (int slice = 0; slice < kSlices; ++slice) {
      const int from = fleet.hosts * slice / kSlices;
      const int to = fleet.hosts * (slice + 1) / kSlices;
      for (int h = from; h < to; ++h) {
        for (int p = 0; p < kPorts; ++p) {
          batch[static_cast<std::size_t>(p)] = {
              fleet.entities[static_cast<std::size_t>(h) * kPorts + static_cast<std::size_t>(p)], kMetrics[p],
              ts, value_at(h, p, s, rng)};
        }
        engine.submit(batch);
        run.offered += kPorts;
      }
      if (faults && slice % 5 == 0) {  // 20 link-down lines a second, each a new port
        LogInput line;
        line.entity = "leaf";
        line.entity.append(std::to_string(s % 64));
        line.hostname = line.entity;
        line.app = "swss#orchagent";
        line.severity = 5;
        line.timestamp_ms = ts;
        line.message = "updatePortOperStatus: Port Ethernet";
        line.message.append(std::to_string(slice)).append(" oper state set from up to down");
        engine.submit(std::move(line));
      }
      std::this_thread::sleep_until(t0 + std::chrono::milliseconds(s * 1000 + (slice + 1) * 1000 / kSlices));
    }
  }
  engine.flush();
  run.wall_ms = hsns::bench::ms_since(t0);
  run.engine_cpu_ms = (process_cpu_ms() - cpu0) - (hsns::bench::thread_cpu_ms() - me0);
  run.status = engine.status();
  engine.stop();
  return run;
}

// Saturated: `rounds` seconds of event time submitted as fast as the producer can, the queue large
// enough to hold them; the engine's rate is samples / (time until it processed the last).
Run saturated(BrainEngine& engine, const Fleet& fleet, int rounds) {
  Run run;
  std::uint32_t rng = 777;
  std::vector<KpiSample> batch(kPorts);
  engine.start();
  const double cpu0 = process_cpu_ms();
  const double me0 = hsns::bench::thread_cpu_ms();
  const auto t0 = Clock::now();
  for (int s = 0; s < rounds; ++s) {
    const std::int64_t ts = kStartMs + std::int64_t{s} * 1000;
    for (int h = 0; h < fleet.hosts; ++h) {
      for (int p = 0; p < kPorts; ++p) {
        batch[static_cast<std::size_t>(p)] = {
            fleet.entities[static_cast<std::size_t>(h) * kPorts + static_cast<std::size_t>(p)], kMetrics[p],
            ts, value_at(h, p, s, rng)};
      }
      run.offered += engine.submit(batch);
    }
  }
  engine.flush();
  run.wall_ms = hsns::bench::ms_since(t0);
  run.engine_cpu_ms = (process_cpu_ms() - cpu0) - (hsns::bench::thread_cpu_ms() - me0);
  run.status = engine.status();
  engine.stop();
  return run;
}

std::unique_ptr<BrainEngine> make_engine(bool detection, std::size_t capacity, const Fleet& fleet,
                                         Downstream& downstream) {
  hsns::brain::BrainConfig config;  // tracks nothing
  hsns::brain::PatternLibrary library;
  if (detection) {
    config = hsns::brain::default_brain_config();
    auto loaded = hsns::brain::load_pattern_library(HSNS_PATTERNS_DIR);
    if (!loaded) {
      std::fprintf(stderr, "patterns: %s\n", loaded.error().message().c_str());
      std::exit(1);
    }
    library = std::move(*loaded);
  }
  EngineOptions options;
  options.queue_capacity = capacity;
  auto read_topology = [&fleet]() -> std::optional<hsns::brain_pipeline::TopologyView> {
    return hsns::brain_pipeline::TopologyView{
        1, std::shared_ptr<const hsns::topology::Topology>(fleet.topology, &fleet.topology->topology())};
  };
  auto engine = std::make_unique<BrainEngine>(
      std::move(config), std::move(library),
      [&downstream](std::span<const hsns::brain::FaultMatch> f) { downstream.handle(f); },
      hsns::brain_pipeline::TopologySource{.read = read_topology, .change_mark = {}}, options);
  downstream.bind(engine.get());
  return engine;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

void print(const char* mode, const Run& r, const Downstream& d) {
  const auto& s = r.status;
  const double processed = static_cast<double>(s.processed_samples + s.processed_logs);
  std::printf(
      "%-4s offered %9llu  dropped %7llu  processed %9llu  faults %6llu  wall %7.0f ms  engine CPU %7.0f ms "
      "(%5.2f us/sample, %4.0f%% of a core)\n"
      "     processing lag p50 %7.2f ms p99 %7.2f ms   fault lag p50 %7.2f ms p99 %7.2f ms (%llu faults)\n"
      "     alarm lag p50 %7.2f ms p99 %7.2f ms (%zu raised)   incident lag p50 %7.2f ms p99 %7.2f ms "
      "(%zu incidents opened, %llu incident changes)\n",
      mode, static_cast<unsigned long long>(r.offered),
      static_cast<unsigned long long>(s.dropped_samples) + s.dropped_logs,
      static_cast<unsigned long long>(s.processed_samples), static_cast<unsigned long long>(d.faults()),
      r.wall_ms, r.engine_cpu_ms, processed > 0 ? r.engine_cpu_ms * 1000 / processed : 0,
      100 * r.engine_cpu_ms / r.wall_ms, s.processing_lag.p50_ms, s.processing_lag.p99_ms, s.fault_lag.p50_ms,
      s.fault_lag.p99_ms, static_cast<unsigned long long>(s.fault_lag.count), percentile(d.alarm_lag(), 0.5),
      percentile(d.alarm_lag(), 0.99), d.alarms_raised(), percentile(d.incident_lag(), 0.5),
      percentile(d.incident_lag(), 0.99), d.incidents_opened(),
      static_cast<unsigned long long>(d.incident_changes()));
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int hosts = argc > 2 ? std::atoi(argv[2]) : 10'000;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Fleet fleet(hosts);
  std::printf(
      "brain pipeline: %d hosts x %d ports = %d samples/s, %d s of event time per paced run; fabric %zu "
      "nodes, %zu links\n",
      hosts, kPorts, hosts * kPorts, seconds, fleet.topology->topology().nodes().size(),
      fleet.topology->topology().links().size());

  std::printf("-- paced (real time, 10 ms slices)\n");
  double cpu_per_sample[2] = {0, 0};
  for (const bool detection : {false, true}) {
    Downstream downstream(fleet);
    auto engine = make_engine(detection, 262'144, fleet, downstream);
    const Run r = paced(*engine, fleet, seconds, detection);
    print(detection ? "on" : "off", r, downstream);
    const double processed = static_cast<double>(r.status.processed_samples + r.status.processed_logs);
    cpu_per_sample[detection ? 1 : 0] = r.engine_cpu_ms * 1000 / processed;
  }
  std::printf("     detection on / off: %.2fx CPU per sample\n", cpu_per_sample[1] / cpu_per_sample[0]);

  std::printf("-- saturated (as fast as the producer submits, %d s of event time)\n", 10);
  double rate[2] = {0, 0};
  for (const bool detection : {false, true}) {
    Downstream downstream(fleet);
    auto engine = make_engine(detection, static_cast<std::size_t>(hosts) * kPorts * 10, fleet, downstream);
    const Run r = saturated(*engine, fleet, 10);
    rate[detection ? 1 : 0] = static_cast<double>(r.status.processed_samples) / (r.wall_ms / 1000);
    std::printf("%-4s %9llu samples in %7.0f ms: %9.0f samples/s (engine CPU %5.2f us/sample)\n",
                detection ? "on" : "off", static_cast<unsigned long long>(r.status.processed_samples),
                r.wall_ms, rate[detection ? 1 : 0],
                r.engine_cpu_ms * 1000 / static_cast<double>(r.status.processed_samples));
  }
  std::printf("     detection on / off: %.2fx samples/s\n", rate[1] / rate[0]);
  return 0;
}
