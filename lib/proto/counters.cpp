#include "hsns/proto/counters.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "hsns/json_fields.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr const char* kPauseMembers[] = {"rx_frames", "tx_frames", "rx_duration_us", "tx_duration_us"};

std::optional<CounterSample> read_sample(FieldReader& parent, std::string_view name) {
  const auto* obj = parent.object(name, true);
  if (!obj) return std::nullopt;
  FieldReader r = parent.child(*obj, parent.field_path(name));
  auto value = r.unsigned_integer("value", true);
  auto delta = r.unsigned_integer("delta", true);
  auto rate = r.number("rate", true, 0, std::numeric_limits<double>::max());
  r.report_unknown();
  if (!value || !delta || !rate) return std::nullopt;
  return CounterSample{*value, *delta, *rate};
}

// An object of counters by name: every member a sample, at most kMaxCountersPerSet of them.
void read_counter_set(FieldReader& parent, std::string_view name, CounterSet& out) {
  const auto* obj = parent.object(name, true);
  if (!obj) return;
  if (obj->size() > kMaxCountersPerSet) {
    parent.fail(name, "must have at most " + std::to_string(kMaxCountersPerSet) + " members");
    return;
  }
  FieldReader r = parent.child(*obj, parent.field_path(name));
  for (const auto& [key, value] : obj->items()) {
    if (!is_counter_name(key)) {
      r.fail(key, "is not a counter name (1 to " + std::to_string(kMaxCounterNameLength) +
                      " printable ASCII characters, no space)");
      r.known(key);
      continue;
    }
    if (auto s = read_sample(r, key)) out.emplace(key, *s);
  }
  r.report_unknown();
}

json sample_json(const CounterSample& s) {
  return json{{"value", s.value}, {"delta", s.delta}, {"rate", s.rate}};
}

json set_json(const CounterSet& set) {
  json j = json::object();
  for (const auto& [name, s] : set) j[name] = sample_json(s);
  return j;
}

void read_rdma(FieldReader& r, CountersSnapshot& snapshot) {
  RdmaPortCounters p;
  auto device = r.sized_string("device", true, 1, 64);
  auto port = r.integer("port", true, 1, 255);
  auto netdev = r.string("netdev", true, 15);
  read_counter_set(r, "counters", p.counters);
  read_counter_set(r, "hw_counters", p.hw_counters);
  if (!device || !port || !netdev) return;
  p.device = std::move(*device);
  p.port = static_cast<int>(*port);
  p.netdev = std::move(*netdev);
  snapshot.rdma.push_back(std::move(p));
}

void read_netdev(FieldReader& r, CountersSnapshot& snapshot) {
  NetdevCounters n;
  auto netdev = r.sized_string("netdev", true, 1, 15);
  read_counter_set(r, "statistics", n.statistics);
  read_counter_set(r, "ethtool", n.ethtool);
  std::set<int> priorities;
  r.objects("pause", true, 8, [&](FieldReader& pr, std::size_t i) {
    PriorityPause p;
    auto priority = pr.integer("priority", true, 0, 7);
    if (priority && !priorities.insert(static_cast<int>(*priority)).second)
      pr.fail("priority",
              "repeats priority " + std::to_string(*priority) + " (pause[" + std::to_string(i) + "])");
    CounterSample* targets[] = {&p.rx_frames, &p.tx_frames, &p.rx_duration_us, &p.tx_duration_us};
    bool ok = priority.has_value();
    for (std::size_t m = 0; m < std::size(kPauseMembers); ++m) {
      if (auto s = read_sample(pr, kPauseMembers[m]))
        *targets[m] = *s;
      else
        ok = false;
    }
    if (!ok) return;
    p.priority = static_cast<int>(*priority);
    n.pause.push_back(p);
  });
  if (!netdev) return;
  n.netdev = std::move(*netdev);
  snapshot.netdevs.push_back(std::move(n));
}

}  // namespace

bool is_counter_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxCounterNameLength &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

Result<CountersSnapshot> read_counters_snapshot(const json& document) {
  FieldReader r(document);
  CountersSnapshot snapshot;
  auto ts_ms = r.integer("ts_ms", true, 0, kInt64Max);
  auto interval_ms = r.unsigned_integer("interval_ms", true);
  auto resets = r.unsigned_integer("resets", true);
  auto wraps = r.unsigned_integer("wraps", true);
  if (const auto* errors = r.object("read_errors", true)) {
    FieldReader er = r.child(*errors, "read_errors");
    if (errors->size() > kMaxReadErrorSources)
      r.fail("read_errors", "must have at most " + std::to_string(kMaxReadErrorSources) + " members");
    else
      for (const auto& [source, value] : errors->items()) {
        if (!is_counter_name(source)) {
          er.fail(source, "is not a source name");
          er.known(source);
          continue;
        }
        if (auto v = er.unsigned_integer(source, true)) snapshot.read_errors[source] = *v;
      }
    er.report_unknown();
  }
  r.objects("rdma", true, kMaxCounterPorts,
            [&snapshot](FieldReader& pr, std::size_t) { read_rdma(pr, snapshot); });
  r.objects("netdevs", true, kMaxCounterPorts,
            [&snapshot](FieldReader& nr, std::size_t) { read_netdev(nr, snapshot); });
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  snapshot.ts_ms = *ts_ms;
  snapshot.interval_ms = *interval_ms;
  snapshot.resets = *resets;
  snapshot.wraps = *wraps;
  return snapshot;
}

json to_json(const CountersSnapshot& s) {
  json rdma = json::array();
  for (const auto& p : s.rdma)
    rdma.push_back({{"device", p.device},
                    {"port", p.port},
                    {"netdev", p.netdev},
                    {"counters", set_json(p.counters)},
                    {"hw_counters", set_json(p.hw_counters)}});
  json netdevs = json::array();
  for (const auto& n : s.netdevs) {
    json pause = json::array();
    for (const auto& p : n.pause)
      pause.push_back({{"priority", p.priority},
                       {"rx_frames", sample_json(p.rx_frames)},
                       {"tx_frames", sample_json(p.tx_frames)},
                       {"rx_duration_us", sample_json(p.rx_duration_us)},
                       {"tx_duration_us", sample_json(p.tx_duration_us)}});
    netdevs.push_back({{"netdev", n.netdev},
                       {"statistics", set_json(n.statistics)},
                       {"ethtool", set_json(n.ethtool)},
                       {"pause", std::move(pause)}});
  }
  json errors = json::object();
  for (const auto& [source, count] : s.read_errors) errors[source] = count;
  return json{{"ts_ms", s.ts_ms},
              {"interval_ms", s.interval_ms},
              {"resets", s.resets},
              {"wraps", s.wraps},
              {"read_errors", std::move(errors)},
              {"rdma", std::move(rdma)},
              {"netdevs", std::move(netdevs)}};
}

}  // namespace hsns::proto
