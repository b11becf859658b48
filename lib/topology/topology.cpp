#include "topology/topology.h"

#include <algorithm>
#include <numeric>

#include "hsns/ip.h"

namespace hsns::topology {
namespace {

std::size_t ti(Tier tier) {
  return static_cast<std::size_t>(tier);
}

// Union-find over node ids with path halving.
class DisjointSets {
 public:
  explicit DisjointSets(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
  std::uint32_t root(std::uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void join(std::uint32_t a, std::uint32_t b) {
    a = root(a);
    b = root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::uint32_t> parent_;
};

// Union of sorted id lists without duplicates; `stamp` (one slot per node, values < `mark`) avoids sorting
// the many repeats (the leaves of one SU share all their hosts).
std::vector<NodeId> sorted_union(const std::vector<const std::vector<NodeId>*>& parts,
                                 std::vector<std::uint32_t>& stamp, std::uint32_t mark) {
  std::vector<NodeId> out;
  for (const auto* part : parts) {
    for (NodeId id : *part) {
      if (stamp[id] == mark) continue;
      stamp[id] = mark;
      out.push_back(id);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string at(const std::string& where, const char* field) {
  return where.empty() ? std::string(field) : where + "." + field;
}

}  // namespace

std::string_view to_string(Tier tier) {
  switch (tier) {
    case Tier::kHost:
      return "host";
    case Tier::kLeaf:
      return "leaf";
    case Tier::kSpine:
      return "spine";
    case Tier::kCore:
      return "core";
  }
  return "unknown";
}

std::string_view to_string(DeviceState state) {
  switch (state) {
    case DeviceState::kHealthy:
      return "healthy";
    case DeviceState::kSubHealth:
      return "sub-health";
    case DeviceState::kIsolated:
      return "isolated";
    case DeviceState::kAllocated:
      return "allocated";
  }
  return "unknown";
}

std::optional<Tier> parse_tier(std::string_view text) {
  for (Tier tier : {Tier::kHost, Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    if (text == to_string(tier)) return tier;
  }
  return std::nullopt;
}

std::optional<DeviceState> parse_state(std::string_view text) {
  for (DeviceState state :
       {DeviceState::kHealthy, DeviceState::kSubHealth, DeviceState::kIsolated, DeviceState::kAllocated}) {
    if (text == to_string(state)) return state;
  }
  return std::nullopt;
}

// ---- Topology queries ----

std::optional<std::string> canonical_ip_address(std::string_view text) {
  const auto address = IpAddress::parse(text);
  if (!address) return std::nullopt;
  return address->to_string();  // the project's one canonical spelling (RFC 5952 for IPv6)
}

std::optional<NodeId> Topology::find_by_management_address(std::string_view address) const {
  const auto canonical = canonical_ip_address(address);
  if (!canonical) return std::nullopt;
  auto it = by_management_address_.find(*canonical);
  if (it == by_management_address_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

Tier Topology::top_tier() const {
  for (Tier tier : {Tier::kCore, Tier::kSpine, Tier::kLeaf}) {
    if (!switches(tier).empty()) return tier;
  }
  return Tier::kHost;
}

std::uint32_t Topology::domain(NodeId host, Tier tier) const {
  return host_domain_.at(host_pos_.at(host))[ti(tier)];
}

std::span<const NodeId> Topology::domain_hosts(Tier tier, std::uint32_t domain) const {
  return domain_hosts_[ti(tier)].at(domain);
}

std::optional<Tier> Topology::lowest_common_tier(std::span<const NodeId> hosts) const {
  if (hosts.empty()) return std::nullopt;
  for (NodeId host : hosts) {
    if (host >= nodes_.size() || nodes_[host].tier != Tier::kHost) return std::nullopt;
  }
  for (Tier tier : {Tier::kHost, Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    const std::uint32_t first = domain(hosts[0], tier);
    const bool same =
        std::all_of(hosts.begin(), hosts.end(), [&](NodeId h) { return domain(h, tier) == first; });
    if (same) return tier;
  }
  return std::nullopt;
}

std::vector<std::optional<Tier>> Topology::lowest_common_tiers(
    const std::vector<std::vector<NodeId>>& groups) const {
  std::vector<std::optional<Tier>> out;
  out.reserve(groups.size());
  for (const auto& group : groups) out.push_back(lowest_common_tier(group));
  return out;
}

const Npu* Topology::npu(NpuRef ref) const {
  if (ref.host >= nodes_.size() || nodes_[ref.host].tier != Tier::kHost) return nullptr;
  for (const Npu& n : nodes_[ref.host].npus) {
    if (n.index == ref.npu) return &n;
  }
  return nullptr;
}

bool Topology::set_npu_state(NpuRef ref, DeviceState state) {
  auto* n = const_cast<Npu*>(npu(ref));
  if (n == nullptr) return false;
  n->state = state;
  return true;
}

bool Topology::npu_is_free(const Node& host, const Npu& npu) const {
  return host.state == DeviceState::kHealthy && npu.state == DeviceState::kHealthy &&
         (npu.link == kNoLink || links_[npu.link].state != DeviceState::kIsolated);
}

std::vector<std::uint32_t> Topology::free_npu_indices(NodeId host) const {
  std::vector<std::uint32_t> out;
  const Node& h = nodes_.at(host);
  if (h.tier != Tier::kHost) return out;
  for (const Npu& n : h.npus) {
    if (npu_is_free(h, n)) out.push_back(n.index);
  }
  return out;
}

std::uint32_t Topology::free_npus(NodeId host) const {
  const Node& h = nodes_.at(host);
  if (h.tier != Tier::kHost) return 0;
  std::uint32_t count = 0;
  for (const Npu& n : h.npus) count += npu_is_free(h, n) ? 1 : 0;
  return count;
}

double Topology::oversubscription(NodeId node) const {
  const Node& n = nodes_.at(node);
  double down = 0;
  double up = 0;
  for (LinkId l : n.downlinks) down += links_[l].bandwidth_gbps;
  for (LinkId l : n.uplinks) up += links_[l].bandwidth_gbps;
  return up > 0 ? down / up : 0.0;
}

double Topology::tier_oversubscription(Tier tier) const {
  double worst = 0;
  for (NodeId id : switches(tier)) worst = std::max(worst, oversubscription(id));
  return worst;
}

bool Topology::reaches_down(NodeId from, NodeId leaf) const {
  const auto& under = leaves_under_[from];
  return std::binary_search(under.begin(), under.end(), leaf);
}

bool Topology::leads_to(NodeId from, NodeId leaf) const {
  if (reaches_down(from, leaf)) return true;
  for (LinkId l : nodes_[from].uplinks) {
    if (links_[l].state != DeviceState::kIsolated && leads_to(links_[l].upper, leaf)) return true;
  }
  return false;
}

Result<NpuPath> Topology::path(NpuRef src, NpuRef dst, std::span<const std::uint32_t> choices) const {
  const Npu* a = npu(src);
  const Npu* b = npu(dst);
  if (a == nullptr) return tl::unexpected(Error::not_found("source NPU not found in the topology"));
  if (b == nullptr) return tl::unexpected(Error::not_found("destination NPU not found in the topology"));
  NpuPath out;
  if (src.host == dst.host) return out;
  if (a->link == kNoLink)
    return tl::unexpected(Error::unprocessable("src", "source NPU has no link to a leaf"));
  if (b->link == kNoLink) {
    return tl::unexpected(Error::unprocessable("dst", "destination NPU has no link to a leaf"));
  }
  const NodeId dst_leaf = links_[b->link].upper;
  NodeId cur = links_[a->link].upper;
  out.links.push_back(a->link);
  out.top = Tier::kLeaf;
  auto pick = [&](NodeId node, bool upward, std::vector<LinkId> candidates) {
    const std::size_t stage = out.stages.size();
    const std::uint32_t choice = stage < choices.size() ? choices[stage] : 0;
    const LinkId chosen = candidates[choice % candidates.size()];
    out.stages.push_back(EcmpStage{node, upward, std::move(candidates)});
    out.links.push_back(chosen);
    return chosen;
  };
  auto no_path = [&]() {
    return tl::unexpected(Error::unprocessable(
        "dst", "no usable path from " + nodes_[src.host].name + " to " + nodes_[dst.host].name));
  };
  while (!reaches_down(cur, dst_leaf)) {
    std::vector<LinkId> direct;
    std::vector<LinkId> further;
    for (LinkId l : nodes_[cur].uplinks) {
      if (links_[l].state == DeviceState::kIsolated) continue;
      if (reaches_down(links_[l].upper, dst_leaf)) {
        direct.push_back(l);
      } else if (leads_to(links_[l].upper, dst_leaf)) {
        further.push_back(l);
      }
    }
    if (direct.empty() && further.empty()) return no_path();
    const LinkId chosen = pick(cur, true, direct.empty() ? std::move(further) : std::move(direct));
    cur = links_[chosen].upper;
    out.top = std::max(out.top, nodes_[cur].tier);
  }
  while (cur != dst_leaf) {
    std::vector<LinkId> candidates;
    for (LinkId l : nodes_[cur].downlinks) {
      const Link& link = links_[l];
      if (link.state == DeviceState::kIsolated || nodes_[link.lower].tier == Tier::kHost) continue;
      if (reaches_down(link.lower, dst_leaf)) candidates.push_back(l);
    }
    if (candidates.empty()) return no_path();
    cur = links_[pick(cur, false, std::move(candidates))].lower;
  }
  out.links.push_back(b->link);
  return out;
}

bool Topology::build_indices(std::uint64_t max_index_work) {
  const std::size_t n = nodes_.size();
  by_name_.clear();
  by_management_address_.clear();
  for (auto& list : by_tier_) list.clear();
  for (const Node& node : nodes_) {
    by_name_.emplace(node.name, node.id);
    if (!node.management_address.empty()) by_management_address_.emplace(node.management_address, node.id);
    by_tier_[ti(node.tier)].push_back(node.id);
  }
  const auto& hosts = by_tier_[0];
  host_pos_.assign(n, 0xFFFFFFFFu);
  for (std::uint32_t i = 0; i < hosts.size(); ++i) host_pos_[hosts[i]] = i;

  // Domains: hosts joined through links whose upper end is at or below the tier.
  host_domain_.assign(hosts.size(), {});
  for (std::uint32_t i = 0; i < hosts.size(); ++i) host_domain_[i][0] = i;
  domain_count_[0] = static_cast<std::uint32_t>(hosts.size());
  domain_hosts_[0].clear();
  for (NodeId h : hosts) domain_hosts_[0].push_back({h});
  for (Tier tier : {Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    DisjointSets sets(n);
    for (const Link& link : links_) {
      if (nodes_[link.upper].tier <= tier) sets.join(link.lower, link.upper);
    }
    std::unordered_map<std::uint32_t, std::uint32_t> dense;
    auto& groups = domain_hosts_[ti(tier)];
    groups.clear();
    for (std::uint32_t i = 0; i < hosts.size(); ++i) {
      auto [it, fresh] = dense.emplace(sets.root(hosts[i]), static_cast<std::uint32_t>(dense.size()));
      if (fresh) groups.emplace_back();
      host_domain_[i][ti(tier)] = it->second;
      groups[it->second].push_back(hosts[i]);
    }
    domain_count_[ti(tier)] = static_cast<std::uint32_t>(dense.size());
  }

  // Hosts and leaves under each node, bottom-up. Parallel links name the same child many times; each
  // child is merged once, so the work is what limits.h calls index_work, checked before each union.
  hosts_under_.assign(n, {});
  leaves_under_.assign(n, {});
  for (NodeId h : hosts) hosts_under_[h] = {h};
  std::vector<std::uint32_t> stamp(n, 0);
  std::uint32_t mark = 0;
  std::uint64_t work = 0;
  for (Tier tier : {Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    for (NodeId sw : by_tier_[ti(tier)]) {
      std::vector<const std::vector<NodeId>*> host_parts;
      std::vector<const std::vector<NodeId>*> leaf_parts;
      ++mark;
      for (LinkId l : nodes_[sw].downlinks) {
        const NodeId child = links_[l].lower;
        if (stamp[child] == mark) continue;
        stamp[child] = mark;
        host_parts.push_back(&hosts_under_[child]);
        work += hosts_under_[child].size();
        if (tier != Tier::kLeaf) {
          leaf_parts.push_back(&leaves_under_[child]);
          work += leaves_under_[child].size();
        }
      }
      if (tier == Tier::kLeaf) ++work;
      if (work > max_index_work) return false;
      hosts_under_[sw] = sorted_union(host_parts, stamp, ++mark);
      leaves_under_[sw] =
          tier == Tier::kLeaf ? std::vector<NodeId>{sw} : sorted_union(leaf_parts, stamp, ++mark);
    }
  }
  return true;
}

// ---- Builder ----

TopologyBuilder TopologyBuilder::from(const Topology& topology) {
  TopologyBuilder b;
  b.name_ = topology.name_;
  b.nodes_ = topology.nodes_;
  b.links_ = topology.links_;
  b.by_name_ = topology.by_name_;
  for (Node& node : b.nodes_) {
    node.uplinks.clear();
    node.downlinks.clear();
    for (Npu& npu : node.npus) npu.link = kNoLink;
    b.node_where_.push_back((node.tier == Tier::kHost ? "hosts[" : "switches[") + node.name + "]");
    b.npu_where_.emplace_back();
    for (const Npu& npu : node.npus) {
      b.npu_where_.back().push_back(b.node_where_.back() + ".npus[" + std::to_string(npu.index) + "]");
    }
  }
  for (const Link& link : b.links_) b.link_where_.push_back("links[" + std::to_string(link.id) + "]");
  return b;
}

NodeId TopologyBuilder::add_switch(std::string name, Tier tier, DeviceState state, std::string where) {
  Node node;
  node.id = static_cast<NodeId>(nodes_.size());
  node.name = std::move(name);
  node.tier = tier;
  node.state = state;
  if (where.empty()) where = "switches[" + node.name + "]";
  if (tier == Tier::kHost) early_errors_.push_back({at(where, "tier"), "a switch cannot be in tier host"});
  if (!by_name_.emplace(node.name, node.id).second) {
    early_errors_.push_back({at(where, "name"), "duplicate name '" + node.name + "'"});
  }
  nodes_.push_back(std::move(node));
  node_where_.push_back(std::move(where));
  npu_where_.emplace_back();
  return nodes_.back().id;
}

NodeId TopologyBuilder::add_host(std::string name, DeviceState state, std::string where) {
  Node node;
  node.id = static_cast<NodeId>(nodes_.size());
  node.name = std::move(name);
  node.tier = Tier::kHost;
  node.state = state;
  if (where.empty()) where = "hosts[" + node.name + "]";
  if (!by_name_.emplace(node.name, node.id).second) {
    early_errors_.push_back({at(where, "name"), "duplicate name '" + node.name + "'"});
  }
  nodes_.push_back(std::move(node));
  node_where_.push_back(std::move(where));
  npu_where_.emplace_back();
  return nodes_.back().id;
}

void TopologyBuilder::add_npu(NodeId host, Npu npu, std::string where) {
  if (where.empty()) where = node_where_.at(host) + ".npus[" + std::to_string(npu.index) + "]";
  npu.link = kNoLink;
  nodes_.at(host).npus.push_back(std::move(npu));
  npu_where_.at(host).push_back(std::move(where));
}

LinkId TopologyBuilder::add_link(Link link, std::string where) {
  link.id = static_cast<LinkId>(links_.size());
  if (where.empty()) where = "links[" + std::to_string(link.id) + "]";
  links_.push_back(std::move(link));
  link_where_.push_back(std::move(where));
  return links_.back().id;
}

std::optional<NodeId> TopologyBuilder::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

Result<Topology> TopologyBuilder::build() && {
  // A backstop, first because the checks below are quadratic in the NPUs of a host: the entry points check
  // these counts before building anything. The index work is only known while indexing, so
  // build_indices stops at its limit.
  ModelSize size;
  for (const Node& node : nodes_) {
    if (node.tier == Tier::kHost) {
      ++size.hosts;
      size.npus += node.npus.size();
      size.max_npus_per_host = std::max<std::uint64_t>(size.max_npus_per_host, node.npus.size());
    } else {
      ++size.switches;
    }
  }
  size.links = links_.size();
  if (auto problem = check_model_size(size, SizeFields{}, limits_))
    return tl::unexpected(std::move(*problem));
  std::vector<FieldError> errors = std::move(early_errors_);
  std::unordered_map<std::string, NodeId> management_addresses;
  for (Node& node : nodes_) {
    const std::string& where = node_where_[node.id];
    if (node.name.empty()) errors.push_back({at(where, "name"), "must not be empty"});
    if (!node.management_address.empty()) {
      if (const auto canonical = canonical_ip_address(node.management_address); !canonical) {
        errors.push_back({at(where, "management_address"), "must be an IPv4 or IPv6 address"});
      } else if (!management_addresses.emplace(*canonical, node.id).second) {
        errors.push_back(
            {at(where, "management_address"),
             "is also the management address of '" + nodes_[management_addresses[*canonical]].name + "'"});
      } else {
        node.management_address = *canonical;
      }
    }
    if (node.tier != Tier::kHost && !node.npus.empty())
      errors.push_back({at(where, "npus"), "only hosts have NPUs"});
    std::vector<std::size_t> order(node.npus.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return node.npus[x].index < node.npus[y].index; });
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Npu& npu = node.npus[order[i]];
      const std::string& npu_where = npu_where_[node.id][order[i]];
      if (i > 0 && node.npus[order[i - 1]].index == npu.index) {
        errors.push_back({at(npu_where, "index"), "duplicate NPU index " + std::to_string(npu.index)});
      }
      if (npu.port.empty()) errors.push_back({at(npu_where, "port"), "must not be empty"});
      for (std::size_t j = 0; j < i; ++j) {
        if (!npu.port.empty() && node.npus[order[j]].port == npu.port) {
          errors.push_back({at(npu_where, "port"), "duplicate port '" + npu.port + "' on host " + node.name});
        }
      }
    }
    std::vector<Npu> sorted;
    std::vector<std::string> sorted_where;
    for (std::size_t i : order) {
      sorted.push_back(std::move(node.npus[i]));
      sorted_where.push_back(std::move(npu_where_[node.id][i]));
    }
    node.npus = std::move(sorted);
    npu_where_[node.id] = std::move(sorted_where);
  }
  for (Link& link : links_) {
    const std::string& where = link_where_[link.id];
    if (link.lower >= nodes_.size()) {
      errors.push_back({at(where, "lower"), "unknown node"});
      continue;
    }
    if (link.upper >= nodes_.size()) {
      errors.push_back({at(where, "upper"), "unknown node"});
      continue;
    }
    Node& lower = nodes_[link.lower];
    Node& upper = nodes_[link.upper];
    if (static_cast<int>(upper.tier) != static_cast<int>(lower.tier) + 1) {
      errors.push_back(
          {at(where, "upper"), "a " + std::string(to_string(lower.tier)) + " links up to a " +
                                   std::string(to_string(Tier(static_cast<int>(lower.tier) + 1))) +
                                   ", not to " + std::string(to_string(upper.tier)) + " " + upper.name});
      continue;
    }
    if (!(link.bandwidth_gbps > 0)) errors.push_back({at(where, "bandwidth_gbps"), "must be > 0"});
    if (!(link.latency_us >= 0)) errors.push_back({at(where, "latency_us"), "must be >= 0"});
    if (lower.tier == Tier::kHost) {
      Npu* npu = nullptr;
      for (Npu& n : lower.npus) {
        if (link.npu && n.index == *link.npu) npu = &n;
      }
      if (npu == nullptr) {
        errors.push_back({at(where, "npu"), "a host link must name an NPU of host " + lower.name});
        continue;
      }
      if (npu->link != kNoLink) {
        errors.push_back({at(where, "npu"), "NPU " + std::to_string(npu->index) + " of " + lower.name +
                                                " already links to " + nodes_[links_[npu->link].upper].name});
        continue;
      }
      npu->link = link.id;
      if (link.lower_port.empty()) link.lower_port = npu->port;
    } else if (link.npu) {
      errors.push_back({at(where, "npu"), "only host links carry an NPU"});
      continue;
    }
    lower.uplinks.push_back(link.id);
    upper.downlinks.push_back(link.id);
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));
  Topology topology;
  topology.name_ = std::move(name_);
  topology.nodes_ = std::move(nodes_);
  topology.links_ = std::move(links_);
  if (!topology.build_indices(limits_.index_work)) {
    return tl::unexpected(
        Error::invalid("switches",
                       "indexing the hosts and leaves under every switch would take more than the server's "
                       "limit of " +
                           std::to_string(limits_.index_work) +
                           " entries (too many spine and core switches for this many hosts and leaves)"));
  }
  return topology;
}

}  // namespace hsns::topology
