#include "store/instrumented_network_store.h"

#include <chrono>

namespace hsns::store {

template <typename F>
auto InstrumentedNetworkStore::timed(const char* operation, F&& call) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  const bool ok = result.has_value() || result.error().kind != StoreError::Kind::unavailable;
  metrics_.observe_store(operation, ok, elapsed.count());
  return result;
}

StoreResult<PutHostResult> InstrumentedNetworkStore::put_host(const network::HostRegistration& reg) {
  return timed("put_host", [&] { return inner_.put_host(reg); });
}
StoreResult<network::Host> InstrumentedNetworkStore::get_host(const std::string& name) {
  return timed("get_host", [&] { return inner_.get_host(name); });
}
StoreResult<std::vector<network::Host>> InstrumentedNetworkStore::list_hosts() {
  return timed("list_hosts", [&] { return inner_.list_hosts(); });
}
StoreResult<network::Subnet> InstrumentedNetworkStore::create_subnet(const network::SubnetSpec& spec) {
  return timed("create_subnet", [&] { return inner_.create_subnet(spec); });
}
StoreResult<network::Subnet> InstrumentedNetworkStore::get_subnet(const std::string& id) {
  return timed("get_subnet", [&] { return inner_.get_subnet(id); });
}
StoreResult<std::vector<network::Subnet>> InstrumentedNetworkStore::list_subnets(
    const network::SubnetFilter& f) {
  return timed("list_subnets", [&] { return inner_.list_subnets(f); });
}
StoreResult<network::Subnet> InstrumentedNetworkStore::update_subnet(const std::string& id,
                                                                     const network::SubnetUpdate& u) {
  return timed("update_subnet", [&] { return inner_.update_subnet(id, u); });
}
StoreResult<void> InstrumentedNetworkStore::delete_subnet(const std::string& id) {
  return timed("delete_subnet", [&] { return inner_.delete_subnet(id); });
}
StoreResult<network::Port> InstrumentedNetworkStore::create_port(const network::PortSpec& spec) {
  return timed("create_port", [&] { return inner_.create_port(spec); });
}
StoreResult<network::Port> InstrumentedNetworkStore::get_port(const std::string& id) {
  return timed("get_port", [&] { return inner_.get_port(id); });
}
StoreResult<std::vector<network::Port>> InstrumentedNetworkStore::list_ports(const network::PortFilter& f) {
  return timed("list_ports", [&] { return inner_.list_ports(f); });
}
StoreResult<void> InstrumentedNetworkStore::delete_port(const std::string& id) {
  return timed("delete_port", [&] { return inner_.delete_port(id); });
}
StoreResult<std::vector<std::optional<PortPlacement>>> InstrumentedNetworkStore::port_placements(
    const std::vector<std::string>& ids) {
  return timed("port_placements", [&] { return inner_.port_placements(ids); });
}
StoreResult<network::HostView> InstrumentedNetworkStore::host_view(const std::string& host) {
  return timed("host_view", [&] { return inner_.host_view(host); });
}

StoreResult<std::vector<network::HostView>> InstrumentedNetworkStore::host_views() {
  return timed("host_views", [&] { return inner_.host_views(); });
}

}  // namespace hsns::store
