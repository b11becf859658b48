// Storage interface for network management (hosts, subnets, ports, IP allocation).
//
// Contract:
// - Every mutating call is atomic: it either applies completely or changes nothing, and concurrent
//   calls from any number of threads behave as if serialised (no two ports ever get one address).
// - Stateless validation (syntax, CIDR host bits, pools inside the CIDR) is done by the caller
//   (aggregator/api/network/requests.h) before the call; the store checks what needs stored state:
//   names unique within a tenant, subnets not overlapping within a tenant, a fixed IP inside the subnet
//   and its pools-or-CIDR and free, the host and NPU existing, one port per (host, NPU, subnet), a
//   subnet without ports before delete, pool exhaustion, pool updates consistent with the gateway.
// - Errors are values: StoreError (= hsns::Error) says which kind (mapped to HTTP 404/409/422/503 by the
//   API) and, where one field is at fault, its name as the API calls it (field()).
// - Host generation: put_host, create_port and delete_port bump the generation of the affected host in
//   the same transaction, so a daemon polling its desired state sees every change.
// - Decisions that depend on stored state are made inside the transaction that acts on them, never by
//   a read before the call: put_host says whether it created the host (the API's 201 vs 200), and
//   port_placements reads ports and their subnets in one snapshot, host_views every host's view in one.
// - Address rules (hsns/ip.h): create_subnet refuses a cidr check_subnet_prefix() refuses and a gateway
//   check_host_address() refuses (invalid "cidr"/"gateway_ip"); a fixed IP and every allocated address
//   pass check_host_address() for the subnet (fixed: invalid "ip_address"; allocation from a subnet
//   stored before these rules, in a range they refuse: conflict "subnet_id").
// - revisions(): the backend's revision counters (store/revision.h), for caches keyed by them; null when
//   the backend keeps none (callers then render every answer).
// - Implementations: SqliteNetworkStore (embedded default), made by store/factory.h. The address rules
//   are not the implementation's: every backend delegates them to the IPAM service (services/ipam.h) and
//   implements only its storage primitives (ipam::AddressBook), so a PostgreSQL one follows the same
//   contract without re-implementing them.
#pragma once

#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/error.h"
#include "model/network.h"
#include "store/revision.h"

namespace hsns::store {

// The store's error is the library-wide hsns::Error (kinds not_found, conflict, invalid, unavailable are
// the ones stores produce); the alias keeps the store's spelling.
using StoreError = hsns::Error;

template <typename T>
using StoreResult = tl::expected<T, StoreError>;

// What put_host did: `created` is true for exactly one call per host name, the one whose transaction
// inserted it (any number of concurrent identical registrations see one creation).
struct PutHostResult {
  network::Host host;
  bool created = false;
};

// A port with its subnet, as of one snapshot.
struct PortPlacement {
  network::Port port;
  network::Subnet subnet;
};

class NetworkStore {
 public:
  virtual ~NetworkStore() = default;

  // Hosts: create or replace the NPU inventory of a host (idempotent for the same inventory: the
  // generation is bumped only when something changed).
  virtual StoreResult<PutHostResult> put_host(const network::HostRegistration& reg) = 0;
  virtual StoreResult<network::Host> get_host(const std::string& name) = 0;
  virtual StoreResult<std::vector<network::Host>> list_hosts() = 0;

  virtual StoreResult<network::Subnet> create_subnet(const network::SubnetSpec& spec) = 0;
  virtual StoreResult<network::Subnet> get_subnet(const std::string& id) = 0;
  virtual StoreResult<std::vector<network::Subnet>> list_subnets(const network::SubnetFilter& filter) = 0;
  virtual StoreResult<network::Subnet> update_subnet(const std::string& id,
                                                     const network::SubnetUpdate& u) = 0;
  // conflict (409) while the subnet still has ports.
  virtual StoreResult<void> delete_subnet(const std::string& id) = 0;

  // Allocates the lowest free address of the first pool that has one, or takes the requested fixed IP.
  // An exhausted subnet is a conflict on field "subnet_id" whose detail says the pools are exhausted.
  virtual StoreResult<network::Port> create_port(const network::PortSpec& spec) = 0;
  virtual StoreResult<network::Port> get_port(const std::string& id) = 0;
  virtual StoreResult<std::vector<network::Port>> list_ports(const network::PortFilter& filter) = 0;
  virtual StoreResult<void> delete_port(const std::string& id) = 0;
  // The ports with these ids and their subnets, read in one snapshot; one entry per id, in order,
  // nullopt for an id that names no port.
  virtual StoreResult<std::vector<std::optional<PortPlacement>>> port_placements(
      const std::vector<std::string>& ids) = 0;

  // The host, its ports and their subnets in one read snapshot; not_found for an unknown host.
  virtual StoreResult<network::HostView> host_view(const std::string& host) = 0;
  // Every host's view, each exactly what host_view() gives for it, hosts ordered by name, all read in one
  // snapshot: what the desired-state documents of one network revision are rendered from (one read for
  // all hosts instead of one per host).
  virtual StoreResult<std::vector<network::HostView>> host_views() = 0;

  virtual const RevisionSource* revisions() const { return nullptr; }
};

}  // namespace hsns::store
