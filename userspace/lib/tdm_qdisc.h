/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Programming a tdmwin qdisc over rtnetlink with libmnl (no tc binary):
 * RTM_NEWQDISC to create, replace or change it, RTM_GETQDISC to read it
 * back.  Errors carry the kernel's extack text when there is one.
 */
#ifndef TDM_QDISC_H
#define TDM_QDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tdm_nl.h"
#include "tdm_plan.h"

/* An rtnetlink socket (libtdm's netlink client, tdm_nl.h). */
struct tdm_rtnl {
	struct tdm_nl nl;
};

/* Where the qdisc lives and what the member adds to the plan. */
struct tdm_qdisc_target {
	char ifname[16];
	int ifindex;		/* resolved by tdm_qdisc_resolve() */
	uint32_t parent;	/* TC_H_ROOT (default) or a class handle */
	uint32_t handle;	/* 0 = let the kernel choose on create */
	uint32_t limit;		/* 0 = kernel default (txqueuelen) */
	uint32_t link_speed;	/* Mbit/s; 0 = the plan's, then the device's */
	uint32_t extra_bypass;	/* priorities OR'ed into the plan's set */
	uint64_t lease_ns;	/* set on every install; 0 = no lease */
};

/*
 * The counters of one window slot of the plan in force (TCA_TDMWIN_SLOT_*
 * of kmod/uapi/linux/tdmwin.h): the window of that index in the plan.
 */
struct tdm_qdisc_slot {
	uint64_t frames;
	uint64_t bytes;
	uint64_t opens;			/* cycles in which the window was used */
	uint64_t wire_deferrals;
	uint64_t guard_deferrals;
	uint64_t latency_count;		/* openings frames waited for */
	uint64_t latency_sum;		/* ns */
	uint64_t latency_max;		/* ns */
	uint64_t margin_min;		/* ns; valid when has_margin */
	bool has_margin;		/* a frame left in the window */
};

/* What RTM_GETQDISC tells about the tdmwin qdisc at the target. */
struct tdm_qdisc_info {
	bool present;		/* a tdmwin qdisc sits at target->parent */
	bool other;		/* some other qdisc kind sits there */
	char kind[16];		/* its kind */
	uint32_t handle;
	uint32_t version;	/* active plan version */
	uint64_t cycle_ns;
	int64_t base_time;
	unsigned int nwin;
	bool pending;
	uint32_t pending_version;
	int64_t pending_base;
	bool hold;
	uint32_t eff_link_speed;
	struct tc_tdmwin_xstats xstats; /* zeroed fields the kernel lacks */
	uint64_t drops, backlog, qlen;
	/* More of the dump (additions to the first version of this API). */
	int32_t clockid;
	uint32_t link_speed;	/* as set: 0 = from the device */
	uint32_t bypass_prios;
	bool bypass_ptp;
	uint32_t limit;
	uint32_t guard_ns;	/* of the active plan */
	struct tdm_window win[TDMWIN_MAX_WINDOWS]; /* active, by offset */
	uint64_t pending_cycle_ns;
	uint32_t pending_guard_ns;
	unsigned int pending_nwin;
	struct tdm_window pending_win[TDMWIN_MAX_WINDOWS];
	uint64_t bytes, packets;	/* TCA_STATS_BASIC */
	uint64_t lease_ns;		/* 0 = no lease */
	int64_t lease_left_ns;		/* <= 0: ran out that long ago */
	bool pending_unconfirmed;	/* the pending plan waits for confirm */
	bool deleted;	/* tdm_qdisc_parse(): an RTM_DELQDISC of the qdisc */
	/* The counters per window slot, when the dump carried them (a kernel
	 * with them, and a message with room: see TCA_TDMWIN_SLOTS).
	 */
	bool has_slots;
	uint32_t slots_version;	/* the plan in force they count for */
	unsigned int nslots;	/* slots[0 .. nslots - 1], by index */
	struct tdm_qdisc_slot slots[TDMWIN_MAX_WINDOWS];
	bool txtime;	/* launch times for an etf child (TCA_TDMWIN_TXTIME) */
	/* The class each window opens for (TCA_TDMWIN_WIN_CLASS), by the
	 * index of win[] and pending_win[]: TDMWIN_CLASS_GATED when the dump
	 * gave none (a classic window), else a destination class's minor.
	 */
	uint32_t win_class[TDMWIN_MAX_WINDOWS];
	uint32_t pending_win_class[TDMWIN_MAX_WINDOWS];
};

/*
 * The class of the qdisc that window w of plan p opens for: the gated
 * class 1:1 in a plan without receivers (the classic plan), else the
 * destination class of its receiver, TDMWIN_CLASS_DEST_FIRST + w->dest.
 * A receiver past TDMWIN_MAX_DESTS gets a minor the kernel refuses.
 */
uint32_t tdm_qdisc_window_class(const struct tdm_plan *p,
				const struct tdm_window *w);

/*
 * Put sender s's windows of plan p as TCA_TDMWIN_WINDOWS into nlh (inside
 * TCA_OPTIONS), each with TCA_TDMWIN_WIN_CLASS when its class is not 1:1,
 * as tdm_qdisc_install() and tdm_qdisc_prepare() send them.
 */
struct nlmsghdr;
void tdm_qdisc_put_windows(struct nlmsghdr *nlh, const struct tdm_plan *p,
			   const struct tdm_sender *s);

/*
 * The worst slots of info (has_slots): the index of the slot with the
 * longest open latency, the least margin (of those a frame left in), the
 * most guard and the most wire deferrals, -1 where no slot has any
 * (latency, margin, a deferral).  Ties go to the lowest index.
 */
struct tdm_qdisc_worst {
	int latency;
	int margin;
	int guard;
	int wire;
};

void tdm_qdisc_worst_slots(const struct tdm_qdisc_info *info,
			   struct tdm_qdisc_worst *w);

int tdm_rtnl_open(struct tdm_rtnl *r, char *err, size_t errlen);
void tdm_rtnl_close(struct tdm_rtnl *r);

/* Look up ifindex for target->ifname. */
int tdm_qdisc_resolve(struct tdm_qdisc_target *t, char *err, size_t errlen);

int tdm_qdisc_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		  struct tdm_qdisc_info *info, char *err, size_t errlen);

/*
 * One rtnetlink message, of a dump or an RTNLGRP_TC event: is it about the
 * qdisc at @parent (TC_H_ROOT, or a class) of @ifindex?  0 if not (another
 * device, place or message type); 1 if so, with *info filled as by
 * tdm_qdisc_get() (present: a tdmwin qdisc, other: another kind, and
 * deleted: an RTM_DELQDISC of either); -1 if it is but its tdmwin options
 * are malformed.  *info is not cleared first: zero it for a fresh read.
 */
int tdm_qdisc_parse(const struct nlmsghdr *nlh, int ifindex, uint32_t parent,
		    struct tdm_qdisc_info *info);

/*
 * Install the windows of sender `name` from plan p (version, base time,
 * cycle, guard, clock, bypass) at the target:
 *  - no qdisc or a different kind there: RTM_NEWQDISC create|replace,
 *    with hold as given (a replaced qdisc's packets are lost: logged by
 *    the caller from info.other);
 *  - a tdmwin qdisc there: RTM_NEWQDISC change; a future base time makes
 *    it the pending plan, switched by the kernel at that instant;
 *  - then RTM_GETQDISC to verify that the active or pending plan carries
 *    p->version (and the same base time), else an error.
 * A tdmwin qdisc on another clock than p->clockid is deleted and created
 * afresh (the kernel cannot change a qdisc's clock; its packets are lost).
 * On failure err holds the kernel's extack message when there was one
 * ("kernel: Windows overlap"), else strerror.
 */
int tdm_qdisc_install(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name, bool hold,
		      char *err, size_t errlen);

/*
 * Two-phase plan change.  tdm_qdisc_prepare() installs p as the pending
 * plan, unconfirmed: at its base time it does not take over, the gated
 * class holds until tdm_qdisc_confirm() (the plan then takes over at once,
 * or at its base if that is still ahead) or tdm_qdisc_abort() (removed;
 * the plan in force goes on).  p's base time must be in the future.  On a
 * device without a tdmwin qdisc, one is created whose only plan is the
 * unconfirmed one (the gated class holds until it is confirmed).
 * Confirm and abort name the version; the kernel refuses one that is not
 * pending (err says so).
 */
int tdm_qdisc_prepare(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name,
		      char *err, size_t errlen);
int tdm_qdisc_confirm(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      uint32_t version, char *err, size_t errlen);
int tdm_qdisc_abort(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    uint32_t version, char *err, size_t errlen);

/*
 * Renew the device's lease (TCA_TDMWIN_RENEW).  The qdisc must have one
 * (target->lease_ns set at install, or `tc ... lease`); else an error.
 */
int tdm_qdisc_renew(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    char *err, size_t errlen);

/* Set the device's lease to target->lease_ns (0: none), which renews it. */
int tdm_qdisc_set_lease(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
			char *err, size_t errlen);

/* Change only the hold flag of the tdmwin qdisc at the target. */
int tdm_qdisc_set_hold(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		       bool hold, char *err, size_t errlen);

/* ---- the tree around tdmwin: mq at the root, etf under tdmwin ---- */

/* The number of TX queues of t's device (IFLA_NUM_TX_QUEUES): mq has one
 * class per queue, MAJ:1 for queue 0 to MAJ:n for queue n - 1.
 */
int tdm_qdisc_tx_queues(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
			unsigned int *n, char *err, size_t errlen);

/*
 * The mq qdisc at the root of t's device (t->parent is not used): *handle
 * is its handle (MAJ:0), or 0 when another qdisc or none sits there and
 * create is false.  With create, an mq (handle t->handle, or the kernel's
 * choice when 0) replaces what sits there (a replaced qdisc's packets are
 * lost), and is read back.
 */
int tdm_qdisc_mq(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		 bool create, uint32_t *handle, char *err, size_t errlen);

/* The etf child that takes launch times from tdmwin (txtime on). */
struct tdm_etf {
	uint32_t delta_ns;	/* how long before its launch time etf
				 * hands a frame to the driver
				 */
	bool offload;		/* the NIC launches it (TC_ETF_OFFLOAD_ON) */
};

/*
 * The etf child at class 1:1 of the tdmwin qdisc at t: 1 with *etf when
 * it is an etf on CLOCK_TAI with skip_sock_check and without deadline
 * mode (what txtime needs), 0 when not (another kind, another etf, or
 * no tdmwin qdisc), -1 with err.
 */
int tdm_qdisc_etf_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      struct tdm_etf *etf, char *err, size_t errlen);

/*
 * Launch times for the tdmwin qdisc at t: an etf child with etf's delta
 * and offload flag at its class 1:1, and txtime on.  What is already
 * so is left alone; an etf child that differs is replaced (txtime off
 * for the time it takes, as the kernel refuses to swap the child of
 * txtime).  Then read back: txtime on over an etf child as asked, else
 * an error.
 */
int tdm_qdisc_txtime(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		     const struct tdm_etf *etf, char *err, size_t errlen);

/* ---- the dump without a kernel (tdmd's plan store, tdmd/store.c) ---- */

/* Room for any message tdm_qdisc_put_info() builds: two plans of 64
 * windows, the options and the counters.
 */
#define TDM_QDISC_MSG_MAX	16384

/*
 * *in as the kernel's dump of a tdmwin qdisc at @parent of @ifindex would
 * carry it, built in buf (TDM_QDISC_MSG_MAX bytes): an RTM_NEWQDISC with
 * TCA_KIND "tdmwin", TCA_OPTIONS (the options, the active plan, the
 * pending one in TCA_TDMWIN_PENDING) and TCA_STATS2 (basic, queue, and
 * the xstats as TCA_STATS_APP); with in->other, an RTM_NEWQDISC of
 * in->kind without options; with in->deleted, or neither present nor
 * other, an RTM_DELQDISC.  tdm_qdisc_parse() reads it back into the same
 * fields (the counters per window slot are not sent).
 */
struct nlmsghdr *tdm_qdisc_put_info(char *buf, int ifindex, uint32_t parent,
				    const struct tdm_qdisc_info *in);

/* ---- for the other rtnetlink users of libtdm ---- */

/* A traffic-control request (struct tcmsg) at buf, RTNL_SEND_SIZE-sized. */
struct nlmsghdr *tdm_tc_header(char *buf, uint16_t type, uint16_t flags,
			       int ifindex, uint32_t parent, uint32_t handle);
/* t's interface index (resolved, or looked up by name); <= 0 with err. */
int tdm_qdisc_ifindex(const struct tdm_qdisc_target *t, char *err,
		      size_t errlen);

#endif
