// SPDX-License-Identifier: GPL-2.0
/* RoCEv2 flow probe: per-direction flow records from RoCEv2 packets seen at tc ingress/egress or XDP.
 *
 * Contract:
 * - Never modifies or drops a packet: tc programs return TC_ACT_UNSPEC (the next filter runs), XDP programs
 *   return XDP_PASS. The *_mirror variants also decapsulate GRE/ERSPAN (collector ports).
 * - Flow key, record and table slot layout: bpf/roce_flow.h. The flow table (the active one of
 *   roce_flows_a/_b) is an open-addressing table in an mmapable array (slot count set by userspace before
 *   load, roce_slot_mask = slots - 1): a packet of a known flow costs one digest, usually one array lookup
 *   and a 48-byte compare, no hash-map lookup. A new flow claims a free slot with a compare-and-swap. When
 *   no slot of the probe sequence is free (table full), or the flow's slot is being claimed on another CPU
 *   at that instant, the packet's one-packet record goes to the roce_overflow ring buffer (merged by the
 *   harvester, so still exact) and counts ROCE_CNT_TABLE_FULL; when the ring buffer is full too, the
 *   per-CPU ROCE_CNT_RINGBUF_DROP counter. Every malformed case has its own counter in roce_counters.
 * - ROCE_CNT_PACKETS is not counted here (it would cost a map update per packet): userspace derives it
 *   as the sum of the outcome counters (roce_counter_is_outcome). Likewise a slot has no `packets` or
 *   `cnp` field: they are the sum of the opcode classes and the CNP class.
 * - first/last seen are bpf_jiffies64() (inlined by the verifier: no helper call; a helper call such as
 *   bpf_ktime_get_coarse_ns costs 30-40 ns on the development VM). The harvester converts them to
 *   CLOCK_MONOTONIC_COARSE ns with readings of roce_tc_clock (one tick resolution, as before).
 * - Counters of an existing record are updated with atomic adds (exact even when two CPUs update the same
 *   flow); PSN state (last/max PSN, regressions) assumes one flow's packets are processed in order, as
 *   they are per queue.
 */
#include "roce_flow.h"

#include <bpf/bpf_helpers.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "roce_parse.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Slot count - 1 of the flow tables (a power of two): set by userspace before load together with the
 * tables' max_entries (roce_table_slots(table_size)). */
const volatile __u32 roce_slot_mask = 131071;

/* Two flow tables; roce_tables[0] names the active one. The harvester flips the slot (the kernel waits for
 * running programs: synchronize_rcu on a map-in-map update) and then reads and clears the inactive table
 * (roce_harvest below) with no concurrent writer, so no packet's update is split by the harvest. Mmapable
 * so that tests and the benchmark can read and fill a table directly. */
struct roce_table {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 131072);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct roce_flow_slot);
} roce_flows_a SEC(".maps"), roce_flows_b SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(values, struct roce_table);
} roce_tables SEC(".maps") = {
    .values = {[0] = &roce_flows_a},
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024);
} roce_overflow SEC(".maps");

/* Occupancy bits of the flow tables: bit j (word j / 64, bit j % 64) is set when slot j is claimed in
 * either table, so that roce_harvest in its ROCE_WALK_OCCUPIED mode reads only those slots instead of the
 * whole table (10,000 flows in 131,072 slots). Shared by both tables because a program does not know which
 * of them roce_tables names. Set by the packet path on a claim (once per new flow, not per packet);
 * cleared by roce_harvest for a slot free in the table it harvests, unless the other (active) table holds
 * slot j at that moment: the harvester clears the bit first and then reads the other table's tag, the
 * claimer sets its tag first and then the bit (both atomic), so a claim racing with the clear always ends
 * with the bit set. Not pinned: a bit is only a hint. A table that a program of another process (or a
 * previous one) wrote without setting these bits is read whole (ROCE_WALK_TABLE) at its first harvest by
 * a process and periodically after that (FlowProbe). Sized slots / 64 by userspace before load. (64-bit
 * words: the eBPF instruction set of the supported compilers has atomic OR and AND on 64 bits only.) */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2048);
  __type(key, __u32);
  __type(value, __u64);
} roce_occupied SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, ROCE_CNT_MAX);
  __type(key, __u32);
  __type(value, __u64);
} roce_counters SEC(".maps");

/* Userspace bookkeeping, pinned with the other maps: ifindexes whose clsact qdisc the probe created, so a
 * restarted daemon still removes only qdiscs it made. Not used by the programs. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u32);
} roce_qdisc_owner SEC(".maps");

/* Userspace bookkeeping, pinned: the last data PSN of each flow at the previous harvest (an open-addressing
 * table of struct roce_psn_entry, same slot count and probe sequence as the flow tables), so that a PSN
 * regression across a harvest boundary (or a daemon restart) is still counted. Not used by the programs. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 131072);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct roce_psn_entry);
} roce_psn_last SEC(".maps");

static __always_inline void roce_count(__u32 idx) {
  __u64* v = bpf_map_lookup_elem(&roce_counters, &idx);
  if (v) *v += 1;
}

/* Verification cost: the packet path is written so that the verifier walks the 64 probes of the flow table
 * a few times per program, not once per combination of the packet's properties. A value the verifier knows
 * as a constant (say an opcode class returned by a chain of `if`s) that later decides a branch is "precise":
 * states that differ in it are never merged, so every class x NAK kind x ECN combination would walk the
 * probes and the update again (about 740,000 instructions verified for each packet program on Linux 6.18).
 * Hence the packet's class and NAK kind come from tables indexed by packet bytes, ECN bits are combined with
 * arithmetic (values the verifier does not know), and the table walk comes first, before any of them is
 * computed. tests/bpf/verifier/verifier_cost_test.cpp holds each program under 20 % of the 1,000,000 limit
 * (they need 1.4-5.5 % on 6.18). */

/* The class of each BTH opcode (RoCEv2, IBA vol. 1 ch. 9.2): RC, UC, RD, UD and XRC (transports 0-3 and 5)
 * share the low-5-bit operation codes; 0x81 is the CNP; every other opcode is reserved or vendor-defined
 * (ROCE_OP_OTHER, counted as ROCE_CNT_UNKNOWN_OPCODE). */
/* clang-format off */
#define ROCE_TRANSPORT_OPS(t)                                      \
  [(t) << 5 | 0x00 ... (t) << 5 | 0x05] = ROCE_OP_SEND,            \
  [(t) << 5 | 0x06 ... (t) << 5 | 0x0B] = ROCE_OP_WRITE,           \
  [(t) << 5 | 0x0C] = ROCE_OP_READ_REQ,                            \
  [(t) << 5 | 0x0D ... (t) << 5 | 0x10] = ROCE_OP_READ_RESP,       \
  [(t) << 5 | 0x11] = ROCE_OP_ACK,                                 \
  [(t) << 5 | 0x12 ... (t) << 5 | 0x14] = ROCE_OP_ATOMIC,          \
  [(t) << 5 | 0x15] = ROCE_OP_OTHER,                               \
  [(t) << 5 | 0x16 ... (t) << 5 | 0x17] = ROCE_OP_SEND,            \
  [(t) << 5 | 0x18 ... (t) << 5 | 0x1F] = ROCE_OP_OTHER
static const __u8 roce_op_class[256] = {
    ROCE_TRANSPORT_OPS(0), ROCE_TRANSPORT_OPS(1), ROCE_TRANSPORT_OPS(2), ROCE_TRANSPORT_OPS(3),
    [0x80] = ROCE_OP_OTHER, [ROCE_OPCODE_CNP] = ROCE_OP_CNP, [0x82 ... 0x9F] = ROCE_OP_OTHER,
    ROCE_TRANSPORT_OPS(5),
    [0xC0 ... 0xFF] = ROCE_OP_OTHER,
};
/* clang-format on */
_Static_assert(ROCE_OPCODE_CNP == 0x81, "roce_op_class' ranges");

/* enum roce_nak + 1 of each AETH syndrome; 0 for an acknowledgement that is no NAK (and for a packet without
 * AETH, whose syndrome the parser sets to 0). */
static const __u8 roce_nak_of_syndrome[256] = {
    [0x20 ... 0x3F] = ROCE_NAK_RNR + 1, [0x60] = ROCE_NAK_PSN_SEQ + 1, [0x61] = ROCE_NAK_INV_REQ + 1,
    [0x62] = ROCE_NAK_REM_ACCESS + 1,   [0x63] = ROCE_NAK_REM_OP + 1,  [0x64 ... 0x7F] = ROCE_NAK_OTHER + 1,
};

/* What a packet adds to its flow record (every field a value the verifier does not know, see above). */
struct roce_pkt_counts {
  __u32 cls;      /* enum roce_op_class */
  __u32 nak1;     /* enum roce_nak + 1, 0: none (so nak1 - 1 < ROCE_NAK_KINDS for a NAK only) */
  __u32 data_pkt; /* 1 for a data packet (every class but ACK and CNP): its PSN is tracked */
  __u32 ect;      /* 1 for ECT(0) or ECT(1) */
  __u32 ce;       /* 1 for CE */
  __u32 psn;
};

static __always_inline void roce_pkt_counts(const struct roce_pkt* pkt, struct roce_pkt_counts* c) {
  __u32 ecn = pkt->ecn & 3;
  c->cls = roce_op_class[pkt->opcode] & 7;
  c->nak1 = roce_nak_of_syndrome[pkt->syndrome];
  /* 0 for ACK (4) and CNP (6), the only classes with bit 2 set and bit 0 clear; 1 for the others. */
  c->data_pkt = ((c->cls >> 2) & ~c->cls & 1) ^ 1;
  c->ect = (ecn ^ (ecn >> 1)) & 1;
  c->ce = (ecn >> 1) & ecn & 1;
  c->psn = pkt->psn & ROCE_PSN_MASK;
}
_Static_assert(ROCE_OP_ACK == 4 && ROCE_OP_CNP == 6 && ROCE_OP_CLASSES == 8, "roce_pkt_counts' class bits");

/* The packet's one-packet record to the overflow ring buffer (table full). */
static __always_inline void roce_to_ring(const struct roce_flow_key* key, const struct roce_pkt* pkt,
                                         const struct roce_pkt_counts* c, __u64 now) {
  roce_count(ROCE_CNT_TABLE_FULL);
  struct roce_overflow_event* ev = bpf_ringbuf_reserve(&roce_overflow, sizeof(*ev), 0);
  if (!ev) {
    roce_count(ROCE_CNT_RINGBUF_DROP);
    return;
  }
  __builtin_memcpy(&ev->key, key, sizeof(*key));
  __builtin_memset(&ev->stats, 0, sizeof(ev->stats));
  ev->stats.packets = 1;
  ev->stats.bytes = pkt->ip_len;
  ev->stats.first_ns = now;
  ev->stats.last_ns = now;
  ev->stats.op[c->cls & 7] = 1;
  ev->stats.ect = c->ect;
  ev->stats.ce = c->ce;
  ev->stats.cnp = c->cls == ROCE_OP_CNP;
  if (c->nak1 - 1 < ROCE_NAK_KINDS) ev->stats.nak[c->nak1 - 1] = 1;
  ev->stats.first_psn = c->data_pkt ? c->psn : 0;
  ev->stats.last_psn = ev->stats.first_psn;
  ev->stats.max_psn = ev->stats.first_psn;
  ev->stats.has_psn = c->data_pkt;
  bpf_ringbuf_submit(ev, 0);
  roce_count(ROCE_CNT_ROCE);
}

static __always_inline int roce_slot_has_key(const struct roce_flow_slot* s, const union roce_key_words* k) {
  const __u64* w = (const __u64*)&s->key;
  return ((w[0] ^ k->w[0]) | (w[1] ^ k->w[1]) | (w[2] ^ k->w[2]) | (w[3] ^ k->w[3]) | (w[4] ^ k->w[4]) |
          (w[5] ^ k->w[5])) == 0;
}

/* The slot of the flow with key k in `table`, claiming a free one for a new flow (*claimed = 1, *claimed_slot
 * its index); NULL when the probe sequence has no free slot or the flow's slot is being claimed on another
 * CPU at this instant. */
static __always_inline struct roce_flow_slot* roce_find_slot(void* table, const union roce_key_words* k,
                                                             int* claimed, __u32* claimed_slot) {
  __u64 h = roce_digest_words(k->w[0], k->w[1], k->w[2], k->w[3], k->w[4], k->w[5]);
  __u64 tag = h | 1;
  __u32 idx = (__u32)h;
  for (__u32 i = 0; i < ROCE_MAX_PROBES; i++) {
    __u32 j = (idx + i) & roce_slot_mask;
    struct roce_flow_slot* c = bpf_map_lookup_elem(table, &j);
    if (!c) return 0;
    __u64 t = *(volatile __u64*)&c->tag;
    if (t == 0) {
      t = __sync_val_compare_and_swap(&c->tag, 0, tag);
      if (t == 0) {
        *claimed = 1;
        *claimed_slot = j;
        return c;
      }
    }
    if (t != tag) continue;
    /* Same digest: a slot being claimed on another CPU right now cannot be compared yet. */
    if (!*(volatile __u64*)&c->ready) return 0;
    if (roce_slot_has_key(c, k)) return c;
  }
  return 0;
}

/* Accounts one well-formed RoCEv2 packet. Returns 0. (Inlined, not a global function: a BPF-to-BPF call
 * costs 8-10 ns per packet where returns are mitigated against SRSO; the verification cost of inlining it
 * stays small because nothing before it leaves a constant that matters here, see above.) */
static __always_inline int roce_account(struct roce_pkt* pkt, __u32 ifindex, __u32 dir) {
  union roce_key_words* k = &pkt->k;
  k->key.ifindex = ifindex;
  k->key.direction = dir;
  k->key.pad = 0;
  __u64 now = bpf_jiffies64(); /* tick resolution, converted by the harvester */

  __u32 zero = 0;
  void* table = bpf_map_lookup_elem(&roce_tables, &zero);
  int claimed = 0;
  __u32 claimed_slot = 0;
  struct roce_flow_slot* s = table ? roce_find_slot(table, k, &claimed, &claimed_slot) : 0;

  struct roce_pkt_counts c;
  roce_pkt_counts(pkt, &c);
  if (c.cls == ROCE_OP_OTHER) roce_count(ROCE_CNT_UNKNOWN_OPCODE);
  if (!s) {
    roce_to_ring(&k->key, pkt, &c, now);
    return 0;
  }

  if (claimed) {
    /* Every field is written (a slot is only guaranteed to have tag and ready cleared). */
    __builtin_memcpy(&s->key, &k->key, sizeof(k->key));
    s->bytes = pkt->ip_len;
    s->last_jiffies = now;
    s->first_jiffies = now;
    s->ect = c.ect;
    s->ce = c.ce;
    s->psn_regressions = 0;
    s->first_psn = c.data_pkt ? c.psn : 0;
    s->last_psn = s->first_psn;
    s->max_psn = s->first_psn;
    s->has_psn = c.data_pkt;
    __builtin_memset(s->op, 0, sizeof(s->op));
    __builtin_memset(s->nak, 0, sizeof(s->nak));
    s->op[c.cls & 7] = 1;
    if (c.nak1 - 1 < ROCE_NAK_KINDS) s->nak[c.nak1 - 1] = 1;
    s->slot = 0;
    s->pad1 = 0;
    /* Publish: the exchange orders the stores above before it. */
    __sync_lock_test_and_set(&s->ready, 1);
    /* After the claim (see roce_occupied). */
    __u32 word = claimed_slot >> 6;
    __u64* bits = bpf_map_lookup_elem(&roce_occupied, &word);
    if (bits) __sync_fetch_and_or(bits, 1ULL << (claimed_slot & 63));
    roce_count(ROCE_CNT_ROCE);
    return 0;
  }

  __sync_fetch_and_add(&s->bytes, pkt->ip_len);
  __sync_fetch_and_add(&s->op[c.cls & 7], 1);
  if (c.ect) __sync_fetch_and_add(&s->ect, 1);
  if (c.ce) __sync_fetch_and_add(&s->ce, 1);
  if (c.nak1 - 1 < ROCE_NAK_KINDS) __sync_fetch_and_add(&s->nak[c.nak1 - 1], 1);
  if (c.data_pkt) {
    __u32 psn = c.psn;
    if (s->has_psn) {
      __u32 diff = (psn - s->last_psn) & ROCE_PSN_MASK;
      if (diff == 0 || diff >= 0x800000) __sync_fetch_and_add(&s->psn_regressions, 1);
      __u32 up = (psn - s->max_psn) & ROCE_PSN_MASK;
      if (up != 0 && up < 0x800000) s->max_psn = psn;
    } else {
      s->first_psn = psn;
      s->max_psn = psn;
      s->has_psn = 1;
    }
    s->last_psn = psn;
  }
  s->last_jiffies = now;
  roce_count(ROCE_CNT_ROCE);
  return 0;
}

static __always_inline void roce_finish(int st, struct roce_pkt* pkt, __u32 ifindex, __u8 dir, int decapped) {
  if (decapped) roce_count(ROCE_CNT_ERSPAN);
  if (st == ROCE_CNT_ROCE)
    roce_account(pkt, ifindex, dir);
  else
    roce_count(st);
}

static __always_inline int roce_is_trunc(int st) {
  return st == ROCE_CNT_TRUNC_L2 || st == ROCE_CNT_TRUNC_L3 || st == ROCE_CNT_TRUNC_UDP ||
         st == ROCE_CNT_TRUNC_BTH || st == ROCE_CNT_TRUNC_AETH || st == ROCE_CNT_TRUNC_ERSPAN;
}

/* The parse of an skb's linear part as a global function (without and with ERSPAN decapsulation), for
 * roce_tc's second parse after pulling the headers into the linear part: a global function is verified once,
 * on its own, so the rare second parse does not double the verification cost of the programs, and what it
 * returns is unknown to the verifier, so the accounting after it is verified once, not once per outcome.
 * Returns roce_parse_frame's status (ROCE_PARSE_DECAPPED set when an ERSPAN header was removed). */
__noinline int roce_parse_skb(struct __sk_buff* skb, struct roce_pkt* pkt) {
  if (!pkt) return ROCE_CNT_TRUNC_L2;
  return roce_parse_frame((void*)(long)skb->data, (void*)(long)skb->data_end, pkt, 0);
}

__noinline int roce_parse_skb_mirror(struct __sk_buff* skb, struct roce_pkt* pkt) {
  if (!pkt) return ROCE_CNT_TRUNC_L2;
  return roce_parse_frame((void*)(long)skb->data, (void*)(long)skb->data_end, pkt, 1);
}

static __always_inline int roce_tc(struct __sk_buff* skb, __u8 dir, int decap) {
  /* Zeroed: a global function may only be passed initialised memory. */
  struct roce_pkt pkt = {};
  int r = roce_parse_frame((void*)(long)skb->data, (void*)(long)skb->data_end, &pkt, decap);
  if (roce_is_trunc(r & 0xFF) && skb->len > skb->data_end - skb->data) {
    /* Headers beyond the linear part: make up to 256 bytes linear (content unchanged) and parse again. */
    bpf_skb_pull_data(skb, skb->len < 256 ? skb->len : 256);
    r = decap ? roce_parse_skb_mirror(skb, &pkt) : roce_parse_skb(skb, &pkt);
  }
  roce_finish(r & 0xFF, &pkt, skb->ifindex, dir, r & ROCE_PARSE_DECAPPED);
  return TC_ACT_UNSPEC;
}

static __always_inline int roce_xdp(struct xdp_md* ctx, int decap) {
  struct roce_pkt pkt = {};
  int r = roce_parse_frame((void*)(long)ctx->data, (void*)(long)ctx->data_end, &pkt, decap);
  roce_finish(r & 0xFF, &pkt, ctx->ingress_ifindex, ROCE_DIR_XDP, r & ROCE_PARSE_DECAPPED);
  return XDP_PASS;
}

SEC("tc")
int roce_tc_ingress(struct __sk_buff* skb) {
  return roce_tc(skb, ROCE_DIR_INGRESS, 0);
}

SEC("tc")
int roce_tc_egress(struct __sk_buff* skb) {
  return roce_tc(skb, ROCE_DIR_EGRESS, 0);
}

SEC("tc")
int roce_tc_ingress_mirror(struct __sk_buff* skb) {
  return roce_tc(skb, ROCE_DIR_INGRESS, 1);
}

SEC("xdp")
int roce_xdp_plain(struct xdp_md* ctx) {
  return roce_xdp(ctx, 0);
}

SEC("xdp")
int roce_xdp_mirror(struct xdp_md* ctx) {
  return roce_xdp(ctx, 1);
}

/* Harvest, in two phases (so that a crash of the harvester at any moment loses and repeats nothing): the
 * harvester flips roce_tables[0] (the kernel waits for running programs), then runs roce_harvest on the
 * inactive table, which copies each claimed slot to roce_harvest_out (mapped by the harvester) without
 * clearing it, until roce_harvest_out is full; the next run continues from there. Only once the records
 * are durably written does the harvester run roce_clear, which clears every claimed slot (ready first,
 * then tag) in one run. Copying in
 * the kernel avoids mapping the whole table into the harvester (mapping and unmapping 64 MiB costs more
 * than the copy) and needs no per-flow helper call. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, ROCE_HARVEST_OUT);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct roce_flow_slot);
} roce_harvest_out SEC(".maps");

/* Userspace bookkeeping, pinned: the harvest epochs (struct roce_epoch_state). Not used by the programs. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct roce_epoch_state);
} roce_epoch SEC(".maps");

/* The state of one walk of a table by roce_harvest, roce_clear or roce_clear_listed. It lives in a map
 * value (roce_walk), not on the program's stack: the verifier knows the values a program keeps on its stack,
 * so a counter that starts at 0 there and decides a branch or names a map key is a different constant in
 * every pass of the loop, and newer verifiers (which check a bpf_loop callback pass after pass until its
 * state repeats) would walk the loop once per slot. A value loaded from a map is unknown to the verifier,
 * and the callback's state repeats after one pass, on every kernel. */
struct roce_harvest_loop {
  __u32 start;
  __u32 next;    /* slot to continue from */
  __u32 records; /* slots copied (or cleared) */
  __u32 full;    /* roce_harvest_out full: stopped at `next` */
  __u32 visited; /* slots read */
  /* ROCE_WALK_OCCUPIED: the word of roce_occupied at hand and its bits not yet taken */
  __u32 w;
  __u32 loaded;
  __u32 pad;
  __u64 word;
};

/* Per CPU: a syscall program runs on one CPU, without migrating, for the whole of its run. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct roce_harvest_loop);
} roce_walk SEC(".maps");

/* The walk state of this run, zeroed but for `start` and `next` (NULL: the lookup failed). */
static __always_inline struct roce_harvest_loop* roce_walk_begin(__u32 start) {
  __u32 zero = 0;
  struct roce_harvest_loop* l = bpf_map_lookup_elem(&roce_walk, &zero);
  if (!l) return 0;
  __builtin_memset(l, 0, sizeof(*l));
  l->start = start;
  l->next = start;
  return l;
}

/* The most iterations one bpf_loop call may run (the kernel's BPF_MAX_LOOPS): the largest table has as
 * many slots. */
#define ROCE_MAX_LOOPS (1U << 23)

/* A bpf_loop callback's context must be on the stack: it holds the pointer to the walk state. */
struct roce_walk_ref {
  struct roce_harvest_loop* l;
};

static __always_inline long roce_harvest_slot(struct roce_flow_slot* s, __u32 j,
                                              struct roce_harvest_loop* l) {
  l->next = j + 1;
  if (!s) return 1;
  if (s->tag == 0) return 0;
  /* Every claimed slot is copied; the harvester skips a copy whose `ready` is 0 (claimed, never published).
   */
  __u32 k = l->records;
  struct roce_flow_slot* o = bpf_map_lookup_elem(&roce_harvest_out, &k);
  if (!o) {
    l->next = j;
    l->full = 1;
    return 1;
  }
  __builtin_memcpy(o, s, sizeof(*s));
  o->slot = j;
  l->records = k + 1;
  return 0;
}

/* The bpf_loop callbacks of one walk, one per table (the verifier must know which map a callback reads):
 * name##_a runs step(roce_flows_a, roce_flows_b, i, l), name##_b the same with the tables swapped; `other`
 * is the table not walked (the active one). ROCE_TABLE_LOOP runs name's callback of table `table` (0: a,
 * 1: b) n times. Each callback handles one slot and holds no loop: the verifier checks a loop inside a
 * callback once per iteration and state.
 * Each bpf_loop call names one callback, so that the verifier inlines it (the loop becomes a direct call of
 * the callback per slot); a call whose callback depends on the path stays a helper call that reaches the
 * callback through an indirect call per slot, and the compiler makes one such call of `table ?
 * bpf_loop(cb_b) : bpf_loop(cb_a)`: the empty asm after one of the two calls keeps it from merging them.
 * tests/bpf/verifier checks that the walks hold no helper call. */
#define ROCE_TABLE_CALLBACKS(name, step)                   \
  static long name##_a(__u32 i, struct roce_walk_ref* r) { \
    return step(&roce_flows_a, &roce_flows_b, i, r->l);    \
  }                                                        \
  static long name##_b(__u32 i, struct roce_walk_ref* r) { \
    return step(&roce_flows_b, &roce_flows_a, i, r->l);    \
  }
#define ROCE_TABLE_LOOP(name, table, n, ref) \
  do {                                       \
    if (table) {                             \
      bpf_loop((n), name##_b, (ref), 0);     \
      asm volatile("");                      \
    } else {                                 \
      bpf_loop((n), name##_a, (ref), 0);     \
    }                                        \
  } while (0)

static __always_inline long roce_harvest_run(void* table, void* other, __u32 i, struct roce_harvest_loop* l) {
  __u32 j = l->start + i;
  return roce_harvest_slot(bpf_map_lookup_elem(table, &j), j, l);
}

ROCE_TABLE_CALLBACKS(roce_harvest, roce_harvest_run)

/* Index of the lowest set bit of x (x != 0), without a loop (the verifier walks loops per iteration). */
static __always_inline __u32 roce_lowest_bit(__u64 x) {
  __u32 n = 0;
  if (!(x & 0xFFFFFFFFULL)) {
    n += 32;
    x >>= 32;
  }
  if (!(x & 0xFFFF)) {
    n += 16;
    x >>= 16;
  }
  if (!(x & 0xFF)) {
    n += 8;
    x >>= 8;
  }
  if (!(x & 0xF)) {
    n += 4;
    x >>= 4;
  }
  if (!(x & 0x3)) {
    n += 2;
    x >>= 2;
  }
  if (!(x & 0x1)) n += 1;
  return n;
}

/* ROCE_WALK_OCCUPIED, one step per callback: load the next word of roce_occupied, or take the lowest set
 * bit left of the current word and read its slot, or move to the next word. A set bit whose slot is free in
 * `table` is cleared unless `other` (the active table) holds that slot (see roce_occupied). Returns 1 past
 * the last word or when the staging array is full. */
static __always_inline long roce_harvest_bit(void* table, void* other, __u32 i, struct roce_harvest_loop* l) {
  __u32 w = l->w;
  __u64* bits = bpf_map_lookup_elem(&roce_occupied, &w);
  if (!bits) return 1;
  if (!l->loaded) {
    __u64 word = *(volatile __u64*)bits;
    if (w == l->start >> 6) word &= ~0ULL << (l->start & 63); /* resumed inside the word */
    l->word = word;
    l->loaded = 1;
  }
  __u64 word = l->word;
  if (word == 0) {
    l->w = w + 1;
    l->loaded = 0;
    l->next = (w + 1) << 6;
    return 0;
  }
  __u32 n = roce_lowest_bit(word) & 63;
  __u64 bit = 1ULL << n;
  l->word = word & ~bit;
  __u32 j = (w << 6) + n;
  struct roce_flow_slot* s = bpf_map_lookup_elem(table, &j);
  if (!s) return 1;
  if (s->tag == 0) {
    __sync_fetch_and_and(bits, ~bit);
    struct roce_flow_slot* o = bpf_map_lookup_elem(other, &j);
    if (o && *(volatile __u64*)&o->tag != 0) __sync_fetch_and_or(bits, bit);
    l->visited++;
    return 0;
  }
  if (roce_harvest_slot(s, j, l)) return 1; /* staging array full: the next run reads the slot again */
  l->visited++;
  return 0;
}

ROCE_TABLE_CALLBACKS(roce_harvest_word, roce_harvest_bit)

SEC("syscall")
int roce_harvest(struct roce_harvest_ctx* ctx) {
  __u32 slots = roce_slot_mask + 1;
  __u32 start = ctx->start;
  struct roce_harvest_loop* l = roce_walk_begin(start);
  if (!l) return 1;
  struct roce_walk_ref ref = {.l = l};
  if (start < slots) {
    if (ctx->walk == ROCE_WALK_OCCUPIED) {
      /* Steps: a load and a move per word, one per set bit at most; beyond bpf_loop's limit (tables of
       * more than 4M slots) the run stops early and `next` says where the next run continues. */
      __u32 words = (slots + 63) / 64 - start / 64;
      __u32 steps = 2 * words + (slots - start);
      l->w = start / 64;
      ROCE_TABLE_LOOP(roce_harvest_word, ctx->table, steps < ROCE_MAX_LOOPS ? steps : ROCE_MAX_LOOPS, &ref);
    } else {
      ROCE_TABLE_LOOP(roce_harvest, ctx->table, slots - start, &ref);
      l->visited = (l->next < slots ? l->next : slots) - start;
    }
  }
  /* `next` is where the walk stopped: past the table when it is done. */
  ctx->start = l->next < slots ? l->next : slots;
  ctx->records = l->records;
  ctx->visited = l->visited;
  return 0;
}

/* The second phase: roce_clear clears every claimed slot of the table (ready first, then tag) in one run.
 * A program of its own, so that each program has the verifier's instruction budget to itself. */
/* Frees one slot that holds a flow (roce_clear and roce_clear_listed alike). */
static __always_inline void roce_clear_slot(struct roce_flow_slot* s, struct roce_harvest_loop* l) {
  if (s->tag != 0) {
    s->ready = 0;
    s->tag = 0;
    l->records++;
  }
}

static __always_inline long roce_clear_run(void* table, void* other, __u32 i, struct roce_harvest_loop* l) {
  __u32 j = l->start + i;
  struct roce_flow_slot* s = bpf_map_lookup_elem(table, &j);
  if (!s) return 1;
  roce_clear_slot(s, l);
  return 0;
}

ROCE_TABLE_CALLBACKS(roce_clear, roce_clear_run)

SEC("syscall")
int roce_clear(struct roce_harvest_ctx* ctx) {
  __u32 slots = roce_slot_mask + 1;
  __u32 start = ctx->start;
  struct roce_harvest_loop* l = roce_walk_begin(start);
  if (!l) return 1;
  struct roce_walk_ref ref = {.l = l};
  if (start < slots) ROCE_TABLE_LOOP(roce_clear, ctx->table, slots - start, &ref);
  ctx->start = slots;
  ctx->records = l->records;
  return 0;
}

/* The slots roce_clear_listed clears: written by the harvester through its mapping (the `slot`s of the
 * copies of one harvest), sized like the tables by userspace before load. 64-bit entries: an array map
 * rounds each value up to 8 bytes, so the mapping is a plain array of them. Not pinned: a harvester that
 * restarts has no list and clears with roce_clear. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 131072);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, __u64);
} roce_clear_list SEC(".maps");

/* One listed slot per callback: a harvest lists about as many slots as it has flows, far fewer than the
 * table's slots that roce_clear walks. */
static __always_inline long roce_clear_listed_run(void* table, void* other, __u32 i,
                                                  struct roce_harvest_loop* l) {
  __u64* listed = bpf_map_lookup_elem(&roce_clear_list, &i);
  if (!listed) return 1;
  if (*listed > 0xFFFFFFFFULL) return 0; /* past any table */
  __u32 j = (__u32)*listed;
  struct roce_flow_slot* s = bpf_map_lookup_elem(table, &j);
  if (s) roce_clear_slot(s, l);
  return 0;
}

ROCE_TABLE_CALLBACKS(roce_clear_listed, roce_clear_listed_run)

SEC("syscall")
int roce_clear_listed(struct roce_harvest_ctx* ctx) {
  __u32 slots = roce_slot_mask + 1;
  struct roce_harvest_loop* l = roce_walk_begin(0);
  if (!l) return 1;
  struct roce_walk_ref ref = {.l = l};
  __u32 n = ctx->listed;
  if (n > slots) n = slots;
  if (n > 0) ROCE_TABLE_LOOP(roce_clear_listed, ctx->table, n, &ref);
  ctx->start = slots;
  ctx->records = l->records;
  return 0;
}

/* Clock calibration for the harvester (run with bpf_prog_test_run_opts, never attached). */
struct roce_clock_sample roce_clock = {};

SEC("tc")
int roce_tc_clock(struct __sk_buff* skb) {
  roce_clock.coarse_ns = bpf_ktime_get_coarse_ns();
  roce_clock.jiffies = bpf_jiffies64();
  return TC_ACT_UNSPEC;
}

/* Baseline for the benchmark: an empty tc program. */
SEC("tc")
int roce_tc_empty(struct __sk_buff* skb) {
  return TC_ACT_UNSPEC;
}
