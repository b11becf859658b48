#include "services/diagnosis_service.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "hsns/time.h"
#include "services/job_traffic.h"
#include "services/store_errors.h"

namespace hsns::services {
namespace {

using diagnose::HopKind;
using diagnose::VerdictLevel;
using nlohmann::json;
namespace topo = hsns::topology;

constexpr std::size_t kRanksListed = 16;
constexpr std::size_t kWorstListed = 5;

std::string rfc3339(std::int64_t ms) {
  return format_rfc3339_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// "<host>/<npu>": the NPU by port name, else by index.
Result<topo::NpuRef> resolve_npu(const topo::Topology& t, const std::string& text, const std::string& param) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) {
    return tl::unexpected(
        Error::invalid(param, "must be <host>/<npu>: a host of the topology and its NPU's port or index"));
  }
  const std::string host = text.substr(0, slash);
  const std::string npu = text.substr(slash + 1);
  const auto id = t.find(host);
  if (!id || t.node(*id).tier != topo::Tier::kHost)
    return tl::unexpected(Error::not_found(param + ": no host '" + host + "' in the topology"));
  const auto& node = t.node(*id);
  for (const auto& n : node.npus) {
    if (n.port == npu) return topo::NpuRef{*id, n.index};
  }
  if (all_digits(npu)) {
    const auto index = static_cast<std::uint32_t>(std::stoul(npu));
    for (const auto& n : node.npus) {
      if (n.index == index) return topo::NpuRef{*id, n.index};
    }
  }
  return tl::unexpected(Error::not_found(param + ": host '" + host + "' has no NPU '" + npu + "'"));
}

json npu_json(const topo::Topology& t, topo::NpuRef ref) {
  const auto* n = t.npu(ref);
  const auto& host = t.node(ref.host).name;
  return {{"host", host},
          {"npu", ref.npu},
          {"port", n ? n->port : ""},
          {"entity", n && !n->port.empty() ? host + "/" + n->port : host}};
}

// Everything one diagnosis request looked up, so a hop or entity shared by paths is judged once.
class Judge {
 public:
  Judge(const topo::Topology& t, store::KpiStore& kpis, const AlarmLookup& alarms,
        const diagnose::VerdictRules& rules, const DiagnosisLimits& limits)
      : topo_(t), kpis_(kpis), alarms_(alarms), rules_(rules), limits_(limits), now_(unix_now_ms()) {}

  struct Judged {
    diagnose::Hop hop;
    diagnose::HopEvidence evidence;
    diagnose::Verdict verdict;
    std::size_t pairs = 0;              // job diagnosis: pairs crossing it
    std::set<std::uint32_t> src_ranks;  // job diagnosis: their source ranks
  };

  // The hop's index in hops(), judged on first sight.
  Result<std::size_t> add(const diagnose::Hop& hop) {
    if (auto it = index_.find(hop.key); it != index_.end()) return it->second;
    Judged j;
    j.hop = hop;
    j.evidence.kind = hop.kind;
    j.evidence.state = hop.kind == HopKind::link ? topo_.link(hop.link).state : topo_.node(hop.node).state;
    std::vector<std::string> alarm_entities;
    for (const auto& e : hop.entities) {
      auto readings = kpis(e);
      if (!readings) return tl::unexpected(std::move(readings.error()));
      for (const auto& r : **readings) j.evidence.kpis.push_back(r);
      alarm_entities.push_back(e);
      if (hop.kind == HopKind::link && e.find('/') != std::string::npos)
        alarm_entities.push_back(e + "/module");
    }
    if (hop.kind == HopKind::link) alarm_entities.push_back(hop.key);
    if (alarms_) {
      std::set<std::string> ids;
      for (const auto& e : alarm_entities) {
        for (auto& a : alarms_(e)) {
          if (ids.insert(a.id).second) j.evidence.alarms.push_back(std::move(a));
        }
      }
    }
    j.verdict = diagnose::judge(j.evidence, now_, rules_);
    hops_.push_back(std::move(j));
    index_.emplace(hop.key, hops_.size() - 1);
    return hops_.size() - 1;
  }

  std::vector<Judged>& hops() { return hops_; }
  std::int64_t now() const { return now_; }

  json hop_json(const Judged& j) const {
    const auto& h = j.hop;
    json kpis = json::array();
    for (const auto& k : j.evidence.kpis) {
      kpis.push_back({{"entity", k.entity},
                      {"metric", k.metric},
                      {"value", k.value},
                      {"ts", rfc3339(k.ts_ms)},
                      {"ts_ms", k.ts_ms},
                      {"age_ms", now_ - k.ts_ms},
                      {"fresh", now_ - k.ts_ms <= rules_.stale_after_ms}});
    }
    json alarms = json::array();
    for (const auto& a : j.evidence.alarms) {
      alarms.push_back({{"id", a.id},
                        {"type", a.type},
                        {"severity", a.severity},
                        {"entity", a.entity},
                        {"detail", a.detail}});
    }
    json out = {{"id", h.key},
                {"kind", h.kind == HopKind::link ? "link" : "switch"},
                {"entities", h.entities},
                {"state", std::string(topo::to_string(j.evidence.state))},
                {"verdict", std::string(diagnose::to_string(j.verdict.level))},
                {"reasons", j.verdict.reasons},
                {"kpis", std::move(kpis)},
                {"alarms", std::move(alarms)}};
    if (h.kind == HopKind::link) {
      const auto& l = topo_.link(h.link);
      out["tier"] = std::string(topo::to_string(topo_.node(l.lower).tier)) + "-" +
                    std::string(topo::to_string(topo_.node(l.upper).tier));
      out["bandwidth_gbps"] = l.bandwidth_gbps;
    } else {
      out["tier"] = std::string(topo::to_string(topo_.node(h.node).tier));
    }
    return out;
  }

 private:
  Result<const std::vector<diagnose::KpiReading>*> kpis(const std::string& entity) {
    if (auto it = kpi_cache_.find(entity); it != kpi_cache_.end()) return &it->second;
    std::vector<diagnose::KpiReading> readings;
    if (store::is_kpi_entity(entity)) {
      auto listed =
          kpis_.list_series({.entity = entity, .metric = std::nullopt, .limit = limits_.max_kpis_per_entity});
      if (!listed) return tl::unexpected(from_store(std::move(listed.error())));
      for (const auto& s : listed->items) readings.push_back({s.entity, s.metric, s.last_value, s.last_ms});
    }
    return &kpi_cache_.emplace(entity, std::move(readings)).first->second;
  }

  const topo::Topology& topo_;
  store::KpiStore& kpis_;
  const AlarmLookup& alarms_;
  const diagnose::VerdictRules& rules_;
  const DiagnosisLimits& limits_;
  std::int64_t now_;
  std::unordered_map<std::string, std::vector<diagnose::KpiReading>> kpi_cache_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<Judged> hops_;
};

json verdict_counts() {
  return {{"ok", 0}, {"unknown", 0}, {"degraded", 0}, {"faulty", 0}};
}

void count(json& counts, VerdictLevel level) {
  auto& c = counts[std::string(diagnose::to_string(level))];
  c = c.get<std::size_t>() + 1;
}

// The paths of one pair as JSON (hop ids), their hops added to the judge; the worst level and the ids
// of the hops at that level.
struct PairOutcome {
  json paths = json::array();
  VerdictLevel level = VerdictLevel::ok;
  std::vector<std::string> worst;
};

Result<PairOutcome> judge_paths(const topo::Topology& t, Judge& judge, const diagnose::PathSet& set,
                                std::optional<std::uint32_t> src_rank) {
  PairOutcome out;
  std::set<std::size_t> seen;  // hops of this pair, counted once each
  for (const auto& path : set.paths) {
    json ids = json::array();
    VerdictLevel level = VerdictLevel::ok;
    for (const auto& hop : diagnose::path_hops(t, path)) {
      auto at = judge.add(hop);
      if (!at) return tl::unexpected(std::move(at.error()));
      auto& j = judge.hops()[*at];
      ids.push_back(j.hop.key);
      level = std::max(level, j.verdict.level);
      if (seen.insert(*at).second) {
        ++j.pairs;
        if (src_rank && j.src_ranks.size() < kRanksListed) j.src_ranks.insert(*src_rank);
      }
    }
    out.paths.push_back({{"hops", std::move(ids)}, {"verdict", std::string(diagnose::to_string(level))}});
  }
  for (std::size_t i : seen) out.level = std::max(out.level, judge.hops()[i].verdict.level);
  if (out.level != VerdictLevel::ok) {
    for (std::size_t i : seen) {
      if (judge.hops()[i].verdict.level == out.level) out.worst.push_back(judge.hops()[i].hop.key);
    }
    std::sort(out.worst.begin(), out.worst.end());
  }
  return out;
}

// The job's placement again (see the contract); nullopt with `why` when it cannot be reproduced.
std::optional<placement::Schedule> reproduce(const AllocatedSnapshot& snap, const store::JobRecord& job,
                                             const DiagnosisService::RequestParser& parse_request,
                                             std::string& why) {
  auto req = parse_request ? parse_request(job, why) : std::nullopt;
  if (!req) {
    if (why.empty()) why = "the job's stored request cannot be read";
    return std::nullopt;
  }
  topo::Topology t = *snap.topology;
  const auto& base = *snap.base.topology;
  for (const auto& r : job.ranks) {
    auto ip = IpAddress::parse(r.ip);
    if (!ip) {
      why = "rank " + std::to_string(r.rank) + " has no usable address";
      return std::nullopt;
    }
    req->npu_ips[{r.host, r.npu}] = *ip;
    if (auto host = base.find(r.host)) {
      const topo::NpuRef ref{*host, r.npu};
      if (const auto* n = base.npu(ref)) t.set_npu_state(ref, n->state);
    }
  }
  req->ecmp_seeds = 1;  // the plan does not depend on the random baseline's draws
  auto schedule = placement::schedule_job(t, *req);
  if (!schedule) {
    why = "scheduling the job again fails now: " + schedule.error().detail;
    return std::nullopt;
  }
  const auto& ranks = schedule->placement.ranks;
  bool same = ranks.size() == job.ranks.size();
  for (std::size_t i = 0; same && i < ranks.size(); ++i) {
    same = ranks[i].host == job.ranks[i].host && ranks[i].npu == job.ranks[i].npu;
  }
  if (!same) {
    why = "the topology changed since the job was scheduled: its placement comes out differently now";
    return std::nullopt;
  }
  return std::move(*schedule);
}

json pair_traffic_json(const std::map<RankPair, PairTraffic>& traffic, const RankPair& pair) {
  const auto it = traffic.find(pair);
  if (it == traffic.end()) return nullptr;  // no flow data (not zero: nothing was reported)
  return {{"bytes", it->second.bytes}, {"packets", it->second.packets}, {"flows", it->second.flows}};
}

// The job's pair volumes over the window (see the contract): per pair, and the "traffic" summary.
struct TrafficAnswer {
  json summary;
  std::map<RankPair, PairTraffic> pairs;
};

Result<TrafficAnswer> job_traffic(const TrafficSource& source, const store::JobRecord& job,
                                  const std::set<RankPair>& pairs, std::int64_t now,
                                  std::chrono::seconds window, std::size_t max_flows) {
  const std::int64_t since = now - std::chrono::duration_cast<std::chrono::milliseconds>(window).count();
  TrafficAnswer out;
  out.summary = {{"window_s", window.count()},
                 {"since", rfc3339(since)},
                 {"since_ms", since},
                 {"available", false},
                 {"flows", 0},
                 {"note", ""}};
  if (source.telemetry == nullptr || source.network == nullptr) {
    out.summary["note"] = "no flow records are kept by this aggregator";
    return out;
  }
  auto addresses = rank_addresses(*source.network, job);
  if (!addresses) return tl::unexpected(from_store(std::move(addresses.error())));
  std::set<std::string> all;
  for (const auto& [rank, set] : *addresses) all.insert(set.begin(), set.end());
  store::FlowQuery query;
  query.addresses = std::vector<std::string>(all.begin(), all.end());
  query.range.since_ms = since;
  query.max_keys = max_flows;
  auto directions = source.telemetry->flow_directions(query);
  if (!directions) return tl::unexpected(from_store(std::move(directions.error())));
  if (directions->size() > max_flows) {
    out.summary["note"] = "the window holds more than " + std::to_string(max_flows) +
                          " flows of the job's addresses: narrow traffic_window_s";
    return out;
  }
  out.pairs = pair_traffic(*directions, *addresses, pairs);
  std::size_t flows = 0;
  for (const auto& [pair, t] : out.pairs) flows += t.flows;
  out.summary["available"] = true;
  out.summary["flows"] = flows;
  return out;
}

}  // namespace

Result<json> DiagnosisService::diagnose_path(const std::string& src, const std::string& dst,
                                             std::size_t max_paths, const RequestParser& parse_request) {
  auto snap = topology_->with_jobs(jobs_);
  if (!snap) return tl::unexpected(std::move(snap.error()));
  const auto& t = *snap->topology;
  auto a = resolve_npu(t, src, "src");
  if (!a) return tl::unexpected(std::move(a.error()));
  auto b = resolve_npu(t, dst, "dst");
  if (!b) return tl::unexpected(std::move(b.error()));

  json route = {{"source", "ecmp"}, {"job", nullptr}, {"note", ""}};
  std::optional<diagnose::PathSet> set;
  // Both NPUs held by one job: its plan decides the pair's paths.
  const auto& held = *snap->held;
  const auto ja = held.find({t.node(a->host).name, a->npu});
  const auto jb = held.find({t.node(b->host).name, b->npu});
  if (a->host != b->host && ja != held.end() && jb != held.end() && ja->second == jb->second) {
    route["job"] = ja->second;
    auto job = jobs_.get_job(ja->second);
    if (!job) return tl::unexpected(from_store(std::move(job.error())));
    std::string why;
    if (auto schedule = reproduce(*snap, *job, parse_request, why)) {
      std::optional<std::uint32_t> ra;
      std::optional<std::uint32_t> rb;
      for (const auto& r : schedule->placement.ranks) {
        if (r.host_id == a->host && r.npu == a->npu) ra = r.rank;
        if (r.host_id == b->host && r.npu == b->npu) rb = r.rank;
      }
      if (ra && rb) {
        auto paths = diagnose::rank_pair_paths(t, *schedule, *ra, *rb, max_paths);
        if (!paths) return tl::unexpected(std::move(paths.error()));
        set = std::move(*paths);
      }
    } else {
      route["note"] = why;
    }
  }
  if (!set) {
    auto paths = diagnose::ecmp_paths(t, *a, *b, max_paths);
    if (!paths) return tl::unexpected(std::move(paths.error()));
    set = std::move(*paths);
  }
  if (a->host == b->host) {
    route["source"] = "host";
    route["note"] = "both NPUs are on one host: no fabric hop";
  } else if (set->planned) {
    route["source"] = "plan";
  } else if (!set->note.empty()) {
    route["note"] = set->note;
  }

  Judge judge(t, kpis_, alarms_, rules_, limits_);
  auto outcome = judge_paths(t, judge, *set, std::nullopt);
  if (!outcome) return tl::unexpected(std::move(outcome.error()));
  json hops = json::array();
  json counts = verdict_counts();
  for (const auto& j : judge.hops()) {
    hops.push_back(judge.hop_json(j));
    count(counts, j.verdict.level);
  }
  return json{{"src", npu_json(t, *a)},
              {"dst", npu_json(t, *b)},
              {"generated_at", rfc3339(judge.now())},
              {"generated_at_ms", judge.now()},
              {"topology_revision", snap->base.revision},
              {"route", std::move(route)},
              {"verdict", std::string(diagnose::to_string(outcome->level))},
              {"worst_hops", outcome->worst},
              {"paths", std::move(outcome->paths)},
              {"truncated", set->truncated},
              {"summary", {{"hops", judge.hops().size()}, {"hop_verdicts", std::move(counts)}}},
              {"hops", std::move(hops)}};
}

Result<json> DiagnosisService::diagnose_job(const std::string& name, std::size_t max_paths,
                                            const RequestParser& parse_request,
                                            std::chrono::seconds traffic_window) {
  auto job = jobs_.get_job(name);
  if (!job) {
    if (job.error().kind == Error::Kind::not_found)
      return tl::unexpected(Error::not_found("id: no job named '" + name + "'"));
    return tl::unexpected(from_store(std::move(job.error())));
  }
  if (job->ranks.size() > limits_.max_job_ranks) {
    return tl::unexpected(Error::unprocessable("id", "the job has " + std::to_string(job->ranks.size()) +
                                                         " ranks; a diagnosis takes at most " +
                                                         std::to_string(limits_.max_job_ranks)));
  }
  auto snap = topology_->with_jobs(jobs_);
  if (!snap) return tl::unexpected(std::move(snap.error()));
  const auto& t = *snap->topology;
  const std::size_t max_pairs =
      std::max<std::size_t>(1, limits_.max_expanded_paths / std::max<std::size_t>(max_paths, 1));

  std::string why;
  auto schedule = reproduce(*snap, *job, parse_request, why);
  diagnose::JobPairs pairs;
  std::vector<json> endpoints;  // per rank
  if (schedule) {
    auto planned = diagnose::job_pair_paths(t, *schedule, max_pairs, max_paths);
    if (!planned) return tl::unexpected(std::move(planned.error()));
    pairs = std::move(*planned);
    for (const auto& r : schedule->placement.ranks) endpoints.push_back(npu_json(t, {r.host_id, r.npu}));
  } else {
    // Without the plan: the ring over the ranks in rank order, inter-host neighbours.
    std::vector<topo::NpuRef> refs;
    for (const auto& r : job->ranks) {
      const auto host = t.find(r.host);
      if (!host || t.npu({*host, r.npu}) == nullptr) {
        return tl::unexpected(Error::unprocessable("id", "rank " + std::to_string(r.rank) + "'s NPU " +
                                                             r.host + "/" + std::to_string(r.npu) +
                                                             " is not in the topology"));
      }
      refs.push_back({*host, r.npu});
      endpoints.push_back(npu_json(t, refs.back()));
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (std::uint32_t r = 0; r < refs.size(); ++r) {
      const auto s = static_cast<std::uint32_t>((r + 1) % refs.size());
      if (refs[r].host == refs[s].host || !seen.insert({r, s}).second) continue;
      if (pairs.pairs.size() == max_pairs) {
        pairs.truncated = true;
        break;
      }
      auto paths = diagnose::ecmp_paths(t, refs[r], refs[s], max_paths);
      if (!paths) return tl::unexpected(std::move(paths.error()));
      paths->note = "no route plan: " + why;
      pairs.pairs.push_back({r, s, std::move(*paths)});
    }
  }

  Judge judge(t, kpis_, alarms_, rules_, limits_);
  std::set<RankPair> pair_set;
  for (const auto& p : pairs.pairs) pair_set.insert({p.src, p.dst});
  auto traffic =
      job_traffic(traffic_, *job, pair_set, judge.now(), traffic_window, limits_.max_traffic_flows);
  if (!traffic) return tl::unexpected(std::move(traffic.error()));
  struct PairRow {
    json row;
    VerdictLevel level;
    std::size_t order;
  };
  std::vector<PairRow> rows;
  json pair_counts = verdict_counts();
  for (const auto& p : pairs.pairs) {
    auto outcome = judge_paths(t, judge, p.paths, p.src);
    if (!outcome) return tl::unexpected(std::move(outcome.error()));
    count(pair_counts, outcome->level);
    rows.push_back({json{{"src_rank", p.src},
                         {"dst_rank", p.dst},
                         {"src", endpoints.at(p.src)},
                         {"dst", endpoints.at(p.dst)},
                         {"planned", p.paths.planned},
                         {"paths", p.paths.paths.size()},
                         {"truncated", p.paths.truncated},
                         {"note", p.paths.note},
                         {"verdict", std::string(diagnose::to_string(outcome->level))},
                         {"worst_hops", outcome->worst},
                         {"traffic", pair_traffic_json(traffic->pairs, {p.src, p.dst})}},
                    outcome->level, rows.size()});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PairRow& x, const PairRow& y) { return x.level > y.level; });

  auto& hops = judge.hops();
  std::vector<std::size_t> order(hops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const auto& a = hops[x];
    const auto& b = hops[y];
    if (a.verdict.level != b.verdict.level) return a.verdict.level > b.verdict.level;
    if (a.pairs != b.pairs) return a.pairs > b.pairs;
    return a.hop.key < b.hop.key;
  });
  json hop_rows = json::array();
  json hop_counts = verdict_counts();
  json worst = json::array();
  VerdictLevel level = VerdictLevel::ok;
  for (std::size_t i : order) {
    const auto& j = hops[i];
    json row = judge.hop_json(j);
    row["pairs"] = j.pairs;
    row["src_ranks"] = std::vector<std::uint32_t>(j.src_ranks.begin(), j.src_ranks.end());
    count(hop_counts, j.verdict.level);
    level = std::max(level, j.verdict.level);
    if (j.verdict.level >= VerdictLevel::degraded && worst.size() < kWorstListed) {
      worst.push_back({{"id", j.hop.key},
                       {"verdict", std::string(diagnose::to_string(j.verdict.level))},
                       {"pairs", j.pairs},
                       {"reasons", j.verdict.reasons}});
    }
    hop_rows.push_back(std::move(row));
  }
  json pair_rows = json::array();
  for (auto& r : rows) pair_rows.push_back(std::move(r.row));
  return json{{"job", job->name},
              {"ranks", job->ranks.size()},
              {"generated_at", rfc3339(judge.now())},
              {"generated_at_ms", judge.now()},
              {"topology_revision", snap->base.revision},
              {"job_topology_revision", job->topology_revision},
              {"route_plan", {{"used", schedule.has_value()}, {"note", schedule ? "" : why}}},
              {"verdict", std::string(diagnose::to_string(level))},
              {"summary",
               {{"pairs", pairs.pairs.size()},
                {"pairs_truncated", pairs.truncated},
                {"pair_verdicts", std::move(pair_counts)},
                {"hops", hops.size()},
                {"hop_verdicts", std::move(hop_counts)},
                {"worst", std::move(worst)}}},
              {"traffic", std::move(traffic->summary)},
              {"pairs", std::move(pair_rows)},
              {"hops", std::move(hop_rows)}};
}

}  // namespace hsns::services
