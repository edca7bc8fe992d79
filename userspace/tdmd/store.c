// SPDX-License-Identifier: GPL-2.0
/*
 * The plan store: the tdmwin qdisc of a device that has no netdev (a NIC
 * bound to vfio for DPDK), kept by tdmd itself.  The member's qdisc
 * operations (struct member_io) come here instead of going to the kernel,
 * and the store keeps exactly what the qdisc's dump would show, in a
 * struct tdm_qdisc_info: the active plan, the pending one and its base,
 * the unconfirmed flag, hold, the lease and the time left on it, the
 * versions.  Each change is published (store_sock.c) as the RTM_NEWQDISC
 * the kernel would send (tdm_qdisc_put_info()), which libtdmgate reads
 * with the parser it uses for the kernel's (tdm_qdisc_parse()).
 *
 * The rules are the qdisc's (kmod/sch_tdmwin.c), in the order a request
 * meets them there:
 *  - a new plan is checked as the kernel checks it (tdmwin_check_sched()
 *    at the link speed in use); on a store that holds a plan, one whose
 *    base is ahead becomes the pending plan (replacing a pending one),
 *    else it is in force at once;
 *  - an unconfirmed plan needs a base ahead, and never takes over until
 *    confirmed; confirm and abort name its version; an abort with no
 *    pending plan (the store's only plan was the unconfirmed one) holds;
 *  - the lease is on CLOCK_BOOTTIME, set or renewed by a request, and its
 *    end is counted once (lease_expiries) by the first read after it;
 *  - a pending plan takes over when a read finds its base passed (the
 *    dump's catch-up), which, as in the kernel, sends no news: followers
 *    switch on their own at its base.
 * The store sees no frames: the traffic counters stay 0, and it has no
 * queue (limit is what tdm.conf says, for the record).
 */
#include <errno.h>
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_gate.h"
#include "tdm_util.h"
#include "tdmd.h"

/* The handle the store's qdisc shows (1:). */
#define STORE_HANDLE	0x10000u

struct store {
	char dev[16];
	struct store_ops ops;
	struct tdm_qdisc_info *in;	/* the dump; lease_left set on reads */
	int64_t renewed;		/* CLOCK_BOOTTIME of the last renewal */
	int64_t expired;		/* the renewal whose end was counted */
	bool expiry_seen;
	bool unconfirmed_seen;		/* its hold was counted */
	struct tdm_filter filt[TDM_FILTER_MAX];	/* as filter_sync() set them */
	unsigned int nfilt;
};

static int64_t boot_ns(const struct store *s)
{
	return s->ops.clock_ns(s->ops.ctx, CLOCK_BOOTTIME);
}

static int64_t plan_now(const struct store *s)
{
	return s->ops.clock_ns(s->ops.ctx, s->in->clockid);
}

static void changed(struct store *s)
{
	if (s->ops.changed)
		s->ops.changed(s->ops.ctx);
}

struct store *store_new(const char *dev, const struct store_ops *ops,
			char *err, size_t errlen)
{
	struct store *s = calloc(1, sizeof(*s));

	if (s)
		s->in = calloc(1, sizeof(*s->in));
	if (!s || !s->in) {
		free(s);
		tdm_set_err(err, errlen, "out of memory");
		return NULL;
	}
	if (!dev[0] || tdm_strlcpy(s->dev, dev, sizeof(s->dev))) {
		free(s->in);
		free(s);
		tdm_set_err(err, errlen, "a device name of 1 to %zu characters is needed",
			    sizeof(s->dev) - 1);
		return NULL;
	}
	s->ops = *ops;
	return s;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	free(s->in);
	free(s);
}

const char *store_dev(const struct store *s)
{
	return s->dev;
}

/* ---- reading: the dump's catch-up ---- */

static bool lease_out(struct store *s, int64_t boot)
{
	struct tdm_qdisc_info *in = s->in;

	if (!in->lease_ns || boot - s->renewed < (int64_t)in->lease_ns)
		return false;
	if (!s->expiry_seen || s->expired != s->renewed) {
		s->expired = s->renewed;
		s->expiry_seen = true;
		in->xstats.lease_expiries++;
	}
	return true;
}

/* A pending plan whose base came takes over (tdmwin_promote()). */
static void promote(struct store *s, int64_t now)
{
	struct tdm_qdisc_info *in = s->in;

	if (!in->pending || now < in->pending_base || in->pending_unconfirmed)
		return;
	in->version = in->pending_version;
	in->cycle_ns = in->pending_cycle_ns;
	in->base_time = in->pending_base;
	in->guard_ns = in->pending_guard_ns;
	in->nwin = in->pending_nwin;
	memcpy(in->win, in->pending_win, sizeof(in->win));
	memcpy(in->win_class, in->pending_win_class, sizeof(in->win_class));
	in->pending = false;
	in->xstats.plan_switches++;
}

/* What a dump shows now: promoted, the lease and the xstats' mirrors. */
static void catch_up(struct store *s)
{
	struct tdm_qdisc_info *in = s->in;
	struct tc_tdmwin_xstats *x = &in->xstats;
	int64_t now, boot = boot_ns(s);

	if (!in->present)
		return;
	now = plan_now(s);
	promote(s, now);
	if (in->pending_unconfirmed && (!in->pending || now >= in->pending_base) &&
	    !s->unconfirmed_seen) {
		s->unconfirmed_seen = true;
		x->unconfirmed_holds++;
	}
	x->lease_held = lease_out(s, boot);
	in->lease_left_ns = in->lease_ns ? s->renewed + (int64_t)in->lease_ns -
					   boot : 0;
	x->plan_version = in->version;
	x->pending = in->pending;
	x->pending_version = in->pending ? in->pending_version : 0;
	x->pending_base_time = in->pending ? in->pending_base : 0;
	x->hold = in->hold;
	x->pending_unconfirmed = in->pending_unconfirmed;
}

int store_get(struct store *s, struct tdm_qdisc_info *info)
{
	catch_up(s);
	*info = *s->in;
	return 0;
}

struct nlmsghdr *store_msg(struct store *s, char *buf)
{
	catch_up(s);
	return tdm_qdisc_put_info(buf, 0, TC_H_ROOT, s->in);
}

/* ---- changing ---- */

/* The lease set (or renewed, with the same value), as tdmwin_lease_renew(). */
static void lease_renew(struct store *s, uint64_t lease)
{
	int64_t boot = boot_ns(s);

	lease_out(s, boot);	/* an end nobody saw is counted first */
	s->renewed = boot;
	s->in->lease_ns = lease;
}

static const char *const sched_errors[] = {
	[TDMWIN_SCHED_CYCLE_SHORT] = "Cycle time must be at least 1 us",
	[TDMWIN_SCHED_CYCLE_LONG] = "Cycle time must be at most 10 s",
	[TDMWIN_SCHED_BASE] = "Base time must not be negative",
	[TDMWIN_SCHED_OUTSIDE] = "Window lies outside the cycle",
	[TDMWIN_SCHED_SHORT] = "Window shorter than one minimum frame plus guard at this link speed",
	[TDMWIN_SCHED_OVERLAP] = "Windows overlap",
};

/* A new plan, from sender name's windows of p, checked as the kernel does. */
struct newplan {
	const struct tdm_sender *snd;
	uint32_t speed;
};

static int plan_check(const struct store *s, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name,
		      struct newplan *np, char *err, size_t errlen)
{
	struct tdmwin_window win[TDMWIN_MAX_WINDOWS];
	struct tdmwin_sched sched;
	enum tdmwin_sched_check c;

	np->snd = tdm_plan_sender(p, name);
	if (!np->snd) {
		errno = ENOENT;
		return tdm_set_err(err, errlen, "the plan has no sender '%s'", name);
	}
	if (!np->snd->nwin || np->snd->nwin > TDMWIN_MAX_WINDOWS) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "sender '%s' has %u windows (1 to %d)",
				   name, np->snd->nwin, TDMWIN_MAX_WINDOWS);
	}
	/* No device to ask: tdm.conf's link_speed, else the plan's. */
	np->speed = t->link_speed ? t->link_speed : p->link_speed;
	if (!np->speed) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: %s has no netdev to take its link speed from: set link_speed in tdm.conf or in the plan",
				   s->dev);
	}
	if (np->speed > TDMWIN_MAX_LINK_SPEED) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: link speed %u Mbit/s: at most %u",
				   np->speed, TDMWIN_MAX_LINK_SPEED);
	}
	if (p->guard_ns > TDMWIN_MAX_GUARD_NS) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: guard %u ns: at most %u",
				   p->guard_ns, TDMWIN_MAX_GUARD_NS);
	}
	tdm_gate_sched(&sched, win, p, np->snd, p->base_time);
	c = tdmwin_check_sched(&sched,
			       tdmwin_min_window(tdmwin_ps_per_byte(np->speed),
						 p->guard_ns));
	if (c != TDMWIN_SCHED_OK) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: %s", sched_errors[c]);
	}
	return 0;
}

/* The new plan into the active (pending: false) or pending slot. */
static void plan_put(struct tdm_qdisc_info *in, const struct tdm_plan *p,
		     const struct tdm_sender *snd, bool pending)
{
	struct tdm_window *win = pending ? in->pending_win : in->win;
	uint32_t *cls = pending ? in->pending_win_class : in->win_class;
	unsigned int i;

	for (i = 0; i < snd->nwin; i++) {
		win[i] = snd->win[i];
		win[i].dest = 0;
		cls[i] = tdm_qdisc_window_class(p, &snd->win[i]);
	}
	if (pending) {
		in->pending_version = p->version;
		in->pending_cycle_ns = p->cycle_ns;
		in->pending_base = p->base_time;
		in->pending_guard_ns = p->guard_ns;
		in->pending_nwin = snd->nwin;
	} else {
		in->version = p->version;
		in->cycle_ns = p->cycle_ns;
		in->base_time = p->base_time;
		in->guard_ns = p->guard_ns;
		in->nwin = snd->nwin;
	}
	in->pending = pending;
}

static int plan_set(struct store *s, const struct tdm_qdisc_target *t,
		    const struct tdm_plan *p, const char *name, bool hold,
		    bool unconfirmed, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in = s->in;
	struct newplan np;
	bool had_lease;

	if (plan_check(s, t, p, name, &np, err, errlen))
		return -1;
	if (unconfirmed && p->base_time <= s->ops.clock_ns(s->ops.ctx, p->clockid)) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: An unconfirmed plan needs a base time in the future");
	}
	catch_up(s);
	/* The kernel cannot change a qdisc's clock: tdmd starts afresh. */
	if (in->present && in->clockid != p->clockid) {
		memset(in, 0, sizeof(*in));
		s->expiry_seen = false;
	}
	had_lease = in->lease_ns != 0;
	plan_put(in, p, np.snd, in->present &&
		 p->base_time > s->ops.clock_ns(s->ops.ctx, p->clockid));
	if (!in->present) {
		in->handle = STORE_HANDLE;
		snprintf(in->kind, sizeof(in->kind), "tdmwin");
	}
	in->present = true;
	in->clockid = p->clockid;
	in->link_speed = np.speed;
	in->eff_link_speed = np.speed;
	in->bypass_prios = p->bypass_prios | t->extra_bypass;
	in->bypass_ptp = p->bypass_ptp;
	in->limit = t->limit;
	in->hold = hold;
	in->pending_unconfirmed = unconfirmed;
	s->unconfirmed_seen = false;
	/* As tdm_qdisc_install(): the member's lease, 0 clearing an old one. */
	if (t->lease_ns || had_lease)
		lease_renew(s, t->lease_ns);
	changed(s);
	return 0;
}

int store_install(struct store *s, const struct tdm_qdisc_target *t,
		  const struct tdm_plan *p, const char *name, bool hold,
		  char *err, size_t errlen)
{
	return plan_set(s, t, p, name, hold, false, err, errlen);
}

int store_prepare(struct store *s, const struct tdm_qdisc_target *t,
		  const struct tdm_plan *p, const char *name, char *err,
		  size_t errlen)
{
	/* A change keeps the hold as it is; a new plan store has none. */
	return plan_set(s, t, p, name, s->in->present && s->in->hold, true,
			err, errlen);
}

/* The qdisc is there, or err says it is not. */
static int present(const struct store *s, char *err, size_t errlen)
{
	if (s->in->present)
		return 0;
	errno = ENOENT;
	return tdm_set_err(err, errlen, "no tdmwin plan in the store of %s", s->dev);
}

/* Confirm or abort: the unconfirmed plan of that version, or an error. */
static int decided(struct store *s, uint32_t version, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in = s->in;

	if (present(s, err, errlen))
		return -1;
	catch_up(s);
	if (!in->pending_unconfirmed ||
	    (in->pending ? in->pending_version : in->version) != version) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: No unconfirmed plan of this version");
	}
	return 0;
}

int store_confirm(struct store *s, uint32_t version, char *err, size_t errlen)
{
	if (decided(s, version, err, errlen))
		return -1;
	s->in->pending_unconfirmed = false;
	changed(s);
	return 0;
}

int store_abort(struct store *s, uint32_t version, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in = s->in;

	if (decided(s, version, err, errlen))
		return -1;
	/* Back to the plan in force; with none to go back to, hold. */
	if (in->pending)
		in->pending = false;
	else
		in->hold = true;
	in->pending_unconfirmed = false;
	in->xstats.pending_aborts++;
	changed(s);
	return 0;
}

int store_renew(struct store *s, char *err, size_t errlen)
{
	if (present(s, err, errlen))
		return -1;
	if (!s->in->lease_ns) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: Nothing to renew: the device has no lease (set one with lease TIME)");
	}
	lease_renew(s, s->in->lease_ns);
	changed(s);
	return 0;
}

int store_set_lease(struct store *s, uint64_t lease_ns, char *err,
		    size_t errlen)
{
	if (present(s, err, errlen))
		return -1;
	if (lease_ns && (lease_ns < TDMWIN_MIN_LEASE_NS ||
			 lease_ns > TDMWIN_MAX_LEASE_NS)) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "store: Lease must be 0 (none) or from 100 ms to 1 h");
	}
	lease_renew(s, lease_ns);
	changed(s);
	return 0;
}

int store_set_hold(struct store *s, bool hold, char *err, size_t errlen)
{
	if (present(s, err, errlen))
		return -1;
	s->in->hold = hold;
	changed(s);
	return 0;
}

/* ---- the member's qdisc operations (struct member_io) ---- */

static int io_resolve(void *ctx, struct tdm_qdisc_target *t, char *err,
		      size_t errlen)
{
	struct store *s = ctx;

	if (strcmp(t->ifname, s->dev))
		return tdm_set_err(err, errlen, "store of %s asked for %.*s", s->dev,
				   (int)sizeof(t->ifname), t->ifname);
	t->ifindex = 0;		/* no netdev */
	return 0;
}

static int io_get(void *ctx, const struct tdm_qdisc_target *t,
		  struct tdm_qdisc_info *info, char *err, size_t errlen)
{
	(void)t;
	(void)err;
	(void)errlen;
	return store_get(ctx, info);
}

static int io_install(void *ctx, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name, bool hold,
		      char *err, size_t errlen)
{
	return store_install(ctx, t, p, name, hold, err, errlen);
}

static int io_prepare(void *ctx, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name, char *err,
		      size_t errlen)
{
	return store_prepare(ctx, t, p, name, err, errlen);
}

static int io_confirm(void *ctx, const struct tdm_qdisc_target *t,
		      uint32_t version, char *err, size_t errlen)
{
	(void)t;
	return store_confirm(ctx, version, err, errlen);
}

static int io_abort(void *ctx, const struct tdm_qdisc_target *t,
		    uint32_t version, char *err, size_t errlen)
{
	(void)t;
	return store_abort(ctx, version, err, errlen);
}

static int io_renew(void *ctx, const struct tdm_qdisc_target *t, char *err,
		    size_t errlen)
{
	(void)t;
	return store_renew(ctx, err, errlen);
}

static int io_set_lease(void *ctx, const struct tdm_qdisc_target *t,
			char *err, size_t errlen)
{
	return store_set_lease(ctx, t->lease_ns, err, errlen);
}

static int io_set_hold(void *ctx, const struct tdm_qdisc_target *t, bool hold,
		       char *err, size_t errlen)
{
	(void)t;
	return store_set_hold(ctx, hold, err, errlen);
}

/* One TX queue; mq and etf need a netdev (tdm.conf refuses both). */
static int io_tx_queues(void *ctx, const struct tdm_qdisc_target *t,
			unsigned int *n, char *err, size_t errlen)
{
	(void)ctx;
	(void)t;
	(void)err;
	(void)errlen;
	*n = 1;
	return 0;
}

static int io_mq(void *ctx, const struct tdm_qdisc_target *t, bool create,
		 uint32_t *handle, char *err, size_t errlen)
{
	(void)t;
	(void)create;
	*handle = 0;
	errno = EOPNOTSUPP;
	return tdm_set_err(err, errlen, "store of %s: no mq without a netdev",
			   ((struct store *)ctx)->dev);
}

static int io_txtime(void *ctx, const struct tdm_qdisc_target *t,
		     const struct tdm_etf *etf, char *err, size_t errlen)
{
	(void)t;
	(void)etf;
	errno = EOPNOTSUPP;
	return tdm_set_err(err, errlen, "store of %s: no etf child without a netdev",
			   ((struct store *)ctx)->dev);
}

/* No classifier to program: the filters are kept, as status shows them. */
static int io_filter_sync(void *ctx, const struct tdm_qdisc_target *t,
			  const struct tdm_filter *want, unsigned int n,
			  char *err, size_t errlen)
{
	struct store *s = ctx;

	(void)t;
	if (n > TDM_FILTER_MAX) {
		errno = E2BIG;
		return tdm_set_err(err, errlen, "%u filters: at most %d", n,
				   TDM_FILTER_MAX);
	}
	memcpy(s->filt, want, n * sizeof(*want));
	s->nfilt = n;
	return 0;
}

void store_member_io(struct store *s, struct member_io *io)
{
	io->qdisc_resolve = io_resolve;
	io->qdisc_get = io_get;
	io->qdisc_install = io_install;
	io->qdisc_prepare = io_prepare;
	io->qdisc_confirm = io_confirm;
	io->qdisc_abort = io_abort;
	io->qdisc_renew = io_renew;
	io->qdisc_set_lease = io_set_lease;
	io->qdisc_set_hold = io_set_hold;
	io->tx_queues = io_tx_queues;
	io->qdisc_mq = io_mq;
	io->qdisc_txtime = io_txtime;
	io->filter_sync = io_filter_sync;
	io->qdisc_ctx = s;
}
