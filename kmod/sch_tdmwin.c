// SPDX-License-Identifier: GPL-2.0
/*
 * net/sched/sch_tdmwin.c	Time-division multiplexed transmit windows.
 *
 * Each node owns one or more windows of a repeating cycle; the gate is open
 * only inside them.  A frame leaves only if it ends (wire time at link speed
 * plus guard) before its window closes.  The gate state is computed from the
 * absolute time on every dequeue (kmod/tdmwin_gate.h), and a qdisc watchdog
 * wakes the queue at the next opening.  The watchdog sleeps on
 * CLOCK_MONOTONIC for at most TDMWIN_MAX_SLEEP_NS, so a step of the plan's
 * clock neither stalls nor spins the queue.
 *
 * Traffic is split into classes: 1:1 is gated, 1:2 bypasses the gate
 * (chosen skb priorities, and PTP so that ptp4l stays in sync), and the
 * destination classes 1:3 .. 1:34, each gated by its own windows of the
 * one plan, exist once a plan names them.  Filters attached to the qdisc
 * choose the class (flower on the destination address, say); a frame no
 * filter classifies goes to 1:1.  The windows of all classes never
 * overlap, so at most one gated class may send at any instant: dequeue
 * serves the class whose window is open, on the one wire clock.
 *
 * The wire clock: the driver does not put a frame on the wire when the
 * qdisc lets it go, but after every frame already in its TX ring.  So the
 * qdisc books the wire: it keeps the CLOCK_MONOTONIC time at which the link,
 * a server at the link speed, will have finished every frame released on
 * the device (gated and bypass), and a gated frame leaves only if it fits
 * its window when it starts behind them.  All instances on one device (one
 * per TX queue under mq) share one account, advanced by compare-and-exchange.
 *
 * Launch times (txtime on): for a NIC that launches frames at a time set per
 * frame, the wire is booked at enqueue instead, at the frame's launch time
 * (the first instant it fits a window behind everything booked), and an etf
 * child holds the frame until then, so that the NIC, not a kernel timer,
 * opens the window.
 *
 * Plans (cycle, base time, windows, guard, version) are immutable and
 * published with RCU.  A plan whose base time lies in the future waits as
 * the pending plan and takes over at exactly that instant.  Plan pointers
 * change only under the qdisc tree lock; readers outside it (dump) hold
 * rcu_read_lock().
 *
 * Two-phase changes: a plan installed unconfirmed does not take over at
 * its base time.  From then on the gated class holds until user space
 * confirms the plan (it takes over) or aborts it (it is removed, the plan
 * in force goes on), so that a node that missed the outcome of a change
 * neither switches alone nor keeps the old plan while the others switch.
 *
 * The lease: when user space stops renewing it (its daemon died or lost
 * its clock), the gated class holds.  It runs on CLOCK_BOOTTIME, not the
 * plan's clock, whose drift it guards against, is checked at dequeue, and
 * is one per device, shared by the instances under mq like the wire.
 */

#include <linux/errno.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ptp_classify.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/netlink.h>
#include <net/pkt_cls.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#ifdef TDMWIN_HAVE_NET_GSO_H
#include <net/gso.h>	/* skb_gso_segment() since 6.5 */
#endif

#include "uapi/linux/tdmwin.h"
#include "tdmwin_gate.h"

#ifndef MODULE_ALIAS_NET_SCH
#define MODULE_ALIAS_NET_SCH(id)	MODULE_ALIAS("net-sch-" id)
#endif

/* Longest sleep of the watchdog while packets wait.  The watchdog runs on
 * CLOCK_MONOTONIC, armed with the distance to the next opening on the
 * plan's clock; a step of the plan's clock in either direction is noticed
 * at the latest this long after it happened.
 */
#define TDMWIN_MAX_SLEEP_NS	(10 * NSEC_PER_MSEC)

/* Oversize head frames dropped per dequeue before yielding. */
#define TDMWIN_DROP_BUDGET	16

/* Launch times and destination classes exclude each other. */
#define TDMWIN_MSG_TXTIME_DESTS \
	"txtime does not go with destination classes: launch times are for windows of class 1:1 only"

/* Gated classes: 1:1 (index 0) and the destination classes (1 ..). */
#define TDMWIN_NCLASSES		(1 + TDMWIN_MAX_DESTS)
#define TDMWIN_CLASS_DEST_LAST	(TDMWIN_CLASS_DEST_FIRST + TDMWIN_MAX_DESTS - 1)

/*
 * The wire and the lease of one device, shared by every tdmwin instance on
 * it.  The list and the plain fields change under RTNL; .free and the lease
 * are read and advanced locklessly from any instance's dequeue.  Freed after
 * an RCU grace period: dequeue runs with BH off, an RCU read-side section.
 */
struct tdmwin_wire {
	struct list_head	node;		/* on tdmwin_wires */
	struct rcu_head		rcu;
	const struct net_device	*dev;
	unsigned int		users;		/* instances on dev */
	/* What the instances on dev agree on (the latest plan's guard). */
	u32			eff_speed;
	u32			guard;
	clockid_t		clockid;
	bool			on;
	/* CLOCK_MONOTONIC ns at which the wire finishes every frame released
	 * so far.  It only moves forward, by atomic64_try_cmpxchg(): a frame's
	 * gate check and its booking succeed or retry together.
	 */
	atomic64_t		free;

	/* The lease: 0 = none; written under RTNL, read with READ_ONCE(). */
	u64			lease_ns;
	atomic64_t		renewed;	/* CLOCK_BOOTTIME ns of last renewal */
	/* The latest renewal whose lease ran out and was counted: it only
	 * moves forward, so each expiry is counted once by whoever sees it
	 * first, dequeue, dump or the next renewal.
	 */
	atomic64_t		expired;
	atomic64_t		expiries;
};

static LIST_HEAD(tdmwin_wires);		/* under RTNL */

struct tdmwin_plan {
	struct rcu_head		rcu;
	struct tdmwin_sched	s;	/* s.win points at win[] */
	u32			version;
	u32			guard;	/* ns added to every frame's wire time */
	u32			dests;	/* bit i: class DEST_FIRST + i has windows */
	/* Each gated class's windows as a schedule of their own: cs[0] for
	 * 1:1, cs[1 + i] for class DEST_FIRST + i, over cwin[], where the
	 * windows of a class follow each other, by offset; a class without
	 * windows has nwin 0 and max_len 0 (every frame: TDMWIN_NEVER).
	 * cslot[j] is the slot of cwin[j] (its index in win[]).
	 */
	struct tdmwin_sched	cs[TDMWIN_NCLASSES];
	u8			cslot[TDMWIN_MAX_WINDOWS];
	u8			cls[TDMWIN_MAX_WINDOWS]; /* minor of win[i] */
	struct tdmwin_window	cwin[TDMWIN_MAX_WINDOWS];
	struct tdmwin_window	win[TDMWIN_MAX_WINDOWS];
};

/*
 * Counters of one window slot (the window's index in the plan in force),
 * under the qdisc lock; zeroed when a plan takes force.  Dumped as
 * TCA_TDMWIN_SLOTS.
 */
struct tdmwin_slot {
	u64	frames;
	u64	bytes;
	u64	opens;			/* cycles in which the window was used */
	u64	wire_deferrals;
	u64	guard_deferrals;
	u64	latency_count;		/* openings that frames waited for */
	u64	latency_sum;
	u64	latency_max;
	u64	margin_min;		/* U64_MAX until a frame left */
};

struct tdmwin_sched_data {
	struct tdmwin_plan __rcu *plan;		/* in force */
	struct tdmwin_plan __rcu *pending;	/* takes over at its base */
	struct Qdisc		*gated;		/* class 1:1 */
	struct Qdisc		*bypass;	/* class 1:2 */
	/* Class DEST_FIRST + i, from the first plan that names it until the
	 * qdisc goes; NULL before.  ndests: how many exist.
	 */
	struct Qdisc		*dest[TDMWIN_MAX_DESTS];
	u32			ndests;
	struct tcf_proto __rcu	*filter_list;	/* classifies gated frames */
	struct tcf_block	*block;
	struct tdmwin_wire	*wire;		/* the device's wire */
	struct qdisc_watchdog	watchdog;

	/* Configuration, changed under the tree lock. */
	clockid_t		clockid;
	u32			link_speed;	/* configured Mbit/s, 0: ethtool */
	u32			eff_speed;	/* Mbit/s in use */
	u32			ps_per_byte;	/* wire time of one byte */
	u32			bypass_prios;	/* bit n: priority n bypasses */
	u32			limit;
	bool			bypass_ptp;
	bool			hold;
	bool			wire_clock;	/* gate by the wire clock */
	bool			txtime;		/* launch times, etf child */
	bool			unconfirmed;	/* latest plan awaits confirm */
	bool			unconfirmed_seen; /* its hold was counted */

	/* Gate bookkeeping, under the qdisc lock. */
	s64			open_start;	/* window the last frame left in, */
	s64			open_end;	/* ending before a pending plan */
	int			open_slot;	/* and its index in the plan */
	s64			last_window;	/* start of last window used */
	s64			wait_open;	/* opening the queue waits for */
	s64			deferred_to;	/* last guard deferral target */
	s64			wire_wait_to;	/* last wire deferral target */
	s64			wd_expires;	/* CLOCK_MONOTONIC */

	struct tc_tdmwin_xstats	st;
	/* Frames of each gated class that tdmwin dropped (no window of the
	 * class, or too long for all of them), added to its child's drops in
	 * the class's counters.
	 */
	u64			cdrops[TDMWIN_NCLASSES];
	u32			slots_version;	/* plan the slots count for */
	struct tdmwin_slot	slots[TDMWIN_MAX_WINDOWS];
};

static const struct nla_policy tdmwin_policy[TCA_TDMWIN_MAX + 1] = {
	[TCA_TDMWIN_CYCLE_TIME]	 = { .type = NLA_U64 },
	[TCA_TDMWIN_BASE_TIME]	 = { .type = NLA_S64 },
	[TCA_TDMWIN_WINDOWS]	 = { .type = NLA_NESTED },
	[TCA_TDMWIN_GUARD]	 = { .type = NLA_U32 },
	[TCA_TDMWIN_LINK_SPEED]	 = { .type = NLA_U32 },
	[TCA_TDMWIN_CLOCKID]	 = { .type = NLA_S32 },
	[TCA_TDMWIN_BYPASS_PRIOS] = NLA_POLICY_MASK(NLA_U32, 0xffff),
	[TCA_TDMWIN_BYPASS_PTP]	 = NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TDMWIN_HOLD]	 = NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TDMWIN_PLAN_VERSION] = { .type = NLA_U32 },
	[TCA_TDMWIN_LIMIT]	 = { .type = NLA_U32 },
	[TCA_TDMWIN_PENDING]	 = { .type = NLA_REJECT },
	[TCA_TDMWIN_EFF_LINK_SPEED] = { .type = NLA_REJECT },
	[TCA_TDMWIN_WIRE_CLOCK]	 = NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TDMWIN_TXTIME]	 = NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TDMWIN_LEASE]	 = { .type = NLA_U64 },
	[TCA_TDMWIN_RENEW]	 = { .type = NLA_FLAG },
	[TCA_TDMWIN_LEASE_LEFT]	 = { .type = NLA_REJECT },
	[TCA_TDMWIN_UNCONFIRMED] = NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TDMWIN_CONFIRM]	 = { .type = NLA_U32 },
	[TCA_TDMWIN_ABORT]	 = { .type = NLA_U32 },
	[TCA_TDMWIN_SLOTS]	 = { .type = NLA_REJECT },
};

static const struct nla_policy tdmwin_win_policy[TCA_TDMWIN_WIN_MAX + 1] = {
	[TCA_TDMWIN_WIN_OFFSET]	= { .type = NLA_U64 },
	[TCA_TDMWIN_WIN_LENGTH]	= { .type = NLA_U64 },
	[TCA_TDMWIN_WIN_CLASS]	= { .type = NLA_U32 },
};

/* ---- time and classification ------------------------------------------ */

/* The plan's clock, derived from one read of CLOCK_MONOTONIC (*mono). */
static s64 tdmwin_clock(const struct tdmwin_sched_data *q, s64 *mono)
{
	*mono = ktime_get();
	switch (q->clockid) {
	case CLOCK_REALTIME:
		return ktime_mono_to_any(*mono, TK_OFFS_REAL);
	case CLOCK_MONOTONIC:
		return *mono;
	case CLOCK_BOOTTIME:
		return ktime_mono_to_any(*mono, TK_OFFS_BOOT);
	default:
		return ktime_mono_to_any(*mono, TK_OFFS_TAI);
	}
}

static s64 tdmwin_now(const struct tdmwin_sched_data *q)
{
	s64 mono;

	return tdmwin_clock(q, &mono);
}

static bool tdmwin_valid_clockid(s32 clockid)
{
	return clockid == CLOCK_TAI || clockid == CLOCK_REALTIME ||
	       clockid == CLOCK_MONOTONIC || clockid == CLOCK_BOOTTIME;
}

/* PTP over Ethernet (0x88F7) or over UDP to the event or general port. */
static bool tdmwin_is_ptp(struct sk_buff *skb)
{
	int off = skb_network_offset(skb);
	struct udphdr _uh, *uh;

	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_1588):
		return true;
	case htons(ETH_P_IP): {
		struct iphdr _iph, *iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->protocol != IPPROTO_UDP || iph->ihl < 5 ||
		    ip_is_fragment(iph))
			return false;
		off += iph->ihl * 4;
		break;
	}
	case htons(ETH_P_IPV6): {
		struct ipv6hdr _ip6h, *ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->nexthdr != IPPROTO_UDP)
			return false;
		off += sizeof(*ip6h);
		break;
	}
	default:
		return false;
	}
	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	return uh && (uh->dest == htons(PTP_EV_PORT) ||
		      uh->dest == htons(PTP_GEN_PORT));
}

static bool tdmwin_is_bypass(const struct tdmwin_sched_data *q,
			     struct sk_buff *skb)
{
	if (skb->priority < 16 && (q->bypass_prios & BIT(skb->priority)))
		return true;
	return q->bypass_ptp && tdmwin_is_ptp(skb);
}

/* Index of gated class @minor (0 for 1:1, 1 + i for DEST_FIRST + i), or -1. */
static int tdmwin_class_index(u32 minor)
{
	if (minor == TDMWIN_CLASS_GATED)
		return 0;
	if (minor >= TDMWIN_CLASS_DEST_FIRST && minor <= TDMWIN_CLASS_DEST_LAST)
		return minor - TDMWIN_CLASS_DEST_FIRST + 1;
	return -1;
}

/* The child of gated class index @k, NULL if no plan named the class yet. */
static struct Qdisc *tdmwin_gated_child(const struct tdmwin_sched_data *q,
					u32 k)
{
	return k ? q->dest[k - 1] : q->gated;
}

/*
 * The class the filters choose for a gated frame, as its minor: 1:1 when
 * no filter matches or the classid names no class of tdmwin (1:2 is
 * bypass); 0 when an action took or dropped the frame (*qerr says how).
 */
static u32 tdmwin_classify(struct Qdisc *sch, struct sk_buff *skb, int *qerr)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tcf_result res;
	u32 minor;
	int err;

	*qerr = NET_XMIT_SUCCESS | __NET_XMIT_BYPASS;
	err = tcf_classify(skb, NULL, rcu_dereference_bh(q->filter_list), &res,
			   false);
#ifdef CONFIG_NET_CLS_ACT
	switch (err) {
	case TC_ACT_STOLEN:
	case TC_ACT_QUEUED:
	case TC_ACT_TRAP:
		*qerr = NET_XMIT_SUCCESS | __NET_XMIT_STOLEN;
		fallthrough;
	case TC_ACT_SHOT:
		return 0;
	}
#endif
	if (err < 0)
		return TDMWIN_CLASS_GATED;
	minor = TC_H_MIN(res.classid);
	if (minor == TDMWIN_CLASS_BYPASS || tdmwin_class_index(minor) >= 0)
		return minor;
	return TDMWIN_CLASS_GATED;
}

/*
 * Bytes on the wire, with padding, FCS, preamble and gap per segment, and
 * the VLAN tag that the NIC inserts when the stack left it in the skb.
 */
static u64 tdmwin_wire_bytes(const struct sk_buff *skb)
{
	unsigned int segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	unsigned int over = TDMWIN_WIRE_OVERHEAD;

	if (skb_vlan_tag_present(skb))
		over += VLAN_HLEN;
	return tdmwin_frame_bytes(qdisc_pkt_len(skb), segs, over);
}

static u64 tdmwin_skb_wire_ns(const struct tdmwin_sched_data *q,
			      const struct sk_buff *skb)
{
	return tdmwin_wire_ns(tdmwin_wire_bytes(skb), q->ps_per_byte);
}

static u64 tdmwin_need_ns(const struct tdmwin_sched_data *q,
			  const struct tdmwin_plan *plan,
			  const struct sk_buff *skb)
{
	return tdmwin_skb_wire_ns(q, skb) + plan->guard;
}

/* ---- the wire clock ---------------------------------------------------- */

/* ns the wire stays busy after @mono with what was booked up to @free. */
static u64 tdmwin_backlog(s64 free, s64 mono)
{
	return free > mono ? free - mono : 0;
}

static struct tdmwin_wire *tdmwin_wire_find(const struct net_device *dev)
{
	struct tdmwin_wire *w;

	ASSERT_RTNL();
	list_for_each_entry(w, &tdmwin_wires, node)
		if (w->dev == dev)
			return w;
	return NULL;
}

/* The device's wire account, created for its first instance. */
static struct tdmwin_wire *tdmwin_wire_get(const struct net_device *dev)
{
	struct tdmwin_wire *w = tdmwin_wire_find(dev);

	if (!w) {
		w = kzalloc(sizeof(*w), GFP_KERNEL);
		if (!w)
			return NULL;
		w->dev = dev;
		atomic64_set(&w->free, ktime_get());
		atomic64_set(&w->expired, S64_MIN);
		list_add(&w->node, &tdmwin_wires);
	}
	w->users++;
	return w;
}

static void tdmwin_wire_put(struct tdmwin_wire *w)
{
	ASSERT_RTNL();
	if (--w->users)
		return;
	list_del(&w->node);
	kfree_rcu(w, rcu);
}

/*
 * Book the wire for a frame of @wire_ns that is released at @mono whatever
 * the gate says (bypass traffic).  Returns the backlog behind it.
 */
static u64 tdmwin_wire_book(struct tdmwin_wire *w, s64 mono, u64 wire_ns)
{
	s64 free = atomic64_read(&w->free), next;

	do {
		next = max(free, mono) + (s64)wire_ns;
	} while (!atomic64_try_cmpxchg(&w->free, &free, next));
	return next - mono;
}

/*
 * Has the device's lease run out at @boot (CLOCK_BOOTTIME)?  The first to
 * see an expiry counts it, by moving .expired up to the renewal it ended.
 */
static bool tdmwin_lease_out(struct tdmwin_wire *w, s64 boot)
{
	u64 lease = READ_ONCE(w->lease_ns);
	s64 renewed, seen;

	if (!lease)
		return false;
	renewed = atomic64_read(&w->renewed);
	if (boot - renewed < (s64)lease)
		return false;
	seen = atomic64_read(&w->expired);
	do {
		if (seen >= renewed)
			return true;
	} while (!atomic64_try_cmpxchg(&w->expired, &seen, renewed));
	atomic64_inc(&w->expiries);
	return true;
}

/* The same at @mono (CLOCK_MONOTONIC), read as CLOCK_BOOTTIME only if
 * there is a lease: the dequeue's fast path, which has the time already.
 */
static bool tdmwin_lease_out_mono(struct tdmwin_wire *w, s64 mono)
{
	if (!READ_ONCE(w->lease_ns))
		return false;
	return tdmwin_lease_out(w, ktime_mono_to_any(mono, TK_OFFS_BOOT));
}

/* The same now, read as CLOCK_BOOTTIME only if there is a lease. */
static bool tdmwin_lease_out_now(struct tdmwin_wire *w)
{
	if (!READ_ONCE(w->lease_ns))
		return false;
	return tdmwin_lease_out(w, ktime_get_boottime_ns());
}

/* Nanoseconds left on the lease at @boot; <= 0: ran out that long ago. */
static s64 tdmwin_lease_left(struct tdmwin_wire *w, s64 boot)
{
	return atomic64_read(&w->renewed) + (s64)READ_ONCE(w->lease_ns) - boot;
}

/*
 * Set (or renew, with the same @lease) the device's lease.  Under RTNL.
 * An expiry that nobody saw yet is counted first; if the lease had run
 * out, every TX queue of the device is kicked, since under mq the other
 * instances hold too.
 */
static void tdmwin_lease_renew(struct tdmwin_wire *w, struct net_device *dev,
			       u64 lease)
{
	s64 boot = ktime_get_boottime_ns();
	bool out = tdmwin_lease_out(w, boot);

	atomic64_set(&w->renewed, boot);
	WRITE_ONCE(w->lease_ns, lease);
	if (out)
		netif_tx_schedule_all(dev);
}

static void tdmwin_note_backlog(struct tdmwin_sched_data *q, u64 backlog)
{
	if (backlog > q->st.wire_backlog_max)
		q->st.wire_backlog_max = backlog;
}

/* ---- launch times ------------------------------------------------------ */

/* The launch time, on the plan's clock (CLOCK_TAI), where etf reads it. */
static void tdmwin_set_txtime(struct sk_buff *skb, s64 t)
{
#ifdef TDMWIN_HAVE_SKB_CLOCK_TAI
	skb_set_delivery_time(skb, t, SKB_CLOCK_TAI);
#else
	skb_set_delivery_time(skb, t, false);	/* not mono: etf reads it as TAI */
#endif
}

static struct tdmwin_plan *tdmwin_promote(struct tdmwin_sched_data *q,
					  s64 now);

/*
 * Book the wire for a gated frame at its launch time: the first instant at
 * which it fits a window of the plan in force then, behind everything
 * booked on the device.  The check and the booking are one
 * compare-and-exchange, as at dequeue without launch times.  Returns 0 with
 * the launch time on the plan's clock in *launch, -ENOSPC if no window can
 * take the frame, -EAGAIN if it could leave only after the base time of an
 * unconfirmed plan (the gate holds from there).  A frame dropped later (by
 * etf, expired) keeps its booking: the wire stays booked for nothing, on
 * the safe side.
 */
static int tdmwin_book_launch(struct tdmwin_sched_data *q,
			      const struct sk_buff *skb, s64 *launch)
{
	const struct tdmwin_plan *plan, *next;
	u64 wire = tdmwin_skb_wire_ns(q, skb);
	s64 now, mono, free, done;

	now = tdmwin_clock(q, &mono);
	plan = tdmwin_promote(q, now);
	next = rcu_dereference_bh(q->pending);
	free = atomic64_read(&q->wire->free);
	do {
		int err = tdmwin_launch_rule(&plan->s, plan->guard,
					     next ? &next->s : NULL,
					     next ? next->guard : 0,
					     q->unconfirmed, now,
					     tdmwin_backlog(free, mono), wire,
					     launch);

		if (err)
			return err;
		done = mono + (*launch - now) + (s64)wire;
	} while (!atomic64_try_cmpxchg(&q->wire->free, &free, done));
	tdmwin_note_backlog(q, done - mono);
	return 0;
}

/*
 * A gated frame with launch times: stamped here, since etf checks and sorts
 * at enqueue.  A held gate cannot choose a launch time, so it queues
 * nothing; etf has no limit of its own, so tdmwin's applies.
 */
static int tdmwin_stamp(struct Qdisc *sch, struct sk_buff *skb,
			struct sk_buff **to_free)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	s64 launch;
	int err;

	if (q->hold || tdmwin_lease_out_now(q->wire)) {
		q->st.hold_drops++;
		return qdisc_drop(skb, sch, to_free);
	}
	if (q->gated->q.qlen >= q->limit)
		return qdisc_drop(skb, sch, to_free);
	err = tdmwin_book_launch(q, skb, &launch);
	if (err) {
		if (err == -EAGAIN)
			q->st.hold_drops++;
		else
			q->st.oversize_drops++;
		return qdisc_drop(skb, sch, to_free);
	}
	tdmwin_set_txtime(skb, launch);
	return NET_XMIT_SUCCESS;
}

/* ---- enqueue ----------------------------------------------------------- */

/* Does the gate hold at @now for an unconfirmed plan (its base came)? */
static bool tdmwin_unconfirmed_holds(const struct tdmwin_sched_data *q,
				     s64 now)
{
	const struct tdmwin_plan *next = rcu_dereference_bh(q->pending);

	return q->unconfirmed && (!next || now >= next->s.base);
}

/*
 * Count a drop at enqueue, as a hold drop if the gated class holds.  The
 * clocks are read only where a hold can apply (an unconfirmed plan, a
 * lease): a full queue before a closed gate drops on every enqueue.
 */
static void tdmwin_count_drop(struct Qdisc *sch, struct Qdisc *child, int ret)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);

	if (!net_xmit_drop_count(ret))
		return;
	qdisc_qstats_drop(sch);
	if (child != q->bypass &&
	    (q->hold ||
	     (q->unconfirmed && tdmwin_unconfirmed_holds(q, tdmwin_now(q))) ||
	     tdmwin_lease_out_now(q->wire)))
		q->st.hold_drops++;
}

/* A GSO packet longer than every window: send its segments one by one. */
static int tdmwin_segment(struct sk_buff *skb, struct Qdisc *sch,
			  struct Qdisc *child, struct sk_buff **to_free)
{
	netdev_features_t features = netif_skb_features(skb);
	unsigned int len = 0, prev_len = qdisc_pkt_len(skb), seg_len;
	struct sk_buff *segs, *nskb;
	int ret, nb = 0;

	segs = skb_gso_segment(skb, features & ~NETIF_F_GSO_MASK);
	if (IS_ERR_OR_NULL(segs))
		return qdisc_drop(skb, sch, to_free);

	skb_list_walk_safe(segs, segs, nskb) {
		skb_mark_not_on_list(segs);
		seg_len = segs->len;
		qdisc_skb_cb(segs)->pkt_len = seg_len;
		ret = qdisc_enqueue(segs, child, to_free);
		if (ret != NET_XMIT_SUCCESS) {
			tdmwin_count_drop(sch, child, ret);
		} else {
			nb++;
			len += seg_len;
		}
	}
	sch->q.qlen += nb;
	sch->qstats.backlog += len;
	if (nb > 0) {
		qdisc_tree_reduce_backlog(sch, 1 - nb, prev_len - len);
		consume_skb(skb);
		return NET_XMIT_SUCCESS;
	}
	kfree_skb(skb);
	return NET_XMIT_DROP;
}

/*
 * Does the frame fit in some window of gated class index @k (0: 1:1) of
 * the active or the pending plan?
 */
static bool tdmwin_fits(const struct tdmwin_sched_data *q, u32 k,
			const struct sk_buff *skb)
{
	const struct tdmwin_plan *plan = rcu_dereference_bh(q->plan);
	const struct tdmwin_plan *next = rcu_dereference_bh(q->pending);

	return tdmwin_need_ns(q, plan, skb) <= plan->cs[k].max_len ||
	       (next && tdmwin_need_ns(q, next, skb) <= next->cs[k].max_len);
}

/*
 * A gated frame of class index @k that fits no window of its class: a GSO
 * packet goes in segments, anything else is dropped, as oversize or, if
 * neither the active nor the pending plan has a window for the class (or
 * the class does not exist yet), for want of a window.
 */
static int tdmwin_refuse(struct sk_buff *skb, struct Qdisc *sch, u32 k,
			 struct sk_buff **to_free)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_plan *plan = rcu_dereference_bh(q->plan);
	const struct tdmwin_plan *next = rcu_dereference_bh(q->pending);
	struct Qdisc *child = tdmwin_gated_child(q, k);

	if (child && (plan->cs[k].nwin || (next && next->cs[k].nwin))) {
		if (skb_is_gso(skb))
			return tdmwin_segment(skb, sch, child, to_free);
		q->st.oversize_drops++;
	} else {
		q->st.nowindow_drops++;
	}
	q->cdrops[k]++;
	return qdisc_drop(skb, sch, to_free);
}

/* Queue @skb in @child, a gated class or the bypass class. */
static int tdmwin_enqueue_child(struct sk_buff *skb, struct Qdisc *sch,
				struct Qdisc *child, struct sk_buff **to_free)
{
	unsigned int len = qdisc_pkt_len(skb);
	int ret;

	ret = qdisc_enqueue(skb, child, to_free);
	if (ret != NET_XMIT_SUCCESS) {
		tdmwin_count_drop(sch, child, ret);
		return ret;
	}
	sch->qstats.backlog += len;
	sch->q.qlen++;
	return NET_XMIT_SUCCESS;
}

/* A gated frame, when filters are attached: to the class they choose. */
static int tdmwin_enqueue_classified(struct sk_buff *skb, struct Qdisc *sch,
				     struct sk_buff **to_free)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct Qdisc *child;
	u32 minor;
	int k, ret;

	minor = tdmwin_classify(sch, skb, &ret);
	if (!minor) {
		if (ret & __NET_XMIT_BYPASS)
			qdisc_qstats_drop(sch);
		__qdisc_drop(skb, to_free);
		return ret;
	}
	if (minor == TDMWIN_CLASS_BYPASS)
		return tdmwin_enqueue_child(skb, sch, q->bypass, to_free);
	k = tdmwin_class_index(minor);
	child = tdmwin_gated_child(q, k);
	if (!child || !tdmwin_fits(q, k, skb))
		return tdmwin_refuse(skb, sch, k, to_free);
	if (q->txtime) {
		/* Only 1:1 exists with launch times (tdmwin_parse). */
		ret = tdmwin_stamp(sch, skb, to_free);
		if (ret != NET_XMIT_SUCCESS)
			return ret;
	}
	return tdmwin_enqueue_child(skb, sch, child, to_free);
}

static int tdmwin_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			  struct sk_buff **to_free)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct Qdisc *child = q->gated;
	int ret;

	if (tdmwin_is_bypass(q, skb)) {
		child = q->bypass;
	} else if (rcu_access_pointer(q->filter_list)) {
		return tdmwin_enqueue_classified(skb, sch, to_free);
	} else if (!tdmwin_fits(q, 0, skb)) {
		return tdmwin_refuse(skb, sch, 0, to_free);
	} else if (q->txtime) {
		ret = tdmwin_stamp(sch, skb, to_free);
		if (ret != NET_XMIT_SUCCESS)
			return ret;
	}
	return tdmwin_enqueue_child(skb, sch, child, to_free);
}

/* ---- dequeue ----------------------------------------------------------- */

/* Forget the open window: the plans changed. */
static void tdmwin_forget_window(struct tdmwin_sched_data *q)
{
	q->open_start = S64_MAX;
	q->open_end = S64_MIN;
}

/* A plan took force: its slots count from zero. */
static void tdmwin_reset_slots(struct tdmwin_sched_data *q, u32 version)
{
	int i;

	memset(q->slots, 0, sizeof(q->slots));
	for (i = 0; i < TDMWIN_MAX_WINDOWS; i++)
		q->slots[i].margin_min = U64_MAX;
	q->slots_version = version;
}

static void tdmwin_reset_gate(struct tdmwin_sched_data *q)
{
	tdmwin_forget_window(q);
	q->last_window = S64_MIN;
	q->wait_open = S64_MIN;
	q->deferred_to = S64_MIN;
	q->wire_wait_to = S64_MIN;
}

/* Under the qdisc lock: let a pending plan whose base time came take over. */
static struct tdmwin_plan *tdmwin_promote(struct tdmwin_sched_data *q,
					  s64 now)
{
	struct tdmwin_plan *plan = rcu_dereference_bh(q->plan);
	struct tdmwin_plan *next = rcu_dereference_bh(q->pending);

	if (!next || now < next->s.base || q->unconfirmed)
		return plan;
	rcu_assign_pointer(q->plan, next);
	RCU_INIT_POINTER(q->pending, NULL);
	kfree_rcu(plan, rcu);
	q->st.plan_switches++;
	tdmwin_reset_gate(q);
	tdmwin_reset_slots(q, next->version);
	return next;
}

static struct sk_buff *tdmwin_account(struct Qdisc *sch, struct sk_buff *skb)
{
	qdisc_qstats_backlog_dec(sch, skb);
	qdisc_bstats_update(sch, skb);
	sch->q.qlen--;
	return skb;
}

/* What the gate decided for the head frame it let go (tdmwin_gated_head). */
struct tdmwin_pick {
	s64	now;		/* the plan's clock at the decision */
	u64	backlog;	/* the wire's, ns: the frame starts at now + it */
	u64	wire;		/* the frame's wire time */
	s64	start;		/* its window's start */
	s64	end;		/* and end (or a pending plan's base) */
	int	slot;		/* the window's index in the plan */
	struct Qdisc *child;	/* the class it leaves from (classed dequeue) */
};

/* Count a gated frame that leaves in its window, in total and per slot. */
static void tdmwin_count_window(struct tdmwin_sched_data *q,
				const struct tdmwin_pick *p,
				const struct sk_buff *skb)
{
	struct tdmwin_slot *sl = &q->slots[p->slot];
	unsigned int len = qdisc_pkt_len(skb);
	u64 margin, lat;

	q->st.window_packets++;
	q->st.window_bytes += len;
	sl->frames++;
	sl->bytes += len;
	margin = tdmwin_margin(p->now, p->backlog, p->wire, p->end);
	if (margin < sl->margin_min)
		sl->margin_min = margin;
	if (p->start == q->last_window)
		return;
	q->last_window = p->start;
	q->st.windows_opened++;
	sl->opens++;
	if (q->wait_open != p->start)
		return;
	/* The queue waited for this opening: how late did it start? */
	lat = tdmwin_open_latency(p->now, p->backlog, p->start);
	if (!q->st.open_latency_count || lat < q->st.open_latency_min)
		q->st.open_latency_min = lat;
	if (lat > q->st.open_latency_max)
		q->st.open_latency_max = lat;
	q->st.open_latency_sum += lat;
	q->st.open_latency_count++;
	if (lat > sl->latency_max)
		sl->latency_max = lat;
	sl->latency_sum += lat;
	sl->latency_count++;
}

/*
 * Drop the head of gated class index @k: it fits in no window of the
 * plan, or (@nowindow) the plan has none for its class.
 */
static void tdmwin_drop_head(struct Qdisc *sch, u32 k, bool nowindow)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb = qdisc_dequeue_peeked(tdmwin_gated_child(q, k));
	unsigned int len;

	if (!skb)
		return;
	len = qdisc_pkt_len(skb);
	sch->q.qlen--;
	sch->qstats.backlog -= len;
	qdisc_tree_reduce_backlog(sch, 1, len);
	qdisc_qstats_drop(sch);
	if (nowindow)
		q->st.nowindow_drops++;
	else
		q->st.oversize_drops++;
	q->cdrops[k]++;
	kfree_skb(skb);
}

/*
 * Arm the watchdog for @open on the plan's clock (or a pending plan's base
 * if that comes first), as a CLOCK_MONOTONIC time at most
 * TDMWIN_MAX_SLEEP_NS away.  Enqueues while the gate is closed call this
 * again and again: a timer already due no later than needed is kept.
 */
static void tdmwin_sleep(struct tdmwin_sched_data *q,
			 const struct tdmwin_plan *next, s64 now, s64 mono,
			 s64 open)
{
	s64 wake = open, expires;

	if (next && next->s.base < wake)
		wake = next->s.base;
	q->wait_open = open;
	expires = mono + min_t(s64, wake - now, TDMWIN_MAX_SLEEP_NS);
	if (hrtimer_is_queued(&q->watchdog.timer) &&
	    q->wd_expires > mono && q->wd_expires <= expires)
		return;
	q->wd_expires = expires;
	qdisc_watchdog_schedule_ns(&q->watchdog, expires);
}

/* A wait: count it as a wire or guard deferral once per target, sleep. */
static void tdmwin_wait(struct tdmwin_sched_data *q,
			const struct tdmwin_plan *next, s64 now, s64 mono,
			const struct tdmwin_gate_result *r)
{
	if (r->wire) {
		if (q->wire_wait_to != r->when) {
			q->wire_wait_to = r->when;
			q->st.wire_deferrals++;
			q->slots[r->slot].wire_deferrals++;
		}
	} else if (r->in_window && q->deferred_to != r->when) {
		q->deferred_to = r->when;
		q->st.guard_deferrals++;
		q->slots[r->slot].guard_deferrals++;
	}
	tdmwin_sleep(q, next, now, mono, r->when);
}

/*
 * Book the wire for a gated frame of @wire ns that the gate lets go at
 * @mono, behind what was booked up to *@free: false, with *@free updated,
 * if another instance on the device booked first (check the gate again).
 */
static bool tdmwin_book_gated(struct tdmwin_sched_data *q, s64 *free,
			      s64 mono, u64 wire)
{
	s64 done = max(*free, mono) + (s64)wire;

	if (!atomic64_try_cmpxchg(&q->wire->free, free, done))
		return false;
	tdmwin_note_backlog(q, done - mono);
	return true;
}

/*
 * What a gated dequeue checks before any frame, at *@now (the plan's
 * clock; *@mono on CLOCK_MONOTONIC), read here: the lease, a pending plan
 * whose base came (it takes over), and the hold of an unconfirmed plan.
 * The plan in force, or NULL while the gate holds.
 */
static const struct tdmwin_plan *tdmwin_gate_plan(struct tdmwin_sched_data *q,
						  s64 *now, s64 *mono)
{
	const struct tdmwin_plan *plan;

	*now = tdmwin_clock(q, mono);
	if (tdmwin_lease_out_mono(q->wire, *mono))
		return NULL;	/* renewal kicks the queue */
	plan = tdmwin_promote(q, *now);
	if (tdmwin_unconfirmed_holds(q, *now)) {
		if (!q->unconfirmed_seen) {
			q->unconfirmed_seen = true;
			q->st.unconfirmed_holds++;
		}
		return NULL;	/* confirm or abort kicks the queue */
	}
	return plan;
}

/*
 * The head of the gated queue if the gate lets it start now, else NULL
 * with the watchdog armed for the opening.  Frames that fit in no window of
 * the plan (after a plan or speed change) are dropped on the way.  On
 * success *p says where and when the frame leaves; with @book (dequeue,
 * not peek) the frame's wire time is booked as well, in one
 * compare-and-exchange with the check, so that instances on other TX
 * queues of the device cannot take the same wire time.
 *
 * The cost per frame (the qdisc is on every frame's path): an empty queue
 * returns before any clock is read, since the stack dequeues once more
 * after every frame it sent; the clock is read once, CLOCK_BOOTTIME only
 * with a lease; inside the window the last frame used, the check is two
 * comparisons against the cached window (open_start, open_end), without
 * the division that places a time in the cycle.
 */
static struct sk_buff *tdmwin_gated_head(struct Qdisc *sch,
					 struct tdmwin_pick *p, bool book)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_plan *plan, *next;
	struct tdmwin_gate_result r;
	struct sk_buff *skb;
	s64 mono, stop, free, now;
	u64 wire, need, backlog;
	int budget;

	if (q->hold || !q->gated->q.qlen)
		return NULL;	/* release, or an enqueue, kicks the queue */

	plan = tdmwin_gate_plan(q, &now, &mono);
	if (!plan)
		return NULL;
	next = rcu_dereference_bh(q->pending);
	stop = next ? next->s.base : TDMWIN_TIME_MAX;

	for (budget = 0; budget < TDMWIN_DROP_BUDGET; budget++) {
		skb = q->gated->ops->peek(q->gated);
		if (!skb)
			return NULL;

		wire = tdmwin_skb_wire_ns(q, skb);
		need = wire + plan->guard;
		free = q->wire_clock ? atomic64_read(&q->wire->free) : mono;
retry:
		backlog = tdmwin_backlog(free, mono);
		/* Fast path: still inside the window the last frame used. */
		if (now + (s64)backlog >= q->open_start &&
		    now + (s64)(backlog + need) <= q->open_end) {
			r.verdict = TDMWIN_SEND;
			r.when = q->open_start;
			r.end = q->open_end;
			r.slot = q->open_slot;
		} else {
			r = tdmwin_gate_wire(&plan->s, now, backlog, need, stop);
		}

		switch (r.verdict) {
		case TDMWIN_SEND:
			if (book && q->wire_clock &&
			    !tdmwin_book_gated(q, &free, mono, wire))
				goto retry;
			q->open_start = r.when;
			q->open_end = min(r.end, stop);
			q->open_slot = r.slot;
			p->now = now;
			p->backlog = backlog;
			p->wire = wire;
			p->start = r.when;
			p->end = q->open_end;
			p->slot = r.slot;
			return skb;
		case TDMWIN_NEVER:
			tdmwin_drop_head(sch, 0, false);
			continue;
		case TDMWIN_WAIT:
			tdmwin_wait(q, next, now, mono, &r);
			return NULL;
		}
	}
	/* Many oversize frames in a row: come back soon for the rest. */
	qdisc_watchdog_schedule_ns(&q->watchdog, ktime_get());
	return NULL;
}

/* The slot in @plan of window @i of gated class index @k. */
static int tdmwin_class_slot(const struct tdmwin_plan *plan, u32 k, int i)
{
	return plan->cslot[plan->cs[k].win - plan->cwin + i];
}

/*
 * The head of gated class index @k if the gate lets it start now, on the
 * class's windows and the device's wire (*p filled, the wire booked with
 * @book), else NULL with *r: TDMWIN_WAIT (.slot a slot of @plan, or -1),
 * or TDMWIN_NEVER if there is nothing to wait for.  Head frames that fit
 * no window of the class are dropped on the way, unless the pending plan
 * (@next) has one for them: they wait for its base.
 */
static struct sk_buff *tdmwin_class_head(struct Qdisc *sch, u32 k,
					 const struct tdmwin_plan *plan,
					 const struct tdmwin_plan *next,
					 s64 now, s64 mono, bool book,
					 struct tdmwin_pick *p,
					 struct tdmwin_gate_result *r)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct Qdisc *child = tdmwin_gated_child(q, k);
	const struct tdmwin_sched *cs = &plan->cs[k];
	s64 stop = next ? next->s.base : TDMWIN_TIME_MAX;
	u64 wire, need, backlog;
	struct sk_buff *skb;
	int budget;
	s64 free;

	for (budget = 0; budget < TDMWIN_DROP_BUDGET; budget++) {
		skb = child->ops->peek(child);
		if (!skb)
			break;
		wire = tdmwin_skb_wire_ns(q, skb);
		need = wire + plan->guard;
		free = q->wire_clock ? atomic64_read(&q->wire->free) : mono;
retry:
		backlog = tdmwin_backlog(free, mono);
		*r = tdmwin_gate_wire(cs, now, backlog, need, stop);
		if (r->verdict == TDMWIN_NEVER && next &&
		    wire + next->guard <= next->cs[k].max_len)
			*r = (struct tdmwin_gate_result){
				.verdict = TDMWIN_WAIT, .when = stop, .slot = -1,
			};

		switch (r->verdict) {
		case TDMWIN_SEND:
			if (book && q->wire_clock &&
			    !tdmwin_book_gated(q, &free, mono, wire))
				goto retry;
			p->now = now;
			p->backlog = backlog;
			p->wire = wire;
			p->start = r->when;
			p->end = min(r->end, stop);
			p->slot = tdmwin_class_slot(plan, k, r->slot);
			p->child = child;
			return skb;
		case TDMWIN_NEVER:
			tdmwin_drop_head(sch, k, !cs->nwin);
			continue;
		case TDMWIN_WAIT:
			if (r->slot >= 0)
				r->slot = tdmwin_class_slot(plan, k, r->slot);
			return NULL;
		}
	}
	r->verdict = TDMWIN_NEVER;
	if (budget == TDMWIN_DROP_BUDGET)	/* come back for the rest */
		qdisc_watchdog_schedule_ns(&q->watchdog, ktime_get());
	return NULL;
}

/*
 * The gated dequeue once destination classes exist: the head of the one
 * class whose window is open (the windows of different classes never
 * overlap, so at most one class may send at an instant), else NULL with
 * the watchdog armed for the earliest opening of a class that has frames.
 * As tdmwin_gated_head() for the one class, without its cached window.
 */
static struct sk_buff *tdmwin_classed_head(struct Qdisc *sch,
					   struct tdmwin_pick *p, bool book)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_gate_result r, first = {
		.verdict = TDMWIN_NEVER, .when = TDMWIN_TIME_MAX,
	};
	const struct tdmwin_plan *plan, *next;
	struct sk_buff *skb;
	s64 mono, now;
	u32 k;

	if (q->hold || sch->q.qlen == q->bypass->q.qlen)
		return NULL;	/* release, or an enqueue, kicks the queue */
	plan = tdmwin_gate_plan(q, &now, &mono);
	if (!plan)
		return NULL;
	next = rcu_dereference_bh(q->pending);
	for (k = 0; k < TDMWIN_NCLASSES; k++) {
		struct Qdisc *child = tdmwin_gated_child(q, k);

		if (!child || !child->q.qlen)
			continue;
		skb = tdmwin_class_head(sch, k, plan, next, now, mono, book, p,
					&r);
		if (skb)
			return skb;
		if (r.verdict == TDMWIN_WAIT && r.when < first.when)
			first = r;
	}
	if (first.verdict == TDMWIN_WAIT)
		tdmwin_wait(q, next, now, mono, &first);
	return NULL;
}

/* Dequeue of a gated frame once destination classes exist. */
static struct sk_buff *tdmwin_dequeue_classed(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_pick pick;
	struct sk_buff *skb;

	if (!tdmwin_classed_head(sch, &pick, true))
		return NULL;
	skb = qdisc_dequeue_peeked(pick.child);
	if (unlikely(!skb))
		return NULL;
	tdmwin_count_window(q, &pick, skb);
	return tdmwin_account(sch, skb);
}

/* Book the wire for a bypass frame, released now whatever the gate says. */
static void tdmwin_book_bypass(struct tdmwin_sched_data *q,
			       const struct sk_buff *skb)
{
	u64 backlog = tdmwin_wire_book(q->wire, ktime_get(),
				       tdmwin_skb_wire_ns(q, skb));

	tdmwin_note_backlog(q, backlog);
}

static struct sk_buff *tdmwin_dequeue(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_pick pick;
	struct sk_buff *skb;

	if (!sch->q.qlen)
		return NULL;
	if (q->bypass->q.qlen) {
		skb = qdisc_dequeue_peeked(q->bypass);
		if (skb) {
			q->st.bypass_packets++;
			q->st.bypass_bytes += qdisc_pkt_len(skb);
			/* Bypass frames keep the wire busy too. */
			if (q->wire_clock)
				tdmwin_book_bypass(q, skb);
			return tdmwin_account(sch, skb);
		}
	}
	if (q->txtime) {
		/* etf releases each frame for its launch time; while held,
		 * frames wait in etf, and those whose time has passed are
		 * dropped by etf once released.
		 */
		if (q->hold ||
		    tdmwin_lease_out_now(q->wire))
			return NULL;
		skb = qdisc_dequeue_peeked(q->gated);
		if (!skb)
			return NULL;
		q->st.window_packets++;
		q->st.window_bytes += qdisc_pkt_len(skb);
		return tdmwin_account(sch, skb);
	}
	if (q->ndests)
		return tdmwin_dequeue_classed(sch);
	if (!tdmwin_gated_head(sch, &pick, true))
		return NULL;
	skb = qdisc_dequeue_peeked(q->gated);
	if (unlikely(!skb))
		return NULL;
	tdmwin_count_window(q, &pick, skb);
	return tdmwin_account(sch, skb);
}

/*
 * A parent that peeks (tbf, drr, hfsc, ...) must see only what dequeue
 * would hand out now: a frame peeked while the gate is open may be
 * dequeued later, so dequeue checks the gate again and may return NULL.
 */
static struct sk_buff *tdmwin_peek(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_pick pick;
	struct sk_buff *skb;

	skb = q->bypass->ops->peek(q->bypass);
	if (skb)
		return skb;
	if (q->txtime) {
		/* etf's head, due or not: dequeue may return NULL */
		if (q->hold ||
		    tdmwin_lease_out_now(q->wire))
			return NULL;
		return q->gated->ops->peek(q->gated);
	}
	if (q->ndests)
		return tdmwin_classed_head(sch, &pick, false);
	return tdmwin_gated_head(sch, &pick, false);
}

static void tdmwin_reset(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	u32 i;

	qdisc_reset(q->gated);
	qdisc_reset(q->bypass);
	for (i = 0; i < TDMWIN_MAX_DESTS; i++)
		if (q->dest[i])
			qdisc_reset(q->dest[i]);
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	qdisc_watchdog_cancel(&q->watchdog);
	tdmwin_reset_gate(q);
}

/* ---- configuration ----------------------------------------------------- */

/* What a netlink request asks for, parsed and validated before anything
 * changes.  The new plan is built in full and only published on success.
 */
struct tdmwin_request {
	struct nlattr		*tb[TCA_TDMWIN_MAX + 1];
	struct tdmwin_plan	*plan;		/* new plan, or NULL */
	/* Children of the destination classes the new plan is the first to
	 * name (tdmwin_make_dests), installed by tdmwin_commit.
	 */
	struct Qdisc		*dest[TDMWIN_MAX_DESTS];
	clockid_t		clockid;
	u32			link_speed;
	u32			eff_speed;
	u32			ps_per_byte;
	u32			limit;
	u64			lease;
	bool			wire_clock;
	bool			txtime;
	bool			unconfirmed;
};

/* Sort @n windows by offset, their classes @cls with them (n <= 64). */
static void tdmwin_sort_windows(struct tdmwin_window *win, u8 *cls, u32 n)
{
	u32 i, j;

	for (i = 1; i < n; i++) {
		struct tdmwin_window w = win[i];
		u8 c = cls[i];

		for (j = i; j && win[j - 1].offset > w.offset; j--) {
			win[j] = win[j - 1];
			cls[j] = cls[j - 1];
		}
		win[j] = w;
		cls[j] = c;
	}
}

/* The class a window opens for: 1:1 if not given, else a gated class. */
static int tdmwin_parse_window_class(struct nlattr *attr, u8 *cls,
				     struct netlink_ext_ack *extack)
{
	u32 minor = attr ? nla_get_u32(attr) : TDMWIN_CLASS_GATED;

	if (minor == TDMWIN_CLASS_BYPASS) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "A window cannot open for the bypass class 1:2: it is never gated");
		return -EINVAL;
	}
	if (tdmwin_class_index(minor) < 0) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "Window class out of range: 1 (gated) or 3 to 34 (destinations)");
		return -EINVAL;
	}
	*cls = minor;
	return 0;
}

static bool tdmwin_has_plan_attrs(struct nlattr **tb)
{
	return tb[TCA_TDMWIN_CYCLE_TIME] || tb[TCA_TDMWIN_BASE_TIME] ||
	       tb[TCA_TDMWIN_WINDOWS] || tb[TCA_TDMWIN_GUARD] ||
	       tb[TCA_TDMWIN_PLAN_VERSION];
}

static int tdmwin_parse_windows(struct nlattr *list, struct tdmwin_window *win,
				u8 *cls, u32 *nwin,
				struct netlink_ext_ack *extack)
{
	struct nlattr *wtb[TCA_TDMWIN_WIN_MAX + 1];
	struct nlattr *w;
	int rem, err;
	u32 n = 0;

	nla_for_each_nested(w, list, rem) {
		if (nla_type(w) != TCA_TDMWIN_WINDOW) {
			NL_SET_ERR_MSG_ATTR(extack, w,
					    "Unexpected attribute in the window list");
			return -EINVAL;
		}
		if (n == TDMWIN_MAX_WINDOWS) {
			NL_SET_ERR_MSG_ATTR(extack, w,
					    "Too many windows: at most 64 per cycle");
			return -EINVAL;
		}
		err = nla_parse_nested(wtb, TCA_TDMWIN_WIN_MAX, w,
				       tdmwin_win_policy, extack);
		if (err < 0)
			return err;
		if (!wtb[TCA_TDMWIN_WIN_OFFSET] || !wtb[TCA_TDMWIN_WIN_LENGTH]) {
			NL_SET_ERR_MSG_ATTR(extack, w,
					    "A window needs an offset and a length");
			return -EINVAL;
		}
		win[n].offset = nla_get_u64(wtb[TCA_TDMWIN_WIN_OFFSET]);
		win[n].length = nla_get_u64(wtb[TCA_TDMWIN_WIN_LENGTH]);
		err = tdmwin_parse_window_class(wtb[TCA_TDMWIN_WIN_CLASS],
						&cls[n], extack);
		if (err)
			return err;
		n++;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(extack, list, "At least one window is required");
		return -EINVAL;
	}
	*nwin = n;
	return 0;
}

/* Check a complete plan against the link speed in use. */
static int tdmwin_check_plan(const struct tdmwin_plan *p, u32 ps_per_byte,
			     struct netlink_ext_ack *extack)
{
	switch (tdmwin_check_sched(&p->s,
				   tdmwin_min_window(ps_per_byte, p->guard))) {
	case TDMWIN_SCHED_OK:
		return 0;
	case TDMWIN_SCHED_CYCLE_SHORT:
		NL_SET_ERR_MSG(extack, "Cycle time must be at least 1 us");
		break;
	case TDMWIN_SCHED_CYCLE_LONG:
		NL_SET_ERR_MSG(extack, "Cycle time must be at most 10 s");
		break;
	case TDMWIN_SCHED_BASE:
		NL_SET_ERR_MSG(extack, "Base time must not be negative");
		break;
	case TDMWIN_SCHED_OUTSIDE:
		NL_SET_ERR_MSG(extack, "Window lies outside the cycle");
		break;
	case TDMWIN_SCHED_SHORT:
		NL_SET_ERR_MSG(extack,
			       "Window shorter than one minimum frame plus guard at this link speed");
		break;
	case TDMWIN_SCHED_OVERLAP:
		NL_SET_ERR_MSG(extack, "Windows overlap");
		break;
	}
	return -EINVAL;
}

/*
 * Each gated class's windows as a schedule of its own (tdmwin_plan.cs),
 * and the destination classes that have windows.
 */
static void tdmwin_group_classes(struct tdmwin_plan *p)
{
	u32 k, i, n = 0;

	p->dests = 0;
	for (k = 0; k < TDMWIN_NCLASSES; k++) {
		struct tdmwin_sched *cs = &p->cs[k];

		*cs = p->s;
		cs->win = &p->cwin[n];
		cs->nwin = 0;
		for (i = 0; i < p->s.nwin; i++) {
			if (tdmwin_class_index(p->cls[i]) != k)
				continue;
			p->cwin[n] = p->win[i];
			p->cslot[n++] = i;
			cs->nwin++;
		}
		cs->max_len = tdmwin_max_len(cs->win, cs->nwin);
		if (k && cs->nwin)
			p->dests |= BIT(k - 1);
	}
}

/* Build the new plan: attributes given override the latest plan's. */
static int tdmwin_build_plan(struct tdmwin_request *req,
			     const struct tdmwin_plan *prev,
			     struct netlink_ext_ack *extack)
{
	struct nlattr **tb = req->tb;
	struct tdmwin_plan *p;
	u32 nwin = prev ? prev->s.nwin : 0;
	int err;

	if (!prev && !tb[TCA_TDMWIN_CYCLE_TIME]) {
		NL_SET_ERR_MSG(extack, "Missing cycle-time");
		return -EINVAL;
	}
	if (!prev && !tb[TCA_TDMWIN_WINDOWS]) {
		NL_SET_ERR_MSG(extack, "Missing windows: at least one is required");
		return -EINVAL;
	}

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;

	if (prev) {
		p->s = prev->s;
		p->version = prev->version + 1;
		p->guard = prev->guard;
		memcpy(p->win, prev->win, nwin * sizeof(p->win[0]));
		memcpy(p->cls, prev->cls, nwin * sizeof(p->cls[0]));
	} else {
		p->version = 1;
	}
	if (tb[TCA_TDMWIN_CYCLE_TIME])
		p->s.cycle = nla_get_u64(tb[TCA_TDMWIN_CYCLE_TIME]);
	if (tb[TCA_TDMWIN_BASE_TIME])
		p->s.base = nla_get_s64(tb[TCA_TDMWIN_BASE_TIME]);
	if (tb[TCA_TDMWIN_GUARD])
		p->guard = nla_get_u32(tb[TCA_TDMWIN_GUARD]);
	if (tb[TCA_TDMWIN_PLAN_VERSION])
		p->version = nla_get_u32(tb[TCA_TDMWIN_PLAN_VERSION]);
	if (tb[TCA_TDMWIN_WINDOWS]) {
		err = tdmwin_parse_windows(tb[TCA_TDMWIN_WINDOWS], p->win,
					   p->cls, &nwin, extack);
		if (err)
			goto err_free;
	}
	if (p->guard > TDMWIN_MAX_GUARD_NS) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_GUARD],
				    "Guard must be at most 1 s");
		err = -EINVAL;
		goto err_free;
	}
	tdmwin_sort_windows(p->win, p->cls, nwin);
	p->s.nwin = nwin;
	p->s.win = p->win;
	p->s.max_len = tdmwin_max_len(p->win, nwin);
	tdmwin_group_classes(p);

	err = tdmwin_check_plan(p, req->ps_per_byte, extack);
	if (err)
		goto err_free;
	req->plan = p;
	return 0;

err_free:
	kfree(p);
	return err;
}

static int tdmwin_link_speed(struct Qdisc *sch, struct tdmwin_request *req,
			     struct netlink_ext_ack *extack)
{
	struct ethtool_link_ksettings ks;
	struct net_device *dev = qdisc_dev(sch);

	if (req->link_speed > TDMWIN_MAX_LINK_SPEED) {
		NL_SET_ERR_MSG_ATTR(extack, req->tb[TCA_TDMWIN_LINK_SPEED],
				    "Link speed above 1600000 Mbit/s");
		return -EINVAL;
	}
	req->eff_speed = req->link_speed;
	if (!req->eff_speed &&
	    !__ethtool_get_link_ksettings(dev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN && ks.base.speed)
		req->eff_speed = ks.base.speed;
	if (!req->eff_speed) {
		NL_SET_ERR_MSG(extack,
			       "Link speed of the device is unknown: give link-speed in Mbit/s");
		return -EINVAL;
	}
	req->ps_per_byte = tdmwin_ps_per_byte(req->eff_speed);
	return 0;
}

/*
 * A new link speed must suit every plan that stays in force: the active
 * plan unless the new plan replaces it now, and the pending plan unless a
 * new plan replaces it.  Promotion may free the active plan concurrently,
 * hence the RCU read side.
 */
static int tdmwin_check_kept_plans(struct tdmwin_sched_data *q,
				   const struct tdmwin_request *req,
				   struct netlink_ext_ack *extack)
{
	const struct tdmwin_plan *plan, *next;
	bool immediate = req->plan && req->plan->s.base <= tdmwin_now(q);
	int err = 0;

	rcu_read_lock();
	plan = rcu_dereference(q->plan);
	next = rcu_dereference(q->pending);
	if (!immediate)
		err = tdmwin_check_plan(plan, req->ps_per_byte, extack);
	if (!err && next && !req->plan)
		err = tdmwin_check_plan(next, req->ps_per_byte, extack);
	rcu_read_unlock();
	return err;
}

/* The guard of the latest plan once @req is applied. */
static u32 tdmwin_latest_guard(struct tdmwin_sched_data *q,
			       const struct tdmwin_request *req)
{
	const struct tdmwin_plan *p = req->plan;

	if (!p)
		p = rtnl_dereference(q->pending);
	if (!p)
		p = rtnl_dereference(q->plan);
	return p ? p->guard : 0;
}

/*
 * Every instance on a device books the one wire, so they must agree on how
 * long a frame keeps it busy and on the guard that ends each window.
 */
static int tdmwin_check_wire(struct Qdisc *sch,
			     const struct tdmwin_request *req,
			     struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_wire *w = tdmwin_wire_find(qdisc_dev(sch));

	if (!w || w->users == (q->wire == w ? 1 : 0))
		return 0;
	if (req->wire_clock != w->on) {
		NL_SET_ERR_MSG(extack,
			       "Another tdmwin on this device has the wire clock set otherwise: instances on one device share the wire and must agree");
		return -EINVAL;
	}
	if (req->eff_speed != w->eff_speed) {
		NL_SET_ERR_MSG(extack,
			       "Another tdmwin on this device uses a different link speed: instances on one device share the wire and must agree");
		return -EINVAL;
	}
	if (req->clockid != w->clockid) {
		NL_SET_ERR_MSG(extack,
			       "Another tdmwin on this device uses a different clockid: instances on one device share the wire and must agree");
		return -EINVAL;
	}
	if (tdmwin_latest_guard(q, req) != w->guard) {
		NL_SET_ERR_MSG(extack,
			       "Another tdmwin on this device uses a different guard: instances on one device share the wire and must agree");
		return -EINVAL;
	}
	return 0;
}

/*
 * Is @child an etf that keeps the launch times tdmwin sets?  Read from its
 * own dump, the one public view of a qdisc's options.
 */
static int tdmwin_check_etf(struct Qdisc *child, struct netlink_ext_ack *extack)
{
	const struct tc_etf_qopt *qopt = NULL;
	struct nlattr *opts, *parms;
	struct sk_buff *skb;
	int err = -EINVAL;

	if (!child || strcmp(child->ops->id, "etf")) {
		NL_SET_ERR_MSG(extack,
			       "txtime needs an etf qdisc at class 1:1: etf clockid CLOCK_TAI delta NS skip_sock_check [offload]");
		return -EINVAL;
	}
	skb = alloc_skb(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	if (child->ops->dump && child->ops->dump(child, skb) >= 0 &&
	    skb->len >= NLA_HDRLEN) {
		opts = (struct nlattr *)skb->data;
		parms = nla_type(opts) == TCA_OPTIONS ?
			nla_find_nested(opts, TCA_ETF_PARMS) : NULL;
		if (parms && nla_len(parms) >= sizeof(*qopt))
			qopt = nla_data(parms);
	}
	if (!qopt)
		NL_SET_ERR_MSG(extack, "Could not read the options of the etf child");
	else if (qopt->flags & TC_ETF_DEADLINE_MODE_ON)
		NL_SET_ERR_MSG(extack,
			       "The etf child is in deadline mode, which replaces launch times: txtime needs them kept");
	else if (!(qopt->flags & TC_ETF_SKIP_SOCK_CHECK))
		NL_SET_ERR_MSG(extack,
			       "The etf child needs skip_sock_check: tdmwin, not the socket, sets the launch time");
	else if (qopt->clockid != CLOCK_TAI)
		NL_SET_ERR_MSG(extack, "The etf child must use clockid CLOCK_TAI");
	else
		err = 0;
	consume_skb(skb);
	return err;
}

/* Launch times: what they need of the qdisc, its place and its child. */
static int tdmwin_check_txtime(struct Qdisc *sch,
			       const struct tdmwin_request *req, bool init,
			       struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);

	if (!init && q->ndests) {
		NL_SET_ERR_MSG(extack, TDMWIN_MSG_TXTIME_DESTS);
		return -EINVAL;
	}
	if (req->clockid != CLOCK_TAI) {
		NL_SET_ERR_MSG(extack,
			       "txtime needs clockid CLOCK_TAI: etf and the NIC launch frames on TAI");
		return -EINVAL;
	}
	if (!req->wire_clock) {
		NL_SET_ERR_MSG(extack,
			       "txtime books launch times on the wire clock: it cannot be off");
		return -EINVAL;
	}
	if (init) {
		NL_SET_ERR_MSG(extack,
			       "txtime needs the etf child first: add tdmwin, add etf at parent 1:1, then change to txtime on");
		return -EINVAL;
	}
	if (sch->parent == TC_H_ROOT && qdisc_dev(sch)->real_num_tx_queues > 1) {
		NL_SET_ERR_MSG(extack,
			       "etf launches the frames of one TX queue: on a multi-queue device use mq, with one tdmwin and one etf per queue");
		return -EINVAL;
	}
	return tdmwin_check_etf(q->gated, extack);
}

/*
 * The lease: set, changed, or renewed.  There is one per device, so its
 * current value is the device's (another instance may have set it).
 */
static int tdmwin_parse_lease(struct Qdisc *sch, struct tdmwin_request *req,
			      struct netlink_ext_ack *extack)
{
	const struct tdmwin_wire *w = tdmwin_wire_find(qdisc_dev(sch));
	struct nlattr **tb = req->tb;

	req->lease = w ? w->lease_ns : 0;
	if (tb[TCA_TDMWIN_LEASE]) {
		req->lease = nla_get_u64(tb[TCA_TDMWIN_LEASE]);
		if (req->lease && (req->lease < TDMWIN_MIN_LEASE_NS ||
				   req->lease > TDMWIN_MAX_LEASE_NS)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_LEASE],
					    "Lease must be 0 (none) or from 100 ms to 1 h");
			return -EINVAL;
		}
	}
	if (tb[TCA_TDMWIN_RENEW] && !req->lease) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_RENEW],
				    "Nothing to renew: the device has no lease (set one with lease TIME)");
		return -EINVAL;
	}
	return 0;
}

/*
 * Two-phase changes.  A new plan may be unconfirmed if its base time is
 * ahead; confirm and abort name the version of the unconfirmed plan and
 * come alone.  Unconfirmed plans are never promoted, so what is checked
 * here still holds at commit (both under RTNL).
 */
static int tdmwin_parse_confirm(struct Qdisc *sch, struct tdmwin_request *req,
				const struct tdmwin_plan *latest, bool init,
				struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct nlattr **tb = req->tb;
	struct nlattr *op = tb[TCA_TDMWIN_CONFIRM] ?: tb[TCA_TDMWIN_ABORT];

	req->unconfirmed = false;
	if (tb[TCA_TDMWIN_UNCONFIRMED])
		req->unconfirmed = nla_get_u8(tb[TCA_TDMWIN_UNCONFIRMED]);
	if (req->unconfirmed && !req->plan) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_UNCONFIRMED],
				    "Unconfirmed goes with a new plan");
		return -EINVAL;
	}
	if (req->unconfirmed && req->plan->s.base <= tdmwin_now(q)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_UNCONFIRMED],
				    "An unconfirmed plan needs a base time in the future");
		return -EINVAL;
	}
	if (!op)
		return 0;
	if (tb[TCA_TDMWIN_CONFIRM] && tb[TCA_TDMWIN_ABORT]) {
		NL_SET_ERR_MSG(extack, "Confirm and abort exclude each other");
		return -EINVAL;
	}
	if (tdmwin_has_plan_attrs(tb) || tb[TCA_TDMWIN_UNCONFIRMED]) {
		NL_SET_ERR_MSG_ATTR(extack, op,
				    "Confirm or abort the pending plan alone, without plan parameters");
		return -EINVAL;
	}
	if (init || !q->unconfirmed || latest->version != nla_get_u32(op)) {
		NL_SET_ERR_MSG_ATTR(extack, op,
				    "No unconfirmed plan of this version");
		return -EINVAL;
	}
	return 0;
}

/* Parse and validate everything; change nothing. */
static int tdmwin_parse(struct Qdisc *sch, struct nlattr *opt,
			struct tdmwin_request *req, bool init,
			struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct nlattr **tb = req->tb;
	const struct tdmwin_plan *prev;
	int err;

	if (!opt) {
		NL_SET_ERR_MSG(extack, "Missing options: cycle-time and windows are required");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, TCA_TDMWIN_MAX, opt, tdmwin_policy, extack);
	if (err < 0)
		return err;

	req->clockid = init ? CLOCK_TAI : q->clockid;
	if (tb[TCA_TDMWIN_CLOCKID]) {
		s32 clockid = nla_get_s32(tb[TCA_TDMWIN_CLOCKID]);

		if (!tdmwin_valid_clockid(clockid)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_CLOCKID],
					    "Unknown clockid: use CLOCK_TAI, CLOCK_REALTIME, CLOCK_MONOTONIC or CLOCK_BOOTTIME");
			return -EINVAL;
		}
		if (!init && clockid != q->clockid) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_CLOCKID],
					    "The clockid cannot be changed: delete and add the qdisc");
			return -EINVAL;
		}
		req->clockid = clockid;
	}

	req->link_speed = init ? 0 : q->link_speed;
	if (tb[TCA_TDMWIN_LINK_SPEED])
		req->link_speed = nla_get_u32(tb[TCA_TDMWIN_LINK_SPEED]);
	err = tdmwin_link_speed(sch, req, extack);
	if (err)
		return err;

	req->wire_clock = init ? true : q->wire_clock;
	if (tb[TCA_TDMWIN_WIRE_CLOCK])
		req->wire_clock = nla_get_u8(tb[TCA_TDMWIN_WIRE_CLOCK]);

	req->txtime = init ? false : q->txtime;
	if (tb[TCA_TDMWIN_TXTIME])
		req->txtime = nla_get_u8(tb[TCA_TDMWIN_TXTIME]);
	if (req->txtime) {
		err = tdmwin_check_txtime(sch, req, init, extack);
		if (err)
			return err;
	}

	req->limit = init ? max_t(u32, qdisc_dev(sch)->tx_queue_len, 1) :
			    q->limit;
	if (tb[TCA_TDMWIN_LIMIT]) {
		req->limit = nla_get_u32(tb[TCA_TDMWIN_LIMIT]);
		if (!req->limit) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TDMWIN_LIMIT],
					    "Limit must be at least one packet");
			return -EINVAL;
		}
	}

	/* The latest plan: the pending one if any, else the active one.  It
	 * is freed only under RTNL (promotion frees the older active plan).
	 */
	prev = NULL;
	if (!init) {
		prev = rtnl_dereference(q->pending);
		if (!prev)
			prev = rtnl_dereference(q->plan);
	}
	if (init || tdmwin_has_plan_attrs(tb)) {
		err = tdmwin_build_plan(req, prev, extack);
		if (err)
			return err;
	}
	if (req->txtime && req->plan && req->plan->dests) {
		NL_SET_ERR_MSG(extack, TDMWIN_MSG_TXTIME_DESTS);
		return -EINVAL;
	}
	err = tdmwin_parse_confirm(sch, req, prev, init, extack);
	if (!err)
		err = tdmwin_parse_lease(sch, req, extack);
	if (err)
		return err;
	if (!init && req->ps_per_byte != q->ps_per_byte)
		err = tdmwin_check_kept_plans(q, req, extack);
	if (!err)
		err = tdmwin_check_wire(sch, req, extack);
	return err;
}

static struct Qdisc *tdmwin_create_child(struct Qdisc *sch, u32 minor,
					 u32 limit,
					 struct netlink_ext_ack *extack)
{
	struct Qdisc *child;
	int err;

	child = qdisc_create_dflt(sch->dev_queue, &pfifo_qdisc_ops,
				  TC_H_MAKE(sch->handle, minor), extack);
	if (!child)
		return NULL;
	err = fifo_set_limit(child, limit);
	if (err) {
		qdisc_put(child);
		return NULL;
	}
	return child;
}

/*
 * A child for each destination class that the new plan is the first to
 * name, created before anything changes.
 */
static int tdmwin_make_dests(struct Qdisc *sch, struct tdmwin_request *req,
			     struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	u32 i;

	for (i = 0; req->plan && i < TDMWIN_MAX_DESTS; i++) {
		if (!(req->plan->dests & BIT(i)) || q->dest[i])
			continue;
		req->dest[i] = tdmwin_create_child(sch,
						   TDMWIN_CLASS_DEST_FIRST + i,
						   req->limit, extack);
		if (!req->dest[i]) {
			NL_SET_ERR_MSG(extack,
				       "Could not create the child fifo of a destination class");
			return -ENOMEM;
		}
	}
	return 0;
}

/* Free what a request holds that tdmwin_commit did not take. */
static void tdmwin_free_request(struct tdmwin_request *req)
{
	u32 i;

	for (i = 0; i < TDMWIN_MAX_DESTS; i++)
		if (req->dest[i])
			qdisc_put(req->dest[i]);
	kfree(req->plan);
}

/* Apply a validated request.  Called under RTNL. */
static void tdmwin_commit(struct Qdisc *sch, struct tdmwin_request *req)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct nlattr **tb = req->tb;
	struct tdmwin_plan *old_plan = NULL, *old_pending = NULL;
	bool kick = false;
	u32 i;

	sch_tree_lock(sch);
	for (i = 0; i < TDMWIN_MAX_DESTS; i++) {
		if (!req->dest[i])
			continue;
		q->dest[i] = req->dest[i];
		req->dest[i] = NULL;
		q->ndests++;
		qdisc_hash_add(q->dest[i], true);
	}
	q->link_speed = req->link_speed;
	q->eff_speed = req->eff_speed;
	q->ps_per_byte = req->ps_per_byte;
	q->limit = req->limit;
	q->wire_clock = req->wire_clock;
	q->txtime = req->txtime;
	if (tb[TCA_TDMWIN_BYPASS_PRIOS])
		q->bypass_prios = nla_get_u32(tb[TCA_TDMWIN_BYPASS_PRIOS]);
	if (tb[TCA_TDMWIN_BYPASS_PTP])
		q->bypass_ptp = nla_get_u8(tb[TCA_TDMWIN_BYPASS_PTP]);
	if (tb[TCA_TDMWIN_HOLD]) {
		bool hold = nla_get_u8(tb[TCA_TDMWIN_HOLD]);

		kick |= q->hold && !hold;
		q->hold = hold;
	}

	if (req->plan) {
		struct tdmwin_plan *cur;

		cur = rcu_dereference_protected(q->plan, lockdep_rtnl_is_held());

		old_pending = rcu_dereference_protected(q->pending,
							lockdep_rtnl_is_held());
		if (cur && req->plan->s.base > tdmwin_now(q)) {
			/* Takes over at its base time; replaces a pending one. */
			rcu_assign_pointer(q->pending, req->plan);
			tdmwin_forget_window(q);
		} else {
			old_plan = cur;
			rcu_assign_pointer(q->plan, req->plan);
			RCU_INIT_POINTER(q->pending, NULL);
			tdmwin_reset_gate(q);
			tdmwin_reset_slots(q, req->plan->version);
		}
		req->plan = NULL;
		q->unconfirmed = req->unconfirmed;
		q->unconfirmed_seen = false;
		kick = true;
	}
	if (tb[TCA_TDMWIN_CONFIRM]) {
		q->unconfirmed = false;
		kick = true;
	}
	if (tb[TCA_TDMWIN_ABORT]) {
		/* Back to the plan in force; a qdisc created with the plan
		 * has none to go back to, and holds.
		 */
		old_pending = rcu_dereference_protected(q->pending,
							lockdep_rtnl_is_held());
		if (old_pending)
			RCU_INIT_POINTER(q->pending, NULL);
		else
			q->hold = true;
		q->unconfirmed = false;
		q->st.pending_aborts++;
		tdmwin_forget_window(q);
		kick = true;
	}
	sch_tree_unlock(sch);

	/* What the other instances on the device must agree with. */
	q->wire->on = req->wire_clock;
	q->wire->eff_speed = req->eff_speed;
	q->wire->clockid = q->clockid;
	q->wire->guard = tdmwin_latest_guard(q, req);
	if (tb[TCA_TDMWIN_LEASE] || tb[TCA_TDMWIN_RENEW])
		tdmwin_lease_renew(q->wire, qdisc_dev(sch), req->lease);

	if (old_plan)
		kfree_rcu(old_plan, rcu);
	if (old_pending)
		kfree_rcu(old_pending, rcu);
	if (kick) {
		/* Re-evaluate the gate now rather than at the old wake-up. */
		qdisc_watchdog_cancel(&q->watchdog);
		if (sch->q.qlen)
			__netif_schedule(qdisc_root(sch));
	}
}

/* A new limit, for the children that follow it: pfifo (the default). */
static int tdmwin_set_limits(struct tdmwin_sched_data *q, u32 limit)
{
	int err = 0;
	u32 i;

	if (q->gated->ops == &pfifo_qdisc_ops)
		err = fifo_set_limit(q->gated, limit);
	if (!err && q->bypass->ops == &pfifo_qdisc_ops)
		err = fifo_set_limit(q->bypass, limit);
	for (i = 0; !err && i < TDMWIN_MAX_DESTS; i++)
		if (q->dest[i] && q->dest[i]->ops == &pfifo_qdisc_ops)
			err = fifo_set_limit(q->dest[i], limit);
	return err;
}

static int tdmwin_change(struct Qdisc *sch, struct nlattr *opt,
			 struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_request req = {};
	int err;

	err = tdmwin_parse(sch, opt, &req, false, extack);
	if (!err)
		err = tdmwin_make_dests(sch, &req, extack);
	if (err)
		goto out;
	if (req.limit != q->limit) {
		err = tdmwin_set_limits(q, req.limit);
		if (err) {
			NL_SET_ERR_MSG(extack, "Could not set the limit of the child fifo");
			goto out;
		}
	}
	tdmwin_commit(sch, &req);
out:
	tdmwin_free_request(&req);
	return err;
}

static int tdmwin_init(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_request req = {};
	int err;

	/* destroy() runs after a failed init: make it safe first. */
	q->gated = &noop_qdisc;
	q->bypass = &noop_qdisc;
	q->clockid = CLOCK_TAI;
	q->bypass_ptp = true;
	tdmwin_reset_gate(q);
	qdisc_watchdog_init(&q->watchdog, sch);

	err = tcf_block_get(&q->block, &q->filter_list, sch, extack);
	if (!err)
		err = tdmwin_parse(sch, opt, &req, true, extack);
	if (!err)
		err = tdmwin_make_dests(sch, &req, extack);
	if (err)
		goto out;
	q->wire = tdmwin_wire_get(qdisc_dev(sch));
	if (!q->wire) {
		err = -ENOMEM;
		goto out;
	}

	q->gated = tdmwin_create_child(sch, TDMWIN_CLASS_GATED, req.limit,
				       extack);
	q->bypass = tdmwin_create_child(sch, TDMWIN_CLASS_BYPASS, req.limit,
					extack);
	if (!q->gated || !q->bypass) {
		NL_SET_ERR_MSG(extack, "Could not create the child fifos");
		err = -ENOMEM;
		q->gated = q->gated ?: &noop_qdisc;
		q->bypass = q->bypass ?: &noop_qdisc;
		goto out;
	}
	qdisc_hash_add(q->gated, true);
	qdisc_hash_add(q->bypass, true);

	q->clockid = req.clockid;
	tdmwin_commit(sch, &req);
out:
	tdmwin_free_request(&req);
	return err;
}

static void tdmwin_destroy(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct tdmwin_plan *p;
	u32 i;

	tcf_block_put(q->block);
	qdisc_watchdog_cancel(&q->watchdog);
	qdisc_put(q->gated);
	qdisc_put(q->bypass);
	for (i = 0; i < TDMWIN_MAX_DESTS; i++)
		if (q->dest[i])
			qdisc_put(q->dest[i]);
	if (q->wire)
		tdmwin_wire_put(q->wire);
	p = rcu_dereference_protected(q->plan, 1);
	if (p)
		kfree_rcu(p, rcu);
	p = rcu_dereference_protected(q->pending, 1);
	if (p)
		kfree_rcu(p, rcu);
}

/* ---- dump -------------------------------------------------------------- */

static int tdmwin_dump_plan(struct sk_buff *skb, const struct tdmwin_plan *p)
{
	struct nlattr *list, *w;
	u32 i;

	if (nla_put_u64_64bit(skb, TCA_TDMWIN_CYCLE_TIME, p->s.cycle,
			      TCA_TDMWIN_PAD) ||
	    nla_put_s64(skb, TCA_TDMWIN_BASE_TIME, p->s.base, TCA_TDMWIN_PAD) ||
	    nla_put_u32(skb, TCA_TDMWIN_GUARD, p->guard) ||
	    nla_put_u32(skb, TCA_TDMWIN_PLAN_VERSION, p->version))
		return -EMSGSIZE;

	list = nla_nest_start(skb, TCA_TDMWIN_WINDOWS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < p->s.nwin; i++) {
		w = nla_nest_start(skb, TCA_TDMWIN_WINDOW);
		if (!w ||
		    nla_put_u64_64bit(skb, TCA_TDMWIN_WIN_OFFSET,
				      p->win[i].offset, TCA_TDMWIN_WIN_PAD) ||
		    nla_put_u64_64bit(skb, TCA_TDMWIN_WIN_LENGTH,
				      p->win[i].length, TCA_TDMWIN_WIN_PAD) ||
		    (p->cls[i] != TDMWIN_CLASS_GATED &&
		     nla_put_u32(skb, TCA_TDMWIN_WIN_CLASS, p->cls[i])))
			return -EMSGSIZE;
		nla_nest_end(skb, w);
	}
	nla_nest_end(skb, list);
	return 0;
}

/* Room kept in a dump for what tc_fill_qdisc() adds after the options:
 * the counters (TCA_STATS2 with the xstats, and their TCA_STATS and
 * TCA_XSTATS copies), well under this.
 */
#define TDMWIN_DUMP_STATS_ROOM	1024

/* Bytes of TCA_TDMWIN_SLOTS for @nwin slots. */
static size_t tdmwin_slots_size(u32 nwin)
{
	size_t slot = nla_total_size(0) + nla_total_size(sizeof(u32)) +
		      (TCA_TDMWIN_SLOT_MAX - TCA_TDMWIN_SLOT_INDEX) *
		      nla_total_size_64bit(sizeof(u64));

	return nla_total_size(0) + nla_total_size(sizeof(u32)) + nwin * slot;
}

static int tdmwin_dump_slot(struct sk_buff *skb, const struct tdmwin_slot *sl,
			    u32 index)
{
	struct nlattr *nest = nla_nest_start(skb, TCA_TDMWIN_SLOTS_SLOT);

	if (!nest ||
	    nla_put_u32(skb, TCA_TDMWIN_SLOT_INDEX, index) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_FRAMES, sl->frames,
			      TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_BYTES, sl->bytes,
			      TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_OPENS, sl->opens,
			      TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_WIRE_DEFERRALS,
			      sl->wire_deferrals, TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_GUARD_DEFERRALS,
			      sl->guard_deferrals, TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_LATENCY_COUNT,
			      sl->latency_count, TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_LATENCY_SUM,
			      sl->latency_sum, TCA_TDMWIN_SLOT_PAD) ||
	    nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_LATENCY_MAX,
			      sl->latency_max, TCA_TDMWIN_SLOT_PAD) ||
	    (sl->frames &&
	     nla_put_u64_64bit(skb, TCA_TDMWIN_SLOT_MARGIN_MIN,
			       sl->margin_min, TCA_TDMWIN_SLOT_PAD)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * The slots of the plan in force, read under the qdisc lock so that they
 * belong together and to the plan they name.  Left out of a message that
 * has no room for them with the counters that follow: a notification or a
 * single RTM_GETQDISC (one page) of a plan with many windows; a dump
 * (tc qdisc show) comes in a larger buffer and carries them.
 */
static int tdmwin_dump_slots(struct Qdisc *sch, struct sk_buff *skb)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_plan *plan;
	struct nlattr *nest;
	int err = 0;
	u32 i;

	sch_tree_lock(sch);	/* BH off: an RCU-bh read side */
	plan = rcu_dereference_bh(q->plan);
	if ((size_t)skb_tailroom(skb) < tdmwin_slots_size(plan->s.nwin) +
				TDMWIN_DUMP_STATS_ROOM)
		goto out;
	err = -EMSGSIZE;
	nest = nla_nest_start(skb, TCA_TDMWIN_SLOTS);
	if (!nest || nla_put_u32(skb, TCA_TDMWIN_SLOTS_VERSION, q->slots_version))
		goto out;
	for (i = 0; i < plan->s.nwin; i++)
		if (tdmwin_dump_slot(skb, &q->slots[i], i))
			goto out;
	nla_nest_end(skb, nest);
	err = 0;
out:
	sch_tree_unlock(sch);
	return err;
}

/* Let a due pending plan take over, so that dumps show what is in force. */
static void tdmwin_catch_up(struct Qdisc *sch)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);

	sch_tree_lock(sch);	/* BH off: an RCU-bh read side */
	tdmwin_promote(q, tdmwin_now(q));
	sch_tree_unlock(sch);
}

static int tdmwin_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_plan *plan, *pending;
	struct nlattr *nest, *pnest;

	tdmwin_catch_up(sch);

	nest = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_s32(skb, TCA_TDMWIN_CLOCKID, q->clockid) ||
	    nla_put_u32(skb, TCA_TDMWIN_LINK_SPEED, q->link_speed) ||
	    nla_put_u32(skb, TCA_TDMWIN_EFF_LINK_SPEED, q->eff_speed) ||
	    nla_put_u32(skb, TCA_TDMWIN_BYPASS_PRIOS, q->bypass_prios) ||
	    nla_put_u8(skb, TCA_TDMWIN_BYPASS_PTP, q->bypass_ptp) ||
	    nla_put_u8(skb, TCA_TDMWIN_HOLD, q->hold) ||
	    nla_put_u8(skb, TCA_TDMWIN_WIRE_CLOCK, q->wire_clock) ||
	    nla_put_u8(skb, TCA_TDMWIN_TXTIME, q->txtime) ||
	    nla_put_u32(skb, TCA_TDMWIN_LIMIT, q->limit))
		goto nla_put_failure;
	if (READ_ONCE(q->wire->lease_ns) &&
	    (nla_put_u64_64bit(skb, TCA_TDMWIN_LEASE,
			       READ_ONCE(q->wire->lease_ns), TCA_TDMWIN_PAD) ||
	     nla_put_s64(skb, TCA_TDMWIN_LEASE_LEFT,
			 tdmwin_lease_left(q->wire, ktime_get_boottime_ns()),
			 TCA_TDMWIN_PAD)))
		goto nla_put_failure;
	if (q->unconfirmed && !rcu_access_pointer(q->pending) &&
	    nla_put_u8(skb, TCA_TDMWIN_UNCONFIRMED, 1))
		goto nla_put_failure;

	rcu_read_lock();
	plan = rcu_dereference(q->plan);
	pending = rcu_dereference(q->pending);
	if (tdmwin_dump_plan(skb, plan))
		goto nla_put_failure_rcu;
	if (pending) {
		pnest = nla_nest_start(skb, TCA_TDMWIN_PENDING);
		if (!pnest || tdmwin_dump_plan(skb, pending) ||
		    (q->unconfirmed &&
		     nla_put_u8(skb, TCA_TDMWIN_UNCONFIRMED, 1)))
			goto nla_put_failure_rcu;
		nla_nest_end(skb, pnest);
	}
	rcu_read_unlock();
	if (tdmwin_dump_slots(sch, skb))
		goto nla_put_failure;
	return nla_nest_end(skb, nest);

nla_put_failure_rcu:
	rcu_read_unlock();
nla_put_failure:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int tdmwin_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	const struct tdmwin_plan *pending;
	struct tc_tdmwin_xstats st;

	sch_tree_lock(sch);	/* BH off: an RCU-bh read side */
	tdmwin_promote(q, tdmwin_now(q));
	st = q->st;
	st.plan_version = rcu_dereference_bh(q->plan)->version;
	pending = rcu_dereference_bh(q->pending);
	if (pending) {
		st.pending = 1;
		st.pending_version = pending->version;
		st.pending_base_time = pending->s.base;
	}
	st.hold = q->hold;
	st.pending_unconfirmed = q->unconfirmed;
	st.lease_held = tdmwin_lease_out(q->wire, ktime_get_boottime_ns());
	st.lease_expiries = atomic64_read(&q->wire->expiries);
	if (q->wire_clock)
		st.wire_backlog = tdmwin_backlog(atomic64_read(&q->wire->free),
						 ktime_get());
	if (q->txtime)
		st.txtime_drops = q->gated->qstats.drops;
	sch_tree_unlock(sch);

	return gnet_stats_copy_app(d, &st, sizeof(st));
}

/* ---- classes: 1:1 gated, 1:2 bypass, 1:3 .. destinations --------------- */

static struct Qdisc **tdmwin_slot(struct Qdisc *sch, unsigned long cl)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);

	if (cl == TDMWIN_CLASS_BYPASS)
		return &q->bypass;
	if (cl >= TDMWIN_CLASS_DEST_FIRST)
		return &q->dest[cl - TDMWIN_CLASS_DEST_FIRST];
	return &q->gated;
}

static int tdmwin_graft(struct Qdisc *sch, unsigned long cl, struct Qdisc *new,
			struct Qdisc **old, struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	int err;

	if (q->txtime && cl == TDMWIN_CLASS_GATED) {
		err = tdmwin_check_etf(new, extack);
		if (err)
			return err;
	}
	if (!new)
		new = &noop_qdisc;
	*old = qdisc_replace(sch, new, tdmwin_slot(sch, cl));
	return 0;
}

static struct Qdisc *tdmwin_leaf(struct Qdisc *sch, unsigned long cl)
{
	return *tdmwin_slot(sch, cl);
}

/* 1:1, 1:2, and the destination classes that exist. */
static unsigned long tdmwin_find(struct Qdisc *sch, u32 classid)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	u32 minor = TC_H_MIN(classid);

	if (minor == TDMWIN_CLASS_GATED || minor == TDMWIN_CLASS_BYPASS)
		return minor;
	if (tdmwin_class_index(minor) > 0 &&
	    q->dest[minor - TDMWIN_CLASS_DEST_FIRST])
		return minor;
	return 0;
}

static void tdmwin_walk(struct Qdisc *sch, struct qdisc_walker *walker)
{
	unsigned long cl;

	if (walker->stop)
		return;
	for (cl = TDMWIN_CLASS_GATED; cl <= TDMWIN_CLASS_DEST_LAST; cl++) {
		if (!tdmwin_find(sch, cl))
			continue;
		if (!tc_qdisc_stats_dump(sch, cl, walker))
			break;
	}
}

static int tdmwin_dump_class(struct Qdisc *sch, unsigned long cl,
			     struct sk_buff *skb, struct tcmsg *tcm)
{
	tcm->tcm_handle |= TC_H_MIN(cl);
	tcm->tcm_info = (*tdmwin_slot(sch, cl))->handle;
	return 0;
}

/* A gated class's drops: its child's, and the frames tdmwin dropped. */
static int tdmwin_dump_class_stats(struct Qdisc *sch, unsigned long cl,
				   struct gnet_dump *d)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);
	struct Qdisc *child = *tdmwin_slot(sch, cl);
	struct gnet_stats_queue qs = child->qstats;
	int k = tdmwin_class_index(cl);

	if (k >= 0)
		qs.drops += q->cdrops[k];
	if (gnet_stats_copy_basic(d, child->cpu_bstats, &child->bstats,
				  true) < 0 ||
	    gnet_stats_copy_queue(d, child->cpu_qstats, &qs,
				  qdisc_qlen_sum(child)) < 0)
		return -1;
	return 0;
}

/* Filters are attached to the qdisc itself (parent 1:), never a class. */
static struct tcf_block *tdmwin_tcf_block(struct Qdisc *sch, unsigned long cl,
					  struct netlink_ext_ack *extack)
{
	struct tdmwin_sched_data *q = qdisc_priv(sch);

	if (cl) {
		NL_SET_ERR_MSG(extack,
			       "tdmwin takes filters at the qdisc (parent MAJ:), not at a class");
		return NULL;
	}
	return q->block;
}

/*
 * A filter's classid may name a destination class that no plan named yet:
 * classification reads the classid at enqueue, not a bound class.
 */
static unsigned long tdmwin_bind(struct Qdisc *sch, unsigned long parent,
				 u32 classid)
{
	return tdmwin_find(sch, classid);
}

static void tdmwin_unbind(struct Qdisc *sch, unsigned long cl)
{
}

static const struct Qdisc_class_ops tdmwin_class_ops = {
	.graft		= tdmwin_graft,
	.leaf		= tdmwin_leaf,
	.find		= tdmwin_find,
	.walk		= tdmwin_walk,
	.tcf_block	= tdmwin_tcf_block,
	.bind_tcf	= tdmwin_bind,
	.unbind_tcf	= tdmwin_unbind,
	.dump		= tdmwin_dump_class,
	.dump_stats	= tdmwin_dump_class_stats,
};

static struct Qdisc_ops tdmwin_qdisc_ops __read_mostly = {
	.id		= "tdmwin",
	.priv_size	= sizeof(struct tdmwin_sched_data),
	.cl_ops		= &tdmwin_class_ops,
	.enqueue	= tdmwin_enqueue,
	.dequeue	= tdmwin_dequeue,
	.peek		= tdmwin_peek,
	.init		= tdmwin_init,
	.change		= tdmwin_change,
	.reset		= tdmwin_reset,
	.destroy	= tdmwin_destroy,
	.dump		= tdmwin_dump,
	.dump_stats	= tdmwin_dump_stats,
	.owner		= THIS_MODULE,
};

static int __init tdmwin_module_init(void)
{
	return register_qdisc(&tdmwin_qdisc_ops);
}

static void __exit tdmwin_module_exit(void)
{
	unregister_qdisc(&tdmwin_qdisc_ops);
}

module_init(tdmwin_module_init);
module_exit(tdmwin_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Time-division multiplexed transmit windows qdisc");
MODULE_ALIAS_NET_SCH("tdmwin");
