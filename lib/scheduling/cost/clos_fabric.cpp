#include "scheduling/cost/clos_fabric.h"

#include <cmath>

namespace hsns::cost {

tl::expected<void, std::string> validate(const ClosFabric& f) {
  if (f.leaves == 0) return tl::unexpected(std::string("fabric.leaves must be >= 1"));
  if (f.spines == 0) return tl::unexpected(std::string("fabric.spines must be >= 1"));
  if (f.uplinks_per_leaf == 0 || f.uplinks_per_leaf % f.spines != 0) {
    return tl::unexpected(
        std::string("fabric.uplinks_per_leaf must be a positive multiple of fabric.spines"));
  }
  if (f.ports_per_leaf == 0) return tl::unexpected(std::string("fabric.ports_per_leaf must be >= 1"));
  if (!(f.uplink_gbps > 0) || !std::isfinite(f.uplink_gbps)) {
    return tl::unexpected(std::string("fabric.uplink_gbps must be a finite number > 0"));
  }
  if (!(f.port_gbps > 0) || !std::isfinite(f.port_gbps)) {
    return tl::unexpected(std::string("fabric.port_gbps must be a finite number > 0"));
  }
  if (auto ok = validate(f.leaf_hash); !ok) return tl::unexpected("fabric.leaf_hash: " + ok.error());
  if (auto ok = validate(f.spine_hash); !ok) return tl::unexpected("fabric.spine_hash: " + ok.error());
  return {};
}

tl::expected<ClosFabric, std::string> make_clos(std::uint32_t leaves, std::uint32_t spines,
                                                std::uint32_t ports_per_leaf, double port_gbps,
                                                double oversubscription, const EcmpHashModel& hash) {
  if (!(oversubscription >= 1) || !std::isfinite(oversubscription)) {
    return tl::unexpected(std::string("oversubscription must be a finite number >= 1"));
  }
  const double up = ports_per_leaf / oversubscription;
  const auto uplinks = static_cast<std::uint32_t>(std::llround(up));
  if (std::fabs(up - uplinks) > 1e-9 || uplinks == 0) {
    return tl::unexpected("ports_per_leaf / oversubscription = " + std::to_string(up) +
                          " is not a whole number of uplinks");
  }
  ClosFabric f{leaves, spines, uplinks, port_gbps, ports_per_leaf, port_gbps, hash, hash};
  f.spine_hash.seed = hash.seed ^ 0x5A5A5A5Au;  // spines hash with another seed than leaves
  if (auto ok = validate(f); !ok) return tl::unexpected(ok.error());
  return f;
}

FabricHop route_inter_leaf(const ClosFabric& f, const FiveTuple& tuple) {
  FabricHop hop;
  hop.uplink = ecmp_hash(f.leaf_hash, tuple) % f.uplinks_per_leaf;
  hop.spine = hop.uplink % f.spines;
  const std::uint32_t parallel = f.parallel_links();
  hop.downlink = parallel > 1 ? ecmp_hash(f.spine_hash, tuple) % parallel : 0;
  return hop;
}

std::uint32_t uplink_index(const ClosFabric& f, std::uint32_t leaf, const FabricHop& hop) {
  return leaf * f.uplinks_per_leaf + hop.uplink;
}

std::uint32_t downlink_index(const ClosFabric& f, std::uint32_t dst_leaf, const FabricHop& hop) {
  return (dst_leaf * f.spines + hop.spine) * f.parallel_links() + hop.downlink;
}

}  // namespace hsns::cost
