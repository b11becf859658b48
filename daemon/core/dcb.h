// DCB netlink (IEEE 802.1Qaz) source of RoCE QoS: what the kernel's dcbnl says about a netdev's PFC, the
// APP table (DSCP -> priority map) and, on kernels with apptrust (6.x, drivers implementing
// dcbnl_getapptrust), the selector trust order. Read-only: only RTM_GETDCB / DCB_CMD_IEEE_GET is sent.
//
// Request: nlmsghdr{RTM_GETDCB, NLM_F_REQUEST} + struct dcbmsg{AF_UNSPEC, DCB_CMD_IEEE_GET} +
// DCB_ATTR_IFNAME, on a NETLINK_ROUTE socket in the caller's network namespace (libnl-3 core).
// Reply (host byte order):
//   DCB_ATTR_IFNAME (string), DCB_ATTR_IEEE (nest) {
//     DCB_ATTR_IEEE_PFC            struct ieee_pfc: pfc_cap, pfc_en (bit p = PFC on priority p), ...
//     DCB_ATTR_IEEE_APP_TABLE      nest of DCB_ATTR_IEEE_APP / DCB_ATTR_DCB_APP, each a struct dcb_app;
//                                  selector 5 (IEEE_8021QAZ_APP_SEL_DSCP): protocol = DSCP, priority
//     DCB_ATTR_DCB_APP_TRUST_TABLE nest of u8 selectors in trust order (5 = dscp, 255 = pcp)
//     ETS, MAXRATE, BUFFER, QCN, peer attributes: skipped }, DCB_ATTR_DCBX (u8, optional)
// or NLMSG_ERROR: -EOPNOTSUPP (netdev without dcbnl_ops such as veth or lo, or a kernel without
// CONFIG_DCB) means "DCB not exposed" (exposed = false), not a failure; any other error is an error.
//
// Contract:
// - parse_dcb_ieee_reply() is pure: it reads one netlink message (the first in the span; bytes after
//   its aligned nlmsg_len are ignored) with every length checked against the span, never reads past
//   it, and returns an error string for anything truncated or malformed (a PFC attribute shorter than
//   struct ieee_pfc, an APP entry shorter than struct dcb_app, a DSCP above 63, a priority above 7,
//   an attribute running past its nest, a reply to another command). Unknown attributes are skipped.
// - trust: the first selector of the trust table when the kernel sends one ("none" for an empty
//   table); otherwise "dscp" when the APP table has DSCP entries (mlx5 switches to DSCP trust when the
//   first DSCP entry is added and back to PCP when the last one is removed); otherwise absent.
// - read_dcb_qos() opens a socket per call (owned, closed before returning), skips messages that are
//   not the answer to its request (at most 8 reads, each waiting at most 2 s) and never throws.
//   Errors name the netdev: "dcb <netdev>: no such netdev", ...
// - Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::daemon {

struct DcbQos {
  bool exposed = false;                     // false: the netdev has no DCB (kernel said EOPNOTSUPP)
  std::string ifname;                       // DCB_ATTR_IFNAME of the reply
  std::optional<std::uint8_t> pfc_enabled;  // pfc_en bitmap: bit p set = PFC on priority p
  std::optional<std::uint8_t> pfc_cap;      // how many priorities may have PFC at once
  std::optional<std::string> trust;         // "dscp", "pcp", another selector name, or "none"
  std::vector<std::string> trust_order;     // the trust table, first = most trusted (empty: not sent)
  bool trust_table = false;                 // DCB_ATTR_DCB_APP_TRUST_TABLE was present
  bool app_table = false;                   // DCB_ATTR_IEEE_APP_TABLE was present
  std::map<int, int> dscp_prio;             // DSCP -> priority (APP table DSCP entries; the first wins)
  std::map<int, std::vector<int>> ambiguous_dscp;  // DSCPs with entries for several priorities -> all
  std::optional<std::uint8_t> dcbx;                // DCB_ATTR_DCBX mode flags

  // Priorities with PFC enabled, ascending (empty when pfc_enabled is absent).
  std::vector<int> pfc_priorities() const;
  // DSCP values with an APP entry for priority prio, ascending.
  std::vector<int> dscp_for_priority(int prio) const;
};

// Name of a DCB APP selector: 5 "dscp", 255 "pcp", 1 "ethertype", 2 "stream-port", 3 "dgram-port",
// 4 "port", others "selector <n>".
std::string dcb_selector_name(int selector);

tl::expected<DcbQos, std::string> parse_dcb_ieee_reply(std::span<const std::uint8_t> netlink_message);

tl::expected<DcbQos, std::string> read_dcb_qos(const std::string& netdev);

}  // namespace hsns::daemon
