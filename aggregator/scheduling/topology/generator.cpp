#include "scheduling/topology/generator.h"

#include <algorithm>
#include <cmath>

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

// How many parallel links of `speed` carry `capacity`; 0 when speed is 0 (one link of exact capacity);
// nullopt when the count is not whole.
std::optional<std::uint32_t> parallel_links(double capacity, double speed) {
  if (speed <= 0) return 0;
  const double count = capacity / speed;
  const double whole = std::round(count);
  if (whole < 1 || std::abs(count - whole) > 1e-9 * std::max(1.0, count)) return std::nullopt;
  return static_cast<std::uint32_t>(whole);
}

}  // namespace

tl::expected<Topology, Problem> generate_clos(const ClosParams& p) {
  std::vector<InvalidParam> errors;
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
  if (p.fabric_link_gbps < 0) errors.push_back({"fabric_link_gbps", "must be >= 0"});
  if (p.host_link_latency_us < 0) errors.push_back({"host_link_latency_us", "must be >= 0"});
  if (p.fabric_link_latency_us < 0) errors.push_back({"fabric_link_latency_us", "must be >= 0"});
  if (p.hosts > 1'000'000) errors.push_back({"hosts", "must be <= 1000000"});
  if (p.npus_per_host > 64) errors.push_back({"npus_per_host", "must be <= 64"});
  if (!errors.empty()) return tl::unexpected(Problem::invalid(std::move(errors)));
  const std::uint32_t sus = (p.hosts + p.hosts_per_su - 1) / p.hosts_per_su;
  if (p.superpods > sus) {
    return tl::unexpected(Problem::invalid(
        "superpods", "must be <= the number of scalable units (" + std::to_string(sus) + ")"));
  }
  if (sus > 1 && p.spines_per_plane == 0) {
    return tl::unexpected(
        Problem::invalid("spines_per_plane", "must be > 0 with more than one scalable unit"));
  }
  if (p.superpods > 1 && p.cores == 0) {
    return tl::unexpected(Problem::invalid("cores", "must be > 0 with more than one super-pod"));
  }
  const double leaf_down = p.hosts_per_su * p.host_link_gbps;
  const double leaf_pair =
      p.spines_per_plane > 0 ? leaf_down / p.leaf_oversubscription / p.spines_per_plane : 0;
  auto leaf_links = parallel_links(leaf_pair, p.fabric_link_gbps);
  if (p.spines_per_plane > 0 && !leaf_links) {
    return tl::unexpected(
        Problem::invalid("fabric_link_gbps", "leaf-spine capacity " + std::to_string(leaf_pair) +
                                                 " Gbit/s is not a whole number of " +
                                                 std::to_string(p.fabric_link_gbps) + " Gbit/s links"));
  }

  TopologyBuilder b;
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

  auto add_pair = [&](NodeId lower, NodeId upper, double capacity, std::uint32_t count,
                      std::string lower_port, std::uint32_t& upper_port_counter,
                      const std::string& upper_prefix) {
    const std::uint32_t n = count == 0 ? 1 : count;
    for (std::uint32_t k = 0; k < n; ++k) {
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
    const std::uint32_t last_host = std::min(p.hosts, first_host + p.hosts_per_su);
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
        add_pair(leaf, spines[s], leaf_pair, *leaf_links, "Eth2/" + std::to_string(k + 1) + ".",
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
      if (!count) {
        return tl::unexpected(
            Problem::invalid("fabric_link_gbps", "spine-core capacity " + std::to_string(pair) +
                                                     " Gbit/s is not a whole number of " +
                                                     std::to_string(p.fabric_link_gbps) + " Gbit/s links"));
      }
      for (std::size_t c = 0; c < cores.size(); ++c) {
        add_pair(spines[s], cores[c], pair, *count, "Eth2/" + std::to_string(c + 1) + ".", core_ports[c],
                 "Eth1/");
      }
    }
  }
  return std::move(b).build();
}

}  // namespace hsns::topology
