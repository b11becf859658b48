#include "dcb.h"

#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <system_error>

namespace hsns::daemon {
namespace {

// Newer than some distributions' uapi headers (added with apptrust in Linux 6.1/6.2): values fixed by
// the kernel ABI.
constexpr int kAttrAppTrustTable = 11;  // enum ieee_attrs: DCB_ATTR_DCB_APP_TRUST_TABLE
constexpr int kAttrDcbApp = 2;          // enum ieee_attrs_app: DCB_ATTR_DCB_APP (non-IEEE selectors)
constexpr int kSelectorPcp = 255;       // DCB_APP_SEL_PCP
constexpr std::size_t kNlmsgHeader = 16;
constexpr std::size_t kAttrHeader = 4;
constexpr std::size_t kIeeePfcSize = 136;  // sizeof(struct ieee_pfc) in the kernel ABI
constexpr std::size_t kDcbAppSize = 4;     // sizeof(struct dcb_app)

static_assert(sizeof(struct ieee_pfc) == kIeeePfcSize);
static_assert(sizeof(struct dcb_app) == kDcbAppSize);
static_assert(sizeof(struct dcbmsg) == 4);

using Bytes = std::span<const std::uint8_t>;

template <typename T>
T load(Bytes b, std::size_t offset) {
  T v{};
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}

std::size_t align4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

struct Attr {
  int type;
  Bytes payload;
};

// Splits a region into netlink attributes; every length is checked against the region.
tl::expected<std::vector<Attr>, std::string> attributes(Bytes region, const std::string& where) {
  std::vector<Attr> out;
  std::size_t off = 0;
  while (off < region.size()) {
    const std::size_t left = region.size() - off;
    if (left < kAttrHeader)
      return tl::unexpected(where + ": " + std::to_string(left) + " stray bytes at the end");
    const auto len = load<std::uint16_t>(region, off);
    const auto type = load<std::uint16_t>(region, off + 2);
    if (len < kAttrHeader)
      return tl::unexpected(where + ": attribute " + std::to_string(type & NLA_TYPE_MASK) + " has length " +
                            std::to_string(len));
    if (len > left)
      return tl::unexpected(where + ": attribute " + std::to_string(type & NLA_TYPE_MASK) + " of length " +
                            std::to_string(len) + " runs past the end (" + std::to_string(left) +
                            " bytes left)");
    out.push_back({type & NLA_TYPE_MASK, region.subspan(off + kAttrHeader, len - kAttrHeader)});
    off += align4(len);  // the last attribute may lack its padding
  }
  return out;
}

tl::expected<void, std::string> parse_app_table(Bytes payload, DcbQos& q) {
  auto entries = attributes(payload, "DCB_ATTR_IEEE_APP_TABLE");
  if (!entries) return tl::unexpected(entries.error());
  std::map<int, std::set<int>> all;  // DSCP -> every priority it has an entry for
  for (const auto& e : *entries) {
    if (e.type != DCB_ATTR_IEEE_APP && e.type != kAttrDcbApp) continue;
    if (e.payload.size() < kDcbAppSize)
      return tl::unexpected("DCB_ATTR_IEEE_APP_TABLE: entry of " + std::to_string(e.payload.size()) +
                            " bytes, expected struct dcb_app (4)");
    const int selector = e.payload[0];
    const int priority = e.payload[1];
    const int protocol = load<std::uint16_t>(e.payload, 2);
    if (selector != IEEE_8021QAZ_APP_SEL_DSCP) continue;
    if (protocol > 63)
      return tl::unexpected("DCB_ATTR_IEEE_APP_TABLE: DSCP " + std::to_string(protocol) + " > 63");
    if (priority > 7)
      return tl::unexpected("DCB_ATTR_IEEE_APP_TABLE: DSCP " + std::to_string(protocol) + " to priority " +
                            std::to_string(priority) + " > 7");
    q.dscp_prio.emplace(protocol, priority);  // the first entry of a DSCP wins
    all[protocol].insert(priority);
  }
  for (const auto& [dscp, prios] : all)
    if (prios.size() > 1) q.ambiguous_dscp[dscp] = std::vector<int>(prios.begin(), prios.end());
  return {};
}

tl::expected<void, std::string> parse_trust_table(Bytes payload, DcbQos& q) {
  auto entries = attributes(payload, "DCB_ATTR_DCB_APP_TRUST_TABLE");
  if (!entries) return tl::unexpected(entries.error());
  for (const auto& e : *entries) {
    if (e.type != DCB_ATTR_IEEE_APP && e.type != kAttrDcbApp) continue;
    if (e.payload.empty()) return tl::unexpected(std::string("DCB_ATTR_DCB_APP_TRUST_TABLE: empty selector"));
    q.trust_order.push_back(dcb_selector_name(e.payload[0]));
  }
  return {};
}

tl::expected<void, std::string> parse_ieee(Bytes payload, DcbQos& q) {
  auto attrs = attributes(payload, "DCB_ATTR_IEEE");
  if (!attrs) return tl::unexpected(attrs.error());
  for (const auto& a : *attrs) {
    if (a.type == DCB_ATTR_IEEE_PFC) {
      if (a.payload.size() < kIeeePfcSize)
        return tl::unexpected("DCB_ATTR_IEEE_PFC: " + std::to_string(a.payload.size()) +
                              " bytes, expected struct ieee_pfc (136)");
      q.pfc_cap = a.payload[0];
      q.pfc_enabled = a.payload[1];
    } else if (a.type == DCB_ATTR_IEEE_APP_TABLE) {
      q.app_table = true;
      if (auto r = parse_app_table(a.payload, q); !r) return r;
    } else if (a.type == kAttrAppTrustTable) {
      q.trust_table = true;
      q.trust_order.clear();
      if (auto r = parse_trust_table(a.payload, q); !r) return r;
    }
  }
  return {};
}

std::string errno_text(int e) {
  return std::error_code(e, std::generic_category()).message();
}

}  // namespace

std::vector<int> DcbQos::pfc_priorities() const {
  std::vector<int> out;
  if (!pfc_enabled) return out;
  for (int p = 0; p < 8; ++p)
    if ((*pfc_enabled >> p) & 1) out.push_back(p);
  return out;
}

std::vector<int> DcbQos::dscp_for_priority(int prio) const {
  std::vector<int> out;
  for (const auto& [dscp, p] : dscp_prio) {
    const auto more = ambiguous_dscp.find(dscp);
    if (p == prio || (more != ambiguous_dscp.end() &&
                      std::find(more->second.begin(), more->second.end(), prio) != more->second.end()))
      out.push_back(dscp);
  }
  return out;
}

std::string dcb_selector_name(int selector) {
  switch (selector) {
    case IEEE_8021QAZ_APP_SEL_ETHERTYPE:
      return "ethertype";
    case IEEE_8021QAZ_APP_SEL_STREAM:
      return "stream-port";
    case IEEE_8021QAZ_APP_SEL_DGRAM:
      return "dgram-port";
    case IEEE_8021QAZ_APP_SEL_ANY:
      return "port";
    case IEEE_8021QAZ_APP_SEL_DSCP:
      return "dscp";
    case kSelectorPcp:
      return "pcp";
    default:
      return "selector " + std::to_string(selector);
  }
}

tl::expected<DcbQos, std::string> parse_dcb_ieee_reply(Bytes m) {
  if (m.size() < kNlmsgHeader)
    return tl::unexpected("truncated: " + std::to_string(m.size()) + " bytes, less than a netlink header");
  const auto len = load<std::uint32_t>(m, 0);
  const auto type = load<std::uint16_t>(m, 4);
  if (len < kNlmsgHeader)
    return tl::unexpected("nlmsg_len " + std::to_string(len) + " is shorter than its header");
  if (len > m.size())
    return tl::unexpected("truncated: nlmsg_len " + std::to_string(len) + ", only " +
                          std::to_string(m.size()) + " bytes");
  const Bytes body = m.subspan(kNlmsgHeader, len - kNlmsgHeader);

  if (type == NLMSG_ERROR) {
    if (body.size() < sizeof(std::int32_t)) return tl::unexpected(std::string("truncated NLMSG_ERROR"));
    const auto err = load<std::int32_t>(body, 0);
    if (err == 0) return tl::unexpected(std::string("the kernel acknowledged without a DCB reply"));
    if (err == -EOPNOTSUPP) return DcbQos{};  // no dcbnl_ops on this netdev (or no CONFIG_DCB)
    if (err == -ENODEV) return tl::unexpected(std::string("no such netdev"));
    if (err > 0 || err < -4095) return tl::unexpected("NLMSG_ERROR with invalid code " + std::to_string(err));
    return tl::unexpected("kernel error: " + errno_text(-err));
  }
  if (type != RTM_GETDCB) return tl::unexpected("unexpected netlink message type " + std::to_string(type));
  if (body.size() < sizeof(struct dcbmsg)) return tl::unexpected(std::string("truncated: no struct dcbmsg"));
  if (body[1] != DCB_CMD_IEEE_GET)
    return tl::unexpected("reply to DCB command " + std::to_string(body[1]) +
                          ", expected DCB_CMD_IEEE_GET (" + std::to_string(DCB_CMD_IEEE_GET) + ")");
  auto attrs = attributes(body.subspan(sizeof(struct dcbmsg)), "RTM_GETDCB");
  if (!attrs) return tl::unexpected(attrs.error());

  DcbQos q;
  q.exposed = true;
  bool ieee = false;
  for (const auto& a : *attrs) {
    if (a.type == DCB_ATTR_IFNAME) {
      const auto nul = std::find(a.payload.begin(), a.payload.end(), std::uint8_t{0});
      if (nul == a.payload.end()) return tl::unexpected(std::string("DCB_ATTR_IFNAME is not NUL-terminated"));
      q.ifname.assign(a.payload.begin(), nul);
    } else if (a.type == DCB_ATTR_IEEE) {
      ieee = true;
      if (auto r = parse_ieee(a.payload, q); !r) return tl::unexpected(r.error());
    } else if (a.type == DCB_ATTR_DCBX) {
      if (a.payload.empty()) return tl::unexpected(std::string("DCB_ATTR_DCBX is empty"));
      q.dcbx = a.payload[0];
    }
  }
  if (!ieee) return tl::unexpected(std::string("reply without DCB_ATTR_IEEE"));
  if (q.trust_table)
    q.trust = q.trust_order.empty() ? std::string("none") : q.trust_order.front();
  else if (!q.dscp_prio.empty())
    q.trust = "dscp";
  return q;
}

tl::expected<DcbQos, std::string> read_dcb_qos(const std::string& netdev) {
  const std::string who = "dcb " + netdev + ": ";
  auto fail = [&](const std::string& what) { return tl::unexpected(who + what); };
  if (netdev.empty() || netdev.size() >= IFNAMSIZ || netdev.find('/') != std::string::npos)
    return fail("invalid netdev name");

  std::unique_ptr<nl_sock, void (*)(nl_sock*)> sock(nl_socket_alloc(), nl_socket_free);
  if (!sock) return fail("cannot allocate a netlink socket");
  if (const int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0)
    return fail(std::string("connect: ") + nl_geterror(rc));
  nl_socket_disable_auto_ack(sock.get());  // the reply (or NLMSG_ERROR) is the answer
  const timeval timeout{2, 0};
  if (setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0)
    return fail("SO_RCVTIMEO: " + errno_text(errno));

  std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg(nlmsg_alloc_simple(RTM_GETDCB, 0), nlmsg_free);
  if (!msg) return fail("cannot allocate the request");
  struct dcbmsg hdr {};
  hdr.dcb_family = AF_UNSPEC;
  hdr.cmd = DCB_CMD_IEEE_GET;
  if (nlmsg_append(msg.get(), &hdr, sizeof hdr, NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), DCB_ATTR_IFNAME, netdev.c_str()) < 0)
    return fail("cannot build the request");
  if (const int rc = nl_send_auto(sock.get(), msg.get()); rc < 0)
    return fail(std::string("send: ") + nl_geterror(rc));
  const std::uint32_t seq = nlmsg_hdr(msg.get())->nlmsg_seq;

  // Only the kernel's answer to this request counts; anything else on the socket is skipped.
  for (int reads = 0; reads < 8; ++reads) {
    sockaddr_nl peer{};
    unsigned char* raw = nullptr;
    const int n = nl_recv(sock.get(), &peer, &raw, nullptr);
    const auto release = [](unsigned char* b) { std::free(b); };
    std::unique_ptr<unsigned char, decltype(release)> buf(raw, release);
    if (n < 0) return fail(std::string("receive: ") + nl_geterror(n));
    if (n == 0 || !buf) return fail("no answer from the kernel within 2 s");
    if (peer.nl_pid != 0) continue;
    const Bytes all(buf.get(), static_cast<std::size_t>(n));
    std::size_t off = 0;
    while (all.size() - off >= kNlmsgHeader) {
      const Bytes rest = all.subspan(off);
      const auto len = load<std::uint32_t>(rest, 0);
      if (len < kNlmsgHeader || len > rest.size()) {
        auto r = parse_dcb_ieee_reply(rest);  // names the length problem
        return fail(r ? std::string("malformed reply") : r.error());
      }
      if (load<std::uint32_t>(rest, 8) == seq) {
        auto r = parse_dcb_ieee_reply(rest.first(len));
        if (!r) return fail(r.error());
        return r;
      }
      off += align4(len);
      if (off >= all.size()) break;
    }
  }
  return fail("no answer to the request");
}

}  // namespace hsns::daemon
