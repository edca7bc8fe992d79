// SPDX-License-Identifier: GPL-2.0
/*
 * The member: runs on each sender.  It keeps a connection to the
 * coordinator (reconnecting with exponential backoff), installs the plans
 * it receives into the local tdmwin qdisc over rtnetlink, answers each
 * with an ack or a nack carrying the kernel's reason, and reports its sync
 * state and qdisc counters in heartbeats.  Losing the coordinator changes
 * nothing on the wire: the qdisc keeps running the last plan.
 *
 * Plan changes come in two phases (tdm_proto.h): a prepared plan waits in
 * the kernel unconfirmed, and from its base time the gate holds until the
 * coordinator's COMMIT (confirm) or ABORT reaches us, so that a member cut
 * off in between neither switches alone nor keeps the old plan while the
 * others switch.  A plan that gives us no windows is prepared by holding
 * the gate at once (our windows may be another's in it); an abort
 * releases it.
 *
 * The PTP gate asks ptp4l every ptp_interval.  Under policy "require" the
 * qdisc is held (gate closed, bypass traffic still flows) until
 * ptp_good_checks consecutive good answers, and held again after
 * ptp_bad_checks bad ones.  "warn" only logs; "off" never asks.
 *
 * On the same interval and with the same hysteresis, the PHC check reads
 * the offset between the interface's PTP hardware clock and CLOCK_TAI
 * (tdm_phc.h: whether phc2sys keeps the system clock on the PHC) and
 * holds beyond phc_threshold under "require".  An interface without a
 * PHC has nothing for phc2sys to do (ptp4l stamps in software and steers
 * the system clock itself): the check does not apply, which is said once.
 *
 * With a lease, the member renews the qdisc's lease every quarter of it
 * while the node is healthy (a plan in force, PTP in sync where the
 * policy requires it), whether or not the coordinator is reachable.  If
 * tdmd dies or the node goes bad, the kernel holds the gate within one
 * lease, without tdmd.
 *
 * A plan with receivers gives each window a destination class (receiver
 * k is class minor TDMWIN_CLASS_DEST_FIRST + k) and each instance one
 * flower filter per receiver we send to (tdm_filter.h), changed with the
 * plan, all or nothing, in the order of "the destination classes'
 * filters" below.
 *
 * The qdisc is one tdmwin instance at the configured place (the root),
 * or one under each chosen TX queue of an mq qdisc at the root (tdm.conf
 * "queues"), with an etf child under each where launch times are on
 * ("txtime").  The member treats the instances as one: each plan, hold
 * and outcome goes to all of them, read back from each, and a plan is
 * in force on all or on none (see "the instances" below).  The lease is
 * the device's in the kernel, shared by its instances: one renewal
 * covers them all.
 *
 * This file is the logic only, with its state in a struct member: the
 * qdisc, ptp4l, the PHC, the session with the coordinator and the clocks
 * come through a struct member_io (the real ones in member_net.c; fakes
 * in tests/test_member.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_json.h"
#include "tdm_log.h"
#include "tdm_phc.h"
#include "tdm_prom.h"
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

enum sync_state { SYNC_UNKNOWN, SYNC_GOOD, SYNC_BAD, SYNC_OFF };

/* One tdmwin instance: the root's (queue -1), or TX queue n's under mq. */
struct inst {
	struct tdm_qdisc_target t;
	int queue;
};

static const char *const sync_names[] = { "unknown", "synced", "unsynced", "off" };

struct member {
	const struct tdmd_conf *cf;
	struct member_io io;
	void *qctx;			/* the qdisc operations' ctx */
	uint8_t *frame;			/* TDM_MAX_FRAME bytes */
	struct tdm_qdisc_target target;	/* the device, and the root's place */
	struct inst *inst;		/* ninst of them */
	unsigned int ninst;
	bool mq;			/* the instances sit under mq */
	uint32_t mq_handle;		/* mq's handle; 0: no mq at the root yet */
	uint32_t partial;		/* a plan in force on some instances
					 * only (held): its version
					 */

	/* connection */
	bool connecting;		/* io.connect() under way */
	bool conn;			/* a session: io.send() works */
	int64_t last_rx;		/* monotonic: connected, or its last frame */
	bool welcomed;
	int64_t next_attempt;
	uint64_t backoff;
	int64_t next_hb;
	int64_t up_since;
	uint32_t coord_version;
	char coord_addr[80];
	char last_error[512];

	/* plans */
	struct tdm_plan plan;		/* latest installed */
	bool have_plan;
	uint8_t digest[32];
	struct tdm_plan prep;		/* prepared, awaiting the outcome */
	bool have_prep;
	uint8_t prep_digest[32];
	uint32_t prep_version;		/* prepared: this plan, or one found in
					 * the kernel at start (no prep then)
					 */
	bool prep_nowin;		/* prep has no windows for us: held */

	/* sync */
	bool ptp_open;			/* io.ptp_open() succeeded */
	int64_t next_ptp;
	enum sync_state sync;
	struct tdm_hyst ptp_h;		/* ok: PTP in sync */
	struct tdm_ptp_status st;
	uint8_t gm[8];			/* the grandmaster followed */
	bool gm_known;
	bool gm_changed;		/* since then, not yet in sync again */
	char reason[300];
	bool hold_applied;		/* what the qdisc was last told */
	bool qdisc_seen;		/* a tdmwin qdisc was there at start */
	uint32_t kernel_version;	/* its plan version then */
	int64_t kernel_base;
	bool qdisc_gone_logged;
	uint32_t no_windows;		/* a plan without our windows: its version */

	/* the destination classes' filters, the same on every instance */
	struct tdm_filter filt[TDM_FILTER_MAX];
	unsigned int nfilt;
	bool filt_known;		/* filt is what the instances carry */
	struct tdm_filter prep_filt[TDM_FILTER_MAX];	/* before the prepare */
	unsigned int nprep_filt;
	bool filt_due;			/* at filt_at, down to what the plans
					 * in force and prepared need
					 */
	int64_t filt_at;		/* monotonic */

	/* PHC health: PHC - CLOCK_TAI, checked with PTP */
	int phc_index;			/* -1: none (or not checked) */
	bool phc_open;			/* io.phc_open() succeeded */
	char phc_path[24];		/* /dev/ptpN */
	struct tdm_hyst phc_h;		/* ok: within phc_threshold */
	struct tdm_phc_offset phc_off;	/* the last reading */
	unsigned long long phc_checks;
	int phc_method_logged;		/* -1: none yet */
	char phc_reason[300];

	/* lease */
	int64_t next_renew;
	uint64_t renewals;
	bool renewing;			/* healthy at the last renewal tick */
	bool lease_changed;		/* by a reload: set it, not renew it */
	char renew_error[256];		/* the last renewal's failure, if any */
};

static int64_t now_ns(const struct member *me)
{
	return me->io.mono_ns(me->io.ctx);
}

/* A scratch frame of type in the member's buffer. */
static struct nlmsghdr *frame_start(struct member *me, uint16_t type)
{
	return tdm_frame_begin(me->frame, TDM_MAX_FRAME, type);
}

/* The PHC check applies: checked, and the interface has a PHC. */
static bool phc_checked(const struct member *me)
{
	return me->cf->ptp_policy != PTP_OFF && me->cf->phc_threshold_ns &&
	       me->phc_index >= 0;
}

/* PTP in sync, and the PHC too where it is checked. */
static bool clocks_ok(const struct member *me)
{
	return me->ptp_h.ok && (!phc_checked(me) || me->phc_h.ok);
}

/*
 * The gate holds while PTP or the PHC is not in sync (policy require),
 * and while the latest plan gives this node no windows: its old windows
 * may belong to another sender in that plan.
 */
static bool hold_wanted(const struct member *me)
{
	return (me->cf->ptp_policy == PTP_REQUIRE && !clocks_ok(me)) ||
	       me->no_windows || me->prep_nowin || me->partial;
}

static void apply_hold(struct member *me);

/* ---- the instances ---- */

/* "eth0" or "eth0 queue 3", for messages. */
static const char *inst_name(const struct member *me, unsigned int i,
			     char *buf, size_t len)
{
	if (me->inst[i].queue < 0)
		snprintf(buf, len, "%s", me->target.ifname);
	else
		snprintf(buf, len, "%s queue %d", me->target.ifname,
			 me->inst[i].queue);
	return buf;
}

/* Under mq: the instances' places, mq's classes handle:queue+1. */
static void inst_place(struct member *me, uint32_t handle)
{
	unsigned int i;

	me->mq_handle = handle;
	for (i = 0; i < me->ninst; i++)
		me->inst[i].t.parent = TC_H_MAKE(handle,
						 (uint32_t)me->inst[i].queue + 1);
}

/* Can the instances be asked?  Not under mq before there is one. */
static bool inst_placed(const struct member *me)
{
	return !me->mq || me->mq_handle;
}

/*
 * Before a plan goes in: under mq, an mq at the root (created, or the one
 * there; its handle may have changed since the last plan).
 */
static int tree_ensure(struct member *me, char *err, size_t errlen)
{
	uint32_t h;

	if (!me->mq)
		return 0;
	if (me->io.qdisc_mq(me->qctx, &me->target, true, &h, err, errlen))
		return -1;
	if (h != me->mq_handle)
		log_info("mq %x: at the root of %s, the parent of %u tdmwin instance%s",
			 h >> 16, me->target.ifname, me->ninst,
			 me->ninst == 1 ? "" : "s");
	inst_place(me, h);
	return 0;
}

/* After a plan went into instance i: its etf child, if txtime is on. */
static int inst_txtime(struct member *me, unsigned int i, char *err,
		       size_t errlen)
{
	if (!me->cf->txtime)
		return 0;
	return me->io.qdisc_txtime(me->qctx, &me->inst[i].t, &me->cf->etf,
				   err, errlen);
}

/* "queue 3: " (or "" for the root's instance) before err. */
static void inst_err(const struct member *me, unsigned int i, char *msg,
		     size_t len, const char *err)
{
	if (me->inst[i].queue < 0)
		snprintf(msg, len, "%s", err);
	else
		snprintf(msg, len, "queue %d: %s", me->inst[i].queue, err);
}

/*
 * Install p (hold as given) on every instance.  One that fails leaves the
 * instances before it on p and those after on what they ran: none of the
 * two may send alone, so the member holds them all (partial) until a plan
 * goes into all.  0, or -1 with msg.
 */
static int install_all(struct member *me, const struct tdm_plan *p,
		       bool hold, char *msg, size_t len)
{
	char err[512];
	unsigned int i;

	if (tree_ensure(me, err, sizeof(err))) {
		snprintf(msg, len, "%s", err);
		return -1;
	}
	for (i = 0; i < me->ninst; i++) {
		if (me->io.qdisc_install(me->qctx, &me->inst[i].t, p,
					 me->cf->name, hold, err, sizeof(err)) ||
		    inst_txtime(me, i, err, sizeof(err))) {
			inst_err(me, i, msg, len, err);
			if (i) {
				me->partial = p->version;
				apply_hold(me);
				log_err("plan v%u is in force on %u of %u instances on %s: holding them all",
					p->version, i, me->ninst,
					me->target.ifname);
			}
			return -1;
		}
	}
	me->partial = 0;
	me->hold_applied = hold;
	return 0;
}

/* Abort plan v on instances [0, n); how many refused (logged). */
static unsigned int abort_first(struct member *me, unsigned int n, uint32_t v)
{
	char err[512], name[48];
	unsigned int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (!me->io.qdisc_abort(me->qctx, &me->inst[i].t, v, err,
					sizeof(err)))
			continue;
		log_err("plan v%u: abort on %s failed: %s", v,
			inst_name(me, i, name, sizeof(name)), err);
		bad++;
	}
	return bad;
}

/*
 * Prepare p on every instance, or on none: one that fails has the ones
 * prepared before it aborted.  0, or -1 with msg.
 */
static int prepare_all(struct member *me, const struct tdm_plan *p,
		       char *msg, size_t len)
{
	char err[512];
	unsigned int i, bad;

	if (tree_ensure(me, err, sizeof(err))) {
		snprintf(msg, len, "%s", err);
		return -1;
	}
	for (i = 0; i < me->ninst; i++) {
		bool prepared = false;

		if (!me->io.qdisc_prepare(me->qctx, &me->inst[i].t, p,
					  me->cf->name, err, sizeof(err))) {
			prepared = true;
			if (!inst_txtime(me, i, err, sizeof(err)))
				continue;
		}
		inst_err(me, i, msg, len, err);
		bad = abort_first(me, i + prepared, p->version);
		if (i + prepared)
			snprintf(msg + strlen(msg), len - strlen(msg),
				 bad ? "; aborting it on the %u prepared failed on %u" :
				 "; aborted on the %u prepared%.0u",
				 i + prepared, bad);
		return -1;
	}
	return 0;
}

/* Does instance i hold plan v unconfirmed? */
static bool inst_prepared(struct member *me, unsigned int i, uint32_t v,
			  char *err, size_t errlen)
{
	struct tdm_qdisc_info q;

	if (me->io.qdisc_get(me->qctx, &me->inst[i].t, &q, err, errlen))
		return false;
	if (q.present && q.pending_unconfirmed &&
	    (q.pending ? q.pending_version : q.version) == v)
		return true;
	if (!q.present)
		snprintf(err, errlen, "no tdmwin qdisc");
	else
		snprintf(err, errlen, "plan v%u is not prepared there (v%u in force%s)",
			 v, q.version, q.pending ? ", another pending" : "");
	return false;
}

/*
 * Commit plan v on every instance, or on none.  First every instance is
 * read back: one that does not hold v unconfirmed fails the commit before
 * any is confirmed.  Then each is confirmed; if one refuses, those
 * confirmed before it are rolled back by preparing v on them again
 * (unconfirmed, as before: its base time is still ahead, since the
 * coordinator decides commit_lead before it).  Either way none is
 * committed, and from v's base time every instance holds until the
 * coordinator's next word.  0, or -1 with msg.
 */
static int commit_all(struct member *me, uint32_t v, char *msg, size_t len)
{
	char err[512], name[48];
	unsigned int i, j, bad = 0;

	for (i = 0; i < me->ninst; i++) {
		if (!inst_placed(me) || !inst_prepared(me, i, v, err, sizeof(err))) {
			inst_err(me, i, msg, len, inst_placed(me) ? err :
				 "no mq qdisc at the root");
			snprintf(msg + strlen(msg), len - strlen(msg),
				 ": committed on none");
			return -1;
		}
	}
	for (i = 0; i < me->ninst; i++)
		if (me->io.qdisc_confirm(me->qctx, &me->inst[i].t, v, err,
					 sizeof(err)))
			break;
	if (i == me->ninst)
		return 0;
	inst_err(me, i, msg, len, err);
	for (j = 0; j < i; j++) {
		if (me->have_prep &&
		    !me->io.qdisc_prepare(me->qctx, &me->inst[j].t, &me->prep,
					  me->cf->name, err, sizeof(err)))
			continue;
		log_err("plan v%u: cannot roll the commit back on %s: %s", v,
			inst_name(me, j, name, sizeof(name)),
			me->have_prep ? err : "the plan is not known (prepared before a restart)");
		bad++;
	}
	if (bad) {
		/* Committed on some: they run v, the others hold from its
		 * base; none sends on the old plan after it.
		 */
		snprintf(msg + strlen(msg), len - strlen(msg),
			 "; committed on %u of %u instances, rolled back on %u",
			 bad, me->ninst, i - bad);
	} else if (i) {
		snprintf(msg + strlen(msg), len - strlen(msg),
			 "; rolled back on the %u confirmed before: committed on none", i);
	}
	return -1;
}

/* Abort plan v on every instance (each tried); 0, or -1 with msg. */
static int abort_all(struct member *me, uint32_t v, char *msg, size_t len)
{
	unsigned int bad;

	if (!inst_placed(me)) {
		snprintf(msg, len, "no mq qdisc at the root of %s", me->target.ifname);
		return -1;
	}
	bad = abort_first(me, me->ninst, v);
	if (!bad)
		return 0;
	snprintf(msg, len, "abort failed on %u of %u instances (logged): they hold from the plan's base time",
		 bad, me->ninst);
	return -1;
}

/* ---- the destination classes' filters ---- */

/*
 * The rule (Documentation/tdmd.rst, "Plans with receivers"): while two
 * plans may gate, the one in force and one prepared (or installed for a
 * base time still ahead), every instance carries the filters of both.
 * A new plan's filters go in with its prepare, before its base time:
 * their classes have no windows in the old plan, so the frames they
 * classify wait in their class for the new plan's windows instead of
 * leaving in the old plan's.  The old plan's filters stay until the new
 * plan's base time, so that its frames keep their windows to its end;
 * then those the new plan does not need go (filt_due).  A class never
 * changes its address while both plans may gate: tdm_filter_merge()
 * refuses such a plan before anything changes.  An abort puts back the
 * filters there were before the prepare.
 */

/* What the instances carry now (not known at start: the plan's). */
static int filters_live(const struct member *me, struct tdm_filter *out,
			unsigned int *n, char *msg, size_t len)
{
	if (me->filt_known) {
		memcpy(out, me->filt, me->nfilt * sizeof(*out));
		*n = me->nfilt;
		return 0;
	}
	*n = 0;
	return me->have_plan ?
	       tdm_filter_plan(&me->plan, me->cf->name, out, n, msg, len) : 0;
}

/* The live filters and those p needs of us, both; -1 with msg. */
static int filters_with(const struct member *me, const struct tdm_plan *p,
			struct tdm_filter *out, unsigned int *n,
			char *msg, size_t len)
{
	struct tdm_filter add[TDM_FILTER_MAX];
	unsigned int na;

	if (filters_live(me, out, n, msg, len) ||
	    tdm_filter_plan(p, me->cf->name, add, &na, msg, len))
		return -1;
	return tdm_filter_merge(out, n, add, na, msg, len);
}

/*
 * Every instance's filters want[0..n), or -1 with msg (the instance that
 * failed; those before it carry want, me->filt stays the old set but is
 * no longer known to be what they carry).
 */
static int filters_all(struct member *me, const struct tdm_filter *want,
		       unsigned int n, char *msg, size_t len)
{
	struct tdm_filter w[TDM_FILTER_MAX];
	char err[512];
	unsigned int i;

	if (me->filt_known && !n && !me->nfilt)
		return 0;
	memcpy(w, want, n * sizeof(*w));
	for (i = 0; i < me->ninst; i++) {
		if (me->io.filter_sync(me->qctx, &me->inst[i].t, w, n, err,
				       sizeof(err))) {
			inst_err(me, i, msg, len, err);
			/* Some instances may carry want now: sync them all
			 * next time, whatever filt says.
			 */
			me->filt_known = false;
			return -1;
		}
	}
	memcpy(me->filt, w, n * sizeof(*w));
	me->nfilt = n;
	me->filt_known = true;
	return 0;
}

/* Sync the filters down at the monotonic time at, or retry then. */
static void filters_due(struct member *me, int64_t at)
{
	if (!me->filt_due || at < me->filt_at)
		me->filt_at = at;
	me->filt_due = true;
}

/* At p's base time (now if it passed): the monotonic time. */
static int64_t at_base(const struct member *me, const struct tdm_plan *p)
{
	int64_t ahead = p->base_time - me->io.clock_ns(me->io.ctx, p->clockid);

	return now_ns(me) + (ahead > 0 ? ahead : 0);
}

/* Put back the filters there were before a prepare that failed or was
 * aborted; retried from the tick if that fails (logged).
 */
static void filters_back(struct member *me)
{
	char msg[512];

	if (!filters_all(me, me->prep_filt, me->nprep_filt, msg, sizeof(msg)))
		return;
	log_err("filters on %s: cannot put back the %u there were: %s; retrying",
		me->target.ifname, me->nprep_filt, msg);
	filters_due(me, now_ns(me) + (int64_t)TDM_NSEC_PER_SEC);
}

/* The tick: down to what the plan in force and a prepared one need. */
static void filters_tick(struct member *me)
{
	struct tdm_filter want[TDM_FILTER_MAX], add[TDM_FILTER_MAX];
	unsigned int n = 0, na = 0;
	char msg[512];

	/* Due for a plan replaced since: wait for the base of the one in force. */
	if (me->have_plan &&
	    me->io.clock_ns(me->io.ctx, me->plan.clockid) < me->plan.base_time) {
		me->filt_at = at_base(me, &me->plan);
		return;
	}
	if ((me->have_plan &&
	     tdm_filter_plan(&me->plan, me->cf->name, want, &n, msg,
			     sizeof(msg))) ||
	    (me->have_prep && !me->prep_nowin &&
	     (tdm_filter_plan(&me->prep, me->cf->name, add, &na, msg,
			      sizeof(msg)) ||
	      tdm_filter_merge(want, &n, add, na, msg, sizeof(msg)))) ||
	    filters_all(me, want, n, msg, sizeof(msg))) {
		log_err("filters on %s: %s; retrying", me->target.ifname, msg);
		me->filt_at = now_ns(me) + (int64_t)TDM_NSEC_PER_SEC;
		return;
	}
	me->filt_due = false;
	log_info("filters on %s: %u, for plan v%u%s", me->target.ifname, n,
		 me->have_plan ? me->plan.version : 0,
		 me->have_prep ? " and the one prepared" : "");
}

/* ---- connection ---- */

static void disconnect(struct member *me, const char *why)
{
	uint64_t max = me->cf->reconnect_max_ns;
	uint64_t jitter;

	if (me->conn) {
		if (me->welcomed)
			log_warn("lost the coordinator %s: %s; the qdisc keeps its plan (v%u)",
				 me->coord_addr, why, me->have_plan ? me->plan.version : 0);
		else
			log_warn("coordinator %s: %s", me->coord_addr, why);
	}
	if (me->conn || me->connecting)
		me->io.close(me->io.ctx);
	me->conn = false;
	me->connecting = false;
	tdm_strlcpy(me->last_error, why, sizeof(me->last_error));
	me->welcomed = false;
	/* Exponential backoff with up to 25 % jitter, so that members that
	 * lost the coordinator together do not return in lockstep.
	 */
	jitter = me->io.random(me->io.ctx);
	me->next_attempt = now_ns(me) + me->backoff + jitter % (me->backoff / 4 + 1);
	me->backoff = me->backoff * 2 > max ? max : me->backoff * 2;
}

static void send_heartbeat(struct member *me);

static int on_welcome(struct member *me, const struct tdm_msg *m)
{
	me->welcomed = true;
	me->backoff = me->cf->reconnect_min_ns;
	me->up_since = now_ns(me);
	me->coord_version = m->tb[TDM_A_PLAN_VERSION] ?
			   mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]) : 0;
	me->last_error[0] = '\0';
	log_notice("registered with the coordinator %s as '%s' (its plan v%u, ours v%u)",
		   me->coord_addr, me->cf->name, me->coord_version,
		   me->have_plan ? me->plan.version : 0);
	send_heartbeat(me);
	return 0;
}

static int send_phase_ack(struct member *me, uint32_t phase,
			  uint32_t version, int status, const char *msg)
{
	struct nlmsghdr *nlh = frame_start(me, TDM_MSG_ACK);
	char err[256];

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, status);
	if (phase != TDM_PHASE_PREPARE)
		mnl_attr_put_u32(nlh, TDM_A_PHASE, phase);
	if (msg && msg[0])
		mnl_attr_put_strz(nlh, TDM_A_MESSAGE, msg);
	if (me->io.send(me->io.ctx, nlh, err, sizeof(err))) {
		log_warn("cannot send the ack: %s", err);
		return -1;
	}
	return 0;
}

static int send_ack(struct member *me, uint32_t version, int status, const char *msg)
{
	return send_phase_ack(me, TDM_PHASE_PREPARE, version, status, msg);
}

static void prep_forget(struct member *me)
{
	if (me->have_prep)
		tdm_plan_free(&me->prep);
	me->have_prep = false;
	me->prep_version = 0;
	me->prep_nowin = false;
}

/*
 * Prepare p with its filters, all or nothing: the filters both plans
 * need are worked out first (a class that would change its address
 * refuses p before anything changes), then p goes into every instance,
 * then the filters; if they fail, p is aborted on every instance and
 * the filters there were are put back.  0, or -1 with msg.
 */
static int prepare_filtered(struct member *me, const struct tdm_plan *p,
			    char *msg, size_t len)
{
	struct tdm_filter want[TDM_FILTER_MAX];
	unsigned int n, bad;

	if (filters_live(me, me->prep_filt, &me->nprep_filt, msg, len) ||
	    filters_with(me, p, want, &n, msg, len) ||
	    prepare_all(me, p, msg, len))
		return -1;
	if (!filters_all(me, want, n, msg, len))
		return 0;
	bad = abort_first(me, me->ninst, p->version);
	filters_back(me);
	snprintf(msg + strlen(msg), len - strlen(msg),
		 bad ? "; aborting the plan failed on %u instances" :
		 "; the plan was aborted%.0u", bad);
	return -1;
}

/*
 * A prepare: p waits in the kernel unconfirmed (or, without windows for
 * us, the gate holds) until COMMIT or ABORT.  Takes p.
 */
static int on_prepare(struct member *me, struct tdm_plan *p,
		      const uint8_t *digest, int64_t commit_by)
{
	uint32_t version = p->version;
	char msg[512], tb[64], tc[64];

	if (me->have_prep && me->prep.version == version &&
	    me->prep.base_time == p->base_time &&
	    !memcmp(me->prep_digest, digest, 32)) {
		tdm_plan_free(p);
		return send_ack(me, version, 0, "already prepared");
	}
	/* A newer prepare replaces an older one (its outcome never came). */
	if (me->prep_version) {
		log_notice("plan v%u: replaces plan v%u, prepared and never decided",
			   version, me->prep_version);
		prep_forget(me);
		apply_hold(me);
	}
	if (!tdm_plan_sender(p, me->cf->name)) {
		me->prep_nowin = true;
		apply_hold(me);
		snprintf(msg, sizeof(msg), "plan v%u has no windows for '%s': the gate is held",
			 version, me->cf->name);
		log_warn("%s", msg);
	} else if (prepare_filtered(me, p, msg, sizeof(msg))) {
		log_err("plan v%u: cannot prepare it on %s: %s", version,
			me->target.ifname, msg);
		tdm_plan_free(p);
		return send_ack(me, version, EINVAL, msg);
	} else {
		msg[0] = '\0';
		me->qdisc_gone_logged = false;
		log_notice("plan v%u prepared on %s: base time %s, outcome due by %s",
			   version, me->target.ifname,
			   fmt_tai(p->base_time, p->clockid, tb, sizeof(tb)),
			   fmt_tai(commit_by, p->clockid, tc, sizeof(tc)));
	}
	me->prep = *p;
	me->have_prep = true;
	me->prep_version = version;
	memcpy(me->prep_digest, digest, 32);
	memset(p, 0, sizeof(*p));
	return send_ack(me, version, 0, msg);
}

/* COMMIT or ABORT of plan version v. */
static int on_outcome(struct member *me, bool commit, uint32_t v,
		      const char *why)
{
	uint32_t phase = commit ? TDM_PHASE_COMMIT : TDM_PHASE_ABORT;
	const char *what = commit ? "commit" : "abort";
	char msg[512];
	int rc = 0;

	if (me->prep_version != v) {
		if (commit && me->have_plan && me->plan.version == v)
			return send_phase_ack(me, phase, v, 0, "already committed");
		snprintf(msg, sizeof(msg), "no prepared plan v%u to %s (prepared: %s%u)",
			 v, what, me->prep_version ? "v" : "none ",
			 me->prep_version);
		log_warn("refusing the %s: %s", what, msg);
		return send_phase_ack(me, phase, v, ENOENT, msg);
	}
	msg[0] = '\0';
	if (me->prep_nowin) {
		/* Nothing in the kernel: the hold is the prepared state. */
		if (commit)
			me->no_windows = v;
	} else if (commit) {
		rc = commit_all(me, v, msg, sizeof(msg));
	} else {
		rc = abort_all(me, v, msg, sizeof(msg));
	}
	if (rc) {
		log_err("plan v%u: %s on %s failed: %s", v, what,
			me->target.ifname, msg);
		return send_phase_ack(me, phase, v, EIO, msg);
	}
	if (commit && me->have_prep && !me->prep_nowin) {
		if (me->have_plan)
			tdm_plan_free(&me->plan);
		me->plan = me->prep;
		me->have_plan = true;
		memcpy(me->digest, me->prep_digest, 32);
		me->have_prep = false;
		me->no_windows = 0;
		/* The old plan's filters go once the new one is in force. */
		filters_due(me, at_base(me, &me->plan));
	} else if (!commit && me->have_prep && !me->prep_nowin) {
		filters_back(me);
	} else if (commit && !me->have_prep) {
		/* Prepared before a restart: the kernel has it, we do not. */
		me->kernel_version = v;
	}
	prep_forget(me);
	apply_hold(me);
	if (commit)
		log_notice("plan v%u committed on %s", v, me->target.ifname);
	else
		log_notice("plan v%u aborted on %s%s%s", v, me->target.ifname,
			   why[0] ? ": " : "", why);
	return send_phase_ack(me, phase, v, 0, NULL);
}

/*
 * A plan decided (no prepare) into every instance, with its filters and
 * those of the plan it replaces until its base time, or only its own
 * if a class would change its address (the plan is decided: the others
 * run it).  Filters that fail leave the instances held (partial) until
 * a plan goes in with them.  0, or -1 with msg.
 */
static int install_filtered(struct member *me, const struct tdm_plan *p,
			    char *msg, size_t len)
{
	struct tdm_filter want[TDM_FILTER_MAX];
	unsigned int n;

	if (filters_with(me, p, want, &n, msg, len)) {
		log_warn("plan v%u: %s: its own filters only", p->version, msg);
		if (tdm_filter_plan(p, me->cf->name, want, &n, msg, len))
			return -1;
	}
	if (install_all(me, p, hold_wanted(me), msg, len))
		return -1;
	if (filters_all(me, want, n, msg, len)) {
		me->partial = p->version;
		apply_hold(me);
		return -1;
	}
	filters_due(me, at_base(me, p));
	return 0;
}

static int on_plan(struct member *me, const struct tdm_msg *m, char *err, size_t errlen)
{
	struct tdm_plan p;
	uint8_t digest[32];
	char msg[512], tb[64];
	uint32_t version;

	if (tdm_plan_get(m->tb[TDM_A_PLAN], &p, msg, sizeof(msg))) {
		/* A plan the coordinator should never have sent. */
		log_err("invalid plan from the coordinator: %s", msg);
		snprintf(err, errlen, "invalid plan: %s", msg);
		return -1;
	}
	tdm_plan_digest(&p, digest);
	if (m->tb[TDM_A_COMMIT_BY] &&
	    (!me->have_plan || p.version > me->plan.version) &&
	    (me->have_plan || p.version >= me->kernel_version))
		return on_prepare(me, &p, digest,
				  (int64_t)mnl_attr_get_u64(m->tb[TDM_A_COMMIT_BY]));
	if (me->have_plan && p.version == me->plan.version &&
	    p.base_time == me->plan.base_time && !memcmp(digest, me->digest, 32)) {
		log_info("plan v%u: already installed", p.version);
		tdm_plan_free(&p);
		return send_ack(me, me->plan.version, 0, "already installed");
	}
	if ((me->have_plan && p.version <= me->plan.version) ||
	    (!me->have_plan && p.version < me->kernel_version)) {
		snprintf(msg, sizeof(msg), "plan v%u is not newer than the installed v%u",
			 p.version, me->have_plan ? me->plan.version : me->kernel_version);
		log_warn("refusing a plan: %s", msg);
		version = p.version;	/* tdm_plan_free() clears p */
		tdm_plan_free(&p);
		return send_ack(me, version, ESTALE, msg);
	}
	if (!tdm_plan_sender(&p, me->cf->name)) {
		snprintf(msg, sizeof(msg), "plan v%u has no windows for '%s'; the gate is held",
			 p.version, me->cf->name);
		log_warn("refusing a plan: %s", msg);
		me->no_windows = p.version;
		apply_hold(me);
		tdm_plan_free(&p);
		return send_ack(me, me->no_windows, ENOENT, msg);
	}
	me->no_windows = 0;
	/* It replaces in the kernel any plan prepared and undecided. */
	prep_forget(me);
	if (install_filtered(me, &p, msg, sizeof(msg))) {
		log_err("plan v%u: cannot install it on %s: %s", p.version,
			me->target.ifname, msg);
		send_ack(me, p.version, EINVAL, msg);
		tdm_plan_free(&p);
		return 0;
	}
	me->qdisc_gone_logged = false;
	log_notice("plan v%u installed on %s: %u window%s, cycle %llu ns, base time %s%s",
		   p.version, me->target.ifname,
		   tdm_plan_sender(&p, me->cf->name)->nwin,
		   tdm_plan_sender(&p, me->cf->name)->nwin == 1 ? "" : "s",
		   (unsigned long long)p.cycle_ns,
		   fmt_tai(p.base_time, p.clockid, tb, sizeof(tb)),
		   me->hold_applied ? " (held until PTP is in sync)" : "");
	if (me->have_plan)
		tdm_plan_free(&me->plan);
	me->plan = p;
	me->have_plan = true;
	memcpy(me->digest, digest, 32);
	apply_hold(me);
	return send_ack(me, p.version, 0, NULL);
}

int member_frame(struct member *me, const struct tdm_msg *m, char *err,
		 size_t errlen)
{
	struct nlmsghdr *nlh;

	me->last_rx = now_ns(me);
	switch (m->type) {
	case TDM_MSG_HELLO:
		/* Our nonce, then REGISTER with what we run. */
		nlh = frame_start(me, TDM_MSG_REGISTER);
		if (me->io.put_nonce(me->io.ctx, nlh, err, errlen))
			return -1;
		mnl_attr_put_strz(nlh, TDM_A_NAME, me->cf->name);
		if (me->have_plan) {
			mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, me->plan.version);
			mnl_attr_put_u64(nlh, TDM_A_BASE_TIME, me->plan.base_time);
			mnl_attr_put(nlh, TDM_A_DIGEST, 32, me->digest);
		} else if (me->kernel_version) {
			/* After a restart: the version in the qdisc, so that
			 * the coordinator numbers the next plan above it.
			 */
			mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, me->kernel_version);
			mnl_attr_put_u64(nlh, TDM_A_BASE_TIME, me->kernel_base);
		}
		/* A plan waiting for an outcome we missed: ask for it. */
		if (me->prep_version)
			mnl_attr_put_u32(nlh, TDM_A_PREPARED, me->prep_version);
		/* Our level, to a coordinator that knows the attribute here. */
		if (mnl_attr_get_u32(m->tb[TDM_A_PROTO]) >= TDM_PROTO_RECEIVERS)
			mnl_attr_put_u32(nlh, TDM_A_PROTO, TDM_PROTO_LEVEL);
		return me->io.send(me->io.ctx, nlh, err, errlen);
	case TDM_MSG_WELCOME:
		return on_welcome(me, m);
	case TDM_MSG_PLAN:
		if (!me->welcomed) {
			snprintf(err, errlen, "PLAN before WELCOME");
			return -1;
		}
		return on_plan(me, m, err, errlen);
	case TDM_MSG_COMMIT:
	case TDM_MSG_ABORT:
		if (!me->welcomed) {
			snprintf(err, errlen, "%s before WELCOME", tdm_msg_name(m->type));
			return -1;
		}
		{
			char why[TDM_MESSAGE_MAX];

			tdm_text_escape(why, m->tb[TDM_A_MESSAGE] ?
					mnl_attr_get_str(m->tb[TDM_A_MESSAGE]) : "",
					sizeof(why));
			return on_outcome(me, m->type == TDM_MSG_COMMIT,
					  mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]),
					  why);
		}
	case TDM_MSG_ERROR:
		snprintf(err, errlen, "the coordinator refused us: %s",
			 m->tb[TDM_A_MESSAGE] ?
			 mnl_attr_get_str(m->tb[TDM_A_MESSAGE]) : "no reason");
		return -1;
	default:
		snprintf(err, errlen, "unexpected %s", tdm_msg_name(m->type));
		return -1;
	}
}

void member_connected(struct member *me)
{
	me->connecting = false;
	me->conn = true;
	me->last_rx = now_ns(me);
	log_info("connected to %s; authenticating", me->coord_addr);
}

void member_lost(struct member *me, const char *why)
{
	disconnect(me, why);
}

static void try_connect(struct member *me)
{
	char why[512];

	if (me->io.connect(me->io.ctx, &me->cf->coord, me->coord_addr,
			   sizeof(me->coord_addr), why, sizeof(why))) {
		disconnect(me, why);
		return;
	}
	me->connecting = true;
}

/* ---- heartbeats ---- */

/* Instance i as the kernel dumps it (zeroed: not there, or unreadable). */
static void read_inst(struct member *me, unsigned int i,
		      struct tdm_qdisc_info *info)
{
	char err[256], name[48];

	memset(info, 0, sizeof(*info));
	if (inst_placed(me) &&
	    me->io.qdisc_get(me->qctx, &me->inst[i].t, info, err, sizeof(err))) {
		log_debug("reading the qdisc on %s: %s",
			  inst_name(me, i, name, sizeof(name)), err);
		memset(info, 0, sizeof(*info));
	}
}

/* What read_qdisc() picked: a plan's qdisc gone is logged once. */
static void qdisc_seen(struct member *me, const struct tdm_qdisc_info *info)
{
	if (!info->present && !info->other && !inst_placed(me))
		return;
	if (me->have_plan && !info->present && !me->qdisc_gone_logged) {
		log_warn("the tdmwin qdisc on %s is gone (deleted by hand?); plan v%u is not in force",
			 me->target.ifname, me->plan.version);
		me->qdisc_gone_logged = true;
	}
}

/*
 * The first instance there (else the first): what heartbeats, status
 * and metrics report.
 */
static void read_qdisc(struct member *me, struct tdm_qdisc_info *info)
{
	unsigned int i;

	for (i = 0; i < me->ninst; i++) {
		read_inst(me, i, info);
		if (info->present)
			break;
	}
	if (i == me->ninst && i > 1)
		read_inst(me, 0, info);
	qdisc_seen(me, info);
}

static void send_heartbeat(struct member *me)
{
	struct tdm_qdisc_info info;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	char err[256];

	if (!me->conn || !me->welcomed)
		return;
	read_qdisc(me, &info);
	nlh = frame_start(me, TDM_MSG_HEARTBEAT);
	nest = mnl_attr_nest_start(nlh, TDM_A_SYNC);
	/* A PHC out of sync makes the node unsynced for the coordinator. */
	mnl_attr_put_u32(nlh, TDM_S_STATE, me->sync == SYNC_GOOD &&
			 !clocks_ok(me) ? SYNC_BAD : me->sync);
	mnl_attr_put_u64(nlh, TDM_S_OFFSET, (uint64_t)me->st.master_offset);
	mnl_attr_put_u32(nlh, TDM_S_PORT_STATE, me->st.port_ok ? me->st.port_state : 0);
	mnl_attr_put_u8(nlh, TDM_S_HOLD, info.present ? info.hold : hold_wanted(me));
	if (me->reason[0] || me->phc_reason[0])
		mnl_attr_put_strz(nlh, TDM_S_REASON, me->reason[0] ? me->reason :
				  me->phc_reason);
	mnl_attr_nest_end(nlh, nest);
	if (info.present)
		mnl_attr_put(nlh, TDM_A_QDISC, sizeof(info.xstats), &info.xstats);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, info.present ? info.version : 0);
	if (info.present && info.pending)
		mnl_attr_put_u32(nlh, TDM_A_PENDING_VERSION, info.pending_version);
	if (me->prep_version)
		mnl_attr_put_u32(nlh, TDM_A_PREPARED, me->prep_version);
	if (me->io.send(me->io.ctx, nlh, err, sizeof(err)))
		disconnect(me, err);
	me->next_hb = now_ns(me) + me->cf->heartbeat_ns;
}

/* ---- PTP gate ---- */

static void apply_hold(struct member *me)
{
	bool want = hold_wanted(me);
	char err[256], name[48];
	unsigned int i, bad = 0;

	if ((!me->have_plan && !me->qdisc_seen && !me->partial) ||
	    want == me->hold_applied || !inst_placed(me))
		return;
	/* Every instance; one that fails is tried again with all at the
	 * next check.
	 */
	for (i = 0; i < me->ninst; i++) {
		if (!me->io.qdisc_set_hold(me->qctx, &me->inst[i].t, want,
					   err, sizeof(err)))
			continue;
		log_err("cannot %s the gate on %s: %s", want ? "hold" : "release",
			inst_name(me, i, name, sizeof(name)), err);
		bad++;
	}
	if (!bad)
		me->hold_applied = want;
}

static const char *fmt_clock_id(const uint8_t id[8], char *buf, size_t len)
{
	/* As linuxptp prints a clockIdentity. */
	snprintf(buf, len, "%02x%02x%02x.%02x%02x.%02x%02x%02x", id[0], id[1],
		 id[2], id[3], id[4], id[5], id[6], id[7]);
	return buf;
}

/*
 * Another grandmaster than the one followed so far: whatever was proved
 * of the old one says nothing of the new, so the sync hysteresis starts
 * again (ptp_good_checks good answers before the gate opens).
 */
static void gm_check(struct member *me)
{
	const struct tdm_ptp_status *st = &me->st;
	char a[32], b[32];
	bool was_ok = me->ptp_h.ok;

	if (!st->time_status_ok || !st->gm_present)
		return;
	if (me->gm_known && memcmp(me->gm, st->gm_identity, sizeof(me->gm))) {
		snprintf(me->reason, sizeof(me->reason),
			 "grandmaster changed from %s to %s: %u good checks needed",
			 fmt_clock_id(me->gm, a, sizeof(a)),
			 fmt_clock_id(st->gm_identity, b, sizeof(b)),
			 me->cf->ptp_good_checks);
		log_notice("PTP: %s", me->reason);
		me->ptp_h = (struct tdm_hyst){ 0 };
		me->gm_changed = true;
		if (was_ok) {
			me->sync = SYNC_BAD;
			log_warn("PTP out of sync: %s%s", me->reason,
				 me->cf->ptp_policy == PTP_REQUIRE ?
				 ": holding the gate" :
				 " (policy warn: gate left open)");
			apply_hold(me);
			send_heartbeat(me);
		}
	}
	memcpy(me->gm, st->gm_identity, sizeof(me->gm));
	me->gm_known = true;
}

static void ptp_check(struct member *me)
{
	const struct tdmd_conf *cf = me->cf;
	char err[256], reason[300];
	int timeout = cf->ptp_interval_ns / 2000000;
	bool good;

	if (timeout > 200)
		timeout = 200;
	memset(&me->st, 0, sizeof(me->st));
	if (!me->ptp_open && me->io.ptp_open(me->io.ctx, cf->ptp_socket,
					     cf->ptp_domain, err, sizeof(err)) == 0)
		me->ptp_open = true;
	if (!me->ptp_open) {
		good = false;
		snprintf(reason, sizeof(reason), "%s", err);
	} else if (me->io.ptp_query(me->io.ctx, timeout, &me->st, err,
				    sizeof(err))) {
		good = false;
		snprintf(reason, sizeof(reason), "%s", err);
	} else {
		bool tai = cf->ptp_check_tai &&
			   (!me->have_plan || me->plan.clockid == CLOCK_TAI);

		good = tdm_ptp_good(&me->st, cf->ptp_threshold_ns, tai, reason,
				    sizeof(reason));
		gm_check(me);
	}
	if (good) {
		if (!me->gm_changed)
			me->reason[0] = '\0';
	} else {
		tdm_strlcpy(me->reason, reason, sizeof(me->reason));
		if (me->sync == SYNC_UNKNOWN) {
			log_info("PTP not in sync yet: %s", reason);
			me->sync = SYNC_BAD;
		}
	}
	if (tdm_hyst_step(&me->ptp_h, good, cf->ptp_good_checks, cf->ptp_bad_checks)) {
		me->sync = me->ptp_h.ok ? SYNC_GOOD : SYNC_BAD;
		if (me->ptp_h.ok && me->gm_changed) {
			me->gm_changed = false;
			me->reason[0] = '\0';
		}
		if (me->ptp_h.ok)
			log_notice("PTP in sync (port %s, offset %lld ns) after %u good checks%s",
				   tdm_port_state_name(me->st.port_state),
				   (long long)me->st.master_offset, me->ptp_h.good,
				   cf->ptp_policy == PTP_REQUIRE && clocks_ok(me) ?
				   ": releasing the gate" : "");
		else
			log_warn("PTP out of sync: %s%s", me->reason,
				 cf->ptp_policy == PTP_REQUIRE ?
				 ": holding the gate" : " (policy warn: gate left open)");
		apply_hold(me);
		send_heartbeat(me);
	}
	/* A failed hold/release is retried on every check. */
	apply_hold(me);
}

/* ---- PHC health ---- */

/*
 * At start (before the capabilities go): the interface's PHC, opened.  No
 * PHC, or no way to ask: the check does not apply, said once.  A PHC that
 * cannot be opened now is tried again at each check.
 */
static void phc_setup(struct member *me)
{
	char err[256];
	int index = -1;

	me->phc_index = -1;
	me->phc_method_logged = -1;
	if (me->cf->ptp_policy == PTP_OFF || !me->cf->phc_threshold_ns)
		return;
	if (me->io.phc_index(me->io.ctx, me->target.ifname, &index, err,
			     sizeof(err))) {
		log_notice("PHC check: %s; it does not apply", err);
		return;
	}
	if (index < 0) {
		log_notice("%s has no PTP hardware clock: the PHC check does not apply",
			   me->target.ifname);
		return;
	}
	snprintf(me->phc_path, sizeof(me->phc_path), "/dev/ptp%d", index);
	if (me->io.phc_open(me->io.ctx, index, err, sizeof(err)))
		log_warn("PHC check: %s (tried again at each check)", err);
	else
		me->phc_open = true;
	me->phc_index = index;
}

static void phc_check(struct member *me)
{
	const struct tdmd_conf *cf = me->cf;
	char err[256], reason[300];
	bool good = false;

	if (!phc_checked(me))
		return;
	me->phc_checks++;
	if (!me->phc_open &&
	    !me->io.phc_open(me->io.ctx, me->phc_index, err, sizeof(err)))
		me->phc_open = true;
	if (!me->phc_open) {
		snprintf(reason, sizeof(reason), "PHC check: %s", err);
	} else if (me->io.phc_read(me->io.ctx, &me->phc_off, err, sizeof(err))) {
		snprintf(reason, sizeof(reason), "PHC check: %s", err);
	} else {
		good = tdm_phc_good(&me->phc_off, cf->phc_threshold_ns, reason,
				    sizeof(reason));
		if (me->phc_off.method != me->phc_method_logged) {
			log_info("PHC %s read with %s (delay %lld ns)", me->phc_path,
				 tdm_phc_ioctl_name(me->phc_off.method),
				 (long long)me->phc_off.delay_ns);
			me->phc_method_logged = me->phc_off.method;
		}
	}
	if (good) {
		me->phc_reason[0] = '\0';
	} else {
		if (me->phc_checks == 1)
			log_info("PHC not in sync yet: %s", reason);
		tdm_strlcpy(me->phc_reason, reason, sizeof(me->phc_reason));
	}
	if (!tdm_hyst_step(&me->phc_h, good, cf->ptp_good_checks, cf->ptp_bad_checks))
		return;
	if (me->phc_h.ok)
		log_notice("PHC %s in sync with the system clock (offset %lld ns) after %u good checks%s",
			   me->phc_path, (long long)me->phc_off.offset_ns, me->phc_h.good,
			   cf->ptp_policy == PTP_REQUIRE && clocks_ok(me) ?
			   ": releasing the gate" : "");
	else
		log_warn("PHC out of sync: %s%s", me->phc_reason,
			 cf->ptp_policy == PTP_REQUIRE ?
			 ": holding the gate" : " (policy warn: gate left open)");
	apply_hold(me);
	send_heartbeat(me);
}

/* "off", "none" (no PHC), "unknown", "synced", "unsynced". */
static const char *phc_state(const struct member *me)
{
	if (me->cf->ptp_policy == PTP_OFF || !me->cf->phc_threshold_ns)
		return "off";
	if (me->phc_index < 0)
		return "none";
	if (me->phc_h.ok)
		return "synced";
	return me->phc_checks ? "unsynced" : "unknown";
}

/* ---- the lease ---- */

/* Why the node may not renew its lease now, or NULL if it may. */
static const char *unhealthy(const struct member *me)
{
	if (!me->have_plan && !me->qdisc_seen)
		return "no plan in force";
	if (me->partial)
		return "a plan in force on some instances only";
	if (hold_wanted(me))
		return me->ptp_h.ok && !clocks_ok(me) ?
		       "the PHC is not in sync with the system clock" :
		       "PTP not in sync";
	return NULL;
}

/*
 * The lease is the device's, shared by its instances: set (set) or renew
 * it through the first instance that takes it.  Renewing one that has
 * none (none yet, or one set by hand) sets ours, which renews it too.
 */
static int lease_io(struct member *me, bool set, char *err, size_t errlen)
{
	unsigned int i;

	if (!inst_placed(me)) {
		snprintf(err, errlen, "no mq qdisc at the root of %s",
			 me->target.ifname);
		return -1;
	}
	for (i = 0; i < me->ninst; i++) {
		const struct tdm_qdisc_target *t = &me->inst[i].t;

		if (!set && !me->io.qdisc_renew(me->qctx, t, err, errlen))
			return 0;
		if (!me->io.qdisc_set_lease(me->qctx, t, err, errlen))
			return 0;
	}
	return -1;
}

/* Every lease/4: renew while healthy. */
static void lease_tick(struct member *me)
{
	const char *why = unhealthy(me);
	char err[256];

	if (why) {
		if (me->renewing)
			log_warn("lease: not renewing (%s): the gate closes within %llu ms",
				 why, (unsigned long long)(me->target.lease_ns / 1000000));
		me->renewing = false;
		return;
	}
	if (me->lease_changed) {
		if (lease_io(me, true, err, sizeof(err))) {
			if (strcmp(err, me->renew_error))
				log_err("lease: cannot set it on %s: %s",
					me->target.ifname, err);
			tdm_strlcpy(me->renew_error, err, sizeof(me->renew_error));
			return;
		}
		me->lease_changed = false;
	} else if (lease_io(me, false, err, sizeof(err))) {
		if (strcmp(err, me->renew_error))
			log_err("lease: cannot renew on %s: %s", me->target.ifname, err);
		tdm_strlcpy(me->renew_error, err, sizeof(me->renew_error));
		return;
	}
	if (!me->renewing || me->renew_error[0])
		log_notice("lease: renewing every %llu ms",
			   (unsigned long long)(me->target.lease_ns / 4000000));
	me->renew_error[0] = '\0';
	me->renewing = true;
	me->renewals++;
}

int64_t member_tick(struct member *me, int64_t now)
{
	int64_t next = INT64_MAX;

	if (!me->conn && !me->connecting) {
		if (now >= me->next_attempt)
			try_connect(me);
		if (!me->conn && !me->connecting && me->next_attempt < next)
			next = me->next_attempt;
	}
	if (me->conn && !me->welcomed && now - me->last_rx > 10 * (int64_t)TDM_NSEC_PER_SEC)
		disconnect(me, "no answer to the handshake within 10 s");
	if (me->conn && me->welcomed) {
		if (now >= me->next_hb)
			send_heartbeat(me);
		if (me->next_hb < next)
			next = me->next_hb;
	}
	if (me->cf->ptp_policy != PTP_OFF) {
		if (now >= me->next_ptp) {
			ptp_check(me);
			phc_check(me);
			me->next_ptp = now + me->cf->ptp_interval_ns;
		}
		if (me->next_ptp < next)
			next = me->next_ptp;
	}
	if (me->filt_due) {
		if (now >= me->filt_at)
			filters_tick(me);
		if (me->filt_due && me->filt_at < next)
			next = me->filt_at;
	}
	if (me->target.lease_ns) {
		if (now >= me->next_renew) {
			lease_tick(me);
			me->next_renew = now + (int64_t)(me->target.lease_ns / 4);
		}
		if (me->next_renew < next)
			next = me->next_renew;
	}
	return next;
}

/* ---- reload ---- */

/* A deadline of a period that changed from old_ns to new_ns: not later
 * than one new period from now.
 */
static void reschedule(int64_t *next, int64_t now, uint64_t old_ns,
		       uint64_t new_ns)
{
	if (old_ns != new_ns && *next > now + (int64_t)new_ns)
		*next = now + (int64_t)new_ns;
}

/*
 * The configuration changed under us (only keys that reload live): the
 * session, the plans and the lease go on; what is scheduled by a period
 * is rescheduled, a new lease is set at the next renewal (or removed at
 * once when turned off), and the hold follows a changed policy.
 */
void member_reload(struct member *me, const struct tdmd_conf *old)
{
	const struct tdmd_conf *cf = me->cf;
	int64_t now = now_ns(me);
	char err[256];

	reschedule(&me->next_hb, now, old->heartbeat_ns, cf->heartbeat_ns);
	reschedule(&me->next_ptp, now, old->ptp_interval_ns, cf->ptp_interval_ns);
	if (me->backoff > cf->reconnect_max_ns)
		me->backoff = cf->reconnect_max_ns;
	if (me->backoff < cf->reconnect_min_ns)
		me->backoff = cf->reconnect_min_ns;
	if (cf->target.lease_ns != old->target.lease_ns) {
		unsigned int i;

		me->target.lease_ns = cf->target.lease_ns;
		for (i = 0; i < me->ninst; i++)
			me->inst[i].t.lease_ns = me->target.lease_ns;
		if (!me->target.lease_ns) {
			if ((me->have_plan || me->qdisc_seen) &&
			    lease_io(me, true, err, sizeof(err)))
				log_err("lease: cannot remove it on %s: %s",
					me->target.ifname, err);
			else
				log_notice("lease: off");
			me->renewing = false;
			me->lease_changed = false;
		} else {
			log_notice("lease: %llu ms from the next renewal",
				   (unsigned long long)(me->target.lease_ns / 1000000));
			me->lease_changed = true;
			me->next_renew = now;
		}
	}
	apply_hold(me);
}

/* ---- control requests ---- */

/* What a status reply shows: the first instance in q, all of them in
 * inst (NULL when out of memory).
 */
struct status {
	const struct member *me;
	struct tdm_qdisc_info q;
	struct tdm_qdisc_info *inst;
};

/*
 * Read the qdisc for a status or metrics reply: the first instance there
 * into st->q and, with @all, every instance into st->inst (NULL when out
 * of memory; the caller frees it).
 */
/* gate tdmd: the followers on the store's socket. */
static unsigned int gate_followers(const struct member *me)
{
	return me->io.gate_followers ? me->io.gate_followers(me->io.ctx) : 0;
}

static void status_read(struct member *me, struct status *st, bool all)
{
	unsigned int i;

	st->inst = all && me->ninst ? calloc(me->ninst, sizeof(*st->inst)) : NULL;
	if (!st->inst) {
		read_qdisc(me, &st->q);
		return;
	}
	/* Each instance read once; st->q is read_qdisc()'s pick of them. */
	for (i = 0; i < me->ninst; i++)
		read_inst(me, i, &st->inst[i]);
	for (i = 0; i < me->ninst && !st->inst[i].present; i++)
		;
	st->q = st->inst[i < me->ninst ? i : 0];
	qdisc_seen(me, &st->q);
}

/*
 * The worst slots (tdm_qdisc_worst_slots()): for each of open latency,
 * margin, guard and wire deferrals, the slot (-1: none) and its value.
 */
struct status_worst {
	int slot[4];
	uint64_t value[4];
};

static const char *const worst_keys[4][2] = {
	{ "open_latency", "open_latency_max" },
	{ "margin", "margin_min" },
	{ "guard_deferrals", "guard_deferrals" },
	{ "wire_deferrals", "wire_deferrals" },
};

static void status_worst(const struct tdm_qdisc_info *q, struct status_worst *sw)
{
	struct tdm_qdisc_worst w;
	unsigned int i;

	tdm_qdisc_worst_slots(q, &w);
	sw->slot[0] = w.latency;
	sw->slot[1] = w.margin;
	sw->slot[2] = w.guard;
	sw->slot[3] = w.wire;
	for (i = 0; i < 4; i++) {
		const struct tdm_qdisc_slot *sl = &q->slots[sw->slot[i] < 0 ?
							    0 : sw->slot[i]];

		sw->value[i] = sw->slot[i] < 0 ? 0 : i == 0 ? sl->latency_max :
			       i == 1 ? sl->margin_min : i == 2 ?
			       sl->guard_deferrals : sl->wire_deferrals;
	}
}

/* As JSON: each an object with its slot and value, null where none. */
static void status_worst_json(struct tdm_json *j, const struct tdm_qdisc_info *q)
{
	struct status_worst sw;
	unsigned int i;

	status_worst(q, &sw);
	tdm_json_obj_open(j, "slots");
	tdm_json_u64(j, "plan_version", q->slots_version);
	tdm_json_u64(j, "count", q->nslots);
	tdm_json_obj_open(j, "worst");
	for (i = 0; i < 4; i++) {
		if (sw.slot[i] < 0) {
			tdm_json_null(j, worst_keys[i][0]);
			continue;
		}
		tdm_json_obj_open(j, worst_keys[i][0]);
		tdm_json_u64(j, "slot", (uint64_t)sw.slot[i]);
		tdm_json_u64(j, worst_keys[i][1], sw.value[i]);
		tdm_json_obj_close(j);
	}
	tdm_json_obj_close(j);
	tdm_json_obj_close(j);
}

/* As one line of text, nothing without slots. */
static void status_worst_text(FILE *f, const struct tdm_qdisc_info *q)
{
	static const char *const fmt[4] = {
		" open latency %llu ns in slot %d,",
		" margin %llu ns in slot %d,",
		" %llu guard deferrals in slot %d,",
		" %llu wire deferrals in slot %d,",
	};
	struct status_worst sw;
	unsigned int i, n = 0;

	if (!q->has_slots)
		return;
	status_worst(q, &sw);
	fprintf(f, "worst slots (plan v%u, %u slots):", q->slots_version,
		q->nslots);
	for (i = 0; i < 4; i++) {
		if (sw.slot[i] < 0)
			continue;
		fprintf(f, fmt[i], (unsigned long long)sw.value[i], sw.slot[i]);
		n++;
	}
	if (!n)
		fprintf(f, " no frame sent or deferred yet,");
	fprintf(f, " (tc -s qdisc show: every slot)\n");
}

/* Every instance, read back: same plan, hold and etf on each? */
static void instances_json(struct tdm_json *j, const struct status *st)
{
	const struct member *me = st->me;
	unsigned int i;

	tdm_json_obj_open(j, "instances");
	tdm_json_str(j, "tree", me->mq ? "mq" : "root");
	tdm_json_u64(j, "mq_handle", me->mq_handle >> 16);
	tdm_json_bool(j, "txtime", me->cf->txtime);
	if (me->cf->txtime) {
		tdm_json_u64(j, "etf_delta_ns", me->cf->etf.delta_ns);
		tdm_json_bool(j, "etf_offload", me->cf->etf.offload);
	}
	tdm_json_u64(j, "partial_version", me->partial);
	tdm_json_arr_open(j, "list");
	for (i = 0; st->inst && i < me->ninst; i++) {
		const struct tdm_qdisc_info *q = &st->inst[i];
		char h[16];

		tdm_json_obj_open(j, NULL);
		tdm_json_s64(j, "queue", me->inst[i].queue);
		if (me->inst[i].t.parent == TC_H_ROOT)
			snprintf(h, sizeof(h), "root");
		else
			snprintf(h, sizeof(h), "%x:%x", me->inst[i].t.parent >> 16,
				 me->inst[i].t.parent & 0xffff);
		tdm_json_str(j, "parent", h);
		tdm_json_bool(j, "present", q->present);
		if (q->present) {
			tdm_json_u64(j, "handle", q->handle >> 16);
			tdm_json_u64(j, "plan_version", q->version);
			tdm_json_u64(j, "pending_version", q->pending ?
				     q->pending_version : 0);
			tdm_json_bool(j, "unconfirmed", q->pending_unconfirmed);
			tdm_json_bool(j, "hold", q->hold);
			tdm_json_bool(j, "txtime", q->txtime);
			tdm_json_u64(j, "window_packets", q->xstats.window_packets);
		}
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_obj_close(j);
}

static void instances_text(FILE *f, const struct status *st)
{
	const struct member *me = st->me;
	unsigned int i;

	if (!me->mq && !me->cf->txtime)
		return;
	fprintf(f, "instances: %u", me->ninst);
	if (me->mq && me->mq_handle)
		fprintf(f, " under mq %x:", me->mq_handle >> 16);
	else if (me->mq)
		fprintf(f, " under mq (not there yet)");
	if (me->cf->txtime)
		fprintf(f, ", launch times by etf (delta %u ns%s)",
			me->cf->etf.delta_ns, me->cf->etf.offload ? ", offload" : "");
	fputc('\n', f);
	if (me->partial)
		fprintf(f, "plan v%u is in force on some instances only: all held\n",
			me->partial);
	for (i = 0; st->inst && i < me->ninst; i++) {
		const struct tdm_qdisc_info *q = &st->inst[i];

		if (me->inst[i].queue >= 0)
			fprintf(f, "  queue %d: ", me->inst[i].queue);
		else
			fprintf(f, "  root: ");
		if (!q->present) {
			fprintf(f, "no tdmwin qdisc%s%s\n", q->other ? ", found " : "",
				q->other ? q->kind : "");
			continue;
		}
		fprintf(f, "plan v%u", q->version);
		if (q->pending)
			fprintf(f, ", v%u pending%s", q->pending_version,
				q->pending_unconfirmed ? " unconfirmed" : "");
		fprintf(f, ", %s%s, %llu packets in windows\n",
			q->hold ? "held" : "running", q->txtime ? ", txtime" : "",
			(unsigned long long)q->xstats.window_packets);
	}
}
/* Does the plan in force open windows for destination classes? */
static bool has_classes(const struct tdm_qdisc_info *q)
{
	unsigned int k;

	for (k = 0; k < q->nwin; k++)
		if (q->win_class[k] != TDMWIN_CLASS_GATED)
			return true;
	return false;
}

/* The windows in force by class, and the filters into the classes. */
static void classes_json(struct tdm_json *j, const struct member *me,
			 const struct tdm_qdisc_info *q)
{
	char a[80];
	unsigned int k;

	tdm_json_arr_open(j, "windows");
	for (k = 0; k < q->nwin; k++) {
		tdm_json_obj_open(j, NULL);
		tdm_json_u64(j, "offset_ns", q->win[k].offset);
		tdm_json_u64(j, "length_ns", q->win[k].length);
		tdm_json_u64(j, "class", q->win_class[k]);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_arr_open(j, "filters");
	for (k = 0; me->filt_known && k < me->nfilt; k++) {
		tdm_json_obj_open(j, NULL);
		if (!inet_ntop(me->filt[k].family, me->filt[k].addr, a, sizeof(a)))
			a[0] = '\0';
		tdm_json_str(j, "address", a);
		tdm_json_u64(j, "class", me->filt[k].minor);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
}

static void classes_text(FILE *f, const struct member *me,
			 const struct tdm_qdisc_info *q)
{
	char a[80];
	unsigned int k;

	if (!has_classes(q) && !me->nfilt)
		return;
	fprintf(f, "windows by class:");
	for (k = 0; k < q->nwin; k++)
		fprintf(f, "%s :%x %llu+%llu ns", k ? "," : "", q->win_class[k],
			(unsigned long long)q->win[k].offset,
			(unsigned long long)q->win[k].length);
	fprintf(f, "\nfilters:%s", me->filt_known ? "" : " (not read yet)");
	for (k = 0; me->filt_known && k < me->nfilt; k++)
		fprintf(f, "%s %s", k ? "," : "",
			tdm_filter_str(&me->filt[k], a, sizeof(a)));
	fprintf(f, "\n");
}


static void status_json(struct tdm_json *j, void *arg)
{
	const struct status *st = arg;
	const struct member *me = st->me;
	const struct tdm_qdisc_info *q = &st->q;

	tdm_json_obj_open(j, NULL);
	tdm_json_str(j, "role", "member");
	tdm_json_str(j, "name", me->cf->name);
	tdm_json_str(j, "interface", me->target.ifname);
	tdm_json_obj_open(j, "gate");
	tdm_json_str(j, "kind", tdmd_gate_name(me->cf->gate));
	if (me->cf->gate == GATE_TDMD) {
		tdm_json_str(j, "socket", me->cf->gate_socket);
		tdm_json_u64(j, "followers", gate_followers(me));
	}
	tdm_json_obj_close(j);
	tdm_json_obj_open(j, "coordinator");
	tdm_json_str(j, "address", me->coord_addr);
	tdm_json_bool(j, "connected", me->welcomed);
	tdm_json_u64(j, "plan_version", me->coord_version);
	tdm_json_str(j, "last_error", me->last_error);
	tdm_json_obj_close(j);
	tdm_json_obj_open(j, "sync");
	tdm_json_str(j, "policy", tdmd_ptp_policy_name(me->cf->ptp_policy));
	tdm_json_str(j, "state", sync_names[me->sync]);
	tdm_json_bool(j, "hold", q->present ? q->hold : hold_wanted(me));
	tdm_json_s64(j, "offset_ns", me->st.master_offset);
	tdm_json_str(j, "port_state", me->st.port_ok ?
		     tdm_port_state_name(me->st.port_state) : "-");
	tdm_json_s64(j, "tai_offset", me->st.tai_offset);
	if (me->st.tp_ok) {
		tdm_json_s64(j, "utc_offset", me->st.utc_offset);
		tdm_json_bool(j, "utc_offset_valid", me->st.utc_offset_valid);
	}
	if (me->gm_known) {
		char g[32];

		tdm_json_str(j, "grandmaster", fmt_clock_id(me->gm, g, sizeof(g)));
	}
	tdm_json_u64(j, "good_checks", me->ptp_h.good);
	tdm_json_u64(j, "bad_checks", me->ptp_h.bad);
	tdm_json_str(j, "reason", me->reason);
	tdm_json_u64(j, "no_windows_in", me->no_windows);
	tdm_json_u64(j, "prepared_version", me->prep_version);
	tdm_json_obj_close(j);
	tdm_json_obj_open(j, "phc");
	tdm_json_str(j, "state", phc_state(me));
	tdm_json_str(j, "device", me->phc_index >= 0 ? me->phc_path : "");
	tdm_json_s64(j, "offset_ns", me->phc_off.offset_ns);
	tdm_json_s64(j, "delay_ns", me->phc_off.delay_ns);
	tdm_json_str(j, "method", me->phc_checks ?
		     tdm_phc_method_name(me->phc_off.method) : "none");
	tdm_json_u64(j, "threshold_ns", me->cf->phc_threshold_ns);
	tdm_json_u64(j, "good_checks", me->phc_h.good);
	tdm_json_u64(j, "bad_checks", me->phc_h.bad);
	tdm_json_str(j, "reason", me->phc_reason);
	tdm_json_obj_close(j);
	tdm_json_obj_open(j, "qdisc");
	tdm_json_bool(j, "present", q->present);
	if (q->present) {
		tdm_json_u64(j, "handle", q->handle >> 16);
		tdm_json_u64(j, "plan_version", q->version);
		tdm_json_s64(j, "base_time", q->base_time);
		tdm_json_u64(j, "cycle_ns", q->cycle_ns);
		tdm_json_bool(j, "pending", q->pending);
		if (q->pending) {
			tdm_json_u64(j, "pending_version", q->pending_version);
			tdm_json_s64(j, "pending_base_time", q->pending_base);
		}
		tdm_json_u64(j, "link_speed", q->eff_link_speed);
		tdm_json_u64(j, "drops", q->drops);
		tdm_json_u64(j, "backlog", q->backlog);
		tdm_json_u64(j, "qlen", q->qlen);
		report_xstats_json(j, "xstats", &q->xstats);
		if (q->has_slots)
			status_worst_json(j, q);
		classes_json(j, me, q);
		tdm_json_bool(j, "txtime", q->txtime);
		tdm_json_obj_open(j, "lease");
		tdm_json_u64(j, "lease_ns", q->lease_ns);
		tdm_json_s64(j, "left_ns", q->lease_left_ns);
		tdm_json_u64(j, "expiries", q->xstats.lease_expiries);
		tdm_json_bool(j, "renewing", me->renewing);
		tdm_json_u64(j, "renewals", me->renewals);
		tdm_json_str(j, "error", me->renew_error);
		tdm_json_obj_close(j);
	} else if (q->other) {
		tdm_json_str(j, "kind", q->kind);
	}
	tdm_json_obj_close(j);
	instances_json(j, st);
	tdm_json_obj_close(j);
}

static void status_text(FILE *f, void *arg)
{
	const struct status *st = arg;
	const struct member *me = st->me;
	const struct tdm_qdisc_info *q = &st->q;
	const struct tc_tdmwin_xstats *x = &q->xstats;
	char tb[64];

	fprintf(f, "role: member '%s' on %s\n", me->cf->name, me->target.ifname);
	if (me->cf->gate == GATE_TDMD)
		fprintf(f, "gate: tdmd (no netdev): the plan store, on %s, %u follower%s\n",
			me->cf->gate_socket, gate_followers(me),
			gate_followers(me) == 1 ? "" : "s");
	fprintf(f, "coordinator: %s, %s", me->coord_addr[0] ? me->coord_addr :
		me->cf->coord.host, me->welcomed ? "connected" : "not connected");
	if (!me->welcomed && me->last_error[0])
		fprintf(f, " (%s)", me->last_error);
	fputc('\n', f);
	fprintf(f, "sync: %s (policy %s)", sync_names[me->sync],
		tdmd_ptp_policy_name(me->cf->ptp_policy));
	if (me->st.port_ok)
		fprintf(f, ", port %s, offset %lld ns",
			tdm_port_state_name(me->st.port_state),
			(long long)me->st.master_offset);
	if (me->reason[0])
		fprintf(f, ": %s", me->reason);
	fputc('\n', f);
	fprintf(f, "phc: %s", phc_state(me));
	if (me->phc_index >= 0)
		fprintf(f, " (%s", me->phc_path);
	if (me->phc_index >= 0 && me->phc_checks)
		fprintf(f, ", offset %lld ns by %s, delay %lld ns",
			(long long)me->phc_off.offset_ns,
			tdm_phc_method_name(me->phc_off.method),
			(long long)me->phc_off.delay_ns);
	if (me->phc_index >= 0)
		fputc(')', f);
	if (me->phc_reason[0])
		fprintf(f, ": %s", me->phc_reason);
	fputc('\n', f);
	if (me->no_windows)
		fprintf(f, "plan v%u has no windows for '%s': the gate is held\n",
			me->no_windows, me->cf->name);
	if (me->prep_version)
		fprintf(f, "plan v%u prepared, waiting for the coordinator's commit or abort%s\n",
			me->prep_version, me->prep_nowin ?
			" (no windows for us in it: the gate is held)" :
			" (from its base time the gate holds until then)");
	instances_text(f, st);
	if (!q->present && me->cf->gate == GATE_TDMD) {
		fprintf(f, "qdisc: no plan in the store of %s yet\n",
			me->target.ifname);
		return;
	}
	if (!q->present) {
		fprintf(f, "qdisc: no tdmwin qdisc on %s%s%s\n", me->target.ifname,
			q->other ? ", found " : "", q->other ? q->kind : "");
		return;
	}
	fprintf(f, "gate: %s\n", q->hold ? "held" :
		q->xstats.lease_held ? "held (the lease ran out)" : "running");
	if (q->lease_ns)
		fprintf(f, "lease: %llu ms, %lld ms %s, %llu expiries, %s%s\n",
			(unsigned long long)(q->lease_ns / 1000000),
			(long long)(q->lease_left_ns > 0 ? q->lease_left_ns :
				    -q->lease_left_ns) / 1000000,
			q->lease_left_ns > 0 ? "left" : "since it ran out",
			(unsigned long long)q->xstats.lease_expiries,
			me->renewing ? "renewing" : "not renewing",
			me->renew_error[0] ? " (the last renewal failed)" : "");
	fprintf(f, "active plan: v%u since %s, cycle %llu ns\n", q->version,
		fmt_tai(q->base_time, me->have_plan ? me->plan.clockid : CLOCK_TAI,
			tb, sizeof(tb)),
		(unsigned long long)q->cycle_ns);
	if (q->pending)
		fprintf(f, "pending plan: v%u at %s\n", q->pending_version,
			fmt_tai(q->pending_base, me->have_plan ? me->plan.clockid :
				CLOCK_TAI, tb, sizeof(tb)));
	classes_text(f, me, q);
	fprintf(f, "counters: %llu packets in %llu windows, %llu bypass, %llu guard deferrals,\n"
		"          %llu oversize drops, %llu hold drops, %llu drops, backlog %llu packets\n",
		(unsigned long long)x->window_packets,
		(unsigned long long)x->windows_opened,
		(unsigned long long)x->bypass_packets,
		(unsigned long long)x->guard_deferrals,
		(unsigned long long)x->oversize_drops,
		(unsigned long long)x->hold_drops,
		(unsigned long long)q->drops, (unsigned long long)q->qlen);
	status_worst_text(f, q);
}

/* tdmctl metrics: the Prometheus text format (tdm_prom.h). */
/*
 * The qdisc's metrics: every instance's (label queue under mq), read in
 * st->inst; the first one there (st->q) when that could not be allocated.
 */
static void metrics_qdisc(struct tdm_prom *p, const struct status *st)
{
	const struct member *me = st->me;
	struct tdm_prom_inst *in = NULL;
	char (*qn)[12] = NULL;
	unsigned int i;

	if (st->inst && me->mq) {
		in = calloc(me->ninst, sizeof(*in));
		qn = calloc(me->ninst, sizeof(*qn));
	}
	if (!in || !qn) {
		struct tdm_prom_inst one = { .q = &st->q };

		free(in);
		free(qn);
		tdm_prom_qdisc(p, me->target.ifname, &one, 1);
		return;
	}
	for (i = 0; i < me->ninst; i++) {
		snprintf(qn[i], sizeof(qn[i]), "%d", me->inst[i].queue);
		in[i].queue = qn[i];
		in[i].q = &st->inst[i];
	}
	tdm_prom_qdisc(p, me->target.ifname, in, me->ninst);
	free(in);
	free(qn);
}

static void metrics_text(FILE *f, void *arg)
{
	const struct status *st = arg;
	const struct member *me = st->me;
	static const char *const phc_states[] = {
		"off", "none", "unknown", "synced", "unsynced"
	};
	const char *phc = phc_state(me);
	unsigned int i, phc_i = 0;
	struct tdm_prom p;

	tdm_prom_init(&p, f);
	report_prom_info(&p, "member", me->cf->name);
	tdm_prom_one(&p, "tdmd_coordinator_connected", "gauge",
		     "1 while registered with the coordinator", NULL, me->welcomed);
	report_prom_states(&p, "tdmd_sync_state",
			   "PTP sync state (1 for the current one)", "state",
			   sync_names, TDM_ARRAY_SIZE(sync_names), me->sync, NULL);
	tdm_prom_one(&p, "tdmd_gate_hold_wanted", "gauge",
		     "1 while tdmd holds the gate (PTP or PHC out of sync, no windows)",
		     NULL, hold_wanted(me));
	if (me->st.port_ok) {
		const char *const l[] = {
			"state", tdm_port_state_name(me->st.port_state), NULL
		};

		tdm_prom_one(&p, "tdmd_ptp_port_state_info", "gauge",
			     "ptp4l's port state at the last check (always 1)", l, 1);
		tdm_prom_one_ns(&p, "tdmd_ptp_offset_seconds", "gauge",
				"ptp4l's offset from master at the last check",
				NULL, me->st.master_offset);
	}
	tdm_prom_one(&p, "tdmd_ptp_good_checks", "gauge",
		     "good PTP checks in a row", NULL, me->ptp_h.good);
	tdm_prom_one(&p, "tdmd_ptp_bad_checks", "gauge",
		     "bad PTP checks in a row", NULL, me->ptp_h.bad);
	for (i = 0; i < TDM_ARRAY_SIZE(phc_states); i++)
		if (!strcmp(phc, phc_states[i]))
			phc_i = i;
	report_prom_states(&p, "tdmd_phc_state",
			   "PHC check state (1 for the current one)", "state",
			   phc_states, TDM_ARRAY_SIZE(phc_states), phc_i, NULL);
	if (me->phc_checks)
		tdm_prom_one_ns(&p, "tdmd_phc_offset_seconds", "gauge",
				"PHC - CLOCK_TAI at the last check", NULL,
				me->phc_off.offset_ns);
	tdm_prom_one(&p, "tdmd_plan_version", "gauge",
		     "version of the plan tdmd installed (0: none)", NULL,
		     me->have_plan ? me->plan.version : me->kernel_version);
	tdm_prom_one(&p, "tdmd_plan_prepared_version", "gauge",
		     "version of the plan prepared and awaiting commit or abort (0: none)",
		     NULL, me->prep_version);
	tdm_prom_one(&p, "tdmd_plan_no_windows_version", "gauge",
		     "version of a plan without windows for this sender (0: none)",
		     NULL, me->no_windows);
	tdm_prom_one(&p, "tdmd_lease_renewing", "gauge",
		     "1 while tdmd renews the qdisc's lease", NULL, me->renewing);
	tdm_prom_one(&p, "tdmd_lease_renewals_total", "counter",
		     "lease renewals since tdmd started", NULL, me->renewals);
	if (me->cf->gate == GATE_TDMD)
		tdm_prom_one(&p, "tdmd_gate_followers", "gauge",
			     "libtdmgate handles following the plan store (gate tdmd)",
			     NULL, gate_followers(me));
	metrics_qdisc(&p, st);
}

static void plan_json(struct tdm_json *j, void *arg)
{
	tdm_json_obj_open(j, NULL);
	tdm_plan_json(j, "installed", arg);
	tdm_json_obj_close(j);
}

static void plan_text(FILE *f, void *arg)
{
	char *t = report_plan_text(arg);

	if (t)
		fputs(t, f);
	else
		fputs("out of memory\n", f);
	free(t);
}

void member_control(struct member *me, struct ctl_req *r)
{
	if (!strcmp(r->cmd, "status")) {
		struct status st = { .me = me };

		status_read(me, &st, true);
		report_reply(r, true, status_json, status_text, &st);
		free(st.inst);
	} else if (!strcmp(r->cmd, "metrics")) {
		struct status st = { .me = me };

		status_read(me, &st, me->mq);
		report_reply_text(r, metrics_text, &st);
		free(st.inst);
	} else if (!strcmp(r->cmd, "plan show")) {
		if (!me->have_plan)
			ctl_reply(r, !r->json, r->json ? "no plan installed yet\n" :
				  "# no plan installed yet\n");
		else
			report_reply(r, true, plan_json, plan_text, &me->plan);
	} else if (!strncmp(r->cmd, "plan push", 9) || !strcmp(r->cmd, "plan history")) {
		ctl_reply(r, false, "this tdmd is a member; plans are pushed to and kept by the coordinator\n");
	} else {
		ctl_reply(r, false, "unknown command (status, plan show, metrics)\n");
	}
}

/* The instances under mq: the chosen queues of the n the device has. */
static int inst_queues(struct member *me, unsigned int n, char *err,
		       size_t errlen)
{
	const struct tdmd_queues *qs = &me->cf->queues;
	unsigned int q, k = 0;

	if (n > TDMD_MAX_QUEUES && qs->mode == QUEUES_ALL) {
		snprintf(err, errlen, "queues all: %s has %u TX queues; tdmd programs at most %d (list them)",
			 me->target.ifname, n, TDMD_MAX_QUEUES);
		return -1;
	}
	for (q = 0; q < TDMD_MAX_QUEUES; q++) {
		if (qs->mode == QUEUES_LIST && tdmd_queue_listed(qs, q) && q >= n) {
			snprintf(err, errlen, "queues: %s has no TX queue %u (it has %u: 0 to %u)",
				 me->target.ifname, q, n, n - 1);
			return -1;
		}
	}
	me->inst = calloc(n < TDMD_MAX_QUEUES ? n : TDMD_MAX_QUEUES,
			  sizeof(*me->inst));
	if (!me->inst) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (q = 0; q < n && q < TDMD_MAX_QUEUES; q++) {
		if (qs->mode == QUEUES_LIST && !tdmd_queue_listed(qs, q))
			continue;
		me->inst[k].t = me->target;
		me->inst[k].t.handle = 0;	/* "handle" is mq's */
		me->inst[k].queue = (int)q;
		k++;
	}
	me->ninst = k;
	me->mq = true;
	return 0;
}

/*
 * The instances the configuration asks for: the one at the configured
 * place, or one under each chosen TX queue of an mq at the root (the mq
 * found there, or made with the first plan).  0, or -1 with err.
 */
static int inst_setup(struct member *me, char *err, size_t errlen)
{
	unsigned int n = 0;
	uint32_t h;

	if ((me->cf->queues.mode != QUEUES_ROOT || me->cf->txtime) &&
	    me->io.tx_queues(me->qctx, &me->target, &n, err, errlen))
		return -1;
	if (me->cf->queues.mode != QUEUES_ROOT) {
		if (n < 2) {
			snprintf(err, errlen, "queues: %s has one TX queue, and mq needs more: set 'queues root'",
				 me->target.ifname);
			return -1;
		}
		if (inst_queues(me, n, err, errlen) ||
		    me->io.qdisc_mq(me->qctx, &me->target, false, &h, err,
				    errlen))
			return -1;
		inst_place(me, h);
		return 0;
	}
	if (me->cf->txtime && n > 1 && me->target.parent == TC_H_ROOT) {
		snprintf(err, errlen, "txtime: %s has %u TX queues and an etf child launches the frames of one: set 'queues all' (mq, with a tdmwin and an etf under each queue)",
			 me->target.ifname, n);
		return -1;
	}
	me->inst = calloc(1, sizeof(*me->inst));
	if (!me->inst) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	me->inst[0].t = me->target;
	me->inst[0].queue = -1;
	me->ninst = 1;
	return 0;
}

/*
 * A qdisc left by an earlier run keeps its plan; under "require" it is
 * held at the first check until PTP is confirmed again.  The first
 * instance found tells the plan; the others are expected to agree.
 */
static void inst_found(struct member *me)
{
	struct tdm_qdisc_info q;
	char name[48];
	unsigned int i;

	for (i = 0; i < me->ninst; i++) {
		read_inst(me, i, &q);
		if (!q.present)
			continue;
		inst_name(me, i, name, sizeof(name));
		if (me->qdisc_seen) {
			if ((q.pending && !q.pending_unconfirmed ?
			     q.pending_version : q.version) != me->kernel_version)
				log_warn("%s runs plan v%u, not v%u as the first instance: the next plan sets them all",
					 name, q.version, me->kernel_version);
			continue;
		}
		me->qdisc_seen = true;
		me->hold_applied = q.hold;
		/* A plan still unconfirmed: its outcome is asked for at
		 * REGISTER; until then we run what is in force.
		 */
		if (q.pending_unconfirmed) {
			me->prep_version = q.pending ? q.pending_version :
					   q.version;
			log_notice("found plan v%u prepared and undecided on %s",
				   me->prep_version, name);
		}
		me->kernel_version = q.pending && !q.pending_unconfirmed ?
				     q.pending_version : q.version;
		me->kernel_base = q.pending && !q.pending_unconfirmed ?
				  q.pending_base : q.base_time;
		log_info("found a tdmwin qdisc on %s running plan v%u%s",
			 name, q.version, q.hold ? " (held)" : "");
	}
}

struct member *member_new(const struct tdmd_conf *conf,
			  const struct member_io *io, char *err, size_t errlen)
{
	struct member *me = calloc(1, sizeof(*me));

	if (!me || !(me->frame = malloc(TDM_MAX_FRAME))) {
		snprintf(err, errlen, "out of memory");
		free(me);
		return NULL;
	}
	me->cf = conf;
	me->io = *io;
	me->qctx = io->qdisc_ctx ? io->qdisc_ctx : io->ctx;
	me->phc_index = -1;
	me->target = me->cf->target;
	if (me->cf->control_priority >= 0)
		me->target.extra_bypass |= 1u << me->cf->control_priority;
	if (me->io.qdisc_resolve(me->qctx, &me->target, err, errlen) ||
	    inst_setup(me, err, errlen)) {
		member_free(me);
		return NULL;
	}
	inst_found(me);
	me->backoff = me->cf->reconnect_min_ns;
	me->next_attempt = now_ns(me);
	me->next_renew = me->next_attempt;
	me->sync = me->cf->ptp_policy == PTP_OFF ? SYNC_OFF : SYNC_UNKNOWN;
	phc_setup(me);
	log_info("member '%s' on %s (%u tdmwin instance%s%s%s%s); coordinator %s port %s; PTP policy %s",
		 me->cf->name, me->target.ifname, me->ninst,
		 me->ninst == 1 ? "" : "s", me->mq ? " under mq" : "",
		 me->cf->txtime ? ", launch times by etf" : "",
		 me->cf->gate == GATE_TDMD ? ", in tdmd's plan store" : "",
		 me->cf->coord.host, me->cf->coord.port,
		 tdmd_ptp_policy_name(me->cf->ptp_policy));
	return me;
}

void member_free(struct member *me)
{
	if (!me)
		return;
	if (me->conn || me->connecting)
		me->io.close(me->io.ctx);
	if (me->have_plan)
		tdm_plan_free(&me->plan);
	prep_forget(me);
	free(me->inst);
	free(me->frame);
	free(me);
}
