// libFuzzer target over request-body parsing (aggregator/api/network/requests.h and what it builds on).
//
// Input layout: the first byte selects the parser (taken modulo 6, so the seeds can use the digits
// '0'..'5'); the rest is the parser's input:
//   0  parse_host_registration: "<host name>\n<body>" (no newline: everything is the host name)
//   1  parse_subnet_create: <body>
//   2  parse_subnet_update: <body>
//   3  parse_port_create: <body>
//   4  IpPrefix::parse on the raw text
//   5  IpAddress::parse on the raw text
// Bodies go through parse_json_object first, exactly as the HTTP layer does, and every body is also
// checked against nlohmann's own parser (check_strict_parse: the strict parse refuses only what it
// adds, repeated keys and deep nesting). Every result is checked against the contracts in the headers
// and serialised; a violated invariant is __builtin_trap().
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/network/requests.h"
#include "hsns/ip.h"
#include "hsns/json_fields.h"
#include "hsns/problem.h"
#include "model/network.h"
#include "services/ipam.h"

namespace {

using hsns::IpAddress;
using hsns::IpFamily;
using hsns::IpPrefix;
using hsns::IpRange;
using hsns::Problem;
using nlohmann::json;
namespace net = hsns::network;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Serialising must never throw: every string in a value or a Problem must be valid UTF-8.
std::string dump(const json& j) {
  try {
    return j.dump();
  } catch (...) {
    __builtin_trap();
  }
}

bool is_repeated_key(const hsns::InvalidParam& ip) {
  return ip.reason.find("more than once") != std::string::npos;
}

void check_problem(const Problem& p) {
  check(p.status == 400);
  check(p.slug == "invalid-request" || p.slug == "malformed-body");
  check(!p.detail.empty() || !p.invalid_params.empty());
  if (p.slug == "invalid-request") {
    // Every invalid request names at least one field, and the detail names the first one.
    check(!p.invalid_params.empty());
    check(p.detail.find("field '" + p.invalid_params.front().name + "'") == 0);
  }
  for (const auto& ip : p.invalid_params) {
    check(!ip.reason.empty());
    // Only an unknown or repeated field can have an empty name: the body really had a "" key.
    check(!ip.name.empty() || ip.reason == "is not a known field" || is_repeated_key(ip));
  }
  const json j = p.to_json();
  check(j.at("status") == 400);
  check(!dump(j).empty());
}

void check_range(const IpRange& r) {
  check(r.first.family() == r.last.family());
  check(r.first <= r.last);
  check(r.size() >= 1);
}

void check_address_text(const IpAddress& a) {
  const std::string text = a.to_string();
  const auto again = IpAddress::parse(text);
  check(again.has_value() && *again == a && again->to_string() == text);
  const auto key = IpAddress::from_sort_key(a.sort_key());
  check(key.has_value() && *key == a);
  if (const auto n = a.next()) check(*n > a && n->prev() == a);
  if (const auto p = a.prev()) check(*p < a && p->next() == a);
}

// The strict parse agrees with nlohmann's plain parser except where it is stricter on purpose: it
// refuses repeated keys (as invalid-request, listing only repeats) and nesting beyond kMaxJsonDepth.
// What it accepts has no repeated key, so writing it back and reading it again gives the same value.
void check_strict_parse(std::string_view text) {
  const auto strict = hsns::parse_json_strict(text);
  const json plain = json::parse(text, nullptr, false);
  if (strict) {
    check(!plain.is_discarded() && plain == *strict);
    const auto again = hsns::parse_json_strict(dump(*strict));
    check(again.has_value() && *again == *strict);
    return;
  }
  const Problem& p = strict.error();
  check_problem(p);
  if (p.slug == "invalid-request") {
    check(!plain.is_discarded());  // only well-formed JSON gets as far as its keys
    check(!p.invalid_params.empty() && p.invalid_params.size() <= hsns::kMaxDuplicateKeysReported);
    for (const auto& ip : p.invalid_params) check(is_repeated_key(ip));
  } else if (!plain.is_discarded()) {
    check(text.empty() || p.detail.find("nested deeper") != std::string::npos);
  }
}

bool usable_name(const std::string& s) {
  return !net::check_name(s).has_value();
}

// ---------------------------------------------------------------------------------------------------

void fuzz_host(std::string_view input) {
  const auto nl = input.find('\n');
  const std::string_view host = input.substr(0, nl);
  const std::string_view body = nl == std::string_view::npos ? std::string_view{} : input.substr(nl + 1);
  check_strict_parse(body);
  const auto j = hsns::parse_json_object(body);
  if (!j) return check_problem(j.error());
  const auto r = net::parse_host_registration(host, *j);
  if (!r) return check_problem(r.error());
  check(r->name == host && !net::check_host_name(r->name).has_value());
  check(r->npus.size() <= static_cast<std::size_t>(net::kMaxNpusPerHost));
  net::Host h;
  h.name = r->name;
  for (std::size_t i = 0; i < r->npus.size(); ++i) {
    const auto& n = r->npus[i];
    check(n.index >= 0 && n.index < net::kMaxNpusPerHost);
    if (i > 0) check(r->npus[i - 1].index < n.index);  // sorted, no duplicate indexes
    for (std::size_t k = 0; k < i; ++k) check(r->npus[k].netdev != n.netdev);
    check(!n.netdev.empty() && n.netdev.size() <= 15);
    check(n.netdev.find_first_of(std::string_view("/: \t\n\0", 6)) == std::string::npos);
    check(n.mac.size() == 17);
    for (std::size_t c = 0; c < n.mac.size(); ++c) {
      const char ch = n.mac[c];
      check(c % 3 == 2 ? ch == ':' : ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')));
    }
    check(n.link_speed_mbps >= 0 && n.link_speed_mbps <= 10'000'000);
    h.npus.push_back(n);
  }
  (void)dump(net::to_json(h));
}

void fuzz_subnet_create(std::string_view body) {
  check_strict_parse(body);
  const auto j = hsns::parse_json_object(body);
  if (!j) return check_problem(j.error());
  const auto r = net::parse_subnet_create(*j);
  if (!r) return check_problem(r.error());
  const auto& s = *r;
  check(usable_name(s.name) && usable_name(s.tenant));
  check(s.mtu >= net::kMinMtu && s.mtu <= net::kMaxMtu);
  const bool v6 = s.cidr.family() == IpFamily::v6;
  if (v6) check(s.mtu >= net::kMinMtuV6);
  check(s.cidr.length() <= (v6 ? 126 : 30));
  const auto reparsed = IpPrefix::parse(s.cidr.to_string());
  check(reparsed.has_value() && *reparsed == s.cidr);
  // Accepted subnets are in no special-purpose range, and the gateway and pool bounds are host
  // addresses of the subnet by the one rule the store and the allocator use as well.
  check(!hsns::check_subnet_prefix(s.cidr).has_value());
  const auto usable = hsns::default_host_range(s.cidr);
  check(usable.has_value());
  check_range(*usable);
  check(!hsns::check_host_address(s.cidr, usable->first).has_value());
  check(!hsns::check_host_address(s.cidr, usable->last).has_value());
  if (s.gateway) check(usable->contains(*s.gateway) && !hsns::check_host_address(s.cidr, *s.gateway));
  check(s.allocation_pools.size() <= net::kMaxPools);
  for (const auto& p : s.allocation_pools) {
    check_range(p);
    check(usable->contains(p.first) && usable->contains(p.last));
    check(!hsns::check_host_address(s.cidr, p.first) && !hsns::check_host_address(s.cidr, p.last));
  }
  check(hsns::ipam::validate_pools(s.cidr, s.gateway, s.allocation_pools).empty());
  // The pools a subnet gets by default are valid pools too.
  const auto defaults = hsns::ipam::default_pools(s.cidr, s.gateway);
  check(!defaults.empty());
  for (const auto& p : defaults) check_range(p);
  check(hsns::ipam::validate_pools(s.cidr, s.gateway, defaults).empty());

  // Writing the spec back as a request body and parsing it again gives the same spec.
  json again = {{"name", s.name},
                {"tenant", s.tenant},
                {"cidr", s.cidr.to_string()},
                {"mtu", s.mtu},
                {"allocation_pools", net::pools_to_json(s.allocation_pools)}};
  if (s.gateway) again["gateway_ip"] = s.gateway->to_string();
  const auto r2 = net::parse_subnet_create(again);
  check(r2.has_value());
  check(r2->name == s.name && r2->tenant == s.tenant && r2->cidr == s.cidr && r2->gateway == s.gateway &&
        r2->mtu == s.mtu && r2->allocation_pools == s.allocation_pools);

  net::Subnet stored;
  stored.name = s.name;
  stored.tenant = s.tenant;
  stored.cidr = s.cidr;
  stored.gateway = s.gateway;
  stored.allocation_pools = s.allocation_pools.empty() ? defaults : s.allocation_pools;
  stored.mtu = s.mtu;
  (void)dump(net::to_json(stored));
}

void fuzz_subnet_update(std::string_view body) {
  check_strict_parse(body);
  const auto j = hsns::parse_json_object(body);
  if (!j) return check_problem(j.error());
  const auto r = net::parse_subnet_update(*j);
  if (!r) return check_problem(r.error());
  check(r->name.has_value() || r->allocation_pools.has_value());
  if (r->name) check(usable_name(*r->name));
  if (r->allocation_pools) {
    check(!r->allocation_pools->empty() && r->allocation_pools->size() <= net::kMaxPools);
    for (const auto& p : *r->allocation_pools) check_range(p);
    (void)dump(net::pools_to_json(*r->allocation_pools));
  }
}

void fuzz_port_create(std::string_view body) {
  check_strict_parse(body);
  const auto j = hsns::parse_json_object(body);
  if (!j) return check_problem(j.error());
  const auto r = net::parse_port_create(*j);
  if (!r) return check_problem(r.error());
  check(!r->subnet_id.empty() && r->subnet_id.size() <= 64);
  check(!net::check_host_name(r->host).has_value());
  check(r->npu >= 0 && r->npu < net::kMaxNpusPerHost);
  check(r->name.empty() || usable_name(r->name));
  net::Port port;
  port.name = r->name;
  port.subnet_id = r->subnet_id;
  port.host = r->host;
  port.npu = r->npu;
  port.fixed_ip = r->ip_address.has_value();
  if (r->ip_address) {
    check(!hsns::check_unicast_address(*r->ip_address).has_value());
    check_address_text(*r->ip_address);
    port.ip_address = *r->ip_address;
  }
  (void)dump(net::to_json(port));
}

void fuzz_prefix(std::string_view text) {
  const auto p = IpPrefix::parse(text);
  if (!p) {
    check(!p.error().empty());
    return;
  }
  check(p->length() >= 0 && p->length() <= p->network().bits());
  check(p->contains(p->first()) && p->contains(p->last()) && p->first() <= p->last());
  check(p->overlaps(*p));
  const auto again = IpPrefix::parse(p->to_string());
  check(again.has_value() && *again == *p && again->to_string() == p->to_string());
  check_address_text(p->network());
  check_address_text(p->last());
  // The address before the network and the one after the last are outside.
  if (const auto before = p->first().prev()) check(!p->contains(*before));
  if (const auto after = p->last().next()) check(!p->contains(*after));
  const auto hosts = hsns::default_host_range(*p);
  check(hosts.has_value());
  check_range(*hosts);
  check(p->contains(hosts->first) && p->contains(hosts->last));
  // check_host_address agrees with default_host_range at both ends of the prefix.
  const bool unicast = !hsns::check_subnet_prefix(*p).has_value();
  if (unicast) {
    check(!hsns::check_host_address(*p, hosts->first) && !hsns::check_host_address(*p, hosts->last));
  }
  if (hosts->first != p->first()) check(hsns::check_host_address(*p, p->first()).has_value());
  if (hosts->last != p->last()) check(hsns::check_host_address(*p, p->last()).has_value());
  if (const auto before = p->first().prev()) check(hsns::check_host_address(*p, *before).has_value());
  if (const auto after = p->last().next()) check(hsns::check_host_address(*p, *after).has_value());
  // A prefix allowed as a subnet holds no address check_unicast_address refuses (checked at its ends).
  if (unicast) {
    check(!hsns::check_unicast_address(p->first()) && !hsns::check_unicast_address(p->last()));
  }
}

void fuzz_address(std::string_view text) {
  const auto a = IpAddress::parse(text);
  if (!a) {
    check(!a.error().empty());
    return;
  }
  check_address_text(*a);
  // The address's own /32 or /128 is a valid prefix that contains exactly it.
  const auto p = IpPrefix::parse(a->to_string() + "/" + std::to_string(a->bits()));
  check(p.has_value() && p->contains(*a) && p->first() == *a && p->last() == *a);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      fuzz_host(rest);
      break;
    case 1:
      fuzz_subnet_create(rest);
      break;
    case 2:
      fuzz_subnet_update(rest);
      break;
    case 3:
      fuzz_port_create(rest);
      break;
    case 4:
      fuzz_prefix(rest);
      break;
    default:
      fuzz_address(rest);
      break;
  }
  return 0;
}
