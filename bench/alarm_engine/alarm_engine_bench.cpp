// Throughput of the alarm engine (lib/brain/alarms.h) over 10,000 entities:
//   repeats:  every fault a repeat of an active alarm (the dedupe path: a hash lookup, a count);
//   churn:    each entity raised and cleared in turn (alarms created, cleared, reopened; deadlines set);
//   flapping: churn with flap damping on (clears held, hold-downs ending);
//   silenced: new alarms checked against 1,000 silence rules that do not match (the worst case of the check).
// Same-run baseline: one unordered_map<uint64_t, count> increment per fault, keyed like the fingerprint.
// Prints ns per fault for each and its ratio to the baseline.
//
// Usage: hsns_bench_alarm_engine [FAULTS PER CASE]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_timing.h"
#include "brain/alarms.h"

namespace {

using hsns::bench::Clock;
using hsns::brain::AlarmChange;
using hsns::brain::AlarmEngine;
using hsns::brain::AlarmOptions;
using hsns::brain::FaultMatch;
using hsns::brain::FaultState;
using hsns::brain::Pattern;

constexpr std::size_t kEntities = 10'000;
constexpr std::size_t kBatch = 1'000;

std::shared_ptr<const Pattern> pattern() {
  auto p = std::make_shared<Pattern>();
  p->id = "link-down-sonic";
  p->fault = "link_down";
  hsns::brain::LogCondition c;
  c.message = "down";
  p->match.log = c;
  p->clears_on = hsns::brain::Condition{.log = c, .kpi = std::nullopt};
  return p;
}

std::vector<FaultMatch> make_faults(std::size_t n, bool churn) {
  const auto p = pattern();
  std::vector<FaultMatch> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    FaultMatch f;
    f.pattern = p;
    const std::size_t entity = i % kEntities;
    f.entity = "leaf" + std::to_string(entity / 64) + "/Ethernet" + std::to_string(entity % 64);
    f.root_cause = f.entity;
    // Churn: the first pass raises every entity, the next clears it, and so on.
    f.state = churn && (i / kEntities) % 2 == 1 ? FaultState::cleared : FaultState::raised;
    f.timestamp_ms = 1'000'000 + static_cast<std::int64_t>(i) * 10;
    f.detail = "SONiC reports a port's operational state down";
    out.push_back(std::move(f));
  }
  return out;
}

double run(AlarmEngine& engine, const std::vector<FaultMatch>& faults, std::size_t& changes) {
  std::vector<AlarmChange> out;
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < faults.size(); i += kBatch) {
    const std::size_t n = std::min(kBatch, faults.size() - i);
    out.clear();
    engine.observe(std::span<const FaultMatch>(faults.data() + i, n), out);
    changes += out.size();
  }
  return hsns::bench::ms_since(t0) * 1e6 / static_cast<double>(faults.size());
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const auto repeats = make_faults(n, false);
  const auto churn = make_faults(n, true);

  // Baseline: count per fingerprint in a hash map.
  std::unordered_map<std::uint64_t, std::uint64_t> counts;
  const auto b0 = Clock::now();
  for (const auto& f : repeats) ++counts[hsns::brain::alarm_fingerprint(f.pattern->id, f.entity)];
  const double baseline = hsns::bench::ms_since(b0) * 1e6 / static_cast<double>(n);

  std::size_t changes = 0;
  AlarmOptions plain;
  plain.flap_transitions = hsns::brain::kMaxFlapTransitions;  // no damping: every clear goes out
  plain.flap_window_ms = 1;
  AlarmEngine e1(plain);
  const double repeat_ns = run(e1, repeats, changes);
  const std::size_t repeat_changes = changes;

  changes = 0;
  AlarmEngine e2(plain);
  const double churn_ns = run(e2, churn, changes);
  const std::size_t churn_changes = changes;

  changes = 0;
  AlarmOptions damped;
  damped.flap_transitions = 4;
  damped.flap_window_ms = 86'400'000;
  damped.hold_down_ms = 50'000;
  AlarmEngine e3(damped);
  const double flap_ns = run(e3, churn, changes);
  const std::size_t flap_changes = changes;

  changes = 0;
  AlarmEngine e4(plain);
  std::vector<AlarmChange> ignored;
  for (int i = 0; i < 1000; ++i) {
    hsns::brain::Silence s;
    s.id = "s" + std::to_string(i);
    s.entity = "spine" + std::to_string(i) + "/*";
    s.regex = "no such text " + std::to_string(i);
    s.reason = "bench";
    if (!e4.add_silence(s, 0, ignored)) return 1;
  }
  const double silenced_ns = run(e4, churn, changes);

  std::printf("alarm engine, %zu faults per case over %zu entities, batches of %zu\n", n, kEntities, kBatch);
  std::printf("  baseline (hash-map count)   %8.1f ns/fault\n", baseline);
  std::printf("  repeats (dedupe)            %8.1f ns/fault  x%.1f  (%zu changes)\n", repeat_ns,
              repeat_ns / baseline, repeat_changes);
  std::printf("  raise/clear churn           %8.1f ns/fault  x%.1f  (%zu changes)\n", churn_ns,
              churn_ns / baseline, churn_changes);
  std::printf("  churn with flap damping     %8.1f ns/fault  x%.1f  (%zu changes)\n", flap_ns,
              flap_ns / baseline, flap_changes);
  std::printf("  churn, 1,000 silence rules  %8.1f ns/fault  x%.1f\n", silenced_ns, silenced_ns / baseline);
  std::printf("  faults/s: repeats %.2e, churn %.2e, 1,000 rules %.2e\n", 1e9 / repeat_ns, 1e9 / churn_ns,
              1e9 / silenced_ns);
  return 0;
}
