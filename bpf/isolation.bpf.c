// SPDX-License-Identifier: GPL-2.0
/* Subnet isolation: tc egress (clsact, direct action) on parameter-plane ports.
 *
 * Verdicts, for an enforced port (one with a policy in hsns_iso_fast; past HSNS_ISO_FAST_IFINDEX, one present
 * in hsns_iso_ports; userspace keeps the two in step):
 * - IPv4/IPv6 (also behind up to two 802.1Q/802.1ad tags) to a destination inside one of the port's
 *   allowed prefixes: TC_ACT_OK, passed_packets += 1.
 * - IPv4/IPv6 to any other destination, or a frame whose ethertype says IP/VLAN but which ends before
 *   the destination address: TC_ACT_SHOT, dropped_packets += 1, dropped_bytes += skb->len.
 * - IPv6 to a link-local scope destination (fe80::/10 unicast, ff02::/16 multicast: neighbour discovery,
 *   MLD) always passes and counts as passed: it never leaves the link, and IPv6 breaks without it.
 * - Anything else (ARP, LLDP, ...): TC_ACT_OK, not counted.
 * A port not enforced passes everything and is not counted.
 * Lookups (bpf/isolation.h): a port with ifindex < HSNS_ISO_FAST_IFINDEX is found by two array lookups
 * (hsns_iso_fast, then its policy) and its destination compared with the policy's few address/mask pairs
 * in a bounded loop; only a family with more prefixes than the policy holds, and every port with a larger
 * ifindex (found in the hsns_iso_ports hash), ask the LPM tries. Same verdicts either way.
 * Headers are read by direct packet access after bpf_skb_pull_data of at most HSNS_ISO_PARSE_LEN bytes
 * when the skb is non-linear; every read is bounds-checked against data_end.
 */
#include "isolation.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, HSNS_ISO_MAX_PREFIXES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct hsns_iso_v4_key);
  __type(value, __u32);
} hsns_iso_v4 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, HSNS_ISO_MAX_PREFIXES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct hsns_iso_v6_key);
  __type(value, __u32);
} hsns_iso_v6 SEC(".maps");

/* Sizes rather than types: clang emits only a forward declaration of a struct seen behind pointers. */
struct hsns_iso_policy_map {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(struct hsns_iso_policy));
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, HSNS_ISO_FAST_IFINDEX);
  __type(key, __u32);
  __array(values, struct hsns_iso_policy_map);
} hsns_iso_fast SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, HSNS_ISO_MAX_PORTS);
  __type(key, __u32);
  __type(value, struct hsns_iso_port);
} hsns_iso_ports SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, HSNS_ISO_MAX_PORTS);
  __type(key, __u32);
  __type(value, struct hsns_iso_counters);
} hsns_iso_counters SEC(".maps");

#define ETH_P_8021Q_ 0x8100
#define ETH_P_8021AD_ 0x88A8
#define IPV4_DADDR_OFF 16
#define IPV6_DADDR_OFF 24
/* Ethernet + two VLAN tags + the IPv6 header up to the end of its destination address. */
#define HSNS_ISO_PARSE_LEN (ETH_HLEN + 8 + IPV6_DADDR_OFF + 16)

static __always_inline int drop(struct __sk_buff* skb, struct hsns_iso_counters* c) {
  if (c) {
    c->dropped_packets += 1;
    c->dropped_bytes += skb->len;
  }
  return TC_ACT_SHOT;
}

/* Whether the IPv4 destination (network byte order, as in the packet) lies in one of the port's prefixes:
 * the policy's inline list, or the trie when there is no policy (slow-path port) or it says so. */
static __always_inline int v4_allowed(const struct hsns_iso_policy* pol, __u32 ifindex, __u32 daddr) {
  if (pol && !(pol->flags & HSNS_ISO_V4_IN_TRIE)) {
    const __u32 n = pol->n4;
#pragma unroll
    for (__u32 i = 0; i < HSNS_ISO_FAST_V4; i++) {
      if (i >= n) break;
      if ((daddr & pol->v4[i].mask) == pol->v4[i].addr) return 1;
    }
    return 0;
  }
  struct hsns_iso_v4_key key = {.prefixlen = HSNS_ISO_IFINDEX_BITS + 32, .ifindex = ifindex};
  __builtin_memcpy(key.addr, &daddr, 4);
  return bpf_map_lookup_elem(&hsns_iso_v4, &key) != 0;
}

static __always_inline int v6_allowed(const struct hsns_iso_policy* pol, __u32 ifindex, __u64 d0, __u64 d1) {
  if (pol && !(pol->flags & HSNS_ISO_V6_IN_TRIE)) {
    const __u32 n = pol->n6;
#pragma unroll
    for (__u32 i = 0; i < HSNS_ISO_FAST_V6; i++) {
      if (i >= n) break;
      const struct hsns_iso_v6_net* net = &pol->v6[i];
      if ((d0 & net->mask[0]) == net->addr[0] && (d1 & net->mask[1]) == net->addr[1]) return 1;
    }
    return 0;
  }
  struct hsns_iso_v6_key key = {.prefixlen = HSNS_ISO_IFINDEX_BITS + 128, .ifindex = ifindex};
  __builtin_memcpy(key.addr, &d0, 8);
  __builtin_memcpy(key.addr + 8, &d1, 8);
  return bpf_map_lookup_elem(&hsns_iso_v6, &key) != 0;
}

SEC("tc")
int hsns_isolation_egress(struct __sk_buff* skb) {
  __u32 ifindex = skb->ifindex;
  const struct hsns_iso_policy* pol = 0;
  __u32 slot;
  if (ifindex < HSNS_ISO_FAST_IFINDEX) {
    void* policies = bpf_map_lookup_elem(&hsns_iso_fast, &ifindex);
    if (!policies) return TC_ACT_OK; /* not enforced */
    __u32 zero = 0;
    pol = bpf_map_lookup_elem(policies, &zero);
    if (!pol) return TC_ACT_OK; /* cannot happen: a one-element array */
    slot = pol->slot;
  } else {
    struct hsns_iso_port* port = bpf_map_lookup_elem(&hsns_iso_ports, &ifindex);
    if (!port) return TC_ACT_OK;
    slot = port->slot;
  }
  struct hsns_iso_counters* c = bpf_map_lookup_elem(&hsns_iso_counters, &slot); /* NULL if out of range */

  /* Parse with direct packet access; linearise the few header bytes first when the skb is non-linear,
   * so a bounds check that fails afterwards means the frame really is that short. */
  __u32 want = skb->len < HSNS_ISO_PARSE_LEN ? skb->len : HSNS_ISO_PARSE_LEN;
  if ((long)skb->data + want > (long)skb->data_end) bpf_skb_pull_data(skb, want);
  void* data = (void*)(long)skb->data;
  void* data_end = (void*)(long)skb->data_end;

  /* Header fields are read with one load each (not through packed structs or memcpy, which compile to
   * byte loads): unaligned packet loads are fine for the verifier on this architecture. */
  if (data + ETH_HLEN > data_end) return TC_ACT_OK; /* no ethertype */
  __u16 proto = bpf_ntohs(*(__be16*)(data + 12));
  void* l3 = data + ETH_HLEN;

#pragma unroll
  for (int i = 0; i < 2; i++) {
    if (proto != ETH_P_8021Q_ && proto != ETH_P_8021AD_) break;
    /* A tag is 4 bytes: TCI then the next ethertype. */
    if (l3 + 4 > data_end) return drop(skb, c);
    proto = bpf_ntohs(*(__be16*)(l3 + 2));
    l3 += 4;
  }

  if (proto == ETH_P_IP) {
    if (l3 + IPV4_DADDR_OFF + 4 > data_end) return drop(skb, c);
    if (!v4_allowed(pol, ifindex, *(__u32*)(l3 + IPV4_DADDR_OFF))) return drop(skb, c);
  } else if (proto == ETH_P_IPV6) {
    if (l3 + IPV6_DADDR_OFF + 16 > data_end) return drop(skb, c);
    const __u16 top = bpf_ntohs(*(__be16*)(l3 + IPV6_DADDR_OFF));
    const int link_local = (top & 0xffc0) == 0xfe80 || (top & 0xff0f) == 0xff02;
    if (!link_local &&
        !v6_allowed(pol, ifindex, *(__u64*)(l3 + IPV6_DADDR_OFF), *(__u64*)(l3 + IPV6_DADDR_OFF + 8))) {
      return drop(skb, c);
    }
  } else if (proto == ETH_P_8021Q_ || proto == ETH_P_8021AD_) {
    return drop(skb, c); /* more than two tags: cannot see the payload, fail closed */
  } else {
    return TC_ACT_OK;
  }
  if (c) c->passed_packets += 1;
  return TC_ACT_OK;
}
