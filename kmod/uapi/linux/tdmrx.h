/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tdmrx: receive-side recorder of tdmwin test traffic.
 *
 * This header is the only contract between tdmrx.ko, libtdm's ring reader,
 * tdmgen and tdmstat.  It defines:
 *
 *  1. the stamped test packet header that tdmgen puts at the start of every
 *     UDP payload (network byte order);
 *  2. the generic netlink family "tdmrx" that attaches the recorder to one
 *     device and a set of UDP ports, detaches it and reads its counters;
 *  3. the record that the module writes for every matching packet, and the
 *     layout of the per-CPU rings that user space maps from /dev/tdmrx.
 *
 * Ring protocol (one single-producer/single-consumer ring per CPU):
 *
 *   The producer is the receive softirq of that CPU.  It writes the record
 *   at index (prod & mask), then publishes it with a store-release of
 *   prod (barrier B).  The consumer load-acquires prod (barrier C), reads
 *   records [cons, prod), then store-releases cons (barrier D) so that the
 *   producer may reuse the slots; the producer load-acquires cons (barrier
 *   A) before overwriting a slot.  prod and cons are free-running 64-bit
 *   counters; a ring holds at most (mask + 1) unread records.  When it is
 *   full the newest record is dropped and counted in `dropped`: unread data
 *   is never overwritten.  The kernel keeps its own copies of prod and
 *   dropped and clamps cons into [prod - size, prod], so a consumer that
 *   writes nonsense only hurts itself.
 */
#ifndef _UAPI_LINUX_TDMRX_H
#define _UAPI_LINUX_TDMRX_H

#include <linux/types.h>

/* ---- 1. the stamped test packet (tdmgen), at offset 0 of the UDP payload */

#define TDM_PKT_MAGIC		0x54444d47	/* "TDMG" */
#define TDM_PKT_VERSION		1

/* flags */
#define TDM_PKT_F_END		0x01	/* end-of-test marker, carries `sent` */

struct tdm_pkt_hdr {
	__be32	magic;		/* TDM_PKT_MAGIC */
	__u8	version;	/* TDM_PKT_VERSION */
	__u8	flags;		/* TDM_PKT_F_* */
	__be16	hdr_len;	/* sizeof(struct tdm_pkt_hdr) of the sender */
	__be32	sender;		/* sender id (its index in the plan) */
	__be32	plan_version;	/* plan in force when sent; 0 = unknown */
	__be64	seq;		/* per sender, from 0, data packets only */
	__be64	tx_ns;		/* TX time, ns on CLOCK_TAI, just before send */
	__be64	sent;		/* END: data packets sent in the test; else 0 */
};				/* 40 bytes */

/* ---- 2. generic netlink control ------------------------------------------ */

#define TDMRX_GENL_NAME		"tdmrx"
#define TDMRX_GENL_VERSION	1
#define TDMRX_DEV_NAME		"tdmrx"		/* /dev/tdmrx */

#define TDMRX_MAX_PORTS		16
#define TDMRX_MIN_RING		64		/* records per CPU */
#define TDMRX_MAX_RING		4194304U	/* records: 256 MiB per CPU */
#define TDMRX_DEFAULT_RING	65536U
#define TDMRX_DEFAULT_FLUSH_US	10000		/* quiet-tail wakeup */

enum {
	TDMRX_CMD_UNSPEC,
	TDMRX_CMD_ATTACH,	/* IFINDEX, PORTS; opt. RING_RECORDS, WATERMARK,
				 * FLUSH_US.  Caller becomes the owner.  Reply:
				 * as TDMRX_CMD_GET.  EBUSY if attached.
				 */
	TDMRX_CMD_DETACH,	/* owner (or CAP_NET_ADMIN with FORCE) */
	TDMRX_CMD_GET,		/* state and counters */
	__TDMRX_CMD_MAX,
};

#define TDMRX_CMD_MAX (__TDMRX_CMD_MAX - 1)

enum {
	TDMRX_A_UNSPEC,
	TDMRX_A_PAD,
	TDMRX_A_IFINDEX,	/* u32 */
	TDMRX_A_IFNAME,		/* string, reply only */
	TDMRX_A_PORTS,		/* nest of TDMRX_A_PORT */
	TDMRX_A_PORT,		/* u16, UDP destination port (host order) */
	TDMRX_A_RING_RECORDS,	/* u32, per CPU, power of two */
	TDMRX_A_WATERMARK,	/* u32, records; wake poll() at this fill */
	TDMRX_A_FLUSH_US,	/* u32, wake poll() for a quiet tail after */
	TDMRX_A_FORCE,		/* flag: DETACH someone else's session */
	TDMRX_A_ATTACHED,	/* u8, reply */
	TDMRX_A_OWNER,		/* u32, netlink port id of the owner, reply */
	TDMRX_A_NR_RINGS,	/* u32, reply: rings in the mapping */
	TDMRX_A_RING_BYTES,	/* u64, reply: bytes per ring in the mapping */
	TDMRX_A_SESSION,	/* u32, reply: increments on every attach */
	TDMRX_A_STATS,		/* binary struct tdmrx_stats, reply */
	TDMRX_A_HW_TSTAMP,	/* u8, reply: 1 if hardware stamps were seen */
	__TDMRX_A_MAX,
};

#define TDMRX_A_MAX (__TDMRX_A_MAX - 1)

/* Counters over all CPUs (only ever appended). */
struct tdmrx_stats {
	__u64	seen;		/* packets of the device the hook saw */
	__u64	matched;	/* UDP to one of the ports */
	__u64	records;	/* records written */
	__u64	dropped;	/* records dropped: ring full */
	__u64	bad_header;	/* matched, but no valid tdm_pkt_hdr */
	__u64	hw_stamps;	/* records with a hardware timestamp */
	__u64	sw_stamps;	/* records with a software timestamp */
	__u64	wakeups;	/* poll() wakeups issued */
};

/* ---- 3. records and rings ------------------------------------------------- */

/* tdmrx_record.flags */
#define TDMRX_F_HW_TS		0x0001	/* rx_ns from the NIC (hwtstamps) */
#define TDMRX_F_SW_TS		0x0002	/* rx_ns = skb->tstamp (CLOCK_REALTIME) */
#define TDMRX_F_NOW_TS		0x0004	/* rx_ns = ktime_get_real() at the hook */
#define TDMRX_F_GSO		0x0008	/* a GRO/GSO skb: one stamp, many datagrams */
#define TDMRX_F_TRUNC		0x0010	/* payload shorter than the header */
#define TDMRX_F_BAD_MAGIC	0x0020	/* no TDM_PKT_MAGIC / unknown version */
#define TDMRX_F_END		0x0040	/* TDM_PKT_F_END marker */
#define TDMRX_F_IPV6		0x0080

/* One record per matching packet: 64 bytes, host byte order. */
struct tdmrx_record {
	__s64	rx_ns;		/* RX timestamp, see TDMRX_F_*_TS */
	__s64	tx_ns;		/* tdm_pkt_hdr.tx_ns */
	__u64	seq;		/* tdm_pkt_hdr.seq */
	__u64	sent;		/* tdm_pkt_hdr.sent (END only) */
	__u32	sender;		/* tdm_pkt_hdr.sender */
	__u32	plan_version;	/* tdm_pkt_hdr.plan_version */
	__u32	len;		/* UDP payload bytes (all segments if GSO) */
	__u32	saddr;		/* IPv4 source, or a hash of the IPv6 one */
	__u16	sport;		/* UDP ports, host order */
	__u16	dport;
	__u16	cpu;
	__u16	flags;		/* TDMRX_F_* */
	__u16	gso_segs;	/* datagrams in this skb (1 unless GSO) */
	__u16	reserved[3];
};

/*
 * The mapping of /dev/tdmrx: TDMRX_A_NR_RINGS rings of TDMRX_A_RING_BYTES
 * bytes each, ring i (CPU i) at offset i * ring_bytes.  Within a ring:
 *
 *   offset 0:              struct tdmrx_ring_prod (kernel writes)
 *   offset TDMRX_PAGE:     struct tdmrx_ring_cons (user writes)
 *   offset 2 * TDMRX_PAGE: records[size]
 */
#define TDMRX_PAGE		4096
#define TDMRX_RING_DATA_OFF	(2 * TDMRX_PAGE)

struct tdmrx_ring_prod {
	__u64	prod;		/* records published (barrier B/C) */
	__u64	dropped;	/* records dropped, ring full */
	__u32	size;		/* records in the ring, power of two */
	__u32	rec_size;	/* sizeof(struct tdmrx_record) */
	__u32	cpu;
	__u32	session;	/* TDMRX_A_SESSION of the attach */
	__u32	detached;	/* 1 once detached: nothing more will come */
	__u32	reserved;
	__s64	mark_ns;	/* receive watermark, CLOCK_MONOTONIC (below) */
};

/*
 * The receive watermark.  mark_ns is the CLOCK_MONOTONIC time at which the
 * hook last handled a matching packet on this CPU, or at which the ring's
 * timer (every flush_us) found it between packets or its CPU offline; at
 * attach, the time of the attach.  The kernel store-releases it after
 * publishing prod.  A reader that load-acquires mark_ns and then prod knows
 * that every record this ring publishes beyond that prod was hooked at
 * mark_ns or later, so with a bound L on (hook time - receive stamp) no
 * record still to come has a receive stamp before mark_ns - L.  A mark can
 * be smaller than one read before (see tdmrx_mark_timer()): keep the
 * largest.  Receive stamps themselves are not monotonic, even within one
 * ring.
 */

struct tdmrx_ring_cons {
	__u64	cons;		/* records consumed (barrier D/A) */
};

#endif /* _UAPI_LINUX_TDMRX_H */
