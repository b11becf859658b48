// The network-management domain: hosts with their NPU interfaces, subnets with allocation pools, and
// ports (one IP address for one NPU of one host in one subnet). Neutron-like semantics.
//
// Contract: plain values, no I/O. JSON conversion here is the API's wire format (see
// aggregator/openapi.json); timestamps are RFC 3339 UTC strings set by the store.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/ip.h"

namespace hsns::network {

// One NPU card's RDMA port as the host daemon discovered it.
struct NpuInterface {
  int index = 0;                     // NPU index on the host, 0-based
  std::string netdev;                // Linux interface name, e.g. "eth2"
  std::string mac;                   // lower-case colon-separated MAC
  std::string rdma_device;           // e.g. "mlx5_0"; empty when the port has no RDMA device
  std::int64_t link_speed_mbps = 0;  // 0 when unknown
};

struct Host {
  std::string name;
  std::vector<NpuInterface> npus;
  std::int64_t generation = 0;  // bumped whenever this host's desired state may have changed
  std::string created_at;
  std::string updated_at;
};

struct HostRegistration {
  std::string name;
  std::vector<NpuInterface> npus;
};

struct Subnet {
  std::string id;  // UUID
  std::string name;
  std::string tenant;
  IpPrefix cidr;
  std::optional<IpAddress> gateway;
  std::vector<IpRange> allocation_pools;  // never empty once stored
  int mtu = 9000;
  std::int64_t port_count = 0;  // derived: ports currently in the subnet
  std::string created_at;
  std::string updated_at;
};

struct SubnetSpec {
  std::string name;
  std::string tenant;
  IpPrefix cidr;
  std::optional<IpAddress> gateway;
  std::vector<IpRange> allocation_pools;  // empty: the whole usable range minus the gateway
  int mtu = 9000;
};

struct SubnetUpdate {
  std::optional<std::string> name;
  std::optional<std::vector<IpRange>> allocation_pools;
};

struct SubnetFilter {
  std::optional<std::string> tenant;
  std::optional<std::string> name;
};

struct Port {
  std::string id;    // UUID
  std::string name;  // optional label, may be empty
  std::string subnet_id;
  std::string tenant;  // the subnet's tenant, copied for filtering
  std::string host;
  int npu = 0;
  IpAddress ip_address;
  bool fixed_ip = false;  // true when the caller asked for this address
  std::string created_at;
};

struct PortSpec {
  std::string name;
  std::string subnet_id;
  std::string host;
  int npu = 0;
  std::optional<IpAddress> ip_address;  // a requested fixed IP; otherwise allocated from the pools
};

struct PortFilter {
  std::optional<std::string> host;
  std::optional<std::string> subnet_id;
  std::optional<std::string> tenant;
};

// Everything one host's daemon must apply, read in one consistent snapshot.
struct HostView {
  Host host;
  std::vector<Port> ports;
  std::vector<Subnet> subnets;  // the subnets those ports are in
};

nlohmann::json to_json(const NpuInterface& n);
nlohmann::json to_json(const Host& h);
nlohmann::json to_json(const Subnet& s);
nlohmann::json to_json(const Port& p);
nlohmann::json pools_to_json(const std::vector<IpRange>& pools);

}  // namespace hsns::network
