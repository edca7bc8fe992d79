// SPDX-License-Identifier: GPL-2.0
/*
 * libtdmgate against a brute-force reference built on the kernel header's
 * single-instant verdict (tdmwin_gate() of kmod/tdmwin_gate.h, itself
 * tested exhaustively by test_gate): the reference scans every nanosecond
 * from the frame's earliest start for the first at which the plan in
 * force then lets it start, ending before a pending plan's base, with its
 * own wire account and its own wire time of a frame.  Over many small
 * random plans (1 us cycles at 1.6 Tbit/s, where a frame is a few ns),
 * every start instant of two cycles, with and without a pending plan, an
 * unconfirmed one and the hold; then sequences of frames booked back to
 * back.  Beside it, fixed cases worked by hand (guard, oversize frames,
 * the switch at a pending base, hold, lease, unconfirmed plans), the
 * batch call against single calls, the non-blocking call's retry instant,
 * the blocking and busy-polling calls on a real clock, the parsing of the
 * qdisc's rtnetlink messages, and bad input of every kind.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_gate.h"
#include "tdm_qdisc.h"
#include "tdmgate.h"

#define US	1000LL
#define MS	1000000LL
#define TBIT	1600000U	/* Mbit/s: 5 ps a byte, the shortest frame 1 ns */

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return n ? (rng * 0x9e3779b97f4a7c15ULL) % n : 0;
}

static int64_t clock_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sched_set(struct tdmgate_sched *s, uint64_t cycle, int64_t base,
		      uint32_t guard, unsigned int nwin, const uint64_t *ow)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->cycle = cycle;
	s->base = base;
	s->guard = guard;
	s->nwin = nwin;
	for (i = 0; i < nwin; i++) {
		s->win[i].offset = ow[2 * i];
		s->win[i].length = ow[2 * i + 1];
	}
}

/* One plan of one schedule on CLOCK_MONOTONIC. */
static void plan_one(struct tdmgate_plan *p, uint64_t cycle, int64_t base,
		     uint32_t guard, uint32_t speed, unsigned int nwin,
		     const uint64_t *ow)
{
	memset(p, 0, sizeof(*p));
	sched_set(&p->active, cycle, base, guard, nwin, ow);
	p->active.version = 1;
	p->link_speed = speed;
	p->clockid = CLOCK_MONOTONIC;
}

static struct tdmgate *gate_new(const struct tdmgate_plan *p)
{
	struct tdmgate *g = NULL;

	assert_int_equal(tdmgate_create(p, &g), 0);
	assert_non_null(g);
	return g;
}

/* ---- the reference ------------------------------------------------------ */

struct ref {
	struct tdmwin_sched cur, next;
	struct tdmwin_window cw[TDMWIN_MAX_WINDOWS], nw[TDMWIN_MAX_WINDOWS];
	uint32_t guard, next_guard, speed;
	bool has_next, unconfirmed, hold;
	int64_t free;
};

static void ref_sched(struct tdmwin_sched *s, struct tdmwin_window *w,
		      const struct tdmgate_sched *in)
{
	unsigned int i;

	s->base = in->base;
	s->cycle = in->cycle;
	s->nwin = in->nwin;
	s->max_len = 0;
	for (i = 0; i < in->nwin; i++) {
		w[i].offset = in->win[i].offset;
		w[i].length = in->win[i].length;
		if (w[i].length > s->max_len)
			s->max_len = w[i].length;
	}
	s->win = w;
}

/* The windows of the random plans are made sorted. */
static void ref_init(struct ref *r, const struct tdmgate_plan *p)
{
	memset(r, 0, sizeof(*r));
	ref_sched(&r->cur, r->cw, &p->active);
	ref_sched(&r->next, r->nw, &p->pending);
	r->guard = p->active.guard;
	r->next_guard = p->pending.guard;
	r->speed = p->link_speed;
	r->has_next = p->has_pending;
	r->unconfirmed = p->unconfirmed;
	r->hold = p->hold;
	r->free = INT64_MIN;
}

/* Wire time from first principles: padded frame, 24 bytes, rounded up. */
static uint64_t ref_wire(const struct ref *r, uint32_t len)
{
	uint64_t ps = (8000000ULL + r->speed - 1) / r->speed;
	uint64_t bytes = (len < 60 ? 60 : len) + 24;

	return (bytes * ps + 999) / 1000;
}

/* May a frame of @wire start at @t, by the plan in force at @t? */
static bool ref_fits(const struct ref *r, int64_t t, uint64_t wire)
{
	bool next = r->has_next && !r->unconfirmed && t >= r->next.base;
	const struct tdmwin_sched *s = next ? &r->next : &r->cur;
	uint64_t need = wire + (next ? r->next_guard : r->guard);
	int64_t stop = r->has_next && !next ? r->next.base : INT64_MAX;

	if (tdmwin_gate(s, t, need).verdict != TDMWIN_SEND)
		return false;
	return t + (int64_t)need <= stop;
}

/*
 * The earliest start of a frame of @len at @now behind the reference's
 * wire, scanning every ns: 0 with *launch, -EAGAIN (the gate holds),
 * -EMSGSIZE (nothing within three cycles past every base: never).
 */
static int ref_launch(const struct ref *r, int64_t now, uint32_t len,
		      int64_t *launch)
{
	uint64_t wire = ref_wire(r, len);
	int64_t t = r->free > now ? r->free : now, end;

	*launch = TDMGATE_NEVER;
	if (r->hold || (r->unconfirmed && !r->has_next))
		return -EAGAIN;
	end = t > r->cur.base ? t : r->cur.base;
	if (r->has_next && r->next.base > end)
		end = r->next.base;
	end += 3 * (int64_t)(r->cur.cycle > r->next.cycle ? r->cur.cycle :
			     r->next.cycle);
	for (; t < end; t++) {
		if (r->unconfirmed) {
			/* Under the plan in force only, before the base. */
			if (tdmwin_gate(&r->cur, t, wire + r->guard).verdict !=
			    TDMWIN_SEND)
				continue;
			if (t + (int64_t)(wire + r->guard) > r->next.base)
				return -EAGAIN;
			*launch = t;
			return 0;
		}
		if (ref_fits(r, t, wire)) {
			*launch = t;
			return 0;
		}
	}
	return -EMSGSIZE;
}

/* Random windows, sorted, each at least @min long, inside [0, cycle). */
static unsigned int random_windows(uint64_t *ow, uint64_t cycle, uint64_t min)
{
	unsigned int n = 0, max = 1 + (unsigned int)rnd(4);
	uint64_t pos = rnd(cycle / 4);

	while (n < max && pos + min <= cycle) {
		uint64_t len = min + rnd((cycle - pos - min) / 2 + 1);

		ow[2 * n] = pos;
		ow[2 * n + 1] = len;
		n++;
		pos += len + rnd(cycle / 3);
	}
	return n;
}

/* A random small plan: 1 us cycles at 1.6 Tbit/s, maybe a pending plan. */
static void random_plan(struct tdmgate_plan *p)
{
	uint64_t ow[8], cycle = 1000 + rnd(200);
	uint32_t guard = (uint32_t)rnd(4);
	unsigned int n = random_windows(ow, cycle, 1 + guard + rnd(30));

	plan_one(p, cycle, 1000 + (int64_t)rnd(500), guard, TBIT, n, ow);
	if (rnd(3)) {
		cycle = 1000 + rnd(200);
		guard = (uint32_t)rnd(4);
		n = random_windows(ow, cycle, 1 + guard + rnd(30));
		sched_set(&p->pending, cycle, p->active.base + 200 +
			  (int64_t)rnd(2000), guard, n, ow);
		p->pending.version = 2;
		p->has_pending = true;
	}
	p->unconfirmed = rnd(5) == 0;
	p->hold = rnd(20) == 0;
}

/* Frame lengths from the shortest to about 40 ns at 1.6 Tbit/s. */
static uint32_t random_len(void)
{
	return rnd(4) ? (uint32_t)(1 + rnd(1500)) : (uint32_t)(1500 + rnd(7000));
}

static void test_reference_single(void **state)
{
	struct tdmgate_plan p;
	struct ref r;
	int plan;

	(void)state;
	for (plan = 0; plan < 40; plan++) {
		int64_t now, from, to;

		random_plan(&p);
		ref_init(&r, &p);
		from = p.active.base - 20;
		to = (p.has_pending ? p.pending.base : p.active.base) +
		     2 * (int64_t)p.active.cycle;
		for (now = from; now < to; now++) {
			uint32_t len = random_len();
			struct tdmgate *g = gate_new(&p);
			int64_t want, got, when;
			int rw = ref_launch(&r, now, len, &want);
			int rg = tdmgate_next_at(g, now, len, &got);

			assert_int_equal(rg, rw);
			assert_int_equal(got, want);
			tdmgate_destroy(g);

			/* Non-blocking: now, or -EAGAIN and the launch. */
			g = gate_new(&p);
			rg = tdmgate_try_at(g, now, len, &when);
			if (rw == 0 && want == now) {
				assert_int_equal(rg, 0);
			} else {
				assert_int_equal(rg, rw ? rw : -EAGAIN);
				if (rw != -EMSGSIZE)
					assert_int_equal(when, want);
			}
			/* Trying again at the instant given succeeds. */
			if (rg == -EAGAIN && when != TDMGATE_NEVER) {
				assert_int_equal(tdmgate_try_at(g, when, len, &got), 0);
				assert_int_equal(got, when);
			}
			tdmgate_destroy(g);
		}
	}
}

/* Back to back: one gate, the reference's own wire. */
static void test_reference_wire(void **state)
{
	struct tdmgate_plan p;
	struct ref r;
	int plan, i;

	(void)state;
	for (plan = 0; plan < 200; plan++) {
		struct tdmgate *g;
		int64_t now;

		random_plan(&p);
		ref_init(&r, &p);
		g = gate_new(&p);
		now = p.active.base - 10 + (int64_t)rnd(100);
		for (i = 0; i < 60; i++) {
			uint32_t len = random_len();
			int64_t want, got;
			int rw = ref_launch(&r, now, len, &want), rg;

			if (rnd(2)) {
				rg = tdmgate_next_at(g, now, len, &got);
				assert_int_equal(rg, rw);
				assert_int_equal(got, want);
				if (!rw)
					r.free = want + (int64_t)ref_wire(&r, len);
			} else {
				int64_t start = r.free > now ? r.free : now;

				rg = tdmgate_try_at(g, now, len, &got);
				if (!rw && want == start) {
					assert_int_equal(rg, 0);
					assert_int_equal(got, start);
					r.free = want + (int64_t)ref_wire(&r, len);
				} else {
					assert_int_equal(rg, rw ? rw : -EAGAIN);
				}
			}
			now += (int64_t)rnd(rnd(4) ? 8 : 400);
		}
		tdmgate_destroy(g);
	}
}

/* ---- fixed cases --------------------------------------------------------- */

/* 10 Gbit/s: a 1500-byte frame is 1524 bytes on the wire, 1220 ns. */
#define G10		10000U
#define W1500		1220

static void test_back_to_back(void **state)
{
	const uint64_t ow[] = { 0, 5000 };
	const uint32_t len[] = { 1500, 1500, 1500, 1500, 1500 };
	int64_t launch[5];
	struct tdmgate_plan p;
	struct tdmgate *g;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	g = gate_new(&p);
	assert_int_equal(tdmgate_wire_ns(g, 1500), W1500);
	assert_int_equal(tdmgate_wire_ns(g, 1), 68);	/* padded to 60 */
	assert_int_equal(tdmgate_burst_at(g, 0, len, launch, 5), 5);
	/* Four fit behind each other; the fifth would end at 6100. */
	assert_int_equal(launch[0], 0);
	assert_int_equal(launch[1], W1500);
	assert_int_equal(launch[2], 2 * W1500);
	assert_int_equal(launch[3], 3 * W1500);
	assert_int_equal(launch[4], 10000);
	/* The wire is busy until the fifth has gone. */
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &launch[0]), 0);
	assert_int_equal(launch[0], 10000 + W1500);
	/* try: behind the bookings, it may be handed over now. */
	assert_int_equal(tdmgate_try_at(g, 10000, 1500, &launch[0]), 0);
	assert_int_equal(launch[0], 10000 + 2 * W1500);
	tdmgate_destroy(g);
}

static void test_guard(void **state)
{
	const uint64_t ow[] = { 0, 5000 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t;

	(void)state;
	plan_one(&p, 10000, 0, 100, G10, 1, ow);
	g = gate_new(&p);
	/* The last start: 5000 - 1220 - 100. */
	assert_int_equal(tdmgate_next_at(g, 3680, 1500, &t), 0);
	assert_int_equal(t, 3680);
	tdmgate_destroy(g);
	g = gate_new(&p);
	assert_int_equal(tdmgate_try_at(g, 3681, 1500, &t), -EAGAIN);
	assert_int_equal(t, 10000);
	assert_int_equal(tdmgate_next_at(g, 3681, 1500, &t), 0);
	assert_int_equal(t, 10000);
	tdmgate_destroy(g);
	/* The guard ends the window; it is not booked on the wire. */
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(t, W1500);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(t, 2 * W1500);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(t, 3 * W1500);	/* 3660 + 1220 + 100 = 4980 */
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(t, 10000);	/* 4880 + 1220 + 100 > 5000 */
	tdmgate_destroy(g);
}

static void test_oversize(void **state)
{
	const uint64_t ow[] = { 0, 2000 }, big[] = { 0, 9000 };
	const uint32_t len[] = { 1500, 9000, 1500 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t, l[3];

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 0, 9000, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_try_at(g, 0, 9000, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_poll(g, 9000, tdmgate_now(g) + 1000 * MS, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_wait(g, 9000, tdmgate_now(g) + 1000 * MS, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_next_at(g, 0, UINT32_MAX, &t), -EMSGSIZE);
	/* A burst stops before it: the count, then the error. */
	assert_int_equal(tdmgate_burst_at(g, 0, len, l, 3), 1);
	assert_int_equal(tdmgate_burst_at(g, 0, len + 1, l, 2), -EMSGSIZE);
	tdmgate_destroy(g);
	/* It fits the pending plan: it waits for its base. */
	sched_set(&p.pending, 10000, 1000000, 0, 1, big);
	p.has_pending = true;
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 0, 9000, &t), 0);
	assert_int_equal(t, 1000000);
	tdmgate_destroy(g);
}

static void test_pending_switch(void **state)
{
	const uint64_t a[] = { 0, 5000 }, b[] = { 7000, 2000 }, all[] = { 0, 10000 };
	struct tdmgate_plan p, q;
	struct tdmgate *g;
	int64_t t;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, a);
	sched_set(&p.pending, 10000, 1000000, 0, 1, b);
	p.pending.version = 2;
	p.has_pending = true;
	g = gate_new(&p);
	/* Before the base: the active plan's windows. */
	assert_int_equal(tdmgate_next_at(g, 980000, 1500, &t), 0);
	assert_int_equal(t, 980000);
	/* Closed until the base, then the pending plan's window. */
	assert_int_equal(tdmgate_next_at(g, 995000, 1500, &t), 0);
	assert_int_equal(t, 1007000);
	assert_int_equal(tdmgate_get_plan(g, &q), 0);
	assert_int_equal(q.active.version, 1);	/* not before its base */
	/* At the base it takes over; the frame goes behind the booked one. */
	assert_int_equal(tdmgate_try_at(g, 1000000, 64, &t), 0);
	assert_int_equal(t, 1007000 + W1500);
	assert_int_equal(tdmgate_get_plan(g, &q), 0);
	assert_int_equal(q.active.version, 2);
	assert_false(q.has_pending);
	tdmgate_destroy(g);

	/* A frame never straddles the switch. */
	plan_one(&p, 10000, 0, 0, G10, 1, all);
	sched_set(&p.pending, 10000, 1005000, 0, 1, all);
	p.has_pending = true;
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 1003780, 1500, &t), 0);
	assert_int_equal(t, 1003780);		/* ends at the base */
	tdmgate_destroy(g);
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 1003781, 1500, &t), 0);
	assert_int_equal(t, 1005000);		/* would end 1 ns past it */
	assert_int_equal(tdmgate_next_at(g, 1003781, 64, &t), 0);
	assert_int_equal(t, 1005000 + W1500);	/* behind it */
	tdmgate_destroy(g);
}

static void test_hold(void **state)
{
	const uint64_t ow[] = { 0, 10000 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t, t0;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	p.hold = true;
	g = gate_new(&p);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_HOLD);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	assert_int_equal(tdmgate_try_at(g, 5, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	/* Blocking: until the deadline. */
	t0 = tdmgate_now(g);
	assert_int_equal(tdmgate_wait(g, 1500, t0 + 20 * MS, &t), -ETIMEDOUT);
	assert_true(tdmgate_now(g) >= t0 + 20 * MS);
	assert_int_equal(tdmgate_poll(g, 1500, t0, &t), -ETIMEDOUT);
	/* Release. */
	p.hold = false;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(t, 0);
	tdmgate_destroy(g);
}

static void test_lease(void **state)
{
	const uint64_t ow[] = { 0, 10000 };
	struct tdmgate_plan p, q;
	struct tdmgate *g;
	int64_t t;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	p.lease_ns = 200 * MS;
	p.lease_left_ns = 30 * MS;
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	assert_int_equal(tdmgate_get_plan(g, &q), 0);
	assert_true(q.lease_left_ns > 0 && q.lease_left_ns <= 30 * MS);
	/* It runs out on CLOCK_BOOTTIME: the gate holds. */
	clock_nanosleep(CLOCK_MONOTONIC, 0,
			&(struct timespec){ .tv_nsec = 40 * MS }, NULL);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_LEASE_OUT);
	assert_int_equal(tdmgate_next_at(g, 20000, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	/* Renewed. */
	p.lease_left_ns = 200 * MS;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_next_at(g, 20000, 1500, &t), 0);
	/* As of a given instant: left 30 ms, 50 ms ago. */
	p.lease_left_ns = 30 * MS;
	p.lease_at_boot = clock_now(CLOCK_BOOTTIME) - 50 * MS;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_try_at(g, 40000, 1500, &t), -EAGAIN);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_LEASE_OUT);
	/* Ran out already. */
	p.lease_at_boot = 0;
	p.lease_left_ns = -5;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_next_at(g, 40000, 1500, &t), -EAGAIN);
	/* No lease: never runs out. */
	p.lease_ns = 0;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_next_at(g, 40000, 1500, &t), 0);
	tdmgate_destroy(g);
}

static void test_unconfirmed(void **state)
{
	const uint64_t a[] = { 0, 5000 }, b[] = { 5000, 5000 };
	struct tdmgate_plan p, q;
	struct tdmgate *g;
	int64_t t;

	(void)state;
	/* The only plan is unconfirmed: the gate holds. */
	plan_one(&p, 10000, 0, 0, G10, 1, a);
	p.unconfirmed = true;
	g = gate_new(&p);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_UNCONFIRMED);
	assert_int_equal(tdmgate_next_at(g, 0, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	tdmgate_destroy(g);

	/* A pending unconfirmed plan: before its base the active one. */
	sched_set(&p.pending, 10000, 100000, 0, 1, b);
	p.pending.version = 2;
	p.has_pending = true;
	g = gate_new(&p);
	assert_int_equal(tdmgate_state(g, 90000), TDMGATE_OPEN);
	assert_int_equal(tdmgate_next_at(g, 90000, 1500, &t), 0);
	assert_int_equal(t, 90000);
	/* The next fit would be at the base, on the unconfirmed plan. */
	assert_int_equal(tdmgate_next_at(g, 94000, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	/* From the base: held, and the plan does not take over. */
	assert_int_equal(tdmgate_state(g, 100000), TDMGATE_UNCONFIRMED);
	assert_int_equal(tdmgate_try_at(g, 105000, 1500, &t), -EAGAIN);
	assert_int_equal(tdmgate_get_plan(g, &q), 0);
	assert_int_equal(q.active.version, 1);
	assert_true(q.has_pending && q.unconfirmed);
	/* Confirmed: it takes over at once (its base is past). */
	p.unconfirmed = false;
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	assert_int_equal(tdmgate_try_at(g, 105000, 1500, &t), 0);
	assert_int_equal(t, 105000);
	assert_int_equal(tdmgate_get_plan(g, &q), 0);
	assert_int_equal(q.active.version, 2);
	tdmgate_destroy(g);
}

static void test_burst_is_singles(void **state)
{
	struct tdmgate_plan p;
	int round;

	(void)state;
	for (round = 0; round < 300; round++) {
		uint32_t len[32];
		int64_t a[32], b[32], now;
		unsigned int n = (unsigned int)rnd(33), i;
		struct tdmgate *ga, *gb;
		int ra, rb = 0;

		random_plan(&p);
		ga = gate_new(&p);
		gb = gate_new(&p);
		now = p.active.base + (int64_t)rnd(3000);
		for (i = 0; i < n; i++)
			len[i] = random_len();
		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		ra = tdmgate_burst_at(ga, now, len, a, n);
		for (i = 0; i < n; i++) {
			int e = tdmgate_next_at(gb, now, len[i], &b[i]);

			if (e) {
				rb = i ? (int)i : e;
				break;
			}
		}
		if (i == n)
			rb = (int)n;
		assert_int_equal(ra, rb);
		assert_memory_equal(a, b, sizeof(a[0]) * (ra > 0 ? (size_t)ra : 0));
		/* And the wires agree after it. */
		assert_int_equal(tdmgate_next_at(ga, now, 64, &a[0]),
				 tdmgate_next_at(gb, now, 64, &b[0]));
		assert_int_equal(a[0], b[0]);
		tdmgate_destroy(ga);
		tdmgate_destroy(gb);
	}
}

static void test_try_retry(void **state)
{
	const uint64_t ow[] = { 2000, 3000, 7000, 1500 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 2, ow);
	g = gate_new(&p);
	assert_int_equal(tdmgate_try_at(g, 0, 1500, &t), -EAGAIN);
	assert_int_equal(t, 2000);
	assert_int_equal(tdmgate_try_at(g, 4000, 1500, &t), -EAGAIN);
	assert_int_equal(t, 7000);	/* 4000 + 1220 > 5000 */
	assert_int_equal(tdmgate_try_at(g, 7300, 1500, &t), -EAGAIN);
	assert_int_equal(t, 12000);	/* 7300 + 1220 > 8500 */
	assert_int_equal(tdmgate_try_at(g, 7000, 1500, &t), 0);
	assert_int_equal(t, 7000);
	/* Behind its own frame: still now, which starts at 8220... */
	assert_int_equal(tdmgate_try_at(g, 7100, 64, &t), 0);
	assert_int_equal(t, 8220);
	/* ...until the window cannot take it behind them. */
	assert_int_equal(tdmgate_try_at(g, 7200, 1500, &t), -EAGAIN);
	assert_int_equal(t, 12000);
	tdmgate_destroy(g);
}

/* ---- on the real clock ---------------------------------------------------- */

static void test_wait_real_clock(void **state)
{
	const uint64_t ow[] = { 1 * MS, 1 * MS };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		int64_t now, start, after, prev = -W1500;
		uint64_t pos;
		int k;

		plan_one(&p, 2 * MS, clock_now(CLOCK_MONOTONIC), 1000, G10, 1, ow);
		g = gate_new(&p);
		tdmgate_set_spin(g, i ? 0 : 50 * US);
		for (k = 0; k < 5; k++) {
			now = tdmgate_now(g);
			assert_int_equal((i ? tdmgate_poll : tdmgate_wait)(g, 1500,
					 now + 100 * MS, &start), 0);
			after = tdmgate_now(g);
			/*
			 * Started no earlier than asked, behind the frame
			 * before, no later than the frames booked allow, and
			 * inside a window with room for it and the guard.
			 */
			assert_true(start >= now && start >= prev + W1500);
			assert_true(start <= (after > prev + W1500 ? after :
					       prev + W1500));
			prev = start;
			pos = (uint64_t)(start - p.active.base) % (2 * MS);
			assert_true(pos >= 1 * MS && pos + W1500 + 1000 <= 2 * MS);
		}
		/* A closed gate and a deadline in the past: at once. */
		now = tdmgate_now(g);
		pos = (uint64_t)(now - p.active.base) % (2 * MS);
		if (pos < 900 * US)
			assert_int_equal(tdmgate_wait(g, 1500, now - 1, &start),
					 -ETIMEDOUT);
		tdmgate_destroy(g);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_wait_interrupted(void **state)
{
	const uint64_t ow[] = { 0, 1000 };
	/* Again every 5 ms: one that comes between two sleeps is missed. */
	struct itimerval it = { .it_value = { .tv_usec = 20000 },
				.it_interval = { .tv_usec = 5000 } }, off = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t;
	int err;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	p.hold = true;
	g = gate_new(&p);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/* A deadline, so that a test gone wrong ends (-ETIMEDOUT). */
	err = tdmgate_wait(g, 1500, tdmgate_now(g) + 5000 * MS, &t);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	assert_int_equal(err, -EINTR);
	tdmgate_destroy(g);
}

static void test_clocks(void **state)
{
	const uint64_t ow[] = { 0, 1000 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	clockid_t phc = tdmgate_phc_clock(3);
	int64_t a, b;

	(void)state;
	/* FD_TO_CLOCKID(3): ~3 << 3 | CLOCKFD. */
	assert_int_equal(phc, (clockid_t)((~3u << 3) | 3));
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	p.clockid = CLOCK_TAI;
	g = gate_new(&p);
	a = clock_now(CLOCK_TAI);
	b = tdmgate_now(g);
	assert_true(b >= a && b - a < 1000 * MS);
	/* No PHC on fd 1000: refused, the clock kept. */
	assert_int_equal(tdmgate_set_clock(g, tdmgate_phc_clock(1000)), -EINVAL);
	assert_int_equal(tdmgate_set_clock(g, CLOCK_MONOTONIC), 0);
	a = clock_now(CLOCK_MONOTONIC);
	b = tdmgate_now(g);
	assert_true(b >= a && b - a < 1000 * MS);
	/* A new plan keeps the clock chosen. */
	assert_int_equal(tdmgate_set_plan(g, &p), 0);
	b = tdmgate_now(g);
	assert_true(b - a < 1000 * MS);
	assert_int_equal(tdmgate_now(NULL), -EINVAL);
	assert_string_equal(tdmgate_version(), TDM_VERSION);
	tdmgate_destroy(g);
}

/* ---- the qdisc's messages -------------------------------------------------- */

struct qmsg {
	uint16_t type;
	int ifindex;
	uint32_t parent;
	const char *kind;
	bool pending, unconfirmed, hold, bad;
	uint64_t lease;
	int64_t left;
};

static void set_windows(struct tdm_window *win, uint32_t *cls,
			const uint64_t *ow, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		win[i].offset = ow[2 * i];
		win[i].length = ow[2 * i + 1];
		cls[i] = TDMWIN_CLASS_GATED;
	}
}

/*
 * An RTM_NEWQDISC (or DEL) as tdmwin_dump() builds it, by libtdm's
 * encoder of the dump (what tdmd's plan store sends); its length.  Bad:
 * the guard retyped as a cycle time of 4 bytes, which no parser takes.
 */
static size_t build_msg(char *buf, const struct qmsg *m)
{
	const uint64_t a[] = { 5000, 2000, 0, 1000 }, b[] = { 100, 900 };
	struct tdm_qdisc_info *in = calloc(1, sizeof(*in));
	char *scratch = malloc(TDM_QDISC_MSG_MAX);
	struct nlmsghdr *nlh;
	struct nlattr *a1, *o;
	size_t n;

	assert_non_null(in);
	assert_non_null(scratch);
	in->other = strcmp(m->kind, "tdmwin") != 0;
	in->present = !in->other;
	in->deleted = m->type == RTM_DELQDISC;
	snprintf(in->kind, sizeof(in->kind), "%s", m->kind);
	in->handle = 0x10000;
	in->clockid = CLOCK_TAI;
	in->eff_link_speed = G10;
	in->hold = m->hold;
	in->lease_ns = m->lease;
	in->lease_left_ns = m->left;
	in->version = 12;
	in->cycle_ns = 10000;
	in->base_time = 1000;
	in->guard_ns = 7;
	in->nwin = 2;
	set_windows(in->win, in->win_class, a, 2);
	in->pending = m->pending;
	in->pending_unconfirmed = m->unconfirmed;
	in->pending_version = 13;
	in->pending_cycle_ns = 20000;
	in->pending_base = 5000000;
	in->pending_guard_ns = 3;
	in->pending_nwin = 1;
	set_windows(in->pending_win, in->pending_win_class, b, 1);
	nlh = tdm_qdisc_put_info(scratch, m->ifindex, m->parent, in);
	mnl_attr_for_each(a1, nlh, sizeof(struct tcmsg)) {
		if (!m->bad || mnl_attr_get_type(a1) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(o, a1)
			if (mnl_attr_get_type(o) == TCA_TDMWIN_GUARD)
				o->nla_type = TCA_TDMWIN_CYCLE_TIME;
	}
	n = nlh->nlmsg_len;
	assert_true(n <= 4096);
	memcpy(buf, nlh, n);
	free(scratch);
	free(in);
	return n;
}

static void test_plan_from_msg(void **state)
{
	static char buf[2][4096];
	struct qmsg m = { RTM_NEWQDISC, 7, TC_H_ROOT, "tdmwin", .pending = true,
			  .unconfirmed = true, .hold = true, .lease = 2000 * MS,
			  .left = 1500 * MS };
	struct tdmgate_plan p;
	struct tdmgate *g;
	size_t n, n2;

	(void)state;
	n = build_msg(buf[0], &m);
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 7, &p), 1);
	assert_int_equal(p.active.version, 12);
	assert_int_equal(p.active.cycle, 10000);
	assert_int_equal(p.active.base, 1000);
	assert_int_equal(p.active.guard, 7);
	assert_int_equal(p.active.nwin, 2);
	assert_int_equal(p.active.win[0].offset, 5000);	/* as dumped */
	assert_int_equal(p.active.win[1].length, 1000);
	assert_true(p.has_pending);
	assert_int_equal(p.pending.version, 13);
	assert_int_equal(p.pending.cycle, 20000);
	assert_int_equal(p.pending.base, 5000000);
	assert_int_equal(p.pending.win[0].offset, 100);
	assert_true(p.unconfirmed && p.hold);
	assert_int_equal(p.link_speed, G10);
	assert_int_equal(p.clockid, CLOCK_TAI);
	assert_int_equal(p.lease_ns, 2000 * MS);
	assert_int_equal(p.lease_left_ns, 1500 * MS);
	assert_int_equal(p.lease_at_boot, 0);
	assert_int_equal(p.reserved[0], 0);
	/* It makes a gate that holds. */
	assert_int_equal(tdmgate_create(&p, &g), 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_HOLD);
	tdmgate_destroy(g);

	/* Another device, another place: not ours. */
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 8, &p), 0);
	m.parent = 0x10001;
	n = build_msg(buf[0], &m);
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 7, &p), 0);
	/* Deleted, or replaced by another kind: hold. */
	m.parent = TC_H_ROOT;
	m.type = RTM_DELQDISC;
	n = build_msg(buf[0], &m);
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 7, &p), -ENOENT);
	m.type = RTM_NEWQDISC;
	m.kind = "pfifo_fast";
	n = build_msg(buf[0], &m);
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 7, &p), -ENOENT);
	/* Malformed options. */
	m.kind = "tdmwin";
	m.bad = true;
	n = build_msg(buf[0], &m);
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n, 7, &p), -EPROTO);
	/* Two in one datagram: the last about the qdisc counts. */
	m.bad = false;
	m.pending = false;
	m.unconfirmed = false;
	m.hold = false;
	n = build_msg(buf[0], &m);
	m.ifindex = 9;
	n2 = build_msg(buf[1], &m);
	memcpy(buf[0] + n, buf[1], n2);
	m.ifindex = 7;
	assert_int_equal(tdmgate_plan_from_msg(buf[0], n + n2, 7, &p), 1);
	assert_false(p.has_pending || p.hold || p.unconfirmed);
	assert_int_equal(tdmgate_create(&p, &g), 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	tdmgate_destroy(g);
}

/* Following a device without tdmwin (loopback): the gate holds. */
static void test_follow_none(void **state)
{
	const uint64_t ow[] = { 0, 10000 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t;
	int err;

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	g = gate_new(&p);
	assert_int_equal(tdmgate_follow_fd(g), -EBADF);
	assert_int_equal(tdmgate_follow_read(g), -EBADF);
	err = tdmgate_follow(g, 1);
	if (err) {
		tdmgate_destroy(g);
		skip();
	}
	assert_true(tdmgate_follow_fd(g) >= 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_GONE);
	assert_int_equal(tdmgate_next(g, 1500, &t), -EAGAIN);
	assert_int_equal(t, TDMGATE_NEVER);
	assert_true(tdmgate_follow_read(g) >= 0);
	assert_int_equal(tdmgate_plan_from_qdisc(1, &p), -ENOENT);
	tdmgate_destroy(g);
}


/* ---- tdmd's plan store: the same messages on a unix socket ---------------- */

/* A store: a listening SOCK_SEQPACKET socket at a fresh path. */
struct fake_store {
	char path[108];
	int lfd;
	int fd;			/* the follower's, once accepted */
	char first[4096];	/* what the follower gets at connect */
	size_t nfirst;
	pthread_t th;
};

static void store_listen(struct fake_store *st)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	snprintf(st->path, sizeof(st->path), "/tmp/test_tdmgate.%d.sock",
		 (int)getpid());
	unlink(st->path);
	strcpy(sun.sun_path, st->path);
	st->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(st->lfd >= 0);
	assert_int_equal(bind(st->lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(st->lfd, 4), 0);
	st->fd = -1;
}

/* The store's side of a connect: accept, send the first message. */
static void *store_serve(void *arg)
{
	struct fake_store *st = arg;

	st->fd = accept(st->lfd, NULL, NULL);
	if (st->fd >= 0 && st->nfirst)
		send(st->fd, st->first, st->nfirst, 0);
	return NULL;
}

static void store_serve_bg(struct fake_store *st, const struct qmsg *m)
{
	st->nfirst = m ? build_msg(st->first, m) : 0;
	assert_int_equal(pthread_create(&st->th, NULL, store_serve, st), 0);
}

static void store_served(struct fake_store *st)
{
	pthread_join(st->th, NULL);
	assert_true(st->fd >= 0);
}

static void store_send(struct fake_store *st, const struct qmsg *m)
{
	char buf[4096];
	size_t n = build_msg(buf, m);

	assert_int_equal(send(st->fd, buf, n, 0), (ssize_t)n);
}

static void store_close(struct fake_store *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}

/* Read the news: wait for it on the follower's socket first. */
static int news(struct tdmgate *g)
{
	struct pollfd pfd = { .fd = tdmgate_follow_fd(g), .events = POLLIN };

	poll(&pfd, 1, 1000);
	return tdmgate_follow_read(g);
}

static void test_follow_tdmd(void **state)
{
	struct qmsg m = { RTM_NEWQDISC, 0, TC_H_ROOT, "tdmwin",
			  .lease = 200 * MS, .left = 200 * MS };
	struct fake_store st;
	struct tdmgate_plan p;
	struct tdmgate *g;
	char longpath[200];
	int64_t t0;

	(void)state;
	/* No socket there, a path too long, nothing at all. */
	assert_int_equal(tdmgate_plan_from_tdmd("/nonexistent/gate.sock", &p), -ENOENT);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(tdmgate_plan_from_tdmd(longpath, &p), -ENAMETOOLONG);
	assert_int_equal(tdmgate_plan_from_tdmd(NULL, &p), -EINVAL);

	/* The state at connect: plan v12 with a lease. */
	store_listen(&st);
	store_serve_bg(&st, &m);
	assert_int_equal(tdmgate_plan_from_tdmd(st.path, &p), 0);
	store_served(&st);
	store_close(&st);
	assert_int_equal(p.active.version, 12);
	assert_int_equal(p.lease_ns, 200 * MS);
	g = gate_new(&p);
	store_serve_bg(&st, &m);
	assert_int_equal(tdmgate_follow_tdmd(g, st.path), 0);
	store_served(&st);
	assert_true(tdmgate_follow_fd(g) >= 0);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	/* News: hold, then a pending plan awaiting its confirm, then none. */
	m.hold = true;
	store_send(&st, &m);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_HOLD);
	m.hold = false;
	m.pending = m.unconfirmed = true;
	store_send(&st, &m);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_get_plan(g, &p), 0);
	assert_true(p.has_pending && p.unconfirmed);
	assert_int_equal(p.pending.version, 13);
	assert_int_equal(tdmgate_state(g, 5000000), TDMGATE_UNCONFIRMED);
	m.pending = m.unconfirmed = false;
	store_send(&st, &m);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 5000000), TDMGATE_OPEN);

	/* tdmd goes: the plan runs on its lease, then the gate holds. */
	t0 = clock_now(CLOCK_BOOTTIME);
	store_close(&st);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	assert_int_equal(tdmgate_follow_fd(g), -EBADF);
	while (tdmgate_state(g, 0) == TDMGATE_OPEN)
		usleep(1000);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_LEASE_OUT);
	assert_true(clock_now(CLOCK_BOOTTIME) - t0 <= 210 * MS);
	/* A tdmd again (100 ms later): what it holds replaces it. */
	usleep(110000);
	assert_int_equal(tdmgate_follow_read(g), 0);	/* connected */
	st.fd = accept(st.lfd, NULL, NULL);
	assert_true(st.fd >= 0);
	m.type = RTM_DELQDISC;		/* a new tdmd without a plan yet */
	store_send(&st, &m);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_GONE);
	m.type = RTM_NEWQDISC;
	m.lease = 0;
	store_send(&st, &m);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_OPEN);
	/* Without a lease, its going holds the gate at once. */
	store_close(&st);
	assert_int_equal(news(g), 1);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_GONE);
	tdmgate_destroy(g);

	/* A store without a plan yet: 0, and the gate holds. */
	plan_one(&p, 10000, 0, 0, G10, 1, (const uint64_t[]){ 0, 10000 });
	g = gate_new(&p);
	m.type = RTM_DELQDISC;
	store_serve_bg(&st, &m);
	assert_int_equal(tdmgate_follow_tdmd(g, st.path), 0);
	store_served(&st);
	assert_int_equal(tdmgate_state(g, 0), TDMGATE_GONE);
	store_close(&st);
	/* Garbage: refused, the gate as it was. */
	m.type = RTM_NEWQDISC;
	m.bad = true;
	store_serve_bg(&st, &m);
	assert_int_equal(tdmgate_follow_tdmd(g, st.path), -EPROTO);
	store_served(&st);
	store_close(&st);
	/* Another message than a tdmwin qdisc's at the root of ifindex 0. */
	m.bad = false;
	m.ifindex = 3;
	store_serve_bg(&st, &m);
	assert_int_equal(tdmgate_plan_from_tdmd(st.path, &p), -EPROTO);
	store_served(&st);
	store_close(&st);
	/* Silence: 1 s, then a time-out. */
	store_serve_bg(&st, NULL);
	assert_int_equal(tdmgate_follow_tdmd(g, st.path), -ETIMEDOUT);
	store_served(&st);
	store_close(&st);
	/* Nobody serves the socket. */
	close(st.lfd);
	assert_int_equal(tdmgate_follow_tdmd(g, st.path), -ECONNREFUSED);
	unlink(st.path);
	assert_int_equal(tdmgate_follow_tdmd(NULL, st.path), -EINVAL);
	tdmgate_destroy(g);
}

/* ---- bad input ------------------------------------------------------------- */

static void test_bad_plans(void **state)
{
	const uint64_t ow[] = { 0, 1000, 5000, 1000 };
	struct tdmgate_plan p, good;
	struct tdmgate *g = (struct tdmgate *)&p;
	int64_t t;
	int i;

	(void)state;
	plan_one(&good, 10000, 0, 0, G10, 2, ow);
	assert_int_equal(tdmgate_create(NULL, &g), -EINVAL);
	assert_null(g);
	assert_int_equal(tdmgate_create(&good, NULL), -EINVAL);
	for (i = 0; i < 19; i++) {
		p = good;
		switch (i) {
		case 0: p.active.nwin = 0; break;
		case 1: p.active.nwin = TDMGATE_MAX_WINDOWS + 1; break;
		case 2: p.active.cycle = 999; break;
		case 3: p.active.cycle = 10000000001ULL; break;
		case 4: p.active.base = -1; break;
		case 5: p.active.win[1].offset = 10000; break;
		case 6: p.active.win[1].length = 5001; break;
		case 7: p.active.win[1].offset = 500; break;	/* overlap */
		case 8: p.active.win[0].length = 67; break;	/* < 84 B */
		case 9: p.active.guard = 1000000001; break;
		case 10: p.active.guard = 933; break;	/* 1000 < 68 + 933 */
		case 11: p.link_speed = 0; break;
		case 12: p.link_speed = 1600001; break;
		case 13: p.clockid = 12345; break;
		case 14: p.reserved[7] = 1; break;
		case 15: p.lease_ns = 99 * MS; break;
		case 16: p.lease_ns = 3600001 * MS; break;
		case 17: p.has_pending = true; break;	/* empty pending */
		case 18: p.active.win[0].length = UINT64_MAX; break;
		}
		g = (struct tdmgate *)&good;
		assert_int_equal(tdmgate_create(&p, &g), -EINVAL);
		assert_null(g);
	}
	/* Windows in any order are sorted, as the qdisc sorts them. */
	p = good;
	p.active.win[0] = good.active.win[1];
	p.active.win[1] = good.active.win[0];
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(g, 1500, 64, &t), 0);
	assert_int_equal(t, 5000);
	/* A refused plan leaves the gate as it was. */
	p.active.cycle = 1;
	assert_int_equal(tdmgate_set_plan(g, &p), -EINVAL);
	assert_int_equal(tdmgate_set_plan(g, NULL), -EINVAL);
	assert_int_equal(tdmgate_set_plan(NULL, &good), -EINVAL);
	assert_int_equal(tdmgate_next_at(g, 10500, 64, &t), 0);
	assert_int_equal(t, 10500);
	tdmgate_destroy(g);
	tdmgate_destroy(NULL);
}

static void test_bad_calls(void **state)
{
	const uint64_t ow[] = { 0, 1000 };
	uint32_t len[2] = { 64, 64 };
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t, l[2];
	char junk[64];

	(void)state;
	plan_one(&p, 10000, 0, 0, G10, 1, ow);
	g = gate_new(&p);
	assert_int_equal(tdmgate_next_at(NULL, 0, 64, &t), -EINVAL);
	assert_int_equal(tdmgate_next_at(g, 0, 64, NULL), -EINVAL);
	assert_int_equal(tdmgate_next_at(g, 0, 0, &t), -EINVAL);
	assert_int_equal(tdmgate_next(NULL, 64, &t), -EINVAL);
	assert_int_equal(tdmgate_try_at(g, 0, 64, NULL), -EINVAL);
	assert_int_equal(tdmgate_try(NULL, 64, &t), -EINVAL);
	assert_int_equal(tdmgate_burst_at(g, 0, NULL, l, 2), -EINVAL);
	assert_int_equal(tdmgate_burst_at(g, 0, len, NULL, 2), -EINVAL);
	assert_int_equal(tdmgate_burst_at(NULL, 0, len, l, 2), -EINVAL);
	assert_int_equal(tdmgate_burst_at(g, 0, len, l, 0), 0);
	assert_int_equal(tdmgate_burst(g, NULL, NULL, 0), 0);
	assert_int_equal(tdmgate_wait(g, 64, TDMGATE_NEVER, NULL), -EINVAL);
	assert_int_equal(tdmgate_poll(NULL, 64, TDMGATE_NEVER, &t), -EINVAL);
	assert_int_equal(tdmgate_wait(g, 0, TDMGATE_NEVER, &t), -EINVAL);
	assert_int_equal(tdmgate_get_plan(g, NULL), -EINVAL);
	assert_int_equal(tdmgate_get_plan(NULL, &p), -EINVAL);
	assert_int_equal(tdmgate_set_clock(NULL, CLOCK_TAI), -EINVAL);
	assert_int_equal(tdmgate_state(NULL, 0), TDMGATE_GONE);
	assert_int_equal(tdmgate_wire_ns(NULL, 64), 0);
	assert_int_equal(tdmgate_follow(NULL, 1), -EINVAL);
	assert_int_equal(tdmgate_follow(g, 0), -EINVAL);
	assert_int_equal(tdmgate_follow_fd(NULL), -EBADF);
	assert_int_equal(tdmgate_follow_read(NULL), -EINVAL);
	assert_int_equal(tdmgate_plan_from_qdisc(0, &p), -EINVAL);
	assert_int_equal(tdmgate_plan_from_qdisc(1, NULL), -EINVAL);
	assert_int_equal(tdmgate_plan_from_msg(NULL, 10, 1, &p), -EINVAL);
	assert_int_equal(tdmgate_plan_from_msg(junk, sizeof(junk), 1, NULL), -EINVAL);
	/* Junk, short and truncated messages are not a qdisc. */
	memset(junk, 0xff, sizeof(junk));
	assert_true(tdmgate_plan_from_msg(junk, sizeof(junk), 1, &p) <= 0);
	assert_int_equal(tdmgate_plan_from_msg(junk, 3, 1, &p), 0);
	memset(junk, 0, sizeof(junk));
	assert_int_equal(tdmgate_plan_from_msg(junk, sizeof(junk), 1, &p), 0);
	tdmgate_set_spin(NULL, 5);
	/* The ends of time: answers, no overflow (UBSan watches). */
	assert_int_equal(tdmgate_next_at(g, INT64_MAX - 5, 64, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_try_at(g, INT64_MAX, 64, &t), -EMSGSIZE);
	assert_int_equal(tdmgate_next_at(g, INT64_MIN, 64, &t), -EINVAL);
	assert_int_equal(tdmgate_try_at(g, -1, 64, &t), -EINVAL);
	assert_int_equal(tdmgate_burst_at(g, -1, len, l, 2), -EINVAL);
	assert_int_equal(tdmgate_next_at(g, 0, 64, &t), 0);
	assert_int_equal(t, 0);
	tdmgate_destroy(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_single),
		cmocka_unit_test(test_reference_wire),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_guard),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_pending_switch),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_unconfirmed),
		cmocka_unit_test(test_burst_is_singles),
		cmocka_unit_test(test_try_retry),
		cmocka_unit_test(test_wait_real_clock),
		cmocka_unit_test(test_wait_interrupted),
		cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_plan_from_msg),
		cmocka_unit_test(test_follow_none),
		cmocka_unit_test(test_follow_tdmd),
		cmocka_unit_test(test_bad_plans),
		cmocka_unit_test(test_bad_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
