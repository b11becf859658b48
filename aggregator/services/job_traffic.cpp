#include "services/job_traffic.h"

#include <tuple>
#include <unordered_map>

namespace hsns::services {

store::StoreResult<RankAddresses> rank_addresses(store::NetworkStore& network, const store::JobRecord& job) {
  RankAddresses out;
  for (const auto& host : job.hosts()) {
    auto ports = network.list_ports(network::PortFilter{host, std::nullopt, std::nullopt});
    if (!ports) return tl::unexpected(ports.error());
    for (const auto& rank : job.ranks) {
      if (rank.host != host) continue;
      auto& addresses = out[rank.rank];
      if (!rank.ip.empty()) addresses.insert(rank.ip);
      for (const auto& p : *ports) {
        if (static_cast<std::uint32_t>(p.npu) == rank.npu) addresses.insert(p.ip_address.to_string());
      }
    }
  }
  return out;
}

std::map<RankPair, PairTraffic> pair_traffic(const std::vector<store::FlowDirectionTotals>& directions,
                                             const RankAddresses& addresses,
                                             const std::set<RankPair>& pairs) {
  // address -> ranks holding it (normally one; two only if the network store holds one address twice).
  std::unordered_map<std::string, std::vector<std::uint32_t>> owners;
  for (const auto& [rank, set] : addresses) {
    for (const auto& a : set) owners[a].push_back(rank);
  }
  // One report per direction key: the one of the most bytes (see the contract).
  using Key = std::tuple<int, const std::string&, const std::string&, std::uint32_t, std::uint32_t>;
  std::map<Key, const store::FlowDirectionTotals*> keys;
  for (const auto& d : directions) {
    if (!owners.contains(d.src) || !owners.contains(d.dst)) continue;
    auto [it, added] = keys.try_emplace(Key{d.family, d.src, d.dst, d.sport, d.dest_qp}, &d);
    if (!added && d.bytes > it->second->bytes) it->second = &d;
  }
  std::map<RankPair, PairTraffic> out;
  for (const auto& [key, d] : keys) {
    for (const auto s : owners.at(d->src)) {
      for (const auto t : owners.at(d->dst)) {
        if (!pairs.contains({s, t})) continue;
        auto& p = out[{s, t}];
        p.bytes += d->bytes;
        p.packets += d->packets;
        ++p.flows;
      }
    }
  }
  return out;
}

}  // namespace hsns::services
