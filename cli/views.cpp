#include "views.h"

namespace hsnsctl {

namespace {

const nlohmann::json& empty_array() {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  return kEmpty;
}

const nlohmann::json& array_field(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return empty_array();
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty_array();
}

std::string join(const nlohmann::json& strings, const char* separator) {
  std::string text;
  for (const auto& item : strings) {
    if (!item.is_string()) continue;
    if (!text.empty()) text += separator;
    text += item.get<std::string>();
  }
  return text;
}

}  // namespace

std::string cell_text(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number() || it->is_boolean()) return it->dump();
  return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string format_speed(std::int64_t mbps) {
  if (mbps <= 0) return {};
  if (mbps % 1000 == 0) return std::to_string(mbps / 1000) + "G";
  return std::to_string(mbps) + "M";
}

std::string format_pools(const nlohmann::json& pools) {
  std::string text;
  if (!pools.is_array()) return text;
  for (const auto& pool : pools) {
    if (!text.empty()) text += ',';
    text += cell_text(pool, "start") + "-" + cell_text(pool, "end");
  }
  return text;
}

const nlohmann::json& list_items(const nlohmann::json& answer) {
  return array_field(answer, "items");
}

Table hosts_table(const nlohmann::json& hosts) {
  Table table({"NAME", "NPUS", "GENERATION", "UPDATED"});
  if (!hosts.is_array()) return table;
  for (const auto& host : hosts) {
    table.add_row({cell_text(host, "name"), std::to_string(array_field(host, "npus").size()),
                   cell_text(host, "generation"), cell_text(host, "updated_at")});
  }
  return table;
}

Table npus_table(const nlohmann::json& npus) {
  Table table({"INDEX", "NETDEV", "MAC", "RDMA_DEVICE", "SPEED"});
  if (!npus.is_array()) return table;
  for (const auto& npu : npus) {
    std::int64_t speed = 0;
    if (npu.is_object() && npu.contains("link_speed_mbps") && npu["link_speed_mbps"].is_number_integer()) {
      speed = npu["link_speed_mbps"].get<std::int64_t>();
    }
    table.add_row({cell_text(npu, "index"), cell_text(npu, "netdev"), cell_text(npu, "mac"),
                   cell_text(npu, "rdma_device"), format_speed(speed)});
  }
  return table;
}

Table subnets_table(const nlohmann::json& subnets) {
  Table table({"ID", "NAME", "TENANT", "CIDR", "GATEWAY", "POOLS", "MTU", "PORTS"});
  if (!subnets.is_array()) return table;
  for (const auto& subnet : subnets) {
    table.add_row({cell_text(subnet, "id"), cell_text(subnet, "name"), cell_text(subnet, "tenant"),
                   cell_text(subnet, "cidr"), cell_text(subnet, "gateway_ip"),
                   format_pools(array_field(subnet, "allocation_pools")), cell_text(subnet, "mtu"),
                   cell_text(subnet, "port_count")});
  }
  return table;
}

Table ports_table(const nlohmann::json& ports) {
  Table table({"ID", "NAME", "HOST", "NPU", "SUBNET", "IP"});
  if (!ports.is_array()) return table;
  for (const auto& port : ports) {
    table.add_row({cell_text(port, "id"), cell_text(port, "name"), cell_text(port, "host"),
                   cell_text(port, "npu"), cell_text(port, "subnet_id"), cell_text(port, "ip_address")});
  }
  return table;
}

Table desired_table(const nlohmann::json& desired) {
  Table table({"PORT_ID", "NAME", "NPU", "NETDEV", "MAC", "SUBNET", "TENANT", "ADDRESS", "MTU", "GATEWAY",
               "ALLOWED"});
  for (const auto& port : array_field(desired, "ports")) {
    std::string address = cell_text(port, "address");
    std::string prefix = cell_text(port, "prefix_length");
    if (!address.empty() && !prefix.empty()) address += "/" + prefix;
    table.add_row({cell_text(port, "port_id"), cell_text(port, "name"), cell_text(port, "npu"),
                   cell_text(port, "netdev"), cell_text(port, "mac"), cell_text(port, "subnet_name"),
                   cell_text(port, "tenant"), address, cell_text(port, "mtu"), cell_text(port, "gateway_ip"),
                   join(array_field(port, "allowed_prefixes"), ",")});
  }
  return table;
}

Table reachability_table(const nlohmann::json& answer) {
  Table table({"SRC_PORT", "DST_PORT", "REACHABLE", "REASON"});
  table.add_row({cell_text(answer, "src_port"), cell_text(answer, "dst_port"), cell_text(answer, "reachable"),
                 cell_text(answer, "reason")});
  return table;
}

}  // namespace hsnsctl
