// SPDX-License-Identifier: GPL-2.0
/*
 * libtdmgate: the tdmwin gate for senders the qdisc never sees.
 *
 * The gate is the qdisc's, asked from user space: the plan in force and
 * the pending one are struct tdmwin_sched, the answer for a frame is
 * tdmwin_launch_rule() of kmod/tdmwin_gate.h (the code sch_tdmwin.c runs
 * for launch times), and the wire is booked as the qdisc's wire clock
 * books it: a frame starts behind every frame booked before it and keeps
 * the wire busy for its wire time (the guard is not booked).  What is
 * here is the state around the arithmetic, kept as the qdisc keeps it:
 * a pending plan takes over at its base unless it is unconfirmed
 * (tdmwin_promote()), and hold, a lease that ran out (on CLOCK_BOOTTIME)
 * and an unconfirmed plan's base close the gate.
 *
 * The wire account is on the gate's clock; a step of that clock moves it
 * (Documentation/libtdmgate.rst, "Limits").
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_phc.h"
#include "tdmgate_int.h"

/* The longest sleep before the gate is asked again, as the qdisc's
 * watchdog: a clock step, a lease's end or a hold is seen that late.
 */
#define GATE_MAX_SLEEP_NS	10000000LL

_Static_assert(TDMGATE_MAX_WINDOWS == TDMWIN_MAX_WINDOWS,
	       "the public window limit is the qdisc's");
_Static_assert(TDMGATE_NEVER == TDMWIN_TIME_MAX,
	       "never is the end of the gate's time");

/* ---- clocks -------------------------------------------------------------- */

static s64 clock_read(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -EINVAL;
	return (s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

s64 gate_boot_ns(void)
{
	return clock_read(CLOCK_BOOTTIME);
}

int64_t tdmgate_now(const struct tdmgate *g)
{
	if (!g)
		return -EINVAL;
	return clock_read(g->clock);
}

int tdmgate_phc_clock(int fd)
{
	return tdm_phc_clockid(fd);
}

int tdmgate_set_clock(struct tdmgate *g, int clockid)
{
	if (!g || clock_read(clockid) < 0)
		return -EINVAL;
	g->clock = clockid;
	g->clock_set = true;
	return 0;
}

void tdmgate_set_spin(struct tdmgate *g, uint64_t ns)
{
	if (g)
		g->spin_ns = ns < GATE_MAX_SLEEP_NS ? ns : GATE_MAX_SLEEP_NS;
}

/* ---- plans --------------------------------------------------------------- */

static void plan_copy(struct gate_plan *dst, const struct gate_plan *src)
{
	*dst = *src;
	dst->s.win = dst->win;
}

/* Windows by offset, as the qdisc sorts them (at most 64: insertion). */
static void sort_windows(struct tdmwin_window *w, u32 n)
{
	u32 i, j;

	for (i = 1; i < n; i++) {
		struct tdmwin_window x = w[i];

		for (j = i; j && w[j - 1].offset > x.offset; j--)
			w[j] = w[j - 1];
		w[j] = x;
	}
}

/* One schedule, checked as the qdisc checks it at @ps_per_byte. */
static int load_sched(struct gate_plan *gp, const struct tdmgate_sched *in,
		      u32 ps_per_byte)
{
	u32 i;

	if (!in->nwin || in->nwin > TDMWIN_MAX_WINDOWS ||
	    in->guard > TDMWIN_MAX_GUARD_NS)
		return -EINVAL;
	memset(gp, 0, sizeof(*gp));
	for (i = 0; i < in->nwin; i++) {
		gp->win[i].offset = in->win[i].offset;
		gp->win[i].length = in->win[i].length;
	}
	sort_windows(gp->win, in->nwin);
	gp->s.base = in->base;
	gp->s.cycle = in->cycle;
	gp->s.nwin = in->nwin;
	gp->s.win = gp->win;
	gp->s.max_len = tdmwin_max_len(gp->win, in->nwin);
	gp->guard = in->guard;
	gp->version = in->version;
	if (tdmwin_check_sched(&gp->s, tdmwin_min_window(ps_per_byte, in->guard)))
		return -EINVAL;
	return 0;
}

static void store_sched(struct tdmgate_sched *out, const struct gate_plan *gp)
{
	u32 i;

	memset(out, 0, sizeof(*out));
	out->version = gp->version;
	out->guard = gp->guard;
	out->base = gp->s.base;
	out->cycle = gp->s.cycle;
	out->nwin = gp->s.nwin;
	for (i = 0; i < gp->s.nwin; i++) {
		out->win[i].offset = gp->win[i].offset;
		out->win[i].length = gp->win[i].length;
	}
}

static bool reserved_zero(const struct tdmgate_plan *p)
{
	size_t i;

	for (i = 0; i < sizeof(p->reserved) / sizeof(p->reserved[0]); i++)
		if (p->reserved[i])
			return false;
	return true;
}

int gate_set_plan(struct tdmgate *g, const struct tdmgate_plan *plan,
		  s64 lease_ref)
{
	struct gate_plan *cur, *next;
	u32 ps;
	int err = -EINVAL;

	if (!g || !plan || !reserved_zero(plan) || !plan->link_speed ||
	    plan->link_speed > TDMWIN_MAX_LINK_SPEED ||
	    clock_read(plan->clockid) < 0)
		return -EINVAL;
	if (plan->lease_ns && (plan->lease_ns < TDMWIN_MIN_LEASE_NS ||
			       plan->lease_ns > TDMWIN_MAX_LEASE_NS))
		return -EINVAL;
	/* Two plans of 64 windows: off the stack. */
	cur = malloc(2 * sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	next = cur + 1;
	ps = tdmwin_ps_per_byte(plan->link_speed);
	if (load_sched(cur, &plan->active, ps) ||
	    (plan->has_pending && load_sched(next, &plan->pending, ps)))
		goto out;

	plan_copy(&g->cur, cur);
	if (plan->has_pending)
		plan_copy(&g->next, next);
	g->has_next = plan->has_pending;
	g->unconfirmed = plan->unconfirmed;
	g->hold = plan->hold;
	g->gone = false;
	g->link_speed = plan->link_speed;
	g->ps_per_byte = ps;
	g->plan_clock = plan->clockid;
	if (!g->clock_set)
		g->clock = plan->clockid;
	g->lease_ns = plan->lease_ns;
	g->lease_end_boot = (plan->lease_at_boot ? plan->lease_at_boot :
			     lease_ref) + plan->lease_left_ns;
	err = 0;
out:
	free(cur);
	return err;
}

int tdmgate_set_plan(struct tdmgate *g, const struct tdmgate_plan *plan)
{
	return gate_set_plan(g, plan, gate_boot_ns());
}

int tdmgate_create(const struct tdmgate_plan *plan, struct tdmgate **gp)
{
	struct tdmgate *g;
	int err;

	if (!gp)
		return -EINVAL;
	*gp = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->free = INT64_MIN;	/* the wire is idle */
	err = tdmgate_set_plan(g, plan);
	if (err) {
		free(g);
		return err;
	}
	*gp = g;
	return 0;
}

void tdmgate_destroy(struct tdmgate *g)
{
	if (!g)
		return;
	gate_follow_stop(g);
	free(g);
}

int tdmgate_get_plan(const struct tdmgate *g, struct tdmgate_plan *plan)
{
	s64 boot = gate_boot_ns();

	if (!g || !plan)
		return -EINVAL;
	memset(plan, 0, sizeof(*plan));
	store_sched(&plan->active, &g->cur);
	if (g->has_next)
		store_sched(&plan->pending, &g->next);
	plan->has_pending = g->has_next;
	plan->unconfirmed = g->unconfirmed;
	plan->hold = g->hold;
	plan->link_speed = g->link_speed;
	plan->clockid = g->plan_clock;
	plan->lease_ns = g->lease_ns;
	plan->lease_left_ns = g->lease_ns ? g->lease_end_boot - boot : 0;
	plan->lease_at_boot = boot;
	return 0;
}

/* ---- the gate ------------------------------------------------------------ */

/* A pending plan whose base came takes over, unless unconfirmed. */
static void gate_promote(struct tdmgate *g, s64 now)
{
	if (!g->has_next || now < g->next.s.base || g->unconfirmed)
		return;
	plan_copy(&g->cur, &g->next);
	g->has_next = false;
}

static bool lease_out(const struct tdmgate *g)
{
	return g->lease_ns && gate_boot_ns() >= g->lease_end_boot;
}

enum tdmgate_state tdmgate_state(const struct tdmgate *g, int64_t now)
{
	if (!g || g->gone)
		return TDMGATE_GONE;
	if (g->hold)
		return TDMGATE_HOLD;
	if (lease_out(g))
		return TDMGATE_LEASE_OUT;
	if (g->unconfirmed && (!g->has_next || now >= g->next.s.base))
		return TDMGATE_UNCONFIRMED;
	return TDMGATE_OPEN;
}

uint64_t tdmgate_wire_ns(const struct tdmgate *g, uint32_t len)
{
	if (!g)
		return 0;
	return tdmwin_wire_ns(tdmwin_frame_bytes(len, 1, TDMWIN_WIRE_OVERHEAD),
			      g->ps_per_byte);
}

/*
 * The launch time of a frame of @len at @now behind the wire's bookings,
 * booking nothing: 0 with *launch and *wire, -EAGAIN with *launch
 * TDMGATE_NEVER (the gate holds), -EMSGSIZE, -EINVAL.
 */
static int gate_launch(struct tdmgate *g, s64 now, u32 len, s64 *launch,
		       u64 *wire)
{
	u64 backlog;
	int err;

	if (!g || !launch || !len || now < 0)
		return -EINVAL;
	if (g->gone || g->hold || lease_out(g)) {
		*launch = TDMGATE_NEVER;
		return -EAGAIN;
	}
	gate_promote(g, now);
	*wire = tdmgate_wire_ns(g, len);
	backlog = g->free > now ? (u64)g->free - (u64)now : 0;
	err = tdmwin_launch_rule(&g->cur.s, g->cur.guard,
				 g->has_next ? &g->next.s : NULL,
				 g->next.guard, g->unconfirmed, now, backlog,
				 *wire, launch);
	if (err == -EAGAIN)
		*launch = TDMGATE_NEVER;
	return err == -ENOSPC ? -EMSGSIZE : err;
}

/* The frame starts at @launch: the wire is busy until it has gone. */
static void gate_book(struct tdmgate *g, s64 launch, u64 wire)
{
	g->free = tdmwin_add_sat(launch, wire);
}

int tdmgate_next_at(struct tdmgate *g, int64_t now, uint32_t len,
		    int64_t *launch)
{
	u64 wire;
	int err = gate_launch(g, now, len, launch, &wire);

	if (!err)
		gate_book(g, *launch, wire);
	return err;
}

int tdmgate_burst_at(struct tdmgate *g, int64_t now, const uint32_t *len,
		     int64_t *launch, unsigned int n)
{
	unsigned int i;
	int err;

	if (!g || (n && (!len || !launch)) || n > INT32_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = tdmgate_next_at(g, now, len[i], &launch[i]);
		if (err)
			return i ? (int)i : err;
	}
	return (int)n;
}

int tdmgate_try_at(struct tdmgate *g, int64_t now, uint32_t len,
		   int64_t *when)
{
	u64 wire;
	int err = gate_launch(g, now, len, when, &wire);

	if (err)
		return err;
	/* Now, behind the bookings, or not yet: the qdisc's dequeue. */
	if (*when != (g->free > now ? g->free : now))
		return -EAGAIN;
	gate_book(g, *when, wire);
	return 0;
}

/* Read the gate's clock and the qdisc's news: now, or a negative errno. */
static s64 gate_tick(struct tdmgate *g)
{
	s64 now;

	if (!g)
		return -EINVAL;
	now = clock_read(g->clock);
	if (now >= 0)
		gate_follow_tick(g, now);
	return now;
}

int tdmgate_next(struct tdmgate *g, uint32_t len, int64_t *launch)
{
	s64 now = gate_tick(g);

	return now < 0 ? (int)now : tdmgate_next_at(g, now, len, launch);
}

int tdmgate_burst(struct tdmgate *g, const uint32_t *len, int64_t *launch,
		  unsigned int n)
{
	s64 now = gate_tick(g);

	return now < 0 ? (int)now : tdmgate_burst_at(g, now, len, launch, n);
}

int tdmgate_try(struct tdmgate *g, uint32_t len, int64_t *when)
{
	s64 now = gate_tick(g);

	return now < 0 ? (int)now : tdmgate_try_at(g, now, len, when);
}

/* ---- waiting ------------------------------------------------------------- */

static struct timespec ns_to_ts(s64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL,
			       .tv_nsec = ns % 1000000000LL };

	return ts;
}

/*
 * Sleep from @now until @until on the gate's clock: on the news socket
 * when following (woken by news), else clock_nanosleep(); a PHC cannot be
 * slept on, so its distance is slept on CLOCK_MONOTONIC.  0 or -EINTR.
 */
static int gate_sleep(struct tdmgate *g, s64 now, s64 until)
{
	struct timespec ts = ns_to_ts(until - now);
	int rc;

	if (g->follow) {
		struct pollfd pfd = { .fd = tdmgate_follow_fd(g),
				      .events = POLLIN };

		rc = ppoll(&pfd, 1, &ts, NULL);
		if (rc < 0 && errno == EINTR)
			return -EINTR;
		if (rc > 0)
			tdmgate_follow_read(g);	/* else ppoll wakes at once */
		return 0;
	}
	ts = ns_to_ts(until);
	rc = clock_nanosleep(g->clock, TIMER_ABSTIME, &ts, NULL);
	if (rc && rc != EINTR) {
		ts = ns_to_ts(until - now);
		rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	return rc == EINTR ? -EINTR : 0;
}

static int gate_wait(struct tdmgate *g, u32 len, s64 deadline, s64 *start,
		     bool busy)
{
	s64 now, when, until;
	int err;

	if (!g || !start || !len)
		return -EINVAL;
	for (;;) {
		now = gate_tick(g);
		if (now < 0)
			return (int)now;
		err = tdmgate_try_at(g, now, len, &when);
		if (!err)
			*start = when;
		if (err != -EAGAIN)
			return err;
		if (now >= deadline)
			return -ETIMEDOUT;
		until = when < deadline ? when : deadline;
		if (busy || until - now <= (s64)g->spin_ns)
			continue;
		until -= (s64)g->spin_ns;
		if (until - now > GATE_MAX_SLEEP_NS)
			until = now + GATE_MAX_SLEEP_NS;
		err = gate_sleep(g, now, until);
		if (err)
			return err;
	}
}

int tdmgate_wait(struct tdmgate *g, uint32_t len, int64_t deadline,
		 int64_t *start)
{
	return gate_wait(g, len, deadline, start, false);
}

int tdmgate_poll(struct tdmgate *g, uint32_t len, int64_t deadline,
		 int64_t *start)
{
	return gate_wait(g, len, deadline, start, true);
}

const char *tdmgate_version(void)
{
	return TDM_VERSION;
}
