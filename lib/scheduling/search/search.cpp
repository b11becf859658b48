#include "scheduling/search/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string_view>
#include <utility>

#include "hsns/checked_math.h"
#include "topology/export.h"

namespace hsns::search {
namespace {

constexpr std::size_t ti(Tier t) {
  return static_cast<std::size_t>(t);
}
constexpr std::size_t di(cost::Dimension d) {
  return static_cast<std::size_t>(d);
}

tl::unexpected<Error> fail(std::string field, std::string detail) {
  return tl::unexpected(Error::unprocessable(std::move(field), std::move(detail)));
}

// Domain ids of one host (leaf, spine, core).
struct Doms {
  std::uint32_t su = 0, pod = 0, fab = 0;
};

Doms doms_of(const Topology& t, NodeId h) {
  return {t.domain(h, Tier::kLeaf), t.domain(h, Tier::kSpine), t.domain(h, Tier::kCore)};
}

Tier pair_tier(const Doms& a, const Doms& b, bool same_host) {
  if (same_host) return Tier::kHost;
  if (a.su == b.su) return Tier::kLeaf;
  if (a.pod == b.pod) return Tier::kSpine;
  return Tier::kCore;  // same fabric, or (never for search candidates) disconnected
}

std::string dim_label(std::size_t d) {
  static constexpr std::array<std::string_view, kDimensions> kNames = {"TP", "PP", "DP", "EP", "CP"};
  return std::string(kNames[d]);
}

}  // namespace

cost::Calibration default_calibration() {
  return cost::Calibration{{cost::Tier{"host", 2.0, 1600, 1}, cost::Tier{"leaf", 5.0, 400, 1},
                            cost::Tier{"spine", 8.0, 400, 2}, cost::Tier{"core", 10.0, 400, 4}}};
}

Result<Scorer> Scorer::create(const Topology& topology, const SearchRequest& request) {
  Scorer s(topology, request);
  if (request.answers == 0 || request.answers > 1000) return fail("answers", "must be in 1..1000");
  // Bounds every size and product used below (world size <= 2^24, pp * virtual_stages <= layers, ...).
  if (auto ok = cost::check(request.model, request.parallel); !ok)
    return fail(ok.error().field(), ok.error().detail);
  if (auto ok = cost::validate(request.calibration); !ok) return fail("calibration", ok.error());
  const auto hosts = topology.hosts();
  if (hosts.empty()) return fail("resources", "the topology has no hosts");
  std::uint32_t nph = request.npus_per_host;
  if (nph == 0) {
    for (NodeId h : hosts) nph = std::max(nph, static_cast<std::uint32_t>(topology.node(h).npus.size()));
    if (nph == 0) return fail("resources", "no host of the topology has NPUs");
  }
  const cost::ParallelSpec& p = request.parallel;
  if (p.tp > nph) {
    return fail("parallel.tp", "TP " + std::to_string(p.tp) + " is larger than a host (" +
                                   std::to_string(nph) + " NPUs): TP groups must stay inside a host");
  }
  const auto world = bounded_product(cost::kMaxWorldSize, {p.tp, p.pp, p.dp, p.cp});
  if (!world) return fail("parallel", "TP*PP*DP*CP must be <= 2^24 NPUs");  // cost::check said so already
  if (request.npus != 0 && request.npus != *world) {
    return fail("npus", "TP*PP*DP*CP = " + std::to_string(*world) + " differs from the " +
                            std::to_string(request.npus) + " NPUs requested");
  }
  s.world_ = static_cast<std::uint32_t>(*world);
  s.u_ = std::min(s.world_, nph);
  if (s.world_ % s.u_ != 0) {
    return fail("parallel", "TP*PP*DP*CP = " + std::to_string(*world) + " is not a multiple of the " +
                                std::to_string(nph) + " NPUs per host");
  }
  if (s.u_ % p.tp != 0) {
    return fail("parallel.tp", "TP " + std::to_string(p.tp) + " must divide the " + std::to_string(s.u_) +
                                   " NPUs used per host, or a TP group would leave its host");
  }
  s.k_ = s.world_ / s.u_;
  const std::uint64_t g = std::uint64_t{p.tp} * p.cp * p.dp;  // divides world <= 2^24
  // A block: the fewest consecutive hosts that hold whole pipeline stages (lcm(stage ranks, u) / u).
  const std::uint64_t stage_lcm = std::lcm(g, std::uint64_t{s.u_});
  s.block_ = *world % stage_lcm == 0 ? static_cast<std::uint32_t>(stage_lcm / s.u_) : 1;

  auto volume = cost::communication_volume(request.model, request.parallel);
  if (!volume) return fail("parallel", volume.error());
  s.volume_ = std::move(*volume);
  for (const cost::CommOp& op : s.volume_.ops) {
    auto& g_dim = s.dim_gcd_[di(op.dim)];
    g_dim = std::gcd(g_dim, op.group_size);
  }

  const auto node_count = topology.nodes().size();
  std::vector<char> excluded(node_count, 0);
  for (std::size_t i = 0; i < request.constraints.exclude_hosts.size(); ++i) {
    const auto& name = request.constraints.exclude_hosts[i];
    auto id = topology.find(name);
    if (!id || topology.node(*id).tier != Tier::kHost) {
      return fail("constraints.exclude_hosts[" + std::to_string(i) + "]", "no host named '" + name + "'");
    }
    excluded[*id] = 1;
  }
  auto usable_host = [&](NodeId h) {
    return topology.node(h).state == topology::DeviceState::kHealthy && topology.free_npus(h) >= s.u_;
  };
  s.usable_mask_.assign(node_count, 0);
  if (!request.resources.hosts.empty()) {
    for (std::size_t i = 0; i < request.resources.hosts.size(); ++i) {
      const auto& name = request.resources.hosts[i];
      const std::string field = "resources.hosts[" + std::to_string(i) + "]";
      auto id = topology.find(name);
      if (!id || topology.node(*id).tier != Tier::kHost) return fail(field, "no host named '" + name + "'");
      if (s.usable_mask_[*id]) return fail(field, "host '" + name + "' is listed twice");
      if (excluded[*id]) continue;
      if (!usable_host(*id)) {
        return fail(field, "host '" + name + "' is " +
                               std::string(topology::to_string(topology.node(*id).state)) + " with " +
                               std::to_string(topology.free_npus(*id)) + " free NPUs, " +
                               std::to_string(s.u_) + " needed");
      }
      s.usable_mask_[*id] = 1;
    }
  } else {
    for (NodeId h : hosts) s.usable_mask_[h] = !excluded[h] && usable_host(h);
  }
  for (NodeId h : hosts) {
    if (s.usable_mask_[h]) s.usable_.push_back(h);
  }
  std::sort(s.usable_.begin(), s.usable_.end(),
            [&](NodeId a, NodeId b) { return topology.node(a).name < topology.node(b).name; });
  if (s.usable_.size() < s.k_) {
    return fail("resources", "too few free hosts: " + std::to_string(s.k_) + " hosts of " +
                                 std::to_string(s.u_) + " free NPUs needed, " +
                                 std::to_string(s.usable_.size()) + " usable");
  }
  s.su_free_npus_.assign(topology.domain_count(Tier::kLeaf), 0);
  for (NodeId h : hosts) s.su_free_npus_[topology.domain(h, Tier::kLeaf)] += topology.free_npus(h);
  return s;
}

bool Scorer::is_usable(NodeId host) const {
  return host < usable_mask_.size() && usable_mask_[host];
}

std::vector<NodeId> Scorer::canonical_order(std::vector<NodeId> hosts) const {
  const Topology& t = *topo_;
  struct Key {
    Doms d;
    NodeId h;
  };
  std::vector<Key> keys;
  keys.reserve(hosts.size());
  for (NodeId h : hosts) keys.push_back({doms_of(t, h), h});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.d.fab != b.d.fab) return a.d.fab < b.d.fab;
    if (a.d.pod != b.d.pod) return a.d.pod < b.d.pod;
    if (a.d.su != b.d.su) return a.d.su < b.d.su;
    return t.node(a.h).name < t.node(b.h).name;
  });
  const std::size_t b = block_;
  std::vector<NodeId> out;
  out.reserve(hosts.size());
  // Emits whole blocks of `from` and returns the remainder.
  auto emit_blocks = [&](std::vector<NodeId>& from, std::vector<NodeId>& rest) {
    const std::size_t whole = from.size() / b * b;
    out.insert(out.end(), from.begin(), from.begin() + static_cast<std::ptrdiff_t>(whole));
    rest.insert(rest.end(), from.begin() + static_cast<std::ptrdiff_t>(whole), from.end());
    from.clear();
  };
  std::vector<NodeId> su_run, pod_left, fab_left, global_left;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    su_run.push_back(keys[i].h);
    const bool last = i + 1 == keys.size();
    const bool su_end = last || keys[i + 1].d.su != keys[i].d.su;
    const bool pod_end = last || keys[i + 1].d.pod != keys[i].d.pod;
    const bool fab_end = last || keys[i + 1].d.fab != keys[i].d.fab;
    if (su_end) emit_blocks(su_run, pod_left);
    if (pod_end) emit_blocks(pod_left, fab_left);
    if (fab_end) emit_blocks(fab_left, global_left);
  }
  out.insert(out.end(), global_left.begin(), global_left.end());
  return out;
}

Result<Candidate> Scorer::score(std::span<const NodeId> order) const {
  const Topology& t = *topo_;
  if (order.size() != k_) {
    return fail("hosts", std::to_string(order.size()) + " hosts given, " + std::to_string(k_) + " needed");
  }
  std::vector<Doms> doms(order.size());
  {
    std::set<NodeId> seen;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (!is_usable(order[i]) || !seen.insert(order[i]).second) {
        return fail("hosts[" + std::to_string(i) + "]", "host is not usable or listed twice");
      }
      doms[i] = doms_of(t, order[i]);
    }
  }
  const cost::ParallelSpec& p = req_->parallel;
  const std::uint32_t T = p.tp, C = p.cp, D = p.dp, P = p.pp, E = p.ep, u = u_;
  auto host_of = [&](std::uint32_t t_, std::uint32_t c, std::uint32_t d, std::uint32_t pp) {
    return (t_ + T * (c + C * (d + D * pp))) / u;
  };
  std::array<Tier, kDimensions> span{};
  std::array<std::uint32_t, kDimensions> rph{};
  // Folds one group (member host indices produced by `member(i)`, i < n) into dimension d.
  auto fold = [&](std::size_t d, std::uint32_t n, bool first_group, auto&& member) {
    const std::uint32_t h0 = member(0);
    Tier worst = Tier::kHost;
    std::uint32_t on_first = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t h = member(i);
      on_first += h == h0;
      const Tier tier = pair_tier(doms[h0], doms[h], h == h0);
      if (ti(tier) > ti(worst)) worst = tier;
    }
    if (ti(worst) > ti(span[d])) span[d] = worst;
    if (first_group) rph[d] = std::max<std::uint32_t>(1, std::gcd(on_first, dim_gcd_[d]));
  };
  const std::size_t dtp = di(cost::Dimension::tp), dpp = di(cost::Dimension::pp),
                    ddp = di(cost::Dimension::dp), dep = di(cost::Dimension::ep),
                    dcp = di(cost::Dimension::cp);
  for (std::uint32_t pp = 0; pp < P; ++pp) {
    for (std::uint32_t d = 0; d < D; ++d) {
      for (std::uint32_t c = 0; c < C; ++c) {
        const bool first = pp == 0 && d == 0 && c == 0;
        fold(dtp, T, first, [&](std::uint32_t i) { return host_of(i, c, d, pp); });
      }
    }
  }
  for (std::uint32_t x = 0; x < T; ++x) {
    for (std::uint32_t pp = 0; pp < P; ++pp) {
      for (std::uint32_t d = 0; d < D; ++d) {
        fold(dcp, C, x == 0 && pp == 0 && d == 0, [&](std::uint32_t i) { return host_of(x, i, d, pp); });
      }
      // DP x CP group (dense gradients are reduced over both).
      fold(ddp, C * D, x == 0 && pp == 0, [&](std::uint32_t i) { return host_of(x, i % C, i / C, pp); });
      for (std::uint32_t e0 = 0; e0 < C * D; e0 += E) {
        fold(dep, E, x == 0 && pp == 0 && e0 == 0,
             [&](std::uint32_t i) { return host_of(x, (e0 + i) % C, (e0 + i) / C, pp); });
      }
    }
    for (std::uint32_t d = 0; d < D; ++d) {
      for (std::uint32_t c = 0; c < C; ++c) {
        fold(dpp, P, x == 0 && d == 0 && c == 0, [&](std::uint32_t i) { return host_of(x, c, d, i); });
      }
    }
  }

  const std::size_t ncal = req_->calibration.tiers.size();
  cost::DimensionSpans spans{};
  std::uint64_t key = 0;
  bool memoisable = true;
  for (std::size_t d = 0; d < kDimensions; ++d) {
    spans[d] = cost::GroupSpan{std::min(ti(span[d]), ncal - 1), rph[d]};
    if (rph[d] >= 512) memoisable = false;
    key = (key << 12) | (static_cast<std::uint64_t>(spans[d].tier) << 9) | (rph[d] & 511u);
  }
  Candidate cand;
  auto hit = memoisable ? memo_.find(key) : memo_.end();
  if (hit != memo_.end()) {
    cand.total_seconds = hit->second.first;
    cand.dimension_seconds = hit->second.second;
  } else {
    auto est = cost::iteration_comm_time(volume_, spans, req_->calibration, req_->algorithm);
    if (!est) return fail("algorithm", est.error());
    cand.total_seconds = est->total_seconds;
    cand.dimension_seconds = est->per_dimension_seconds;
    if (memoisable) memo_.emplace(key, std::make_pair(cand.total_seconds, cand.dimension_seconds));
  }
  cand.span = span;

  // Job span, hosts, NPUs, fragmentation.
  Tier job = Tier::kHost;
  for (std::size_t i = 0; i < doms.size(); ++i) {
    const Tier tier = pair_tier(doms[0], doms[i], i == 0);
    if (ti(tier) > ti(job)) job = tier;
  }
  cand.job_span = job;
  cand.host_ids.assign(order.begin(), order.end());
  cand.hosts.reserve(order.size());
  cand.npus.reserve(order.size());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> per_su;  // (su, hosts taken)
  std::vector<std::uint32_t> pods;
  for (std::size_t i = 0; i < order.size(); ++i) {
    cand.hosts.push_back(t.node(order[i]).name);
    auto idx = t.free_npu_indices(order[i]);
    idx.resize(u);
    cand.npus.push_back(std::move(idx));
    per_su.emplace_back(doms[i].su, 1);
    pods.push_back(doms[i].pod);
  }
  std::sort(per_su.begin(), per_su.end());
  std::sort(pods.begin(), pods.end());
  cand.fragmentation.spine_domains_touched =
      static_cast<std::uint32_t>(std::unique(pods.begin(), pods.end()) - pods.begin());
  for (std::size_t i = 0; i < per_su.size();) {
    std::size_t j = i;
    while (j < per_su.size() && per_su[j].first == per_su[i].first) ++j;
    const std::uint32_t left = su_free_npus_[per_su[i].first] - static_cast<std::uint32_t>(j - i) * u;
    ++cand.fragmentation.leaf_domains_touched;
    cand.fragmentation.leaf_domains_left_partial += left > 0;
    cand.fragmentation.stranded_free_npus += left;
    i = j;
  }

  // Explanation.
  std::string text = std::to_string(k_) + " host" + (k_ == 1 ? "" : "s") + " x " + std::to_string(u) +
                     " NPUs within " + std::string(topology::to_string(job)) + " domain " +
                     topology::domain_name(t, job, t.domain(order[0], job)) + " (" +
                     std::to_string(cand.fragmentation.leaf_domains_touched) + " SU";
  text += cand.fragmentation.leaf_domains_touched == 1 ? ")" : "s)";
  text += "; groups span";
  const std::array<std::uint32_t, kDimensions> sizes = {T, P, C * D, E, C};
  for (std::size_t d : {dtp, dcp, dep, ddp, dpp}) {
    if (sizes[d] <= 1) continue;
    text += " " + dim_label(d) + (d == ddp && C > 1 ? "xCP" : "") + ":" +
            std::string(topology::to_string(span[d]));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "; comm %.3f ms/iteration", cand.total_seconds * 1e3);
  text += buf;
  text += "; leaves " + std::to_string(cand.fragmentation.stranded_free_npus) + " free NPUs in " +
          std::to_string(cand.fragmentation.leaf_domains_left_partial) + " partly used SUs";
  cand.explanation = std::move(text);
  return cand;
}

Result<std::vector<NodeId>> first_fit(const Topology& topology, const SearchRequest& request) {
  auto scorer = Scorer::create(topology, request);
  if (!scorer) return tl::unexpected(scorer.error());
  const auto& pool = scorer->usable();
  return std::vector<NodeId>(pool.begin(), pool.begin() + scorer->hosts_needed());
}

namespace {

// The usable pool as a tree: SUs (host lists in preference order) under pods under fabric domains.
class DomainTree {
 public:
  DomainTree(const Topology& t, const Scorer& s) : b_(s.block_hosts()) {
    std::vector<NodeId> pool = s.usable();
    // Best fit on NPUs inside an SU (fewest free NPUs first), then name.
    std::stable_sort(pool.begin(), pool.end(),
                     [&](NodeId a, NodeId b) { return t.free_npus(a) < t.free_npus(b); });
    const std::uint32_t n_su = t.domain_count(Tier::kLeaf), n_pod = t.domain_count(Tier::kSpine),
                        n_fab = t.domain_count(Tier::kCore);
    su_hosts_.assign(n_su, {});
    for (auto& level : nodes_) level.clear();
    nodes_[0].assign(n_su, {});
    nodes_[1].assign(n_pod, {});
    nodes_[2].assign(n_fab, {});
    std::vector<char> linked_su(n_su, 0), linked_pod(n_pod, 0);
    for (NodeId h : pool) {
      const Doms d = doms_of(t, h);
      su_hosts_[d.su].push_back(h);
      if (!linked_su[d.su]) {
        linked_su[d.su] = 1;
        nodes_[1][d.pod].children.push_back(d.su);
      }
      if (!linked_pod[d.pod]) {
        linked_pod[d.pod] = 1;
        nodes_[2][d.fab].children.push_back(d.pod);
      }
    }
    for (auto& level : nodes_) {
      for (auto& node : level) std::sort(node.children.begin(), node.children.end());
    }
    for (std::uint32_t i = 0; i < n_su; ++i) {
      auto& node = nodes_[0][i];
      node.count = static_cast<std::uint32_t>(su_hosts_[i].size());
      node.cap[0] = node.cap[1] = node.count / b_;
    }
    for (std::size_t level = 1; level < 3; ++level) {
      for (auto& node : nodes_[level]) {
        std::uint32_t left = 0;
        for (std::uint32_t c : node.children) {
          const auto& child = nodes_[level - 1][c];
          node.count += child.count;
          node.cap[0] += child.cap[0];
          node.cap[1] += child.cap[1];
          left += child.count - child.cap[1] * b_;
        }
        node.cap[1] += left / b_;
      }
    }
    used_.assign(n_su, 0);
  }

  std::size_t size(std::size_t level) const { return nodes_[level].size(); }
  std::uint32_t count(std::size_t level, std::uint32_t id) const { return nodes_[level][id].count; }

  // Hosts for `blocks` blocks inside domain (level, id): greedy best-fit (or largest-first) over children
  // by whole-block capacity (cap mode 0: blocks inside one SU only; 1: also blocks across children), then
  // the remaining blocks from leftovers. The domain must hold blocks * b hosts.
  std::vector<NodeId> select(std::size_t level, std::uint32_t id, std::uint32_t blocks, bool best_fit,
                             int mode) {
    std::fill(used_.begin(), used_.end(), 0);
    std::vector<NodeId> out;
    take(level, id, blocks, best_fit, mode, out);
    return out;
  }

 private:
  struct Dom {
    std::vector<std::uint32_t> children;
    std::uint32_t count = 0;
    std::array<std::uint32_t, 2> cap{};
  };

  std::uint32_t remaining(std::size_t level, std::uint32_t id) const {
    if (level == 0) return nodes_[0][id].count - used_[id];
    std::uint32_t n = 0;
    for (std::uint32_t c : nodes_[level][id].children) n += remaining(level - 1, c);
    return n;
  }

  void take_hosts(std::uint32_t su, std::uint32_t n, std::vector<NodeId>& out) {
    const auto& hosts = su_hosts_[su];
    for (std::uint32_t i = 0; i < n && used_[su] < hosts.size(); ++i) out.push_back(hosts[used_[su]++]);
  }

  // Leftover hosts, children with most remaining first (ties: id).
  void collect(std::size_t level, std::uint32_t id, std::uint32_t& need, std::vector<NodeId>& out) {
    if (need == 0) return;
    if (level == 0) {
      const std::uint32_t n = std::min(need, remaining(0, id));
      take_hosts(id, n, out);
      need -= n;
      return;
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order;  // (-remaining, id)
    for (std::uint32_t c : nodes_[level][id].children) {
      const std::uint32_t r = remaining(level - 1, c);
      if (r > 0) order.emplace_back(0xFFFFFFFFu - r, c);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [neg, c] : order) collect(level - 1, c, need, out);
  }

  void take(std::size_t level, std::uint32_t id, std::uint32_t blocks, bool best_fit, int mode,
            std::vector<NodeId>& out) {
    if (blocks == 0) return;
    if (level == 0) {
      take_hosts(id, blocks * b_, out);
      return;
    }
    const auto& node = nodes_[level][id];
    std::vector<char> done(node.children.size(), 0);
    std::uint32_t need = blocks;
    while (need > 0) {
      std::size_t pick = node.children.size();
      if (best_fit) {
        for (std::size_t i = 0; i < node.children.size(); ++i) {
          const auto& c = nodes_[level - 1][node.children[i]];
          if (done[i] || c.cap[mode] < need) continue;
          if (pick == node.children.size() || c.count < nodes_[level - 1][node.children[pick]].count)
            pick = i;
        }
      }
      if (pick == node.children.size()) {
        for (std::size_t i = 0; i < node.children.size(); ++i) {
          const auto& c = nodes_[level - 1][node.children[i]];
          if (done[i] || c.cap[mode] == 0) continue;
          if (pick == node.children.size()) {
            pick = i;
            continue;
          }
          const auto& best = nodes_[level - 1][node.children[pick]];
          if (c.cap[mode] > best.cap[mode] || (c.cap[mode] == best.cap[mode] && c.count < best.count)) {
            pick = i;
          }
        }
      }
      if (pick == node.children.size()) break;
      done[pick] = 1;
      const std::uint32_t n = std::min(need, nodes_[level - 1][node.children[pick]].cap[mode]);
      take(level - 1, node.children[pick], n, best_fit, mode, out);
      need -= n;
    }
    std::uint32_t hosts_left = need * b_;
    collect(level, id, hosts_left, out);
  }

  std::uint32_t b_;
  std::vector<std::vector<NodeId>> su_hosts_;
  std::array<std::vector<Dom>, 3> nodes_;
  std::vector<std::uint32_t> used_;
};

bool better(const Candidate& a, const Candidate& b) {
  const double scale = std::max(std::abs(a.total_seconds), std::abs(b.total_seconds));
  if (std::abs(a.total_seconds - b.total_seconds) > 1e-9 * scale) return a.total_seconds < b.total_seconds;
  if (a.fragmentation.stranded_free_npus != b.fragmentation.stranded_free_npus) {
    return a.fragmentation.stranded_free_npus < b.fragmentation.stranded_free_npus;
  }
  if (a.fragmentation.leaf_domains_touched != b.fragmentation.leaf_domains_touched) {
    return a.fragmentation.leaf_domains_touched < b.fragmentation.leaf_domains_touched;
  }
  return a.hosts < b.hosts;
}

}  // namespace

Result<SearchResult> search_topology(const Topology& topology, const SearchRequest& request) {
  auto scorer = Scorer::create(topology, request);
  if (!scorer) return tl::unexpected(scorer.error());
  const std::uint32_t k = scorer->hosts_needed();
  const std::uint32_t blocks = k / scorer->block_hosts();
  const Tier max_tier = request.constraints.max_tier;
  if (k > 1 && max_tier == Tier::kHost) {
    return fail("constraints.max_tier", "max_tier host allows one host, the job needs " + std::to_string(k));
  }
  DomainTree tree(topology, *scorer);
  SearchResult result;
  result.hosts_needed = k;
  result.npus_per_host_used = scorer->npus_per_job_host();
  result.usable_hosts = static_cast<std::uint32_t>(scorer->usable().size());

  std::vector<Candidate> found;
  std::set<std::vector<NodeId>> seen;
  std::uint32_t largest_allowed = 0;
  auto consider = [&](std::vector<NodeId> hosts) -> Result<void> {
    if (hosts.size() != k) return {};
    std::vector<NodeId> key = hosts;
    std::sort(key.begin(), key.end());
    if (!seen.insert(std::move(key)).second) return {};
    auto cand = scorer->score(scorer->canonical_order(std::move(hosts)));
    if (!cand) return tl::unexpected(cand.error());
    ++result.candidates_evaluated;
    found.push_back(std::move(*cand));
    return {};
  };
  const std::array<Tier, 3> level_tier = {Tier::kLeaf, Tier::kSpine, Tier::kCore};
  for (std::size_t level = 0; level < 3; ++level) {
    const bool allowed = ti(level_tier[level]) <= ti(max_tier) || k == 1;
    for (std::uint32_t id = 0; id < tree.size(level); ++id) {
      const std::uint32_t n = tree.count(level, id);
      if (allowed) largest_allowed = std::max(largest_allowed, n);
      if (!allowed || n < k) continue;
      if (level == 0) {
        if (auto ok = consider(tree.select(0, id, blocks, true, 0)); !ok) return tl::unexpected(ok.error());
        continue;
      }
      for (int mode : {0, 1}) {
        for (bool best_fit : {true, false}) {
          auto ok = consider(tree.select(level, id, blocks, best_fit, mode));
          if (!ok) return tl::unexpected(ok.error());
        }
      }
    }
  }
  if (found.empty()) {
    if (ti(max_tier) < ti(Tier::kCore)) {
      return fail("constraints.max_tier",
                  "no " + std::string(topology::to_string(max_tier)) + " domain holds " + std::to_string(k) +
                      " usable hosts (the largest holds " + std::to_string(largest_allowed) + ")");
    }
    return fail("resources", "no connected part of the fabric holds " + std::to_string(k) +
                                 " usable hosts (the largest holds " + std::to_string(largest_allowed) + ")");
  }
  std::sort(found.begin(), found.end(), better);
  if (found.size() > request.answers) found.resize(request.answers);
  result.candidates = std::move(found);
  return result;
}

}  // namespace hsns::search
