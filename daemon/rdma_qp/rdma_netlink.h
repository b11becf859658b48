// The host's RDMA queue pairs read over a NETLINK_RDMA socket (what `rdma resource show qp` and
// `rdma resource show cm_id` print), parsed by qp_dump.h.
//
// Contract:
// - read_qp_snapshot() opens a socket per call (closed before it returns), dumps the devices
//   (RDMA_NLDEV_CMD_GET), then per device the QPs (RDMA_NLDEV_CMD_RES_QP_GET) and the CM IDs
//   (RDMA_NLDEV_CMD_RES_CM_ID_GET), each a request with NLM_F_DUMP and DEV_INDEX, and joins the CM IDs'
//   addresses into the QPs. Datagrams not from the kernel are skipped; every read waits at most 2 s.
// - A kernel without the RDMA core has no NETLINK_RDMA: socket() fails with EPROTONOSUPPORT, answered as
//   the error "absent". A failed device or QP dump fails the read (no partial inventory); a failed CM ID
//   dump (rdma_cm not loaded, a device gone meanwhile) only leaves the QPs without addresses and is
//   returned in `warnings` to be counted.
// - Never throws; thread-safe (no shared state).
#pragma once

#include <vector>

#include "qp_dump.h"

namespace hsns::daemon::rdma {

struct QpSnapshot {
  std::vector<RdmaDevice> devices;
  std::vector<QpEntry> qps;
  std::vector<NlError> warnings;
};

tl::expected<QpSnapshot, NlError> read_qp_snapshot();

}  // namespace hsns::daemon::rdma
