#include "topology/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "hsns/checked_math.h"

namespace hsns::topology {
namespace {

std::string numbered(const std::string& prefix, std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return prefix + digits;
}

std::size_t digits(std::uint64_t value) {
  return std::to_string(value).size();
}

// How many parallel links of `speed` carry `capacity`: 0 when speed is 0 (one link of the exact
// capacity); nullopt when the count is not whole. Computed in double and saturated, so an absurd count
// (a tiny oversubscription) comes out as a huge number for the size check instead of overflowing.
std::optional<std::uint64_t> parallel_links(double capacity, double speed) {
  if (speed <= 0) return 0;
  const double count = capacity / speed;
  if (!std::isfinite(count) || count >= 1e18) return std::numeric_limits<std::uint64_t>::max();
  const double whole = std::round(count);
  if (whole < 1 || std::abs(count - whole) > 1e-9 * std::max(1.0, count)) return std::nullopt;
  return static_cast<std::uint64_t>(whole);
}

// Links per lower/upper pair as built: parallel_links' 0 means one link.
std::uint64_t built_links(std::uint64_t count) {
  return count == 0 ? 1 : count;
}

Error not_whole(const char* what, double capacity, double speed) {
  return Error::invalid("fabric_link_gbps", std::string(what) + " capacity " + std::to_string(capacity) +
                                                " Gbit/s is not a whole number of " + std::to_string(speed) +
                                                " Gbit/s links");
}

}  // namespace

Result<ModelSize> clos_size(const ClosParams& p, const ModelLimits& limits) {
  std::vector<FieldError> errors;
  auto positive = [&](const char* field, double value) {
    if (!(value > 0)) errors.push_back({field, "must be > 0"});
  };
  positive("hosts", p.hosts);
  positive("npus_per_host", p.npus_per_host);
  positive("hosts_per_su", p.hosts_per_su);
  positive("superpods", p.superpods);
  positive("host_link_gbps", p.host_link_gbps);
  positive("leaf_oversubscription", p.leaf_oversubscription);
  positive("spine_oversubscription", p.spine_oversubscription);
  if (!(p.fabric_link_gbps >= 0)) errors.push_back({"fabric_link_gbps", "must be >= 0"});
  if (!(p.host_link_latency_us >= 0)) errors.push_back({"host_link_latency_us", "must be >= 0"});
  if (!(p.fabric_link_latency_us >= 0)) errors.push_back({"fabric_link_latency_us", "must be >= 0"});
  for (auto [field, value] : {std::pair{"host_link_gbps", p.host_link_gbps},
                              {"fabric_link_gbps", p.fabric_link_gbps},
                              {"leaf_oversubscription", p.leaf_oversubscription},
                              {"spine_oversubscription", p.spine_oversubscription},
                              {"host_link_latency_us", p.host_link_latency_us},
                              {"fabric_link_latency_us", p.fabric_link_latency_us}}) {
    if (!std::isfinite(value)) errors.push_back({field, "must be a finite number"});
  }
  if (!errors.empty()) return tl::unexpected(Error::invalid(std::move(errors)));

  // Everything below is 64-bit or saturating: the parameters are 32-bit, their products are not.
  const std::uint64_t hosts = p.hosts;
  const std::uint64_t npus_per_host = p.npus_per_host;
  const std::uint64_t sus = (hosts + p.hosts_per_su - 1) / p.hosts_per_su;
  if (p.superpods > sus) {
    return tl::unexpected(
        Error::invalid("superpods", "must be <= the number of scalable units (" + std::to_string(sus) + ")"));
  }
  if (sus > 1 && p.spines_per_plane == 0) {
    return tl::unexpected(Error::invalid("spines_per_plane", "must be > 0 with more than one scalable unit"));
  }
  if (p.superpods > 1 && p.cores == 0) {
    return tl::unexpected(Error::invalid("cores", "must be > 0 with more than one super-pod"));
  }
  const std::uint64_t spines_per_plane = p.spines_per_plane;
  const std::uint64_t cores = p.superpods > 1 ? p.cores : 0;
  const std::uint64_t npus = saturating_mul(hosts, npus_per_host);
  const std::uint64_t leaves = saturating_mul(sus, npus_per_host);
  const std::uint64_t spines = saturating_mul(p.superpods, spines_per_plane);

  // Leaf-spine: the same count for every pair.
  const double leaf_pair = spines_per_plane > 0
                               ? static_cast<double>(p.hosts_per_su) * p.host_link_gbps /
                                     p.leaf_oversubscription / static_cast<double>(spines_per_plane)
                               : 0;
  std::uint64_t leaf_pair_links = 0;
  if (spines_per_plane > 0) {
    auto count = parallel_links(leaf_pair, p.fabric_link_gbps);
    if (!count) return tl::unexpected(not_whole("leaf-spine", leaf_pair, p.fabric_link_gbps));
    leaf_pair_links = built_links(*count);
  }
  const std::uint64_t leaf_spine_links =
      saturating_mul(saturating_mul(leaves, spines_per_plane), leaf_pair_links);

  // Spine-core: a spine's down capacity depends on how many SUs its super-pod has (the first sus %
  // superpods pods have one more), so there are at most two different counts.
  std::uint64_t spine_core_links = 0;
  std::uint64_t spine_core_pair_links = 0;
  if (cores > 0) {
    const std::uint64_t base = sus / p.superpods;
    const std::uint64_t extra = sus % p.superpods;
    for (auto [pod_sus, pods] : {std::pair{base + 1, extra}, std::pair{base, p.superpods - extra}}) {
      if (pods == 0 || pod_sus == 0) continue;
      const double down = static_cast<double>(pod_sus * npus_per_host) * leaf_pair;
      const double pair = down / p.spine_oversubscription / static_cast<double>(cores);
      auto count = parallel_links(pair, p.fabric_link_gbps);
      if (!count) return tl::unexpected(not_whole("spine-core", pair, p.fabric_link_gbps));
      spine_core_pair_links = std::max(spine_core_pair_links, built_links(*count));
      spine_core_links = saturating_add(
          spine_core_links,
          saturating_mul(saturating_mul(saturating_mul(pods, spines_per_plane), cores), built_links(*count)));
    }
  }

  ModelSize size;
  size.hosts = hosts;
  size.npus = npus;
  size.max_npus_per_host = npus_per_host;
  size.switches = saturating_add(saturating_add(leaves, spines), cores);
  size.links = saturating_add(saturating_add(npus, leaf_spine_links), spine_core_links);
  // What TopologyBuilder::build does to index the hosts and leaves under every switch (see limits.h):
  // each leaf its hosts, each spine its pod's leaves and their hosts, each core every spine's.
  const std::uint64_t spine_work = saturating_mul(spines_per_plane, saturating_add(npus, leaves));
  const std::uint64_t core_work =
      saturating_mul(saturating_mul(cores, spines_per_plane), saturating_add(hosts, leaves));
  size.index_work = saturating_add(saturating_add(npus, leaves), saturating_add(spine_work, core_work));

  // Blame each count on the parameter that makes it large.
  SizeFields fields;
  fields.hosts = "hosts";
  fields.npus = "npus_per_host";
  fields.npus_per_host = "npus_per_host";
  fields.switches = leaves >= spines && leaves >= cores ? "hosts_per_su"
                    : spines >= cores                   ? "spines_per_plane"
                                                        : "cores";
  auto fabric_field = [&](std::uint64_t pair_links, double oversubscription, const char* oversub_field,
                          const char* fan_field) -> std::string {
    if (pair_links <= 1) return fan_field;
    return oversubscription < 1 ? oversub_field : "fabric_link_gbps";
  };
  if (npus >= leaf_spine_links && npus >= spine_core_links) {
    fields.links = "hosts";
  } else if (leaf_spine_links >= spine_core_links) {
    fields.links =
        fabric_field(leaf_pair_links, p.leaf_oversubscription, "leaf_oversubscription", "spines_per_plane");
  } else {
    fields.links =
        fabric_field(spine_core_pair_links, p.spine_oversubscription, "spine_oversubscription", "cores");
  }
  fields.index_work = core_work > spine_work ? "cores" : "spines_per_plane";
  if (auto problem = check_model_size(size, fields, limits)) return tl::unexpected(std::move(*problem));
  return size;
}

Result<Topology> generate_clos(const ClosParams& p, const ModelLimits& limits) {
  auto size = clos_size(p, limits);
  if (!size) return tl::unexpected(std::move(size.error()));
  // Within the limits every count below fits 32 bits.
  const auto sus = static_cast<std::uint32_t>((std::uint64_t{p.hosts} + p.hosts_per_su - 1) / p.hosts_per_su);
  const double leaf_down = p.hosts_per_su * p.host_link_gbps;
  const double leaf_pair =
      p.spines_per_plane > 0 ? leaf_down / p.leaf_oversubscription / p.spines_per_plane : 0;
  const std::uint64_t leaf_links = parallel_links(leaf_pair, p.fabric_link_gbps).value_or(0);

  TopologyBuilder b;
  b.set_limits(limits);
  b.set_name(p.name);
  const std::size_t host_width = std::max<std::size_t>(3, digits(p.hosts));
  const std::size_t leaf_width = std::max<std::size_t>(3, digits(std::uint64_t{sus} * p.npus_per_host));
  const std::size_t spine_width =
      std::max<std::size_t>(2, digits(std::uint64_t{p.superpods} * p.spines_per_plane));
  const std::size_t core_width = std::max<std::size_t>(2, digits(p.cores));
  const std::uint32_t base_sus = sus / p.superpods;
  const std::uint32_t extra_sus = sus % p.superpods;

  // Super-pod of each SU: the first extra_sus super-pods take one more SU.
  std::vector<std::uint32_t> su_pod(sus);
  for (std::uint32_t pod = 0, su = 0; pod < p.superpods; ++pod) {
    const std::uint32_t count = base_sus + (pod < extra_sus ? 1 : 0);
    for (std::uint32_t k = 0; k < count; ++k) su_pod[su++] = pod;
  }

  std::vector<NodeId> spines;
  for (std::uint32_t s = 0; s < p.superpods * p.spines_per_plane; ++s) {
    spines.push_back(b.add_switch(numbered("spine", s, spine_width), Tier::kSpine));
  }
  std::vector<NodeId> cores;
  if (p.superpods > 1) {
    for (std::uint32_t c = 0; c < p.cores; ++c)
      cores.push_back(b.add_switch(numbered("core", c, core_width), Tier::kCore));
  }
  std::vector<std::uint32_t> spine_down_ports(spines.size(), 0);
  std::vector<double> spine_down_capacity(spines.size(), 0);

  auto add_pair = [&](NodeId lower, NodeId upper, double capacity, std::uint64_t count,
                      std::string lower_port, std::uint32_t& upper_port_counter,
                      const std::string& upper_prefix) {
    const std::uint64_t n = built_links(count);
    for (std::uint64_t k = 0; k < n; ++k) {
      Link link;
      link.lower = lower;
      link.upper = upper;
      link.lower_port = lower_port + std::to_string(k);
      link.upper_port = upper_prefix + std::to_string(++upper_port_counter);
      link.bandwidth_gbps = count == 0 ? capacity : p.fabric_link_gbps;
      link.latency_us = p.fabric_link_latency_us;
      b.add_link(std::move(link));
    }
  };

  for (std::uint32_t su = 0; su < sus; ++su) {
    std::vector<NodeId> leaves;
    for (std::uint32_t rail = 0; rail < p.npus_per_host; ++rail) {
      leaves.push_back(b.add_switch(numbered("leaf", std::uint64_t{su} * p.npus_per_host + rail, leaf_width),
                                    Tier::kLeaf));
    }
    const std::uint32_t first_host = su * p.hosts_per_su;
    const auto last_host = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(p.hosts, std::uint64_t{first_host} + p.hosts_per_su));
    for (std::uint32_t h = first_host; h < last_host; ++h) {
      const NodeId host = b.add_host(numbered("host", h + 1, host_width));
      for (std::uint32_t rail = 0; rail < p.npus_per_host; ++rail) {
        b.add_npu(host, Npu{rail, "eth" + std::to_string(rail), DeviceState::kHealthy, kNoLink});
        Link link;
        link.lower = host;
        link.upper = leaves[rail];
        link.lower_port = "eth" + std::to_string(rail);
        link.upper_port = "Eth1/" + std::to_string(h - first_host + 1);
        link.npu = rail;
        link.bandwidth_gbps = p.host_link_gbps;
        link.latency_us = p.host_link_latency_us;
        b.add_link(std::move(link));
      }
    }
    const std::uint32_t pod = su_pod[su];
    for (NodeId leaf : leaves) {
      for (std::uint32_t k = 0; k < p.spines_per_plane; ++k) {
        const std::uint32_t s = pod * p.spines_per_plane + k;
        add_pair(leaf, spines[s], leaf_pair, leaf_links, "Eth2/" + std::to_string(k + 1) + ".",
                 spine_down_ports[s], "Eth1/");
        spine_down_capacity[s] += leaf_pair;
      }
    }
  }
  if (!cores.empty()) {
    std::vector<std::uint32_t> core_ports(cores.size(), 0);
    for (std::size_t s = 0; s < spines.size(); ++s) {
      const double pair =
          spine_down_capacity[s] / p.spine_oversubscription / static_cast<double>(cores.size());
      auto count = parallel_links(pair, p.fabric_link_gbps);
      if (!count) return tl::unexpected(not_whole("spine-core", pair, p.fabric_link_gbps));
      for (std::size_t c = 0; c < cores.size(); ++c) {
        add_pair(spines[s], cores[c], pair, *count, "Eth2/" + std::to_string(c + 1) + ".", core_ports[c],
                 "Eth1/");
      }
    }
  }
  return std::move(b).build();
}

}  // namespace hsns::topology
