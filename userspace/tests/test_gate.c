// SPDX-License-Identifier: GPL-2.0
/*
 * Exhaustive test of kmod/tdmwin_gate.h against a brute-force reference
 * that enumerates window instances with 128-bit arithmetic.
 *
 * Covers: times before base, every position of small cycles (window edges
 * included), frames that fit, fit exactly, do not fit or fit no window,
 * plans near the 64-bit limits, and clock steps (arbitrary jumps of "now"
 * forwards and backwards must give the same answer as a fresh evaluation
 * and never a wake-up time in the past).  The wire clock (a frame starts
 * behind the wire's backlog and must end before a pending plan's base) is
 * checked against the same reference, and by a simulated link: a queue
 * drained through the gate into a server at the link speed, with bypass
 * frames booking the wire behind the gate's back, must put every gated
 * frame on the wire inside a window, and never hold one back that could
 * have gone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_gate.h"

#define TDMWIN_GATE_TEST_MAXW TDMWIN_MAX_WINDOWS

typedef __int128 i128;

static unsigned long checks, failures;

#define CHECK(cond, ...)						\
	do {								\
		checks++;						\
		if (!(cond)) {						\
			failures++;					\
			if (failures <= 20) {				\
				fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
				fprintf(stderr, __VA_ARGS__);		\
				fputc('\n', stderr);			\
			}						\
		}							\
	} while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static struct tdmwin_gate_result ref_gate(const struct tdmwin_sched *s,
					  s64 now, u64 need)
{
	struct tdmwin_gate_result r = { .verdict = TDMWIN_WAIT, .slot = -1 };
	i128 c0, best = -1;
	u32 w;

	if (need > s->max_len) {
		r.verdict = TDMWIN_NEVER;
		return r;
	}
	c0 = now < s->base ? 0 : ((i128)now - s->base) / (i128)s->cycle;
	for (i128 c = c0; c <= c0 + 2; c++) {
		for (w = 0; w < s->nwin; w++) {
			i128 ws = (i128)s->base + c * (i128)s->cycle +
				  (i128)s->win[w].offset;
			i128 we = ws + (i128)s->win[w].length;

			if (ws <= now && now < we) {
				r.in_window = true;
				r.slot = (int)w;
				if ((i128)now + need <= we) {
					r.verdict = TDMWIN_SEND;
					r.when = (s64)ws;
					r.end = we > INT64_MAX ? INT64_MAX : (s64)we;
					r.in_window = false;
					return r;
				}
			}
			if (ws > now && s->win[w].length >= need &&
			    (best < 0 || ws < best))
				best = ws;
		}
	}
	r.when = best > INT64_MAX ? INT64_MAX : (s64)best;
	return r;
}

static void compare(const struct tdmwin_sched *s, s64 now, u64 need)
{
	struct tdmwin_gate_result a = tdmwin_gate(s, now, need);
	struct tdmwin_gate_result b = ref_gate(s, now, need);

	CHECK(a.verdict == b.verdict,
	      "verdict %d want %d (base %" PRId64 " cycle %" PRIu64 " now %" PRId64 " need %" PRIu64 ")",
	      a.verdict, b.verdict, s->base, s->cycle, now, need);
	if (a.verdict != b.verdict || a.verdict == TDMWIN_NEVER)
		return;
	CHECK(a.when == b.when,
	      "when %" PRId64 " want %" PRId64 " (verdict %d base %" PRId64 " cycle %" PRIu64 " now %" PRId64 " need %" PRIu64 ")",
	      a.when, b.when, a.verdict, s->base, s->cycle, now, need);
	CHECK(a.slot == b.slot, "slot %d want %d (verdict %d now %" PRId64 " need %" PRIu64 ")",
	      a.slot, b.slot, a.verdict, now, need);
	if (a.verdict == TDMWIN_WAIT) {
		CHECK(a.in_window == b.in_window, "in_window %d want %d (now %" PRId64 ")",
		      a.in_window, b.in_window, now);
		/* Never a wake-up in the past: that is how a qdisc spins. */
		CHECK(a.when > now || a.when == INT64_MAX,
		      "wake-up %" PRId64 " not after now %" PRId64, a.when, now);
	} else {
		CHECK(a.when <= now, "send window starts after now");
		CHECK(a.end == b.end, "window end %" PRId64 " want %" PRId64,
		      a.end, b.end);
	}
}

/* The wire clock's reference: the brute-force gate at now + backlog. */
static struct tdmwin_gate_result ref_gate_wire(const struct tdmwin_sched *s,
					       s64 now, u64 backlog, u64 need,
					       s64 stop)
{
	i128 start = (i128)now + backlog;
	struct tdmwin_gate_result r, r0;

	if (start > INT64_MAX)
		start = INT64_MAX;
	r = ref_gate(s, (s64)start, need);
	r.wire = false;
	if (r.verdict == TDMWIN_SEND && start + (i128)need > stop) {
		r.verdict = TDMWIN_WAIT;
		r.in_window = true;
		r.when = stop;
	}
	if (r.verdict == TDMWIN_WAIT && backlog) {
		r0 = ref_gate(s, now, need);
		r.wire = r0.verdict == TDMWIN_SEND && (i128)now + need <= stop;
		if (r.wire)
			r.slot = r0.slot;
	}
	return r;
}

static void compare_wire(const struct tdmwin_sched *s, s64 now, u64 backlog,
			 u64 need, s64 stop)
{
	struct tdmwin_gate_result a = tdmwin_gate_wire(s, now, backlog, need, stop);
	struct tdmwin_gate_result b = ref_gate_wire(s, now, backlog, need, stop);

	CHECK(a.verdict == b.verdict,
	      "wire: verdict %d want %d (now %" PRId64 " backlog %" PRIu64 " need %" PRIu64 " stop %" PRId64 ")",
	      a.verdict, b.verdict, now, backlog, need, stop);
	if (a.verdict != b.verdict || a.verdict == TDMWIN_NEVER)
		return;
	CHECK(a.when == b.when,
	      "wire: when %" PRId64 " want %" PRId64 " (now %" PRId64 " backlog %" PRIu64 " need %" PRIu64 " stop %" PRId64 ")",
	      a.when, b.when, now, backlog, need, stop);
	CHECK(a.slot == b.slot, "wire: slot %d want %d (verdict %d now %" PRId64 " backlog %" PRIu64 " need %" PRIu64 ")",
	      a.slot, b.slot, a.verdict, now, backlog, need);
	if (a.verdict == TDMWIN_WAIT) {
		CHECK(a.in_window == b.in_window && a.wire == b.wire,
		      "wire: in_window %d/%d wire %d/%d (now %" PRId64 " backlog %" PRIu64 ")",
		      a.in_window, b.in_window, a.wire, b.wire, now, backlog);
		CHECK(a.when > now || a.when == INT64_MAX,
		      "wire: wake-up %" PRId64 " not after now %" PRId64, a.when, now);
	} else {
		i128 start = (i128)now + backlog, fend;

		if (start > INT64_MAX)	/* saturates, as the gate does */
			start = INT64_MAX;
		fend = start + need > INT64_MAX ? INT64_MAX : start + need;
		CHECK(a.end == b.end, "wire: window end %" PRId64 " want %" PRId64,
		      a.end, b.end);
		/* What the qdisc counts for the frame: its window's open
		 * latency, from the window's start to the frame's start on
		 * the wire, which may come before the window when the wire
		 * is booked past it (now < a.when), and its margin.
		 */
		CHECK((i128)tdmwin_open_latency(now, backlog, a.when) == start - a.when,
		      "open latency %" PRIu64 " want %" PRId64 " (now %" PRId64 " backlog %" PRIu64 " window %" PRId64 ")",
		      tdmwin_open_latency(now, backlog, a.when),
		      (s64)(start - a.when), now, backlog, a.when);
		CHECK((i128)tdmwin_margin(now, backlog, need, a.end) ==
		      (a.end > fend ? a.end - fend : 0) && a.end >= fend,
		      "margin %" PRIu64 " (now %" PRId64 " backlog %" PRIu64 " need %" PRIu64 " end %" PRId64 ")",
		      tdmwin_margin(now, backlog, need, a.end), now, backlog,
		      need, a.end);
	}
}

/* Random sorted, non-overlapping windows inside [0, cycle). */
static u32 random_windows(struct tdmwin_window *w, u32 max, u64 cycle)
{
	u32 n = 0;
	u64 pos = rnd_below(cycle / 4 + 1);

	while (n < max && pos < cycle) {
		u64 len = 1 + rnd_below((cycle - pos) / 2 + 1);

		if (pos + len > cycle)
			len = cycle - pos;
		w[n].offset = pos;
		w[n].length = len;
		n++;
		pos += len + rnd_below(cycle / 3 + 1);
	}
	return n;
}

static u64 max_len(const struct tdmwin_window *w, u32 n)
{
	u64 m = 0;

	for (u32 i = 0; i < n; i++)
		if (w[i].length > m)
			m = w[i].length;
	return m;
}

/* Open latency and margin against 128-bit references, near every limit. */
static void test_latency_margin(void)
{
	static const s64 base[] = { 0, 1, 1000, INT64_MAX - 3000, INT64_MAX };

	for (unsigned int b = 0; b < sizeof(base) / sizeof(base[0]); b++)
		for (s64 dn = -40; dn <= 40; dn++)
			for (u64 backlog = 0; backlog <= 40; backlog++)
				for (s64 ds = -40; ds <= 40; ds += 3) {
					i128 now = (i128)base[b] + dn;
					i128 at = (i128)base[b] + ds;
					i128 t, want;
					u64 wire = (u64)(ds + 40) / 2;

					if (now < 0 || now > INT64_MAX ||
					    at < 0 || at > INT64_MAX)
						continue;
					t = now + backlog;
					if (t > INT64_MAX)
						t = INT64_MAX;
					want = t > at ? t - at : 0;
					CHECK((i128)tdmwin_open_latency((s64)now, backlog, (s64)at) == want,
					      "open latency (now %" PRId64 " backlog %" PRIu64 " start %" PRId64 ")",
					      (s64)now, backlog, (s64)at);
					t += wire;
					if (t > INT64_MAX)
						t = INT64_MAX;
					want = at > t ? at - t : 0;
					CHECK((i128)tdmwin_margin((s64)now, backlog, wire, (s64)at) == want,
					      "margin (now %" PRId64 " backlog %" PRIu64 " wire %" PRIu64 " end %" PRId64 ")",
					      (s64)now, backlog, wire, (s64)at);
				}
}

static void test_small_exhaustive(void)
{
	struct tdmwin_window w[TDMWIN_GATE_TEST_MAXW];

	for (int plan = 0; plan < 400; plan++) {
		u64 cycle = 1 + rnd_below(40);
		u32 n = random_windows(w, 1 + rnd_below(6), cycle);
		struct tdmwin_sched s = {
			.base = (s64)rnd_below(100), .cycle = cycle,
			.win = w, .nwin = n, .max_len = max_len(w, n),
		};

		if (!n)
			continue;
		for (s64 now = 0; now < s.base + 4 * (s64)cycle; now++)
			for (u64 need = 0; need <= cycle + 1; need++)
				compare(&s, now, need);
	}
}

static void test_wire_exhaustive(void)
{
	struct tdmwin_window w[TDMWIN_GATE_TEST_MAXW];

	for (int plan = 0; plan < 150; plan++) {
		u64 cycle = 1 + rnd_below(30);
		u32 n = random_windows(w, 1 + rnd_below(5), cycle);
		struct tdmwin_sched s = {
			.base = (s64)rnd_below(60), .cycle = cycle,
			.win = w, .nwin = n, .max_len = max_len(w, n),
		};
		s64 end = s.base + 3 * (s64)cycle;

		if (!n)
			continue;
		for (s64 now = 0; now < end; now++)
			for (u64 backlog = 0; backlog <= cycle + 2; backlog++)
				for (u64 need = 0; need <= s.max_len + 1; need++) {
					compare_wire(&s, now, backlog, need,
						     INT64_MAX);
					compare_wire(&s, now, backlog, need,
						     now + 1 + (s64)rnd_below(2 * cycle));
				}
	}
	/* Near the end of time: now + backlog saturates. */
	for (int i = 0; i < 2000; i++) {
		static const struct tdmwin_window w1[] = { { 0, 400 }, { 600, 300 } };
		struct tdmwin_sched s = { .base = (s64)rnd_below(1000), .cycle = 1000,
					  .win = w1, .nwin = 2, .max_len = 400 };
		s64 now = INT64_MAX - (s64)rnd_below(3000);

		compare_wire(&s, now, rnd_below(5000), rnd_below(402), INT64_MAX);
	}
}

/* Is [t, t + len) inside one window instance?  (Brute force, 128-bit.) */
static bool inside_window(const struct tdmwin_sched *s, i128 t, u64 len)
{
	i128 c0;

	if (t < s->base)
		return false;
	c0 = (t - s->base) / (i128)s->cycle;
	for (u32 w = 0; w < s->nwin; w++) {
		i128 ws = (i128)s->base + c0 * (i128)s->cycle + s->win[w].offset;

		if (ws <= t && t + (i128)len <= ws + (i128)s->win[w].length)
			return true;
	}
	return false;
}

/*
 * A link simulated as the qdisc drives it: a backlog of gated frames of
 * random wire time, a server that finishes them at the link speed, bypass
 * frames that book the wire whenever they come, and a dequeue loop that
 * obeys the gate (send now, or sleep until .when, woken late by a random
 * timer latency).  Every gated frame must occupy the wire (plus guard)
 * inside one window, and a frame held back must not have fitted.
 */
static void test_wire_link(void)
{
	static const struct tdmwin_window w[] = { { 100, 300 }, { 1000, 900 } };
	struct tdmwin_sched s = { .base = 5000, .cycle = 2500, .win = w,
				  .nwin = 2, .max_len = 900 };
	unsigned long sent = 0, outside = 0, held_wrongly = 0;

	for (int run = 0; run < 50; run++) {
		s64 now = (s64)rnd_below(10000), free = 0;
		u64 guard = rnd_below(20);

		for (int step = 0; step < 20000; step++) {
			u64 wire = 1 + rnd_below(120), need = wire + guard;
			u64 backlog = free > now ? (u64)(free - now) : 0;
			struct tdmwin_gate_result r;

			if (rnd_below(8) == 0) {	/* a bypass frame */
				free = (free > now ? free : now) + (s64)(1 + rnd_below(60));
				now += (s64)rnd_below(10);
				continue;
			}
			r = tdmwin_gate_wire(&s, now, backlog, need, INT64_MAX);
			if (r.verdict == TDMWIN_SEND) {
				s64 start = free > now ? free : now;

				sent++;
				if (!inside_window(&s, start, need))
					outside++;
				free = start + (s64)wire;
				now += (s64)rnd_below(3);	/* the next dequeue */
			} else if (r.verdict == TDMWIN_WAIT) {
				if (inside_window(&s, (i128)now + backlog, need))
					held_wrongly++;
				now = r.when + (s64)rnd_below(50);
			}
		}
	}
	CHECK(sent > 100000, "the simulated link sent only %lu frames", sent);
	CHECK(outside == 0, "%lu of %lu frames on the wire outside a window",
	      outside, sent);
	CHECK(held_wrongly == 0, "%lu frames held back that fitted", held_wrongly);
}

/*
 * The launch time's reference: scan every instant from now + backlog for
 * the first at which the frame fits a window of the plan in force then
 * without straddling the switch.  Instants only, so small plans only.
 */
static s64 ref_launch(const struct tdmwin_sched *s, const struct tdmwin_sched *next,
		      s64 now, u64 backlog, u64 need, u64 need_next, s64 horizon)
{
	for (s64 t = now + (s64)backlog; t <= horizon; t++) {
		if (next && t >= next->base) {
			if (inside_window(next, t, need_next))
				return t;
		} else if (inside_window(s, t, need) &&
			   (!next || t + (s64)need <= next->base)) {
			return t;
		}
	}
	return INT64_MAX;
}

static void test_launch_exhaustive(void)
{
	struct tdmwin_window w[8], w2[8];

	for (int plan = 0; plan < 300; plan++) {
		u64 cycle = 1 + rnd_below(25), cycle2 = 1 + rnd_below(25);
		u32 n = random_windows(w, 1 + rnd_below(4), cycle);
		u32 n2 = random_windows(w2, 1 + rnd_below(4), cycle2);
		struct tdmwin_sched s = {
			.base = (s64)rnd_below(40), .cycle = cycle,
			.win = w, .nwin = n, .max_len = max_len(w, n),
		};
		struct tdmwin_sched s2 = {
			.base = s.base + 1 + (s64)rnd_below(60), .cycle = cycle2,
			.win = w2, .nwin = n2, .max_len = max_len(w2, n2),
		};
		s64 horizon = s2.base + 4 * (s64)(cycle + cycle2) + 200;

		if (!n || !n2)
			continue;
		for (s64 now = 0; now < s2.base + 2 * (s64)cycle2; now++) {
			const struct tdmwin_sched *next = now < s2.base ? &s2 : NULL;
			const struct tdmwin_sched *cur = next ? &s : &s2;

			for (u64 backlog = 0; backlog < 2 * cycle; backlog += 1 + rnd_below(3)) {
				u64 need = 1 + rnd_below(cur->max_len + 1);
				u64 need2 = 1 + rnd_below(s2.max_len + 1);
				s64 got = tdmwin_launch(cur, next, now, backlog, need, need2);
				s64 want;

				if (!next)
					need2 = need;
				want = ref_launch(cur, next, now, backlog, need, need2, horizon);
				if (!next)
					got = tdmwin_launch(cur, NULL, now, backlog, need, need2);
				CHECK(got == want,
				      "launch %" PRId64 " want %" PRId64 " (now %" PRId64 " backlog %" PRIu64 " need %" PRIu64 "/%" PRIu64 " switch %" PRId64 ")",
				      got, want, now, backlog, need, need2, next ? s2.base : -1);
			}
		}
	}
}

static void test_fixed_edges(void)
{
	/* The example: cycle 3300, windows [0,1000) and [2200,2700). */
	static const struct tdmwin_window w[] = { { 0, 1000 }, { 2200, 500 } };
	struct tdmwin_sched s = { .base = 1000000, .cycle = 3300, .win = w,
				  .nwin = 2, .max_len = 1000 };
	struct tdmwin_gate_result r;

	r = tdmwin_gate(&s, 999999, 10);	/* before base: closed */
	CHECK(r.verdict == TDMWIN_WAIT && r.when == 1000000, "before base");
	r = tdmwin_gate(&s, 1000000, 1000);	/* exactly fills window 0 */
	CHECK(r.verdict == TDMWIN_SEND && r.when == 1000000, "fills window");
	r = tdmwin_gate(&s, 1000001, 1000);	/* one ns late: next cycle */
	CHECK(r.verdict == TDMWIN_WAIT && r.in_window &&
	      r.when == 1003300, "guard deferral to next cycle");
	r = tdmwin_gate(&s, 1000700, 400);	/* fits window 1 later */
	CHECK(r.verdict == TDMWIN_WAIT && r.when == 1002200, "defer to win 1");
	r = tdmwin_gate(&s, 1000999, 1);	/* last ns of window 0 */
	CHECK(r.verdict == TDMWIN_SEND, "last ns");
	r = tdmwin_gate(&s, 1001000, 1);	/* window end is exclusive */
	CHECK(r.verdict == TDMWIN_WAIT && !r.in_window && r.when == 1002200,
	      "end exclusive");
	r = tdmwin_gate(&s, 1002700, 1);	/* after the last window */
	CHECK(r.verdict == TDMWIN_WAIT && r.when == 1003300, "wrap");
	r = tdmwin_gate(&s, 1002300, 501);	/* too long for window 1 */
	CHECK(r.verdict == TDMWIN_WAIT && r.when == 1003300, "skip short win");
	r = tdmwin_gate(&s, 5, 1001);		/* longer than any window */
	CHECK(r.verdict == TDMWIN_NEVER, "never");
}

static void test_limits(void)
{
	struct tdmwin_window w[TDMWIN_GATE_TEST_MAXW];
	static const s64 bases[] = {
		0, 1, INT64_MAX / 2, INT64_MAX - 10000000000LL,
		INT64_MAX - 1000, INT64_MAX - 1,
	};

	for (unsigned int b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		for (int plan = 0; plan < 200; plan++) {
			u64 cycle = plan & 1 ? TDMWIN_MAX_CYCLE_NS :
				    1000 + rnd_below(TDMWIN_MAX_CYCLE_NS);
			u32 n = random_windows(w, 1 + rnd_below(TDMWIN_GATE_TEST_MAXW), cycle);
			struct tdmwin_sched s = {
				.base = bases[b], .cycle = cycle, .win = w,
				.nwin = n, .max_len = max_len(w, n),
			};

			if (!n)
				continue;
			for (int t = 0; t < 300; t++) {
				s64 now;
				u64 need = rnd_below(s.max_len + 2);

				switch (t % 4) {
				case 0: /* anywhere at all */
					now = (s64)(rnd() >> 1);
					break;
				case 1: /* near the end of time */
					now = INT64_MAX - (s64)rnd_below(3 * cycle);
					break;
				case 2: /* on a window edge */
					now = tdmwin_add_sat(s.base, rnd_below(4) * cycle +
							     w[rnd_below(n)].offset);
					now -= (s64)rnd_below(2);
					break;
				default: /* around base */
					now = s.base - (s64)rnd_below(cycle);
					if (now < 0)
						now = 0;
					break;
				}
				compare(&s, now, need);
			}
		}
	}
}

static void test_clock_steps(void)
{
	static const struct tdmwin_window w[] = { { 100, 50 }, { 500, 200 } };
	struct tdmwin_sched s = { .base = 1000000000LL, .cycle = 1000,
				  .win = w, .nwin = 2, .max_len = 200 };
	s64 now = s.base - 5000;

	/* A walk that follows the gate like a qdisc would, with the clock
	 * stepped by up to +/- many cycles at random.  Each step must give a
	 * fresh answer (the gate keeps no history) and every wait must end.
	 */
	for (int i = 0; i < 200000; i++) {
		u64 need = 1 + rnd_below(220);
		struct tdmwin_gate_result r = tdmwin_gate(&s, now, need);

		compare(&s, now, need);
		if (r.verdict == TDMWIN_WAIT)
			CHECK(r.when - now <= (s64)(2 * s.cycle) + (s.base > now ? s.base - now : 0),
			      "wait longer than two cycles");
		switch (rnd_below(10)) {
		case 0:
			now += (s64)rnd_below(1000000000ULL);	/* forward step */
			break;
		case 1:
			now -= (s64)rnd_below(1000000000ULL);	/* backward step */
			if (now < 0)
				now = 0;
			break;
		default:
			now = r.verdict == TDMWIN_WAIT ? r.when : now + (s64)need;
			break;
		}
	}
}

static void test_wire_time(void)
{
	/* 1500 B payload frame at 10 Gbit/s: (1514 + 24) * 0.8 ns = 1230.4 */
	CHECK(tdmwin_wire_ns(1538, 800) == 1231, "wire 10G rounds up");
	CHECK(tdmwin_wire_ns(84, 8) == 1, "wire 1T");
	CHECK(tdmwin_wire_ns(84, 80000) == 6720, "wire 100M");
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "gate: fixed edges", test_fixed_edges },
	{ "gate: wire time", test_wire_time },
	{ "gate: small plans, every instant and size", test_small_exhaustive },
	{ "gate: open latency and margin, near the limits", test_latency_margin },
	{ "gate: plans near the 64-bit limits", test_limits },
	{ "gate: clock steps", test_clock_steps },
	{ "gate: wire clock against the reference", test_wire_exhaustive },
	{ "gate: wire clock on a simulated link", test_wire_link },
	{ "gate: launch times against the reference", test_launch_exhaustive },
};

int main(void)
{
	unsigned int n = sizeof(tests) / sizeof(tests[0]), passed = 0;

	printf("TAP version 13\n1..%u\n", n);
	for (unsigned int i = 0; i < n; i++) {
		unsigned long before = failures, c = checks;

		tests[i].fn();
		printf("%sok %u %s # %lu checks\n", failures == before ? "" : "not ",
		       i + 1, tests[i].name, checks - c);
		passed += failures == before;
	}
	printf("test_gate: %u passed, %u failed\n", passed, n - passed);
	return passed == n ? 0 : 1;
}
