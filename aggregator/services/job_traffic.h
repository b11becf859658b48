// The traffic a job's ranks exchanged, from the flow records the hosts reported (store/telemetry_store.h):
// the addresses each rank's NPU sends and receives on, and the bytes per (source rank, destination rank).
// Used by GET /api/v1/flows?job= (every address of the job) and by the job diagnosis (per pair volumes of
// the rank × rank matrix, services/diagnosis_service.h).
//
// Contract:
// - rank_addresses(network, job): per rank of the job, the address it was scheduled with (when set) and the
//   address of every port the network store holds for its (host, NPU). Store errors pass through.
// - pair_traffic(directions, addresses, pairs): for every (src rank, dst rank) in `pairs`, the flow
//   directions whose source is an address of the source rank and whose destination is an address of the
//   destination rank: one direction of the wire, not both. A direction key (family, src, dst, UDP source
//   port, destination QP) that several hosts reported (the sender's egress and the receiver's ingress
//   probe, a mirror collector) is the same packets seen twice: it counts once, with the report of the most
//   bytes. A pair no direction matched is absent from the answer ("no flow data", not zero). Pure.
// Thread-safe as the store is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/job_store.h"
#include "store/network_store.h"
#include "store/telemetry_store.h"

namespace hsns::services {

using RankAddresses = std::map<std::uint32_t, std::set<std::string>>;  // rank -> addresses

store::StoreResult<RankAddresses> rank_addresses(store::NetworkStore& network, const store::JobRecord& job);

struct PairTraffic {
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  std::size_t flows = 0;  // direction keys summed
};

using RankPair = std::pair<std::uint32_t, std::uint32_t>;  // (source rank, destination rank)

std::map<RankPair, PairTraffic> pair_traffic(const std::vector<store::FlowDirectionTotals>& directions,
                                             const RankAddresses& addresses, const std::set<RankPair>& pairs);

}  // namespace hsns::services
