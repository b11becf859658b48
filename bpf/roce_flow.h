/* Structures shared by bpf/roce_flow.bpf.c and its userspace consumer (daemon/flows, tests, bench).
 *
 * Contract:
 * - Fixed-width types only, explicit padding, no implicit holes: the layout is the same for clang -target
 *   bpf and g++ x86_64. Sizes are checked by static asserts on both sides.
 * - struct roce_flow_key is the per-direction flow key (ifindex, direction, source IP, destination IP, UDP
 *   source port, destination QP). IPv4 addresses are stored in the first 4 bytes of src/dst (network
 *   order), the other 12 bytes are zero; family tells which.
 * - struct roce_flow_stats is a flow record: the payload of an overflow ring buffer record and what the
 *   harvester returns. Counters add up; `bytes` is the IP packet length taken from the IP header (IPv4
 *   total length, IPv6 payload length + 40), so it does not depend on VLAN tags, mirroring encapsulation or
 *   truncation. The opcode classes (ROCE_OP_*) partition `packets`.
 * - struct roce_flow_slot is one slot of a flow table: an open-addressing table in an mmapable BPF array of
 *   roce_table_slots(table_size) slots (a power of two, at least 1.5 x table_size). A flow lives in the
 *   first slot of its probe sequence (roce_key_digest() & mask, +1, ... at most ROCE_MAX_PROBES) that is
 *   free or holds its key. A slot is claimed by a compare-and-swap of `tag` from 0 to the digest | 1, then
 *   the claimer writes every other field and publishes with `ready` = 1 (atomic exchange). The harvester
 *   clears a harvested slot (zeroing `ready`, then `tag`) only once its record is written (two phases,
 *   struct roce_epoch_state). `packets` and `cnp` are derived (roce_slot_stats):
 *   packets is the sum of the opcode classes, cnp the CNP class.
 * - struct roce_psn_entry is one slot of the userspace-only last-PSN table (pinned mmapable array, same
 *   slot count and probe sequence; a slot with family 0 is free).
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
  __u64
      first_ns; /* CLOCK_MONOTONIC_COARSE ns; in a ring buffer record: jiffies, converted by the harvester */
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

/* Longest probe sequence of a flow table lookup; with at most table_size flows in at least 1.5 x
 * table_size slots, a longer run of occupied slots is practically impossible. */
#define ROCE_MAX_PROBES 64

struct roce_flow_slot {
  /* cache line 0: claim and key (read by every packet) */
  __u64 tag;   /* 0: free; else roce_key_digest(key) | 1 */
  __u64 ready; /* 1 once key and the first packet's counts are written */
  struct roce_flow_key key;
  /* cache line 1: written by every packet */
  __u64 bytes;
  __u64 last_jiffies; /* bpf_jiffies64(): the harvester converts to ns (struct roce_clock_sample) */
  __u64 first_jiffies;
  __u64 ect;
  __u64 ce;
  __u64 psn_regressions;
  __u32 first_psn;
  __u32 last_psn;
  __u32 max_psn;
  __u32 has_psn;
  /* cache lines 2, 3 */
  __u64 op[ROCE_OP_CLASSES];
  __u64 nak[ROCE_NAK_KINDS];
  __u64 slot; /* 0 in a table; in a roce_harvest_out copy: the table slot it was copied from */
  __u64 pad1;
};

struct roce_psn_entry {
  struct roce_flow_key key; /* key.family == 0: free slot */
  __u32 last_psn;           /* last data PSN of the flow at the harvest `generation` */
  __u32 generation;         /* harvest number (of the process that wrote it) */
};

#ifdef __cplusplus
static_assert(sizeof(struct roce_flow_key) == 48, "roce_flow_key layout");
static_assert(sizeof(struct roce_flow_stats) == 192, "roce_flow_stats layout");
static_assert(sizeof(struct roce_flow_slot) == 256, "roce_flow_slot layout");
static_assert(sizeof(struct roce_psn_entry) == 56, "roce_psn_entry layout");
#else
_Static_assert(sizeof(struct roce_flow_key) == 48, "roce_flow_key layout");
_Static_assert(sizeof(struct roce_flow_stats) == 192, "roce_flow_stats layout");
_Static_assert(sizeof(struct roce_flow_slot) == 256, "roce_flow_slot layout");
_Static_assert(sizeof(struct roce_psn_entry) == 56, "roce_psn_entry layout");
#endif

/* One reading of the kernel's tick counter and coarse clock (the roce_tc_clock program): the harvester
 * converts the programs' jiffies timestamps with two of them. */
struct roce_clock_sample {
  __u64 jiffies;
  __u64 coarse_ns; /* bpf_ktime_get_coarse_ns (CLOCK_MONOTONIC_COARSE), updated on the same tick */
};

/* Context of the roce_harvest and roce_clear programs (BPF_PROG_TYPE_SYSCALL, run by the harvester with
 * bpf_prog_test_run_opts) on flow table `table` (0: roce_flows_a, 1: roce_flows_b), which no program writes
 * (the inactive one):
 * - roce_harvest copies the claimed slots [start, slots) to roce_harvest_out[0, records) without
 *   clearing them (the harvester skips a copy whose `ready` is 0: claimed, never published), stopping when
 * roce_harvest_out (ROCE_HARVEST_OUT slots, mapped by the harvester) is full. On return `start` is where to
 * continue (the table's slot count when done). With walk = ROCE_WALK_OCCUPIED it reads only the slots
 * the occupancy bits name (and drops the bits of slots free in both tables); `visited` = slots read.
 *   Each copy's `slot` is the table slot it came from.
 * - roce_clear clears every claimed slot of [start, slots) (`ready`, then `tag`) in one run; `records` =
 *   slots cleared. Run once the copied records are durably written (FlowProbe::commit).
 * - roce_clear_listed does the same for the `listed` slots named by roce_clear_list[0, listed) (64-bit
 *   entries: the `slot`s
 *   of a harvest's copies, written there by the harvester through its mapping) without walking the table:
 *   a slot that is not claimed is left alone, an index past the table is skipped; `records` = slots
 *   cleared, `start` = the table's slot count. The harvester's commit uses it when the list holds every
 *   copy of the batch's table, roce_clear otherwise (after a restart). */
#define ROCE_HARVEST_OUT 4096
/* roce_harvest's walk: every slot of the table, or only the slots roce_occupied names (bpf/roce_flow.bpf.c;
 * complete for a table only the programs of this load wrote). */
#define ROCE_WALK_TABLE 0
#define ROCE_WALK_OCCUPIED 1
struct roce_harvest_ctx {
  __u32 table;
  __u32 start;
  __u32 records; /* slots copied (or cleared) by this run */
  __u32 listed;  /* roce_clear_listed: entries of roce_clear_list to clear */
  __u32 walk;    /* roce_harvest: ROCE_WALK_* */
  __u32 visited; /* roce_harvest: table slots read by this run */
};

/* The harvest epochs (pinned array roce_epoch, one entry; userspace only, updated with one
 * bpf_map_update_elem each, so a killed harvester leaves either the old or the new state). Epoch E is the
 * E-th harvest batch since the maps were created (continued from the sink's last epoch when that is
 * higher). An epoch is pending from the moment its records are copied (the inactive table and the overflow
 * ring buffer still hold them) until the harvester committed it (records written, PSN state advanced, ring
 * consumed up to ring_end, table cleared); while one is pending the tables are not flipped. */
#define ROCE_PHASE_DRAINED 1     /* copied; PSN state not yet advanced */
#define ROCE_PHASE_PSN_APPLIED 2 /* PSN state advanced (ring and table not yet released) */
struct roce_epoch_state {
  __u64 epoch;     /* last epoch drained */
  __u64 committed; /* last epoch committed: epoch > committed means `epoch` is pending */
  __u64 ring_end;  /* overflow ring consumer position once the pending epoch is committed */
  __u32 table;     /* table index + 1 of the pending epoch (0: none) */
  __u32 phase;     /* ROCE_PHASE_* of the pending epoch */
  __u32 clean;     /* table index + 1 of a table known to be empty (0: unknown) */
  __u32 pad;
};
/* Slots of a flow table (and of the last-PSN table) holding table_size flows: the power of two >= 1.5 x
 * table_size. */
static inline __u32 roce_table_slots(__u32 table_size) {
  __u32 want = table_size + table_size / 2;
  __u32 n = 1;
  while (n < want) n <<= 1;
  return n;
}

/* 64-bit digest of the six little-endian 64-bit words of a struct roce_flow_key (the same on both sides:
 * the eBPF target and x86_64 are little-endian). Low bits index the table, all bits form the tag. */
static inline __u64 roce_digest_words(__u64 w0, __u64 w1, __u64 w2, __u64 w3, __u64 w4, __u64 w5) {
  __u64 h = (w0 * 0x9E3779B97F4A7C15ULL) ^ (w1 * 0xC2B2AE3D27D4EB4FULL) ^ (w2 * 0x165667B19E3779F9ULL) ^
            (w3 * 0xD6E8FEB86659FD93ULL) ^ (w4 * 0xFF51AFD7ED558CCDULL) ^ (w5 * 0xC4CEB9FE1A85EC53ULL);
  h ^= h >> 31;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 29;
  return h;
}

/* Flow record of a table slot: the stored counters plus the derived `packets` and `cnp`; first_ns/last_ns
 * are still jiffies (see roce_clock_sample). */
static inline void roce_slot_stats(const struct roce_flow_slot* s, struct roce_flow_stats* out) {
  __u64 packets = 0;
  for (int i = 0; i < ROCE_OP_CLASSES; i++) {
    out->op[i] = s->op[i];
    packets += s->op[i];
  }
  out->packets = packets;
  out->bytes = s->bytes;
  out->first_ns = s->first_jiffies;
  out->last_ns = s->last_jiffies;
  out->ect = s->ect;
  out->ce = s->ce;
  out->cnp = s->op[ROCE_OP_CNP];
  for (int i = 0; i < ROCE_NAK_KINDS; i++) out->nak[i] = s->nak[i];
  out->psn_regressions = s->psn_regressions;
  out->first_psn = s->first_psn;
  out->last_psn = s->last_psn;
  out->max_psn = s->max_psn;
  out->has_psn = s->has_psn;
}

#endif /* HSNS_BPF_ROCE_FLOW_H */
