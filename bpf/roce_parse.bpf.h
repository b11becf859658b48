/* RoCEv2 packet parser shared by eBPF programs: Ethernet, up to two VLAN tags (802.1Q / 802.1ad),
 * IPv4 / IPv6, UDP to port 4791, BTH and AETH; optionally GRE-encapsulated ERSPAN type I, II and III
 * (mirrored frames) with one level of inner Ethernet.
 *
 * Contract: roce_parse_frame() reads only inside [data, end) (every access is bounds checked), never writes
 * to the packet, and returns ROCE_CNT_ROCE with *pkt filled for a well-formed RoCEv2 packet,
 * ROCE_CNT_NON_ROCE for a well-formed packet that is not RoCEv2, or the enum roce_counter of the malformed
 * case, with ROCE_PARSE_DECAPPED set when an ERSPAN header was removed. Nothing is guessed: a truncated or
 * inconsistent header is reported, never accounted.
 *
 * Cost notes (the per-packet budget is tens of ns): multi-byte fields are read with one load each (the
 * packet is read in network order, compared against constants converted at compile time); malformed cases
 * are marked unlikely so that the well-formed path falls through; the outer IP header of a GRE packet on a
 * collector port is validated but not copied into the flow key (the inner header overwrites it); every exit
 * of the parse leaves through one status (the ERSPAN flag folded in), so the caller's code does not carry
 * each exit's constants separately. Behaviour (status, counters, extracted fields) is the same as a
 * field-by-field parse.
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

/* roce_parse_l3 only: an outer IP header carrying GRE on a collector port (not an enum roce_counter). */
#define ROCE_PARSE_GRE (-1)

#define roce_unlikely(x) __builtin_expect(!!(x), 0)

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

/* 16 / 32 bits as stored in the packet (network order); packet loads need no alignment on BPF. */
static __always_inline __u16 roce_raw16(const void* p) {
  return *(const __u16*)p;
}

static __always_inline __u32 roce_raw32(const void* p) {
  return *(const __u32*)p;
}

static __always_inline int roce_is_vlan(__u16 p) {
  return p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD);
}

/* Ethernet and up to two VLAN tags: *proto is the EtherType after them (network order). */
static __always_inline int roce_parse_l2(void** cur, void* end, __u16* proto) {
  __u8* c = *cur;
  if (roce_unlikely((void*)(c + ETH_HLEN) > end)) return ROCE_CNT_TRUNC_L2;
  __u16 p = roce_raw16(c + 12);
  c += ETH_HLEN;
  if (roce_is_vlan(p)) {
    if (roce_unlikely((void*)(c + 4) > end)) return ROCE_CNT_TRUNC_L2;
    p = roce_raw16(c + 2);
    c += 4;
    if (roce_is_vlan(p)) {
      if (roce_unlikely((void*)(c + 4) > end)) return ROCE_CNT_TRUNC_L2;
      p = roce_raw16(c + 2);
      c += 4;
      if (roce_unlikely(roce_is_vlan(p))) return ROCE_CNT_VLAN_TOO_DEEP;
    }
  }
  *proto = p;
  *cur = c;
  return 0;
}

static __always_inline int roce_is_ipv6_ext(__u8 nh) {
  return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 || nh == 135 || nh == 139 ||
         nh == 140;
}

/* IP header: fills addresses, ECN and ip_len; *l4proto and *l4len describe the payload. With `gre`, a
 * valid header carrying GRE returns ROCE_PARSE_GRE with only *cur advanced (nothing of it is kept). */
static __always_inline int roce_parse_l3(void** cur, void* end, __u16 proto, struct roce_pkt* pkt,
                                         __u8* l4proto, __u32* l4len, int gre) {
  if (proto == bpf_htons(ETH_P_IP)) {
    __u8* iph = *cur;
    if (roce_unlikely((void*)(iph + 20) > end)) return ROCE_CNT_TRUNC_L3;
    /* Version 4 and IHL >= 5: the first byte is 0x45..0x4F. */
    __u8 vihl = iph[0];
    if (roce_unlikely((__u8)(vihl - 0x45) > 0x0A)) return ROCE_CNT_BAD_IP;
    __u32 hl = (vihl & 0x0F) * 4;
    __u32 tot = bpf_ntohs(roce_raw16(iph + 2));
    if (roce_unlikely(tot < hl)) return ROCE_CNT_BAD_IP;
    if (roce_unlikely((void*)(iph + hl) > end)) return ROCE_CNT_TRUNC_L3;
    if (roce_unlikely(roce_raw16(iph + 6) & bpf_htons(0x3FFF))) return ROCE_CNT_IP_FRAGMENT;
    __u8 p = iph[9];
    *cur = iph + hl;
    if (gre && p == ROCE_IPPROTO_GRE) return ROCE_PARSE_GRE;
    /* IPv4 in the first 4 address bytes, the other 12 zero (also after an IPv6 outer header). */
    pkt->k.key.family = 4;
    pkt->k.w[1] = (__u64)roce_raw32(iph + 12);
    pkt->k.w[2] = 0;
    pkt->k.w[3] = (__u64)roce_raw32(iph + 16);
    pkt->k.w[4] = 0;
    pkt->ecn = iph[1] & 3;
    pkt->ip_len = tot;
    *l4proto = p;
    *l4len = tot - hl;
    return 0;
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr* ip6 = *cur;
    if (roce_unlikely((void*)(ip6 + 1) > end)) return ROCE_CNT_TRUNC_L3;
    if (roce_unlikely(ip6->version != 6)) return ROCE_CNT_BAD_IP;
    __u8 nh = ip6->nexthdr;
    if (roce_unlikely(roce_is_ipv6_ext(nh))) return ROCE_CNT_IPV6_EXT;
    *cur = ip6 + 1;
    if (gre && nh == ROCE_IPPROTO_GRE) return ROCE_PARSE_GRE;
    pkt->k.key.family = 6;
    __builtin_memcpy(pkt->k.key.src, &ip6->saddr, 16);
    __builtin_memcpy(pkt->k.key.dst, &ip6->daddr, 16);
    pkt->ecn = (ip6->flow_lbl[0] >> 4) & 3;
    *l4len = bpf_ntohs(ip6->payload_len);
    pkt->ip_len = *l4len + 40;
    *l4proto = nh;
    return 0;
  }
  return ROCE_CNT_NON_ROCE;
}

/* UDP + BTH (+ AETH for the RC ACK opcode). */
static __always_inline int roce_parse_l4(void* cur, void* end, __u8 l4proto, __u32 l4len,
                                         struct roce_pkt* pkt) {
  if (l4proto != IPPROTO_UDP) return ROCE_CNT_NON_ROCE;
  struct udphdr* udp = cur;
  if (roce_unlikely((void*)(udp + 1) > end)) return ROCE_CNT_TRUNC_UDP;
  if (udp->dest != bpf_htons(ROCE_UDP_PORT)) return ROCE_CNT_NON_ROCE;
  __u32 ulen = bpf_ntohs(udp->len);
  if (roce_unlikely(ulen < sizeof(*udp) + 12 || ulen > l4len)) return ROCE_CNT_BAD_UDP_LEN;
  __u8* bth = (void*)(udp + 1);
  if (roce_unlikely((void*)(bth + 12) > end)) return ROCE_CNT_TRUNC_BTH;
  if (roce_unlikely(bth[1] & 0x0F)) return ROCE_CNT_BAD_BTH_VERSION;
  pkt->k.key.sport = bpf_ntohs(udp->source);
  pkt->opcode = bth[0];
  /* Bytes 5..7 and 9..11: the low 24 bits of the big-endian words at 4 and 8. */
  pkt->k.key.dest_qp = bpf_ntohl(roce_raw32(bth + 4)) & 0xFFFFFF;
  pkt->psn = bpf_ntohl(roce_raw32(bth + 8)) & 0xFFFFFF;
  pkt->has_aeth = 0;
  pkt->syndrome = 0;
  if (bth[0] == 0x11) {
    if (roce_unlikely(ulen < sizeof(*udp) + 16 || (void*)(bth + 16) > end)) return ROCE_CNT_TRUNC_AETH;
    pkt->has_aeth = 1;
    pkt->syndrome = bth[12];
  }
  return ROCE_CNT_ROCE;
}

/* GRE + ERSPAN: on success *cur points at the inner Ethernet header. GRE flags and protocol are one
 * big-endian word: C (bit 31), K (29), S (28), version (16..18), protocol (0..15). */
static __always_inline int roce_parse_erspan(void** cur, void* end) {
  __u8* gre = *cur;
  if (roce_unlikely((void*)(gre + 4) > end)) return ROCE_CNT_TRUNC_ERSPAN;
  __u32 w = bpf_ntohl(roce_raw32(gre));
  if (roce_unlikely(w & 0x70000)) return ROCE_CNT_GRE_NOT_ERSPAN;
  /* 4 bytes each for checksum (C), key (K) and sequence number (S). */
  __u8* ers = gre + 4 + ((w >> 29) & 4) + ((w >> 27) & 4) + ((w >> 26) & 4);
  __u16 proto = w;
  if (proto == ROCE_ETH_P_ERSPAN2) {
    if (!(w & 0x10000000)) {
      /* ERSPAN type I: no ERSPAN header. */
      *cur = ers;
      return 0;
    }
    if (roce_unlikely((void*)(ers + 8) > end || (ers[0] >> 4) != 1)) return ROCE_CNT_TRUNC_ERSPAN;
    *cur = ers + 8;
    return 0;
  }
  if (roce_unlikely(proto != ROCE_ETH_P_ERSPAN3)) return ROCE_CNT_GRE_NOT_ERSPAN;
  if (roce_unlikely((void*)(ers + 12) > end || (ers[0] >> 4) != 2)) return ROCE_CNT_TRUNC_ERSPAN;
  *cur = ers + 12 + ((ers[11] & 1) ? 8 : 0);
  return 0;
}

/* The parse proper: the status, with ROCE_PARSE_DECAPPED set once an ERSPAN header was removed. */
#define ROCE_PARSE_DECAPPED 0x100
_Static_assert(ROCE_CNT_MAX <= 0xFF, "status and ROCE_PARSE_DECAPPED share one int");

static __always_inline int roce_parse_frame(void* data, void* end, struct roce_pkt* pkt, int decap) {
  void* cur = data;
  __u16 proto = 0;
  __u8 l4proto = 0;
  __u32 l4len = 0;
  int st = roce_parse_l2(&cur, end, &proto);
  if (roce_unlikely(st)) return st;
  st = roce_parse_l3(&cur, end, proto, pkt, &l4proto, &l4len, decap);
  if (decap && st == ROCE_PARSE_GRE) {
    st = roce_parse_erspan(&cur, end);
    if (roce_unlikely(st)) return st;
    st = roce_parse_l2(&cur, end, &proto);
    if (roce_unlikely(st)) return st | ROCE_PARSE_DECAPPED;
    st = roce_parse_l3(&cur, end, proto, pkt, &l4proto, &l4len, 0);
    if (st) return st | ROCE_PARSE_DECAPPED;
    return roce_parse_l4(cur, end, l4proto, l4len, pkt) | ROCE_PARSE_DECAPPED;
  }
  if (st) return st;
  return roce_parse_l4(cur, end, l4proto, l4len, pkt);
}

#endif /* HSNS_BPF_ROCE_PARSE_BPF_H */
