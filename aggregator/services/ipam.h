// IP address management (IPAM): the rules that decide which addresses a subnet hands out and which
// address a new port gets, over storage primitives that any store backend provides.
//
// Contract:
// - Backend-neutral: no SQL and no I/O here. What needs stored state goes through AddressBook, which a
//   backend implements over one atomic operation of its own (SqliteNetworkStore: the create_port write
//   transaction, store/sqlite_address_book.h). A second backend implements AddressBook and calls these
//   functions; it never re-implements a rule.
// - Subnet rules (subnet_pools, updated_pools): the cidr passes check_subnet_prefix() (hsns/ip.h:
//   special-purpose ranges refused; invalid "cidr"), a gateway passes check_host_address() (invalid
//   "gateway_ip"). No pools given: default_pools() (the usable host range split around the gateway);
//   pools given: validate_pools() (its first error, invalid on the field it names). A subnet left
//   without any address for ports is invalid "allocation_pools".
// - Pool rules (validate_pools, default_pools) need no stored state: the request parser
//   (api/network/requests.h) runs validate_pools too, to list every finding in its 400 answer.
// - Port address (assign_address), fixed: a usable host address of the subnet (check_host_address(),
//   outside the pools allowed) and not the gateway (invalid "ip_address"), free (conflict "ip_address"
//   naming the port holding it). Allocated: the lowest free address of the first pool that has one.
//   A candidate that check_host_address() refuses (only a subnet stored before the address rules, in a
//   range they now refuse) is conflict "subnet_id"; every pool full is conflict "subnet_id" saying
//   "allocation pools of subnet <name> (<cidr>) are exhausted: N of M addresses in use".
// - Atomicity: an address is taken only through AddressBook::claim, an atomic "store the new port with
//   this address if no port of the subnet holds it". A claim that loses to a concurrent one moves the
//   allocation on to the next free address (a fixed address: conflict), so no two ports ever get one
//   address, whether the backend serialises its writers (SQLite) or only enforces the uniqueness.
// - Cost: allocation reads the held addresses of a pool in ascending order up to the first gap, so it
//   depends on the number of ports, never on the pool size (IPv6 /64 pools are fine).
// - Thread-safe: plain functions; an AddressBook is used by the thread running its operation.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/ip.h"
#include "model/network.h"
#include "store/network_store.h"

namespace hsns::ipam {

using store::StoreResult;

// The port holding an address.
struct AddressHolder {
  std::string port_id;
  std::string port_name;  // may be empty
};

// Storage primitives for the addresses of one subnet, bound to one atomic operation that creates one
// port. Implemented by each store backend.
class AddressBook {
 public:
  virtual ~AddressBook() = default;
  // Calls visit with the addresses held by ports of the subnet inside range, in ascending order, until
  // visit returns false or none is left.
  virtual StoreResult<void> scan_held(const IpRange& range,
                                      const std::function<bool(const IpAddress&)>& visit) = 0;
  // The port holding address in the subnet, nullopt when it is free.
  virtual StoreResult<std::optional<AddressHolder>> holder(const IpAddress& address) = 0;
  // Atomically stores the new port with this address unless a port of the subnet holds it (a uniqueness
  // constraint on (subnet, address)): true when stored, false when held.
  virtual StoreResult<bool> claim(const IpAddress& address) = 0;
};

// Pools: both bounds must be usable host addresses of the CIDR (check_host_address: inside, not the
// network/broadcast/Subnet-Router anycast address), first <= last, pools must not overlap each other nor
// contain the gateway; an empty list is valid (the caller substitutes the default). Field names are
// reported as "allocation_pools[i].start" etc. Returns the findings (empty when valid).
std::vector<FieldError> validate_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway,
                                       const std::vector<IpRange>& pools);

// The pools a subnet gets when none are given: the usable host range split around the gateway.
std::vector<IpRange> default_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway);

// "subnet <name> (<cidr>)": how IPAM and the stores name a subnet in messages.
std::string describe(const network::Subnet& subnet);

// The cidr and gateway rules for a new subnet, then its pools: the given ones once valid, else the
// defaults.
StoreResult<std::vector<IpRange>> subnet_pools(const network::SubnetSpec& spec);

// The pools of a stored subnet after an update asking for `requested` ([]: the defaults again).
// Addresses of existing ports are not checked against them: ports keep their addresses.
StoreResult<std::vector<IpRange>> updated_pools(const network::Subnet& subnet,
                                                const std::vector<IpRange>& requested);

// Gives the new port of `subnet` its address through book: `fixed` when given and allowed, else the
// lowest free address of the first pool that has one. On success the port is stored (book.claim).
StoreResult<IpAddress> assign_address(const network::Subnet& subnet, const std::optional<IpAddress>& fixed,
                                      AddressBook& book);

}  // namespace hsns::ipam
