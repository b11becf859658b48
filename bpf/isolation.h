/* Subnet isolation: structs shared by bpf/isolation.bpf.c and daemon/isolation (fixed-width types,
 * explicit padding, no implicit holes).
 *
 * Maps (all pinned by the manager under its pin dir, names as below):
 * - hsns_iso_fast: the hot path. Array of maps indexed by ifindex (< HSNS_ISO_FAST_IFINDEX); the inner
 *   map of an enforced port is a one-element array holding its struct hsns_iso_policy: the counter slot
 *   and, per family, up to HSNS_ISO_FAST_V4 / HSNS_ISO_FAST_V6 prefixes as address and mask, or a flag
 *   saying that family has more prefixes and is looked up in its trie. Both lookups are array lookups
 *   (no hashing, no trie walk). A policy is never written in place: userspace fills a fresh inner map
 *   and swaps it in with one update of the outer map, so a packet sees the old policy or the new one
 *   whole; the swap returns after an RCU grace period, so no packet still reads the old one afterwards.
 *   For a port with ifindex < HSNS_ISO_FAST_IFINDEX, an entry here is what makes it enforced (present
 *   exactly when the port is in hsns_iso_ports).
 * - hsns_iso_v4 / hsns_iso_v6: LPM tries of allowed destination prefixes of every enforced port (the
 *   source of truth of the prefix sets, always complete). The ifindex is part of the matched bits:
 *   prefixlen = 32 + prefix length, so one trie serves every port and a lookup can never match another
 *   port's prefix. Value: HSNS_ISO_ALLOW. Looked up only for a family flagged HSNS_ISO_V4_IN_TRIE /
 *   HSNS_ISO_V6_IN_TRIE and for ports with ifindex >= HSNS_ISO_FAST_IFINDEX.
 * - hsns_iso_ports: hash ifindex -> struct hsns_iso_port. A port present here is enforced; a port absent
 *   passes everything (the program may stay attached to it). Looked up by the program only for ports
 *   with ifindex >= HSNS_ISO_FAST_IFINDEX (the slow path: hash, then the tries).
 * - hsns_iso_counters: per-CPU array [HSNS_ISO_MAX_PORTS] of struct hsns_iso_counters, indexed by the
 *   port's slot (an array lookup is inlined by the verifier; a second hash lookup per packet is not).
 *   Userspace gives each port the lowest free slot and zeroes it before publishing the port entry.
 */
#ifndef HSNS_BPF_ISOLATION_H
#define HSNS_BPF_ISOLATION_H

#include <linux/types.h>

#define HSNS_ISO_MAX_PORTS 256
#define HSNS_ISO_MAX_PREFIXES 16384
#define HSNS_ISO_ALLOW 1

/* Ports with a smaller ifindex take the hot path (hsns_iso_fast); 8-byte pointers: 128 KiB. */
#define HSNS_ISO_FAST_IFINDEX 16384
/* Prefixes per family a policy holds inline; a family with more is looked up in its trie. */
#define HSNS_ISO_FAST_V4 8
#define HSNS_ISO_FAST_V6 8

/* Number of leading bits of the LPM keys that hold the ifindex. */
#define HSNS_ISO_IFINDEX_BITS 32

struct hsns_iso_v4_key {
  __u32 prefixlen; /* HSNS_ISO_IFINDEX_BITS + IPv4 prefix length */
  __u32 ifindex;   /* host byte order; always matched in full */
  __u8 addr[4];    /* network byte order */
};

struct hsns_iso_v6_key {
  __u32 prefixlen; /* HSNS_ISO_IFINDEX_BITS + IPv6 prefix length */
  __u32 ifindex;
  __u8 addr[16];
};

/* hsns_iso_port.flags */
#define HSNS_ISO_PORT_OWNS_QDISC 1u /* the manager created the clsact qdisc of this port */

struct hsns_iso_port {
  __u32 flags;
  __u32 slot;    /* index into hsns_iso_counters, < HSNS_ISO_MAX_PORTS */
  char name[16]; /* netdev name when applied (IFNAMSIZ), NUL-terminated; for recovery after restart */
};

/* hsns_iso_policy.flags */
#define HSNS_ISO_V4_IN_TRIE 1u /* more than HSNS_ISO_FAST_V4 IPv4 prefixes: v4[] unused, ask hsns_iso_v4 */
#define HSNS_ISO_V6_IN_TRIE 2u /* more than HSNS_ISO_FAST_V6 IPv6 prefixes: v6[] unused, ask hsns_iso_v6 */

/* Address and mask as the raw bytes of the packet (network byte order), so that a masked compare of the
 * destination loaded from the packet needs no byte swap. addr has no bits outside mask. */
struct hsns_iso_v4_net {
  __u32 addr;
  __u32 mask;
};

struct hsns_iso_v6_net {
  __u64 addr[2];
  __u64 mask[2];
};

/* The value of the one-element inner maps of hsns_iso_fast. Entries past n4 / n6 are zero. */
struct hsns_iso_policy {
  __u32 slot;  /* index into hsns_iso_counters (as in hsns_iso_port) */
  __u32 flags; /* HSNS_ISO_V4_IN_TRIE, HSNS_ISO_V6_IN_TRIE */
  __u32 n4;    /* prefixes used in v4[] */
  __u32 n6;    /* prefixes used in v6[] */
  struct hsns_iso_v4_net v4[HSNS_ISO_FAST_V4];
  struct hsns_iso_v6_net v6[HSNS_ISO_FAST_V6];
};

struct hsns_iso_counters {
  __u64 dropped_packets; /* IP packets to a destination outside the port's prefixes (or unparseable) */
  __u64 dropped_bytes;   /* skb->len of those packets */
  __u64 passed_packets;  /* IP packets allowed through */
};

#endif
