/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tdmwin: time-division multiplexed transmit windows.
 *
 * This header is the only contract between sch_tdmwin.ko, the tc plugin
 * (q_tdmwin.so) and tdmd.  It is included verbatim by all three.
 *
 * All times are in nanoseconds on the qdisc's clock (CLOCK_TAI by default).
 */
#ifndef _UAPI_LINUX_TDMWIN_H
#define _UAPI_LINUX_TDMWIN_H

#include <linux/types.h>

#define TDMWIN_MAX_WINDOWS	64		/* windows per cycle */
#define TDMWIN_MIN_CYCLE_NS	1000ULL		/* 1 us */
#define TDMWIN_MAX_CYCLE_NS	10000000000ULL	/* 10 s */
#define TDMWIN_MAX_GUARD_NS	1000000000U	/* 1 s */
#define TDMWIN_MAX_LINK_SPEED	1600000U	/* Mbit/s (1.6 Tbit/s) */
/* A lease (TCA_TDMWIN_LEASE) is renewed from user space through rtnetlink,
 * so it cannot be much shorter than a scheduling delay of a loaded host.
 */
#define TDMWIN_MIN_LEASE_NS	100000000ULL	/* 100 ms */
#define TDMWIN_MAX_LEASE_NS	3600000000000ULL /* 1 h */

/* Bytes a frame occupies on the wire beyond skb->len:
 * preamble + SFD (8), FCS (4), inter-frame gap (12).
 */
#define TDMWIN_WIRE_OVERHEAD	24
/* Minimum frame without FCS (ETH_ZLEN); shorter frames are padded. */
#define TDMWIN_MIN_FRAME	60

/* Attributes of TCA_OPTIONS for kind "tdmwin". */
enum {
	TCA_TDMWIN_UNSPEC,
	TCA_TDMWIN_PAD,
	TCA_TDMWIN_CYCLE_TIME,		/* u64, ns */
	TCA_TDMWIN_BASE_TIME,		/* s64, ns on the qdisc clock */
	TCA_TDMWIN_WINDOWS,		/* nest of TCA_TDMWIN_WINDOW */
	TCA_TDMWIN_GUARD,		/* u32, ns */
	TCA_TDMWIN_LINK_SPEED,		/* u32, Mbit/s; 0 = from ethtool */
	TCA_TDMWIN_CLOCKID,		/* s32, CLOCK_TAI by default; fixed */
	TCA_TDMWIN_BYPASS_PRIOS,	/* u32, bit n = skb->priority n bypasses */
	TCA_TDMWIN_BYPASS_PTP,		/* u8, 1 (default) = PTP bypasses */
	TCA_TDMWIN_HOLD,		/* u8, 1 = hold (gate closed), 0 = release */
	TCA_TDMWIN_PLAN_VERSION,	/* u32 */
	TCA_TDMWIN_LIMIT,		/* u32, packets per child fifo */
	TCA_TDMWIN_PENDING,		/* nest, dump only: the pending plan */
	TCA_TDMWIN_EFF_LINK_SPEED,	/* u32, dump only: speed in use, Mbit/s */
	TCA_TDMWIN_WIRE_CLOCK,		/* u8, 1 (default) = gate by the wire clock */
	TCA_TDMWIN_TXTIME,		/* u8, 1 = launch times for an etf child */
	TCA_TDMWIN_LEASE,		/* u64, ns on CLOCK_BOOTTIME; 0 = none */
	TCA_TDMWIN_RENEW,		/* flag: renew the device's lease now */
	TCA_TDMWIN_LEASE_LEFT,		/* s64, dump only: ns until the lease
					 * runs out; <= 0: ran out that long ago
					 */
	TCA_TDMWIN_UNCONFIRMED,		/* u8 with a plan: 1 = it waits for
					 * TCA_TDMWIN_CONFIRM; in TCA_TDMWIN_PENDING
					 * on dump
					 */
	TCA_TDMWIN_CONFIRM,		/* u32: confirm the pending plan of this version */
	TCA_TDMWIN_ABORT,		/* u32: remove the pending plan of this version */
	TCA_TDMWIN_SLOTS,		/* nest, dump only: counters per window */
	__TCA_TDMWIN_MAX,
};

#define TCA_TDMWIN_MAX (__TCA_TDMWIN_MAX - 1)

/* TCA_TDMWIN_WINDOWS holds one TCA_TDMWIN_WINDOW nest per window. */
enum {
	TCA_TDMWIN_WINDOWS_UNSPEC,
	TCA_TDMWIN_WINDOW,		/* nest of TCA_TDMWIN_WIN_* */
	__TCA_TDMWIN_WINDOWS_MAX,
};

#define TCA_TDMWIN_WINDOWS_MAX (__TCA_TDMWIN_WINDOWS_MAX - 1)

enum {
	TCA_TDMWIN_WIN_UNSPEC,
	TCA_TDMWIN_WIN_PAD,
	TCA_TDMWIN_WIN_OFFSET,		/* u64, ns from the start of the cycle */
	TCA_TDMWIN_WIN_LENGTH,		/* u64, ns */
	TCA_TDMWIN_WIN_CLASS,		/* u32: minor of the class the window
					 * opens for; absent = TDMWIN_CLASS_GATED
					 * (dumped only when not 1)
					 */
	__TCA_TDMWIN_WIN_MAX,
};

#define TCA_TDMWIN_WIN_MAX (__TCA_TDMWIN_WIN_MAX - 1)

/*
 * TCA_TDMWIN_SLOTS: the counters of each window slot of the plan in force,
 * the slot being the window's index in that plan (windows sorted by
 * offset, as dumped in TCA_TDMWIN_WINDOWS).  They start at zero when a plan
 * takes force (created, replaced at once, or a pending plan at its base
 * time), and TCA_TDMWIN_SLOTS_VERSION names that plan.  Every slot of the
 * plan is dumped, used or not.
 */
enum {
	TCA_TDMWIN_SLOTS_UNSPEC,
	TCA_TDMWIN_SLOTS_VERSION,	/* u32: the plan the slots count for */
	TCA_TDMWIN_SLOTS_SLOT,		/* nest of TCA_TDMWIN_SLOT_*, one per window */
	__TCA_TDMWIN_SLOTS_MAX,
};

#define TCA_TDMWIN_SLOTS_MAX (__TCA_TDMWIN_SLOTS_MAX - 1)

enum {
	TCA_TDMWIN_SLOT_UNSPEC,
	TCA_TDMWIN_SLOT_PAD,
	TCA_TDMWIN_SLOT_INDEX,		/* u32: the window's index in the plan */
	TCA_TDMWIN_SLOT_FRAMES,		/* u64: gated frames sent in it */
	TCA_TDMWIN_SLOT_BYTES,		/* u64: their bytes (skb length) */
	TCA_TDMWIN_SLOT_OPENS,		/* u64: cycles in which it was used */
	TCA_TDMWIN_SLOT_WIRE_DEFERRALS,	/* u64: waits behind the wire in it */
	TCA_TDMWIN_SLOT_GUARD_DEFERRALS, /* u64: frames too long for its rest */
	TCA_TDMWIN_SLOT_LATENCY_COUNT,	/* u64: openings that frames waited for */
	TCA_TDMWIN_SLOT_LATENCY_SUM,	/* u64, ns: their open latency, summed */
	TCA_TDMWIN_SLOT_LATENCY_MAX,	/* u64, ns: the longest */
	TCA_TDMWIN_SLOT_MARGIN_MIN,	/* u64, ns: the least time from a frame's
					 * end on the wire to the window's end
					 * (or a pending plan's base if sooner);
					 * only when FRAMES > 0
					 */
	__TCA_TDMWIN_SLOT_MAX,
};

#define TCA_TDMWIN_SLOT_MAX (__TCA_TDMWIN_SLOT_MAX - 1)

/*
 * Classes: 1 = gated traffic (the classic plan, and the default of a frame
 * no filter classifies), 2 = bypass traffic, and the destination classes
 * TDMWIN_CLASS_DEST_FIRST .. TDMWIN_CLASS_DEST_FIRST + TDMWIN_MAX_DESTS - 1,
 * each gated by the windows whose TCA_TDMWIN_WIN_CLASS names it.  Windows of
 * all classes are one plan: they never overlap and share one cycle and base.
 */
#define TDMWIN_CLASS_GATED	1
#define TDMWIN_CLASS_BYPASS	2
#define TDMWIN_CLASS_DEST_FIRST	3
#define TDMWIN_MAX_DESTS	32

/*
 * Extended statistics (TCA_STATS_APP).  Fields are only ever appended; a
 * reader must accept a shorter or longer struct and use what it knows.
 */
struct tc_tdmwin_xstats {
	__u64	windows_opened;		/* windows in which gated traffic left */
	__u64	window_packets;		/* gated packets sent inside windows */
	__u64	window_bytes;
	__u64	bypass_packets;		/* packets that skipped the gate */
	__u64	bypass_bytes;
	__u64	guard_deferrals;	/* head frame did not fit before close */
	__u64	oversize_drops;		/* frame fits in no window of the plan */
	__u64	hold_drops;		/* dropped at the limit while the gate holds */
	__u64	open_latency_min;	/* ns, window start to the start of its
					 * first frame on the wire (dequeue +
					 * the wire's backlog)
					 */
	__u64	open_latency_max;
	__u64	open_latency_sum;	/* mean = sum / count */
	__u64	open_latency_count;
	__u64	plan_switches;		/* pending plans that took over */
	__s64	pending_base_time;	/* valid when pending != 0 */
	__u32	plan_version;		/* of the active plan */
	__u32	pending_version;	/* valid when pending != 0 */
	__u32	pending;		/* 1 if a plan waits for its base time */
	__u32	hold;			/* 1 if the gate is held closed */
	__u64	wire_deferrals;		/* frames that waited for the wire */
	__u64	wire_backlog_max;	/* ns, longest the wire was booked ahead */
	__u64	wire_backlog;		/* ns the wire is booked ahead now */
	__u64	txtime_drops;		/* dropped by the etf child (expired) */
	__u64	lease_expiries;		/* the device's lease ran out */
	__u64	unconfirmed_holds;	/* unconfirmed plans that reached their base */
	__u64	pending_aborts;		/* pending plans removed by TCA_TDMWIN_ABORT */
	__u32	lease_held;		/* 1 if the gate holds: lease ran out */
	__u32	pending_unconfirmed;	/* 1 if the pending plan is unconfirmed */
	__u64	nowindow_drops;		/* gated frames of a class that has no
					 * window in the active or pending plan
					 */
};

#endif /* _UAPI_LINUX_TDMWIN_H */
