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

/* Opcode class; *unknown is set for reserved and vendor opcodes. */
static __always_inline __u32 roce_classify(__u8 opcode, int* unknown) {
  __u8 transport = opcode >> 5;
  __u8 op = opcode & 0x1F;
  *unknown = 0;
  if (opcode == ROCE_OPCODE_CNP) return ROCE_OP_CNP;
  /* RC, UC, RD, UD and XRC share the low-5-bit operation codes. */
  if (transport <= 3 || transport == 5) {
    if (op <= 0x05 || op == 0x16 || op == 0x17) return ROCE_OP_SEND;
    if (op <= 0x0B) return ROCE_OP_WRITE;
    if (op == 0x0C) return ROCE_OP_READ_REQ;
    if (op <= 0x10) return ROCE_OP_READ_RESP;
    if (op == 0x11) return ROCE_OP_ACK;
    if (op <= 0x14) return ROCE_OP_ATOMIC;
  }
  *unknown = 1;
  return ROCE_OP_OTHER;
}

static __always_inline int roce_nak_kind(__u8 syndrome) {
  if ((syndrome & 0xE0) == 0x20) return ROCE_NAK_RNR;
  if ((syndrome & 0xE0) != 0x60) return -1; /* plain ACK */
  switch (syndrome) {
    case 0x60:
      return ROCE_NAK_PSN_SEQ;
    case 0x61:
      return ROCE_NAK_INV_REQ;
    case 0x62:
      return ROCE_NAK_REM_ACCESS;
    case 0x63:
      return ROCE_NAK_REM_OP;
    default:
      return ROCE_NAK_OTHER;
  }
}

/* The packet's one-packet record to the overflow ring buffer (table full). */
static __always_inline void roce_to_ring(const struct roce_flow_key* key, struct roce_pkt* pkt, __u32 cls,
                                         int nak, int ect, int ce, int data_pkt, __u64 now) {
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
  if (cls < ROCE_OP_CLASSES) ev->stats.op[cls] = 1;
  ev->stats.ect = ect;
  ev->stats.ce = ce;
  ev->stats.cnp = cls == ROCE_OP_CNP;
  if (nak >= 0 && nak < ROCE_NAK_KINDS) ev->stats.nak[nak] = 1;
  if (data_pkt) {
    __u32 psn = pkt->psn & ROCE_PSN_MASK;
    ev->stats.first_psn = psn;
    ev->stats.last_psn = psn;
    ev->stats.max_psn = psn;
    ev->stats.has_psn = 1;
  }
  bpf_ringbuf_submit(ev, 0);
  roce_count(ROCE_CNT_ROCE);
}

static __always_inline int roce_slot_has_key(const struct roce_flow_slot* s, const union roce_key_words* k) {
  const __u64* w = (const __u64*)&s->key;
  return ((w[0] ^ k->w[0]) | (w[1] ^ k->w[1]) | (w[2] ^ k->w[2]) | (w[3] ^ k->w[3]) | (w[4] ^ k->w[4]) |
          (w[5] ^ k->w[5])) == 0;
}

static __always_inline void roce_account(struct roce_pkt* pkt, __u32 ifindex, __u8 dir) {
  union roce_key_words* k = &pkt->k;
  k->key.ifindex = ifindex;
  k->key.direction = dir;
  k->key.pad = 0;

  int unknown = 0;
  __u32 cls = roce_classify(pkt->opcode, &unknown);
  if (unknown) roce_count(ROCE_CNT_UNKNOWN_OPCODE);
  int nak = pkt->has_aeth ? roce_nak_kind(pkt->syndrome) : -1;
  int data_pkt = cls != ROCE_OP_ACK && cls != ROCE_OP_CNP;
  int ect = pkt->ecn == 1 || pkt->ecn == 2;
  int ce = pkt->ecn == 3;
  __u64 now = bpf_jiffies64(); /* tick resolution, converted by the harvester */
  __u32 psn = pkt->psn & ROCE_PSN_MASK;

  __u32 zero = 0;
  void* table = bpf_map_lookup_elem(&roce_tables, &zero);
  if (!table) {
    roce_to_ring(&k->key, pkt, cls, nak, ect, ce, data_pkt, now);
    return;
  }
  __u64 h = roce_digest_words(k->w[0], k->w[1], k->w[2], k->w[3], k->w[4], k->w[5]);
  __u64 tag = h | 1;
  __u32 idx = (__u32)h;
  struct roce_flow_slot* s = 0;
  int claimed = 0;
  __u32 claimed_slot = 0;
  for (__u32 i = 0; i < ROCE_MAX_PROBES; i++) {
    __u32 j = (idx + i) & roce_slot_mask;
    struct roce_flow_slot* c = bpf_map_lookup_elem(table, &j);
    if (!c) break;
    __u64 t = *(volatile __u64*)&c->tag;
    if (t == 0) {
      t = __sync_val_compare_and_swap(&c->tag, 0, tag);
      if (t == 0) {
        s = c;
        claimed = 1;
        claimed_slot = j;
        break;
      }
    }
    if (t != tag) continue;
    /* Same digest: a slot being claimed on another CPU right now cannot be compared yet. */
    if (!*(volatile __u64*)&c->ready) break;
    if (roce_slot_has_key(c, k)) {
      s = c;
      break;
    }
  }
  if (!s) {
    roce_to_ring(&k->key, pkt, cls, nak, ect, ce, data_pkt, now);
    return;
  }

  if (claimed) {
    /* Every field is written (a slot is only guaranteed to have tag and ready cleared). */
    __builtin_memcpy(&s->key, &k->key, sizeof(k->key));
    s->bytes = pkt->ip_len;
    s->last_jiffies = now;
    s->first_jiffies = now;
    s->ect = ect;
    s->ce = ce;
    s->psn_regressions = 0;
    s->first_psn = data_pkt ? psn : 0;
    s->last_psn = data_pkt ? psn : 0;
    s->max_psn = data_pkt ? psn : 0;
    s->has_psn = data_pkt;
#pragma unroll
    for (int i = 0; i < ROCE_OP_CLASSES; i++) s->op[i] = (__u32)i == cls;
#pragma unroll
    for (int i = 0; i < ROCE_NAK_KINDS; i++) s->nak[i] = i == nak;
    s->slot = 0;
    s->pad1 = 0;
    /* Publish: the exchange orders the stores above before it. */
    __sync_lock_test_and_set(&s->ready, 1);
    /* After the claim (see roce_occupied). */
    __u32 word = claimed_slot >> 6;
    __u64* bits = bpf_map_lookup_elem(&roce_occupied, &word);
    if (bits) __sync_fetch_and_or(bits, 1ULL << (claimed_slot & 63));
    roce_count(ROCE_CNT_ROCE);
    return;
  }

  __sync_fetch_and_add(&s->bytes, pkt->ip_len);
  if (cls < ROCE_OP_CLASSES) __sync_fetch_and_add(&s->op[cls], 1);
  if (ect) __sync_fetch_and_add(&s->ect, 1);
  if (ce) __sync_fetch_and_add(&s->ce, 1);
  if (nak >= 0 && nak < ROCE_NAK_KINDS) __sync_fetch_and_add(&s->nak[nak], 1);
  if (data_pkt) {
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

static __always_inline int roce_tc(struct __sk_buff* skb, __u8 dir, int decap) {
  struct roce_pkt pkt; /* every field the accounting reads is written by a successful parse */
  int decapped = 0;
  void* data = (void*)(long)skb->data;
  void* end = (void*)(long)skb->data_end;
  int st = roce_parse(data, end, &pkt, decap, &decapped);
  if (roce_is_trunc(st) && skb->len > (__u32)(end - data)) {
    /* Headers beyond the linear part: make up to 256 bytes linear (content unchanged) and retry. */
    bpf_skb_pull_data(skb, skb->len < 256 ? skb->len : 256);
    data = (void*)(long)skb->data;
    end = (void*)(long)skb->data_end;
    decapped = 0;
    st = roce_parse(data, end, &pkt, decap, &decapped);
  }
  roce_finish(st, &pkt, skb->ifindex, dir, decapped);
  return TC_ACT_UNSPEC;
}

static __always_inline int roce_xdp(struct xdp_md* ctx, int decap) {
  struct roce_pkt pkt;
  int decapped = 0;
  void* data = (void*)(long)ctx->data;
  void* end = (void*)(long)ctx->data_end;
  int st = roce_parse(data, end, &pkt, decap, &decapped);
  roce_finish(st, &pkt, ctx->ingress_ifindex, ROCE_DIR_XDP, decapped);
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

struct roce_harvest_loop {
  __u32 start;
  __u32 next;    /* slot to continue from */
  __u32 records; /* slots copied */
  __u32 full;    /* roce_harvest_out full: stopped at `next` */
  __u32 visited; /* slots read */
  /* ROCE_WALK_OCCUPIED: the word of roce_occupied at hand and its bits not yet taken */
  __u32 w;
  __u32 loaded;
  __u64 word;
};

static __always_inline long roce_harvest_slot(struct roce_flow_slot* s, __u32 j,
                                              struct roce_harvest_loop* l) {
  l->next = j + 1;
  if (!s) return 1;
  if (s->tag == 0) return 0;
  /* Every claimed slot is copied; the harvester skips a copy whose `ready` is 0 (claimed, never published).
   * (Testing `ready` here as well makes the verifier's walk of the loop explode past 1M instructions.) */
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
 * 1: b) n times. */
#define ROCE_TABLE_CALLBACKS(name, step)                       \
  static long name##_a(__u32 i, struct roce_harvest_loop* l) { \
    return step(&roce_flows_a, &roce_flows_b, i, l);           \
  }                                                            \
  static long name##_b(__u32 i, struct roce_harvest_loop* l) { \
    return step(&roce_flows_b, &roce_flows_a, i, l);           \
  }
#define ROCE_TABLE_LOOP(name, table, n, l) \
  ((table) ? bpf_loop((n), name##_b, (l), 0) : bpf_loop((n), name##_a, (l), 0))

/* Slots per bpf_loop callback: a callback invocation costs about as much as a helper call, so each one
 * walks a run of slots. */
#define ROCE_HARVEST_STEP 32

static __always_inline long roce_harvest_run(void* table, void* other, __u32 i, struct roce_harvest_loop* l) {
  __u32 base = l->start + i * ROCE_HARVEST_STEP;
  for (__u32 n = 0; n < ROCE_HARVEST_STEP; n++) {
    __u32 j = base + n;
    if (roce_harvest_slot(bpf_map_lookup_elem(table, &j), j, l)) return 1;
  }
  return 0;
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

/* ROCE_WALK_OCCUPIED, one step per callback (no loop inside, which keeps the verifier's walk short): load
 * the next word of roce_occupied, or take the lowest set bit left of the current word and read its slot, or
 * move to the next word. A set bit whose slot is free in `table` is cleared unless `other` (the active
 * table) holds that slot (see roce_occupied). Returns 1 past the last word or when the staging array is
 * full. */
static __always_inline long roce_harvest_bit(void* table, void* other, __u32 i, struct roce_harvest_loop* l) {
  __u32 w = l->w;
  __u64* bits = bpf_map_lookup_elem(&roce_occupied, &w);
  if (!bits) return 1;
  if (!l->loaded) {
    l->word = *(volatile __u64*)bits;
    if (w == l->start >> 6) l->word &= ~0ULL << (l->start & 63); /* resumed inside the word */
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
  struct roce_harvest_loop l = {.start = ctx->start, .next = ctx->start};
  if (l.start < slots) {
    if (ctx->walk == ROCE_WALK_OCCUPIED) {
      /* Steps: a load and a move per word, one per set bit at most. */
      __u32 words = (slots + 63) / 64 - l.start / 64;
      l.w = l.start / 64;
      ROCE_TABLE_LOOP(roce_harvest_word, ctx->table, 2 * words + (slots - l.start), &l);
    } else {
      __u32 runs = (slots - l.start + ROCE_HARVEST_STEP - 1) / ROCE_HARVEST_STEP;
      ROCE_TABLE_LOOP(roce_harvest, ctx->table, runs, &l);
      l.visited = (l.full ? l.next : slots) - l.start;
    }
  }
  ctx->start = l.full ? l.next : slots;
  ctx->records = l.records;
  ctx->visited = l.visited;
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
  __u32 base = l->start + i * ROCE_HARVEST_STEP;
  for (__u32 n = 0; n < ROCE_HARVEST_STEP; n++) {
    __u32 j = base + n;
    struct roce_flow_slot* s = bpf_map_lookup_elem(table, &j);
    if (!s) return 1;
    roce_clear_slot(s, l);
  }
  return 0;
}

ROCE_TABLE_CALLBACKS(roce_clear, roce_clear_run)

SEC("syscall")
int roce_clear(struct roce_harvest_ctx* ctx) {
  __u32 slots = roce_slot_mask + 1;
  struct roce_harvest_loop l = {.start = ctx->start, .next = ctx->start};
  if (l.start < slots) {
    __u32 runs = (slots - l.start + ROCE_HARVEST_STEP - 1) / ROCE_HARVEST_STEP;
    ROCE_TABLE_LOOP(roce_clear, ctx->table, runs, &l);
  }
  ctx->start = slots;
  ctx->records = l.records;
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
  struct roce_harvest_loop l = {};
  __u32 n = ctx->listed;
  if (n > slots) n = slots;
  if (n > 0) {
    ROCE_TABLE_LOOP(roce_clear_listed, ctx->table, n, &l);
  }
  ctx->start = slots;
  ctx->records = l.records;
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
