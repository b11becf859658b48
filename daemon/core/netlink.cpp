#include "netlink.h"

#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>

#include <cstring>

namespace hsns::daemon {
namespace {

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  Owned() = default;
  explicit Owned(T* x) : p(x) {}
  ~Owned() {
    if (p) Free(p);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

void free_cache(nl_cache* c) {
  nl_cache_free(c);
}
void free_addr(nl_addr* a) {
  nl_addr_put(a);
}
void free_raddr(rtnl_addr* a) {
  rtnl_addr_put(a);
}
void free_route(rtnl_route* r) {
  rtnl_route_put(r);
}
void free_rule(rtnl_rule* r) {
  rtnl_rule_put(r);
}
void free_link(rtnl_link* l) {
  rtnl_link_put(l);
}

using Cache = Owned<nl_cache, free_cache>;
using Addr = Owned<nl_addr, free_addr>;

std::string err(const std::string& what, int code) {
  return what + ": " + nl_geterror(code);
}

// "addr/len" text of an nl_addr (a zero-length address is the default route of its family).
std::string cidr_text(nl_addr* a, int family) {
  if (!a) return "";
  char buf[INET6_ADDRSTRLEN] = {};
  const unsigned len = nl_addr_get_len(a);
  unsigned char bytes[16] = {};
  if (len > 0 && len <= sizeof bytes) std::memcpy(bytes, nl_addr_get_binary_addr(a), len);
  ::inet_ntop(family, bytes, buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(nl_addr_get_prefixlen(a));
}

std::string host_text(nl_addr* a, int family) {
  const auto c = cidr_text(a, family);
  return c.empty() ? c : c.substr(0, c.find('/'));
}

tl::expected<nl_addr*, std::string> parse_addr(const std::string& text, int family) {
  nl_addr* a = nullptr;
  const int rc = nl_addr_parse(text.c_str(), family, &a);
  if (rc < 0) return tl::unexpected(err("bad address " + text, rc));
  return a;
}

int family_of(const std::string& text) {
  return text.find(':') != std::string::npos ? AF_INET6 : AF_INET;
}

}  // namespace

Netlink::Netlink(nl_sock* sock, const RoutingParams& routing) : sock_(sock), routing_(routing) {}

Netlink::~Netlink() {
  nl_socket_free(sock_);
}

tl::expected<std::unique_ptr<Netlink>, std::string> Netlink::open(const RoutingParams& routing) {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return tl::unexpected(std::string("netlink: out of memory"));
  if (const int rc = nl_connect(sock, NETLINK_ROUTE); rc < 0) {
    nl_socket_free(sock);
    return tl::unexpected(err("netlink: cannot connect", rc));
  }
  return std::unique_ptr<Netlink>(new Netlink(sock, routing));
}

tl::expected<Observation, std::string> Netlink::observe() {
  Observation o;
  {
    Cache links;
    if (const int rc = rtnl_link_alloc_cache(sock_, AF_UNSPEC, &links.p); rc < 0)
      return tl::unexpected(err("netlink: link dump", rc));
    for (nl_object* obj = nl_cache_get_first(links.p); obj; obj = nl_cache_get_next(obj)) {
      auto* l = reinterpret_cast<rtnl_link*>(obj);
      ObservedLink ol;
      ol.ifindex = rtnl_link_get_ifindex(l);
      ol.name = rtnl_link_get_name(l) ? rtnl_link_get_name(l) : "";
      ol.mtu = static_cast<int>(rtnl_link_get_mtu(l));
      ol.up = (rtnl_link_get_flags(l) & IFF_UP) != 0;
      o.links[ol.name] = ol;
    }
  }
  {
    Cache addrs;
    if (const int rc = rtnl_addr_alloc_cache(sock_, &addrs.p); rc < 0)
      return tl::unexpected(err("netlink: address dump", rc));
    for (nl_object* obj = nl_cache_get_first(addrs.p); obj; obj = nl_cache_get_next(obj)) {
      auto* a = reinterpret_cast<rtnl_addr*>(obj);
      const int family = rtnl_addr_get_family(a);
      if (family != AF_INET && family != AF_INET6) continue;
      ObservedAddress oa;
      oa.ifindex = rtnl_addr_get_ifindex(a);
      oa.cidr = host_text(rtnl_addr_get_local(a), family) + "/" + std::to_string(rtnl_addr_get_prefixlen(a));
      oa.label = rtnl_addr_get_label(a) ? rtnl_addr_get_label(a) : "";
      o.addresses.push_back(oa);
    }
  }
  {
    Cache routes;
    if (const int rc = rtnl_route_alloc_cache(sock_, AF_UNSPEC, 0, &routes.p); rc < 0)
      return tl::unexpected(err("netlink: route dump", rc));
    for (nl_object* obj = nl_cache_get_first(routes.p); obj; obj = nl_cache_get_next(obj)) {
      auto* r = reinterpret_cast<rtnl_route*>(obj);
      if (rtnl_route_get_protocol(r) != routing_.protocol || !routing_.in_range(rtnl_route_get_table(r)))
        continue;
      const int family = rtnl_route_get_family(r);
      RouteSpec s;
      s.table = rtnl_route_get_table(r);
      s.dst = cidr_text(rtnl_route_get_dst(r), family);
      s.src = host_text(rtnl_route_get_pref_src(r), family);
      s.unreachable = rtnl_route_get_type(r) == RTN_UNREACHABLE;
      // An unreachable route has no next hop (IPv6 reports one on lo): compare it by table and dst only.
      if (!s.unreachable && rtnl_route_get_nnexthops(r) > 0) {
        rtnl_nexthop* nh = rtnl_route_nexthop_n(r, 0);
        s.ifindex = rtnl_route_nh_get_ifindex(nh);
        s.gateway = host_text(rtnl_route_nh_get_gateway(nh), family);
      }
      o.routes.push_back(s);
    }
  }
  {
    Cache rules;
    if (const int rc = rtnl_rule_alloc_cache(sock_, AF_UNSPEC, &rules.p); rc < 0)
      return tl::unexpected(err("netlink: rule dump", rc));
    for (nl_object* obj = nl_cache_get_first(rules.p); obj; obj = nl_cache_get_next(obj)) {
      auto* r = reinterpret_cast<rtnl_rule*>(obj);
      std::uint8_t proto = 0;
      if (rtnl_rule_get_protocol(r, &proto) < 0 || proto != routing_.protocol) continue;
      RuleSpec s;
      s.family = rtnl_rule_get_family(r);
      s.from = cidr_text(rtnl_rule_get_src(r), s.family);
      s.table = rtnl_rule_get_table(r);
      s.priority = rtnl_rule_get_prio(r);
      o.rules.push_back(s);
    }
  }
  return o;
}

tl::expected<void, std::string> Netlink::execute(const Action& a) {
  int rc = 0;
  switch (a.kind) {
    case ActionKind::set_mtu:
    case ActionKind::set_up: {
      Owned<rtnl_link, free_link> orig(rtnl_link_alloc());
      Owned<rtnl_link, free_link> change(rtnl_link_alloc());
      rtnl_link_set_ifindex(orig.p, a.ifindex);
      if (a.kind == ActionKind::set_mtu)
        rtnl_link_set_mtu(change.p, static_cast<unsigned>(a.mtu));
      else
        rtnl_link_set_flags(change.p, IFF_UP);
      rc = rtnl_link_change(sock_, orig.p, change.p, 0);
      break;
    }
    case ActionKind::add_address:
    case ActionKind::del_address: {
      const int family = family_of(a.address);
      auto local = parse_addr(a.address, family);
      if (!local) return tl::unexpected(local.error());
      Addr l(*local);
      Owned<rtnl_addr, free_raddr> addr(rtnl_addr_alloc());
      rtnl_addr_set_ifindex(addr.p, a.ifindex);
      rtnl_addr_set_family(addr.p, family);
      rtnl_addr_set_local(addr.p, l.p);
      rtnl_addr_set_prefixlen(addr.p, static_cast<int>(nl_addr_get_prefixlen(l.p)));
      if (a.kind == ActionKind::add_address) {
        if (!a.label.empty()) rtnl_addr_set_label(addr.p, a.label.c_str());
        if (family == AF_INET6) rtnl_addr_set_flags(addr.p, IFA_F_NODAD);
        rc = rtnl_addr_add(sock_, addr.p, NLM_F_EXCL);
      } else {
        rc = rtnl_addr_delete(sock_, addr.p, 0);
      }
      break;
    }
    case ActionKind::add_route:
    case ActionKind::del_route: {
      const int family = family_of(a.route.dst);
      Owned<rtnl_route, free_route> route(rtnl_route_alloc());
      rtnl_route_set_family(route.p, static_cast<std::uint8_t>(family));
      rtnl_route_set_table(route.p, a.route.table);
      rtnl_route_set_protocol(route.p, static_cast<std::uint8_t>(routing_.protocol));
      auto dst = parse_addr(a.route.dst, family);
      if (!dst) return tl::unexpected(dst.error());
      Addr d(*dst);
      rtnl_route_set_dst(route.p, d.p);
      Addr src;
      if (!a.route.src.empty()) {
        auto s = parse_addr(a.route.src, family);
        if (!s) return tl::unexpected(s.error());
        src.p = *s;
        rtnl_route_set_pref_src(route.p, src.p);
      }
      if (a.route.unreachable) {
        rtnl_route_set_type(route.p, RTN_UNREACHABLE);
        rtnl_route_set_scope(route.p, RT_SCOPE_UNIVERSE);
        rc = a.kind == ActionKind::add_route ? rtnl_route_add(sock_, route.p, NLM_F_EXCL)
                                             : rtnl_route_delete(sock_, route.p, 0);
        break;
      }
      rtnl_route_set_scope(route.p, a.route.gateway.empty() ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE);
      rtnl_nexthop* nh = rtnl_route_nh_alloc();
      rtnl_route_nh_set_ifindex(nh, a.route.ifindex);
      Addr gw;
      if (!a.route.gateway.empty()) {
        auto g = parse_addr(a.route.gateway, family);
        if (!g) {
          rtnl_route_nh_free(nh);
          return tl::unexpected(g.error());
        }
        gw.p = *g;
        rtnl_route_nh_set_gateway(nh, gw.p);
      }
      rtnl_route_add_nexthop(route.p, nh);  // the route owns nh now
      rc = a.kind == ActionKind::add_route ? rtnl_route_add(sock_, route.p, NLM_F_EXCL)
                                           : rtnl_route_delete(sock_, route.p, 0);
      break;
    }
    case ActionKind::add_rule:
    case ActionKind::del_rule: {
      Owned<rtnl_rule, free_rule> rule(rtnl_rule_alloc());
      rtnl_rule_set_family(rule.p, a.rule.family);
      auto from = parse_addr(a.rule.from, a.rule.family);
      if (!from) return tl::unexpected(from.error());
      Addr f(*from);
      rtnl_rule_set_src(rule.p, f.p);
      rtnl_rule_set_table(rule.p, a.rule.table);
      rtnl_rule_set_prio(rule.p, a.rule.priority);
      rtnl_rule_set_action(rule.p, FR_ACT_TO_TBL);
      rtnl_rule_set_protocol(rule.p, static_cast<std::uint8_t>(routing_.protocol));
      rc = a.kind == ActionKind::add_rule ? rtnl_rule_add(sock_, rule.p, NLM_F_EXCL)
                                          : rtnl_rule_delete(sock_, rule.p, 0);
      break;
    }
  }
  if (rc < 0) return tl::unexpected(err(a.describe() + " failed", rc));
  ++changes_;
  return {};
}

}  // namespace hsns::daemon
