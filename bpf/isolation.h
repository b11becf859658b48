/* Subnet isolation: structs shared by bpf/isolation.bpf.c and daemon/isolation (fixed-width types,
 * explicit padding, no implicit holes).
 *
 * Maps (all pinned by the manager under its pin dir, names as below):
 * - hsns_iso_v4 / hsns_iso_v6: LPM tries of allowed destination prefixes. The ifindex is part of the
 *   matched bits: prefixlen = 32 + prefix length, so one trie serves every port and a lookup can never
 *   match another port's prefix. Value: HSNS_ISO_ALLOW.
 * - hsns_iso_ports: hash ifindex -> struct hsns_iso_port. A port present here is enforced; a port absent
 *   passes everything (the program may stay attached to it).
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

struct hsns_iso_counters {
  __u64 dropped_packets; /* IP packets to a destination outside the port's prefixes (or unparseable) */
  __u64 dropped_bytes;   /* skb->len of those packets */
  __u64 passed_packets;  /* IP packets allowed through */
};

#endif
