// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of plans with many receivers (tdm_plan.h): [receiver]
 * sections, windows with a destination, the [barrel] section and
 * tdm_plan_barrel(), the per-destination checks, shares and projections.
 *
 * The rules are judged on a reference timeline built from the gate's own
 * arithmetic (kmod/tdmwin_gate.h through tdm_gate.h): which window of
 * each sender is open at an instant is what tdmwin_gate() says for a
 * frame of 1 ns, and the window it names carries the destination.
 * Exhaustively, every nanosecond of the cycle, for N, M <= 6 and several
 * slots and dead times; for large plans (80 x 16 and more) at every
 * window edge, where the open set can change, which is as exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_gate.h"
#include "tdm_json.h"
#include "tdm_plan.h"
#include "tdm_util.h"
#include "plan_parse.h"

#define US	1000ULL
#define MS	1000000ULL
#define IDLE	UINT32_MAX

/* ---- helpers ---------------------------------------------------------- */


/* p initialised with m receivers r0.. at 198.18.1.(i + 1). */
static void with_receivers(struct tdm_plan *p, unsigned int m)
{
	unsigned int i;

	tdm_plan_init(p);
	p->nreceivers = m;
	p->receivers = calloc(m ? m : 1, sizeof(*p->receivers));
	assert_non_null(p->receivers);
	for (i = 0; i < m; i++) {
		snprintf(p->receivers[i].name, TDM_NAME_MAX, "r%u", i);
		snprintf(p->receivers[i].addr, TDM_ADDR_MAX, "198.18.%u.%u",
			 1 + i / 250, 1 + i % 250);
	}
}

static void barrel_ok(struct tdm_plan *p, unsigned int n, unsigned int m,
		      uint64_t slot, uint64_t dead)
{
	char err[512] = "";

	with_receivers(p, m);
	if (tdm_plan_barrel(p, n, NULL, slot, dead, err, sizeof(err)))
		fail_msg("%u x %u, slot %llu, dead %llu: %s", n, m,
			 (unsigned long long)slot, (unsigned long long)dead,
			 err);
}

/* ---- the reference timeline ------------------------------------------- */

/* Each sender's gate, as the qdisc and tdmgen see it. */
struct timeline {
	const struct tdm_plan *p;
	struct tdmwin_sched *sched;
	struct tdmwin_window (*win)[TDMWIN_MAX_WINDOWS];
};

static void timeline_init(struct timeline *tl, const struct tdm_plan *p)
{
	unsigned int i;

	tl->p = p;
	tl->sched = calloc(p->nsenders, sizeof(*tl->sched));
	tl->win = calloc(p->nsenders, sizeof(*tl->win));
	assert_non_null(tl->sched);
	assert_non_null(tl->win);
	for (i = 0; i < p->nsenders; i++)
		tdm_gate_sched(&tl->sched[i], tl->win[i], p, &p->senders[i], 0);
}

static void timeline_free(struct timeline *tl)
{
	free(tl->sched);
	free(tl->win);
}

/*
 * Where sender s sends at t (0 <= t < cycle): the destination of the
 * window the gate says is open for a frame of 1 ns, or IDLE.  In a bad
 * plan under test a sender's windows may overlap: the gate's search
 * names the last window starting at or before t, so look back for an
 * earlier one still open too; a second destination goes to *also (IDLE
 * if none).
 */
static uint32_t sends_to(const struct timeline *tl, unsigned int s, int64_t t,
			 uint32_t *also)
{
	const struct tdmwin_sched *sc = &tl->sched[s];
	const struct tdm_sender *x = &tl->p->senders[s];
	struct tdmwin_gate_result r = tdmwin_gate(sc, t, 1);
	int i = tdmwin_window_at(sc, (uint64_t)t), k;
	uint32_t d = IDLE;

	*also = IDLE;
	if (r.verdict == TDMWIN_SEND) {
		assert_true(i >= 0);
		assert_int_equal(r.when, (int64_t)sc->win[i].offset);
		d = x->win[i].dest;
	}
	for (k = 0; k < i; k++) {
		if ((uint64_t)t >= x->win[k].offset + x->win[k].length)
			continue;
		if (d == IDLE)
			d = x->win[k].dest;
		else
			*also = x->win[k].dest;
	}
	return d;
}

/* What the reference found over one cycle. */
struct verdict {
	bool receiver_clash;	/* two senders at one receiver at once */
	bool sender_clash;	/* one sender at two receivers at once */
	uint64_t *pair_ns;	/* [s * ndest + r]: open time */
	uint64_t min_gap;	/* least idle time between two senders at a
				 * receiver (UINT64_MAX: none seen)
				 */
};

/*
 * Judge the plan at the instants t of @at (sorted, within the cycle),
 * each standing for the time up to the next one (the last up to the
 * cycle's end): with every nanosecond listed this is the brute force.
 */
static void judge(const struct tdm_plan *p, const int64_t *at,
		  unsigned int nat, struct verdict *v)
{
	unsigned int nd = tdm_plan_ndest(p), i, s, r;
	uint32_t *holder, *last, also, d;
	int64_t *idle_since, t, dt;
	struct timeline tl;

	timeline_init(&tl, p);
	memset(v, 0, sizeof(*v));
	v->min_gap = UINT64_MAX;
	v->pair_ns = calloc((size_t)p->nsenders * nd, sizeof(*v->pair_ns));
	holder = calloc(nd, sizeof(*holder));
	last = calloc(nd, sizeof(*last));
	idle_since = calloc(nd, sizeof(*idle_since));
	assert_non_null(v->pair_ns);
	assert_non_null(holder);
	assert_non_null(last);
	assert_non_null(idle_since);
	for (r = 0; r < nd; r++) {
		last[r] = IDLE;
		idle_since[r] = -1;
	}
	for (i = 0; i < nat; i++) {
		t = at[i];
		dt = (i + 1 < nat ? at[i + 1] : (int64_t)p->cycle_ns) - t;
		for (r = 0; r < nd; r++)
			holder[r] = IDLE;
		for (s = 0; s < p->nsenders; s++) {
			d = sends_to(&tl, s, t, &also);
			if (d == IDLE)
				continue;
			if (also != IDLE && also != d)
				v->sender_clash = true;
			if (also == d || holder[d] != IDLE)
				v->receiver_clash = true;
			holder[d] = s;
			v->pair_ns[s * nd + d] += (uint64_t)dt;
		}
		/* The idle time at a receiver between two of its senders. */
		for (r = 0; r < nd; r++) {
			if (holder[r] == IDLE) {
				if (idle_since[r] < 0)
					idle_since[r] = t;
				continue;
			}
			if (last[r] != IDLE && last[r] != holder[r] &&
			    (uint64_t)(t - (idle_since[r] < 0 ? t : idle_since[r])) <
			    v->min_gap)
				v->min_gap = (uint64_t)(t - (idle_since[r] < 0 ?
							t : idle_since[r]));
			last[r] = holder[r];
			idle_since[r] = -1;
		}
	}
	free(holder);
	free(last);
	free(idle_since);
	timeline_free(&tl);
}

/* Every nanosecond of the cycle. */
static void judge_every_ns(const struct tdm_plan *p, struct verdict *v)
{
	int64_t *at = malloc(p->cycle_ns * sizeof(*at));
	uint64_t t;

	assert_non_null(at);
	for (t = 0; t < p->cycle_ns; t++)
		at[t] = (int64_t)t;
	judge(p, at, (unsigned int)p->cycle_ns, v);
	free(at);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every window edge (and 0): the open set changes only there. */
static void judge_edges(const struct tdm_plan *p, struct verdict *v)
{
	unsigned int i, k, n = 1, u;
	int64_t *at;

	for (i = 0; i < p->nsenders; i++)
		n += 2 * p->senders[i].nwin;
	at = malloc(n * sizeof(*at));
	assert_non_null(at);
	at[0] = 0;
	for (i = 0, n = 1; i < p->nsenders; i++)
		for (k = 0; k < p->senders[i].nwin; k++) {
			at[n++] = (int64_t)p->senders[i].win[k].offset;
			at[n++] = (int64_t)(p->senders[i].win[k].offset +
					    p->senders[i].win[k].length) %
				  (int64_t)p->cycle_ns;
		}
	qsort(at, n, sizeof(*at), cmp_i64);
	for (i = 1, u = 1; i < n; i++)
		if (at[i] != at[u - 1])
			at[u++] = at[i];
	judge(p, at, u, v);
	free(at);
}

/*
 * The barrel shifter's promises, against the reference: no clash, each
 * pair exactly one window of slot - dead per cycle (and the library's
 * share agrees), at least the dead time between two senders at a
 * receiver, and the timeline is the definition: in slot k sender i sends
 * to (i + k) mod L when that is a receiver.
 */
static void check_barrel(const struct tdm_plan *p, unsigned int n,
			 unsigned int m, uint64_t slot, uint64_t dead,
			 const struct verdict *v)
{
	unsigned int l = n > m ? n : m, i, r, k;
	struct timeline tl;
	uint32_t also;

	assert_false(v->receiver_clash);
	assert_false(v->sender_clash);
	assert_int_equal(p->cycle_ns, (uint64_t)l * slot);
	for (i = 0; i < n; i++)
		for (r = 0; r < m; r++) {
			assert_int_equal(v->pair_ns[i * m + r], slot - dead);
			assert_int_equal(tdm_plan_pair_ns(p, i, r), slot - dead);
		}
	for (r = 0; r < m; r++)
		assert_int_equal(tdm_plan_dest_ns(p, r),
				 (uint64_t)n * (slot - dead));
	/* Two senders at a receiver: only with N > 1. */
	if (n > 1)
		assert_true(v->min_gap >= dead);
	timeline_init(&tl, p);
	for (k = 0; k < l; k++)
		for (i = 0; i < n; i++) {
			r = (i + k) % l;
			assert_int_equal(sends_to(&tl, i, (int64_t)(k * slot),
						  &also),
					 r < m ? r : IDLE);
			assert_int_equal(sends_to(&tl, i, (int64_t)(((k + 1) *
								   slot - dead) %
								  p->cycle_ns),
						  &also),
					 dead ? IDLE : (i + k + 1) % l < m ?
					 (i + k + 1) % l : IDLE);
		}
	timeline_free(&tl);
}

/* ---- exhaustive: N, M <= 6 -------------------------------------------- */

static void test_barrel_exhaustive(void **state)
{
	static const uint64_t slots[] = { 1000, 1700, 2500 };
	unsigned int n, m, si, di;
	struct verdict v;
	struct tdm_plan p;

	(void)state;
	for (n = 1; n <= 6; n++)
		for (m = 1; m <= 6; m++)
			for (si = 0; si < TDM_ARRAY_SIZE(slots); si++)
				for (di = 0; di < 4; di++) {
					uint64_t s = slots[si];
					uint64_t d = (uint64_t[]){ 0, 1, s / 10,
								   s - 1 }[di];

					barrel_ok(&p, n, m, s, d);
					judge_every_ns(&p, &v);
					check_barrel(&p, n, m, s, d, &v);
					free(v.pair_ns);
					tdm_plan_free(&p);
				}
}

/* ---- properties of large plans ---------------------------------------- */

static void test_barrel_large(void **state)
{
	static const unsigned int nm[][2] = {
		{ 80, 16 }, { 16, 64 },
		{ 64, 64 }, { 100, 7 }, { 7, 64 }, { 1024, 4 }, { 1, 64 },
	};
	struct verdict v;
	struct tdm_plan p, q;
	unsigned int c, r, n, m;
	char err[512];
	uint64_t slot, dead;

	(void)state;
	srandom(25);
	for (c = 0; c < TDM_ARRAY_SIZE(nm); c++) {
		n = nm[c][0];
		m = nm[c][1];
		slot = 1000 + (uint64_t)random() % 100000;
		dead = (uint64_t)random() % slot;
		if (n * slot > TDMWIN_MAX_CYCLE_NS)
			slot = TDMWIN_MAX_CYCLE_NS / n;
		barrel_ok(&p, n, m, slot, dead);
		judge_edges(&p, &v);
		check_barrel(&p, n, m, slot, dead, &v);
		free(v.pair_ns);
		assert_int_equal(tdm_plan_check_pairs(&p, err, sizeof(err)), 0);
		/* What each receiver sees is a valid one-receiver plan. */
		for (r = 0; r < m; r++) {
			assert_int_equal(tdm_plan_for_dest(&p, r, &q, err,
							   sizeof(err)), 0);
			assert_int_equal(q.nsenders, n);
			assert_int_equal(q.nreceivers, 0);
			assert_int_equal(tdm_plan_validate(&q, err,
							   sizeof(err)), 0);
			assert_int_equal(q.senders[n - 1].nwin, 1);
			tdm_plan_free(&q);
		}
		round_trip(&p);
		tdm_plan_free(&p);
	}
}

/*
 * Random hand-written plans: windows of random senders to random
 * receivers at random places.  The validator accepts exactly those in
 * which the reference finds no clash (with min_dead_time 0), and every
 * share it reports is the reference's.
 */
static void test_random_plans(void **state)
{
	unsigned int round, i, k, nwin, accepted = 0, refused = 0, nd;
	struct tdm_plan p;
	struct verdict v;
	char err[512];
	int rc;

	(void)state;
	srandom(2025);
	for (round = 0; round < 3000; round++) {
		with_receivers(&p, 1 + (unsigned int)random() % 4);
		p.cycle_ns = 1000 + (uint64_t)random() % 2000;
		p.nsenders = 1 + (unsigned int)random() % 4;
		p.senders = calloc(p.nsenders, sizeof(*p.senders));
		assert_non_null(p.senders);
		for (i = 0; i < p.nsenders; i++) {
			snprintf(p.senders[i].name, TDM_NAME_MAX, "s%u", i);
			nwin = 1 + (unsigned int)random() % 3;
			for (k = 0; k < nwin; k++) {
				struct tdm_window *w = &p.senders[i].win[k];

				w->offset = (uint64_t)random() % (p.cycle_ns - 1);
				w->length = 1 + (uint64_t)random() %
					    (p.cycle_ns - w->offset);
				if (random() % 2)
					w->length = 1 + w->length / 8;
				w->dest = (uint32_t)random() % p.nreceivers;
			}
			p.senders[i].nwin = nwin;
		}
		rc = tdm_plan_validate(&p, err, sizeof(err));
		judge_edges(&p, &v);
		if (rc != (v.receiver_clash || v.sender_clash ? -1 : 0))
			fail_msg("round %u: validate %d (%s), reference: receiver clash %d, sender clash %d",
				 round, rc, rc ? err : "", v.receiver_clash,
				 v.sender_clash);
		if (!rc) {
			nd = tdm_plan_ndest(&p);
			for (i = 0; i < p.nsenders; i++)
				for (k = 0; k < nd; k++)
					assert_int_equal(tdm_plan_pair_ns(&p, i, k),
							 v.pair_ns[i * nd + k]);
		}
		accepted += !rc;
		refused += !!rc;
		free(v.pair_ns);
		tdm_plan_free(&p);
	}
	/* Both kinds were tried. */
	assert_true(accepted > 100);
	assert_true(refused > 100);
}

/* ---- the file format -------------------------------------------------- */

static const char barrel_text[] =
	"[global]\n"
	"guard 1us\n"
	"[receiver x0]\n"
	"address 198.18.1.1\n"
	"[receiver x1]\n"
	"address 198.18.1.2\n"
	"[receiver x2]\n"
	"address 2001:db8::3\n"
	"[barrel]\n"
	"senders f0 f1\n"
	"senders f2 f3\n"
	"slot 1ms\n"
	"dead_time 100us\n";

static void test_parse_barrel(void **state)
{
	struct tdm_plan p;
	unsigned int i, k;

	(void)state;
	parse_ok(barrel_text, &p);
	assert_int_equal(p.nreceivers, 3);
	assert_string_equal(p.receivers[2].name, "x2");
	assert_string_equal(p.receivers[2].addr, "2001:db8::3");
	assert_int_equal(p.receivers[1].line, 5);
	assert_int_equal(p.nsenders, 4);
	assert_int_equal(p.cycle_ns, 4 * MS);
	for (i = 0; i < 4; i++) {
		assert_int_equal(p.senders[i].nwin, 3);
		for (k = 0; k < p.senders[i].nwin; k++) {
			const struct tdm_window *w = &p.senders[i].win[k];

			assert_int_equal(w->length, 900 * US);
			/* Slot offset / 1ms = k: dest (i + k) mod 4. */
			assert_int_equal(w->dest, (i + w->offset / MS) % 4);
		}
	}
	/* Sender f3 idles in slot 0 (its receiver 3 does not exist). */
	assert_int_equal(p.senders[3].win[0].offset, 1 * MS);
	assert_string_equal(p.senders[3].name, "f3");
	round_trip(&p);
	tdm_plan_free(&p);

	/* A count of senders. */
	parse_ok("[receiver a]\naddress 198.18.0.1\n[barrel]\nsenders 2\n"
		 "slot 10us\ndead_time 0\n", &p);
	assert_string_equal(p.senders[1].name, "1");
	assert_int_equal(p.cycle_ns, 20 * US);
	tdm_plan_free(&p);
}

static void test_parse_hand_written(void **state)
{
	struct tdm_plan p, q;
	char err[512];
	struct tdm_json j;
	const char *t;

	(void)state;
	parse_ok("[global]\ncycle_time 2ms\nmin_dead_time 100us\n"
		 "[receiver x0]\naddress 198.18.1.1\n"
		 "[receiver x1]\naddress 198.18.1.2\n"
		 "[sender a]\nwindow 1ms 900us x1\nwindow 0 900us x0\n"
		 "[sender b]\nwindow 0 900us x1\nwindow 1ms 900us x0\n", &p);
	assert_int_equal(p.senders[0].win[0].dest, 0);	/* sorted */
	assert_int_equal(p.senders[0].win[1].dest, 1);
	assert_int_equal(tdm_plan_pair_ns(&p, 1, 0), 900 * US);
	assert_int_equal(tdm_plan_dest_ns(&p, 1), 1800 * US);
	assert_int_equal(tdm_plan_receiver(&p, "x1"), 1);
	assert_int_equal(tdm_plan_receiver(&p, "x9"), -1);
	round_trip(&p);

	/* x1's view: a's window at 1ms, b's at 0, no receivers. */
	assert_int_equal(tdm_plan_for_dest(&p, 1, &q, err, sizeof(err)), 0);
	assert_int_equal(q.nreceivers, 0);
	assert_int_equal(q.senders[0].nwin, 1);
	assert_int_equal(q.senders[0].win[0].offset, 1 * MS);
	assert_int_equal(q.senders[1].win[0].offset, 0);
	assert_int_equal(tdm_plan_validate(&q, err, sizeof(err)), 0);
	tdm_plan_free(&q);
	assert_int_equal(tdm_plan_for_dest(&p, 2, &q, err, sizeof(err)), -1);
	assert_string_equal(err, "the plan has no receiver #2");

	tdm_json_init(&j);
	tdm_plan_json(&j, NULL, &p);
	t = tdm_json_finish(&j);
	assert_non_null(t);
	assert_non_null(strstr(t, "\"receivers\":[{\"receiver\":0,\"name\":\"x0\",\"address\":\"198.18.1.1\"}"));
	assert_non_null(strstr(t, "{\"offset_ns\":0,\"length_ns\":900000,\"receiver\":0}"));
	tdm_json_free(&j);

	/* A pair without a window: valid, but not every pair's share. */
	p.senders[1].nwin = 1;
	assert_int_equal(tdm_plan_validate(&p, err, sizeof(err)), 0);
	assert_int_equal(tdm_plan_check_pairs(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "sender 'b' has no window to 'x0'");
	assert_int_equal(tdm_plan_for_dest(&p, 0, &q, err, sizeof(err)), -1);
	assert_string_equal(err, "sender 'b' sends nothing to 'x0'");
	assert_null(q.senders);
	tdm_plan_free(&p);
}

#define RX2 "[receiver x0]\naddress 198.18.1.1\n[receiver x1]\naddress 198.18.1.2\n"

static void test_receiver_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 1ms\n[receiver]\n",
		  "plan.conf:2: [receiver] needs a name");
	parse_bad("cycle_time 1ms\n[receiver a/b]\n",
		  "plan.conf:2: bad receiver name 'a/b' (1..63 characters of A-Z a-z 0-9 _ . -)");
	parse_bad("cycle_time 1ms\n[receiver x]\naddress 198.18.1.1\n"
		  "[receiver x]\n",
		  "plan.conf:4: duplicate receiver 'x' (first at line 2)");
	parse_bad("cycle_time 1ms\n[receiver x]\naddress 198.18.1.300\n",
		  "plan.conf:3: receiver 'x': bad address '198.18.1.300' (a numeric IPv4 or IPv6 address)");
	parse_bad("cycle_time 1ms\n[receiver x]\naddress host.example\n",
		  "plan.conf:3: receiver 'x': bad address 'host.example' (a numeric IPv4 or IPv6 address)");
	parse_bad("cycle_time 1ms\n[receiver x]\naddress 198.18.1.1\n"
		  "address 198.18.1.2\n",
		  "plan.conf:4: duplicate key 'address' (first at line 3)");
	parse_bad("cycle_time 1ms\n[receiver x]\nport 9\n",
		  "plan.conf:3: unknown key 'port' in [receiver x]");
	parse_bad("cycle_time 1ms\n[receiver x]\n[sender a]\nwindow 0 1us x\n",
		  "plan.conf:3: receiver 'x' (line 2) has no address");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0 1us\n[receiver x]\n",
		  "plan.conf:4: [receiver] sections come before [sender] (line 2)");
	parse_bad("cycle_time 1ms\n[receiver x]\n",
		  "plan.conf:2: receiver 'x' has no address");
	parse_bad("cycle_time 1ms\n[receiver x]\naddress 198.18.1.1\n"
		  "[receiver y]\naddress 198.18.1.1\n[sender a]\nwindow 0 1us x\n",
		  "plan.conf:4: receivers 'x' and 'y' (line 2) have the same address 198.18.1.1");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n[receiver x]\n",
		  "plan.conf:5: [auto] plans have one receiver: no [receiver] sections (line 1)");
	parse_bad(RX2 "[auto]\n",
		  "plan.conf:5: [auto] plans have one receiver: no [receiver] sections (line 1)");
}

static void test_window_dest_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 1ms\n" RX2 "[sender a]\nwindow 0 1us\n",
		  "plan.conf:7: 'window' takes OFFSET LENGTH RECEIVER in a plan with receivers");
	parse_bad("cycle_time 1ms\n" RX2 "[sender a]\nwindow 0 1us x7\n",
		  "plan.conf:7: unknown receiver 'x7' (declare [receiver x7] before the windows that send to it)");
	/* Two senders at one receiver. */
	parse_bad("cycle_time 1ms\n" RX2 "[sender a]\nwindow 0 10us x0\n"
		  "[sender b]\nwindow 5us 10us x0\n",
		  "plan.conf:9: window 5us+10us of 'b' to 'x0' overlaps window 0+10us of 'a' (line 7)");
	/* At different receivers they may overlap. */
	parse_bad("cycle_time 1ms\n" RX2 "[sender a]\nwindow 0 10us x0\n"
		  "[sender b]\nwindow 5us 10us x1\nwindow 5us 1us x0\n",
		  "plan.conf:10: window 5us+1us of 'b' to 'x0' overlaps window 0+10us of 'a' (line 7)");
	/* One sender at two receivers. */
	parse_bad("cycle_time 1ms\n" RX2 "[sender a]\nwindow 0 10us x0\n"
		  "window 9us 10us x1\n",
		  "plan.conf:8: window 9us+10us of 'a' to 'x1' overlaps its window 0+10us to 'x0' (line 7): a sender sends to one receiver at a time");
	/* min_dead_time counts at each receiver. */
	parse_bad("cycle_time 1ms\nmin_dead_time 2us\n" RX2
		  "[sender a]\nwindow 0 10us x0\nwindow 10us 10us x1\n"
		  "[sender b]\nwindow 11us 10us x0\nwindow 30us 10us x1\n",
		  "plan.conf:11: only 1us of dead time at 'x0' between window 0+10us of 'a' (line 8) and window 11us+10us of 'b', less than min_dead_time 2us");
}

static void test_barrel_errors(void **state)
{
	(void)state;
	parse_bad("[barrel]\nsenders 2\nslot 1ms\ndead_time 0\n",
		  "plan.conf:1: [barrel] needs [receiver] sections before it");
	parse_bad(RX2 "[barrel]\nsenders 2\nslot 1ms\n",
		  "plan.conf:5: [barrel] is missing 'dead_time'");
	parse_bad(RX2 "[barrel]\nsenders 2\ndead_time 1ms\n",
		  "plan.conf:5: [barrel] is missing 'slot'");
	parse_bad(RX2 "[barrel]\nslot 1ms\ndead_time 0\n",
		  "plan.conf:5: [barrel] is missing 'senders'");
	parse_bad(RX2 "[barrel]\nsenders 2\nslot 1ms\ndead_time 1ms\n",
		  "plan.conf:8: dead_time 1ms leaves no window in slot 1ms");
	parse_bad(RX2 "[barrel]\nsenders 2\nslot 6s\ndead_time 0\n",
		  "plan.conf:7: cycle max(senders, receivers) x slot is longer than 10s");
	parse_bad(RX2 "[barrel]\nsenders 0\nslot 1ms\ndead_time 0\n",
		  "plan.conf:6: senders must be 1..1024, not 0");
	parse_bad(RX2 "[barrel]\nsenders 2\nslot 1ms\ndead_time 0\nwindow 1ms\n",
		  "plan.conf:9: unknown key 'window' in [barrel]");
	parse_bad("cycle_time 1ms\n" RX2 "[barrel]\nsenders 2\nslot 1ms\n"
		  "dead_time 0\n",
		  "plan.conf:1: cycle_time cannot be given with [barrel] (the cycle is computed)");
	parse_bad(RX2 "[barrel]\n[barrel]\n",
		  "plan.conf:6: duplicate section [barrel] (first at line 5)");
	parse_bad(RX2 "[barrel x]\n",
		  "plan.conf:5: [barrel] takes no argument");
	parse_bad(RX2 "[barrel]\nsenders 2\nslot 1ms\ndead_time 0\n"
		  "[sender a]\n",
		  "plan.conf:9: [barrel] and [sender] sections cannot be mixed (line 5)");
	parse_bad(RX2 "[sender a]\nwindow 0 1us x0\n[barrel]\n",
		  "plan.conf:7: [sender] and [barrel] sections cannot be mixed (line 5)");
	parse_bad("[auto]\nsenders 2\n[barrel]\n",
		  "plan.conf:3: [auto] and [barrel] sections cannot be mixed (line 1)");
	parse_bad(RX2 "[barrel]\nsenders 2\n[auto]\n",
		  "plan.conf:7: [barrel] and [auto] sections cannot be mixed (line 5)");
	parse_bad(RX2 "[barrel]\nsenders 2\n[receiver x2]\n",
		  "plan.conf:7: [receiver] sections come before [barrel] (line 5)");
	/* The guard must leave room in each window. */
	parse_bad("guard 1ms\n" RX2 "[barrel]\nsenders 2\nslot 1ms\n"
		  "dead_time 1us\n",
		  "plan.conf:8: guard 1ms is not shorter than window 0+999us of '0'");
}

static void test_barrel_function_errors(void **state)
{
	struct tdm_plan p;
	char err[512];

	(void)state;
	with_receivers(&p, 0);
	assert_int_equal(tdm_plan_barrel(&p, 2, NULL, MS, 0, err,
					 sizeof(err)), -1);
	assert_string_equal(err, "a barrel shifter needs 1..64 receivers, not 0");
	tdm_plan_free(&p);
	with_receivers(&p, 64);
	assert_int_equal(tdm_plan_barrel(&p, 65, NULL, 1000, 0, err,
					 sizeof(err)), -1);
	assert_string_equal(err, "too many windows in the plan (max 4096): senders x receivers is 4160");
	tdm_plan_free(&p);
	with_receivers(&p, 2);
	strcpy(p.receivers[1].addr, p.receivers[0].addr);
	assert_int_equal(tdm_plan_barrel(&p, 2, NULL, MS, 0, err,
					 sizeof(err)), -1);
	assert_string_equal(err, "receivers 'r0' and 'r1' have the same address 198.18.1.1");
	tdm_plan_free(&p);
	with_receivers(&p, 2);
	assert_int_equal(tdm_plan_barrel(&p, 2, NULL, MS, 0, err,
					 sizeof(err)), 0);
	/* A window to a receiver the plan does not have. */
	p.senders[0].win[1].dest = 2;
	assert_int_equal(tdm_plan_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "window 1ms+1ms of '0' goes to receiver #2, but the plan has 2");
	tdm_plan_free(&p);
}

/* Plans without receivers keep their digest; a destination changes it. */
static void test_digest_dest(void **state)
{
	struct tdm_plan p, q;
	uint8_t a[32], b[32];

	(void)state;
	barrel_ok(&p, 3, 3, MS, 10 * US);
	assert_int_equal(tdm_plan_copy(&q, &p), 0);
	assert_true(tdm_plan_equal(&p, &q));
	tdm_plan_digest(&p, a);
	q.senders[0].win[0].dest = 1;
	assert_false(tdm_plan_equal(&p, &q));
	tdm_plan_digest(&q, b);
	assert_memory_not_equal(a, b, sizeof(a));
	q.senders[0].win[0].dest = 0;
	strcpy(q.receivers[2].addr, "198.18.9.9");
	assert_false(tdm_plan_equal(&p, &q));
	tdm_plan_digest(&q, b);
	assert_memory_not_equal(a, b, sizeof(a));
	tdm_plan_free(&p);
	tdm_plan_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_barrel),
		cmocka_unit_test(test_parse_hand_written),
		cmocka_unit_test(test_receiver_errors),
		cmocka_unit_test(test_window_dest_errors),
		cmocka_unit_test(test_barrel_errors),
		cmocka_unit_test(test_barrel_function_errors),
		cmocka_unit_test(test_digest_dest),
		cmocka_unit_test(test_barrel_exhaustive),
		cmocka_unit_test(test_barrel_large),
		cmocka_unit_test(test_random_plans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
