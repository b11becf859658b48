#include "api/network/requests.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "hsns/json_fields.h"

namespace hsns::network {
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

// A MAC as six colon-separated hex octets; returned lower-case.
std::optional<std::string> normalise_mac(std::string_view s) {
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

// The kernel's dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':', whitespace or NUL.
bool valid_netdev(std::string_view s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0;
  });
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
  HostRegistration reg;
  reg.name = std::string(host);
  FieldReader r(body);
  const auto* npus = r.array("npus", true, kMaxNpusPerHost);
  if (npus) {
    for (std::size_t i = 0; i < npus->size(); ++i) {
      const std::string path = "npus[" + std::to_string(i) + "]";
      if (!(*npus)[i].is_object()) {
        r.fail(path, "must be an object");
        continue;
      }
      FieldReader nr = r.child((*npus)[i], path);
      NpuInterface n;
      auto index = nr.integer("index", true, 0, kMaxNpusPerHost - 1);
      auto netdev = nr.string("netdev", true, 15);  // IFNAMSIZ - 1
      auto mac = nr.string("mac", true, 32);
      auto rdma = nr.string("rdma_device", false, 64);
      auto speed = nr.integer("link_speed_mbps", false, 0, 10'000'000);
      (void)nr.finish();
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
      if (!index || !netdev || !mac_norm) continue;
      n.index = static_cast<int>(*index);
      n.netdev = *netdev;
      n.mac = *mac_norm;
      n.rdma_device = rdma.value_or("");
      n.link_speed_mbps = speed.value_or(0);
      const bool dup_index = std::any_of(reg.npus.begin(), reg.npus.end(),
                                         [&](const NpuInterface& o) { return o.index == n.index; });
      const bool dup_netdev = std::any_of(reg.npus.begin(), reg.npus.end(),
                                          [&](const NpuInterface& o) { return o.netdev == n.netdev; });
      if (dup_index) nr.fail("index", "NPU index " + std::to_string(n.index) + " is listed twice");
      if (dup_netdev) nr.fail("netdev", "netdev " + n.netdev + " is listed twice");
      if (!dup_index && !dup_netdev) reg.npus.push_back(std::move(n));
    }
  }
  if (auto p = r.finish()) return tl::unexpected(*p);
  std::sort(reg.npus.begin(), reg.npus.end(),
            [](const NpuInterface& a, const NpuInterface& b) { return a.index < b.index; });
  return reg;
}

std::vector<InvalidParam> validate_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway,
                                         const std::vector<IpRange>& pools) {
  std::vector<InvalidParam> errors;
  // Both bounds must be usable host addresses. Then so is every address between them: the addresses of
  // an accepted subnet that a host may not use are only its first and (IPv4) last one.
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const std::string path = "allocation_pools[" + std::to_string(i) + "]";
    const auto& p = pools[i];
    if (auto why = check_host_address(cidr, p.first)) {
      errors.push_back({path + ".start", std::move(*why)});
      continue;
    }
    if (auto why = check_host_address(cidr, p.last)) {
      errors.push_back({path + ".end", std::move(*why)});
      continue;
    }
    if (p.last < p.first) {
      errors.push_back({path + ".end", "must not be lower than start"});
      continue;
    }
    if (gateway && p.contains(*gateway)) {
      errors.push_back({path, "contains the gateway " + gateway->to_string()});
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (pools[j].overlaps(p)) {
        errors.push_back({path, "overlaps allocation_pools[" + std::to_string(j) + "]"});
        break;
      }
    }
  }
  return errors;
}

std::vector<IpRange> default_pools(const IpPrefix& cidr, const std::optional<IpAddress>& gateway) {
  auto range = default_host_range(cidr);
  if (!range) return {};
  if (!gateway || !range->contains(*gateway)) return {*range};
  std::vector<IpRange> pools;
  if (*gateway > range->first) pools.push_back({range->first, *gateway->prev()});
  if (*gateway < range->last) pools.push_back({*gateway->next(), range->last});
  return pools;
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
  for (auto& e : validate_pools(*cidr, gateway, pools)) errors.push_back(std::move(e));
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
