#include "api/network/requests.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "hsns/json_fields.h"
#include "hsns/proto/agent.h"
#include "services/ipam.h"

namespace hsns::network {

// A host registers at most as many NPUs as the wire contract carries.
static_assert(kMaxNpusPerHost == static_cast<int>(proto::kMaxRegisteredNpus));

namespace {

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

std::optional<std::string> check_token(std::string_view s, std::size_t max_len) {
  if (s.empty()) return "must not be empty";
  if (s.size() > max_len) return "must be at most " + std::to_string(max_len) + " characters";
  if (!is_alnum(s.front())) return "must start with a letter or digit";
  for (char c : s) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-') {
      return "may contain only letters, digits, '.', '_' and '-'";
    }
  }
  return std::nullopt;
}

// Reads a string field that must be an IP address; records the error on the reader.
std::optional<IpAddress> read_address(FieldReader& r, std::string_view name, bool required) {
  auto text = r.string(name, required, 64);
  if (!text) return std::nullopt;
  auto a = IpAddress::parse(*text);
  if (!a) {
    r.fail(name, a.error());
    return std::nullopt;
  }
  return *a;
}

std::optional<std::string> read_name(FieldReader& r, std::string_view field, bool required) {
  auto s = r.string(field, required, 64);
  if (!s) return std::nullopt;
  if (auto why = check_name(*s)) {
    r.fail(field, *why);
    return std::nullopt;
  }
  return s;
}

std::vector<IpRange> read_pools(FieldReader& r, const nlohmann::json& arr) {
  std::vector<IpRange> pools;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string path = r.field_path("allocation_pools") + "[" + std::to_string(i) + "]";
    if (!arr[i].is_object()) {
      r.fail("allocation_pools[" + std::to_string(i) + "]", "must be an object with start and end");
      continue;
    }
    FieldReader pr = r.child(arr[i], path);
    auto start = read_address(pr, "start", true);
    auto end = read_address(pr, "end", true);
    (void)pr.finish();
    if (!start || !end) continue;
    if (start->family() != end->family()) {
      pr.fail("end", "must be of the same IP version as start");
      continue;
    }
    if (*end < *start) {
      pr.fail("end", "must not be lower than start");
      continue;
    }
    pools.push_back({*start, *end});
  }
  return pools;
}

}  // namespace

std::optional<std::string> check_host_name(std::string_view name) {
  return check_token(name, 253);
}
std::optional<std::string> check_name(std::string_view name) {
  return check_token(name, 64);
}

tl::expected<HostRegistration, Problem> parse_host_registration(std::string_view host,
                                                                const nlohmann::json& body) {
  if (auto why = check_host_name(host)) return tl::unexpected(Problem::invalid("host", *why));
  // The body is the wire contract's host registration (hsns/proto/agent.h), read with this reader so
  // that the answer is one Problem.
  FieldReader r(body);
  auto read = proto::read_host_registration_fields(r);
  if (auto p = r.finish()) return tl::unexpected(*p);
  HostRegistration reg;
  reg.name = std::string(host);
  reg.npus.reserve(read->npus.size());
  for (auto& n : read->npus) {
    reg.npus.push_back(
        {n.index, std::move(n.netdev), std::move(n.mac), std::move(n.rdma_device), n.link_speed_mbps});
  }
  std::sort(reg.npus.begin(), reg.npus.end(),
            [](const NpuInterface& a, const NpuInterface& b) { return a.index < b.index; });
  return reg;
}

tl::expected<SubnetSpec, Problem> parse_subnet_create(const nlohmann::json& body) {
  FieldReader r(body);
  SubnetSpec spec;
  auto name = read_name(r, "name", true);
  auto tenant = read_name(r, "tenant", false);
  auto cidr_text = r.string("cidr", true, 64);
  std::optional<IpPrefix> cidr;
  if (cidr_text) {
    auto parsed = IpPrefix::parse(*cidr_text);
    if (parsed) {
      cidr = *parsed;
    } else {
      r.fail("cidr", parsed.error());
    }
  }
  auto gateway = read_address(r, "gateway_ip", false);
  auto mtu = r.integer("mtu", false, kMinMtu, kMaxMtu);
  std::vector<IpRange> pools;
  if (const auto* arr = r.array("allocation_pools", false, kMaxPools)) pools = read_pools(r, *arr);
  if (auto p = r.finish()) return tl::unexpected(*p);

  // Cross-field checks, once every field parsed.
  std::vector<InvalidParam> errors;
  if (auto why = check_subnet_prefix(*cidr)) {
    // The gateway and pools of a refused range would only repeat its reason.
    return tl::unexpected(Problem::invalid("cidr", *why + "; a subnet needs unicast host addresses"));
  }
  if (cidr->family() == IpFamily::v4 && cidr->length() > 30) {
    errors.push_back({"cidr", "an IPv4 subnet needs a prefix of /30 or shorter to hold ports"});
  }
  if (cidr->family() == IpFamily::v6 && cidr->length() > 126) {
    errors.push_back({"cidr", "an IPv6 subnet needs a prefix of /126 or shorter to hold ports"});
  }
  if (cidr->family() == IpFamily::v6 && mtu && *mtu < kMinMtuV6) {
    errors.push_back({"mtu", "must be at least 1280 for an IPv6 subnet"});
  }
  if (gateway) {
    if (auto why = check_host_address(*cidr, *gateway)) errors.push_back({"gateway_ip", std::move(*why)});
  }
  for (auto& e : ipam::validate_pools(*cidr, gateway, pools)) errors.push_back({e.field, e.reason});
  if (!errors.empty()) return tl::unexpected(Problem::invalid(std::move(errors)));

  spec.name = *name;
  spec.tenant = tenant.value_or(kDefaultTenant);
  spec.cidr = *cidr;
  spec.gateway = gateway;
  spec.allocation_pools = std::move(pools);
  spec.mtu = static_cast<int>(mtu.value_or(kDefaultMtu));
  return spec;
}

tl::expected<SubnetUpdate, Problem> parse_subnet_update(const nlohmann::json& body) {
  FieldReader r(body);
  SubnetUpdate u;
  u.name = read_name(r, "name", false);
  if (const auto* arr = r.array("allocation_pools", false, kMaxPools)) {
    if (arr->empty()) {
      r.fail("allocation_pools", "must list at least one pool");
    } else {
      u.allocation_pools = read_pools(r, *arr);
    }
  }
  if (auto p = r.finish()) return tl::unexpected(*p);
  if (!u.name && !u.allocation_pools) {
    return tl::unexpected(Problem::invalid("name", "nothing to update: give name and/or allocation_pools"));
  }
  return u;
}

tl::expected<PortSpec, Problem> parse_port_create(const nlohmann::json& body) {
  FieldReader r(body);
  PortSpec spec;
  auto subnet_id = r.string("subnet_id", true, 64);
  auto host = r.string("host", true, 253);
  auto npu = r.integer("npu", true, 0, kMaxNpusPerHost - 1);
  auto ip = read_address(r, "ip_address", false);
  auto name = r.string("name", false, 64);
  // The subnet's own rules (inside it, not its network or anycast address) need the stored subnet and
  // are the store's; an address no host may have anywhere is refused here already.
  if (ip) {
    if (auto why = check_unicast_address(*ip)) {
      r.fail("ip_address", std::move(*why));
      ip.reset();
    }
  }
  if (host) {
    if (auto why = check_host_name(*host)) r.fail("host", *why);
  }
  if (name && !name->empty()) {
    if (auto why = check_name(*name)) r.fail("name", *why);
  }
  if (subnet_id && subnet_id->empty()) r.fail("subnet_id", "must not be empty");
  if (auto p = r.finish()) return tl::unexpected(*p);
  spec.subnet_id = *subnet_id;
  spec.host = *host;
  spec.npu = static_cast<int>(*npu);
  spec.ip_address = ip;
  spec.name = name.value_or("");
  return spec;
}

}  // namespace hsns::network
