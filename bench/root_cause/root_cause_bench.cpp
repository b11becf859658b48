// Cost of one alarm change in the root-cause correlator (lib/brain/correlate.h) on a generated fabric of
// 10,000 hosts x 8 NPUs (313 SUs, 2,504 rail leaves, 10 super-pods, 80 spines, 16 cores).
//
// Loaded run: 500 independent link faults are live (both ends of a random host link: 1,000 active alarms);
// each step clears the oldest fault's two alarms and raises a new fault's two, one change per apply() call,
// event time moving 1 s per change (so incidents resolve after their hold and are forgotten). Baseline
// in the same run: the same kind of changes into an empty correlator (one fault live at a time). Then a
// storm: 400 alarms of one spine's links, one change at a time (each change re-ranks the growing
// incident). Prints ns per change (mean and p99 of the individual calls) and the loaded / empty ratio.
//
// Usage: hsns_bench_root_cause [STEPS]
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "brain/correlate.h"
#include "topology/generator.h"

namespace {

using hsns::bench::Clock;
using hsns::brain::Correlator;
using hsns::brain::IncidentInput;
using hsns::brain::LocatedTopology;

struct Fault {
  IncidentInput a, b;
};

struct Result {
  std::vector<double> ns;
  double cpu_ns = 0;  // the thread's CPU time per change
  std::size_t incidents = 0;
  double mean() const {
    double s = 0;
    for (double v : ns) s += v;
    return ns.empty() ? 0 : s / static_cast<double>(ns.size());
  }
};

class FaultMaker {
 public:
  FaultMaker(const LocatedTopology& lt, std::uint64_t seed) : lt_(lt), rng_(seed) {}
  Fault next(std::int64_t t) {
    const auto& links = lt_.topology().links();
    std::uniform_int_distribution<std::size_t> pick(0, links.size() - 1);
    std::size_t l = pick(rng_);
    while (!links[l].npu) l = pick(rng_);
    Fault f;
    const auto id = std::to_string(serial_++);
    f.a = make("a" + id, lt_.end_entity(static_cast<hsns::topology::LinkId>(l), false), t);
    f.b = make("b" + id, lt_.end_entity(static_cast<hsns::topology::LinkId>(l), true), t);
    return f;
  }
  static IncidentInput make(std::string id, std::string entity, std::int64_t t) {
    IncidentInput x;
    x.alarm_id = std::move(id);
    x.fingerprint = x.alarm_id;
    x.fault_type = "crc_errors";
    x.entity = std::move(entity);
    x.first_ms = t;
    x.last_ms = t;
    return x;
  }

 private:
  const LocatedTopology& lt_;
  std::mt19937_64 rng_;
  std::uint64_t serial_ = 0;
};

IncidentInput cleared(IncidentInput x, std::int64_t t) {
  x.state = IncidentInput::State::cleared;
  x.last_ms = t;
  return x;
}

double timed(Correlator& c, const IncidentInput& x, std::size_t& incidents) {
  const auto t0 = Clock::now();
  auto out = c.apply(std::span(&x, 1));
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  incidents += out.size();
  return ns;
}

// live faults kept (0: one at a time).
Result run(const std::shared_ptr<const LocatedTopology>& lt, std::size_t live, std::size_t steps) {
  hsns::brain::CorrelatorOptions o;
  o.confirm_ms = 0;
  Correlator c(lt, o);
  FaultMaker maker(*lt, 42);
  std::deque<Fault> faults;
  std::int64_t t = 1'000'000;
  std::size_t sink = 0;
  for (std::size_t i = 0; i < live; ++i) {
    faults.push_back(maker.next(t += 1000));
    (void)c.apply(std::vector{faults.back().a, faults.back().b});
  }
  Result r;
  r.ns.reserve(steps * 4);
  const double cpu0 = hsns::bench::thread_cpu_ms();
  for (std::size_t s = 0; s < steps; ++s) {
    if (!faults.empty()) {
      const Fault old = faults.front();
      faults.pop_front();
      r.ns.push_back(timed(c, cleared(old.a, t += 1000), sink));
      r.ns.push_back(timed(c, cleared(old.b, t += 1000), sink));
    }
    Fault f = maker.next(t += 1000);
    r.ns.push_back(timed(c, f.a, sink));
    r.ns.push_back(timed(c, f.b, sink));
    if (live == 0) {
      r.ns.push_back(timed(c, cleared(f.a, t += 1000), sink));
      r.ns.push_back(timed(c, cleared(f.b, t += 1000), sink));
    } else {
      faults.push_back(f);
    }
  }
  r.cpu_ns = (hsns::bench::thread_cpu_ms() - cpu0) * 1e6 / static_cast<double>(r.ns.size());
  r.incidents = c.live_incidents();
  std::printf("  live alarms at the end %zu, live incidents %zu, resolved %llu\n", c.live_alarms(),
              c.live_incidents(), static_cast<unsigned long long>(c.stats().resolved));
  return r;
}

Result storm(const std::shared_ptr<const LocatedTopology>& lt) {
  const auto& t = lt->topology();
  const auto spine = *t.find("spine00");
  const auto& down = t.node(spine).downlinks;
  hsns::brain::CorrelatorOptions o;
  o.confirm_ms = 0;
  Correlator c(lt, o);
  Result r;
  std::size_t sink = 0;
  std::int64_t ts = 1'000'000;
  const double cpu0 = hsns::bench::thread_cpu_ms();
  for (std::size_t i = 0; i < down.size() && i < 200; ++i) {
    r.ns.push_back(
        timed(c, FaultMaker::make("s" + std::to_string(i), lt->end_entity(down[i], true), ts += 5), sink));
    r.ns.push_back(
        timed(c, FaultMaker::make("l" + std::to_string(i), lt->end_entity(down[i], false), ts += 5), sink));
  }
  r.cpu_ns = (hsns::bench::thread_cpu_ms() - cpu0) * 1e6 / static_cast<double>(r.ns.size());
  const auto* inc = c.find("inc-1");
  std::printf("  storm: %zu alarms -> %zu incident(s), top %s (%.3f)\n", c.live_alarms(), c.live_incidents(),
              inc != nullptr && !inc->root_causes.empty() ? inc->root_causes[0].entity.c_str() : "-",
              inc != nullptr && !inc->root_causes.empty() ? inc->root_causes[0].score : 0.0);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::size_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20'000;
  hsns::topology::ClosParams p;
  p.hosts = 10'000;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  p.superpods = 10;
  p.cores = 16;
  const auto t0 = Clock::now();
  auto topo = hsns::topology::generate_clos(p);
  if (!topo) {
    std::fprintf(stderr, "generate: %s\n", topo.error().message().c_str());
    return 1;
  }
  const double gen_ms = hsns::bench::ms_since(t0);
  const auto t1 = Clock::now();
  auto lt =
      std::make_shared<const LocatedTopology>(std::make_shared<hsns::topology::Topology>(std::move(*topo)));
  std::printf("topology: %zu nodes, %zu links (generated in %.0f ms, port index in %.0f ms)\n",
              lt->topology().nodes().size(), lt->topology().links().size(), gen_ms,
              hsns::bench::ms_since(t1));

  std::printf("empty correlator (one fault live at a time), %zu steps:\n", steps);
  const auto empty = run(lt, 0, steps);
  std::printf("loaded correlator (500 faults = 1,000 active alarms), %zu steps:\n", steps);
  const auto loaded = run(lt, 500, steps);
  std::printf("storm of one spine:\n");
  const auto st = storm(lt);

  std::printf("\n%-40s %12s %12s %12s\n", "per alarm change", "wall mean ns", "wall p99 ns", "CPU ns");
  const auto row = [](const char* what, const Result& r) {
    std::printf("%-40s %12.0f %12.0f %12.0f\n", what, r.mean(), hsns::bench::percentile(r.ns, 0.99),
                r.cpu_ns);
  };
  row("empty correlator (baseline)", empty);
  row("1,000 active alarms", loaded);
  row("storm: 400 alarms into one incident", st);
  std::printf("ratio loaded / empty: wall %.2f, CPU %.2f\n", loaded.mean() / empty.mean(),
              loaded.cpu_ns / empty.cpu_ns);
  std::printf("changes per second of one core's CPU (loaded): %.0f\n", 1e9 / loaded.cpu_ns);
  return 0;
}
