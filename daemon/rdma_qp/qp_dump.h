// The RDMA queue pairs of a host as the kernel's RDMA netlink (nldev, drivers/infiniband/core/nldev.c)
// dumps them: what `rdma resource show qp` and `rdma resource show cm_id` print. Parsing only; the socket
// is rdma_netlink.h.
//
// The kernel answers a dump request (NLM_F_REQUEST | NLM_F_DUMP, no family header, message type
// RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd)) with NLM_F_MULTI messages of that type, one or more per datagram,
// then NLMSG_DONE (payload: s32 status, 0 or a negative errno), or with NLMSG_ERROR. The resource dumps
// need RDMA_NLDEV_ATTR_DEV_INDEX in the request (one dump per device); every message of them is:
//   DEV_INDEX u32, DEV_NAME string, RES_QP nest { RES_QP_ENTRY nest { PORT_INDEX u32 (absent before the
//   QP is bound to a port), LQPN u32, RQPN u32 + RQ_PSN u32 (RC and UC only), SQ_PSN u32,
//   PATH_MIG_STATE u8 (RC, UC, XRC), TYPE u8 (enum ib_qp_type), STATE u8 (enum ib_qp_state), PDN u32
//   (user QPs), then PID u32 (user QPs whose task lives) or KERN_NAME string (kernel QPs), then the
//   driver's DRIVER nest } ... }
// and for RDMA_NLDEV_CMD_RES_CM_ID_GET the same with RES_CM_ID / RES_CM_ID_ENTRY { PORT_INDEX, LQPN +
// TYPE (when the ID has a QP), PS u32, STATE u8, SRC_ADDR / DST_ADDR (struct sockaddr_storage), PID or
// KERN_NAME, CM_IDN u32 }. The QP entries carry no addresses: the source and destination IP (the RoCE
// GIDs of an rdma_cm connection) come from the CM ID with the same device and local QPN (join_cm_addresses).
// A QP connected without rdma_cm (out-of-band QPN exchange, as NCCL/HCCL do) has no CM ID, and the
// kernel exposes its GIDs nowhere in nldev: such a QP has no addresses.
// RDMA_NLDEV_CMD_GET (dump, no device index) lists the devices: DEV_INDEX and DEV_NAME among others.
//
// Contract:
// - parse_*_messages() read one receive buffer (one or several messages) of a dump's answer, checked by
//   netlink_reader.h, and append what they find; true once NLMSG_DONE was read (anything after it in the
//   buffer is refused). A message of another type, or (when `seq` is given) another sequence number, is
//   "unexpected"; an entry without LQPN, TYPE or STATE (QP) is "malformed"; unknown attributes are skipped.
// - parse_*_dump() read a whole answer (every buffer, end to end) and refuse one without NLMSG_DONE
//   ("incomplete"): the form of the recorded replies and the fuzzer.
// - Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netlink_reader.h"

namespace hsns::daemon::rdma {

inline constexpr std::size_t kMaxDeviceName = 64;  // IB_DEVICE_NAME_MAX
inline constexpr std::size_t kMaxKernName = 64;

struct RdmaDevice {
  std::uint32_t index = 0;
  std::string name;
  bool operator==(const RdmaDevice&) const = default;
};

struct QpEntry {
  std::uint32_t dev_index = 0;
  std::string device;
  std::uint32_t port = 0;  // 0: not bound to a port yet (the kernel sends no PORT_INDEX)
  std::uint32_t lqpn = 0;
  std::optional<std::uint32_t> rqpn;  // RC and UC
  std::uint8_t type = 0;              // enum ib_qp_type
  std::uint8_t state = 0;             // enum ib_qp_state
  std::optional<std::uint32_t> sq_psn;
  std::optional<std::uint32_t> rq_psn;
  std::optional<std::uint32_t> pid;  // user QPs whose task lives
  std::string kern_name;             // kernel QPs: the owning module ("ib_core", "rdma_cm", ...)
  std::optional<SockAddr> src;       // from the QP's rdma_cm ID (join_cm_addresses)
  std::optional<SockAddr> dst;
  bool operator==(const QpEntry&) const = default;
};

struct CmIdEntry {
  std::uint32_t dev_index = 0;
  std::string device;
  std::uint32_t port = 0;
  std::optional<std::uint32_t> lqpn;  // only when the ID has a QP
  std::optional<SockAddr> src;
  std::optional<SockAddr> dst;
  bool operator==(const CmIdEntry&) const = default;
};

// RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd): the message type of an nldev request and of its answers.
std::uint16_t nldev_message_type(std::uint32_t command);

tl::expected<bool, NlError> parse_device_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                                  std::vector<RdmaDevice>& out);
tl::expected<bool, NlError> parse_qp_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                              std::vector<QpEntry>& out);
tl::expected<bool, NlError> parse_cm_id_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                                 std::vector<CmIdEntry>& out);

tl::expected<std::vector<RdmaDevice>, NlError> parse_device_dump(Bytes answer);
tl::expected<std::vector<QpEntry>, NlError> parse_qp_dump(Bytes answer);
tl::expected<std::vector<CmIdEntry>, NlError> parse_cm_id_dump(Bytes answer);

// Gives each QP the addresses of the CM ID with its device index and local QPN (the first one that has
// them); QPs without one keep none.
void join_cm_addresses(std::vector<QpEntry>& qps, const std::vector<CmIdEntry>& cm_ids);

// `rdma resource show qp`'s names: "SMI", "GSI", "RC", "UC", "UD", "RAW_IPV6", "RAW_ETHERTYPE",
// "RAW_PACKET", "XRC_INI", "XRC_TGT", "DRIVER" (0xff), otherwise "UNKNOWN"; and "RESET", "INIT", "RTR",
// "RTS", "SQD", "SQE", "ERR", otherwise "UNKNOWN".
std::string qp_type_name(std::uint8_t type);
std::string qp_state_name(std::uint8_t state);
inline constexpr std::uint8_t kQpTypeRc = 2;  // IB_QPT_RC

}  // namespace hsns::daemon::rdma
