#include "services/ipam.h"

#include <cstdint>
#include <utility>

#include "hsns/checked_math.h"

namespace hsns::ipam {

using network::Subnet;
using store::StoreError;

namespace {

// Pools for a subnet: the defaults when none are given, otherwise the given ones once valid.
StoreResult<std::vector<IpRange>> checked_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway,
                                                const std::vector<IpRange>& requested) {
  std::vector<IpRange> pools;
  if (requested.empty()) {
    pools = default_pools(cidr, gateway);
  } else {
    const auto errors = validate_pools(cidr, gateway, requested);
    if (!errors.empty())
      return tl::unexpected(StoreError::invalid(errors.front().field, errors.front().reason));
    pools = requested;
  }
  if (pools.empty()) {
    return tl::unexpected(StoreError::invalid(
        "allocation_pools",
        "cidr " + cidr.to_string() + " has no address left for ports besides the gateway"));
  }
  return pools;
}

// The lowest address of range that no port holds (nullopt: every one is held). Counts in in_use the
// held addresses it passes on the way.
StoreResult<std::optional<IpAddress>> first_free(AddressBook& book, const IpRange& range,
                                                 std::uint64_t& in_use) {
  std::optional<IpAddress> candidate = range.first;
  auto walked = book.scan_held(range, [&](const IpAddress& held) {
    if (held != *candidate) return false;  // a gap: candidate is free
    ++in_use;
    candidate = candidate->next();
    if (!candidate || *candidate > range.last) {
      candidate.reset();
      return false;
    }
    return true;
  });
  if (!walked) return tl::unexpected(std::move(walked).error());
  return candidate;
}

StoreResult<IpAddress> allocate(const Subnet& s, AddressBook& book) {
  std::uint64_t in_use = 0;
  std::uint64_t total = 0;
  for (const auto& pool : s.allocation_pools) {
    total = saturating_add(total, pool.size());
    std::optional<IpAddress> from = pool.first;
    while (from) {
      auto candidate = first_free(book, IpRange{*from, pool.last}, in_use);
      if (!candidate) return tl::unexpected(std::move(candidate).error());
      if (!*candidate) break;  // this pool is full
      const IpAddress address = **candidate;
      // Stored pools hold only usable addresses (validate_pools), except in a subnet stored before the
      // address rules in a range they now refuse: no port gets such an address.
      if (auto why = check_host_address(s.cidr, address)) {
        return tl::unexpected(StoreError::conflict("subnet_id", describe(s) + " cannot hold ports: " + *why));
      }
      auto claimed = book.claim(address);
      if (!claimed) return tl::unexpected(std::move(claimed).error());
      if (*claimed) return address;
      // A concurrent operation took it between the scan and the claim: go on after it.
      ++in_use;
      from = address.next();
      if (from && *from > pool.last) from.reset();
    }
  }
  return tl::unexpected(StoreError::conflict(
      "subnet_id", "allocation pools of " + describe(s) + " are exhausted: " + std::to_string(in_use) +
                       " of " + std::to_string(total) + " addresses in use"));
}

StoreError address_in_use(const Subnet& s, const IpAddress& ip, const std::optional<AddressHolder>& holder) {
  std::string by;
  if (holder) {
    by = " by port " + holder->port_id +
         (holder->port_name.empty() ? std::string() : " (" + holder->port_name + ")");
  }
  return StoreError::conflict(
      "ip_address", "ip_address " + ip.to_string() + " is already in use" + by + " in " + describe(s));
}

StoreResult<IpAddress> take_fixed(const Subnet& s, const IpAddress& ip, AddressBook& book) {
  // The same rule as the pools and the allocator: a usable host address of the subnet.
  if (auto why = check_host_address(s.cidr, ip)) {
    return tl::unexpected(
        StoreError::invalid("ip_address", "ip_address " + *why + " (subnet " + s.name + ")"));
  }
  if (s.gateway && *s.gateway == ip) {
    return tl::unexpected(StoreError::invalid(
        "ip_address", "ip_address " + ip.to_string() + " is the gateway of " + describe(s)));
  }
  auto holder = book.holder(ip);
  if (!holder) return tl::unexpected(std::move(holder).error());
  if (*holder) return tl::unexpected(address_in_use(s, ip, *holder));
  auto claimed = book.claim(ip);
  if (!claimed) return tl::unexpected(std::move(claimed).error());
  if (*claimed) return ip;
  // Taken by a concurrent operation since the look-up: name the winner when it can be read.
  holder = book.holder(ip);
  return tl::unexpected(address_in_use(s, ip, holder ? *holder : std::optional<AddressHolder>()));
}

}  // namespace

std::vector<FieldError> validate_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway,
                                       const std::vector<IpRange>& pools) {
  std::vector<FieldError> errors;
  // Both bounds must be usable host addresses. Then so is every address between them: the addresses of
  // an accepted subnet that a host may not use are only its first and (IPv4) last one.
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const std::string path = "allocation_pools[" + std::to_string(i) + "]";
    const auto& p = pools[i];
    if (auto why = check_host_address(cidr, p.first)) {
      errors.push_back({path + ".start", std::move(*why)});
      continue;
    }
    if (auto why = check_host_address(cidr, p.last)) {
      errors.push_back({path + ".end", std::move(*why)});
      continue;
    }
    if (p.last < p.first) {
      errors.push_back({path + ".end", "must not be lower than start"});
      continue;
    }
    if (gateway && p.contains(*gateway)) {
      errors.push_back({path, "contains the gateway " + gateway->to_string()});
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (pools[j].overlaps(p)) {
        errors.push_back({path, "overlaps allocation_pools[" + std::to_string(j) + "]"});
        break;
      }
    }
  }
  return errors;
}

std::vector<IpRange> default_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway) {
  auto range = default_host_range(cidr);
  if (!range) return {};
  if (!gateway || !range->contains(*gateway)) return {*range};
  std::vector<IpRange> pools;
  if (*gateway > range->first) pools.push_back({range->first, *gateway->prev()});
  if (*gateway < range->last) pools.push_back({*gateway->next(), range->last});
  return pools;
}

std::string describe(const Subnet& subnet) {
  return "subnet " + subnet.name + " (" + subnet.cidr.to_string() + ")";
}

StoreResult<std::vector<IpRange>> subnet_pools(const network::SubnetSpec& spec) {
  // The request layer checks these too; IPAM keeps its rules for every caller.
  if (auto why = check_subnet_prefix(spec.cidr)) return tl::unexpected(StoreError::invalid("cidr", *why));
  if (spec.gateway) {
    if (auto why = check_host_address(spec.cidr, *spec.gateway)) {
      return tl::unexpected(StoreError::invalid("gateway_ip", "gateway_ip " + *why));
    }
  }
  return checked_pools(spec.cidr, spec.gateway, spec.allocation_pools);
}

StoreResult<std::vector<IpRange>> updated_pools(const Subnet& subnet, const std::vector<IpRange>& requested) {
  return checked_pools(subnet.cidr, subnet.gateway, requested);
}

StoreResult<IpAddress> assign_address(const Subnet& subnet, const std::optional<IpAddress>& fixed,
                                      AddressBook& book) {
  return fixed ? take_fixed(subnet, *fixed, book) : allocate(subnet, book);
}

}  // namespace hsns::ipam
