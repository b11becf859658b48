// The IPAM storage primitives (services/ipam.h AddressBook) on the embedded SQLite database.
//
// Contract:
// - Bound to one connection inside one write transaction (sql::write) and to the new port being created:
//   the held addresses of the subnet are its ports' ip_key (IpAddress::sort_key(), order-preserving);
//   claim inserts the port row with the address by INSERT ... ON CONFLICT (subnet_id, ip_key) DO NOTHING,
//   so the UNIQUE (subnet_id, ip_key) constraint makes "store if free" atomic; it answers false when
//   another port of the subnet holds the address.
// - The port passed in has every field but ip_address set (id, name, subnet_id, tenant, host, npu,
//   fixed_ip, created_at); a successful claim sets its ip_address. Other constraint failures of the
//   insert (foreign keys, (host, npu, subnet)) are errors, as in sql::from_db.
// - Borrows the connection and the port; both must outlive it. Used by one thread (the transaction's).
#pragma once

#include "model/network.h"
#include "services/ipam.h"
#include "store/database.h"

namespace hsns::store {

class SqlitePortAddressBook final : public ipam::AddressBook {
 public:
  SqlitePortAddressBook(Connection& connection, network::Port& port) : c_(connection), port_(port) {}

  StoreResult<void> scan_held(const IpRange& range,
                              const std::function<bool(const IpAddress&)>& visit) override;
  StoreResult<std::optional<ipam::AddressHolder>> holder(const IpAddress& address) override;
  StoreResult<bool> claim(const IpAddress& address) override;

 private:
  Connection& c_;
  network::Port& port_;
};

}  // namespace hsns::store
