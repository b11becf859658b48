// A NetworkStore decorator that times every call into hsns_store_operation_duration_seconds.
//
// Contract: forwards every call unchanged to the wrapped store (which must outlive it); thread-safe
// exactly as the wrapped store is. Calls that fail with StoreError::Kind::unavailable also count in
// hsns_store_errors_total.
#pragma once

#include "metrics.h"
#include "store/network_store.h"

namespace hsns::store {

class InstrumentedNetworkStore final : public NetworkStore {
 public:
  InstrumentedNetworkStore(NetworkStore& inner, Metrics& metrics) : inner_(inner), metrics_(metrics) {}

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
  const RevisionSource* revisions() const override { return inner_.revisions(); }

 private:
  template <typename F>
  auto timed(const char* operation, F&& call);

  NetworkStore& inner_;
  Metrics& metrics_;
};

}  // namespace hsns::store
