#include "hsns/proto/agent.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "hsns/json_fields.h"
#include "names.h"

namespace hsns::proto {

// The kernel's dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':', whitespace or NUL.
bool detail::valid_netdev(std::string_view s) {
  if (s.empty() || s.size() > kMaxNetdevLength || s == "." || s == "..") return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0;
  });
}

// A MAC as six colon-separated hex octets; returned lower-case.
std::optional<std::string> detail::normalise_mac(std::string_view s) {
  if (s.size() != 17) return std::nullopt;
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i % 3 == 2) {
      if (out[i] != ':') return std::nullopt;
    } else {
      if (!std::isxdigit(static_cast<unsigned char>(out[i]))) return std::nullopt;
      out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
    }
  }
  return out;
}

namespace {
using detail::kMaxNetdevLength;
using detail::normalise_mac;
using detail::valid_netdev;

using nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kMaxAddressLength = 64;

json nullable(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

// An address or prefix field: a string, then the strict parser of hsns/ip.h (its message is the reason).
template <typename T>
std::optional<T> read_ip(FieldReader& r, std::string_view name, bool required) {
  auto text = r.string(name, required, kMaxAddressLength);
  if (!text) return std::nullopt;
  auto v = T::parse(*text);
  if (!v) {
    r.fail(name, v.error());
    return std::nullopt;
  }
  return *v;
}

// One element of "npus": its members, then the rules on their values; nullopt when anything was wrong.
std::optional<RegisteredNpu> read_registered_npu(FieldReader& nr) {
  auto index = nr.integer("index", true, 0, static_cast<std::int64_t>(kMaxRegisteredNpus) - 1);
  auto netdev = nr.string("netdev", true, kMaxNetdevLength);
  auto mac = nr.string("mac", true, 32);
  auto rdma = nr.string("rdma_device", false, 64);
  auto speed = nr.integer("link_speed_mbps", false, 0, kMaxLinkSpeedMbps);
  nr.report_unknown();  // before the value rules: the REST API has always listed them in this order
  if (netdev && !valid_netdev(*netdev)) {
    nr.fail("netdev",
            "must be a Linux interface name (1..15 characters, not '.' or '..', no '/', ':' or space)");
    netdev.reset();
  }
  std::optional<std::string> mac_norm;
  if (mac) {
    mac_norm = normalise_mac(*mac);
    if (!mac_norm) nr.fail("mac", "must be six colon-separated hex octets, e.g. 02:00:00:00:00:01");
  }
  if (!index || !netdev || !mac_norm) return std::nullopt;
  return RegisteredNpu{static_cast<int>(*index), std::move(*netdev), std::move(*mac_norm), rdma.value_or(""),
                       speed.value_or(0)};
}

// Reads every field (so that every bad one is named), then checks the relations between them.
std::optional<DesiredPort> read_desired_port(FieldReader& r) {
  DesiredPort port;
  auto port_id = r.string("port_id", true, 64);
  auto name = r.string("name", true, 64);
  auto npu = r.integer("npu", true, 0, 4095);
  port.netdev = r.string("netdev", false, kMaxNetdevLength);
  port.mac = r.string("mac", false, 32);
  port.subnet_id = r.string("subnet_id", false, 64);
  port.subnet_name = r.string("subnet_name", false, 64);
  port.tenant = r.string("tenant", false, 64);
  auto address = read_ip<IpAddress>(r, "address", true);
  auto prefix_length = r.integer("prefix_length", true, 0, 128);
  auto cidr = read_ip<IpPrefix>(r, "cidr", true);
  auto mtu = r.integer("mtu", true, 68, 65535);
  port.gateway = read_ip<IpAddress>(r, "gateway_ip", false);
  bool allowed_ok = true;
  if (const auto* allowed = r.array("allowed_prefixes", true, kMaxAllowedPrefixes)) {
    for (std::size_t i = 0; i < allowed->size(); ++i) {
      const std::string element = "allowed_prefixes[" + std::to_string(i) + "]";
      const auto& v = (*allowed)[i];
      auto p = v.is_string() ? IpPrefix::parse(v.get_ref<const std::string&>())
                             : tl::unexpected(std::string("must be a string"));
      if (!p) {
        r.fail(element, p.error());
        allowed_ok = false;
        continue;
      }
      port.allowed_prefixes.push_back(*p);
    }
  } else {
    allowed_ok = false;
  }
  if (cidr && prefix_length && *prefix_length != cidr->length()) {
    r.fail("prefix_length", "differs from cidr " + cidr->to_string());
    prefix_length.reset();
  }
  if (cidr && address && !cidr->contains(*address)) {
    r.fail("address", "outside cidr " + cidr->to_string());
    address.reset();
  }
  if (cidr && port.gateway && !cidr->contains(*port.gateway)) {
    r.fail("gateway_ip", "outside cidr " + cidr->to_string());
    return std::nullopt;
  }
  if (!port_id || !name || !npu || !address || !prefix_length || !cidr || !mtu || !allowed_ok)
    return std::nullopt;
  port.port_id = std::move(*port_id);
  port.name = std::move(*name);
  port.npu = static_cast<int>(*npu);
  port.address = *address;
  port.cidr = *cidr;
  port.mtu = static_cast<int>(*mtu);
  return port;
}

template <typename E, std::size_t N>
const char* name_of(E value, const char* const (&names)[N]) {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : "?";
}

constexpr const char* kPortStates[] = {"converged", "failed", "pending"};
constexpr const char* kQosStates[] = {"conformant", "drift", "unknown"};
// The REST API's limits for an enumeration value's text (aggregator/openapi.json).
constexpr std::size_t kMaxStateLength = 32;

}  // namespace

const char* to_string(PortState s) {
  return name_of(s, kPortStates);
}
const char* to_string(QosState s) {
  return name_of(s, kQosStates);
}

std::optional<HostRegistration> read_host_registration_fields(FieldReader& r) {
  HostRegistration reg;
  r.objects("npus", true, kMaxRegisteredNpus, [&reg](FieldReader& nr, std::size_t) {
    auto n = read_registered_npu(nr);
    if (!n) return;
    const bool dup_index = std::any_of(reg.npus.begin(), reg.npus.end(),
                                       [&](const RegisteredNpu& o) { return o.index == n->index; });
    const bool dup_netdev = std::any_of(reg.npus.begin(), reg.npus.end(),
                                        [&](const RegisteredNpu& o) { return o.netdev == n->netdev; });
    if (dup_index) nr.fail("index", "NPU index " + std::to_string(n->index) + " is listed twice");
    if (dup_netdev) nr.fail("netdev", "netdev " + n->netdev + " is listed twice");
    if (!dup_index && !dup_netdev) reg.npus.push_back(std::move(*n));
  });
  if (!r.ok()) return std::nullopt;
  return reg;
}

Result<HostRegistration> read_host_registration(const json& document) {
  FieldReader r(document);
  auto reg = read_host_registration_fields(r);
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  return std::move(*reg);
}

json to_json(const HostRegistration& registration) {
  json npus = json::array();
  for (const auto& n : registration.npus) {
    npus.push_back({{"index", n.index},
                    {"netdev", n.netdev},
                    {"mac", n.mac},
                    {"rdma_device", n.rdma_device},
                    {"link_speed_mbps", n.link_speed_mbps}});
  }
  return json{{"npus", std::move(npus)}};
}

Result<DesiredState> read_desired_state(const json& document) {
  FieldReader r(document);
  DesiredState state;
  auto host = r.string("host", true, 253);
  auto generation = r.integer("generation", true, 0, kInt64Max);
  std::set<std::string> netdevs;
  r.objects("ports", true, kMaxDesiredPorts, [&](FieldReader& p, std::size_t) {
    auto port = read_desired_port(p);
    if (!port) return;
    if (port->netdev && !netdevs.insert(*port->netdev).second) {
      p.fail("netdev", "'" + *port->netdev + "' is used by two ports");
      return;
    }
    state.ports.push_back(std::move(*port));
  });
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  state.host = std::move(*host);
  state.generation = *generation;
  return state;
}

json to_json(const DesiredState& s) {
  json ports = json::array();
  for (const auto& p : s.ports) {
    json allowed = json::array();
    for (const auto& a : p.allowed_prefixes) allowed.push_back(a.to_string());
    json j = {{"port_id", p.port_id},
              {"name", p.name},
              {"npu", p.npu},
              {"netdev", nullable(p.netdev)},
              {"mac", nullable(p.mac)},
              {"address", p.address.to_string()},
              {"prefix_length", p.cidr.length()},
              {"cidr", p.cidr.to_string()},
              {"mtu", p.mtu},
              {"gateway_ip", p.gateway ? json(p.gateway->to_string()) : json(nullptr)},
              {"allowed_prefixes", std::move(allowed)}};
    if (p.subnet_id) j["subnet_id"] = *p.subnet_id;
    if (p.subnet_name) j["subnet_name"] = *p.subnet_name;
    if (p.tenant) j["tenant"] = *p.tenant;
    ports.push_back(std::move(j));
  }
  return json{{"host", s.host}, {"generation", s.generation}, {"ports", std::move(ports)}};
}

// The order of the reads is the order of the REST API's invalid_params (aggregator/api/agents).
Result<StatusReport> read_status_report(const json& document) {
  FieldReader r(document);
  StatusReport report;
  auto applied = r.integer("applied_generation", true, 0, kInt64Max);
  r.objects("ports", false, kMaxReportPorts, [&](FieldReader& p, std::size_t) {
    PortReport port;
    auto id = p.string("port_id", true, 64);
    port.netdev = p.string("netdev", false, kMaxNetdevLength);
    auto state = p.one_of("state", true, {kPortStates[0], kPortStates[1], kPortStates[2]}, kMaxStateLength);
    port.reason = p.string("reason", false, 1024).value_or("");
    port.drift = p.strings("drift", false, kMaxReportStrings, kMaxReportStringLength)
                     .value_or(std::vector<std::string>{});
    if (auto n = p.integer("isolation_dropped_packets", false, 0, kInt64Max))
      port.isolation_dropped_packets = static_cast<std::uint64_t>(*n);
    if (!id || !state) return;
    port.port_id = std::move(*id);
    port.state = static_cast<PortState>(*state);
    report.ports.push_back(std::move(port));
  });
  r.objects("qos", false, kMaxReportQos, [&](FieldReader& q, std::size_t) {
    QosReport qos;
    auto netdev = q.string("netdev", true, kMaxNetdevLength);
    auto state = q.one_of("state", true, {kQosStates[0], kQosStates[1], kQosStates[2]}, kMaxStateLength);
    qos.findings = q.strings("findings", false, kMaxReportStrings, kMaxReportStringLength)
                       .value_or(std::vector<std::string>{});
    if (!netdev || !state) return;
    qos.netdev = std::move(*netdev);
    qos.state = static_cast<QosState>(*state);
    report.qos.push_back(std::move(qos));
  });
  if (const auto* d = r.object("daemon", false)) {
    FieldReader dr = r.child(*d, "daemon");
    DaemonInfo info;
    info.version = dr.string("version", false, 64);
    info.started_at = dr.string("started_at", false, 64);
    dr.report_unknown();
    report.daemon = std::move(info);
  }
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  report.applied_generation = *applied;
  return report;
}

// hsnsd's status body as it has always been written: netdev always (null when none), reason, drift and
// isolation_dropped_packets only when set, findings always.
json to_json(const StatusReport& report) {
  json ports = json::array();
  for (const auto& p : report.ports) {
    json j = {{"port_id", p.port_id}, {"netdev", nullable(p.netdev)}, {"state", to_string(p.state)}};
    if (!p.reason.empty()) j["reason"] = p.reason;
    if (!p.drift.empty()) j["drift"] = p.drift;
    if (p.isolation_dropped_packets) j["isolation_dropped_packets"] = *p.isolation_dropped_packets;
    ports.push_back(std::move(j));
  }
  json qos = json::array();
  for (const auto& q : report.qos)
    qos.push_back({{"netdev", q.netdev}, {"state", to_string(q.state)}, {"findings", q.findings}});
  json j = {{"applied_generation", report.applied_generation},
            {"ports", std::move(ports)},
            {"qos", std::move(qos)}};
  if (report.daemon) {
    json d = json::object();
    if (report.daemon->version) d["version"] = *report.daemon->version;
    if (report.daemon->started_at) d["started_at"] = *report.daemon->started_at;
    j["daemon"] = std::move(d);
  }
  return j;
}

}  // namespace hsns::proto
