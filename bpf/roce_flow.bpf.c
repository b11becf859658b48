// SPDX-License-Identifier: GPL-2.0
/* RoCEv2 flow probe: per-direction flow records from RoCEv2 packets seen at tc ingress/egress or XDP.
 *
 * Contract:
 * - Never modifies or drops a packet: tc programs return TC_ACT_UNSPEC (the next filter runs), XDP programs
 *   return XDP_PASS. The *_mirror variants also decapsulate GRE/ERSPAN (collector ports).
 * - Flow key and record layout: bpf/roce_flow.h. The flow table (the active one of roce_flows_a/_b, hash,
 *   size set by userspace before load) is drained by userspace with bpf_map_lookup_and_delete_batch. When an
 * insert fails the packet's one-packet record goes to the roce_overflow ring buffer; when that fails too, the
 * per-CPU ROCE_CNT_RINGBUF_DROP counter. Every malformed case has its own counter in roce_counters.
 * - ROCE_CNT_PACKETS is not counted here (it would cost a map update per packet): userspace derives it
 *   as the sum of the outcome counters (roce_counter_is_outcome).
 * - first/last seen use bpf_ktime_get_coarse_ns (CLOCK_MONOTONIC_COARSE, one tick resolution).
 * - Counters of an existing record are updated with atomic adds; PSN state (last/max PSN, regressions)
 *   assumes one flow's packets are processed in order, as they are per queue.
 */
#include "roce_flow.h"

#include <bpf/bpf_helpers.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "roce_parse.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Two flow tables; roce_tables[0] names the active one. The harvester flips the slot (the kernel waits for
 * running programs: synchronize_rcu on a map-in-map update) and then drains the inactive table with no
 * concurrent writer, so no packet's update is split by the drain. */
struct roce_table {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct roce_flow_key);
  __type(value, struct roce_flow_stats);
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

/* Userspace bookkeeping, pinned: the last data PSN of each flow at the previous harvest, so that a PSN
 * regression across a harvest boundary (or a daemon restart) is still counted. Not used by the programs. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct roce_flow_key);
  __type(value, __u32);
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

static __always_inline void roce_account(struct roce_pkt* pkt, __u32 ifindex, __u8 dir) {
  struct roce_flow_key key;
  __builtin_memset(&key, 0, sizeof(key));
  key.ifindex = ifindex;
  key.direction = dir;
  key.family = pkt->family;
  key.sport = pkt->sport;
  __builtin_memcpy(key.src, pkt->src, 16);
  __builtin_memcpy(key.dst, pkt->dst, 16);
  key.dest_qp = pkt->dest_qp;

  int unknown = 0;
  __u32 cls = roce_classify(pkt->opcode, &unknown);
  if (unknown) roce_count(ROCE_CNT_UNKNOWN_OPCODE);
  int nak = pkt->has_aeth ? roce_nak_kind(pkt->syndrome) : -1;
  int data_pkt = cls != ROCE_OP_ACK && cls != ROCE_OP_CNP;
  int ect = pkt->ecn == 1 || pkt->ecn == 2;
  int ce = pkt->ecn == 3;
  __u64 now = bpf_ktime_get_coarse_ns(); /* tick resolution; the precise clock costs ~40 ns */
  __u32 psn = pkt->psn & ROCE_PSN_MASK;

  __u32 zero = 0;
  void* table = bpf_map_lookup_elem(&roce_tables, &zero);
  struct roce_flow_stats* s = table ? bpf_map_lookup_elem(table, &key) : 0;
  if (!s) {
    struct roce_flow_stats fresh;
    __builtin_memset(&fresh, 0, sizeof(fresh));
    fresh.packets = 1;
    fresh.bytes = pkt->ip_len;
    fresh.first_ns = now;
    fresh.last_ns = now;
    if (cls < ROCE_OP_CLASSES) fresh.op[cls] = 1;
    fresh.ect = ect;
    fresh.ce = ce;
    fresh.cnp = cls == ROCE_OP_CNP;
    if (nak >= 0 && nak < ROCE_NAK_KINDS) fresh.nak[nak] = 1;
    if (data_pkt) {
      fresh.first_psn = psn;
      fresh.last_psn = psn;
      fresh.max_psn = psn;
      fresh.has_psn = 1;
    }
    long err = table ? bpf_map_update_elem(table, &key, &fresh, BPF_NOEXIST) : -2;
    if (err == 0) {
      roce_count(ROCE_CNT_ROCE);
      return;
    }
    if (err == -17 /* EEXIST: another CPU inserted it */) s = bpf_map_lookup_elem(table, &key);
    if (!s) {
      roce_count(ROCE_CNT_TABLE_FULL);
      struct roce_overflow_event* ev = bpf_ringbuf_reserve(&roce_overflow, sizeof(*ev), 0);
      if (!ev) {
        roce_count(ROCE_CNT_RINGBUF_DROP);
        return;
      }
      __builtin_memcpy(&ev->key, &key, sizeof(key));
      __builtin_memcpy(&ev->stats, &fresh, sizeof(fresh));
      bpf_ringbuf_submit(ev, 0);
      roce_count(ROCE_CNT_ROCE);
      return;
    }
  }

  __sync_fetch_and_add(&s->packets, 1);
  __sync_fetch_and_add(&s->bytes, pkt->ip_len);
  if (cls < ROCE_OP_CLASSES) __sync_fetch_and_add(&s->op[cls], 1);
  if (ect) __sync_fetch_and_add(&s->ect, 1);
  if (ce) __sync_fetch_and_add(&s->ce, 1);
  if (cls == ROCE_OP_CNP) __sync_fetch_and_add(&s->cnp, 1);
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
  s->last_ns = now;
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
  struct roce_pkt pkt = {};
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
  struct roce_pkt pkt = {};
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

/* Baseline for the benchmark: an empty tc program. */
SEC("tc")
int roce_tc_empty(struct __sk_buff* skb) {
  return TC_ACT_UNSPEC;
}
