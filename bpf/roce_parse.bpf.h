/* RoCEv2 packet parser shared by eBPF programs: Ethernet, up to two VLAN tags (802.1Q / 802.1ad),
 * IPv4 / IPv6, UDP to port 4791, BTH and AETH; optionally GRE-encapsulated ERSPAN type I, II and III
 * (mirrored frames) with one level of inner Ethernet.
 *
 * Contract: roce_parse() reads only inside [data, end) (every access is bounds checked), never writes to
 * the packet, and returns ROCE_CNT_ROCE with *pkt filled for a well-formed RoCEv2 packet, ROCE_CNT_NON_ROCE
 * for a well-formed packet that is not RoCEv2, or the enum roce_counter of the malformed case. *decapped
 * is set when an ERSPAN header was removed. Nothing is guessed: a truncated or inconsistent header is
 * reported, never accounted.
 */
#ifndef HSNS_BPF_ROCE_PARSE_BPF_H
#define HSNS_BPF_ROCE_PARSE_BPF_H

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "roce_flow.h"

#define ROCE_ETH_P_ERSPAN2 0x88BE
#define ROCE_ETH_P_ERSPAN3 0x22EB
#define ROCE_IPPROTO_GRE 47

struct roce_vlan_hdr {
  __be16 tci;
  __be16 proto;
};

/* The flow key as six words (8-byte aligned: the digest and the slot compare read it word by word). */
union roce_key_words {
  struct roce_flow_key key;
  __u64 w[6];
};

/* What the parser extracts. The flow key is filled in place (family, addresses, UDP source port,
 * destination QP; the caller sets ifindex, direction and pad), so it is never copied. */
struct roce_pkt {
  union roce_key_words k;
  __u32 ip_len;
  __u32 psn;
  __u8 ecn;
  __u8 opcode;
  __u8 syndrome;
  __u8 has_aeth;
};

static __always_inline int roce_parse_l2(void** cur, void* end, __u16* proto) {
  struct ethhdr* eth = *cur;
  if ((void*)(eth + 1) > end) return ROCE_CNT_TRUNC_L2;
  __u16 p = eth->h_proto;
  void* c = eth + 1;
#pragma unroll
  for (int i = 0; i < 2; i++) {
    if (p != bpf_htons(ETH_P_8021Q) && p != bpf_htons(ETH_P_8021AD)) break;
    struct roce_vlan_hdr* vh = c;
    if ((void*)(vh + 1) > end) return ROCE_CNT_TRUNC_L2;
    p = vh->proto;
    c = vh + 1;
  }
  if (p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD)) return ROCE_CNT_VLAN_TOO_DEEP;
  *proto = p;
  *cur = c;
  return 0;
}

static __always_inline int roce_is_ipv6_ext(__u8 nh) {
  return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 || nh == 135 || nh == 139 ||
         nh == 140;
}

/* IP header: fills addresses, ECN and ip_len; *l4proto and *l4len describe the payload. */
static __always_inline int roce_parse_l3(void** cur, void* end, __u16 proto, struct roce_pkt* pkt,
                                         __u8* l4proto, __u32* l4len) {
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr* iph = *cur;
    if ((void*)(iph + 1) > end) return ROCE_CNT_TRUNC_L3;
    if (iph->version != 4 || iph->ihl < 5) return ROCE_CNT_BAD_IP;
    __u32 hl = iph->ihl * 4;
    __u32 tot = bpf_ntohs(iph->tot_len);
    if (tot < hl) return ROCE_CNT_BAD_IP;
    if ((void*)iph + hl > end) return ROCE_CNT_TRUNC_L3;
    if (iph->frag_off & bpf_htons(0x3FFF)) return ROCE_CNT_IP_FRAGMENT;
    /* IPv4 in the first 4 address bytes, the other 12 zero (also after an IPv6 outer header). */
    pkt->k.key.family = 4;
    pkt->k.w[1] = (__u64)iph->saddr;
    pkt->k.w[2] = 0;
    pkt->k.w[3] = (__u64)iph->daddr;
    pkt->k.w[4] = 0;
    pkt->ecn = iph->tos & 3;
    pkt->ip_len = tot;
    *l4proto = iph->protocol;
    *l4len = tot - hl;
    *cur = (void*)iph + hl;
    return 0;
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr* ip6 = *cur;
    if ((void*)(ip6 + 1) > end) return ROCE_CNT_TRUNC_L3;
    if (ip6->version != 6) return ROCE_CNT_BAD_IP;
    __u8 nh = ip6->nexthdr;
    if (roce_is_ipv6_ext(nh)) return ROCE_CNT_IPV6_EXT;
    pkt->k.key.family = 6;
    __builtin_memcpy(pkt->k.key.src, &ip6->saddr, 16);
    __builtin_memcpy(pkt->k.key.dst, &ip6->daddr, 16);
    pkt->ecn = (ip6->flow_lbl[0] >> 4) & 3;
    *l4len = bpf_ntohs(ip6->payload_len);
    pkt->ip_len = *l4len + 40;
    *l4proto = nh;
    *cur = ip6 + 1;
    return 0;
  }
  return ROCE_CNT_NON_ROCE;
}

/* UDP + BTH (+ AETH for the RC ACK opcode). */
static __always_inline int roce_parse_l4(void* cur, void* end, __u8 l4proto, __u32 l4len,
                                         struct roce_pkt* pkt) {
  if (l4proto != IPPROTO_UDP) return ROCE_CNT_NON_ROCE;
  struct udphdr* udp = cur;
  if ((void*)(udp + 1) > end) return ROCE_CNT_TRUNC_UDP;
  if (udp->dest != bpf_htons(ROCE_UDP_PORT)) return ROCE_CNT_NON_ROCE;
  __u32 ulen = bpf_ntohs(udp->len);
  if (ulen < sizeof(*udp) + 12 || ulen > l4len) return ROCE_CNT_BAD_UDP_LEN;
  __u8* bth = (void*)(udp + 1);
  if ((void*)(bth + 12) > end) return ROCE_CNT_TRUNC_BTH;
  if (bth[1] & 0x0F) return ROCE_CNT_BAD_BTH_VERSION;
  pkt->k.key.sport = bpf_ntohs(udp->source);
  pkt->opcode = bth[0];
  pkt->k.key.dest_qp = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];
  pkt->psn = ((__u32)bth[9] << 16) | ((__u32)bth[10] << 8) | bth[11];
  pkt->has_aeth = 0;
  pkt->syndrome = 0;
  if (bth[0] == 0x11) {
    if (ulen < sizeof(*udp) + 16 || (void*)(bth + 16) > end) return ROCE_CNT_TRUNC_AETH;
    pkt->has_aeth = 1;
    pkt->syndrome = bth[12];
  }
  return ROCE_CNT_ROCE;
}

/* GRE + ERSPAN: on success *cur points at the inner Ethernet header. */
static __always_inline int roce_parse_erspan(void** cur, void* end) {
  __u8* gre = *cur;
  if ((void*)(gre + 4) > end) return ROCE_CNT_TRUNC_ERSPAN;
  __u16 flags = ((__u16)gre[0] << 8) | gre[1];
  __u16 proto = ((__u16)gre[2] << 8) | gre[3];
  if ((proto != ROCE_ETH_P_ERSPAN2 && proto != ROCE_ETH_P_ERSPAN3) || (flags & 0x0007))
    return ROCE_CNT_GRE_NOT_ERSPAN;
  __u32 hl = 4;
  if (flags & 0x8000) hl += 4;
  if (flags & 0x2000) hl += 4;
  if (flags & 0x1000) hl += 4;
  __u8* ers = gre + hl;
  if (proto == ROCE_ETH_P_ERSPAN2 && !(flags & 0x1000)) {
    /* ERSPAN type I: no ERSPAN header. */
    *cur = ers;
    return 0;
  }
  if (proto == ROCE_ETH_P_ERSPAN2) {
    if ((void*)(ers + 8) > end || (ers[0] >> 4) != 1) return ROCE_CNT_TRUNC_ERSPAN;
    *cur = ers + 8;
    return 0;
  }
  if ((void*)(ers + 12) > end || (ers[0] >> 4) != 2) return ROCE_CNT_TRUNC_ERSPAN;
  *cur = ers + 12 + ((ers[11] & 1) ? 8 : 0);
  return 0;
}

static __always_inline int roce_parse(void* data, void* end, struct roce_pkt* pkt, int decap, int* decapped) {
  void* cur = data;
  __u16 proto = 0;
  __u8 l4proto = 0;
  __u32 l4len = 0;
  int st = roce_parse_l2(&cur, end, &proto);
  if (st) return st;
  st = roce_parse_l3(&cur, end, proto, pkt, &l4proto, &l4len);
  if (st) return st;
  if (decap && l4proto == ROCE_IPPROTO_GRE) {
    st = roce_parse_erspan(&cur, end);
    if (st) return st;
    *decapped = 1;
    st = roce_parse_l2(&cur, end, &proto);
    if (st) return st;
    st = roce_parse_l3(&cur, end, proto, pkt, &l4proto, &l4len);
    if (st) return st;
  }
  return roce_parse_l4(cur, end, l4proto, l4len, pkt);
}

#endif /* HSNS_BPF_ROCE_PARSE_BPF_H */
