/* Structures shared by bpf/roce_flow.bpf.c and its userspace consumer (daemon/flows, tests, bench).
 *
 * Contract:
 * - Fixed-width types only, explicit padding, no implicit holes: the layout is the same for clang -target
 *   bpf and g++ x86_64. Sizes are checked by static asserts on both sides.
 * - struct roce_flow_key is the per-direction flow key (ifindex, direction, source IP, destination IP, UDP
 *   source port, destination QP). IPv4 addresses are stored in the first 4 bytes of src/dst (network
 *   order), the other 12 bytes are zero; family tells which.
 * - struct roce_flow_stats is the value of the flow table and the payload of an overflow ring buffer
 *   record. Counters add up; `bytes` is the IP packet length taken from the IP header (IPv4 total length,
 *   IPv6 payload length + 40), so it does not depend on VLAN tags, mirroring encapsulation or truncation.
 *   The opcode classes (ROCE_OP_*) partition `packets`.
 * - PSN tracking covers "data" packets (every class but ACK and CNP): a regression is a packet whose PSN
 *   is not after the previous data PSN of the flow in 24-bit serial arithmetic (retransmission, go-back-N).
 *   first_psn/last_psn let the harvester detect a regression across a harvest boundary.
 * - roce_counters is indexed by enum roce_counter; every loss point and every malformed case has one.
 */
#ifndef HSNS_BPF_ROCE_FLOW_H
#define HSNS_BPF_ROCE_FLOW_H

#include <linux/types.h>

#define ROCE_UDP_PORT 4791
#define ROCE_OPCODE_CNP 0x81
#define ROCE_PSN_MASK 0xFFFFFFu

enum roce_direction {
  ROCE_DIR_INGRESS = 0,
  ROCE_DIR_EGRESS = 1,
  ROCE_DIR_XDP = 2,
};

enum roce_op_class {
  ROCE_OP_SEND = 0,
  ROCE_OP_WRITE = 1,
  ROCE_OP_READ_REQ = 2,
  ROCE_OP_READ_RESP = 3,
  ROCE_OP_ACK = 4,
  ROCE_OP_ATOMIC = 5,
  ROCE_OP_CNP = 6,
  ROCE_OP_OTHER = 7,
  ROCE_OP_CLASSES = 8,
};

enum roce_nak {
  ROCE_NAK_PSN_SEQ = 0,    /* AETH syndrome 0x60 */
  ROCE_NAK_INV_REQ = 1,    /* 0x61 */
  ROCE_NAK_REM_ACCESS = 2, /* 0x62 */
  ROCE_NAK_REM_OP = 3,     /* 0x63 */
  ROCE_NAK_RNR = 4,        /* 0x20..0x3F */
  ROCE_NAK_OTHER = 5,      /* 0x64..0x7F (invalid RD request, reserved) */
  ROCE_NAK_KINDS = 6,
};

enum roce_counter {
  ROCE_CNT_PACKETS = 0,     /* every packet the program saw: derived, see roce_counter_is_outcome */
  ROCE_CNT_ROCE,            /* RoCEv2 packets accounted (table or ring buffer) */
  ROCE_CNT_NON_ROCE,        /* well-formed non-RoCE packets */
  ROCE_CNT_TABLE_FULL,      /* flow insert failed: record went to the ring buffer */
  ROCE_CNT_RINGBUF_DROP,    /* ring buffer full too: packet lost */
  ROCE_CNT_TRUNC_L2,        /* Ethernet / VLAN header truncated */
  ROCE_CNT_TRUNC_L3,        /* IPv4 / IPv6 header truncated */
  ROCE_CNT_BAD_IP,          /* bad IP version, IHL or total/payload length */
  ROCE_CNT_IP_FRAGMENT,     /* IPv4 fragment (not parsed) */
  ROCE_CNT_IPV6_EXT,        /* IPv6 extension header before UDP (not parsed) */
  ROCE_CNT_TRUNC_UDP,       /* UDP header truncated */
  ROCE_CNT_BAD_UDP_LEN,     /* UDP length shorter than UDP+BTH or longer than the IP payload */
  ROCE_CNT_TRUNC_BTH,       /* RoCEv2 port but BTH truncated */
  ROCE_CNT_TRUNC_AETH,      /* ACK without a complete AETH */
  ROCE_CNT_UNKNOWN_OPCODE,  /* reserved / vendor opcode: accounted in ROCE_OP_OTHER */
  ROCE_CNT_BAD_BTH_VERSION, /* BTH transport header version != 0: not accounted */
  ROCE_CNT_GRE_NOT_ERSPAN,  /* GRE whose protocol is not ERSPAN II/III */
  ROCE_CNT_TRUNC_ERSPAN,    /* GRE / ERSPAN header truncated or bad ERSPAN version */
  ROCE_CNT_ERSPAN,          /* ERSPAN frames decapsulated */
  ROCE_CNT_VLAN_TOO_DEEP,   /* more than two VLAN tags */
  ROCE_CNT_MAX,
};

/* Every packet ends in exactly one outcome counter; ROCE_CNT_PACKETS is their sum (the program does not
 * count it itself). TABLE_FULL, UNKNOWN_OPCODE and ERSPAN are annotations, not outcomes. */
static inline int roce_counter_is_outcome(int c) {
  return c != ROCE_CNT_PACKETS && c != ROCE_CNT_TABLE_FULL && c != ROCE_CNT_UNKNOWN_OPCODE &&
         c != ROCE_CNT_ERSPAN && c < ROCE_CNT_MAX;
}

struct roce_flow_key {
  __u32 ifindex;
  __u8 direction; /* enum roce_direction */
  __u8 family;    /* 4 or 6 */
  __u16 sport;    /* UDP source port, host order */
  __u8 src[16];
  __u8 dst[16];
  __u32 dest_qp; /* 24-bit destination QP */
  __u32 pad;
};

struct roce_flow_stats {
  __u64 packets;
  __u64 bytes;
  __u64 first_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
  __u64 last_ns;
  __u64 op[ROCE_OP_CLASSES];
  __u64 ect; /* ECN ECT(0)/ECT(1) */
  __u64 ce;  /* ECN CE */
  __u64 cnp;
  __u64 nak[ROCE_NAK_KINDS];
  __u64 psn_regressions;
  __u32 first_psn; /* PSN of the first data packet of this record */
  __u32 last_psn;  /* PSN of the latest data packet */
  __u32 max_psn;   /* highest data PSN (serial arithmetic) */
  __u32 has_psn;   /* 1 when first/last/max_psn are valid */
};

struct roce_overflow_event {
  struct roce_flow_key key;
  struct roce_flow_stats stats;
};

#ifdef __cplusplus
static_assert(sizeof(struct roce_flow_key) == 48, "roce_flow_key layout");
static_assert(sizeof(struct roce_flow_stats) == 192, "roce_flow_stats layout");
#else
_Static_assert(sizeof(struct roce_flow_key) == 48, "roce_flow_key layout");
_Static_assert(sizeof(struct roce_flow_stats) == 192, "roce_flow_stats layout");
#endif

#endif /* HSNS_BPF_ROCE_FLOW_H */
