// The fabric topology model: a tree of tiers (NPU port -> host -> leaf/rail -> spine -> core) with links,
// NPUs and device state, and the queries topology search and route planning run on it.
//
// Contract:
// - Ownership: a Topology is a value. It owns its nodes, links and indices; ids (NodeId, LinkId) are dense
//   indices valid for the Topology they came from (and for topologies built from it with
//   TopologyBuilder::from, which keeps existing ids and appends new ones).
// - Construction: only through TopologyBuilder::build, which validates (unique names, links between adjacent
//   tiers, NPU links from a host to a leaf, positive bandwidth, the size limits of limits.h, including the
//   index work, which is checked while indexing) and computes the indices. Errors are values:
//   an hsns::Error (kind invalid) whose fields name the offending field ("links[3].b",
//   "hosts[1].npus[0].leaf").
// - Threads: const queries are safe from any number of threads; set_*_state need exclusive access (the
//   state is not part of any index, so changing it never invalidates ids or query results other than the
//   state-dependent ones: free_npus, path candidates).
// - Domains: each host belongs to one domain per tier. The leaf domain (a scalable unit, SU) is the set of
//   hosts joined through leaf switches; the spine domain (a super-pod) the set joined through leaves and
//   spines; the core domain the set joined through the whole fabric. Domain ids are dense, numbered in order
//   of the lowest host id they contain, so they are deterministic.
// - Costs: index building is O(nodes + links + sum of hosts under each switch); lowest_common_tier is O(k)
//   for k hosts; hosts_under is O(1); path is O(tiers x uplinks) per call.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <unordered_map>
#include <vector>

#include "hsns/error.h"
#include "topology/limits.h"

namespace hsns::topology {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xFFFFFFFFu;
inline constexpr LinkId kNoLink = 0xFFFFFFFFu;

// Tiers, lowest first. NPU ports are not nodes: they are the lower end of a host's links.
enum class Tier : std::uint8_t { kHost = 0, kLeaf = 1, kSpine = 2, kCore = 3 };
inline constexpr std::size_t kTierCount = 4;

enum class DeviceState : std::uint8_t { kHealthy, kSubHealth, kIsolated, kAllocated };

std::string_view to_string(Tier tier);
std::string_view to_string(DeviceState state);
std::optional<Tier> parse_tier(std::string_view text);  // "host", "leaf", "spine", "core"
std::optional<DeviceState> parse_state(
    std::string_view text);  // "healthy", "sub-health", "isolated", "allocated"
// The canonical text of an IPv4 or IPv6 literal ("2001:DB8::01" -> "2001:db8::1"); nullopt for anything
// else.
std::optional<std::string> canonical_ip_address(std::string_view text);

struct Npu {
  std::uint32_t index = 0;  // NPU index on the host (device id), unique per host
  std::string port;         // netdev name of its RoCE port, unique per host
  DeviceState state = DeviceState::kHealthy;
  LinkId link = kNoLink;  // the link from this port to its leaf, kNoLink while unknown
};

struct Node {
  NodeId id = kNoNode;
  std::string name;
  Tier tier = Tier::kHost;
  DeviceState state = DeviceState::kHealthy;
  // Switches: the address the device sends syslog and answers SNMP from (an IPv4 or IPv6 literal, in its
  // canonical text), "" when unknown. A syslog line without a hostname (NX-OS's default header) is
  // attributed to its device by this address.
  std::string management_address;
  std::vector<Npu> npus;          // hosts only, in ascending index order
  std::vector<LinkId> uplinks;    // links whose lower end is this node, ascending id
  std::vector<LinkId> downlinks;  // links whose upper end is this node, ascending id
};

struct Link {
  LinkId id = kNoLink;
  NodeId lower = kNoNode;  // host (for NPU links), leaf or spine
  NodeId upper = kNoNode;  // leaf, spine or core: always one tier above lower
  std::string lower_port;  // NPU netdev for host links, switch port otherwise (may be empty)
  std::string upper_port;
  std::optional<std::uint32_t> npu;  // NPU index, for host links only
  double bandwidth_gbps = 0;
  double latency_us = 0;
  DeviceState state = DeviceState::kHealthy;
};

// One NPU port: a host and the NPU's index on it.
struct NpuRef {
  NodeId host = kNoNode;
  std::uint32_t npu = 0;
};

// A point on a path where several equal-cost next links exist (ECMP candidates), at node `at`.
struct EcmpStage {
  NodeId at = kNoNode;
  bool upward = true;
  std::vector<LinkId> candidates;  // ascending id; never empty
};

// The path between two NPU ports for one choice per stage.
struct NpuPath {
  Tier top = Tier::kHost;         // highest tier the path reaches (kHost: same host, no fabric link)
  std::vector<LinkId> links;      // source NPU link first, destination NPU link last
  std::vector<EcmpStage> stages;  // every switch hop, in order; candidates.size() > 1 where ECMP chooses
};

class Topology {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  const Link& link(LinkId id) const { return links_.at(id); }
  std::optional<NodeId> find(std::string_view name) const;
  // The switch whose management address this is (any spelling of the address; nullopt when none has it).
  std::optional<NodeId> find_by_management_address(std::string_view address) const;
  const std::string& name() const { return name_; }

  // Hosts (ascending id) and switches of one tier.
  std::span<const NodeId> hosts() const { return by_tier_[0]; }
  std::span<const NodeId> switches(Tier tier) const { return by_tier_[static_cast<std::size_t>(tier)]; }
  // The highest tier present (kLeaf for a single-SU cluster with no spines).
  Tier top_tier() const;

  // The host's domain id at a tier (see the contract); kHost gives the host's own index in hosts().
  // `host` must be a host id (std::out_of_range otherwise: a programming error).
  std::uint32_t domain(NodeId host, Tier tier) const;
  std::uint32_t domain_count(Tier tier) const { return domain_count_[static_cast<std::size_t>(tier)]; }
  // Hosts of one domain, ascending id.
  std::span<const NodeId> domain_hosts(Tier tier, std::uint32_t domain) const;
  // The lowest tier whose domain contains all given hosts; nullopt for an empty set or hosts in
  // disconnected parts of the fabric. Hosts must be host ids (checked: a switch id gives nullopt).
  std::optional<Tier> lowest_common_tier(std::span<const NodeId> hosts) const;
  std::vector<std::optional<Tier>> lowest_common_tiers(const std::vector<std::vector<NodeId>>& groups) const;
  // Hosts with a path down to this switch, ascending id (a host's own id for a host).
  std::span<const NodeId> hosts_under(NodeId node) const { return hosts_under_.at(node); }

  // NPUs that can be allocated: host and NPU healthy and the NPU's link (if known) not isolated.
  std::uint32_t free_npus(NodeId host) const;
  std::vector<std::uint32_t> free_npu_indices(NodeId host) const;
  const Npu* npu(NpuRef ref) const;

  // Ratio of downlink to uplink capacity of a switch (0 for a switch without uplinks); the tier's figure is
  // the largest over its switches.
  double oversubscription(NodeId node) const;
  double tier_oversubscription(Tier tier) const;

  // The path between two NPU ports through the tree: up from the source leaf to the lowest switch that
  // reaches the destination leaf, then down. choices[i] (modulo the candidate count) picks among stage i's
  // candidates; missing choices pick candidate 0. Isolated links are never candidates. Errors (hsns::Error):
  // unknown host/NPU (not_found), an NPU without a link, or no path (unprocessable, naming "src"/"dst").
  Result<NpuPath> path(NpuRef src, NpuRef dst, std::span<const std::uint32_t> choices = {}) const;

  // State changes (need exclusive access).
  void set_node_state(NodeId node, DeviceState state) { nodes_.at(node).state = state; }
  void set_link_state(LinkId link, DeviceState state) { links_.at(link).state = state; }
  bool set_npu_state(NpuRef ref, DeviceState state);

 private:
  friend class TopologyBuilder;
  // false (and the indices incomplete) when indexing would exceed max_index_work (limits.h).
  bool build_indices(std::uint64_t max_index_work);
  bool npu_is_free(const Node& host, const Npu& npu) const;
  bool reaches_down(NodeId from, NodeId leaf) const;
  bool leads_to(NodeId from, NodeId leaf) const;

  std::string name_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::unordered_map<std::string, NodeId> by_name_;
  std::unordered_map<std::string, NodeId> by_management_address_;  // canonical address text
  std::array<std::vector<NodeId>, kTierCount> by_tier_;
  std::vector<std::array<std::uint32_t, kTierCount>> host_domain_;  // indexed by hosts() position
  std::vector<std::uint32_t> host_pos_;                             // NodeId -> position in hosts()
  std::array<std::uint32_t, kTierCount> domain_count_{};
  std::array<std::vector<std::vector<NodeId>>, kTierCount> domain_hosts_;
  std::vector<std::vector<NodeId>> hosts_under_;
  std::vector<std::vector<NodeId>> leaves_under_;  // sorted, for spine and core switches
};

// Builds a validated Topology. Adds are cheap and check nothing; build() checks everything at once and
// reports every invalid field it finds (field paths use the names given to each add, see `where`).
class TopologyBuilder {
 public:
  TopologyBuilder() = default;
  // Starts from an existing topology: its nodes and links keep their ids.
  static TopologyBuilder from(const Topology& topology);

  void set_name(std::string name) { name_ = std::move(name); }
  // `where` is the field path used in errors about this element (e.g. "switches[2]").
  NodeId add_switch(std::string name, Tier tier, DeviceState state = DeviceState::kHealthy,
                    std::string where = {});
  NodeId add_host(std::string name, DeviceState state = DeviceState::kHealthy, std::string where = {});
  // A switch's management address (checked by build(): an IP literal, unique; stored canonical).
  void set_management_address(NodeId node, std::string address) {
    nodes_.at(node).management_address = std::move(address);
  }
  void add_npu(NodeId host, Npu npu, std::string where = {});
  // lower must be one tier below upper; for a host link, npu names the NPU whose port this is.
  LinkId add_link(Link link, std::string where = {});
  std::optional<NodeId> find(std::string_view name) const;
  std::size_t link_count() const { return links_.size(); }
  Link& link(LinkId id) { return links_.at(id); }
  // The size limits build() enforces (kModelLimits unless set).
  void set_limits(const ModelLimits& limits) { limits_ = limits; }

  Result<Topology> build() &&;

 private:
  std::string name_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::string> node_where_;
  std::vector<std::vector<std::string>> npu_where_;
  std::vector<std::string> link_where_;
  std::unordered_map<std::string, NodeId> by_name_;
  std::vector<FieldError> early_errors_;
  ModelLimits limits_ = kModelLimits;
};

}  // namespace hsns::topology
