#include "scheduling/search/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>
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

bool healthy(topology::DeviceState s) {
  return s == topology::DeviceState::kHealthy;
}

}  // namespace

std::string_view to_string(LeftOut reason) {
  static constexpr std::array<std::string_view, kLeftOutReasons> kNames = {
      "host_state", "excluded", "not_requested", "switch_state", "no_uplink", "free_npus"};
  return kNames[static_cast<std::size_t>(reason)];
}

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

  // The rank-order units canonical_order aligns with domains (see units()).
  auto unit_hosts = [&](std::uint64_t ranks) -> std::uint32_t {
    const std::uint64_t l = std::lcm(ranks, std::uint64_t{s.u_});
    return l != 0 && *world % l == 0 ? static_cast<std::uint32_t>(l / s.u_) : 1;
  };
  s.units_ = {s.block_};
  std::array<std::uint32_t, 2> runs = {unit_hosts(std::uint64_t{p.tp} * p.cp),
                                       unit_hosts(std::uint64_t{p.tp} * p.ep)};
  std::sort(runs.begin(), runs.end(), std::greater<>());
  for (std::uint32_t r : runs) {
    if (r < s.units_.back() && s.units_.back() % r == 0) s.units_.push_back(r);
  }
  if (s.units_.back() != 1) s.units_.push_back(1);

  auto volume = cost::communication_volume(request.model, request.parallel);
  if (!volume) return fail("parallel", volume.error());
  s.volume_ = std::move(*volume);
  for (const cost::CommOp& op : s.volume_.ops) {
    auto& g_dim = s.dim_gcd_[di(op.dim)];
    g_dim = std::gcd(g_dim, op.group_size);
  }
  if (auto ok = s.resolve_algorithms(); !ok) return tl::unexpected(ok.error());
  s.index_switch_states();
  s.index_usable_npus();

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
  std::vector<char> requested(node_count, request.resources.hosts.empty() ? 1 : 0);
  for (std::size_t i = 0; i < request.resources.hosts.size(); ++i) {
    const auto& name = request.resources.hosts[i];
    const std::string field = "resources.hosts[" + std::to_string(i) + "]";
    auto id = topology.find(name);
    if (!id || topology.node(*id).tier != Tier::kHost) return fail(field, "no host named '" + name + "'");
    if (requested[*id]) return fail(field, "host '" + name + "' is listed twice");
    requested[*id] = 1;
    if (excluded[*id]) continue;
    if (auto why = s.why_not_usable(*id))
      return fail(field, "host '" + name + "' is not usable: " + why->reason);
  }
  s.usable_mask_.assign(node_count, 0);
  s.su_free_npus_.assign(topology.domain_count(Tier::kLeaf), 0);
  std::vector<NodeId> left_out;
  for (NodeId h : hosts) {
    const std::uint32_t free = s.usable_npus(h);
    s.su_free_npus_[topology.domain(h, Tier::kLeaf)] += free;
    const bool ok = !excluded[h] && requested[h] && healthy(topology.node(h).state) && free >= s.u_;
    s.usable_mask_[h] = ok ? 1 : 0;
    if (ok) {
      s.usable_.push_back(h);
    } else if (request.explain) {
      left_out.push_back(h);
    }
  }
  auto by_name = [&](NodeId a, NodeId b) { return topology.node(a).name < topology.node(b).name; };
  std::sort(s.usable_.begin(), s.usable_.end(), by_name);
  if (request.explain) {
    const std::size_t shown = std::min(left_out.size(), kExplainExamples);
    std::partial_sort(left_out.begin(), left_out.begin() + static_cast<std::ptrdiff_t>(shown), left_out.end(),
                      by_name);
    for (std::size_t i = 0; i < left_out.size(); ++i) {
      const NodeId h = left_out[i];
      LeftOutHost why{topology.node(h).name, LeftOut::excluded, "excluded by constraints.exclude_hosts"};
      if (!requested[h]) {
        why = {topology.node(h).name, LeftOut::not_requested, "not in resources.hosts"};
      } else if (!excluded[h]) {
        why = s.why_not_usable(h).value_or(why);
      }
      ++s.left_out_.counts[static_cast<std::size_t>(why.kind)];
      if (i < shown && why.kind != LeftOut::not_requested) s.left_out_.examples.push_back(std::move(why));
    }
  }
  if (s.usable_.size() < s.k_) {
    return fail("resources", "too few free hosts: " + std::to_string(s.k_) + " hosts of " +
                                 std::to_string(s.u_) + " free NPUs needed, " +
                                 std::to_string(s.usable_.size()) + " usable");
  }
  return s;
}

Result<void> Scorer::resolve_algorithms() {
  const SearchRequest& r = *req_;
  op_algorithm_.clear();
  for (const cost::CommOp& op : volume_.ops) {
    const cost::Algorithm wanted = r.dimension_algorithm[di(op.dim)].value_or(r.algorithm);
    cost::Algorithm used = wanted;
    if (wanted != cost::Algorithm::automatic && op.group_size > 1) {
      // Whether the algorithm runs the operation does not depend on where the group sits.
      auto probe = cost::collective_time(op.kind, op.bytes, op.group_size, cost::GroupSpan{0, 1},
                                         r.calibration, wanted);
      if (!probe) {
        used = cost::Algorithm::automatic;
        std::string note = op.what + ": " + std::string(cost::to_string(wanted)) + " cannot run it (" +
                           probe.error() + "); automatic used";
        if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(std::move(note));
      }
    }
    op_algorithm_.push_back(used);
  }
  return {};
}

void Scorer::index_switch_states() {
  const Topology& t = *topo_;
  switch_ok_.assign(t.nodes().size(), 0);
  for (NodeId leaf : t.switches(Tier::kLeaf)) {
    const auto& node = t.node(leaf);
    bool ok = healthy(node.state);
    if (ok && !node.uplinks.empty()) {
      ok = std::any_of(node.uplinks.begin(), node.uplinks.end(), [&](topology::LinkId l) {
        const auto& link = t.link(l);
        return healthy(link.state) && healthy(t.node(link.upper).state);
      });
    }
    switch_ok_[leaf] = ok ? 1 : 0;
  }
}

void Scorer::index_usable_npus() {
  const Topology& t = *topo_;
  npu_offset_.assign(t.nodes().size() + 1, 0);
  npu_index_.clear();
  for (NodeId h = 0; h < t.nodes().size(); ++h) {
    npu_offset_[h] = static_cast<std::uint32_t>(npu_index_.size());
    if (t.node(h).tier != Tier::kHost) continue;
    for (std::uint32_t i : t.free_npu_indices(h)) {
      const topology::Npu* npu = t.npu({h, i});
      if (npu == nullptr || npu->link == topology::kNoLink || switch_ok_[t.link(npu->link).upper]) {
        npu_index_.push_back(i);
      }
    }
  }
  npu_offset_.back() = static_cast<std::uint32_t>(npu_index_.size());
}

std::span<const std::uint32_t> Scorer::usable_npu_indices(NodeId host) const {
  if (host + 1 >= npu_offset_.size()) return {};
  return std::span<const std::uint32_t>(npu_index_)
      .subspan(npu_offset_[host], npu_offset_[host + 1] - npu_offset_[host]);
}

std::uint32_t Scorer::usable_npus(NodeId host) const {
  return static_cast<std::uint32_t>(usable_npu_indices(host).size());
}

std::optional<LeftOutHost> Scorer::why_not_usable(NodeId host) const {
  const Topology& t = *topo_;
  const auto& node = t.node(host);
  if (!healthy(node.state)) {
    return LeftOutHost{node.name, LeftOut::host_state,
                       "host is " + std::string(topology::to_string(node.state))};
  }
  const std::uint32_t usable = usable_npus(host);
  if (usable >= u_) return std::nullopt;
  if (t.free_npus(host) >= u_) {
    // Free NPUs are lost behind a leaf: name the first one.
    for (const auto& npu : node.npus) {
      if (npu.link == topology::kNoLink) continue;
      const NodeId leaf = t.link(npu.link).upper;
      if (switch_ok_[leaf]) continue;
      const auto& sw = t.node(leaf);
      if (!healthy(sw.state)) {
        return LeftOutHost{node.name, LeftOut::switch_state,
                           "leaf " + sw.name + " is " + std::string(topology::to_string(sw.state))};
      }
      return LeftOutHost{node.name, LeftOut::no_uplink, "leaf " + sw.name + " has no usable uplink path"};
    }
  }
  return LeftOutHost{node.name, LeftOut::free_npus,
                     std::to_string(usable) + " usable free NPUs, " + std::to_string(u_) + " needed"};
}

bool Scorer::is_usable(NodeId host) const {
  return host < usable_mask_.size() && usable_mask_[host];
}

std::vector<NodeId> Scorer::canonical_order(const std::vector<NodeId>& hosts) const {
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
  // The largest unit dividing a piece's length: how well it aligns when concatenated.
  auto alignment = [&](std::size_t len) -> std::uint32_t {
    for (std::uint32_t unit : units_) {
      if (len % unit == 0) return unit;
    }
    return 1;
  };
  // A domain's pieces (runs of hosts, each inside one child domain) live in one buffer per level. merge
  // concatenates them best aligned first: every prefix then ends on a multiple of the next piece's
  // alignment, so the units of a piece stay inside its child. Whole blocks go out; the rest becomes one
  // piece of the parent level.
  struct Level {
    std::vector<NodeId> hosts;
    std::vector<std::pair<std::size_t, std::size_t>> pieces;  // (start, length) in hosts
  };
  std::array<Level, 5> levels;  // SU, super-pod, fabric, all, the final rest
  std::vector<NodeId> seq;
  auto merge = [&](Level& from, Level& parent) {
    std::stable_sort(from.pieces.begin(), from.pieces.end(),
                     [&](const auto& x, const auto& y) { return alignment(x.second) > alignment(y.second); });
    seq.clear();
    for (const auto& [start, len] : from.pieces) {
      const auto first = from.hosts.begin() + static_cast<std::ptrdiff_t>(start);
      seq.insert(seq.end(), first, first + static_cast<std::ptrdiff_t>(len));
    }
    from.hosts.clear();
    from.pieces.clear();
    const std::size_t whole = seq.size() / b * b;
    out.insert(out.end(), seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(whole));
    if (whole == seq.size()) return;
    parent.pieces.emplace_back(parent.hosts.size(), seq.size() - whole);
    parent.hosts.insert(parent.hosts.end(), seq.begin() + static_cast<std::ptrdiff_t>(whole), seq.end());
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Level& su = levels[0];
    if (su.pieces.empty()) su.pieces.emplace_back(0, 0);
    su.hosts.push_back(keys[i].h);
    ++su.pieces[0].second;
    const bool last = i + 1 == keys.size();
    if (last || keys[i + 1].d.su != keys[i].d.su) merge(levels[0], levels[1]);
    if (last || keys[i + 1].d.pod != keys[i].d.pod) merge(levels[1], levels[2]);
    if (last || keys[i + 1].d.fab != keys[i].d.fab) merge(levels[2], levels[3]);
  }
  merge(levels[3], levels[4]);
  out.insert(out.end(), levels[4].hosts.begin(), levels[4].hosts.end());
  return out;
}

Result<Scorer::Priced> Scorer::price(std::span<const NodeId> order) const {
  const Topology& t = *topo_;
  if (order.size() != k_) {
    return fail("hosts", std::to_string(order.size()) + " hosts given, " + std::to_string(k_) + " needed");
  }
  std::vector<Doms> doms(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!is_usable(order[i])) return fail("hosts[" + std::to_string(i) + "]", "host is not usable");
    doms[i] = doms_of(t, order[i]);
  }
  {
    std::vector<NodeId> sorted(order.begin(), order.end());
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end()) {
      const auto at = std::find(order.begin(), order.end(), *twice) - order.begin();
      return fail("hosts[" + std::to_string(at) + "]", "host is listed twice");
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
  Priced cand;
  auto hit = memoisable ? memo_.find(key) : memo_.end();
  if (hit != memo_.end()) {
    cand.total_seconds = hit->second.first;
    cand.dimension_seconds = hit->second.second;
  } else {
    // cost::iteration_comm_time with each operation's own algorithm (resolve_algorithms).
    for (std::size_t i = 0; i < volume_.ops.size(); ++i) {
      const cost::CommOp& op = volume_.ops[i];
      auto est = cost::collective_time(op.kind, op.bytes, op.group_size, spans[di(op.dim)], req_->calibration,
                                       op_algorithm_[i]);
      if (!est) return fail("algorithm", op.what + ": " + est.error());
      const double seconds = est->seconds * static_cast<double>(op.count);
      cand.dimension_seconds[di(op.dim)] += seconds;
      cand.total_seconds += seconds;
    }
    if (memoisable) memo_.emplace(key, std::make_pair(cand.total_seconds, cand.dimension_seconds));
  }
  cand.span = span;
  return cand;
}

Result<double> Scorer::seconds(std::span<const NodeId> order) const {
  auto priced = price(order);
  if (!priced) return tl::unexpected(priced.error());
  return priced->total_seconds;
}

Result<Candidate> Scorer::score(std::span<const NodeId> order) const {
  const Topology& t = *topo_;
  auto priced = price(order);
  if (!priced) return tl::unexpected(priced.error());
  std::vector<Doms> doms(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) doms[i] = doms_of(t, order[i]);
  const cost::ParallelSpec& p = req_->parallel;
  const std::uint32_t T = p.tp, C = p.cp, D = p.dp, P = p.pp, E = p.ep, u = u_;
  const std::array<Tier, kDimensions>& span = priced->span;
  const std::size_t dtp = di(cost::Dimension::tp), dpp = di(cost::Dimension::pp),
                    ddp = di(cost::Dimension::dp), dep = di(cost::Dimension::ep),
                    dcp = di(cost::Dimension::cp);
  Candidate cand;
  cand.total_seconds = priced->total_seconds;
  cand.dimension_seconds = priced->dimension_seconds;
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
    const auto idx = usable_npu_indices(order[i]);
    cand.fragmentation.free_npus_left_on_hosts += static_cast<std::uint32_t>(idx.size()) - u;
    cand.npus.emplace_back(idx.begin(), idx.begin() + u);
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

// The usable pool per SU, and the SUs per super-pod and fabric domain.
struct Pool {
  std::vector<std::vector<NodeId>> su_hosts;  // best fit: fewest usable NPUs first, then name
  std::vector<std::uint32_t> su_pod;
  std::vector<std::vector<std::uint32_t>> pod_sus;  // ascending, SUs with usable hosts only
  std::vector<std::vector<std::uint32_t>> fab_pods;
  std::vector<std::uint32_t> pod_count, fab_count;  // usable hosts

  Pool(const Topology& t, const Scorer& s) {
    su_hosts.assign(t.domain_count(Tier::kLeaf), {});
    su_pod.assign(su_hosts.size(), 0);
    pod_sus.assign(t.domain_count(Tier::kSpine), {});
    fab_pods.assign(t.domain_count(Tier::kCore), {});
    pod_count.assign(pod_sus.size(), 0);
    fab_count.assign(fab_pods.size(), 0);
    std::vector<std::pair<std::uint32_t, NodeId>> pool;  // (usable NPUs, host), hosts in name order
    for (NodeId h : s.usable()) pool.emplace_back(s.usable_npus(h), h);
    std::stable_sort(pool.begin(), pool.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [free, h] : pool) {
      const Doms d = doms_of(t, h);
      if (su_hosts[d.su].empty()) {
        su_pod[d.su] = d.pod;
        pod_sus[d.pod].push_back(d.su);
        if (pod_count[d.pod] == 0) fab_pods[d.fab].push_back(d.pod);
      }
      su_hosts[d.su].push_back(h);
      ++pod_count[d.pod];
      ++fab_count[d.fab];
    }
    for (auto& v : pod_sus) std::sort(v.begin(), v.end());
    for (auto& v : fab_pods) std::sort(v.begin(), v.end());
  }
};

// Costs of a host set that depend only on the SUs it touches, packed so that integer order is the
// ranking's order: stranded-NPU weight (the SUs' usable free NPUs) first, then the SU count.
constexpr std::uint64_t kInfinite = ~std::uint64_t{0};
constexpr int kCountBits = 24;
std::uint64_t su_cost(const Scorer& s, std::uint32_t su) {
  return (std::uint64_t{s.su_free_npus(su)} << kCountBits) | 1u;
}

// Knapsack over SUs: dp[j] = the least cost of a set of SUs whose whole units (n_su / unit each, capped)
// cover exactly min(j, target) units. Keeps what is needed to recover the set.
class SuCover {
 public:
  SuCover(const Scorer& s, const Pool& pool, std::span<const std::uint32_t> sus, std::uint32_t unit,
          std::uint32_t target_units)
      : sus_(sus.begin(), sus.end()), unit_(unit), target_(target_units) {
    dp_.assign(target_ + 1, kInfinite);
    dp_[0] = 0;
    take_.assign(sus_.size() * (target_ + 1), 0);
    src_at_target_.assign(sus_.size(), 0);
    cap_.resize(sus_.size());
    for (std::size_t i = 0; i < sus_.size(); ++i) {
      cap_[i] =
          std::min<std::uint32_t>(static_cast<std::uint32_t>(pool.su_hosts[sus_[i]].size()) / unit_, target_);
      if (cap_[i] == 0) continue;
      const std::uint64_t c = su_cost(s, sus_[i]);
      for (std::uint32_t j = target_; j-- > 0;) {
        if (dp_[j] == kInfinite) continue;
        const std::uint32_t to = std::min(target_, j + cap_[i]);
        if (dp_[j] + c < dp_[to]) {
          dp_[to] = dp_[j] + c;
          take_[i * (target_ + 1) + to] = 1;
          if (to == target_) src_at_target_[i] = j;
        }
      }
    }
  }

  // The least cost of covering at least j units (j <= target), kInfinite when impossible.
  std::vector<std::uint64_t> at_least() const {
    std::vector<std::uint64_t> out = dp_;
    for (std::size_t j = out.size() - 1; j-- > 0;) out[j] = std::min(out[j], out[j + 1]);
    return out;
  }
  std::uint64_t cost() const { return dp_[target_]; }

  // Exactly `hosts` hosts (a multiple of the unit, <= target units) in whole units from the SUs of the
  // cheapest cover of at least that many units: (su, hosts) pairs.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pick(std::uint32_t hosts) const {
    const std::uint32_t want = hosts / unit_;
    std::uint32_t j = want;
    for (std::uint32_t x = want; x <= target_; ++x) {
      if (dp_[x] < dp_[j]) j = x;
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> chosen;  // (su, units)
    for (std::size_t i = sus_.size(); i-- > 0 && j > 0;) {
      if (!take_[i * (target_ + 1) + j]) continue;
      chosen.emplace_back(sus_[i], cap_[i]);
      j = j == target_ ? src_at_target_[i] : j - cap_[i];
    }
    // Give back the excess from the largest SUs (every SU keeps at least one unit: the cover is minimal).
    std::uint32_t total = 0;
    for (const auto& c : chosen) total += c.second;
    std::stable_sort(chosen.begin(), chosen.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (auto& c : chosen) {
      if (total <= want) break;
      const std::uint32_t back = std::min(total - want, c.second - 1);
      c.second -= back;
      total -= back;
    }
    for (auto& c : chosen) c.second *= unit_;
    return chosen;
  }

 private:
  std::vector<std::uint32_t> sus_;
  std::uint32_t unit_, target_;
  std::vector<std::uint64_t> dp_;
  std::vector<char> take_;
  std::vector<std::uint32_t> src_at_target_;
  std::vector<std::uint32_t> cap_;
};

using SuCounts = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (su, hosts)

// The cheapest set of k hosts in a fabric domain whose SU counts are multiples of su_unit and whose
// super-pod counts are multiples of pod_unit: per super-pod the cover costs, then a knapsack over pods.
SuCounts pod_aligned(const Scorer& s, const Pool& pool, std::span<const std::uint32_t> pods,
                     std::uint32_t su_unit, std::uint32_t pod_unit, std::uint32_t k) {
  const std::uint32_t target = k / pod_unit;
  const std::uint32_t per = pod_unit / su_unit;
  std::vector<std::vector<std::uint64_t>> pod_cost(pods.size());  // by pod units taken
  std::vector<std::uint64_t> dp(target + 1, kInfinite);
  dp[0] = 0;
  std::vector<std::uint32_t> choice(pods.size() * (target + 1), 0);  // pod units taken at dp[j]
  for (std::size_t p = 0; p < pods.size(); ++p) {
    const std::uint32_t most = std::min(target, pool.pod_count[pods[p]] / pod_unit);
    if (most == 0) continue;
    SuCover cover(s, pool, pool.pod_sus[pods[p]], su_unit, most * per);
    const auto least = cover.at_least();
    for (std::uint32_t j = target; j-- > 0;) {
      if (dp[j] == kInfinite) continue;
      for (std::uint32_t t = 1; t <= most && j + t <= target; ++t) {
        const std::uint64_t c = least[std::size_t{t} * per];
        if (c == kInfinite) break;
        if (dp[j] + c < dp[j + t]) {
          dp[j + t] = dp[j] + c;
          choice[p * (target + 1) + j + t] = t;
        }
      }
    }
  }
  if (dp[target] == kInfinite) return {};
  SuCounts out;
  std::uint32_t j = target;
  for (std::size_t p = pods.size(); p-- > 0 && j > 0;) {
    const std::uint32_t t = choice[p * (target + 1) + j];
    if (t == 0) continue;
    const std::uint32_t most = std::min(target, pool.pod_count[pods[p]] / pod_unit);
    SuCover cover(s, pool, pool.pod_sus[pods[p]], su_unit, most * per);
    for (const auto& c : cover.pick(t * pod_unit)) out.push_back(c);
    j -= t;
  }
  return out;
}

bool better(const Candidate& a, const Candidate& b, bool one_host) {
  const double scale = std::max(std::abs(a.total_seconds), std::abs(b.total_seconds));
  if (std::abs(a.total_seconds - b.total_seconds) > 1e-9 * scale) return a.total_seconds < b.total_seconds;
  const Fragmentation& x = a.fragmentation;
  const Fragmentation& y = b.fragmentation;
  if (one_host && x.free_npus_left_on_hosts != y.free_npus_left_on_hosts) {
    return x.free_npus_left_on_hosts < y.free_npus_left_on_hosts;
  }
  if (x.stranded_free_npus != y.stranded_free_npus) return x.stranded_free_npus < y.stranded_free_npus;
  if (x.leaf_domains_touched != y.leaf_domains_touched)
    return x.leaf_domains_touched < y.leaf_domains_touched;
  if (x.free_npus_left_on_hosts != y.free_npus_left_on_hosts) {
    return x.free_npus_left_on_hosts < y.free_npus_left_on_hosts;
  }
  return a.hosts < b.hosts;
}

// One-host (or one-SU) sets all cost the same: they are ranked by their keys without scoring each, and
// only the first `answers` are scored. Key: (host leftover for one host, stranded weight, host leftover,
// first host name).
struct Cheap {
  std::uint64_t leftover_first = 0, weight = 0, leftover = 0;
  const std::string* name = nullptr;
  std::vector<NodeId> hosts;
};

bool cheaper(const Cheap& a, const Cheap& b) {
  return std::tie(a.leftover_first, a.weight, a.leftover, *a.name) <
         std::tie(b.leftover_first, b.weight, b.leftover, *b.name);
}

}  // namespace

Result<SearchResult> search_topology(const Topology& topology, const SearchRequest& request) {
  auto scorer = Scorer::create(topology, request);
  if (!scorer) return tl::unexpected(scorer.error());
  const Scorer& s = *scorer;
  const std::uint32_t k = s.hosts_needed(), u = s.npus_per_job_host();
  const Tier max_tier = request.constraints.max_tier;
  if (k > 1 && max_tier == Tier::kHost) {
    return fail("constraints.max_tier", "max_tier host allows one host, the job needs " + std::to_string(k));
  }
  const Pool pool(topology, s);
  SearchResult result;
  result.hosts_needed = k;
  result.npus_per_host_used = u;
  result.usable_hosts = static_cast<std::uint32_t>(s.usable().size());
  result.algorithm_notes = s.algorithm_notes();
  if (request.explain) result.left_out = s.left_out();

  std::vector<Candidate> found;
  std::set<std::vector<NodeId>> seen;
  auto consider = [&](const std::vector<NodeId>& hosts) -> Result<void> {
    if (hosts.size() != k) return {};
    std::vector<NodeId> key = hosts;
    std::sort(key.begin(), key.end());
    if (!seen.insert(std::move(key)).second) return {};
    auto cand = s.score(s.canonical_order(hosts));
    if (!cand) return tl::unexpected(cand.error());
    ++result.candidates_evaluated;
    found.push_back(std::move(*cand));
    return {};
  };
  auto consider_counts = [&](const SuCounts& counts) -> Result<void> {
    std::vector<NodeId> hosts;
    for (const auto& [su, n] : counts) {
      hosts.insert(hosts.end(), pool.su_hosts[su].begin(), pool.su_hosts[su].begin() + n);
    }
    return consider(hosts);
  };
  auto leftover = [&](NodeId h) -> std::uint64_t { return s.usable_npus(h) - u; };

  // One-host jobs and one-SU sets: the cheapest `answers` by key.
  std::vector<Cheap> cheap;
  std::uint32_t largest_allowed = 0;
  if (k == 1) {
    for (NodeId h : s.usable()) {
      const std::uint64_t left = leftover(h);
      cheap.push_back(
          {left, s.su_free_npus(topology.domain(h, Tier::kLeaf)), left, &topology.node(h).name, {h}});
    }
    largest_allowed = 1;
  } else if (ti(max_tier) >= ti(Tier::kLeaf)) {
    for (std::uint32_t su = 0; su < pool.su_hosts.size(); ++su) {
      const auto& hosts = pool.su_hosts[su];
      largest_allowed = std::max(largest_allowed, static_cast<std::uint32_t>(hosts.size()));
      if (hosts.size() < k) continue;
      Cheap c{0, s.su_free_npus(su), 0, nullptr, std::vector<NodeId>(hosts.begin(), hosts.begin() + k)};
      for (NodeId h : c.hosts) {
        c.leftover += leftover(h);
        if (c.name == nullptr || topology.node(h).name < *c.name) c.name = &topology.node(h).name;
      }
      cheap.push_back(std::move(c));
    }
  }
  const std::size_t scored = std::min<std::size_t>(cheap.size(), request.answers);
  std::partial_sort(cheap.begin(), cheap.begin() + static_cast<std::ptrdiff_t>(scored), cheap.end(), cheaper);
  for (std::size_t i = 0; i < scored; ++i) {
    if (auto ok = consider(cheap[i].hosts); !ok) return tl::unexpected(ok.error());
  }

  // Super-pods and fabric domains: per alignment class, the cheapest set (see the header).
  const auto& units = s.units();
  if (k > 1 && ti(max_tier) >= ti(Tier::kSpine)) {
    for (std::uint32_t pod = 0; pod < pool.pod_sus.size(); ++pod) {
      largest_allowed = std::max(largest_allowed, pool.pod_count[pod]);
      if (pool.pod_count[pod] < k) continue;
      for (std::uint32_t unit : units) {
        SuCover cover(s, pool, pool.pod_sus[pod], unit, k / unit);
        if (cover.cost() == kInfinite) continue;
        if (auto ok = consider_counts(cover.pick(k)); !ok) return tl::unexpected(ok.error());
      }
    }
  }
  if (k > 1 && ti(max_tier) >= ti(Tier::kCore)) {
    for (std::uint32_t fab = 0; fab < pool.fab_pods.size(); ++fab) {
      largest_allowed = std::max(largest_allowed, pool.fab_count[fab]);
      if (pool.fab_count[fab] < k || pool.fab_pods[fab].size() < 2) continue;
      std::vector<std::uint32_t> sus;
      for (std::uint32_t pod : pool.fab_pods[fab]) {
        sus.insert(sus.end(), pool.pod_sus[pod].begin(), pool.pod_sus[pod].end());
      }
      for (std::size_t i = 0; i < units.size(); ++i) {
        SuCover cover(s, pool, sus, units[i], k / units[i]);
        if (cover.cost() == kInfinite) continue;
        if (auto ok = consider_counts(cover.pick(k)); !ok) return tl::unexpected(ok.error());
        for (std::size_t j = 0; j < i; ++j) {  // larger units kept inside one super-pod
          const SuCounts counts = pod_aligned(s, pool, pool.fab_pods[fab], units[i], units[j], k);
          if (counts.empty()) continue;
          if (auto ok = consider_counts(counts); !ok) return tl::unexpected(ok.error());
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
  const bool one_host = k == 1;
  std::sort(found.begin(), found.end(),
            [one_host](const Candidate& a, const Candidate& b) { return better(a, b, one_host); });
  if (found.size() > request.answers) found.resize(request.answers);
  result.candidates = std::move(found);
  return result;
}

}  // namespace hsns::search
