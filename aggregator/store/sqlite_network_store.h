// NetworkStore on the embedded SQLite database (see store/network_store.h for the contract).
//
// Contract specific to this implementation:
// - Ownership: the store borrows the Database, which must outlive it.
// - Threads: every method may be called from any thread concurrently. Each write runs in one
//   BEGIN IMMEDIATE transaction on the writer connection under the Database's writer mutex
//   (sql::write, store/sql_helpers.h), so writes (and address allocation in particular) are serialised;
//   reads run in one read transaction on the pooled read-only connections (sql::read) concurrently with
//   writes, each in one consistent snapshot.
// - Errors: SQLite failures (SQLITE_FULL, SQLITE_BUSY after the busy timeout, I/O errors, a closed
//   database) are StoreError::unavailable carrying SQLite's message; the transaction is rolled back, so
//   nothing partial is stored. A rejected request (any error) leaves the stored state unchanged.
// - put_host: the returned Host is the stored one. A first registration returns generation == 1,
//   created_at == updated_at and created == true; a registration that changes the inventory bumps the
//   generation (so it is >= 2 afterwards) and sets updated_at; an unchanged inventory changes nothing.
//   `created` is decided by the existence check inside the BEGIN IMMEDIATE transaction, so of any number
//   of concurrent registrations of a new host exactly one reports created (the API's one 201).
//   Duplicate NPU indexes are invalid "npus". Host.updated_at is the time of the last inventory change;
//   port changes bump only the generation.
// - create_port / delete_port bump the host's generation; update_subnet bumps the generation of every
//   host with a port in the subnet when the subnet is renamed (the name is part of the desired state).
// - Address rules are IPAM's (services/ipam.h), this store only stores: create_subnet and update_subnet
//   take their pools from ipam::subnet_pools / ipam::updated_pools (cidr, gateway_ip and pool rules), and
//   create_port, after its own checks in this order: subnet exists (not_found), host registered (invalid
//   "host"), host has the NPU (invalid "npu"), no other port for (host, npu, subnet) (conflict "npu"),
//   hands the address to ipam::assign_address with a SqlitePortAddressBook (store/sqlite_address_book.h)
//   in the same transaction: the fixed IP rules or the allocation of the lowest free address, and the
//   insert of the port as the claim.
// - port_placements and host_views read in one read transaction each; host_views reads every table once
//   (hosts, NPUs, ports, subnets with their pools), not once per host.
// - update_subnet with allocation_pools == [] restores the default pools; existing ports keep their
//   addresses even when the new pools no longer contain them.
// - Lists are ordered: hosts by name; subnets by tenant, name; ports by host, npu, subnet name, id.
//   host_view: ports by npu, subnet name; subnets by tenant, name.
// - Timestamps are RFC 3339 UTC with seconds ("2026-11-29T16:47:53Z") from the clock given at
//   construction (the system clock by default).
#pragma once

#include <chrono>
#include <functional>

#include "store/database.h"
#include "store/network_store.h"

namespace hsns::store {

class SqliteNetworkStore : public NetworkStore {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  explicit SqliteNetworkStore(Database& db, Clock clock = {});

  StoreResult<PutHostResult> put_host(const network::HostRegistration& reg) override;
  StoreResult<network::Host> get_host(const std::string& name) override;
  StoreResult<std::vector<network::Host>> list_hosts() override;

  StoreResult<network::Subnet> create_subnet(const network::SubnetSpec& spec) override;
  StoreResult<network::Subnet> get_subnet(const std::string& id) override;
  StoreResult<std::vector<network::Subnet>> list_subnets(const network::SubnetFilter& filter) override;
  StoreResult<network::Subnet> update_subnet(const std::string& id, const network::SubnetUpdate& u) override;
  StoreResult<void> delete_subnet(const std::string& id) override;

  StoreResult<network::Port> create_port(const network::PortSpec& spec) override;
  StoreResult<network::Port> get_port(const std::string& id) override;
  StoreResult<std::vector<network::Port>> list_ports(const network::PortFilter& filter) override;
  StoreResult<void> delete_port(const std::string& id) override;
  StoreResult<std::vector<std::optional<PortPlacement>>> port_placements(
      const std::vector<std::string>& ids) override;

  StoreResult<network::HostView> host_view(const std::string& host) override;
  StoreResult<std::vector<network::HostView>> host_views() override;
  const RevisionSource* revisions() const override { return &db_; }

 private:
  std::string now() const;

  Database& db_;
  Clock clock_;
};

}  // namespace hsns::store
