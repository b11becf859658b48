// A small abstract 2-tier Clos (leaf/spine) fabric description for route planning and simulation.
//
// Contract:
// - `leaves` leaves, `spines` spines; every leaf has `uplinks_per_leaf` uplinks (a multiple of
//   `spines`): uplink u goes to spine u % spines, so each spine has uplinks_per_leaf / spines parallel
//   links to every leaf. Each leaf has `ports_per_leaf` NPU-facing ports of `port_gbps`.
// - oversubscription() = ports_per_leaf * port_gbps / (uplinks_per_leaf * uplink_gbps).
// - Forwarding: a flow between two leaves leaves its source leaf on uplink leaf_hash % uplinks_per_leaf
//   and, when a spine has several parallel links to the destination leaf, takes link
//   spine_hash % parallel. Flows inside one leaf never touch an uplink.
// - make_clos() derives the uplink count from a target oversubscription (uplinks at port speed) and
//   fails when it is not a whole multiple of the spine count. validate() explains the first bad field.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>

#include "scheduling/cost/ecmp_hash.h"

namespace hsns::cost {

struct ClosFabric {
  std::uint32_t leaves = 0;
  std::uint32_t spines = 0;
  std::uint32_t uplinks_per_leaf = 0;
  double uplink_gbps = 0;
  std::uint32_t ports_per_leaf = 0;
  double port_gbps = 0;
  EcmpHashModel leaf_hash;
  EcmpHashModel spine_hash;

  std::uint32_t parallel_links() const { return uplinks_per_leaf / spines; }
  double oversubscription() const {
    return ports_per_leaf * port_gbps / (static_cast<double>(uplinks_per_leaf) * uplink_gbps);
  }
};

tl::expected<void, std::string> validate(const ClosFabric& fabric);

tl::expected<ClosFabric, std::string> make_clos(std::uint32_t leaves, std::uint32_t spines,
                                                std::uint32_t ports_per_leaf, double port_gbps,
                                                double oversubscription, const EcmpHashModel& hash);

// The fabric links one inter-leaf flow crosses.
struct FabricHop {
  std::uint32_t uplink = 0;    // index among the source leaf's uplinks
  std::uint32_t spine = 0;     // uplink % spines
  std::uint32_t downlink = 0;  // index among the spine's parallel links to the destination leaf
};

// Path of a packet with this header between two different leaves (fabric assumed valid).
FabricHop route_inter_leaf(const ClosFabric& fabric, const FiveTuple& tuple);

// Global indices for loads and the simulator: uplink (leaf, u) -> leaf * uplinks_per_leaf + u;
// downlink (spine, dst leaf, j) -> (dst_leaf * spines + spine) * parallel + j. Both lie in
// [0, leaves * uplinks_per_leaf).
std::uint32_t uplink_index(const ClosFabric& f, std::uint32_t leaf, const FabricHop& hop);
std::uint32_t downlink_index(const ClosFabric& f, std::uint32_t dst_leaf, const FabricHop& hop);

}  // namespace hsns::cost
