#include "brain/job_impact.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace hsns::brain {

using topology::kNoLink;
using topology::kNoNode;
using topology::LinkId;
using topology::NodeId;
using topology::Tier;

namespace {

struct Placed {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
};

struct FlowRef {
  std::uint32_t job = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
};

struct JobFacts {
  std::size_t leaf_domains = 0;   // distinct leaf domains (SUs) of its hosts
  std::size_t spine_domains = 0;  // distinct spine domains of its hosts
  bool planned = false;
};

}  // namespace

struct JobImpact::Index {
  std::shared_ptr<const LocatedTopology> topo;
  std::vector<JobDescription> jobs;
  std::vector<JobFacts> facts;
  std::unordered_map<LinkId, std::vector<Placed>> by_npu_link;
  std::unordered_map<NodeId, std::vector<Placed>> by_host;
  std::unordered_map<NodeId, std::vector<Placed>> by_leaf;
  std::unordered_map<LinkId, std::vector<FlowRef>> by_planned_link;
};

JobImpact::JobImpact(std::shared_ptr<const LocatedTopology> topo, std::vector<JobDescription> jobs)
    : index_(std::make_unique<Index>()) {
  auto& x = *index_;
  x.topo = std::move(topo);
  std::sort(jobs.begin(), jobs.end(),
            [](const JobDescription& a, const JobDescription& b) { return a.id < b.id; });
  x.jobs = std::move(jobs);
  x.facts.resize(x.jobs.size());
  if (!x.topo) return;
  const auto& t = x.topo->topology();
  for (std::uint32_t j = 0; j < x.jobs.size(); ++j) {
    std::unordered_set<std::uint32_t> sus;
    std::unordered_set<std::uint32_t> domains;
    for (const auto& r : x.jobs[j].ranks) {
      const auto host = t.find(r.host);
      if (!host || t.node(*host).tier != Tier::kHost) continue;
      x.by_host[*host].push_back({j, r.rank});
      domains.insert(t.domain(*host, Tier::kSpine));
      sus.insert(t.domain(*host, Tier::kLeaf));
      const auto* npu = t.npu({*host, r.npu});
      if (npu == nullptr || npu->link == kNoLink) continue;
      x.by_npu_link[npu->link].push_back({j, r.rank});
      const NodeId leaf = t.link(npu->link).upper;
      x.by_leaf[leaf].push_back({j, r.rank});
    }
    x.facts[j].leaf_domains = sus.size();
    x.facts[j].spine_domains = domains.size();
    x.facts[j].planned = !x.jobs[j].planned.empty();
    for (const auto& f : x.jobs[j].planned) {
      for (LinkId l : f.links) {
        if (l < t.links().size()) x.by_planned_link[l].push_back({j, f.src_rank, f.dst_rank});
      }
    }
  }
}

JobImpact::~JobImpact() = default;

std::size_t JobImpact::jobs() const {
  return index_->jobs.size();
}

std::vector<AffectedJob> JobImpact::affected(std::span<const RootCauseCandidate> root_causes,
                                             ImpactWindow window) const {
  const auto& x = *index_;
  std::map<std::uint32_t, std::set<std::uint32_t>> hit;
  if (root_causes.empty() || x.jobs.empty()) return {};
  const double top = root_causes.front().score;
  auto add = [&](const std::vector<Placed>* placed, bool only_multi_su, bool only_multi_domain) {
    if (placed == nullptr) return;
    for (const auto& p : *placed) {
      const auto& f = x.facts[p.job];
      if (f.planned) continue;  // planned jobs: by their flows
      if (only_multi_su && f.leaf_domains < 2) continue;
      if (only_multi_domain && f.spine_domains < 2) continue;
      hit[p.job].insert(p.rank);
    }
  };
  auto add_all = [&](const std::vector<Placed>* placed) {
    if (placed == nullptr) return;
    for (const auto& p : *placed) hit[p.job].insert(p.rank);
  };
  auto find = [](const auto& map, auto key) -> const std::vector<Placed>* {
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  };
  auto add_planned = [&](LinkId l) {
    auto it = x.by_planned_link.find(l);
    if (it == x.by_planned_link.end()) return;
    for (const auto& f : it->second) {
      hit[f.job].insert(f.src);
      hit[f.job].insert(f.dst);
    }
  };
  // The leaves below a spine or core switch.
  auto leaves_below = [&](NodeId n, auto&& self, std::set<NodeId>& out) -> void {
    const auto& t = x.topo->topology();
    const auto& node = t.node(n);
    if (node.tier == Tier::kLeaf) {
      out.insert(n);
      return;
    }
    for (LinkId d : node.downlinks) {
      const NodeId lower = t.link(d).lower;
      if (t.node(lower).tier != Tier::kHost && !out.contains(lower)) self(lower, self, out);
    }
  };
  auto fabric_switch = [&](NodeId n) {
    const auto& t = x.topo->topology();
    const auto& node = t.node(n);
    for (LinkId l : node.uplinks) add_planned(l);
    for (LinkId l : node.downlinks) add_planned(l);
    std::set<NodeId> leaves;
    leaves_below(n, leaves_below, leaves);
    const bool core = node.tier == Tier::kCore;
    for (NodeId leaf : leaves) add(find(x.by_leaf, leaf), !core, core);
  };

  for (const auto& c : root_causes) {
    if (c.score < top - 0.05) break;
    if (!x.topo) break;
    if (std::find(std::begin(kNoTrafficFaults), std::end(kNoTrafficFaults), c.fault_type) !=
        std::end(kNoTrafficFaults))
      continue;
    const auto& t = x.topo->topology();
    if (c.link != kNoLink && c.link < t.links().size()) {
      const auto& link = t.link(c.link);
      if (link.npu) {
        add_all(find(x.by_npu_link, c.link));
        continue;
      }
      add_planned(c.link);
      const auto lower_tier = t.node(link.lower).tier;
      if (lower_tier == Tier::kLeaf) {
        add(find(x.by_leaf, link.lower), true, false);
      } else {
        std::set<NodeId> leaves;
        leaves_below(link.lower, leaves_below, leaves);
        for (NodeId leaf : leaves) add(find(x.by_leaf, leaf), false, true);
      }
      continue;
    }
    if (c.node != kNoNode && c.node < t.nodes().size()) {
      switch (t.node(c.node).tier) {
        case Tier::kHost:
          add_all(find(x.by_host, c.node));
          break;
        case Tier::kLeaf:
          add_all(find(x.by_leaf, c.node));
          break;
        case Tier::kSpine:
        case Tier::kCore:
          fabric_switch(c.node);
          break;
      }
      continue;
    }
    const auto device = c.entity.substr(0, c.entity.find('/'));
    if (auto host = t.find(device); host && t.node(*host).tier == Tier::kHost)
      add_all(find(x.by_host, *host));
  }

  // Only the jobs that ran while the incident was live.
  auto ran_during = [&window](const JobDescription& job) {
    const bool started_before_end = window.to_ms == 0 || job.started_ms <= window.to_ms;
    const bool ended_after_start = job.ended_ms == 0 || job.ended_ms > window.from_ms;
    return started_before_end && ended_after_start;
  };
  std::vector<AffectedJob> out;
  out.reserve(hit.size());
  for (const auto& [j, ranks] : hit) {
    if (!ran_during(x.jobs[j])) continue;
    out.push_back({x.jobs[j].id, x.jobs[j].name, std::vector<std::uint32_t>(ranks.begin(), ranks.end())});
  }
  return out;
}

}  // namespace hsns::brain
