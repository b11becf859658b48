#include "desired_state.h"

#include <nlohmann/json.hpp>
#include <set>

namespace hsns::daemon {
namespace {

using json = nlohmann::json;

struct Reader {
  const json& obj;
  std::string where;

  const json& field(const char* name, json::value_t type, bool nullable = false) const {
    if (!obj.contains(name)) throw std::invalid_argument(where + name + ": missing");
    const json& v = obj.at(name);
    if (nullable && v.is_null()) return v;
    const bool ok = v.type() == type || (type == json::value_t::number_integer && v.is_number_unsigned());
    if (!ok) throw std::invalid_argument(where + name + ": wrong type");
    return v;
  }
  std::string str(const char* name) const { return field(name, json::value_t::string).get<std::string>(); }
  std::int64_t integer(const char* name) const {
    return field(name, json::value_t::number_integer).get<std::int64_t>();
  }
};

template <typename T>
T unwrap(tl::expected<T, std::string> v, const std::string& where) {
  if (!v) throw std::invalid_argument(where + ": " + v.error());
  return *v;
}

DesiredPort parse_port(const json& p, std::size_t i) {
  if (!p.is_object()) throw std::invalid_argument("ports[" + std::to_string(i) + "]: not an object");
  Reader r{p, "ports[" + std::to_string(i) + "]."};
  DesiredPort port;
  port.port_id = r.str("port_id");
  port.name = p.contains("name") && p["name"].is_string() ? p["name"].get<std::string>() : port.port_id;
  const auto npu = r.integer("npu");
  if (npu < 0 || npu > 4095) throw std::invalid_argument(r.where + "npu: out of range");
  port.npu = static_cast<int>(npu);
  const auto& nd = r.field("netdev", json::value_t::string, true);
  if (!nd.is_null()) port.netdev = nd.get<std::string>();
  port.address = unwrap(IpAddress::parse(r.str("address")), r.where + "address");
  port.cidr = unwrap(IpPrefix::parse(r.str("cidr")), r.where + "cidr");
  const auto plen = r.integer("prefix_length");
  if (plen != port.cidr.length()) throw std::invalid_argument(r.where + "prefix_length: differs from cidr");
  if (!port.cidr.contains(port.address)) throw std::invalid_argument(r.where + "address: outside cidr");
  const auto mtu = r.integer("mtu");
  if (mtu < 68 || mtu > 65535) throw std::invalid_argument(r.where + "mtu: out of range 68..65535");
  port.mtu = static_cast<int>(mtu);
  const auto& gw = r.field("gateway_ip", json::value_t::string, true);
  if (!gw.is_null()) {
    port.gateway = unwrap(IpAddress::parse(gw.get<std::string>()), r.where + "gateway_ip");
    if (!port.cidr.contains(*port.gateway)) throw std::invalid_argument(r.where + "gateway_ip: outside cidr");
  }
  const auto& allowed = r.field("allowed_prefixes", json::value_t::array);
  for (const auto& a : allowed) {
    if (!a.is_string()) throw std::invalid_argument(r.where + "allowed_prefixes: wrong type");
    port.allowed_prefixes.push_back(
        unwrap(IpPrefix::parse(a.get<std::string>()), r.where + "allowed_prefixes"));
  }
  return port;
}

}  // namespace

tl::expected<DesiredState, std::string> parse_desired_state(const std::string& body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) return tl::unexpected(std::string("desired state: not valid JSON"));
  if (!doc.is_object()) return tl::unexpected(std::string("desired state: not a JSON object"));
  try {
    Reader r{doc, ""};
    DesiredState s;
    s.host = r.str("host");
    s.generation = r.integer("generation");
    const auto& ports = r.field("ports", json::value_t::array);
    std::set<std::string> netdevs;
    for (std::size_t i = 0; i < ports.size(); ++i) {
      auto port = parse_port(ports[i], i);
      if (port.netdev && !netdevs.insert(*port.netdev).second)
        throw std::invalid_argument("ports[" + std::to_string(i) + "].netdev: '" + *port.netdev +
                                    "' is used by two ports");
      s.ports.push_back(std::move(port));
    }
    return s;
  } catch (const std::exception& e) {
    return tl::unexpected(std::string("desired state: ") + e.what());
  }
}

std::string desired_state_to_json(const DesiredState& s) {
  json ports = json::array();
  for (const auto& p : s.ports) {
    json allowed = json::array();
    for (const auto& a : p.allowed_prefixes) allowed.push_back(a.to_string());
    ports.push_back({{"port_id", p.port_id},
                     {"name", p.name},
                     {"npu", p.npu},
                     {"netdev", p.netdev ? json(*p.netdev) : json(nullptr)},
                     {"address", p.address.to_string()},
                     {"prefix_length", p.cidr.length()},
                     {"cidr", p.cidr.to_string()},
                     {"mtu", p.mtu},
                     {"gateway_ip", p.gateway ? json(p.gateway->to_string()) : json(nullptr)},
                     {"allowed_prefixes", allowed}});
  }
  return json{{"host", s.host}, {"generation", s.generation}, {"ports", ports}}.dump();
}

}  // namespace hsns::daemon
